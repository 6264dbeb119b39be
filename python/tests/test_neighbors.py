"""neighbor_pairs and neighbor_lists against a numpy brute force and
scipy's cKDTree."""

import time

import numpy as np
import pytest
from scipy.sparse import csr_array
from scipy.spatial import cKDTree

import broadphase as bp
from conftest import brute_neighbors, csr_rows, pair_squared_distances, pairs_to_rows, sort_rows

F32 = np.float32


def quantized(rng, n, dims, side):
    """Points on multiples of 1/32 in [0, side): every float32 distance
    test below is exact, so float32 and float64 searches agree bit for
    bit, and many pairs lie exactly at a dyadic radius."""
    return (rng.integers(0, int(side * 32), size=(n, dims)) / 32.0).astype(F32)


def check_lists(points, r, expected_pairs, **kw):
    indptr, indices = bp.neighbor_lists(points, r, **kw)
    assert indptr.dtype == indices.dtype == np.int32
    assert len(indptr) == len(points) + 1
    rows = csr_rows(indptr, indices)
    for got, want in zip(rows, pairs_to_rows(expected_pairs, len(points))):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [0, 1, 2, 50, 900, 3000])
@pytest.mark.parametrize("dims", [2, 3])
def test_random_points_match_brute_force(n, dims):
    rng = np.random.default_rng(100 + n + dims)
    points = rng.random((n, dims)).astype(F32) * 10
    r = 0.7 if dims == 3 else 0.3
    expected = brute_neighbors(points, r)
    np.testing.assert_array_equal(bp.neighbor_pairs(points, r, sort=True), expected)
    check_lists(points, r, expected)


def test_hostile_points():
    lattice = np.stack(np.meshgrid(*[np.arange(5)] * 3, indexing="ij"), -1).reshape(-1, 3)
    points = np.concatenate(
        [
            lattice.astype(F32),  # neighbors exactly at r = 1
            np.zeros((20, 3), F32),  # duplicates of a lattice point
            np.full((3, 3), 1e-40, F32),  # subnormal, next to the origin
            np.array([[3e38, 0, 0], [-3e38, 0, 0]], F32),  # as far as float32 goes
        ]
    )
    for r in (0.0, 1.0, np.sqrt(F32(2)), 2.5):
        expected = brute_neighbors(points, r)
        np.testing.assert_array_equal(bp.neighbor_pairs(points, r, sort=True), expected)
        check_lists(points, r, expected)
    # Inclusive: lattice neighbors at exactly 1 are in, 1 - ulp is out.
    assert len(brute_neighbors(lattice.astype(F32), 1.0)) == 3 * 4 * 25
    assert len(bp.neighbor_pairs(lattice.astype(F32), np.nextafter(F32(1), F32(0)), sort=True)) == 0


def test_radius_zero_finds_coincident_points():
    points = np.array([[1, 1, 1], [1, 1, 1], [1, 1, 1.0000001], [2, 2, 2]], F32)
    np.testing.assert_array_equal(bp.neighbor_pairs(points, 0.0, sort=True), [[0, 1]])


def test_outlier_switches_to_the_hash_and_stays_exact():
    rng = np.random.default_rng(4)
    cluster = rng.random((4000, 3)).astype(F32)
    points = np.concatenate([cluster, np.array([[1e6, 1e6, 1e6]], F32)])
    r = 0.05
    # The grid would coarsen to fit the outlier into its cell budget.
    assert bp._broadphase._neighbor_structure(points, r) == "hash"
    assert bp._broadphase._neighbor_structure(cluster, r) == "grid"
    expected = brute_neighbors(points, r)
    np.testing.assert_array_equal(bp.neighbor_pairs(points, r, sort=True), expected)
    np.testing.assert_array_equal(bp.neighbor_pairs(points, r, threads=2, sort=True), expected)
    check_lists(points, r, expected)
    check_lists(points, r, expected, threads=2)


@pytest.mark.parametrize("n", [500, 5000, 40_000])
def test_identical_to_ckdtree_on_float32_points(n):
    # cKDTree compares float64 distances with <= r. On float32 points and a
    # float32 r both searches give the same set unless a distance lies
    # within float32 rounding of r: the test shows none of these seeds
    # has one by checking the sets equal.
    rng = np.random.default_rng(n)
    points = rng.random((n, 3)).astype(F32)
    r = float(F32((30 / (4 / 3 * np.pi * n)) ** (1 / 3)))
    tree = cKDTree(points.astype(np.float64))
    want = sort_rows(tree.query_pairs(r, output_type="ndarray"))
    np.testing.assert_array_equal(bp.neighbor_pairs(points, r, sort=True), want)
    indptr, indices = bp.neighbor_lists(points, r)
    balls = tree.query_ball_point(points.astype(np.float64), r, return_sorted=True)
    for i, (got, ball) in enumerate(zip(csr_rows(indptr, indices), balls)):
        np.testing.assert_array_equal(got, [j for j in ball if j != i])


@pytest.mark.parametrize("dims", [2, 3])
def test_identical_to_ckdtree_with_ties_at_the_radius(dims):
    # Dyadic points: exact in float32 and float64, many pairs at exactly r.
    rng = np.random.default_rng(dims)
    points = quantized(rng, 6000, dims, 4.0 if dims == 3 else 16.0)
    for r in (0.125, 0.25, 0.375):
        want = sort_rows(cKDTree(points.astype(np.float64)).query_pairs(r, output_type="ndarray"))
        d2 = pair_squared_distances(points[want[:, 0]], points[want[:, 1]])
        assert np.any(d2 == F32(r) * F32(r))  # ties present
        np.testing.assert_array_equal(bp.neighbor_pairs(points, r, sort=True), want)


def test_lists_are_a_scipy_csr_without_a_copy():
    rng = np.random.default_rng(8)
    points = rng.random((3000, 3)).astype(F32)
    indptr, indices = bp.neighbor_lists(points, 0.1)
    m = csr_array((np.ones(len(indices), F32), indices, indptr), shape=(3000, 3000))
    assert np.shares_memory(m.indices, indices) and np.shares_memory(m.indptr, indptr)
    assert m.has_sorted_indices
    assert (m != m.T).nnz == 0  # symmetric
    assert m.diagonal().sum() == 0  # no point lists itself


def test_unsorted_lists_hold_the_same_rows():
    rng = np.random.default_rng(12)
    points = rng.random((5000, 3)).astype(F32)
    a = bp.neighbor_lists(points, 0.08)
    b = bp.neighbor_lists(points, 0.08, sort=False)
    np.testing.assert_array_equal(a[0], b[0])
    for x, y in zip(csr_rows(*a), csr_rows(*b)):
        np.testing.assert_array_equal(x, np.sort(y))


def test_threads_give_the_same_answer_and_order():
    rng = np.random.default_rng(13)
    points = rng.random((60_000, 3)).astype(F32)
    r = 0.03
    base = bp.neighbor_pairs(points, r, sort=True)
    base_unsorted = bp.neighbor_pairs(points, r, sort=False)
    base_lists = bp.neighbor_lists(points, r, sort=False)
    np.testing.assert_array_equal(sort_rows(base_unsorted), base)
    # The default is the search's order, not the sorted one.
    np.testing.assert_array_equal(bp.neighbor_pairs(points, r), base_unsorted)
    assert not np.array_equal(base_unsorted, base)
    for threads in (2, 3, 0):
        np.testing.assert_array_equal(bp.neighbor_pairs(points, r, threads=threads, sort=True), base)
        np.testing.assert_array_equal(
            bp.neighbor_pairs(points, r, threads=threads, sort=False), base_unsorted
        )
        lists = bp.neighbor_lists(points, r, threads=threads, sort=False)
        np.testing.assert_array_equal(lists[0], base_lists[0])
        np.testing.assert_array_equal(lists[1], base_lists[1])


def test_chunks_walked_out_of_order_are_placed_in_order():
    # A walk on several threads places its chunks of 4096 slots in slot
    # order whichever finishes first: a dense clump makes some chunks
    # much slower than others, and the answer is still the one thread's.
    rng = np.random.default_rng(15)
    clump = rng.normal(0.5, 0.03, (2000, 3))
    points = np.concatenate([rng.random((80_000, 3)), clump]).astype(F32)
    rng.shuffle(points)
    r = 0.02
    base = bp.neighbor_pairs(points, r)
    assert len(points) > 16 * 4096
    assert bp._broadphase._neighbor_structure(points, r) == "grid"
    for threads in (2, 3, 8):
        for _ in range(3):
            np.testing.assert_array_equal(bp.neighbor_pairs(points, r, threads=threads), base)
    np.testing.assert_array_equal(
        bp.neighbor_pairs(points, r, threads=2, sort=True), sort_rows(base)
    )


def test_float64_points_are_rounded_to_nearest_float32():
    # The search runs on the float32 values: float64 input gives exactly
    # the float32 input's answer, r rounded too.
    rng = np.random.default_rng(14)
    points = rng.random((2000, 3)) * 3
    r = 0.2  # not a float32
    got = bp.neighbor_pairs(points, r, sort=True)
    np.testing.assert_array_equal(got, brute_neighbors(points.astype(F32), F32(r)))
    np.testing.assert_array_equal(got, bp.neighbor_pairs(points.astype(F32), float(F32(r)), sort=True))
    # Two float64 points 0.1 + 1e-9 apart round to float32 values exactly
    # 0.1 apart (in float32): neighbors at r = 0.1.
    close = np.array([[0.0, 0, 0], [0.1 + 1e-9, 0, 0]])
    np.testing.assert_array_equal(bp.neighbor_pairs(close, 0.1, sort=True), [[0, 1]])


# ----- periodic boxes -----


@pytest.mark.parametrize("wrap", [(True, True, True), (True, False, True), (False, False, False)])
def test_periodic_matches_brute_force(wrap):
    rng = np.random.default_rng(sum(wrap))
    lo, hi = np.array([-2.0, 0.0, 1.0]), np.array([2.0, 3.0, 4.5])
    points = (lo + rng.random((2500, 3)) * (hi - lo)).astype(F32)
    # Points on both faces of every axis.
    points[:6] = lo.astype(F32)
    points[6:12] = hi.astype(F32)
    points[13] = points[12]
    points[12, 0], points[13, 0] = F32(lo[0]), F32(hi[0])
    r = 0.4
    expected = brute_neighbors(points, r, periodic=(lo, hi, wrap))
    got = bp.neighbor_pairs(points, r, periodic=(lo, hi, wrap), sort=True)
    np.testing.assert_array_equal(got, expected)
    check_lists(points, r, expected, periodic=(lo, hi, wrap))
    if wrap[0]:
        assert (12, 13) in {tuple(p) for p in got}  # a point on each x face: distance 0


def test_periodic_scalar_bounds_and_2d():
    rng = np.random.default_rng(21)
    points = (rng.random((1500, 2)) * 5).astype(F32)
    expected = brute_neighbors(points, 0.3, periodic=((0, 0), (5, 5), (True, True)))
    np.testing.assert_array_equal(bp.neighbor_pairs(points, 0.3, periodic=(0.0, 5.0), sort=True), expected)
    check_lists(points, 0.3, expected, periodic=(0.0, 5.0, True))


def test_periodic_radius_of_exactly_half_the_box():
    points = np.array([[0.0, 0, 0], [1.0, 0, 0], [0.5, 0.5, 0.5]], F32)
    got = bp.neighbor_pairs(points, 0.5, periodic=(0.0, 1.0), sort=True)
    expected = brute_neighbors(points, 0.5, periodic=((0, 0, 0), (1, 1, 1), (True,) * 3))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dims", [2, 3])
def test_periodic_identical_to_ckdtree_boxsize(dims):
    # cKDTree wants points in [0, L); dyadic values keep both exact.
    rng = np.random.default_rng(30 + dims)
    side = 4.0
    points = quantized(rng, 5000, dims, side)
    for r in (0.25, 0.5):
        tree = cKDTree(points.astype(np.float64), boxsize=side)
        want = sort_rows(tree.query_pairs(r, output_type="ndarray"))
        np.testing.assert_array_equal(bp.neighbor_pairs(points, r, periodic=(0.0, side), sort=True), want)


def test_tiny_radius_over_a_unit_cube_stays_linear_and_finds_duplicates():
    # r = 1e-12 over a unit cube asks for 10^12 cells per axis; cells once
    # clamped at 2^30 put every point in one cell (5.7 s, quadratic). A
    # generous bound: a guard against quadratic time, not a benchmark.
    rng = np.random.default_rng(12)
    n, copies = 200_000, 500
    points = rng.random((n, 3), dtype=np.float32)
    sources = rng.choice(n - copies, copies, replace=False)
    points[n - copies :] = points[sources]
    start = time.perf_counter()
    pairs = bp.neighbor_pairs(points, 1e-12, sort=True)
    elapsed = time.perf_counter() - start
    want = sort_rows(np.stack([sources, np.arange(n - copies, n)], axis=1).astype(np.uint32))
    np.testing.assert_array_equal(pairs, want)
    assert elapsed < 2.0, f"{elapsed:.2f} s for {n} points at r = 1e-12"


def test_distances_whose_square_is_subnormal_differ_from_ckdtree():
    # 1e-23 squared is below float32's smallest subnormal: the float32
    # rule computes d*d = 0 <= 0*0, so the points are neighbors at r = 0,
    # where cKDTree's float64 distance says they are not (as documented).
    points = np.array([[0, 0, 0], [1e-23, 0, 0], [1, 1, 1]], F32)
    assert bp.neighbor_pairs(points, 0.0).tolist() == [[0, 1]]
    assert len(cKDTree(points).query_pairs(0.0)) == 0
    # Above about 1e-19 the squares are normal floats and the sets agree.
    points[1, 0] = 1e-18
    assert bp.neighbor_pairs(points, 0.0).tolist() == []
    assert bp.neighbor_pairs(points, 1e-18).tolist() == [[0, 1]]
