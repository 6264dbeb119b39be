"""Grid.rays_hits: every box each ray hits, against a numpy brute force."""

import numpy as np
import pytest

import broadphase as bp
from conftest import csr_rows, first_hits, hostile_boxes, random_boxes

F32 = np.float32


def ray_entries64(origins, dirs, max_t, mins, maxs):
    """Where each ray enters each box, in float64 as the crate's exact
    test computes it (slabs), and whether it does: a hit so far that its
    t rounds to inf in float32 is still a hit."""
    o = np.asarray(origins, dtype=np.float64)[:, None, :]
    d = np.asarray(dirs, dtype=np.float64)[:, None, :]
    lo = np.asarray(mins, dtype=np.float64)[None]
    hi = np.asarray(maxs, dtype=np.float64)[None]
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = (lo - o) / d, (hi - o) / d
    moving = d != 0
    inside = (o >= lo) & (o <= hi)
    near = np.where(moving, np.minimum(a, b), np.where(inside, -np.inf, np.inf))
    far = np.where(moving, np.maximum(a, b), np.where(inside, np.inf, -np.inf))
    first = np.maximum(near.max(axis=2, initial=-np.inf), 0.0)
    last = np.minimum(far.min(axis=2, initial=np.inf), np.asarray(max_t, dtype=np.float64)[:, None])
    return first, first <= last


def brute_ray_hits(origins, dirs, max_t, mins, maxs):
    """Per ray, the boxes it hits and their float32 t, by t then index."""
    first, hits = ray_entries64(origins, dirs, max_t, mins, maxs)
    rows = []
    for row, hit in zip(first, hits):
        hit = np.flatnonzero(hit)
        with np.errstate(over="ignore"):
            t = row[hit].astype(F32)
        order = np.lexsort((hit, t))
        rows.append((hit[order], t[order]))
    return rows


def brute_first_hits(origins, dirs, max_t, mins, maxs):
    """Each ray's first hit (-1 for none) and its t (inf for none)."""
    rows = brute_ray_hits(origins, dirs, max_t, mins, maxs)
    index = np.array([hit[0] if len(hit) else -1 for hit, _ in rows], dtype=np.int64)
    t = np.array([ts[0] if len(ts) else np.inf for _, ts in rows], dtype=F32)
    return index, t


def check_hits(got, expected):
    indptr, indices, t = got
    assert indptr.dtype == indices.dtype == np.int32 and t.dtype == np.float32
    assert len(t) == len(indices) == indptr[-1]
    assert len(indptr) == len(expected) + 1
    for k, (want_index, want_t) in enumerate(expected):
        row = slice(indptr[k], indptr[k + 1])
        np.testing.assert_array_equal(indices[row], want_index)
        np.testing.assert_array_equal(t[row], want_t)


def rays(rng, m, dims, lo, extent=40.0):
    """Rays from anywhere, some not moving, some axis-aligned, some
    starting on a box's corner, some of length 0."""
    origins = (rng.random((m, dims)) * extent - 5).astype(F32)
    dirs = rng.standard_normal((m, dims)).astype(F32)
    dirs[:50] = 0
    dirs[50:100, 0] = 0
    if len(lo):
        origins[100:150] = lo[rng.integers(0, len(lo), 50)]
    max_t = np.where(rng.random(m) < 0.5, np.inf, rng.random(m) * 20).astype(F32)
    max_t[150:160] = 0
    return origins, dirs, max_t


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("n", [0, 1, 3000])
def test_all_hits_match_brute_force(dims, n):
    rng = np.random.default_rng(60 + n + dims)
    lo, hi = random_boxes(rng, n, dims, extent=30.0, size=2.0)
    if n == 1:
        lo, hi = np.full((1, dims), 2, F32), np.full((1, dims), 4, F32)
    grid = bp.Grid(lo, hi)
    origins, dirs, max_t = rays(rng, 1500, dims, lo)
    expected = brute_ray_hits(origins, dirs, max_t, lo, hi)
    for a, b in zip(brute_first_hits(origins, dirs, max_t, lo, hi), first_hits(origins, dirs, max_t, lo, hi)):
        np.testing.assert_array_equal(a, b)
    if n > 1:
        assert sum(len(i) for i, _ in expected) > 1000
    got = grid.rays_hits(origins, dirs, max_t)
    check_hits(got, expected)
    # A row's first entry is the first hit.
    index, t = grid.cast_rays(origins, dirs, max_t)
    indptr, indices, ts = got
    some = np.diff(indptr) > 0
    np.testing.assert_array_equal(index[some], indices[indptr[:-1][some]])
    np.testing.assert_array_equal(t[some], ts[indptr[:-1][some]])
    assert np.all(index[~some] == -1)
    for threads in (2, 0):
        for a, b in zip(got, grid.rays_hits(origins, dirs, max_t, threads=threads)):
            np.testing.assert_array_equal(a, b)


def test_ties_duplicates_grazing_and_touching_boxes():
    lo, hi = hostile_boxes(3)
    grid = bp.Grid(lo, hi)
    origins = np.array(
        [[-5, 0.5, 0.5], [-5, 0, 0], [-5, 1, 1], [0.5, 0.5, 0.5], [-5, 2, 2], [1, 1, 1]], F32
    )
    dirs = np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0], [0, 0, 0], [1, 0, 0], [1, 1, 1]], F32)
    max_t = np.full(len(origins), np.inf, F32)
    expected = brute_ray_hits(origins, dirs, max_t, lo, hi)
    check_hits(grid.rays_hits(origins, dirs), expected)
    # Box 11 lies near -3e38: a ray from -5 reaches it at t beyond the
    # float32 range, a hit whose t rounds to inf.
    far = grid.rays_hits(np.array([[-5, -2.5e38, -2.5e38]], F32), np.array([[-0.1, 0, 0]], F32))
    assert far[1].tolist() == [11] and far[2].tolist() == [np.inf]
    # Three identical boxes entered at the same t come by index.
    indptr, indices, t = grid.rays_hits(origins[:1], dirs[:1])
    assert indices[:3].tolist() == [0, 1, 2] and t[:3].tolist() == [5.0] * 3
    # Grazing the top face (y = z = 1) of the unit boxes hits them.
    assert {0, 1, 2} <= set(csr_rows(*grid.rays_hits(origins[2:3], dirs[2:3])[:2])[0].tolist())


def test_max_t_ends_a_ray_on_a_face_inclusively():
    lo = np.array([[2, 0, 0], [5, 0, 0]], F32)
    grid = bp.Grid(lo, lo + 1)
    origin, direction = np.array([[0, 0.5, 0.5]], F32), np.array([[1, 0, 0]], F32)
    assert grid.rays_hits(origin, direction, 5.0)[1].tolist() == [0, 1]
    assert grid.rays_hits(origin, direction, np.nextafter(F32(5), F32(0)))[1].tolist() == [0]
    assert grid.rays_hits(origin, direction, 1.0)[1].tolist() == []


def test_empty_batch_and_errors():
    lo, hi = random_boxes(np.random.default_rng(3), 10, 3)
    grid = bp.Grid(lo, hi)
    indptr, indices, t = grid.rays_hits(np.zeros((0, 3)), np.zeros((0, 3)))
    assert indptr.tolist() == [0] and indices.size == 0 and t.size == 0
    origins = np.zeros((4, 3))
    dirs = np.ones((4, 3))
    bad = dirs.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="ray 2: dirs\\[2, 1\\] = nan is not a finite number"):
        grid.rays_hits(origins, bad)
    with pytest.raises(ValueError, match="ray 1: max_t\\[1\\] = -1.0 must be >= 0"):
        grid.rays_hits(origins, dirs, np.array([1.0, -1.0, 1.0, 1.0]))
    with pytest.raises(ValueError, match="columns"):
        grid.rays_hits(np.zeros((1, 2)), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="origins has shape \\(4, 3\\) but dirs has shape"):
        grid.rays_hits(origins, dirs[:3])
