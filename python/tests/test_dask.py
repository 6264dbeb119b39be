"""broadphase.dask on the synchronous scheduler and on a real cluster of
two worker processes: the single-machine call's exact answer for any
chunking, across a periodic wrap, after a worker dies, and bad rows named
by their global index."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import broadphase as bp  # noqa: E402
import broadphase.dask as bpd  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster, distributed.Client(cluster) as client:
        yield client


@pytest.fixture(params=["synchronous", "cluster"])
def compute(request):
    """Computes dask collections on the synchronous scheduler, or on the
    two-process cluster."""
    if request.param == "synchronous":
        return lambda *xs: dask.compute(*xs, scheduler="synchronous")
    client = request.getfixturevalue("cluster")
    return lambda *xs: tuple(client.compute(list(xs), sync=True))


def lists_equal(got, expected):
    return all(np.array_equal(g, e) for g, e in zip(got, expected))


def scene(n, seed=0, dims=3, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return (rng.random((n, dims)) * 10).astype(dtype)


def test_importing_broadphase_does_not_import_dask():
    code = "import sys, broadphase; assert 'dask' not in sys.modules, 'dask imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("chunks", [1, 7, 250, -1])
def test_neighbor_pairs_and_lists_match_the_single_machine_call(compute, chunks):
    points = scene({1: 60, 7: 140}.get(chunks, 700))
    r = 3.0 if len(points) < 700 else 1.5
    x = da.from_array(points, chunks=(chunks, 3))
    pairs, (indptr, indices) = bpd.neighbor_pairs(x, r), bpd.neighbor_lists(x, r)
    got_pairs, got_indptr, got_indices = compute(pairs, indptr, indices)
    expected = bp.neighbor_pairs(points, r, sort=True)
    assert len(expected) > len(points)
    assert got_pairs.dtype == np.uint32
    assert np.array_equal(got_pairs, expected)
    assert lists_equal((got_indptr, got_indices), bp.neighbor_lists(points, r))


@pytest.mark.parametrize("chunks", [1, 13, -1])
def test_overlap_pairs_match_the_single_machine_call(compute, chunks):
    mins = scene(40 if chunks == 1 else 600, seed=1)
    rng = np.random.default_rng(2)
    maxs = mins + rng.random(mins.shape) * 1.5
    # A box spanning every region.
    mins[7], maxs[7] = -100.0, 100.0
    got = compute(bpd.overlap_pairs(da.from_array(mins, chunks=(chunks, 3)), maxs))[0]
    assert np.array_equal(got, bp.overlap_pairs(mins, maxs, sort=True))


def test_empty_input(compute):
    empty = da.zeros((0, 3), dtype=np.float32)
    pairs, indptr, indices, boxes = compute(
        bpd.neighbor_pairs(empty, 1.0), *bpd.neighbor_lists(empty, 1.0), bpd.overlap_pairs(empty, empty)
    )
    assert pairs.shape == (0, 2) and boxes.shape == (0, 2)
    assert np.array_equal(indptr, [0]) and len(indices) == 0


@pytest.mark.parametrize(
    "periodic, dims",
    [((0.0, 10.0), 3), ((0.0, 10.0, (True, False, True)), 3), ((-1.0, (10.0, 12.0)), 2)],
)
def test_periodic_pairs_across_the_wrap(compute, periodic, dims):
    points = scene(500, seed=3, dims=dims)
    # Points on the faces themselves, where the wrap matters most.
    points[:20, 0] = 0.0
    points[20:40, 0] = 10.0
    r = 1.3
    x = da.from_array(points, chunks=(90, dims))
    pairs, indptr, indices = compute(
        bpd.neighbor_pairs(x, r, periodic=periodic), *bpd.neighbor_lists(x, r, periodic=periodic)
    )
    expected = bp.neighbor_pairs(points, r, periodic=periodic, sort=True)
    assert np.array_equal(pairs, expected)
    assert lists_equal((indptr, indices), bp.neighbor_lists(points, r, periodic=periodic))
    # The wrap contributed pairs the open search does not have.
    assert len(expected) > len(bp.neighbor_pairs(points, r))


@pytest.mark.parametrize("regions", [1, 5, 200])
def test_any_region_count_and_crowded_regions(regions):
    points = scene(300, seed=4, dtype=np.float32)
    points[100:200] = points[100]  # a hundred points in one place: one region holds them
    x = da.from_array(points, chunks=40)
    got = bpd.neighbor_pairs(x, 0.8, regions=regions).compute(scheduler="synchronous")
    assert np.array_equal(got, bp.neighbor_pairs(points, 0.8, sort=True))


def test_calls_computed_together_keep_their_own_arguments():
    points = scene(300, seed=9, dtype=np.float32)
    x = da.from_array(points, chunks=100)
    calls = [(0.5, None), (1.0, None), (1.0, (0.0, 10.0))]
    got = dask.compute(*(bpd.neighbor_pairs(x, r, periodic=p) for r, p in calls), scheduler="synchronous")
    for (r, p), pairs in zip(calls, got):
        assert np.array_equal(pairs, bp.neighbor_pairs(points, r, periodic=p, sort=True))


def test_empty_chunks_and_chunked_columns():
    points = scene(200, seed=10)
    x = da.from_array(points, chunks=((50, 0, 0, 120, 0, 30), (1, 2)))
    pairs, indptr, indices = dask.compute(
        bpd.neighbor_pairs(x, 1.5), *bpd.neighbor_lists(x, 1.5), scheduler="synchronous"
    )
    assert np.array_equal(pairs, bp.neighbor_pairs(points, 1.5, sort=True))
    assert lists_equal((indptr, indices), bp.neighbor_lists(points, 1.5))


def test_two_columns_and_float32():
    points = scene(400, seed=5, dims=2, dtype=np.float32)
    x = da.from_array(points, chunks=33)
    got = bpd.neighbor_pairs(x, 0.4).compute(scheduler="synchronous")
    assert np.array_equal(got, bp.neighbor_pairs(points, 0.4, sort=True))
    boxes = bpd.overlap_pairs(x, x + 0.3).compute(scheduler="synchronous")
    assert np.array_equal(boxes, bp.overlap_pairs(points, points + 0.3, sort=True))


def test_bad_rows_are_named_by_their_global_index(compute):
    points = scene(200, seed=6)
    points[137, 1] = np.nan
    x = da.from_array(points, chunks=50)
    with pytest.raises(ValueError, match=r"^point 137: points\[137, 1\] = nan is not a finite number"):
        compute(bpd.neighbor_pairs(x, 1.0))
    points[137, 1] = 1e300
    with pytest.raises(ValueError, match=r"^point 137: points\[137, 1\] = 1e\+300 is outside the float32"):
        compute(bpd.neighbor_lists(da.from_array(points, chunks=50), 1.0)[1])
    points[137, 1] = 11.0
    with pytest.raises(ValueError, match=r"^point 137: points\[137, 1\] = 11.0 is outside the periodic box"):
        compute(bpd.neighbor_pairs(da.from_array(points, chunks=50), 1.0, periodic=(0.0, 10.0)))
    mins = scene(200, seed=7)
    maxs = mins + 1
    maxs[151, 2] = mins[151, 2] - 1
    with pytest.raises(ValueError, match=r"^box 151: mins\[151, 2\] = .* > maxs\[151, 2\]"):
        compute(bpd.overlap_pairs(da.from_array(mins, chunks=50), maxs))


def test_bad_arguments_are_refused_at_once():
    x = da.zeros((10, 3), chunks=5)
    for r in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="r must be"):
            bpd.neighbor_pairs(x, r)
    with pytest.raises(ValueError, match="exceeds half the periodic box"):
        bpd.neighbor_pairs(x, 6.0, periodic=(0.0, 10.0))
    with pytest.raises(ValueError, match="shape"):
        bpd.neighbor_pairs(da.zeros((10, 4), chunks=5), 1.0)
    with pytest.raises(ValueError, match="dtype"):
        bpd.neighbor_pairs(da.zeros((10, 3), dtype=np.int64, chunks=5), 1.0)
    with pytest.raises(ValueError, match="regions"):
        bpd.neighbor_pairs(x, 1.0, regions=0)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        bpd.neighbor_pairs(x[x[:, 0] > 0], 1.0)
    with pytest.raises(ValueError, match="shape"):
        bpd.overlap_pairs(x, da.zeros((9, 3), chunks=5))


def test_a_killed_worker_is_retried_and_the_result_is_exact(cluster, tmp_path):
    marker = str(tmp_path / "killed-once")

    def kill_own_worker_once(block, block_info=None):
        # The first time the third chunk is read, its worker process dies
        # mid-computation; Dask reruns the lost tasks on a new worker.
        if block_info[0]["chunk-location"][0] == 2 and not os.path.exists(marker):
            pathlib.Path(marker).touch()
            os._exit(1)
        return block

    points = scene(800, seed=8)
    x = da.from_array(points, chunks=(100, 3)).map_blocks(kill_own_worker_once, dtype=points.dtype)
    got = cluster.compute(bpd.neighbor_pairs(x, 0.6), retries=2, sync=True)
    assert os.path.exists(marker), "the worker was never killed"
    assert np.array_equal(got, bp.neighbor_pairs(points, 0.6, sort=True))
    cluster.wait_for_workers(2, timeout=30)


def test_docstring_examples():
    import doctest

    for fn in (bpd.neighbor_pairs, bpd.neighbor_lists, bpd.overlap_pairs):
        runner = doctest.DocTestRunner()
        for test in doctest.DocTestFinder(recurse=False).find(fn, name=fn.__name__, globs={}):
            assert test.examples
            runner.run(test)
        assert runner.failures == 0, fn.__name__
