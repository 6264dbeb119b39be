//! The candidate pairs kept across updates: every pair of proxies (not
//! both static) whose enlarged boxes overlap, sorted, each with whether
//! the true boxes overlapped at the last update.

use super::Proxy;
use super::slots::Slots;
use broadphase_storage::Aabb;

/// What the merge needs to know about a slot this update.
pub(crate) struct Marks<'a> {
    pub(crate) slots: &'a Slots,
    /// Every candidate pair was recomputed (the full path).
    pub(crate) all_recomputed: bool,
}

impl Marks<'_> {
    /// The slot's candidates were recomputed this update: its old pairs
    /// that are not among the fresh ones are gone.
    #[inline]
    fn recomputed(&self, slot: u32) -> bool {
        self.all_recomputed || self.slots.queued.get(slot as usize)
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
fn touching(boxes: &[Aabb], [a, b]: [u32; 2]) -> bool {
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
}

/// The kept candidates, double-buffered so a merge allocates nothing once
/// warm. Pairs are kept as handles, so publishing one needs no lookup.
#[derive(Debug, Default)]
pub(crate) struct Candidates {
    pairs: Vec<[Proxy; 2]>,
    touching: Vec<bool>,
    next_pairs: Vec<[Proxy; 2]>,
    next_touching: Vec<bool>,
    /// Each kept pair's overlap on this update's true boxes.
    now: Vec<bool>,
}

/// A pair's slots, the order of every list.
#[inline(always)]
fn slots_of([a, b]: [Proxy; 2]) -> [u32; 2] {
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

    /// Replaces the candidates of every recomputed slot with `fresh`
    /// (sorted, each once), drops removed slots' pairs, re-tests every
    /// pair with a changed box, and writes the overlapping pairs and the
    /// events in pair order.
    pub(crate) fn merge(&mut self, fresh: &[[u32; 2]], marks: &Marks<'_>, events: &mut Events) {
        debug_assert!(
            fresh.windows(2).all(|w| w[0] < w[1]),
            "fresh pairs must be sorted, once each"
        );
        events.clear();
        self.next_pairs.clear();
        self.next_touching.clear();
        // Every kept pair re-tested up front, in one loop with no branch,
        // which is several times faster than testing in the merge below
        // when the boxes are out of cache. Most pairs need it: any pair
        // with a moved proxy does.
        let boxes = &marks.slots.boxes;
        self.now.clear();
        self.now.extend(self.pairs.iter().map(|&pair| touching(boxes, slots_of(pair))));
        let (mut i, mut j) = (0, 0);
        loop {
            let old = self.pairs.get(i).copied();
            let (pair, was, retest) = match (old.map(slots_of), fresh.get(j).copied()) {
                (None, None) => break,
                (Some(key), Some(new)) if key == new => {
                    i += 1;
                    j += 1;
                    (self.pairs[i - 1], self.touching[i - 1], Some(self.now[i - 1]))
                }
                (Some([a, b]), new) if new.is_none_or(|new| [a, b] < new) => {
                    i += 1;
                    let (pair, was) = (self.pairs[i - 1], self.touching[i - 1]);
                    let gone = marks.removed(a)
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
                    (pair, was, retest.then_some(self.now[i - 1]))
                }
                (_, Some(new)) => {
                    j += 1;
                    (marks.handles(new), false, Some(marks.touching(new)))
                }
                (Some(_), None) => unreachable!("an old pair with no fresh one is taken above"),
            };
            let now = retest.unwrap_or(was);
            match (was, now) {
                (false, true) => events.started.push(pair),
                (true, false) => events.ended.push(pair),
                _ => {}
            }
            if now {
                events.pairs.push(pair);
            }
            self.next_pairs.push(pair);
            self.next_touching.push(now);
        }
        std::mem::swap(&mut self.pairs, &mut self.next_pairs);
        std::mem::swap(&mut self.touching, &mut self.next_touching);
    }
}
