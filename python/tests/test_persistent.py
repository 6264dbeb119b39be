"""PersistentBroadPhase over many frames against a brute force of the
current boxes."""

import numpy as np
import pytest

import broadphase as bp
from conftest import brute_overlap

F32 = np.float32


class Model:
    """What the broad phase should hold: boxes and kinds by id."""

    def __init__(self):
        self.boxes = {}
        self.static = {}

    def pairs(self):
        ids = np.array(sorted(self.boxes), dtype=np.int64)
        if len(ids) == 0:
            return set()
        lo = np.array([self.boxes[i][0] for i in ids], F32)
        hi = np.array([self.boxes[i][1] for i in ids], F32)
        found = ids[brute_overlap(lo, hi).astype(np.int64)]
        return {
            (a, b) for a, b in found.tolist() if not (self.static[a] and self.static[b])
        }


def as_set(pairs):
    assert pairs.dtype == np.uint32 and pairs.ndim == 2 and pairs.shape[1] == 2
    rows = [tuple(p) for p in pairs.tolist()]
    assert rows == sorted(rows) and all(a < b for a, b in rows)
    return set(rows)


@pytest.mark.parametrize("margin", [0.0, 0.5])
@pytest.mark.parametrize("threads", [None, 2])
def test_frames_of_drift_churn_and_kind_flips(margin, threads):
    rng = np.random.default_rng(int(margin * 10) + (threads or 1))
    world = bp.PersistentBroadPhase(margin=margin, threads=threads)
    model = Model()

    def put(ids, lo, hi, static=None):
        lo, hi = lo.astype(F32), hi.astype(F32)
        if static is None:
            world.set_boxes(ids, lo, hi)
        else:
            world.set_boxes(ids, lo, hi, static=static)
        for k, i in enumerate(ids):
            model.boxes[i] = (lo[k], hi[k])
            model.static[i] = bool(static)

    n = 1500
    centers = rng.random((n, 3)) * 25
    sizes = 0.3 + rng.random((n, 3)) * 1.5
    ids = np.arange(n)
    static = rng.random(n) < 0.2
    for kind in (True, False):
        pick = ids[static == kind]
        put(pick, centers[pick] - sizes[pick] / 2, centers[pick] + sizes[pick] / 2, kind)
    before = set()
    for frame in range(25):
        # Drift most moving boxes a little, teleport a few.
        moving = np.array(sorted(i for i in model.boxes if not model.static[i]))
        step = rng.standard_normal((len(moving), 3)) * 0.1
        step[rng.random(len(moving)) < 0.02] *= 100
        centers[moving] = np.clip(centers[moving] + step, -5, 30)
        put(moving, centers[moving] - sizes[moving] / 2, centers[moving] + sizes[moving] / 2)
        # Remove some, add back some removed earlier, flip some kinds.
        present = np.array(sorted(model.boxes))
        gone = rng.choice(present, 20, replace=False)
        world.remove(gone)
        for i in gone:
            del model.boxes[i]
        absent = np.setdiff1d(ids, present)
        if len(absent):
            back = rng.choice(absent, min(15, len(absent)), replace=False)
            put(back, centers[back] - sizes[back] / 2, centers[back] + sizes[back] / 2)
        flip = rng.choice(np.array(sorted(model.boxes)), 10, replace=False)
        kinds = rng.random(10) < 0.5
        for kind in (True, False):
            pick = flip[kinds == kind]
            if len(pick):
                lo = np.array([model.boxes[i][0] for i in pick])
                hi = np.array([model.boxes[i][1] for i in pick])
                put(pick, lo, hi, kind)
        world.update()
        now = model.pairs()
        assert as_set(world.pairs) == now, frame
        assert as_set(world.started) == now - before, frame
        assert as_set(world.ended) == before - now, frame
        assert len(world) == len(model.boxes)
        before = now


def test_remove_then_set_again_before_an_update():
    world = bp.PersistentBroadPhase()
    box = np.array([[0, 0, 0], [0.5, 0.5, 0.5]], F32)
    world.set_boxes(np.array([0, 1]), box, box + 1)
    world.update()
    assert as_set(world.started) == {(0, 1)}
    # Id 1 leaves and comes back in the same step: its old pair ends and
    # the new one starts.
    world.remove(np.array([1]))
    assert 1 not in world
    world.set_boxes(np.array([1]), box[1:], box[1:] + 1)
    world.update()
    assert as_set(world.ended) == {(0, 1)} and as_set(world.started) == {(0, 1)}
    assert as_set(world.pairs) == {(0, 1)}
    world.update()  # nothing changed
    assert world.started.shape == (0, 2) and world.ended.shape == (0, 2)


def test_two_static_boxes_never_pair():
    world = bp.PersistentBroadPhase()
    lo = np.zeros((3, 2), F32)
    world.set_boxes(np.array([4, 7]), lo[:2], lo[:2] + 1, static=True)
    world.set_boxes(np.array([9]), lo[:1], lo[:1] + 1)
    world.update()
    assert as_set(world.pairs) == {(4, 9), (7, 9)}
    world.set_boxes(np.array([9]), lo[:1], lo[:1] + 1, static=True)
    world.update()
    assert as_set(world.pairs) == set() and as_set(world.ended) == {(4, 9), (7, 9)}


def test_errors_change_nothing():
    world = bp.PersistentBroadPhase()
    lo = np.zeros((3, 3), F32)
    world.set_boxes(np.arange(3), lo, lo + 1)
    world.update()
    bad = lo + 1
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match="box 2"):
        world.set_boxes(np.array([0, 1, 5]), lo + 0.5, bad)
    with pytest.raises(ValueError, match="id 2: ids\\[2\\] = 1 was given earlier"):
        world.set_boxes(np.array([0, 1, 1]), lo, lo + 1)
    with pytest.raises(ValueError, match="id 1: .* is not in the broad phase"):
        world.remove(np.array([0, 8]))
    with pytest.raises(ValueError, match="id 0"):
        world.set_boxes(np.array([-1, 0, 1]), lo, lo + 1)
    with pytest.raises(ValueError, match="id 0"):
        world.set_boxes(np.array([2**28, 0, 1]), lo, lo + 1)
    with pytest.raises(ValueError, match="columns"):
        world.set_boxes(np.arange(3), lo[:, :2], lo[:, :2] + 1)
    with pytest.raises(ValueError, match="3 ids but 2 boxes"):
        world.set_boxes(np.arange(3), lo[:2], lo[:2] + 1)
    with pytest.raises(ValueError, match="dtype"):
        world.set_boxes(np.arange(3, dtype=np.float64), lo, lo + 1)
    with pytest.raises(ValueError, match="margin"):
        bp.PersistentBroadPhase(margin=-1)
    world.update()
    assert as_set(world.pairs) == {(0, 1), (0, 2), (1, 2)} and len(world) == 3
    assert world.started.shape == (0, 2)


def test_id_error_names_the_real_cap():
    world = bp.PersistentBroadPhase()
    lo = np.zeros((2, 3))
    for bad in (2**28, 2**32 - 1, -1):
        with pytest.raises(ValueError, match=r"ids\[1\] = %d is not an id in 0\.\.=268435455$" % bad):
            world.set_boxes(np.array([0, bad]), lo, lo + 1)
    # The cap itself is an id.
    world.set_boxes(np.array([2**28 - 1]), lo[:1], lo[:1] + 1)
    world.update()
    assert len(world) == 1


@pytest.mark.parametrize("threads", [None, 2])
def test_sleeping_boxes_change_no_pair_and_leave_the_awake_ones(threads):
    # Boxes fall asleep and wake at random, and sleeping boxes still move
    # now and then: the pairs and events stay brute force's, and
    # awake_pairs are those with a box neither asleep nor static.
    rng = np.random.default_rng(7 + (threads or 1))
    world = bp.PersistentBroadPhase(margin=0.0, threads=threads)
    n = 800
    centers = rng.random((n, 3)) * 15
    sizes = 0.5 + rng.random((n, 3))
    ids = np.arange(n)
    static = rng.random(n) < 0.1
    for kind in (True, False):
        pick = ids[static == kind]
        lo, hi = centers[pick] - sizes[pick] / 2, centers[pick] + sizes[pick] / 2
        world.set_boxes(pick, lo, hi, static=kind)
    asleep = np.zeros(n, dtype=bool)
    before = set()
    for frame in range(30):
        # Most of the boxes end up asleep; a few wake each frame.
        for value, count in ((True, 80), (False, 20)):
            pick = rng.choice(ids, count, replace=False)
            world.set_asleep(pick, asleep=value)
            asleep[pick] = value
        moving = ids[~static & (~asleep | (rng.random(n) < 0.05))]
        centers[moving] += rng.standard_normal((len(moving), 3)).astype(centers.dtype) * 0.2
        lo, hi = centers[moving] - sizes[moving] / 2, centers[moving] + sizes[moving] / 2
        world.set_boxes(moving, lo.astype(F32), hi.astype(F32))
        world.update()
        lo_all = (centers - sizes / 2).astype(F32)
        hi_all = (centers + sizes / 2).astype(F32)
        now = {
            (a, b)
            for a, b in brute_overlap(lo_all, hi_all).tolist()
            if not (static[a] and static[b])
        }
        assert as_set(world.pairs) == now, frame
        assert as_set(world.started) == now - before, frame
        assert as_set(world.ended) == before - now, frame
        rest = asleep | static
        awake = {(a, b) for a, b in now if not (rest[a] and rest[b])}
        assert as_set(world.awake_pairs) == awake, frame
        before = now


def test_set_asleep_names_an_absent_id():
    world = bp.PersistentBroadPhase()
    world.set_boxes(np.array([0, 1]), np.zeros((2, 3), F32), np.ones((2, 3), F32))
    with pytest.raises(ValueError, match=r"ids\[1\] = 5 is not in the broad phase"):
        world.set_asleep(np.array([0, 5]))
    world.update()
    assert as_set(world.awake_pairs) == {(0, 1)}
    world.set_asleep(np.array([0, 1]))
    world.update()
    assert as_set(world.pairs) == {(0, 1)}
    assert len(world.awake_pairs) == 0
