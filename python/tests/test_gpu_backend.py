"""backend="cpu" | "gpu" | "auto" of neighbor_pairs, neighbor_lists,
overlap_pairs and sphere_pairs.

Where this build has no GPU backend (the default build: the cargo feature
``gpu`` is off) or no adapter is found, "gpu" must raise GpuUnavailable
and "auto" must run on the CPU. Where it has one, the GPU's answers must
equal the CPU's exactly. ``BROADPHASE_GPU_REQUIRED=1`` (set by CI after
building with the feature, on lavapipe) makes a missing GPU a failure
instead of a skip.
"""

import os
import signal

import numpy as np
import pytest

import broadphase as bp
from conftest import brute_neighbors, brute_overlap, hostile_boxes, outward, random_boxes

F32 = np.float32
GPU = bp.gpu_unavailable_reason() is None
REQUIRED = os.environ.get("BROADPHASE_GPU_REQUIRED") == "1"
needs_gpu = pytest.mark.skipif(
    not GPU and not REQUIRED, reason=f"no GPU backend: {bp.gpu_unavailable_reason()}"
)
needs_no_gpu = pytest.mark.skipif(GPU, reason="this build has a GPU backend")


def test_gpu_unavailable_is_a_runtime_error():
    assert issubclass(bp.GpuUnavailable, RuntimeError)
    assert "GpuUnavailable" in bp.__all__


def test_gpu_required_means_available():
    if REQUIRED:
        assert GPU, f"BROADPHASE_GPU_REQUIRED=1 but: {bp.gpu_unavailable_reason()}"
        assert bp.gpu_adapter()


@pytest.mark.parametrize("backend", ["CPU", "cuda", "", None])
def test_unknown_backend_is_a_value_error(backend):
    points = np.zeros((2, 3), dtype=F32)
    with pytest.raises((ValueError, TypeError)):
        bp.neighbor_pairs(points, 1.0, backend=backend)
    with pytest.raises((ValueError, TypeError)):
        bp.neighbor_lists(points, 1.0, backend=backend)
    with pytest.raises((ValueError, TypeError)):
        bp.overlap_pairs(points, points, backend=backend)
    with pytest.raises((ValueError, TypeError)):
        bp.sphere_pairs(points, 1.0, backend=backend)


def test_cpu_backend_says_cpu():
    points = np.zeros((3, 3), dtype=F32)
    assert len(bp.neighbor_pairs(points, 1.0, backend="cpu")) == 3
    assert bp.last_backend() == "cpu"


@needs_no_gpu
def test_gpu_without_a_backend_raises_and_auto_falls_back():
    reason = bp.gpu_unavailable_reason()
    assert reason and bp.gpu_adapter() is None
    rng = np.random.default_rng(1)
    points = rng.random((300, 3)).astype(F32) * 5
    calls = [
        lambda backend: bp.neighbor_pairs(points, 0.5, sort=True, backend=backend),
        lambda backend: bp.neighbor_lists(points, 0.5, backend=backend),
        lambda backend: bp.overlap_pairs(points, points + 0.3, sort=True, backend=backend),
        lambda backend: bp.sphere_pairs(points, 0.2, sort=True, backend=backend),
    ]
    for call in calls:
        with pytest.raises(bp.GpuUnavailable) as refused:
            call("gpu")
        # The message names why: no feature compiled in, or no adapter.
        assert str(refused.value) == reason
        assert "feature" in reason or "adapter" in reason
        expected = call("cpu")
        got = call("auto")
        assert bp.last_backend() == "cpu"
        for a, b in zip(got if isinstance(got, tuple) else [got],
                        expected if isinstance(expected, tuple) else [expected]):
            np.testing.assert_array_equal(a, b)


def same_neighbors(points, r, **kw):
    """The GPU's pairs and lists equal the CPU's (sorted) exactly."""
    cpu_pairs = bp.neighbor_pairs(points, r, sort=True, backend="cpu", **kw)
    gpu_pairs = bp.neighbor_pairs(points, r, backend="gpu", **kw)
    assert bp.last_backend() == "gpu"
    assert gpu_pairs.dtype == cpu_pairs.dtype
    np.testing.assert_array_equal(gpu_pairs, cpu_pairs)
    cpu_indptr, cpu_indices = bp.neighbor_lists(points, r, backend="cpu", **kw)
    gpu_indptr, gpu_indices = bp.neighbor_lists(points, r, sort=False, backend="gpu", **kw)
    assert bp.last_backend() == "gpu"
    assert (gpu_indptr.dtype, gpu_indices.dtype) == (cpu_indptr.dtype, cpu_indices.dtype)
    np.testing.assert_array_equal(gpu_indptr, cpu_indptr)
    np.testing.assert_array_equal(gpu_indices, cpu_indices)
    return gpu_pairs


@needs_gpu
@pytest.mark.parametrize("n", [0, 1, 2, 500, 4000])
@pytest.mark.parametrize("dims", [2, 3])
def test_gpu_neighbors_equal_the_cpu(n, dims):
    rng = np.random.default_rng(7 + n + dims)
    points = rng.random((n, dims)).astype(F32) * 10
    r = 0.7 if dims == 3 else 0.3
    pairs = same_neighbors(points, r)
    if n <= 1000:
        np.testing.assert_array_equal(pairs, brute_neighbors(points, r))


@needs_gpu
def test_gpu_neighbors_adversarial():
    rng = np.random.default_rng(3)
    # Pairs exactly at the radius on a lattice, float64 input, piles of
    # coincident points, far outliers.
    lattice = np.stack(np.meshgrid(*[np.arange(8.0)] * 3), -1).reshape(-1, 3)
    same_neighbors(lattice, 1.0)
    same_neighbors(rng.random((2000, 3)) * 20, 1.3)
    pile = np.repeat(rng.random((3, 3)).astype(F32), 200, axis=0)
    same_neighbors(pile, 0.01)
    outliers = np.concatenate([rng.random((500, 3)) * 5, [[1e30, 0, 0], [-3e38, 1, 1]]])
    same_neighbors(outliers.astype(F32), 0.5)


@needs_gpu
def test_gpu_periodic_neighbors_equal_the_cpu():
    rng = np.random.default_rng(11)
    points = (rng.random((3000, 3)) * 10).astype(F32)
    for periodic in [(0.0, 10.0), (0.0, 10.0, [True, False, True]), ([0, 0, 0], [10, 4, 2.5])]:
        inside = points * (np.asarray(periodic[1], dtype=F32) / 10)
        same_neighbors(inside, 1.2, periodic=periodic)
    flat = (rng.random((800, 2)) * 6).astype(F32)
    same_neighbors(flat, 0.4, periodic=(0.0, 6.0))


@needs_gpu
def test_gpu_bad_input_is_the_cpus_value_error():
    points = np.zeros((5, 3), dtype=F32)
    points[3, 1] = np.nan
    for call in (bp.neighbor_pairs, bp.neighbor_lists):
        with pytest.raises(ValueError, match="point 3"):
            call(points, 1.0, backend="gpu")
    # The one input the GPU refuses that the CPU takes: a radius below
    # 2**-30. "gpu" says so; "auto" answers on the CPU.
    ok = np.zeros((4, 3), dtype=F32)
    with pytest.raises(ValueError, match="2\\*\\*-30"):
        bp.neighbor_pairs(ok, 0.0, backend="gpu")
    np.testing.assert_array_equal(
        bp.neighbor_pairs(ok, 0.0, backend="auto"), bp.neighbor_pairs(ok, 0.0, sort=True)
    )
    assert bp.last_backend() == "cpu"
    bp.neighbor_pairs(ok, 1.0, backend="auto")
    assert bp.last_backend() == "gpu"


@needs_gpu
def test_gpu_overlap_pairs_equal_the_cpu():
    rng = np.random.default_rng(5)
    scenes = [random_boxes(rng, n, dims) for n in (0, 1, 3000) for dims in (2, 3)]
    scenes.append(random_boxes(rng, 2000, 3, dtype=np.float64))
    scenes.append(hostile_boxes(3))
    scenes.append(hostile_boxes(2))
    for mins, maxs in scenes:
        cpu = bp.overlap_pairs(mins, maxs, sort=True, backend="cpu")
        gpu = bp.overlap_pairs(mins, maxs, backend="gpu")
        assert bp.last_backend() == "gpu"
        np.testing.assert_array_equal(gpu, cpu)
        if len(mins) <= 3000:
            np.testing.assert_array_equal(gpu, brute_overlap(*outward(mins, maxs)))


def same_spheres(centers, radii):
    cpu = bp.sphere_pairs(centers, radii, sort=True, backend="cpu")
    gpu = bp.sphere_pairs(centers, radii, backend="gpu")
    assert bp.last_backend() == "gpu"
    np.testing.assert_array_equal(gpu, cpu)
    return gpu


@needs_gpu
def test_gpu_sphere_pairs_equal_the_cpu():
    rng = np.random.default_rng(8)
    for n, dims in [(0, 3), (1, 3), (3000, 3), (2000, 2)]:
        centers = (rng.random((n, dims)) * 40).astype(F32)
        same_spheres(centers, (rng.random(n) * 1.5 + 0.1).astype(F32))
        same_spheres(centers, 0.6)
    # float64 (radii rounded up), a lattice touching exactly, a pile, one
    # huge sphere among small ones.
    same_spheres(rng.random((1500, 3)) * 30, rng.random(1500) + 0.05)
    lattice = np.stack(np.meshgrid(*[np.arange(10.0)] * 3), -1).reshape(-1, 3) * 3
    radii = np.where(lattice.sum(axis=1) / 3 % 2 == 0, 1.0, 2.0).astype(F32)
    assert len(same_spheres(lattice.astype(F32), radii)) == 2700
    same_spheres(np.zeros((500, 3), dtype=F32), 0.5)
    centers = (rng.random((1000, 3)) * 40).astype(F32)
    radii = np.full(1000, 0.3, dtype=F32)
    radii[17] = 25.0
    same_spheres(centers, radii)


@needs_gpu
def test_gpu_sphere_radius_below_the_minimum():
    centers = np.array([[0, 0, 0], [1, 0, 0]], dtype=F32)
    with pytest.raises(ValueError, match="2\\*\\*-30"):
        bp.sphere_pairs(centers, np.array([1.0, 0.0]), backend="gpu")
    got = bp.sphere_pairs(centers, np.array([1.0, 0.0]), backend="auto")
    assert bp.last_backend() == "cpu"
    np.testing.assert_array_equal(got, [[0, 1]])


@needs_gpu
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_does_not_hang_on_the_parents_device():
    points = np.random.default_rng(2).random((2000, 3), dtype=np.float32)
    expected = bp.neighbor_pairs(points, 0.1, backend="gpu")
    pid = os.fork()
    if pid == 0:
        # A hang kills the child; any failure is a nonzero exit.
        signal.alarm(60)
        code = 1
        try:
            try:
                bp.neighbor_pairs(points, 0.1, backend="gpu")
            except bp.GpuUnavailable as why:
                code = 2 if "fork" in str(why) else 3
            got = bp.neighbor_pairs(points, 0.1, sort=True, backend="auto")
            if code == 2 and bp.last_backend() == "cpu" and np.array_equal(got, expected):
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    # The parent keeps its device.
    np.testing.assert_array_equal(bp.neighbor_pairs(points, 0.1, backend="gpu"), expected)
