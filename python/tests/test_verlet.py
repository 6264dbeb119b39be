"""VerletLists over the steps of a simulation: the same rows as a fresh
neighbor_lists each step, rebuilt only when a point moved skin / 2."""

import numpy as np
import pytest

import broadphase as bp
from conftest import brute_neighbors, csr_rows, pairs_to_rows

F32 = np.float32


def check_step(lists, points, r):
    got = lists.neighbor_lists(points)
    assert got[0].dtype == got[1].dtype == np.int32
    fresh = bp.neighbor_lists(points, r)
    np.testing.assert_array_equal(got[0], fresh[0])
    np.testing.assert_array_equal(got[1], fresh[1])
    return got


@pytest.mark.parametrize("dims", [2, 3])
def test_steps_of_small_moves_match_a_fresh_search(dims):
    rng = np.random.default_rng(400 + dims)
    n, r, skin = 3000, (0.5 if dims == 3 else 0.2), 0.1
    points = (rng.random((n, dims)) * 10).astype(F32)
    lists = bp.VerletLists(r, skin)
    assert (lists.r, lists.skin, lists.rebuilds) == (F32(r), F32(skin), 0)
    assert lists.needs_rebuild(points)
    assert lists.update(points) and lists.rebuilds == 1
    got = check_step(lists, points, r)
    rows = csr_rows(*got)
    for want, row in zip(pairs_to_rows(brute_neighbors(points, r), n), rows):
        np.testing.assert_array_equal(row, want)
    rebuilt = 0
    for _ in range(20):
        points = points + (rng.standard_normal((n, dims)) * 0.005).astype(F32)
        stale = lists.needs_rebuild(points)
        assert lists.update(points) == stale
        rebuilt += stale
        check_step(lists, points, r)
    # Most steps reused the lists; the drift made some rebuild.
    assert 0 < rebuilt < 10 and lists.rebuilds == 1 + rebuilt
    unsorted, ordered = lists.neighbor_lists(points, sort=False), lists.neighbor_lists(points)
    np.testing.assert_array_equal(unsorted[0], ordered[0])
    for a, b in zip(csr_rows(*unsorted), csr_rows(*ordered)):
        np.testing.assert_array_equal(np.sort(a), b)


def test_rebuild_exactly_when_a_point_moves_half_the_skin():
    points = np.array([[0, 0, 0], [1.2, 0, 0], [5, 0, 0]], F32)
    lists = bp.VerletLists(1.0, 0.5)
    assert lists.update(points)
    assert not lists.needs_rebuild(points)
    moved = points.copy()
    moved[2, 0] += F32(0.2)  # under skin / 2 = 0.25, even less the margin
    assert not lists.needs_rebuild(moved)
    moved[2, 0] = F32(5.25)  # exactly skin / 2: the margin makes it stale
    assert lists.needs_rebuild(moved)
    with pytest.raises(ValueError, match="call update\\(points\\) first"):
        lists.neighbor_lists(moved)
    assert lists.update(moved) and not lists.update(moved)
    # Pairs that come within r through the skin are found without a rebuild.
    near = moved.copy()
    near[1, 0] = F32(1.0)
    assert not lists.update(near)
    assert csr_rows(*lists.neighbor_lists(near))[0].tolist() == [1]


def test_zero_skin_reuses_only_unmoved_points():
    rng = np.random.default_rng(8)
    points = rng.random((500, 3)).astype(F32)
    lists = bp.VerletLists(0.1, 0.0)
    assert lists.update(points) and not lists.update(points.copy())
    check_step(lists, points, 0.1)
    points[7, 1] = np.nextafter(points[7, 1], F32(2))
    assert lists.update(points)
    check_step(lists, points, 0.1)


def test_a_changed_count_or_columns_rebuilds_and_a_stale_read_is_refused():
    rng = np.random.default_rng(9)
    lists = bp.VerletLists(0.2, 0.05)
    with pytest.raises(ValueError, match="the lists were never built"):
        lists.neighbor_lists(np.zeros((3, 3), F32))
    points = rng.random((400, 3)).astype(F32)
    lists.update(points)
    fewer = points[:300]
    assert lists.needs_rebuild(fewer)
    with pytest.raises(ValueError, match="points has 300 rows but the lists were built for 400"):
        lists.neighbor_lists(fewer)
    assert lists.update(fewer)
    check_step(lists, fewer, 0.2)
    with pytest.raises(ValueError, match="points has 2 columns but the lists were built from points of 3"):
        lists.neighbor_lists(fewer[:, :2])
    flat = np.ascontiguousarray(fewer[:, :2])
    assert lists.update(flat)
    check_step(lists, flat, 0.2)
    lists.rebuild(flat)
    assert lists.rebuilds == 4


def test_hostile_points_outlier_and_empty():
    rng = np.random.default_rng(10)
    cluster = rng.random((2000, 3)).astype(F32)
    points = np.concatenate([cluster, np.zeros((10, 3), F32), np.array([[1e6, 1e6, 1e6]], F32)])
    assert bp._broadphase._neighbor_structure(points, 0.06) == "hash"
    lists = bp.VerletLists(0.05, 0.01)
    lists.update(points)
    check_step(lists, points, 0.05)
    empty = bp.VerletLists(1.0, 0.5)
    assert empty.update(np.zeros((0, 3), F32))
    assert [a.tolist() for a in empty.neighbor_lists(np.zeros((0, 3), F32))] == [[0], []]
    one = bp.VerletLists(1.0, 0.5)
    one.update(np.ones((1, 2)))
    assert [a.tolist() for a in one.neighbor_lists(np.ones((1, 2)))] == [[0, 0], []]


def test_errors():
    with pytest.raises(ValueError, match="skin must be a finite number >= 0 with r \\+ skin <= 1e19, got -1.0"):
        bp.VerletLists(1.0, -1.0)
    with pytest.raises(ValueError, match="got nan"):
        bp.VerletLists(1.0, np.nan)
    with pytest.raises(ValueError, match="skin must be"):
        bp.VerletLists(1e19, 1e19)
    with pytest.raises(ValueError, match="r must be a finite number"):
        bp.VerletLists(-1.0, 0.1)
    lists = bp.VerletLists(1.0, 0.1)
    bad = np.zeros((3, 3))
    bad[2, 0] = np.nan
    with pytest.raises(ValueError, match="point 2: points\\[2, 0\\] = nan is not a finite number"):
        lists.update(bad)
    assert lists.rebuilds == 0
    assert repr(lists) == "VerletLists(r=1, skin=0.1, rebuilds=0)"
