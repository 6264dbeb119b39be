//! The candidate pairs kept across updates: every pair of proxies (not
//! both static) whose enlarged boxes overlap, sorted, each with whether
//! the true boxes overlapped at the last update.

use super::Proxy;
use super::slots::{SlotState, Slots};

/// What the merge needs to know about a slot this update.
pub(crate) struct Marks<'a> {
    pub(crate) slots: &'a Slots,
    pub(crate) epoch: u32,
    /// Every candidate pair was recomputed (the full path).
    pub(crate) all_recomputed: bool,
}

impl Marks<'_> {
    /// The slot's candidates were recomputed this update: its old pairs
    /// that are not among the fresh ones are gone.
    #[inline]
    fn recomputed(&self, slot: u32) -> bool {
        self.all_recomputed || self.slots.queued[slot as usize] == self.epoch
    }

    #[inline]
    fn removed(&self, slot: u32) -> bool {
        self.slots.state[slot as usize] == SlotState::Removed
    }

    /// The slot's true box changed this update.
    #[inline]
    fn changed(&self, slot: u32) -> bool {
        self.slots.changed[slot as usize] == self.epoch
    }

    #[inline]
    fn handles(&self, [a, b]: [u32; 2]) -> [Proxy; 2] {
        [self.slots.handle(a), self.slots.handle(b)]
    }

    #[inline]
    fn touching(&self, [a, b]: [u32; 2]) -> bool {
        self.slots.boxes[a as usize].overlaps(&self.slots.boxes[b as usize])
    }
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
/// warm.
#[derive(Debug, Default)]
pub(crate) struct Candidates {
    pairs: Vec<[u32; 2]>,
    touching: Vec<bool>,
    next_pairs: Vec<[u32; 2]>,
    next_touching: Vec<bool>,
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
        let (mut i, mut j) = (0, 0);
        loop {
            let (pair, was, retest) = match (self.pairs.get(i).copied(), fresh.get(j).copied()) {
                (None, None) => break,
                (Some(old), Some(new)) if old == new => {
                    i += 1;
                    j += 1;
                    (old, self.touching[i - 1], true)
                }
                (Some(old), new) if new.is_none_or(|new| old < new) => {
                    i += 1;
                    let was = self.touching[i - 1];
                    let [a, b] = old;
                    let gone = marks.removed(a)
                        || marks.removed(b)
                        || marks.recomputed(a)
                        || marks.recomputed(b);
                    if gone {
                        if was {
                            events.ended.push(marks.handles(old));
                        }
                        continue;
                    }
                    (old, was, marks.changed(a) || marks.changed(b))
                }
                (_, Some(new)) => {
                    j += 1;
                    (new, false, true)
                }
                (Some(_), None) => unreachable!("an old pair with no fresh one is taken above"),
            };
            let now = if retest { marks.touching(pair) } else { was };
            match (was, now) {
                (false, true) => events.started.push(marks.handles(pair)),
                (true, false) => events.ended.push(marks.handles(pair)),
                _ => {}
            }
            if now {
                events.pairs.push(marks.handles(pair));
            }
            self.next_pairs.push(pair);
            self.next_touching.push(now);
        }
        std::mem::swap(&mut self.pairs, &mut self.next_pairs);
        std::mem::swap(&mut self.touching, &mut self.next_touching);
    }
}
