//! The merge of a full update, on all threads.
//!
//! A full update recomputes every candidate: the tree's pairs, in the
//! tree's order, replace the kept ones. They are sorted in two runs at
//! once (each half of the list by its own radix sort), then the key space
//! is cut into one part per thread; each part resolves its fresh pairs
//! (slot state, handles, overlap of the true boxes: random reads) and
//! counts the pairs it keeps, which places its shares of the update's
//! lists; then each part merges its share of both runs with the old
//! candidates of the same keys, writing its kept pairs straight into its
//! shares and its events into lists of its own, joined in key order.

use super::Proxy;
use super::candidates::{Events, MAX_PARTS, record_change, slots_of, touching};
use super::pair_sort::PairSort;
use super::slots::{SlotState, Slots};
use broadphase_jobs::{JobError, JobSystem};
use broadphase_storage::{Pool, prefetch};
use core::ops::Range;

/// Below this many fresh pairs one thread sorts and merges them all: the
/// jobs would cost more than they save.
const PARALLEL_MIN: usize = 32 * 1024;

/// How many pairs ahead the resolve asks for its random reads.
const RESOLVE_AHEAD: usize = 16;

/// A fresh pair is kept (two live proxies, not both static, not of one
/// group).
const KEEP: u8 = 1;
/// A fresh pair's true boxes overlap.
const TOUCHING: u8 = 2;

/// Fresh pairs as the merge reads them: as handles, with their flags.
#[derive(Debug, Default)]
struct Resolved {
    pairs: Pool<[Proxy; 2]>,
    flags: Pool<u8>,
}

impl Resolved {
    /// Resolves `fresh` (slots). No branch per pair and no per-item
    /// capacity check: the random reads of one pair overlap with the next
    /// pairs' instead of waiting on a jump. A full update pairs free
    /// slots' leftover boxes, static pairs and pairs of one group too
    /// (cheaper than leaving them out of the tree); their flags drop them.
    /// Without `grouped` (no slot has a group) the groups are not read:
    /// they were a third random read per pair, and half the time of this
    /// pass at a million proxies.
    fn resolve(&mut self, fresh: &[[u32; 2]], slots: &Slots, grouped: bool) {
        self.pairs.reset();
        self.flags.reset();
        // The later slot of each pair is a random read: asked for a few
        // pairs ahead (the earlier slots ascend), in each pass the column
        // it reads (resolve 3.2 -> 2.6 ms at a million proxies on two
        // threads).
        let ahead = |i: usize| fresh.get(i + RESOLVE_AHEAD).map(|&[_, later]| later as usize);
        if grouped {
            self.flags.extend(fresh.iter().enumerate().map(|(i, &[a, b])| {
                if let Some(later) = ahead(i) {
                    prefetch(slots.state.as_ptr().wrapping_add(later));
                    prefetch(slots.group.as_ptr().wrapping_add(later));
                }
                flags(slots, [a, b]) & !(u8::from(slots.same_group(a as usize, b as usize)) * KEEP)
            }));
        } else {
            self.flags.extend(fresh.iter().enumerate().map(|(i, &pair)| {
                if let Some(later) = ahead(i) {
                    prefetch(slots.state.as_ptr().wrapping_add(later));
                }
                flags(slots, pair)
            }));
        }
        self.pairs.extend(fresh.iter().enumerate().map(|(i, &[a, b])| {
            if let Some(later) = ahead(i) {
                prefetch(slots.generation.as_ptr().wrapping_add(later));
            }
            [slots.handle(a), slots.handle(b)]
        }));
    }
}

/// A fresh pair's flags, its groups aside: kept if both slots are live
/// and not both static; touching if both are exact or their true boxes
/// overlap.
#[inline(always)]
fn flags(slots: &Slots, [a, b]: [u32; 2]) -> u8 {
    let (sa, sb) = (slots.state[a as usize], slots.state[b as usize]);
    let keep =
        sa.is_live() & sb.is_live() & !((sa == SlotState::Static) & (sb == SlotState::Static));
    // Two exact proxies touch: their enlarged boxes, which the tree found
    // overlapping, are their boxes, which are then not read (the common
    // case with a margin of 0).
    let exact = slots.exact.get(a as usize) & slots.exact.get(b as usize);
    let touching = exact || touching(&slots.boxes, [a, b]);
    (u8::from(keep) * KEEP) | (u8::from(touching) * TOUCHING)
}

/// One part of the merge: its share of each sorted run and of the old
/// candidates, and the events it finds.
#[derive(Debug, Default)]
struct Part {
    runs: [Range<usize>; 2],
    old: Range<usize>,
    resolved: [Resolved; 2],
    /// Fresh pairs the part keeps, and of those the ones that touch: the
    /// lengths of its shares of the update's candidates and pairs.
    kept: usize,
    kept_touching: usize,
    started: Pool<[Proxy; 2]>,
    ended: Pool<[Proxy; 2]>,
}

/// A part's shares of the update's lists, written in place.
struct Shares<'a> {
    /// The kept candidates and whether each touches.
    pairs: &'a mut [[Proxy; 2]],
    touching: &'a mut [bool],
    /// The kept candidates that touch: the update's pairs.
    touching_pairs: &'a mut [[Proxy; 2]],
}

impl Part {
    /// Resolves this part's fresh pairs and counts what it will write.
    fn resolve(&mut self, fresh: &[[u32; 2]], slots: &Slots, grouped: bool) {
        for (resolved, run) in self.resolved.iter_mut().zip(self.runs.iter()) {
            resolved.resolve(&fresh[run.clone()], slots, grouped);
        }
        let flags = self.resolved.iter().flat_map(|resolved| resolved.flags.iter());
        (self.kept, self.kept_touching) = flags.fold((0, 0), |(kept, touching), &flags| {
            (
                kept + usize::from(flags & KEEP != 0),
                touching + usize::from(flags == KEEP | TOUCHING),
            )
        });
    }

    /// Merges the resolved fresh pairs with this part's old candidates,
    /// writing the kept ones straight into `shares` (exactly as long as
    /// [`resolve`](Self::resolve) counted) and the events into the part.
    fn merge(&mut self, old: (&[[Proxy; 2]], &[bool]), shares: Shares<'_>) {
        let Part { old: old_range, resolved, started, ended, .. } = self;
        started.reset();
        ended.reset();
        let (pairs, touching) = (&old.0[old_range.clone()], &old.1[old_range.clone()]);
        let [first, second] = &*resolved;
        let (mut i, mut j, mut old) = (0, 0, 0);
        let (mut kept, mut shown) = (0, 0);
        // A run's head, and past its end a key above every pair's.
        let head = |run: &Resolved, at: usize| match run.pairs.get(at) {
            Some(&pair) => (key(pair), pair, run.flags[at]),
            None => (u64::MAX, [Proxy::FILL; 2], 0),
        };
        for _ in 0..first.pairs.len() + second.pairs.len() {
            // The smaller head of the two runs (fresh pairs are unique).
            // The runs are halves of the tree's list, so which one holds
            // it is a coin toss: selected without a branch, where a
            // branch mispredicted on about every other pair.
            let (p, q) = (head(first, i), head(second, j));
            let take_first = p.0 < q.0;
            let (_, pair, flags) = core::hint::select_unpredictable(take_first, p, q);
            i += usize::from(take_first);
            j += usize::from(!take_first);
            if flags & KEEP == 0 {
                continue;
            }
            let now = flags & TOUCHING != 0;
            // Old pairs before this one are gone (an old pair of the same
            // slots under other handles is gone too, at the next fresh
            // pair or the end).
            while old < pairs.len() && slots_of(pairs[old]) < slots_of(pair) {
                if touching[old] {
                    ended.push(pairs[old]);
                }
                old += 1;
            }
            let was = old < pairs.len() && pairs[old] == pair && {
                old += 1;
                touching[old - 1]
            };
            shares.pairs[kept] = pair;
            shares.touching[kept] = now;
            kept += 1;
            if now {
                shares.touching_pairs[shown] = pair;
                shown += 1;
            }
            record_change(started, ended, pair, was, now);
        }
        debug_assert_eq!((kept, shown), (shares.pairs.len(), shares.touching_pairs.len()));
        for (&pair, &was) in pairs[old..].iter().zip(&touching[old..]) {
            if was {
                ended.push(pair);
            }
        }
    }
}

/// A pair's slots as one key, in the order of [`slots_of`].
#[inline(always)]
fn key(pair: [Proxy; 2]) -> u64 {
    let [a, b] = slots_of(pair);
    (u64::from(a) << 32) | u64::from(b)
}

/// Buffers of the full merge, kept across updates.
#[derive(Debug, Default)]
pub(crate) struct FullMerge {
    sorters: [PairSort; 2],
    parts: Vec<Part>,
}

/// Where the merge writes.
pub(crate) struct MergeOut<'a> {
    pub(crate) next_pairs: &'a mut Pool<[Proxy; 2]>,
    pub(crate) next_touching: &'a mut Pool<bool>,
    pub(crate) events: &'a mut Events,
}

impl FullMerge {
    /// Sorts `fresh` (slots, `a < b`, each once, in any order; left as
    /// two sorted runs), and writes into `out` the candidates that replace
    /// `old` (sorted pairs and their overlap at the last update), with the
    /// update's pairs and events in pair order.
    pub(crate) fn run(
        &mut self,
        jobs: &JobSystem,
        fresh: &mut [[u32; 2]],
        slots: &Slots,
        old: (&[[Proxy; 2]], &[bool]),
        out: MergeOut<'_>,
    ) -> Result<(), JobError> {
        let parallel = jobs.threads() > 1 && fresh.len() >= PARALLEL_MIN;
        let half = if parallel { fresh.len() / 2 } else { fresh.len() };
        {
            // Each run sorted by its own sorter, in its own job (one run,
            // on this thread, when not parallel).
            let (left, right) = fresh.split_at_mut(half);
            let [first, second] = &mut self.sorters;
            let mut runs = [(first, left), (second, right)];
            let runs = if parallel { &mut runs[..] } else { &mut runs[..1] };
            jobs.for_each_mut(runs, |_, (sorter, run)| {
                crate::profile::zone!("persistent: sort fresh pairs");
                sorter.sort(run);
            })?;
        }
        let fresh = &*fresh;
        let runs = [&fresh[..half], &fresh[half..]];

        // Cut the key space at quantiles of both runs together, so that
        // each part holds an even share of the fresh pairs. (Quantiles of
        // the first run alone were even only while the tree's list is in
        // no particular order of slots: where slots follow space, as ids
        // spawned in order do, each half of the list holds its own range
        // of keys, and the last part got three quarters of the pairs.)
        let count = if parallel { jobs.threads().min(MAX_PARTS) } else { 1 };
        while self.parts.len() < count {
            self.parts.push(Part::default());
        }
        let cut = |k: usize| part_cut(runs, count, k);
        for (k, part) in self.parts[..count].iter_mut().enumerate() {
            let (lo, hi) = (if k == 0 { None } else { cut(k) }, cut(k + 1));
            // The part holds the keys in `lo..hi` (no bound: from the
            // start, to the end).
            let below_lo = |key: [u32; 2]| lo.is_some_and(|lo| key < lo);
            let below_hi = |key: [u32; 2]| hi.is_none_or(|hi| key < hi);
            let run_range = |run: &[[u32; 2]], offset: usize| {
                let start = run.partition_point(|&key| below_lo(key));
                let end = run.partition_point(|&key| below_hi(key)).max(start);
                offset + start..offset + end
            };
            part.runs = [run_range(runs[0], 0), run_range(runs[1], half)];
            let start = old.0.partition_point(|&pair| below_lo(slots_of(pair)));
            let end = old.0.partition_point(|&pair| below_hi(slots_of(pair))).max(start);
            part.old = start..end;
        }

        // One streaming read of the groups saves a random one per pair
        // when no slot has a group; none is needed where no group was
        // ever given. The blocks' OR vectorizes, where a test per slot
        // that stops at the first group does not.
        let grouped = slots.grouped
            && slots.group.chunks(1024).any(|block| block.iter().fold(0, |any, &g| any | g) != 0);
        let parts = &mut self.parts[..count];
        jobs.for_each_mut(parts, |_, part| {
            crate::profile::zone!("persistent: resolve part");
            part.resolve(fresh, slots, grouped);
        })?;

        // Each part's shares of the lists, in key order: the parts write
        // their kept pairs in place, where copying them from the parts'
        // own lists took 3-4 ms at a million proxies. The lists are
        // resized, not emptied, so what is overwritten is not cleared first.
        let MergeOut { next_pairs, next_touching, events } = out;
        let kept = parts.iter().map(|part| part.kept).sum();
        let kept_touching = parts.iter().map(|part| part.kept_touching).sum();
        let none = [Proxy::FILL; 2];
        next_pairs.resize(kept, none);
        next_touching.resize(kept, false);
        events.pairs.resize(kept_touching, none);
        let mut pieces: [Option<(&mut Part, Shares<'_>)>; MAX_PARTS] = [const { None }; MAX_PARTS];
        let mut rest = (&mut next_pairs[..], &mut next_touching[..], &mut events.pairs[..]);
        for (piece, part) in pieces.iter_mut().zip(parts.iter_mut()) {
            let (pairs, rest_pairs) = core::mem::take(&mut rest.0).split_at_mut(part.kept);
            let (touching, rest_touching) = core::mem::take(&mut rest.1).split_at_mut(part.kept);
            let (touching_pairs, rest_touching_pairs) =
                core::mem::take(&mut rest.2).split_at_mut(part.kept_touching);
            rest = (rest_pairs, rest_touching, rest_touching_pairs);
            *piece = Some((part, Shares { pairs, touching, touching_pairs }));
        }
        jobs.for_each_mut(&mut pieces[..count], |_, piece| {
            crate::profile::zone!("persistent: merge part");
            if let Some((part, shares)) = piece.take() {
                part.merge(old, shares);
            }
        })?;
        events.started.reset();
        events.ended.reset();
        for part in &self.parts[..count] {
            events.started.extend_from_slice(&part.started);
            events.ended.extend_from_slice(&part.ended);
        }
        Ok(())
    }
}

/// Where part `k` of `count` starts in the sorted union of both `runs`
/// (sorted, no key in common): the key at place `total * k / count`, so
/// each part holds an even share of the keys; `None` past the last part
/// (and when there are no keys).
fn part_cut<T: Copy + Ord>(runs: [&[T]; 2], count: usize, k: usize) -> Option<T> {
    let total = runs[0].len() + runs[1].len();
    (k < count && total > 0).then(|| nth_of_two(runs[0], runs[1], total * k / count))
}

/// The item at place `n` (from 0, below `a.len() + b.len()`) of the
/// sorted union of `a` and `b`, both sorted and with no item in common:
/// a binary search for how many of the first `n` come from `a`.
fn nth_of_two<T: Copy + Ord>(a: &[T], b: &[T], n: usize) -> T {
    debug_assert!(n < a.len() + b.len());
    // `from_a` of the first `n` come from `a`: too few while
    // `a[from_a] < b[n - from_a - 1]`, which holds up to the answer and
    // not after it.
    let (mut lo, mut hi) = (n.saturating_sub(b.len()), n.min(a.len()));
    while lo < hi {
        let from_a = lo + (hi - lo) / 2;
        let from_b = n - from_a;
        if from_b > 0 && a[from_a] < b[from_b - 1] {
            lo = from_a + 1;
        } else {
            hi = from_a;
        }
    }
    match (a.get(lo), b.get(n - lo)) {
        (Some(&x), Some(&y)) => x.min(y),
        (Some(&x), None) => x,
        (None, Some(&y)) => y,
        (None, None) => unreachable!("n is below the two lengths"),
    }
}

#[cfg(test)]
mod tests {
    use super::{nth_of_two, part_cut};
    use proptest::prelude::*;

    /// Runs that each hold their own range of keys (the tree's list over
    /// slots that follow space) or interleave: every part's share of both
    /// runs together is within one of even.
    #[test]
    fn parts_hold_even_shares_of_both_runs() {
        let low: Vec<u32> = (0..6_000).collect();
        let high: Vec<u32> = (6_000..8_000).collect();
        let evens: Vec<u32> = (0..5_000).map(|x| 2 * x).collect();
        let odds: Vec<u32> = (0..3_000).map(|x| 2 * x + 1).collect();
        for runs in [[&low[..], &high[..]], [&high[..], &low[..]], [&evens[..], &odds[..]]] {
            let total = runs[0].len() + runs[1].len();
            for count in 1..=8 {
                let start = |k: usize| {
                    part_cut(runs, count, k).map_or(total, |cut| {
                        runs[0].partition_point(|&x| x < cut)
                            + runs[1].partition_point(|&x| x < cut)
                    })
                };
                for k in 0..count {
                    let from = if k == 0 { 0 } else { start(k) };
                    let share = start(k + 1) - from;
                    assert!(share.abs_diff(total / count) <= 1, "{count} parts, part {k}: {share}");
                }
            }
        }
        assert_eq!(part_cut::<u32>([&[], &[]], 2, 1), None);
    }

    proptest! {
        /// Every place of the union of two disjoint sorted lists, against
        /// the merged list itself: lists of any lengths (one empty too),
        /// interleaved or one all below the other.
        #[test]
        fn nth_of_two_is_the_merged_list(
            items in prop::collection::btree_set(0u32..10_000, 1..300),
            side in prop::collection::vec(any::<bool>(), 300),
            split_at in any::<prop::sample::Index>(),
        ) {
            let merged: Vec<u32> = items.iter().copied().collect();
            // Dealt at random, and, apart, cut in two at one place.
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for (i, &x) in merged.iter().enumerate() {
                if side[i] { a.push(x) } else { b.push(x) }
            }
            for (n, &want) in merged.iter().enumerate() {
                prop_assert_eq!(nth_of_two(&a, &b, n), want);
                prop_assert_eq!(nth_of_two(&b, &a, n), want);
            }
            let at = split_at.index(merged.len() + 1);
            let (low, high) = merged.split_at(at);
            for (n, &want) in merged.iter().enumerate() {
                prop_assert_eq!(nth_of_two(low, high, n), want);
                prop_assert_eq!(nth_of_two(high, low, n), want);
            }
        }
    }
}
