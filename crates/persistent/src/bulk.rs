//! Setting many proxies' boxes at once, on all threads: one pass that
//! checks every box and handle, then one that writes them, each thread
//! owning a range of slots so no two write the same memory.
//!
//! A frame that moves every proxy is bound by memory here: each proxy's
//! new box is read, its old box and enlarged box are read and the new box
//! written (about 100 bytes), so the second thread's bandwidth is what
//! pays.

use super::Proxy;
use super::slots::{Margin, SlotState, Slots, same};
use broadphase_storage::{Aabb, Pool};
use core::ops::Range;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Boxes read where they live, for
/// [`PersistentBroadPhase::set_aabbs_from`](crate::PersistentBroadPhase::set_aabbs_from):
/// a game's own columns (positions and shapes, say) turned into boxes as
/// the broad phase writes them, with no box array in between.
///
/// The broad phase asks for the boxes in runs
/// ([`write_runs`](Self::write_runs)), from several threads at once; the
/// source must give the same boxes for the same positions each time
/// within one call of `set_aabbs_from`.
///
/// # Examples
///
/// ```
/// use broadphase_persistent::AabbSource;
/// use broadphase_storage::Aabb;
/// use glam::Vec3;
///
/// /// Balls of one radius, boxed from their centres.
/// struct Balls<'a> {
///     centres: &'a [Vec3],
///     radius: f32,
/// }
///
/// impl AabbSource for Balls<'_> {
///     fn len(&self) -> usize {
///         self.centres.len()
///     }
///     fn write(&self, first: usize, out: &mut [Aabb]) {
///         let r = Vec3::splat(self.radius);
///         for (out, &c) in out.iter_mut().zip(&self.centres[first..]) {
///             *out = Aabb::new(c - r, c + r);
///         }
///     }
/// }
///
/// let balls = Balls { centres: &[Vec3::ZERO, Vec3::X], radius: 0.5 };
/// let mut boxes = [Aabb::default(); 1];
/// balls.write(1, &mut boxes);
/// assert_eq!(boxes, [Aabb::new(Vec3::new(0.5, -0.5, -0.5), Vec3::new(1.5, 0.5, 0.5))]);
/// ```
pub trait AabbSource: Sync {
    /// How many boxes the source holds.
    fn len(&self) -> usize;

    /// Whether the source holds no box.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes boxes `first..first + out.len()` (within `0..len()`) into
    /// `out`, in order.
    fn write(&self, first: usize, out: &mut [Aabb]);

    /// Hands boxes `range` (within `0..len()`) to `run` in order, as runs
    /// of consecutive boxes, each with the position of its first. By
    /// default [`write`](Self::write) into a buffer of
    /// [`SOURCE_RUN`] boxes at a time; a source whose boxes are slices
    /// already hands those over, and one whose lookup costs something per
    /// call does it once here.
    fn write_runs(&self, range: Range<usize>, mut run: impl FnMut(usize, &[Aabb])) {
        let mut buffer = [Aabb::default(); SOURCE_RUN];
        for start in range.clone().step_by(SOURCE_RUN) {
            let boxes = &mut buffer[..(range.end - start).min(SOURCE_RUN)];
            self.write(start, boxes);
            run(start, boxes);
        }
    }
}

/// Boxes an [`AabbSource`] makes at a time by default. Short runs keep
/// the reads that make the boxes and those of the boxes they replace in
/// flight together: the 1M-particle game loop's proxies stage (boxes made
/// from positions and colliders, 2 threads) took 9.5–9.8 ms in runs of
/// 256, 8.4–8.5 in runs of 64, 7.4–8.0 of 32, 6.9–7.1 of 16 and 7.5–7.6
/// of 8.
pub const SOURCE_RUN: usize = 16;

/// A slice is its own source, handed over whole.
impl AabbSource for [Aabb] {
    fn len(&self) -> usize {
        <[Aabb]>::len(self)
    }

    fn write(&self, first: usize, out: &mut [Aabb]) {
        out.copy_from_slice(&self[first..first + out.len()]);
    }

    fn write_runs(&self, range: Range<usize>, mut run: impl FnMut(usize, &[Aabb])) {
        run(range.start, &self[range]);
    }
}

/// Below this many boxes a bulk set runs on the calling thread alone.
pub(crate) const PARALLEL_MIN: usize = 16 * 1024;

/// Most slot ranges a bulk set splits into (one per thread).
pub(crate) const MAX_RANGES: usize = 16;

/// Input items checked per job at least.
pub(crate) const CHECK_CHUNK: usize = 16 * 1024;

/// The first bad box and the first stale handle of a bulk call, if any.
#[derive(Debug)]
pub(crate) struct CheckPass<'a> {
    pub(crate) proxies: &'a [Proxy],
    /// The call's boxes; `None` when they are checked as they are written
    /// (a source's boxes are made then).
    pub(crate) boxes: Option<&'a [Aabb]>,
    pub(crate) slots: &'a Slots,
    pub(crate) first_bad_box: AtomicUsize,
    pub(crate) first_stale: AtomicUsize,
    /// Whether some handle's slot is not above the one before it.
    pub(crate) unsorted: AtomicBool,
}

impl<'a> CheckPass<'a> {
    pub(crate) fn new(proxies: &'a [Proxy], boxes: Option<&'a [Aabb]>, slots: &'a Slots) -> Self {
        Self {
            proxies,
            boxes,
            slots,
            first_bad_box: AtomicUsize::new(usize::MAX),
            first_stale: AtomicUsize::new(usize::MAX),
            unsorted: AtomicBool::new(false),
        }
    }

    /// Checks items `range` of the call and records their first bad box
    /// and first stale handle.
    pub(crate) fn check(&self, range: core::ops::Range<usize>) {
        crate::profile::zone!("persistent: check boxes");
        let (start, end) = (range.start, range.end);
        let proxies = &self.proxies[start..end];
        // From the last item of the range before, so that the ranges'
        // checks together cover every neighbouring pair.
        let sorted = self.proxies[start.saturating_sub(1)..end]
            .windows(2)
            .fold(true, |sorted, w| sorted & (w[0].index() < w[1].index()));
        if !sorted {
            self.unsorted.store(true, Ordering::Relaxed);
        }
        // No branch per item (the common case: all good): the boxes folded
        // apart from the handles, a block at a time, which compiles to a
        // shorter loop than one fold over both (1M items in cache: 10 ms
        // on one thread against 4; after a gather of a million boxes,
        // which come from memory, the loads dominate: 7.1 against 6.6);
        // then a second pass only to find the culprit.
        let live = |proxies: &[Proxy]| proxies.iter().fold(true, |ok, &p| ok & self.live(p));
        let boxes = self.boxes.map(|boxes| &boxes[start..end]);
        let all_good = match boxes {
            Some(boxes) => boxes.chunks(CHECK_BLOCK).zip(proxies.chunks(CHECK_BLOCK)).fold(
                true,
                |good, (boxes, proxies)| {
                    let boxes_ok = boxes.iter().fold(true, |ok, aabb| ok & box_ok(aabb));
                    good & boxes_ok & live(proxies)
                },
            ),
            None => proxies.chunks(CHECK_BLOCK).fold(true, |good, proxies| good & live(proxies)),
        };
        if all_good {
            return;
        }
        if let Some(k) = boxes.and_then(|boxes| boxes.iter().position(|b| !b.is_valid())) {
            self.first_bad_box.fetch_min(start + k, Ordering::Relaxed);
        }
        if let Some(k) = proxies.iter().position(|&p| self.slots.live_slot(p).is_none()) {
            self.first_stale.fetch_min(start + k, Ordering::Relaxed);
        }
    }

    /// [`Slots::live_slot`]`.is_some()` without a branch.
    #[inline(always)]
    fn live(&self, proxy: Proxy) -> bool {
        let slot = proxy.index() as usize;
        let in_range = slot < self.slots.len();
        let at = if in_range { slot } else { 0 };
        in_range
            & (self.slots.generation[at] == proxy.generation())
            & self.slots.state[at].is_live()
    }
}

/// Items a check folds over at a time.
const CHECK_BLOCK: usize = 256;

/// [`Aabb::is_valid`] without a branch: ordered (false if a corner has a
/// NaN), and the largest magnitude below infinity, which compiles to
/// fewer instructions than six finiteness tests.
#[inline(always)]
fn box_ok(aabb: &Aabb) -> bool {
    let largest = aabb.min.abs().max(aabb.max.abs()).max_element();
    aabb.min.cmple(aabb.max).all() & (largest < f32::INFINITY)
}

/// One thread's share of the slots: what it writes.
#[derive(Debug)]
pub(crate) struct SlotRange<'a> {
    /// The range's first slot (a multiple of 64).
    pub(crate) first: usize,
    pub(crate) boxes: &'a mut [Aabb],
    /// The range's enlarged boxes; empty when every indexed box is the
    /// true box (a margin of 0).
    pub(crate) fat: &'a mut [Aabb],
    /// The range's words of the `exact`, `changed` and `queued` bits.
    pub(crate) exact: &'a mut [u64],
    pub(crate) changed: &'a mut [u64],
    pub(crate) queued: &'a mut [u64],
    /// Slots this range queued for re-indexing, the first `queue_len` of
    /// the buffer: it keeps the length of the longest part it was sized
    /// for, so a warm call writes into it without filling it first.
    pub(crate) queue: &'a mut Pool<u32>,
    pub(crate) queue_len: usize,
    /// The words of `changed` and `queued` this range wrote (empty when
    /// no box changed).
    pub(crate) words: core::ops::Range<usize>,
    /// The call position of the first bad box this range met and left
    /// unwritten (`usize::MAX` if none).
    pub(crate) first_bad: usize,
}

impl SlotRange<'_> {
    /// Writes every box of the call whose slot is in this range, in call
    /// order (so the last box given for a slot wins); the handles were
    /// checked. With `CHECK_BOXES` (a source's boxes, not checked before)
    /// a bad box is left unwritten and noted in `first_bad`; without, the
    /// boxes were checked already (testing them twice cost drift1m's sets
    /// about 1 ms a frame). When the call's handles are sorted by slot,
    /// only the part of the call that falls in this range is read.
    pub(crate) fn apply<S: AabbSource + ?Sized, const CHECK_BOXES: bool>(
        &mut self,
        proxies: &[Proxy],
        source: &S,
        sorted: bool,
        state: &[SlotState],
        margin: Margin,
    ) {
        let part = if sorted {
            let first = self.first as u32;
            let end = first.saturating_add(self.boxes.len() as u32);
            let start = proxies.partition_point(|p| p.index() < first);
            start..start + proxies[start..].partition_point(|p| p.index() < end)
        } else {
            0..proxies.len()
        };
        // Locals, not fields: through `&mut self` every push would store
        // and reload the queue's length, one dependency per proxy.
        let first = self.first;
        let (slot_boxes, fat, exact, changed, queued) = (
            &mut *self.boxes,
            &mut *self.fat,
            &mut *self.exact,
            &mut *self.changed,
            &mut *self.queued,
        );
        // The queue sized for every item of the part and written by index:
        // a push that may grow the queue is a call, around which everything
        // the loop keeps would go through memory. Only growth is filled, so
        // a warm call writes into the buffer as it is.
        let mut queue = core::mem::take(&mut *self.queue);
        if queue.len() < part.len() {
            queue.resize(part.len(), 0);
        }
        let mut queued_now = 0;
        let (mut first_word, mut end_word) = (usize::MAX, 0);
        let mut first_bad = usize::MAX;
        let len = slot_boxes.len();
        // One run of the call at a time, a loop of its own over two
        // slices with no call inside, so that what it keeps stays in
        // registers.
        source.write_runs(part, |start, boxes| {
            let proxies = &proxies[start..start + boxes.len()];
            for (k, (&proxy, aabb)) in proxies.iter().zip(boxes).enumerate() {
                let slot = proxy.index() as usize;
                let local = slot.wrapping_sub(first);
                if local >= len || same(&slot_boxes[local], aabb) {
                    continue;
                }
                if CHECK_BOXES && !box_ok(aabb) {
                    first_bad = first_bad.min(start + k);
                    continue;
                }
                let old = core::mem::replace(&mut slot_boxes[local], *aabb);
                let (word, bit) = (local / 64, 1u64 << (local % 64));
                changed[word] |= bit;
                first_word = first_word.min(word);
                end_word = end_word.max(word + 1);
                // With no enlarged boxes kept, the indexed box is the box:
                // any change re-indexes (and `exact` stays set).
                let reindex = fat.is_empty() || {
                    let is_static = state[slot] == SlotState::Static;
                    let reindex = margin.refit(is_static, &mut fat[local], &old, aabb);
                    exact[word] =
                        (exact[word] & !bit) | (u64::from(same(&fat[local], aabb)) << (local % 64));
                    reindex
                };
                if reindex && queued[word] & bit == 0 {
                    queued[word] |= bit;
                    queue[queued_now] = slot as u32;
                    queued_now += 1;
                }
            }
        });
        self.queue_len = queued_now;
        self.first_bad = first_bad;
        *self.queue = queue;
        if first_word < end_word {
            let base = first / 64;
            self.words = base + first_word..base + end_word;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;
    use proptest::prelude::*;

    /// Any float: finite ones, both infinities, NaNs of any payload.
    fn any_f32() -> impl Strategy<Value = f32> {
        prop_oneof![
            any::<u32>().prop_map(f32::from_bits),
            prop::sample::select(vec![
                0.0,
                -0.0,
                1.0,
                -1.0,
                f32::MAX,
                f32::MIN,
                f32::INFINITY,
                f32::NEG_INFINITY,
                f32::NAN,
                -f32::NAN,
            ]),
        ]
    }

    proptest! {
        /// The branch-free test is `Aabb::is_valid`, on every kind of float
        /// in every corner.
        #[test]
        fn box_ok_is_is_valid(corners in prop::collection::vec(any_f32(), 6)) {
            let aabb = Aabb::new(
                Vec3::new(corners[0], corners[1], corners[2]),
                Vec3::new(corners[3], corners[4], corners[5]),
            );
            prop_assert_eq!(box_ok(&aabb), aabb.is_valid());
        }
    }

    #[test]
    fn box_ok_rejects_each_bad_corner() {
        let good = Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0));
        assert!(box_ok(&good));
        for axis in 0..3 {
            for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                let (mut min, mut max) = (good.min, good.max);
                min[axis] = bad;
                assert!(!box_ok(&Aabb::new(min, good.max)), "min {axis} {bad}");
                max[axis] = bad;
                assert!(!box_ok(&Aabb::new(good.min, max)), "max {axis} {bad}");
            }
            let mut max = good.max;
            max[axis] = -2.0;
            assert!(!box_ok(&Aabb::new(good.min, max)), "inverted {axis}");
        }
    }
}
