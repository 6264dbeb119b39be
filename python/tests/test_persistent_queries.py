"""PersistentBroadPhase's queries against a brute force of the boxes as
they stand, calls since the last update included."""

import numpy as np
import pytest

import broadphase as bp
from conftest import brute_overlap, brute_query, csr_rows, hostile_boxes
from test_grid import brute_spheres
from test_ray_hits import brute_first_hits, brute_ray_hits

F32 = np.float32


def check_rows(got, expected, ids):
    """CSR rows of ids against brute-force rows of positions in `ids`."""
    indptr, indices = got
    assert indptr.dtype == indices.dtype == np.int32
    rows = csr_rows(indptr, indices)
    assert len(rows) == len(expected)
    for row, want in zip(rows, expected):
        np.testing.assert_array_equal(row, ids[want])


class World:
    """A broad phase and the boxes it should hold, by id."""

    def __init__(self, dims, **kw):
        self.broad_phase = bp.PersistentBroadPhase(**kw)
        self.dims = dims
        self.boxes = {}
        self.static = {}

    def set(self, ids, lo, hi, static=False):
        self.broad_phase.set_boxes(ids, lo, hi, static=static)
        for k, i in enumerate(ids.tolist()):
            self.boxes[i] = (lo[k], hi[k])
            self.static[i] = static

    def remove(self, ids):
        self.broad_phase.remove(ids)
        for i in ids.tolist():
            del self.boxes[i]

    def update(self):
        """Updates, and checks that queries in between left the pairs
        exact."""
        self.broad_phase.update()
        ids, lo, hi = self.arrays()
        found = ids[brute_overlap(lo, hi).astype(np.int64)].tolist() if len(ids) else []
        want = sorted((a, b) for a, b in found if not (self.static[a] and self.static[b]))
        assert [tuple(p) for p in self.broad_phase.pairs.tolist()] == want

    def arrays(self):
        """The ids present, ascending, and their boxes."""
        ids = np.array(sorted(self.boxes), dtype=np.int64)
        lo = np.array([self.boxes[i][0] for i in ids], F32).reshape(-1, self.dims)
        hi = np.array([self.boxes[i][1] for i in ids], F32).reshape(-1, self.dims)
        return ids, lo, hi

    def check(self, rng):
        """Every query kind against the brute force."""
        ids, lo, hi = self.arrays()
        world, dims = self.broad_phase, self.dims
        qlo = (rng.random((600, dims)) * 32 - 1).astype(F32)
        qhi = qlo + (rng.random((600, dims)) * 3).astype(F32)
        points = (rng.random((600, dims)) * 32 - 1).astype(F32)
        if len(ids):
            points[:40] = lo[rng.integers(0, len(ids), 40)]  # corners count
            points[40:80] = hi[rng.integers(0, len(ids), 40)]
        check_rows(world.query(qlo, qhi), brute_query(lo, hi, qlo, qhi), ids)
        check_rows(world.query_points(points), brute_query(lo, hi, points, points), ids)
        radii = (rng.random(600) * 2).astype(F32)
        radii[:20] = 0
        check_rows(world.query_spheres(points, radii), brute_spheres(lo, hi, points, radii), ids)
        dirs = rng.standard_normal((600, dims)).astype(F32)
        dirs[:30] = 0
        max_t = np.where(rng.random(600) < 0.5, np.inf, rng.random(600) * 15).astype(F32)
        index, t = world.cast_rays(points, dirs, max_t)
        assert index.dtype == np.int64 and t.dtype == np.float32
        want_index, want_t = brute_first_hits(points, dirs, max_t, lo, hi)
        want_id = np.full(len(want_index), -1)
        want_id[want_index >= 0] = ids[want_index[want_index >= 0]]
        np.testing.assert_array_equal(index, want_id)
        np.testing.assert_array_equal(t, want_t)
        indptr, indices, ts = world.rays_hits(points, dirs, max_t)
        expected = brute_ray_hits(points, dirs, max_t, lo, hi)
        assert len(indptr) == len(expected) + 1
        for k, (want, want_t) in enumerate(expected):
            row = slice(indptr[k], indptr[k + 1])
            np.testing.assert_array_equal(indices[row], ids[want])
            np.testing.assert_array_equal(ts[row], want_t)


def random_boxes_of(rng, n, dims):
    lo = (rng.random((n, dims)) * 30).astype(F32)
    return lo, lo + (rng.random((n, dims)) * 2.5).astype(F32)


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("threads", [None, 2])
def test_queries_see_every_box_as_it_stands(dims, threads):
    rng = np.random.default_rng(dims * 10 + (threads or 1))
    world = World(dims, threads=threads)
    # Before anything is set, and before any update.
    world.check(rng)
    n = 1200
    ids = np.arange(n)
    lo, hi = random_boxes_of(rng, n, dims)
    static = rng.random(n) < 0.3
    world.set(ids[static], lo[static], hi[static], static=True)
    world.set(ids[~static], lo[~static], hi[~static])
    world.check(rng)  # set, not yet updated
    world.update()
    world.check(rng)
    for _ in range(3):
        # Some move a little, some far; some leave, some come back.
        moved = rng.choice(sorted(world.boxes), 200, replace=False)
        lo, hi = random_boxes_of(rng, 200, dims)
        lo[:150] = np.array([world.boxes[i][0] for i in moved[:150]]) + F32(0.1)
        hi[:150] = lo[:150] + F32(1)
        world.set(moved, lo, hi)
        world.check(rng)  # moved since the update
        gone = rng.choice(sorted(world.boxes), 100, replace=False)
        world.remove(gone)
        world.check(rng)  # removed since the update
        world.set(gone[:50], *random_boxes_of(rng, 50, dims))
        world.update()
        world.check(rng)


def test_hostile_boxes_ids_with_gaps_and_ties():
    lo, hi = hostile_boxes(3)
    world = World(3)
    ids = np.arange(len(lo)) * 3 + 1  # sparse ids
    world.set(ids, lo, hi)
    world.broad_phase.update()
    world.check(np.random.default_rng(7))
    queries_lo = np.concatenate([lo, np.array([[1, 1, 1], [-3.4e38] * 3], F32)])
    queries_hi = np.concatenate([hi, np.array([[1, 1, 1], [3.4e38] * 3], F32)])
    _, all_ids = world.broad_phase.query(queries_lo[-1:], queries_hi[-1:])
    assert all_ids.tolist() == ids.tolist()
    # Three identical boxes: a tie in t goes to the lowest id, and all
    # three are hit, by id.
    origin, direction = np.array([[-5, 0.5, 0.5]], F32), np.array([[1, 0, 0]], F32)
    index, t = world.broad_phase.cast_rays(origin, direction)
    assert index.tolist() == [1] and t.tolist() == [5.0]
    _, hit, ts = world.broad_phase.rays_hits(origin, direction)
    assert hit[:3].tolist() == [1, 4, 7] and ts[:3].tolist() == [5.0] * 3


def test_empty_batches_columns_and_errors():
    world = bp.PersistentBroadPhase()
    assert [len(a) for a in world.query(np.zeros((2, 3)), np.ones((2, 3)))] == [3, 0]
    index, t = world.cast_rays(np.zeros((1, 2)), np.ones((1, 2)))
    assert index.tolist() == [-1] and t.tolist() == [np.inf]
    world.set_boxes(np.array([0, 1]), np.zeros((2, 3)), np.ones((2, 3)))
    indptr, indices = world.query_points(np.zeros((0, 3)))
    assert indptr.tolist() == [0] and indices.size == 0
    with pytest.raises(ValueError, match="points has 2 columns but this broad phase holds boxes of 3"):
        world.query_points(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="query box 1: mins\\[1, 0\\] = 2.0 > maxs\\[1, 0\\] = 1.0"):
        world.query(np.array([[0.0, 0, 0], [2, 0, 0]]), np.ones((2, 3)))
    with pytest.raises(ValueError, match="sphere 0: radii = -1.0 must be >= 0"):
        world.query_spheres(np.zeros((2, 3)), -1.0)
    with pytest.raises(ValueError, match="ray 1: origins\\[1, 2\\] = inf is not a finite number"):
        world.rays_hits(np.array([[0, 0, 0], [0, 0, np.inf]]), np.ones((2, 3)))
    with pytest.raises(ValueError, match="point 0: points\\[0, 0\\] = nan"):
        world.query_points(np.array([[np.nan, 0, 0]]))
    # Float64 queries are rounded as on a Grid: outward, and no hit lost.
    indptr, indices = world.query(np.array([[1 + 1e-12, 0, 0]]), np.array([[2.0, 2, 2]]))
    assert indices.tolist() == [0, 1]
