//! The candidate pairs kept across updates: every pair of proxies (not
//! both static) whose enlarged boxes overlap, sorted, each with whether
//! the true boxes overlapped at the last update.

use super::Proxy;
use super::full_merge::{FullMerge, MergeOut};
use super::slots::Slots;
use broadphase_jobs::{IndexedJob, JobContext, JobError, JobSystem};
use broadphase_storage::Aabb;
use parking_lot::Mutex;

/// What the merge needs to know about a slot this update.
pub(crate) struct Marks<'a> {
    pub(crate) slots: &'a Slots,
}

impl Marks<'_> {
    /// The slot's candidates were recomputed this update: its old pairs
    /// that are not among the fresh ones are gone.
    #[inline]
    fn recomputed(&self, slot: u32) -> bool {
        self.slots.queued.get(slot as usize)
    }

    #[inline]
    fn removed(&self, slot: u32) -> bool {
        self.slots.removed.get(slot as usize)
    }

    /// The slot's true box changed this update.
    #[inline]
    fn changed(&self, slot: u32) -> bool {
        self.slots.changed.get(slot as usize)
    }

    #[inline]
    fn handles(&self, [a, b]: [u32; 2]) -> [Proxy; 2] {
        [self.slots.handle(a), self.slots.handle(b)]
    }

    #[inline]
    fn touching(&self, pair: [u32; 2]) -> bool {
        touching(&self.slots.boxes, pair)
    }
}

/// Whether the true boxes of `pair` overlap, without a branch: in a loop
/// over many pairs the two boxes' cache misses of one pair then overlap
/// with the next pairs' instead of waiting on a jump.
#[inline(always)]
pub(super) fn touching(boxes: &[Aabb], [a, b]: [u32; 2]) -> bool {
    let (a, b) = (&boxes[a as usize], &boxes[b as usize]);
    (a.min.cmple(b.max) & b.min.cmple(a.max)).all()
}

/// The published lists of an update, as handles.
#[derive(Debug, Default)]
pub(crate) struct Events {
    pub(crate) pairs: Vec<[Proxy; 2]>,
    pub(crate) started: Vec<[Proxy; 2]>,
    pub(crate) ended: Vec<[Proxy; 2]>,
}

impl Events {
    pub(crate) fn clear(&mut self) {
        self.pairs.clear();
        self.started.clear();
        self.ended.clear();
    }

    /// Records a candidate that stays one: the pair if its boxes overlap
    /// `now`, and an event if that changed since the last update (`was`).
    #[inline(always)]
    pub(super) fn record(&mut self, pair: [Proxy; 2], was: bool, now: bool) {
        match (was, now) {
            (false, true) => self.started.push(pair),
            (true, false) => self.ended.push(pair),
            _ => {}
        }
        if now {
            self.pairs.push(pair);
        }
    }
}

/// The kept candidates, double-buffered so a merge allocates nothing once
/// warm. Pairs are kept as handles, so publishing one needs no lookup.
#[derive(Debug, Default)]
pub(crate) struct Candidates {
    pairs: Vec<[Proxy; 2]>,
    touching: Vec<bool>,
    next_pairs: Vec<[Proxy; 2]>,
    next_touching: Vec<bool>,
    /// Each kept pair's overlap on this update's true boxes, one vector
    /// per chunk of [`RETEST_CHUNK`] pairs.
    now: Vec<Mutex<Vec<bool>>>,
    /// The buffers of a full update's merge.
    full: FullMerge,
}

/// Kept pairs re-tested per job.
const RETEST_CHUNK: usize = 16 * 1024;

/// Every kept pair's overlap on the true boxes, one job per chunk.
struct RetestPass<'a> {
    pairs: &'a [[Proxy; 2]],
    boxes: &'a [Aabb],
    now: &'a [Mutex<Vec<bool>>],
}

impl RetestPass<'_> {
    fn retest(&self, chunk: usize) {
        let start = chunk * RETEST_CHUNK;
        let pairs = &self.pairs[start..(start + RETEST_CHUNK).min(self.pairs.len())];
        let mut now = self.now[chunk].lock();
        now.clear();
        // No branch per pair: the two boxes' cache misses of one pair
        // overlap with the next pairs' instead of waiting on a jump.
        now.extend(pairs.iter().map(|&pair| touching(self.boxes, slots_of(pair))));
    }
}

impl<'scope> IndexedJob<'scope> for RetestPass<'_> {
    fn run(&'scope self, _ctx: &mut JobContext<'_, 'scope>, chunk: usize) {
        crate::profile::zone!("persistent: retest");
        self.retest(chunk);
    }
}

/// A pair's slots, the order of every list.
#[inline(always)]
pub(super) fn slots_of([a, b]: [Proxy; 2]) -> [u32; 2] {
    [a.index(), b.index()]
}

impl Candidates {
    pub(crate) fn len(&self) -> usize {
        self.pairs.len()
    }

    /// Forgets every candidate (after a failed update: the next one
    /// recomputes them all, and reports no event for what it cannot know).
    pub(crate) fn clear(&mut self) {
        self.pairs.clear();
        self.touching.clear();
    }

    /// Replaces every candidate with `fresh` (slots, each once, in any
    /// order; pairs with a free slot or of two static proxies are dropped)
    /// and writes the overlapping pairs and the events in pair order: the
    /// merge of a full update, where every old pair is either fresh again
    /// or gone. See `full_merge.rs`.
    pub(crate) fn replace(
        &mut self,
        jobs: &JobSystem,
        fresh: &mut [[u32; 2]],
        slots: &Slots,
        events: &mut Events,
    ) -> Result<(), JobError> {
        let Candidates { pairs, touching, next_pairs, next_touching, full, .. } = self;
        let out = MergeOut { next_pairs, next_touching, events };
        full.run(jobs, fresh, slots, (pairs, touching), out)?;
        std::mem::swap(pairs, next_pairs);
        std::mem::swap(touching, next_touching);
        Ok(())
    }

    /// The merge of an incremental update: replaces the candidates of
    /// every re-indexed slot with `fresh` (sorted, each once), drops
    /// removed slots' pairs, re-tests every pair with a changed box, and
    /// writes the overlapping pairs and the events in pair order.
    pub(crate) fn merge(
        &mut self,
        jobs: &JobSystem,
        fresh: &[[u32; 2]],
        marks: &Marks<'_>,
        events: &mut Events,
    ) -> Result<(), JobError> {
        debug_assert!(
            fresh.windows(2).all(|w| w[0] < w[1]),
            "fresh pairs must be sorted, once each"
        );
        events.clear();
        let Candidates { pairs, touching, next_pairs, next_touching, now, .. } = self;
        next_pairs.clear();
        next_touching.clear();
        // Every kept pair re-tested up front, on all threads, in loops with
        // no branch: several times faster than testing in the merge below
        // when the boxes are out of cache. Most pairs need it: any pair
        // with a moved proxy does.
        let chunks = pairs.len().div_ceil(RETEST_CHUNK);
        while now.len() < chunks {
            now.push(Mutex::default());
        }
        let pass = RetestPass { pairs, boxes: &marks.slots.boxes, now: &now[..chunks] };
        if chunks > 1 && jobs.threads() > 1 {
            jobs.reserve_queue(chunks);
            jobs.scope(|s| (0..chunks).for_each(|chunk| s.spawn_indexed(&pass, chunk)))?;
        } else {
            (0..chunks).for_each(|chunk| pass.retest(chunk));
        }
        let mut now_at = |i: usize| now[i / RETEST_CHUNK].get_mut()[i % RETEST_CHUNK];

        let (mut i, mut j) = (0, 0);
        loop {
            let old = pairs.get(i).map(|&pair| (slots_of(pair), pair, touching[i]));
            let new = fresh.get(j).copied();
            let (pair, was, retest) = match (old, new) {
                (None, None) => break,
                // The same pair of proxies, kept (a slot reused since is
                // another proxy: its old pair ends below).
                (Some((key, pair, was)), Some(new)) if key == new && pair == marks.handles(new) => {
                    i += 1;
                    j += 1;
                    (pair, was, Some(now_at(i - 1)))
                }
                (Some(([a, b], pair, was)), new) if new.is_none_or(|new| [a, b] <= new) => {
                    i += 1;
                    let gone = new == Some([a, b]) // its slot holds another proxy now
                        || marks.removed(a)
                        || marks.removed(b)
                        || marks.recomputed(a)
                        || marks.recomputed(b);
                    if gone {
                        if was {
                            events.ended.push(pair);
                        }
                        continue;
                    }
                    let retest = marks.changed(a) || marks.changed(b);
                    (pair, was, retest.then(|| now_at(i - 1)))
                }
                (_, Some(new)) => {
                    j += 1;
                    (marks.handles(new), false, Some(marks.touching(new)))
                }
                (Some(_), None) => unreachable!("an old pair with no fresh one is taken above"),
            };
            let touching_now = retest.unwrap_or(was);
            events.record(pair, was, touching_now);
            next_pairs.push(pair);
            next_touching.push(touching_now);
        }
        std::mem::swap(pairs, next_pairs);
        std::mem::swap(touching, next_touching);
        Ok(())
    }
}
