"""Pair arrays hand their memory back when freed, and the next call
writes there; a pair array still alive is never written again."""

import gc

import numpy as np

import broadphase as bp
from conftest import brute_neighbors

F32 = np.float32


def address(array):
    return array.__array_interface__["data"][0]


def points(seed, n=3000, side=10.0):
    return np.random.default_rng(seed).random((n, 3)).astype(F32) * side


def test_a_freed_array_is_written_again_by_the_next_call():
    bp.release_pooled_memory()
    first = bp.neighbor_pairs(points(1), 0.8)
    where = address(first)
    del first
    gc.collect()
    second = bp.neighbor_pairs(points(2), 0.8)
    assert address(second) == where
    np.testing.assert_array_equal(second[np.lexsort(second.T[::-1])], brute_neighbors(points(2), 0.8))


def test_a_live_array_keeps_its_pairs_while_later_calls_run():
    bp.release_pooled_memory()
    kept = bp.neighbor_pairs(points(3), 0.8, sort=True)
    copy = kept.copy()
    for seed in range(4, 12):
        # Freed at once: their memory is reused by the next loop.
        later = bp.neighbor_pairs(points(seed), 0.9, threads=2)
        assert address(later) != address(kept)
        del later
        bp.overlap_pairs(points(seed), points(seed) + 0.5)
    np.testing.assert_array_equal(kept, copy)
    np.testing.assert_array_equal(kept, brute_neighbors(points(3), 0.8))


def test_views_keep_the_memory_from_the_pool():
    bp.release_pooled_memory()
    base = bp.neighbor_pairs(points(20), 0.8, sort=True)
    want = base.copy()
    column = base[:, 1]
    del base
    gc.collect()
    again = bp.neighbor_pairs(points(21), 0.8)
    assert address(again) != address(column) - 4
    np.testing.assert_array_equal(column, want[:, 1])


def test_reused_structures_give_each_call_its_own_answer():
    # The package keeps its grids and hashes between calls: sets of
    # different sizes, spreads and radii, one after another, each against
    # brute force.
    for seed, (n, side, r) in enumerate([(3000, 10, 0.8), (40, 1000, 30), (2500, 2, 0.1), (1, 1, 1)]):
        p = points(30 + seed, n, side)
        np.testing.assert_array_equal(bp.neighbor_pairs(p, r, sort=True), brute_neighbors(p, r))


def test_release_frees_the_kept_buffers():
    bp.release_pooled_memory()
    pairs = bp.neighbor_pairs(points(40), 0.8)
    size = pairs.nbytes
    del pairs
    gc.collect()
    assert bp.release_pooled_memory() >= size
    assert bp.release_pooled_memory() == 0


def test_a_parallel_call_writes_into_a_freed_array_and_keeps_a_live_one():
    # Over 4096 points a call on several threads walks chunks of slots and
    # places them in one pooled buffer.
    bp.release_pooled_memory()
    first = bp.neighbor_pairs(points(50, 20_000, 20.0), 0.8, threads=2)
    where = address(first)
    del first
    gc.collect()
    kept = bp.neighbor_pairs(points(51, 20_000, 20.0), 0.8, threads=2)
    assert address(kept) == where
    copy = kept.copy()
    later = bp.neighbor_pairs(points(52, 20_000, 20.0), 0.8, threads=2)
    assert address(later) != where
    np.testing.assert_array_equal(kept, copy)
    np.testing.assert_array_equal(
        kept[np.lexsort(kept.T[::-1])], brute_neighbors(points(51, 20_000, 20.0), 0.8)
    )
