"""overlap_pairs against a numpy brute force."""

import numpy as np
import pytest

import broadphase as bp
from conftest import brute_overlap, hostile_boxes, outward, random_boxes, sort_rows


@pytest.mark.parametrize("n", [0, 1, 2, 17, 300, 2500])
@pytest.mark.parametrize("dims", [2, 3])
def test_random_boxes_match_brute_force(n, dims):
    rng = np.random.default_rng(n * 10 + dims)
    lo, hi = random_boxes(rng, n, dims, extent=10.0 if dims == 3 else 40.0)
    got = bp.overlap_pairs(lo, hi, sort=True)
    assert got.dtype == np.uint32 and got.shape[1] == 2
    np.testing.assert_array_equal(got, brute_overlap(lo, hi))


def test_large_input_runs_the_split_tree_and_matches():
    # Above the tree's split threshold, so the parallel passes run.
    rng = np.random.default_rng(7)
    lo, hi = random_boxes(rng, 40_000, 3, extent=100.0, size=1.5)
    got = bp.overlap_pairs(lo, hi, sort=True)
    # Brute force on a subset of boxes that lie in a slab, compared with
    # the pairs inside that slab.
    inside = np.nonzero(lo[:, 0] < 10.0)[0]
    expected = brute_overlap(lo[inside], hi[inside])
    expected = sort_rows(inside[expected.astype(np.int64)])
    keep = np.isin(got[:, 0], inside) & np.isin(got[:, 1], inside)
    np.testing.assert_array_equal(got[keep], expected)
    assert len(expected) > 100


@pytest.mark.parametrize("dims", [2, 3])
def test_hostile_boxes(dims):
    lo, hi = hostile_boxes(dims)
    got = bp.overlap_pairs(lo, hi, sort=True)
    np.testing.assert_array_equal(got, brute_overlap(lo, hi))
    pairs = {tuple(p) for p in got}
    assert {(0, 1), (0, 2), (1, 2)} <= pairs  # duplicates
    assert (0, 4) in pairs and (0, 5) in pairs  # corner to corner
    assert (6, 7) in pairs  # coincident zero-size boxes
    assert (0, 8) in pairs  # a point on a face


def test_a_pile_of_identical_boxes_gives_every_pair():
    lo = np.zeros((200, 3), dtype=np.float32)
    got = bp.overlap_pairs(lo, lo + 1, sort=True)
    assert len(got) == 200 * 199 // 2
    np.testing.assert_array_equal(got, brute_overlap(lo, lo + 1))


def test_lattice_touching_at_faces():
    # Unit cubes on a lattice of spacing 1: each touches its 26 neighbours.
    g = np.stack(np.meshgrid(*[np.arange(6)] * 3, indexing="ij"), -1).reshape(-1, 3)
    lo = g.astype(np.float32)
    got = bp.overlap_pairs(lo, lo + 1, sort=True)
    np.testing.assert_array_equal(got, brute_overlap(lo, lo + 1))


def test_empty_input_has_the_right_shape():
    empty = np.zeros((0, 3), dtype=np.float32)
    got = bp.overlap_pairs(empty, empty, sort=True)
    assert got.shape == (0, 2) and got.dtype == np.uint32


def test_non_contiguous_and_fortran_arrays():
    rng = np.random.default_rng(3)
    lo, hi = random_boxes(rng, 800, 3, extent=10.0)
    wide_lo = np.zeros((800, 6), dtype=np.float32)
    wide_lo[:, ::2] = lo
    strided = wide_lo[:, ::2]
    assert not strided.flags.c_contiguous
    got = bp.overlap_pairs(strided, np.asfortranarray(hi), sort=True)
    np.testing.assert_array_equal(got, brute_overlap(lo, hi))


def test_float64_is_rounded_outward():
    # 0.1 is not a float32. In float64 box 1 starts one float64 step after
    # box 0 ends: apart. Rounded outward to float32 they touch, and the
    # pair is reported: no pair is lost, pairs apart by less than a
    # float32 step may be added.
    lo = np.array([[0.0, 0, 0], [np.nextafter(0.1, 1), 0, 0]])
    hi = np.array([[0.1, 1, 1], [1.0, 1, 1]])
    assert brute_overlap(lo, hi).size == 0
    np.testing.assert_array_equal(bp.overlap_pairs(lo, hi, sort=True), [[0, 1]])
    # On random float64 boxes the result is exactly the brute force on the
    # outward-rounded boxes, and a superset of the float64 brute force.
    rng = np.random.default_rng(11)
    lo, hi = random_boxes(rng, 1500, 3, extent=10.0, dtype=np.float64)
    got = bp.overlap_pairs(lo, hi, sort=True)
    np.testing.assert_array_equal(got, brute_overlap(*outward(lo, hi)))
    exact = {tuple(p) for p in brute_overlap(lo, hi)}
    assert exact <= {tuple(p) for p in got}


def test_mixed_dtypes_of_the_corners():
    rng = np.random.default_rng(5)
    lo, hi = random_boxes(rng, 500, 3, extent=10.0, dtype=np.float64)
    got = bp.overlap_pairs(lo.astype(np.float32), hi, sort=True)
    np.testing.assert_array_equal(got, brute_overlap(*outward(lo.astype(np.float32), hi)))


def test_unsorted_order_is_the_same_set_and_thread_independent():
    rng = np.random.default_rng(9)
    lo, hi = random_boxes(rng, 30_000, 3, extent=80.0, size=1.5)
    sorted_pairs = bp.overlap_pairs(lo, hi, sort=True)
    one = bp.overlap_pairs(lo, hi, sort=False)
    np.testing.assert_array_equal(sort_rows(one), sorted_pairs)
    assert np.all(one[:, 0] < one[:, 1])
    # The default is the grid's order, not the sorted one.
    np.testing.assert_array_equal(bp.overlap_pairs(lo, hi), one)
    assert not np.array_equal(one, sorted_pairs)
    for threads in (1, 2, 3, 0):
        np.testing.assert_array_equal(bp.overlap_pairs(lo, hi, threads=threads, sort=True), sorted_pairs)
        np.testing.assert_array_equal(bp.overlap_pairs(lo, hi, threads=threads, sort=False), one)


def test_timing_helper_runs_the_same_work():
    rng = np.random.default_rng(2)
    lo, hi = random_boxes(rng, 1000, 3, extent=10.0)
    find, sort = bp._broadphase._time_overlap_pairs(lo, hi, 3)
    assert len(find) == 3 and len(sort) == 3 and min(find) > 0
