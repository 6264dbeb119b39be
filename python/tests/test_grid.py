"""Grid's batched box, point, sphere and ray queries against a numpy brute force."""

import numpy as np
import pytest

import broadphase as bp
from conftest import brute_query, csr_rows, first_hits, hostile_boxes, outward, random_boxes

F32 = np.float32


def check_rows(got, expected):
    indptr, indices = got
    assert indptr.dtype == indices.dtype == np.int32
    rows = csr_rows(indptr, indices)
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected):
        np.testing.assert_array_equal(row, want)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("n", [0, 1, 400, 5000])
def test_box_and_point_queries_match_brute_force(dims, n):
    rng = np.random.default_rng(n + dims)
    lo, hi = random_boxes(rng, n, dims, extent=20.0, size=3.0)
    grid = bp.Grid(lo, hi)
    assert len(grid) == n and grid.dims == dims
    qlo, qhi = random_boxes(rng, 700, dims, extent=22.0, size=4.0)
    check_rows(grid.query(qlo, qhi), brute_query(lo, hi, qlo, qhi))
    points = (rng.random((700, dims)) * 22).astype(F32)
    # Some points on box corners and faces, which count.
    if n:
        points[:50] = lo[rng.integers(0, n, 50)]
        points[50:100] = hi[rng.integers(0, n, 50)]
    check_rows(grid.query_points(points), brute_query(lo, hi, points, points))


def test_hostile_boxes_and_queries():
    lo, hi = hostile_boxes(3)
    grid = bp.Grid(lo, hi)
    queries_lo = np.concatenate([lo, np.array([[1, 1, 1], [-3.4e38] * 3], F32)])
    queries_hi = np.concatenate([hi, np.array([[1, 1, 1], [3.4e38] * 3], F32)])
    check_rows(grid.query(queries_lo, queries_hi), brute_query(lo, hi, queries_lo, queries_hi))
    # The query spanning all of float32 meets every box.
    assert grid.query(queries_lo[-1:], queries_hi[-1:])[1].tolist() == list(range(len(lo)))


def test_empty_query_batches():
    lo, hi = random_boxes(np.random.default_rng(1), 10, 3)
    grid = bp.Grid(lo, hi)
    indptr, indices = grid.query(np.zeros((0, 3), F32), np.zeros((0, 3), F32))
    assert indptr.tolist() == [0] and indices.size == 0
    index, t = grid.cast_rays(np.zeros((0, 3)), np.zeros((0, 3)))
    assert index.shape == (0,) and t.shape == (0,)


def test_float64_queries_never_miss():
    # Boxes rounded outward, points to nearest: a float64 point inside a
    # float64 box is inside its float32 box.
    rng = np.random.default_rng(5)
    lo, hi = random_boxes(rng, 2000, 3, extent=10.0, dtype=np.float64)
    grid = bp.Grid(lo, hi)
    points = lo + (hi - lo) * rng.random((2000, 3))
    exact = brute_query(lo, hi, points, points)
    got = csr_rows(*grid.query_points(points))
    lo32, hi32 = outward(lo, hi)
    p32 = points.astype(F32)
    for i, (row, want) in enumerate(zip(got, exact)):
        assert set(want) <= set(row.tolist())
        np.testing.assert_array_equal(row, brute_query(lo32, hi32, p32[i : i + 1], p32[i : i + 1])[0])


@pytest.mark.parametrize("dims", [2, 3])
def test_rays_match_brute_force(dims):
    rng = np.random.default_rng(40 + dims)
    lo, hi = random_boxes(rng, 3000, dims, extent=30.0, size=2.0)
    grid = bp.Grid(lo, hi)
    m = 2000
    origins = (rng.random((m, dims)) * 40 - 5).astype(F32)
    dirs = (rng.standard_normal((m, dims))).astype(F32)
    dirs[:100] = 0  # a ray that does not move is its origin
    dirs[100:200, 0] = 0  # zero components
    origins[200:300] = lo[:100]  # starting on a corner: t = 0
    max_t = np.where(rng.random(m) < 0.5, np.inf, rng.random(m) * 10).astype(F32)
    max_t[300:310] = 0
    index, t = grid.cast_rays(origins, dirs, max_t)
    assert index.dtype == np.int64 and t.dtype == np.float32
    want_index, want_t = first_hits(origins, dirs, max_t, lo, hi)
    np.testing.assert_array_equal(index, want_index)
    np.testing.assert_array_equal(t, want_t)
    assert np.all(np.isinf(t[index == -1]))
    assert (index >= 0).sum() > m // 4


def test_rays_scalar_max_t_and_ties_go_to_the_lower_index():
    lo = np.array([[5, -1, -1], [5, -1, -1], [10, -1, -1]], F32)
    hi = np.array([[6, 1, 1], [6, 1, 1], [11, 1, 1]], F32)
    grid = bp.Grid(lo, hi)
    origins = np.zeros((3, 3), F32)
    dirs = np.array([[1, 0, 0], [-1, 0, 0], [2, 0, 0]], F32)
    index, t = grid.cast_rays(origins, dirs)
    assert index.tolist() == [0, -1, 0] and t.tolist() == [5.0, np.inf, 2.5]
    index, t = grid.cast_rays(origins, dirs, 4.0)
    assert index.tolist() == [-1, -1, 0]


def test_threads_give_the_same_answers():
    rng = np.random.default_rng(50)
    lo, hi = random_boxes(rng, 20_000, 3, extent=60.0, size=2.0)
    grid = bp.Grid(lo, hi)
    qlo, qhi = random_boxes(rng, 5000, 3, extent=60.0, size=3.0)
    origins = (rng.random((5000, 3)) * 60).astype(F32)
    dirs = rng.standard_normal((5000, 3)).astype(F32)
    base = grid.query(qlo, qhi), grid.query_points(origins), grid.cast_rays(origins, dirs)
    for threads in (2, 0):
        other = (
            grid.query(qlo, qhi, threads=threads),
            grid.query_points(origins, threads=threads),
            grid.cast_rays(origins, dirs, threads=threads),
        )
        for a, b in zip(base, other):
            np.testing.assert_array_equal(a[0], b[0])
            np.testing.assert_array_equal(a[1], b[1])


def test_queries_must_match_the_grids_columns():
    lo, hi = random_boxes(np.random.default_rng(1), 10, 3)
    grid = bp.Grid(lo, hi)
    with pytest.raises(ValueError, match="columns"):
        grid.query_points(np.zeros((1, 2), F32))
    with pytest.raises(ValueError, match="columns"):
        grid.query(np.zeros((1, 2), F32), np.zeros((1, 2), F32))
    with pytest.raises(ValueError, match="columns"):
        grid.cast_rays(np.zeros((1, 2), F32), np.zeros((1, 2), F32))


def brute_spheres(lo, hi, centers, radii):
    """The boxes each sphere meets, by the crate's rule: the box overlaps the
    sphere's float32 bounds (widened by one float32 step) and its closest
    point lies within the radius, in float64."""
    lo3 = np.zeros((len(lo), 3), F32)
    hi3 = np.zeros((len(hi), 3), F32)
    lo3[:, : lo.shape[1]], hi3[:, : hi.shape[1]] = lo, hi
    rows = []
    for c, r in zip(centers, radii):
        c3 = np.zeros(3, F32)
        c3[: len(c)] = c
        r = F32(r)
        blo = np.nextafter(c3 - r, F32(-np.inf))
        bhi = np.nextafter(c3 + r, F32(np.inf))
        near = np.all((lo3 <= bhi) & (blo <= hi3), axis=1)
        closest = np.minimum(np.maximum(c3.astype(np.float64), lo3), hi3)
        d2 = ((c3.astype(np.float64) - closest) ** 2).sum(axis=1)
        rows.append(np.flatnonzero(near & (d2 <= np.float64(r) * np.float64(r))))
    return rows


@pytest.mark.parametrize("dims", [2, 3])
def test_sphere_queries_match_brute_force(dims):
    rng = np.random.default_rng(40 + dims)
    lo, hi = random_boxes(rng, 3000, dims, extent=20.0, size=2.0)
    grid = bp.Grid(lo, hi)
    centers = (rng.random((500, dims)) * 22).astype(F32)
    radii = (rng.random(500) * 3).astype(F32)
    radii[:20] = 0.0  # a point: the boxes that contain it
    want = brute_spheres(lo, hi, centers, radii)
    assert sum(len(w) for w in want) > 1000
    check_rows(grid.query_spheres(centers, radii), want)
    check_rows(grid.query_spheres(centers, radii, threads=2), want)
    check_rows(grid.query_spheres(centers, 1.5), brute_spheres(lo, hi, centers, np.full(500, 1.5)))
    # Touching counts: a sphere whose surface reaches a face exactly.
    face = bp.Grid(np.array([[2, 0, 0]], F32)[:, :dims], np.array([[3, 1, 1]], F32)[:, :dims])
    check_rows(face.query_spheres(np.zeros((1, dims)), 2.0), [[0]])
    check_rows(face.query_spheres(np.zeros((1, dims)), 1.999), [[]])


def test_sphere_query_errors_name_the_first_bad_sphere():
    grid = bp.Grid(np.zeros((2, 3), F32), np.ones((2, 3), F32))
    centers = np.zeros((4, 3))
    with pytest.raises(ValueError, match="sphere 2: radii\\[2\\] = -1.0 must be >= 0"):
        grid.query_spheres(centers, np.array([1.0, 1.0, -1.0, np.nan]))
    with pytest.raises(ValueError, match="sphere 1: radii\\[1\\] = inf is not finite"):
        grid.query_spheres(centers, np.array([1.0, np.inf, 1.0, 1.0]))
    with pytest.raises(ValueError, match="sphere 0: radii = 1e\\+39 is outside the float32 range"):
        grid.query_spheres(centers, 1e39)
    bad = centers.copy()
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="sphere 1: centers\\[1, 2\\] = nan"):
        grid.query_spheres(bad, np.array([1.0, 1.0, -1.0, 1.0]))
    with pytest.raises(ValueError, match="radii must be a float or an array of shape \\(4,\\)"):
        grid.query_spheres(centers, np.ones(3))
    with pytest.raises(ValueError, match="centers has 2 columns"):
        grid.query_spheres(np.zeros((4, 2)), 1.0)
    assert [len(a) for a in grid.query_spheres(np.zeros((0, 3)), 1.0)] == [1, 0]
