"""Bad input is a ValueError (TypeError for what is not an array) naming
the first bad row: never a crash, never a silently dropped row."""

import numpy as np
import pytest

import broadphase as bp
from conftest import sort_rows

F32 = np.float32


def boxes(n=5, dims=3, dtype=F32):
    lo = np.arange(n * dims, dtype=dtype).reshape(n, dims)
    return lo, lo + 1


@pytest.mark.parametrize("dtype", [F32, np.float64])
def test_bad_boxes_name_the_first_bad_one(dtype):
    lo, hi = boxes(6, dtype=dtype)
    cases = [
        ("mins", 3, 1, np.nan, "box 3: mins\\[3, 1\\] = nan is not a finite number"),
        ("maxs", 2, 0, np.inf, "box 2: maxs\\[2, 0\\] = inf is not a finite number"),
        ("mins", 4, 2, -np.inf, "box 4: mins\\[4, 2\\] = -inf is not a finite number"),
        ("mins", 1, 0, 50.0, "box 1: mins\\[1, 0\\] = 50.0 > maxs\\[1, 0\\] = 4.0"),
    ]
    for which, row, col, value, message in cases:
        a, b = lo.copy(), hi.copy()
        (a if which == "mins" else b)[row, col] = value
        # A later bad box too: the first is named.
        a[5, 0] = np.nan
        for call in (
            lambda: bp.overlap_pairs(a, b),
            lambda: bp.Grid(a, b),
            lambda: bp.PersistentBroadPhase().set_boxes(np.arange(6), a, b),
        ):
            with pytest.raises(ValueError, match=message):
                call()
        grid = bp.Grid(lo, hi)
        with pytest.raises(ValueError, match="query " + message):
            grid.query(a, b)


def test_float64_beyond_float32_is_refused():
    lo, hi = boxes(3, dtype=np.float64)
    hi[1, 2] = 1e39
    with pytest.raises(ValueError, match="box 1: maxs\\[1, 2\\] = 1e\\+39 is outside the float32 range"):
        bp.overlap_pairs(lo, hi)
    # A min of 1e39 with a max of 2e39: refused at the max, which has no
    # float32 at or above it.
    lo[0], hi[0] = 1e39, 2e39
    with pytest.raises(ValueError, match="box 0: maxs\\[0, 0\\] = 2e\\+39 is outside"):
        bp.overlap_pairs(lo, hi)
    points = np.zeros((4, 3))
    points[2, 1] = -1e300
    with pytest.raises(ValueError, match="point 2: points\\[2, 1\\] = -1e\\+300 is outside the float32 range"):
        bp.neighbor_pairs(points, 1.0)


def test_float64_min_above_max_by_less_than_a_float32_step_is_refused():
    lo = np.array([[1.0 + 1e-12, 0, 0]])
    hi = np.array([[1.0, 1, 1]])
    with pytest.raises(ValueError, match="box 0: mins\\[0, 0\\] = 1.000000000001 > maxs"):
        bp.overlap_pairs(lo, hi)


@pytest.mark.parametrize(
    "array, message",
    [
        (np.zeros((4,), F32), "must have shape \\(n, 3\\) or \\(n, 2\\), got \\(4,\\)"),
        (np.zeros((4, 4), F32), "got \\(4, 4\\)"),
        (np.zeros((4, 1), F32), "got \\(4, 1\\)"),
        (np.zeros((2, 2, 3), F32), "got \\(2, 2, 3\\)"),
        (np.zeros((4, 3), np.int64), "dtype int64, expected float32 or float64"),
        (np.zeros((4, 3), np.float16), "dtype float16"),
        (np.zeros((4, 3), np.complex128), "dtype complex128"),
    ],
)
def test_wrong_shapes_and_dtypes(array, message):
    good = np.zeros((4, 3), F32)
    with pytest.raises(ValueError, match=message):
        bp.overlap_pairs(array, good if array.shape[1:] != (3,) else array)
    with pytest.raises(ValueError, match=message):
        bp.neighbor_pairs(array, 1.0)
    with pytest.raises(ValueError, match=message):
        bp.neighbor_lists(array, 1.0)
    with pytest.raises(ValueError, match=message):
        bp.Grid(good, good).query_points(array)


def test_not_arrays_are_type_errors():
    good = np.zeros((4, 3), F32)
    with pytest.raises(TypeError, match="mins must be a numpy array, got list"):
        bp.overlap_pairs([[0, 0, 0]], good)
    with pytest.raises(TypeError, match="points must be a numpy array"):
        bp.neighbor_pairs("points", 1.0)
    with pytest.raises(TypeError, match="ids must be a numpy array of integers"):
        bp.PersistentBroadPhase().set_boxes([0, 1, 2, 3], good, good)


def test_mismatched_shapes():
    with pytest.raises(ValueError, match="mins has shape \\(4, 3\\) but maxs has shape \\(5, 3\\)"):
        bp.overlap_pairs(np.zeros((4, 3), F32), np.zeros((5, 3), F32))
    with pytest.raises(ValueError, match="mins has shape \\(4, 2\\) but maxs has shape \\(4, 3\\)"):
        bp.Grid(np.zeros((4, 2), F32), np.zeros((4, 3), F32))
    grid = bp.Grid(np.zeros((4, 3), F32), np.ones((4, 3), F32))
    with pytest.raises(ValueError, match="origins has shape"):
        grid.cast_rays(np.zeros((4, 3), F32), np.zeros((3, 3), F32))
    with pytest.raises(ValueError, match="max_t must be a float or an array of shape \\(4,\\)"):
        grid.cast_rays(np.zeros((4, 3), F32), np.zeros((4, 3), F32), np.ones(3))


@pytest.mark.parametrize("r", [-1.0, -1e-30, np.nan, np.inf, 1e20, 1.1e19])
def test_bad_radius(r):
    points = np.zeros((3, 3), F32)
    message = "r must be a finite number in 0\\.\\.=1e19 \\(r\\*r must fit float32\\), got"
    with pytest.raises(ValueError, match=message):
        bp.neighbor_pairs(points, r)
    with pytest.raises(ValueError, match=message):
        bp.neighbor_lists(points, r, periodic=(0.0, 1.0))


def test_radius_whose_square_overflows_float32():
    with pytest.raises(ValueError, match="0\\.\\.=1e19 \\(r\\*r must fit float32\\), got 1e\\+20"):
        bp.neighbor_pairs(np.zeros((3, 3), F32), 1e20)
    # The cap itself is a radius: every pair of these points is within it.
    points = np.array([[0, 0, 0], [1e19, 0, 0], [0, 2e19, 0]], F32)
    assert bp.neighbor_pairs(points, 1e19, sort=True).tolist() == [[0, 1]]


def test_bad_points_name_the_first():
    points = np.zeros((6, 2), F32)
    points[4, 1] = np.nan
    points[5, 0] = np.inf
    with pytest.raises(ValueError, match="point 4: points\\[4, 1\\] = nan"):
        bp.neighbor_pairs(points, 1.0)
    with pytest.raises(ValueError, match="point 4"):
        bp.neighbor_lists(points, 1.0, periodic=(-1.0, 1.0))
    with pytest.raises(ValueError, match="point 4"):
        bp.Grid(np.zeros((1, 2), F32), np.ones((1, 2), F32)).query_points(points)


def test_periodic_errors():
    points = np.array([[0.5, 0.5, 0.5], [1.5, 0.2, 0.2], [2.0, 0.2, 0.2]], F32)
    with pytest.raises(ValueError, match="point 1: points\\[1, 0\\] = 1.5 is outside the periodic box"):
        bp.neighbor_pairs(points, 0.1, periodic=(0.0, 1.0))
    with pytest.raises(ValueError, match="r = 0.6 exceeds half the periodic box along axis 0 \\(0.5\\)"):
        bp.neighbor_pairs(points[:1], 0.6, periodic=(0.0, 1.0))
    # The half-box check is on the float32 box: 0.5 - 0.3 is 0.19999999
    # in float32, so r = 0.1 exceeds half of it; dyadic bounds are exact.
    with pytest.raises(ValueError, match="r = 0.1 exceeds half the periodic box along axis 0 \\(0.099999994\\)"):
        bp.neighbor_pairs(np.full((1, 3), 0.4, F32), 0.1, periodic=(0.3, 0.5))
    assert bp.neighbor_pairs(np.full((1, 3), 0.4, F32), 0.125, periodic=(0.25, 0.5)).shape == (0, 2)
    # Not along an axis that does not wrap.
    assert bp.neighbor_pairs(points[:1], 0.6, periodic=(0.0, 1.0, False)).shape == (0, 2)
    with pytest.raises(ValueError, match="axis 1 needs finite lo < hi, got lo = 1.0, hi = 1.0"):
        bp.neighbor_pairs(points, 0.1, periodic=((0, 1, 0), (3, 1, 1)))
    with pytest.raises(ValueError, match="periodic lo has 2 values for points of 3 columns"):
        bp.neighbor_pairs(points, 0.1, periodic=((0, 0), 3.0))
    with pytest.raises(ValueError, match="periodic wrap has 2 values"):
        bp.neighbor_pairs(points, 0.1, periodic=(0.0, 3.0, (True, False)))
    for bad in (3.0, (0.0,), (0.0, 1.0, True, 4), "box"):
        with pytest.raises(TypeError, match="periodic must be \\(lo, hi\\) or \\(lo, hi, wrap\\)"):
            bp.neighbor_pairs(points, 0.1, periodic=bad)


def test_bad_rays_name_the_first_bad_ray():
    grid = bp.Grid(np.zeros((2, 3), F32), np.ones((2, 3), F32))
    origins = np.zeros((5, 3), F32)
    dirs = np.ones((5, 3), F32)
    max_t = np.ones(5, F32)
    o, d, t = origins.copy(), dirs.copy(), max_t.copy()
    o[3, 2] = np.nan
    d[2, 0] = np.inf
    t[4] = -1
    with pytest.raises(ValueError, match="ray 2: dirs\\[2, 0\\] = inf"):
        grid.cast_rays(o, d, t)
    t[1] = np.nan
    with pytest.raises(ValueError, match="ray 1: max_t\\[1\\] = nan must be >= 0"):
        grid.cast_rays(o, d, t)
    with pytest.raises(ValueError, match="ray 0: max_t = -2.0 must be >= 0"):
        grid.cast_rays(origins, dirs, -2.0)
    with pytest.raises(TypeError, match="max_t must be a float or a numpy array"):
        grid.cast_rays(origins, dirs, "far")


@pytest.mark.parametrize("threads", [-1, 10_000])
def test_bad_thread_counts(threads):
    with pytest.raises(ValueError, match="threads must be None, 0 \\(one per core\\) or 1..=1024"):
        bp.overlap_pairs(np.zeros((1, 3), F32), np.ones((1, 3), F32), threads=threads)
    with pytest.raises(ValueError, match="threads"):
        bp.PersistentBroadPhase(threads=threads)


def test_read_only_and_unaligned_arrays_are_read():
    lo = np.zeros((3, 3), F32)
    lo.setflags(write=False)
    raw = np.zeros(3 * 3 * 4 + 1, np.uint8)[1:].view(F32).reshape(3, 3)  # unaligned
    assert not raw.flags.aligned
    assert bp.overlap_pairs(lo, raw).tolist() == [[0, 1], [0, 2], [1, 2]]


@pytest.mark.parametrize("dtype", [">f4", ">f8"])
def test_big_endian_arrays_are_read(dtype):
    rng = np.random.default_rng(4)
    lo = rng.random((300, 3)).astype(F32)
    hi = lo + F32(0.1)
    big_lo, big_hi = lo.astype(dtype), hi.astype(dtype)
    assert not big_lo.dtype.isnative
    want = bp.overlap_pairs(lo, hi, sort=True)
    assert len(want) > 0
    np.testing.assert_array_equal(bp.overlap_pairs(big_lo, big_hi, sort=True), want)
    np.testing.assert_array_equal(
        bp.neighbor_pairs(big_lo, 0.1, sort=True), bp.neighbor_pairs(lo, 0.1, sort=True)
    )
    grid = bp.Grid(big_lo, big_hi)
    for got, native in zip(grid.query_points(big_lo), bp.Grid(lo, hi).query_points(lo)):
        np.testing.assert_array_equal(got, native)
    ends = np.full(300, 0.5).astype(dtype)
    for got, native in zip(
        grid.cast_rays(big_lo, np.ones((300, 3), dtype), ends),
        bp.Grid(lo, hi).cast_rays(lo, np.ones((300, 3), F32), np.full(300, 0.5)),
    ):
        np.testing.assert_array_equal(got, native)
    world = bp.PersistentBroadPhase()
    world.set_boxes(np.arange(300).astype(">i8"), big_lo, big_hi)
    world.update()
    np.testing.assert_array_equal(sort_rows(world.pairs), want)
