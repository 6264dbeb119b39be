//! The candidate pairs kept across updates: every pair of proxies (not
//! both static, not of one group) whose enlarged boxes overlap, sorted,
//! each with whether the true boxes overlapped at the last update. A
//! proxy whose kind or group changed is re-indexed: its old pairs go, and
//! the fresh ones, made without the excluded pairs, come back.

use super::Proxy;
use super::full_merge::{FullMerge, MergeOut};
use super::slots::{Bits, Slots};
use broadphase_jobs::{JobError, JobSystem};
use broadphase_storage::{Aabb, Pool};
use core::ops::Range;

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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Events {
    pub(crate) pairs: Pool<[Proxy; 2]>,
    pub(crate) started: Pool<[Proxy; 2]>,
    pub(crate) ended: Pool<[Proxy; 2]>,
}

/// A snapshot's copy, into the lists already there.
impl Clone for Events {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.pairs.clone_from(&source.pairs);
        self.started.clone_from(&source.started);
        self.ended.clone_from(&source.ended);
    }
}

impl Events {
    pub(crate) fn clear(&mut self) {
        self.pairs.reset();
        self.started.reset();
        self.ended.reset();
    }

    /// Records a candidate that stays one: the pair if its boxes overlap
    /// `now`, and an event if that changed since the last update (`was`).
    #[inline(always)]
    pub(super) fn record(&mut self, pair: [Proxy; 2], was: bool, now: bool) {
        record_change(&mut self.started, &mut self.ended, pair, was, now);
        if now {
            self.pairs.push(pair);
        }
    }
}

/// Lists `pair` as started or ended if its overlap changed since the last
/// update (`was`) to this one (`now`).
#[inline(always)]
pub(super) fn record_change(
    started: &mut Pool<[Proxy; 2]>,
    ended: &mut Pool<[Proxy; 2]>,
    pair: [Proxy; 2],
    was: bool,
    now: bool,
) {
    match (was, now) {
        (false, true) => _ = started.push(pair),
        (true, false) => _ = ended.push(pair),
        _ => {}
    }
}

/// The kept candidates, double-buffered so a merge allocates nothing once
/// warm. Pairs are kept as handles, so publishing one needs no lookup.
///
/// They are kept in two tiers. The awake tier holds every candidate with
/// a proxy that may move (neither static nor asleep at the last update):
/// each update merges and publishes it. The resting tier holds those of
/// two proxies at rest, which no update reads until one of the two is
/// disturbed (its box set, re-indexed, removed, or woken): then that
/// proxy's resting candidates move back to the awake tier first, and the
/// update treats them as any other. A world that is mostly asleep pays
/// for what is awake.
#[derive(Debug, Default)]
pub(crate) struct Candidates {
    pairs: Pool<[Proxy; 2]>,
    touching: Pool<bool>,
    next_pairs: Pool<[Proxy; 2]>,
    next_touching: Pool<bool>,
    /// The resting tier, sorted, with whether each touched.
    resting: Pool<[Proxy; 2]>,
    resting_touching: Pool<bool>,
    /// The resting candidates that touch: the resting part of the
    /// published pairs.
    resting_pairs: Pool<[Proxy; 2]>,
    /// Candidates moving between the tiers this update, sorted.
    moving: Pool<[Proxy; 2]>,
    moving_touching: Pool<bool>,
    /// The parts of an incremental merge.
    parts: Vec<MergePart>,
    /// The buffers of a full update's merge.
    full: FullMerge,
}

/// Below this many kept pairs one thread merges them all.
const PARALLEL_MIN: usize = 32 * 1024;

/// Most parts a merge is cut into.
pub(super) const MAX_PARTS: usize = 16;

/// What one part of a merge writes: its candidates and events, in pair
/// order; the parts' outputs, in key order, are the update's.
#[derive(Debug, Default)]
pub(super) struct PartOut {
    pub(super) next_pairs: Pool<[Proxy; 2]>,
    pub(super) next_touching: Pool<bool>,
    pub(super) events: Events,
}

impl PartOut {
    /// Empties the lists and makes room for `bound` pairs in each (at
    /// most the part's old pairs plus its fresh ones), with a quarter more
    /// when they grow: a part's share moves a little from one update to
    /// the next, and that alone should not reallocate.
    pub(super) fn clear(&mut self, bound: usize) {
        self.next_pairs.reset();
        self.next_touching.reset();
        self.events.clear();
        let room = bound + bound / 4;
        fit(&mut self.next_pairs, bound, room);
        fit(&mut self.next_touching, bound, room);
        fit(&mut self.events.pairs, bound, room);
        fit(&mut self.events.started, bound, room);
        fit(&mut self.events.ended, bound, room);
    }

    /// Records a candidate that stays one, and its event.
    #[inline(always)]
    pub(super) fn keep(&mut self, pair: [Proxy; 2], was: bool, now: bool) {
        self.events.record(pair, was, now);
        self.next_pairs.push(pair);
        self.next_touching.push(now);
    }
}

/// Makes room for `room` items in an empty `list` whose capacity is below
/// `bound`.
fn fit<T: Copy>(list: &mut Pool<T>, bound: usize, room: usize) {
    if list.capacity() < bound {
        list.reserve(room);
    }
}

/// Below this many items in all the outputs, one thread copies them: on
/// drift1m's 57,000 candidates a copy by jobs cost CPU time and saved no
/// wall time.
const CONCAT_PARALLEL_MIN: usize = 256 * 1024;

/// Writes the parts' outputs (at most [`MAX_PARTS`]), in order, into
/// `out`. A long list is copied by one job per part, each into its own
/// place: at a million candidates the copy moves about 20 MB, which one
/// thread alone took 2–3 ms to do. The lists are resized, not emptied,
/// so the part of them that is overwritten is not cleared first.
pub(super) fn concat<'a>(
    jobs: &JobSystem,
    parts: impl Iterator<Item = &'a PartOut>,
    out: MergeOut<'_>,
) -> Result<(), JobError> {
    let mut listed: [Option<&PartOut>; MAX_PARTS] = [None; MAX_PARTS];
    let mut count = 0;
    for part in parts {
        listed[count] = Some(part);
        count += 1;
    }
    let parts = || listed[..count].iter().flatten();
    let MergeOut { next_pairs, next_touching, events } = out;
    let lens = |part: &PartOut| {
        [
            part.next_pairs.len(),
            part.next_touching.len(),
            part.events.pairs.len(),
            part.events.started.len(),
            part.events.ended.len(),
        ]
    };
    let totals = parts()
        .map(|&part| lens(part))
        .fold([0; 5], |sum, len| core::array::from_fn(|i| sum[i] + len[i]));
    if totals.iter().sum::<usize>() < CONCAT_PARALLEL_MIN || jobs.threads() == 1 {
        next_pairs.reset();
        next_touching.reset();
        events.clear();
        for part in parts() {
            next_pairs.extend_from_slice(&part.next_pairs);
            next_touching.extend_from_slice(&part.next_touching);
            events.pairs.extend_from_slice(&part.events.pairs);
            events.started.extend_from_slice(&part.events.started);
            events.ended.extend_from_slice(&part.events.ended);
        }
        return Ok(());
    }
    let none = [Proxy::FILL; 2];
    next_pairs.resize(totals[0], none);
    next_touching.resize(totals[1], false);
    events.pairs.resize(totals[2], none);
    events.started.resize(totals[3], none);
    events.ended.resize(totals[4], none);
    let mut pieces: [Option<ConcatPiece<'_>>; MAX_PARTS] = [const { None }; MAX_PARTS];
    let mut rest = (
        &mut next_pairs[..],
        &mut next_touching[..],
        &mut events.pairs[..],
        &mut events.started[..],
        &mut events.ended[..],
    );
    for (piece, part) in pieces.iter_mut().zip(parts()) {
        let [pairs, touching, touching_pairs, started, ended] = lens(part);
        let (pairs, rest_pairs) = core::mem::take(&mut rest.0).split_at_mut(pairs);
        let (touching, rest_touching) = core::mem::take(&mut rest.1).split_at_mut(touching);
        let (touching_pairs, rest_touching_pairs) =
            core::mem::take(&mut rest.2).split_at_mut(touching_pairs);
        let (started, rest_started) = core::mem::take(&mut rest.3).split_at_mut(started);
        let (ended, rest_ended) = core::mem::take(&mut rest.4).split_at_mut(ended);
        rest = (rest_pairs, rest_touching, rest_touching_pairs, rest_started, rest_ended);
        *piece = Some(ConcatPiece { part, pairs, touching, touching_pairs, started, ended });
    }
    jobs.for_each_mut(&mut pieces[..count], |_, piece| {
        if let Some(piece) = piece {
            piece.copy();
        }
    })
}

/// One part's output and the place it goes.
struct ConcatPiece<'a> {
    part: &'a PartOut,
    pairs: &'a mut [[Proxy; 2]],
    touching: &'a mut [bool],
    touching_pairs: &'a mut [[Proxy; 2]],
    started: &'a mut [[Proxy; 2]],
    ended: &'a mut [[Proxy; 2]],
}

impl ConcatPiece<'_> {
    fn copy(&mut self) {
        let part = self.part;
        self.pairs.copy_from_slice(&part.next_pairs);
        self.touching.copy_from_slice(&part.next_touching);
        self.touching_pairs.copy_from_slice(&part.events.pairs);
        self.started.copy_from_slice(&part.events.started);
        self.ended.copy_from_slice(&part.events.ended);
    }
}

/// One part of an incremental merge: a range of the kept pairs and the
/// fresh pairs of the same keys.
#[derive(Debug, Default)]
struct MergePart {
    old: Range<usize>,
    fresh: Range<usize>,
    /// Each kept pair's overlap on this update's true boxes.
    now: Pool<bool>,
    out: PartOut,
}

impl MergePart {
    fn run(&mut self, old: (&[[Proxy; 2]], &[bool]), fresh: &[[u32; 2]], marks: &Marks<'_>) {
        let (pairs, touching_then) = (&old.0[self.old.clone()], &old.1[self.old.clone()]);
        let fresh = &fresh[self.fresh.clone()];
        let MergePart { now, out, .. } = self;
        out.clear(pairs.len() + fresh.len());
        // Every kept pair re-tested up front in a loop with no branch:
        // several times faster than testing in the merge below when the
        // boxes are out of cache (one pair's misses overlap the next
        // pairs'). Most pairs need it: any pair with a moved proxy does.
        now.reset();
        now.extend(pairs.iter().map(|&pair| touching(&marks.slots.boxes, slots_of(pair))));

        let (mut i, mut j) = (0, 0);
        loop {
            let old = pairs.get(i).map(|&pair| (slots_of(pair), pair, touching_then[i]));
            let new = fresh.get(j).copied();
            let (pair, was, retest) = match (old, new) {
                (None, None) => break,
                // The same pair of proxies, kept (a slot reused since is
                // another proxy: its old pair ends below).
                (Some((key, pair, was)), Some(new)) if key == new && pair == marks.handles(new) => {
                    i += 1;
                    j += 1;
                    (pair, was, Some(now[i - 1]))
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
                            out.events.ended.push(pair);
                        }
                        continue;
                    }
                    let retest = marks.changed(a) || marks.changed(b);
                    (pair, was, retest.then(|| now[i - 1]))
                }
                (_, Some(new)) => {
                    j += 1;
                    (marks.handles(new), false, Some(marks.touching(new)))
                }
                (Some(_), None) => unreachable!("an old pair with no fresh one is taken above"),
            };
            out.keep(pair, was, retest.unwrap_or(was));
        }
    }
}

/// A pair's slots, the order of every list.
#[inline(always)]
pub(super) fn slots_of([a, b]: [Proxy; 2]) -> [u32; 2] {
    [a.index(), b.index()]
}

/// The kept candidates of both tiers, as a snapshot copies them.
#[derive(Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct KeptCandidates {
    pub(crate) pairs: Pool<[Proxy; 2]>,
    pub(crate) touching: Pool<bool>,
    pub(crate) resting: Pool<[Proxy; 2]>,
    pub(crate) resting_touching: Pool<bool>,
}

/// `clone_from` copies into the lists already there.
impl Clone for KeptCandidates {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.pairs.clone_from(&source.pairs);
        self.touching.clone_from(&source.touching);
        self.resting.clone_from(&source.resting);
        self.resting_touching.clone_from(&source.resting_touching);
    }
}

/// Moves the candidates of `from`, with their touching flags, whose slots
/// pass `leaves` into `to` (emptied first), keeping the others in `from`;
/// both stay in order.
fn split_off(
    (pairs, touching): (&mut Pool<[Proxy; 2]>, &mut Pool<bool>),
    (to_pairs, to_touching): (&mut Pool<[Proxy; 2]>, &mut Pool<bool>),
    leaves: impl Fn([u32; 2]) -> bool,
) {
    to_pairs.reset();
    to_touching.reset();
    let mut kept = 0;
    for k in 0..pairs.len() {
        let (pair, now) = (pairs[k], touching[k]);
        if leaves(slots_of(pair)) {
            to_pairs.push(pair);
            to_touching.push(now);
        } else {
            pairs[kept] = pair;
            touching[kept] = now;
            kept += 1;
        }
    }
    pairs.truncate(kept);
    touching.truncate(kept);
}

/// Replaces `out` with the candidates of `pairs` whose flag says their
/// boxes touch.
fn touching_only(pairs: &[[Proxy; 2]], touching: &[bool], out: &mut Pool<[Proxy; 2]>) {
    out.reset();
    out.extend(pairs.iter().zip(touching).filter(|(_, now)| **now).map(|(pair, _)| *pair));
}

/// Merges two sorted candidate lists with their touching flags into
/// `out`, emptied first.
fn merge_sorted(
    (a, a_touching): (&[[Proxy; 2]], &[bool]),
    (b, b_touching): (&[[Proxy; 2]], &[bool]),
    (out, out_touching): (&mut Pool<[Proxy; 2]>, &mut Pool<bool>),
) {
    out.reset();
    out_touching.reset();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if slots_of(b[j]) < slots_of(a[i]) {
            out.push(b[j]);
            out_touching.push(b_touching[j]);
            j += 1;
        } else {
            out.push(a[i]);
            out_touching.push(a_touching[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out_touching.extend_from_slice(&a_touching[i..]);
    out.extend_from_slice(&b[j..]);
    out_touching.extend_from_slice(&b_touching[j..]);
}

impl Candidates {
    /// Kept candidates of both tiers.
    pub(crate) fn len(&self) -> usize {
        self.pairs.len() + self.resting.len()
    }

    /// Kept candidates of the resting tier.
    pub(crate) fn resting_len(&self) -> usize {
        self.resting.len()
    }

    /// The touching candidates of the resting tier, sorted.
    pub(crate) fn resting_pairs(&self) -> &[[Proxy; 2]] {
        &self.resting_pairs
    }

    /// Copies the kept candidates of both tiers, and whether each touched
    /// at the last update, into `out` (a snapshot).
    pub(crate) fn kept_into(&self, out: &mut KeptCandidates) {
        use crate::snapshot::copy;
        copy(&mut out.pairs, &self.pairs);
        copy(&mut out.touching, &self.touching);
        copy(&mut out.resting, &self.resting);
        copy(&mut out.resting_touching, &self.resting_touching);
    }

    /// Makes `kept` (from [`kept_into`](Self::kept_into)) the kept
    /// candidates again; the merge's scratch is left as it is.
    pub(crate) fn restore(&mut self, kept: &KeptCandidates) {
        self.pairs.clone_from(&kept.pairs);
        self.touching.clone_from(&kept.touching);
        self.resting.clone_from(&kept.resting);
        self.resting_touching.clone_from(&kept.resting_touching);
        self.publish_resting();
    }

    /// Forgets every candidate (after a failed update: the next one
    /// recomputes them all, and reports no event for what it cannot know).
    pub(crate) fn clear(&mut self) {
        self.pairs.reset();
        self.touching.reset();
        self.resting.reset();
        self.resting_touching.reset();
        self.resting_pairs.reset();
    }

    /// Moves every resting candidate with a slot marked in `disturbed`
    /// back to the awake tier, before an incremental merge; returns
    /// whether any moved.
    pub(crate) fn wake(&mut self, disturbed: &Bits) -> bool {
        crate::profile::zone!("persistent: wake resting");
        let Candidates { resting, resting_touching, moving, moving_touching, .. } = self;
        split_off((resting, resting_touching), (moving, moving_touching), |[a, b]| {
            disturbed.get(a as usize) | disturbed.get(b as usize)
        });
        let woke = !self.moving.is_empty();
        self.join_moving();
        woke
    }

    /// Moves the whole resting tier back to the awake tier (before a full
    /// update, which recomputes every candidate).
    pub(crate) fn wake_all(&mut self) {
        let Candidates { resting, resting_touching, moving, moving_touching, .. } = self;
        core::mem::swap(resting, moving);
        core::mem::swap(resting_touching, moving_touching);
        resting.reset();
        resting_touching.reset();
        self.join_moving();
    }

    /// Merges `moving` into the awake tier.
    fn join_moving(&mut self) {
        if self.moving.is_empty() {
            return;
        }
        let Candidates {
            pairs, touching, next_pairs, next_touching, moving, moving_touching, ..
        } = self;
        merge_sorted((pairs, touching), (moving, moving_touching), (next_pairs, next_touching));
        core::mem::swap(pairs, next_pairs);
        core::mem::swap(touching, next_touching);
        self.publish_resting();
    }

    /// After a merge: moves every awake candidate of two slots now at rest
    /// to the resting tier, and drops them from the awake pairs `events`
    /// published; returns whether any moved.
    pub(crate) fn settle(&mut self, slots: &Slots, events: &mut Events) -> bool {
        crate::profile::zone!("persistent: settle resting");
        let Candidates { pairs, touching, moving, moving_touching, .. } = self;
        let at_rest = &slots.at_rest;
        split_off((pairs, touching), (moving, moving_touching), |[a, b]| {
            at_rest.get(a as usize) & at_rest.get(b as usize)
        });
        if moving.is_empty() {
            return false;
        }
        touching_only(pairs, touching, &mut events.pairs);
        let Candidates {
            resting,
            resting_touching,
            next_pairs,
            next_touching,
            moving,
            moving_touching,
            ..
        } = self;
        merge_sorted(
            (resting, resting_touching),
            (moving, moving_touching),
            (next_pairs, next_touching),
        );
        core::mem::swap(resting, next_pairs);
        core::mem::swap(resting_touching, next_touching);
        self.publish_resting();
        true
    }

    /// Lists the touching resting candidates.
    fn publish_resting(&mut self) {
        let Candidates { resting, resting_touching, resting_pairs, .. } = self;
        touching_only(resting, resting_touching, resting_pairs);
    }

    /// Replaces every candidate with `fresh` (slots, each once, in any
    /// order; pairs with a free slot, of two static proxies or of one
    /// group are dropped)
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
    /// writes the overlapping pairs and the events in pair order. A long
    /// list is cut into one part per thread at quantiles of the kept pairs
    /// (the fresh ones are few); each part re-tests and merges its keys.
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
        let Candidates { pairs, touching, next_pairs, next_touching, parts, .. } = self;
        let count = if jobs.threads() > 1 && pairs.len() >= PARALLEL_MIN {
            jobs.threads().min(MAX_PARTS)
        } else {
            1
        };
        while parts.len() < count {
            parts.push(MergePart::default());
        }
        let old_start = |k: usize| pairs.len() * k / count;
        for (k, part) in parts[..count].iter_mut().enumerate() {
            part.old = old_start(k)..old_start(k + 1);
            // The part holds the keys from its first kept pair's (the
            // first part: from the start) to the next part's first.
            let key = |k: usize| (k < count).then(|| slots_of(pairs[old_start(k)]));
            let (lo, hi) = (if k == 0 { None } else { key(k) }, key(k + 1));
            let start = fresh.partition_point(|&f| lo.is_some_and(|lo| f < lo));
            let end = fresh.partition_point(|&f| hi.is_none_or(|hi| f < hi)).max(start);
            part.fresh = start..end;
        }
        let old = (&pairs[..], &touching[..]);
        jobs.for_each_mut(&mut parts[..count], |_, part| {
            crate::profile::zone!("persistent: retest and merge part");
            part.run(old, fresh, marks);
        })?;
        let out = MergeOut { next_pairs, next_touching, events };
        concat(jobs, parts[..count].iter().map(|part| &part.out), out)?;
        std::mem::swap(pairs, next_pairs);
        std::mem::swap(touching, next_touching);
        Ok(())
    }
}
