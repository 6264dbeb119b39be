"""neighbors_of: the points within r of query points or of a subset,
against a numpy brute force and neighbor_lists."""

import numpy as np
import pytest

import broadphase as bp
from conftest import csr_rows, squared_distances

F32 = np.float32


def brute_rows(points, queries, r):
    """Per query, the points within r (float32 rule), ascending."""
    p, q = np.asarray(points).astype(F32), np.asarray(queries).astype(F32)
    if len(p) == 0:
        return [np.zeros(0, np.int64) for _ in q]
    inside = squared_distances(q, p) <= F32(r) * F32(r)
    return [np.flatnonzero(row) for row in inside]


def check(got, expected):
    indptr, indices = got
    assert indptr.dtype == indices.dtype == np.int32
    rows = csr_rows(indptr, indices)
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected):
        np.testing.assert_array_equal(row, want)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("n", [0, 1, 500, 4000])
def test_query_points_match_brute_force(dims, n):
    rng = np.random.default_rng(300 + n + dims)
    points = (rng.random((n, dims)) * 10).astype(F32)
    queries = (rng.random((700, dims)) * 11 - 0.5).astype(F32)
    if n:
        queries[:100] = points[rng.integers(0, n, 100)]  # on a point: it counts
    r = 0.6 if dims == 3 else 0.25
    expected = brute_rows(points, queries, r)
    check(bp.neighbors_of(points, queries, r), expected)
    check(bp.neighbors_of(points, queries, r, threads=2), expected)
    check(bp.neighbors_of(points, queries, r, threads=0), expected)


@pytest.mark.parametrize("dims", [2, 3])
def test_a_subset_gets_its_neighbor_lists_rows(dims):
    rng = np.random.default_rng(310 + dims)
    points = (rng.random((3000, dims)) * 10).astype(F32)
    points[100:120] = points[0]  # duplicates of point 0: neighbors, not itself
    r = 0.6 if dims == 3 else 0.25
    indptr, indices = bp.neighbor_lists(points, r)
    all_rows = csr_rows(indptr, indices)
    subset = np.concatenate([[0, 100, 0], rng.choice(3000, 500, replace=False)])
    check(bp.neighbors_of(points, subset, r), [all_rows[i] for i in subset])
    check(bp.neighbors_of(points, subset.astype(np.uint16), r, threads=2), [all_rows[i] for i in subset])
    assert 100 in csr_rows(*bp.neighbors_of(points, subset[:1], r))[0]


def test_ties_at_the_radius_radius_zero_and_empty_sets():
    lattice = np.stack(np.meshgrid(*[np.arange(5)] * 3, indexing="ij"), -1).reshape(-1, 3).astype(F32)
    queries = np.concatenate([lattice, lattice + F32(0.5), np.zeros((3, 3), F32)])
    for r in (0.0, 1.0, np.sqrt(F32(0.75)), 2.0):
        check(bp.neighbors_of(lattice, queries, r), brute_rows(lattice, queries, r))
    # Exactly at r is in, one float32 step short is out.
    one = csr_rows(*bp.neighbors_of(lattice, lattice[:1], 1.0))[0].tolist()
    assert one == [0, 1, 5, 25]
    assert csr_rows(*bp.neighbors_of(lattice, lattice[:1], np.nextafter(F32(1), F32(0))))[0].tolist() == [0]
    indptr, indices = bp.neighbors_of(lattice, np.zeros((0, 3), F32), 1.0)
    assert indptr.tolist() == [0] and indices.size == 0
    indptr, indices = bp.neighbors_of(np.zeros((0, 3), F32), lattice[:2], 1.0)
    assert indptr.tolist() == [0, 0, 0]
    assert bp.neighbors_of(np.zeros((0, 3), F32), np.zeros(0, np.int64), 1.0)[0].tolist() == [0]


def test_outlier_takes_the_hash_and_stays_exact():
    rng = np.random.default_rng(5)
    cluster = rng.random((3000, 3)).astype(F32)
    points = np.concatenate([cluster, np.array([[1e6, 1e6, 1e6]], F32)])
    assert bp._broadphase._neighbor_structure(points, 0.05) == "hash"
    queries = np.concatenate([rng.random((500, 3)).astype(F32), points[-1:]])
    expected = brute_rows(points, queries, 0.05)
    check(bp.neighbors_of(points, queries, 0.05), expected)
    check(bp.neighbors_of(points, queries, 0.05, threads=2), expected)
    assert expected[-1].tolist() == [3000]


def test_float64_is_rounded_to_nearest_float32():
    rng = np.random.default_rng(6)
    points = rng.random((2000, 3))
    queries = rng.random((300, 3))
    check(bp.neighbors_of(points, queries, 0.1), brute_rows(points.astype(F32), queries.astype(F32), F32(0.1)))


def test_errors():
    points = np.zeros((5, 3), F32)
    with pytest.raises(ValueError, match="query 2: queries\\[2\\] = 5 is not an id in 0..=4"):
        bp.neighbors_of(points, np.array([0, 1, 5, 7]), 1.0)
    with pytest.raises(ValueError, match="query 0: queries\\[0\\] = -1"):
        bp.neighbors_of(points, np.array([-1]), 1.0)
    with pytest.raises(ValueError, match="query 0: queries\\[0\\] = 0 but points is empty"):
        bp.neighbors_of(np.zeros((0, 3), F32), np.array([0]), 1.0)
    with pytest.raises(ValueError, match="queries has dtype float64, expected integers"):
        bp.neighbors_of(points, np.array([0.0]), 1.0)
    with pytest.raises(ValueError, match="queries has 2 columns but points has 3"):
        bp.neighbors_of(points, np.zeros((1, 2)), 1.0)
    bad = np.zeros((3, 3))
    bad[1, 2] = np.inf
    with pytest.raises(ValueError, match="query 1: queries\\[1, 2\\] = inf is not a finite number"):
        bp.neighbors_of(points, bad, 1.0)
    with pytest.raises(ValueError, match="point 1: points\\[1, 2\\] = inf"):
        bp.neighbors_of(bad, points, 1.0)
    with pytest.raises(ValueError, match="r must be a finite number"):
        bp.neighbors_of(points, points, -1.0)
    with pytest.raises(TypeError, match="queries must be a numpy array"):
        bp.neighbors_of(points, [[0, 0, 0]], 1.0)
