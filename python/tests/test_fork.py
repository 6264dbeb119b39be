"""A child made by ``fork`` (``multiprocessing`` on Linux) works as its
parent does, after the parent ran calls on worker threads: the child
inherits the package's kept job systems but none of their threads."""

import multiprocessing

import numpy as np
import pytest

import broadphase as bp

pytestmark = [
    pytest.mark.skipif(
        "fork" not in multiprocessing.get_all_start_methods(), reason="no fork on this platform"
    ),
    # Python 3.12+ warns that forking a process with threads may deadlock;
    # that is what these tests check does not happen here.
    pytest.mark.filterwarnings("ignore:.*fork.*:DeprecationWarning"),
]

# Set by a test before it forks, read by the children.
WORLD = None


def points():
    return np.random.default_rng(3).random((20_000, 3), dtype=np.float32)


def child_neighbor_pairs(threads):
    return bp.neighbor_pairs(points(), 0.02, threads=threads, sort=True)


def child_overlap_pairs(threads):
    p = points()
    return bp.overlap_pairs(p, p + 0.01, threads=threads, sort=True)


def child_world_update(step):
    lo = points()[:500] + step
    WORLD.set_boxes(np.arange(500), lo, lo + 0.05)
    WORLD.update()
    return WORLD.pairs


def test_fork_child_after_threads_gives_the_parents_answer():
    want = bp.neighbor_pairs(points(), 0.02, threads=2, sort=True)
    assert len(want) > 1000
    p = points()
    want_boxes = bp.overlap_pairs(p, p + 0.01, threads=2, sort=True)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map_async(child_neighbor_pairs, [2, None, 2, 0, 1]).get(timeout=120)
        got_boxes = pool.map_async(child_overlap_pairs, [2, 3]).get(timeout=120)
    for pairs in got:
        np.testing.assert_array_equal(pairs, want)
    for pairs in got_boxes:
        np.testing.assert_array_equal(pairs, want_boxes)


def test_fork_child_uses_a_persistent_broad_phase_made_with_threads():
    global WORLD
    WORLD = bp.PersistentBroadPhase(threads=2)
    want = child_world_update(0.0)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        got = pool.map_async(child_world_update, [0.0, 0.0]).get(timeout=120)
    for pairs in got:
        np.testing.assert_array_equal(np.sort(pairs, axis=0), np.sort(want, axis=0))
    WORLD = None


def test_forks_right_after_threaded_calls_never_hang():
    # Each fork comes right after a call on 2 threads, while its workers
    # are going back to sleep: a worker caught holding a lock at the fork
    # left it held in the child, which then hung (one run of the pool
    # below in about five, before the package stopped its workers before
    # every fork).
    want = bp.neighbor_pairs(points(), 0.02, threads=2, sort=True)
    p = points()
    for _ in range(8):
        bp.neighbor_pairs(p, 0.02, threads=2, sort=True)
        bp.overlap_pairs(p, p + 0.01, threads=2, sort=True)
        with multiprocessing.get_context("fork").Pool(2) as pool:
            got = pool.map_async(child_neighbor_pairs, [2, None, 2, 0, 1]).get(timeout=60)
        for pairs in got:
            np.testing.assert_array_equal(pairs, want)
