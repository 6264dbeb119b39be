//! Proxy slots: stable handles over structure-of-arrays storage.
//!
//! A slot is reused only after the update that ends the pairs of the proxy
//! it held, and each reuse bumps its generation, so a handle to a removed
//! proxy never names its successor.

use broadphase_storage::{Aabb, AlignedColumn, Pool};
use glam::Vec3;

/// A stable handle to one proxy of a
/// [`PersistentBroadPhase`](super::PersistentBroadPhase): its slot and the
/// slot's generation when it was inserted.
///
/// Handles order by slot first, which is the order of every pair list.
///
/// # Examples
///
/// ```
/// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
/// use broadphase_storage::{Aabb, AlignedColumn, Pool};
/// let mut world = PersistentBroadPhase::default();
/// let a = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
/// let b = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
/// assert!(a < b);
/// assert_eq!((a.index(), a.generation()), (0, 0));
/// # Ok::<(), broadphase_persistent::ProxyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Proxy {
    index: u32,
    generation: u32,
}

impl Proxy {
    /// Fills a list's new places before they are overwritten; names no
    /// proxy a caller ever sees.
    pub(crate) const FILL: Proxy = Proxy { index: u32::MAX, generation: u32::MAX };

    /// The proxy's slot: dense from 0, reused after removal.
    pub fn index(self) -> u32 {
        self.index
    }

    /// How many proxies held this slot before this one.
    pub fn generation(self) -> u32 {
        self.generation
    }
}

/// Whether a proxy moves.
///
/// # Examples
///
/// ```
/// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
/// use broadphase_storage::{Aabb, AlignedColumn, Pool};
/// let mut world = PersistentBroadPhase::default();
/// let wall = world.insert(Aabb::default(), ProxyKind::Static)?;
/// assert_eq!(world.kind(wall)?, ProxyKind::Static);
/// # Ok::<(), broadphase_persistent::ProxyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum ProxyKind {
    /// Moves: indexed by an enlarged box, so small moves cost nothing.
    Dynamic,
    /// Does not move (a wall, the ground): indexed by its own box, never
    /// re-examined unless changed, and never paired with another static
    /// proxy.
    Static,
}

/// What a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) enum SlotState {
    Free,
    Dynamic,
    Static,
    /// Removed since the last update: its pairs end at the next one, which
    /// frees the slot.
    Removed,
}

impl SlotState {
    #[inline]
    pub(crate) fn is_live(self) -> bool {
        matches!(self, SlotState::Dynamic | SlotState::Static)
    }

    fn of(kind: ProxyKind) -> SlotState {
        match kind {
            ProxyKind::Dynamic => SlotState::Dynamic,
            ProxyKind::Static => SlotState::Static,
        }
    }
}

/// Every slot's data, one array per field.
#[derive(Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Slots {
    /// The true boxes.
    pub(crate) boxes: Pool<Aabb>,
    /// The enlarged boxes the index holds (a static proxy's is its box);
    /// empty when `fat_is_box`.
    pub(crate) fat: Pool<Aabb>,
    /// With no margin, every indexed box is the true box: `fat` is not
    /// kept, which saves a third of the bytes a bulk set moves.
    pub(crate) fat_is_box: bool,
    /// The enlarged box is the true box (a static proxy, a margin of 0, or
    /// a jump): two such proxies whose enlarged boxes overlap touch, with
    /// no need to read their boxes.
    pub(crate) exact: Bits,
    /// A `Pool`, not an `AlignedColumn`: read one slot at a time (a
    /// handle per pair), never scanned, and grown a slot at a time, which
    /// a plain allocation does in place where an over-aligned one copies.
    pub(crate) generation: Pool<u32>,
    pub(crate) state: Pool<SlotState>,
    /// The proxy's group: two proxies of the same non-zero group never
    /// pair (0 is no group). A `Pool` for the reason `generation` is one;
    /// read per candidate pair, beside `state`.
    pub(crate) group: Pool<u32>,
    /// Whether some slot may have a group: set when one is given one,
    /// never cleared (a full update reads the groups only when it is set,
    /// and a scan of a million slots' groups took 1.2 ms). A restored
    /// snapshot sets it.
    #[cfg_attr(feature = "serde", serde(skip, default = "may_be_grouped"))]
    pub(crate) grouped: bool,
    /// The true box changed since the last update.
    pub(crate) changed: Bits,
    /// Queued for re-indexing at the next update.
    pub(crate) queued: Bits,
    /// Removed since the last update.
    pub(crate) removed: Bits,
    /// Marked asleep by the caller (a hint: see `set_asleep`).
    pub(crate) asleep: Bits,
    /// Live and static or asleep: a proxy that is not expected to move.
    pub(crate) at_rest: Bits,
    /// `at_rest` as of the last update: a candidate of two such slots is
    /// kept in the resting tier.
    pub(crate) rested: Bits,
    /// Marked asleep or awake since the last update.
    pub(crate) rest_changed: Bits,
    /// Freed slots, reused last freed first; each at most once.
    free: Pool<u32>,
    /// Which slots are in `free`.
    free_listed: Bits,
    /// Live proxies (dynamic and static).
    pub(crate) live: usize,
    /// Live dynamic proxies.
    pub(crate) dynamic: usize,
    /// Live proxies at rest (the marks of `at_rest`).
    pub(crate) resting: usize,
    /// Live proxies marked asleep (the marks of `asleep`): with none, no
    /// candidate can have two proxies at rest (two static ones never
    /// pair), and an update skips looking for them.
    pub(crate) sleeping: usize,
    /// Free slots that never held a proxy (generation 0): their boxes are
    /// all `Aabb::default()`, one point, so a tree over them in place
    /// would pair every one with every other.
    pub(crate) blank: usize,
}

/// What a deserialized [`Slots::grouped`] starts as: some slot may have a
/// group (the groups are read, as they were before the flag existed).
#[cfg(feature = "serde")]
fn may_be_grouped() -> bool {
    true
}

/// A snapshot's copy: `clone_from` copies each array into the arrays
/// already there, so a warm copy allocates nothing.
impl Clone for Slots {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.boxes.clone_from(&source.boxes);
        self.fat.clone_from(&source.fat);
        self.fat_is_box = source.fat_is_box;
        self.exact.clone_from(&source.exact);
        self.generation.clone_from(&source.generation);
        self.state.clone_from(&source.state);
        self.group.clone_from(&source.group);
        self.grouped = source.grouped;
        self.changed.clone_from(&source.changed);
        self.queued.clone_from(&source.queued);
        self.removed.clone_from(&source.removed);
        self.asleep.clone_from(&source.asleep);
        self.at_rest.clone_from(&source.at_rest);
        self.rested.clone_from(&source.rested);
        self.rest_changed.clone_from(&source.rest_changed);
        self.free.clone_from(&source.free);
        self.free_listed.clone_from(&source.free_listed);
        self.live = source.live;
        self.dynamic = source.dynamic;
        self.resting = source.resting;
        self.sleeping = source.sleeping;
        self.blank = source.blank;
    }
}

impl Slots {
    /// No slots; `fat_is_box` when the margin is 0.
    pub(crate) fn new(fat_is_box: bool) -> Self {
        Self { fat_is_box, ..Self::default() }
    }

    /// The boxes the index holds, by slot.
    #[inline]
    pub(crate) fn indexed(&self) -> &[Aabb] {
        if self.fat_is_box { &self.boxes } else { &self.fat }
    }

    /// Slots ever used (the bound of every slot index).
    pub(crate) fn len(&self) -> usize {
        self.state.len()
    }

    /// The handle of slot `slot` as it stands.
    #[inline]
    pub(crate) fn handle(&self, slot: u32) -> Proxy {
        Proxy { index: slot, generation: self.generation[slot as usize] }
    }

    /// The slot of `proxy` if it names a live proxy.
    #[inline]
    pub(crate) fn live_slot(&self, proxy: Proxy) -> Option<usize> {
        let slot = proxy.index as usize;
        (slot < self.len()
            && self.generation[slot] == proxy.generation
            && self.state[slot].is_live())
        .then_some(slot)
    }

    /// `Err(slots)` if inserting `count` more proxies could need more
    /// slots than `u32` names.
    pub(crate) fn room_for(&self, count: usize) -> Result<(), usize> {
        // Conservative: free slots are not counted, so a call never fails
        // short of the bound by more than the free slots.
        let total = self.len().saturating_add(count);
        if total <= MAX_PROXIES { Ok(()) } else { Err(total) }
    }

    /// Takes a slot for a new proxy indexed by `fat`; the caller checked
    /// [`room_for`](Self::room_for).
    pub(crate) fn insert(&mut self, aabb: Aabb, fat: Aabb, kind: ProxyKind) -> u32 {
        // The free list may hold slots `insert_at` took since (it leaves
        // them there rather than search the list): skip those.
        let slot = loop {
            match self.free.pop() {
                Some(slot) => {
                    self.free_listed.clear_bit(slot as usize);
                    if self.state[slot as usize] == SlotState::Free {
                        break slot;
                    }
                }
                None => {
                    let slot = self.len() as u32;
                    self.grow_to(self.len() + 1);
                    break slot;
                }
            }
        };
        self.fill(slot as usize, aabb, fat, kind);
        slot
    }

    /// Puts a new proxy in slot `slot`, which must be free, pending
    /// removal (its old proxy's pairs still end at the next update), or
    /// past the end (the slots between become free). The caller checked
    /// that the slot holds no live proxy and that `slot < MAX_PROXIES`.
    pub(crate) fn insert_at(&mut self, slot: usize, aabb: Aabb, fat: Aabb, kind: ProxyKind) {
        if slot >= self.len() {
            let first_new = self.len();
            self.grow_to(slot + 1);
            for between in (first_new..slot).rev() {
                self.push_free(between);
            }
        }
        match self.state[slot] {
            SlotState::Removed => {
                // The old proxy's handle goes stale now, not at the update.
                self.generation[slot] = self.generation[slot].wrapping_add(1);
            }
            SlotState::Free => {}
            SlotState::Dynamic | SlotState::Static => {
                unreachable!("insert_at into a live slot: the caller checks")
            }
        }
        self.fill(slot, aabb, fat, kind);
    }

    /// Appends free slots up to `len`.
    fn grow_to(&mut self, len: usize) {
        self.blank += len.saturating_sub(self.len());
        let empty = Aabb::default();
        self.boxes.resize(len, empty);
        if !self.fat_is_box {
            self.fat.resize(len, empty);
        }
        self.generation.resize(len, 0);
        self.state.resize(len, SlotState::Free);
        self.group.resize(len, 0);
        self.exact.grow_to(len);
        self.changed.grow_to(len);
        self.queued.grow_to(len);
        self.removed.grow_to(len);
        self.asleep.grow_to(len);
        self.at_rest.grow_to(len);
        self.rested.grow_to(len);
        self.rest_changed.grow_to(len);
        self.free_listed.grow_to(len);
    }

    fn fill(&mut self, s: usize, aabb: Aabb, fat: Aabb, kind: ProxyKind) {
        // Saturating: a generation that wrapped to 0 was not counted.
        self.blank = self.blank.saturating_sub(usize::from(
            self.state[s] == SlotState::Free && self.generation[s] == 0,
        ));
        self.boxes[s] = aabb;
        self.set_fat(s, fat);
        self.state[s] = SlotState::of(kind);
        self.group[s] = 0;
        self.set_asleep_mark(s, false);
        self.set_at_rest(s, kind == ProxyKind::Static);
        self.live += 1;
        self.dynamic += usize::from(kind == ProxyKind::Dynamic);
    }

    /// Sets a slot's indexed box (its box when `fat_is_box`: `fat` is its
    /// box then, as a margin of 0 gives) and its `exact` bit.
    #[inline]
    pub(crate) fn set_fat(&mut self, slot: usize, fat: Aabb) {
        if self.fat_is_box {
            self.exact.assign(slot, true);
        } else {
            self.fat[slot] = fat;
            self.exact.assign(slot, same(&fat, &self.boxes[slot]));
        }
    }

    fn push_free(&mut self, slot: usize) {
        if self.free_listed.test_and_set(slot) {
            self.free.push(slot as u32);
        }
    }

    /// Marks a live slot removed; it is freed by [`free`](Self::free).
    pub(crate) fn remove(&mut self, slot: usize) {
        self.dynamic -= usize::from(self.state[slot] == SlotState::Dynamic);
        self.live -= 1;
        self.state[slot] = SlotState::Removed;
        self.removed.set(slot);
        self.set_asleep_mark(slot, false);
        self.set_at_rest(slot, false);
    }

    /// Frees a removed slot for reuse, so its old handle goes stale.
    /// A slot `insert_at` took again since its removal is left alone.
    pub(crate) fn free(&mut self, slot: u32) {
        let s = slot as usize;
        if self.state[s] == SlotState::Removed {
            self.state[s] = SlotState::Free;
            self.generation[s] = self.generation[s].wrapping_add(1);
            self.push_free(s);
        }
    }

    /// Changes a live slot's kind and indexed box.
    pub(crate) fn set_kind(&mut self, slot: usize, kind: ProxyKind, fat: Aabb) {
        self.set_fat(slot, fat);
        self.dynamic -= usize::from(self.state[slot] == SlotState::Dynamic);
        self.dynamic += usize::from(kind == ProxyKind::Dynamic);
        self.state[slot] = SlotState::of(kind);
        self.set_at_rest(slot, kind == ProxyKind::Static || self.asleep.get(slot));
    }

    /// Marks a live slot asleep or awake; returns whether that put it at
    /// rest or took it out of rest (it moves between the index's tiers).
    pub(crate) fn set_asleep(&mut self, slot: usize, asleep: bool) -> bool {
        self.set_asleep_mark(slot, asleep);
        self.rest_changed.set(slot);
        self.set_at_rest(slot, asleep || self.state[slot] == SlotState::Static)
    }

    /// Sets a slot's `asleep` mark and the count.
    fn set_asleep_mark(&mut self, slot: usize, asleep: bool) {
        let was = self.asleep.get(slot);
        self.asleep.assign(slot, asleep);
        self.sleeping = self.sleeping + usize::from(asleep) - usize::from(was);
    }

    /// Sets a slot's `at_rest` mark and the count; returns whether it
    /// changed.
    fn set_at_rest(&mut self, slot: usize, at_rest: bool) -> bool {
        let was = self.at_rest.get(slot);
        self.at_rest.assign(slot, at_rest);
        self.resting = self.resting + usize::from(at_rest) - usize::from(was);
        was != at_rest
    }

    /// Whether any slot was marked asleep or awake, re-indexed or removed
    /// since the last update while it was at rest at the last update (its
    /// resting candidates must come back to the awake tier), as a mark per
    /// slot in `out` (over the words that may hold one).
    pub(crate) fn disturbed(&self, out: &mut Bits) -> bool {
        out.clear();
        out.grow_to(self.len());
        let marks = [&self.changed, &self.queued, &self.removed, &self.rest_changed];
        let mut any = false;
        for marked in marks {
            let words = marked.dirty.clone();
            for w in words.clone() {
                let hit = marked.words[w] & self.rested.words[w];
                out.words[w] |= hit;
                any |= hit != 0;
            }
            out.note(words);
        }
        any
    }

    /// Whether a slot re-indexed or marked asleep since the last update is
    /// at rest now (a candidate of two such slots may move to the resting
    /// tier).
    pub(crate) fn settled(&self) -> bool {
        [&self.queued, &self.rest_changed].into_iter().any(|marked| {
            marked.dirty.clone().any(|w| marked.words[w] & self.at_rest.words[w] != 0)
        })
    }

    /// Makes `rested` what `at_rest` is now: everywhere (`all`), or where
    /// this update's marks say it may have changed.
    pub(crate) fn note_rested(&mut self, all: bool) {
        if all {
            self.rested.words.clone_from(&self.at_rest.words);
            return;
        }
        for marked in [&self.queued, &self.removed, &self.rest_changed] {
            for w in marked.dirty.clone() {
                self.rested.words[w] = self.at_rest.words[w];
            }
        }
    }

    /// Whether slots `a` and `b` share a group, so never pair: no
    /// branch, for the loops that make candidate pairs.
    #[inline(always)]
    pub(crate) fn same_group(&self, a: usize, b: usize) -> bool {
        let (ga, gb) = (self.group[a], self.group[b]);
        (ga == gb) & (ga != 0)
    }

    /// Replaces `boxes` and `ids` with every live slot's enlarged box and
    /// slot, in slot order.
    pub(crate) fn gather_live(&self, boxes: &mut Pool<Aabb>, ids: &mut AlignedColumn<u32>) {
        self.gather_in(0..self.len(), |slot| self.state[slot].is_live(), boxes, ids);
    }

    /// Replaces `boxes` and `ids` with the indexed box and slot of every
    /// slot of `range` that passes `keep`, in slot order.
    pub(crate) fn gather_in(
        &self,
        range: core::ops::Range<usize>,
        keep: impl Fn(usize) -> bool,
        boxes: &mut Pool<Aabb>,
        ids: &mut AlignedColumn<u32>,
    ) {
        boxes.reset();
        ids.clear();
        let indexed = self.indexed();
        for slot in range {
            if keep(slot) {
                boxes.push(indexed[slot]);
                ids.push(slot as u32);
            }
        }
    }

    /// Appends to `boxes` and `ids` the indexed box and slot of every
    /// slot of `range` whose bit is set in `marks(word)` (word by word)
    /// and that passes `keep`, in slot order.
    pub(crate) fn gather_marked(
        &self,
        range: core::ops::Range<usize>,
        marks: impl Fn(usize) -> u64,
        keep: impl Fn(usize) -> bool,
        boxes: &mut Pool<Aabb>,
        ids: &mut AlignedColumn<u32>,
    ) {
        self.each_marked(range, marks, keep, |slot, aabb| {
            boxes.push(*aabb);
            ids.push(slot as u32);
        });
    }

    /// Calls `each(slot, indexed box)` for every slot of `range` whose bit
    /// is set in `marks(word)` (word by word) and that passes `keep`, in
    /// slot order.
    pub(crate) fn each_marked(
        &self,
        range: core::ops::Range<usize>,
        marks: impl Fn(usize) -> u64,
        keep: impl Fn(usize) -> bool,
        mut each: impl FnMut(usize, &Aabb),
    ) {
        if range.is_empty() {
            return;
        }
        let indexed = self.indexed();
        for word in range.start / 64..range.end.div_ceil(64) {
            let first = word * 64;
            // The bits of this word within `range`.
            let from = range.start.saturating_sub(first).min(64);
            let to = (range.end - first).min(64);
            let within = (u64::MAX >> (64 - (to - from))) << from;
            let mut bits = marks(word) & within;
            while bits != 0 {
                let slot = first + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if keep(slot) {
                    each(slot, &indexed[slot]);
                }
            }
        }
    }

    /// Clears the marks of one update.
    pub(crate) fn clear_marks(&mut self) {
        self.changed.clear();
        self.queued.clear();
        self.removed.clear();
        self.rest_changed.clear();
    }
}

/// One bit per slot: the marks an update reads for both proxies of every
/// candidate pair, small enough to stay in cache where the boxes do not.
#[derive(Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct Bits {
    pub(crate) words: Pool<u64>,
    /// The words that may hold a set bit are within `dirty`, so clearing
    /// costs what was set, not the slot count (a big static world with a
    /// few moving proxies clears a few words).
    dirty: core::ops::Range<usize>,
}

impl Clone for Bits {
    fn clone(&self) -> Self {
        Self { words: self.words.clone(), dirty: self.dirty.clone() }
    }

    fn clone_from(&mut self, source: &Self) {
        self.words.clone_from(&source.words);
        self.dirty.clone_from(&source.dirty);
    }
}

impl Bits {
    /// Notes that words `words` may have bits set (by a caller writing
    /// them directly).
    #[inline]
    pub(crate) fn note(&mut self, words: core::ops::Range<usize>) {
        if words.is_empty() {
            return;
        }
        if self.dirty.is_empty() {
            self.dirty = words;
        } else {
            self.dirty = self.dirty.start.min(words.start)..self.dirty.end.max(words.end);
        }
    }

    #[inline]
    pub(crate) fn get(&self, slot: usize) -> bool {
        self.words[slot / 64] >> (slot % 64) & 1 != 0
    }

    #[inline]
    pub(crate) fn set(&mut self, slot: usize) {
        self.words[slot / 64] |= 1 << (slot % 64);
        self.note(slot / 64..slot / 64 + 1);
    }

    /// Sets or clears the bit (the words to clear are not noted: for bits
    /// that are not cleared per update).
    #[inline]
    pub(crate) fn assign(&mut self, slot: usize, value: bool) {
        let (word, bit) = (&mut self.words[slot / 64], 1u64 << (slot % 64));
        *word = (*word & !bit) | (u64::from(value) << (slot % 64));
    }

    #[inline]
    fn clear_bit(&mut self, slot: usize) {
        self.words[slot / 64] &= !(1 << (slot % 64));
    }

    /// Whether the bit was clear; sets it.
    #[inline]
    pub(crate) fn test_and_set(&mut self, slot: usize) -> bool {
        let word = &mut self.words[slot / 64];
        let bit = 1 << (slot % 64);
        let was_clear = *word & bit == 0;
        *word |= bit;
        self.note(slot / 64..slot / 64 + 1);
        was_clear
    }

    pub(crate) fn grow_to(&mut self, slots: usize) {
        self.words.resize(slots.div_ceil(64), 0);
    }

    pub(crate) fn clear(&mut self) {
        self.words[self.dirty.clone()].fill(0);
        self.dirty = 0..0;
    }
}

/// The most proxies one broad phase holds: slots are `u32` indices.
pub(crate) const MAX_PROXIES: usize = u32::MAX as usize;

/// How much a dynamic proxy's indexed box is enlarged.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Margin {
    relative: f32,
    absolute: f32,
}

impl Margin {
    /// The configured margins; a negative or NaN one counts as 0.
    pub(crate) fn new(relative: f32, absolute: f32) -> Self {
        Self { relative: relative.max(0.0), absolute: absolute.max(0.0) }
    }

    /// Whether every enlarged box is its box.
    pub(crate) fn is_zero(&self) -> bool {
        self.relative == 0.0 && self.absolute == 0.0
    }

    /// The margin of a box: `relative` times its largest extent, at least
    /// `absolute`. An extent can overflow to +inf (a box from -MAX to
    /// MAX); times a relative margin of 0 that is NaN, and `max` then
    /// keeps `absolute`.
    #[inline]
    fn of(&self, aabb: &Aabb) -> f32 {
        ((aabb.max - aabb.min).max_element() * self.relative).max(self.absolute)
    }

    /// The indexed box of a proxy of `kind` first seen at `aabb`.
    #[inline]
    pub(crate) fn first(&self, aabb: &Aabb, kind: ProxyKind) -> Aabb {
        match kind {
            ProxyKind::Dynamic => enlarge(aabb, self.of(aabb)),
            ProxyKind::Static => *aabb,
        }
    }

    /// The indexed box of a dynamic proxy that left its enlarged box by
    /// moving from `old` to `new`. One that moved farther than its margin
    /// in one step would leave any margin at every step (it teleports, or
    /// outruns it): it gets none, which keeps its candidates few.
    #[inline]
    pub(crate) fn moved(&self, old: &Aabb, new: &Aabb) -> Aabb {
        let margin = self.of(new);
        let step = (new.min - old.min).abs().max((new.max - old.max).abs()).max_element();
        if step > margin { *new } else { enlarge(new, margin) }
    }

    /// After a proxy's box went from `old` to `new`: updates its indexed
    /// box `fat` and says whether the proxy must be re-indexed. A static
    /// proxy always is, at its own box; a dynamic one when `new` left
    /// `fat`. The one rule for single and bulk sets.
    #[inline]
    pub(crate) fn refit(&self, is_static: bool, fat: &mut Aabb, old: &Aabb, new: &Aabb) -> bool {
        if is_static {
            *fat = *new;
            true
        } else if !contains(fat, new) {
            *fat = self.moved(old, new);
            true
        } else {
            false
        }
    }
}

/// `aabb` enlarged on every side by `margin`, clamped to finite `f32` so
/// that a box near the end of the range stays a valid box.
#[inline]
fn enlarge(aabb: &Aabb, margin: f32) -> Aabb {
    let margin = Vec3::splat(margin);
    Aabb {
        min: (aabb.min - margin).max(Vec3::splat(f32::MIN)),
        max: (aabb.max + margin).min(Vec3::splat(f32::MAX)),
    }
}

/// Whether two boxes are equal, without a branch per coordinate.
#[inline]
pub(crate) fn same(a: &Aabb, b: &Aabb) -> bool {
    (a.min.cmpeq(b.min) & a.max.cmpeq(b.max)).all()
}

/// Whether `inner` lies inside `outer` (faces may touch). No branch per
/// axis: a box that moved leaves on a random side, and a branch on the
/// first axis would be mispredicted half the time.
#[inline]
pub(crate) fn contains(outer: &Aabb, inner: &Aabb) -> bool {
    (outer.min.cmple(inner.min) & inner.max.cmple(outer.max)).all()
}

/// Checks of a table read from bytes (see `serialize.rs`).
#[cfg(feature = "serde")]
impl Slots {
    /// Whether the table holds the invariants every later call relies on:
    /// its arrays as long as its slots, marks within them, counts that
    /// match the states, a free list of distinct slots with its marks,
    /// valid boxes for live slots (each inside its enlarged box, and equal
    /// to it where marked exact), and enlarged boxes kept exactly when
    /// `fat_is_box` is false (as the broad phase's margin says).
    pub(crate) fn check(&self, fat_is_box: bool) -> Result<(), &'static str> {
        let n = self.len();
        if n > MAX_PROXIES {
            return Err("more slots than u32 indices");
        }
        if self.boxes.len() != n || self.generation.len() != n || self.group.len() != n {
            return Err("the slot arrays differ in length");
        }
        if self.fat_is_box != fat_is_box || self.fat.len() != if fat_is_box { 0 } else { n } {
            return Err("the enlarged boxes do not match the margin");
        }
        self.exact.check(n, false)?;
        self.free_listed.check(n, false)?;
        self.changed.check(n, true)?;
        self.queued.check(n, true)?;
        self.removed.check(n, true)?;
        self.rest_changed.check(n, true)?;
        for bits in [&self.asleep, &self.at_rest, &self.rested] {
            bits.check(n, false)?;
        }
        let (mut live, mut dynamic, mut blank) = (0, 0, 0);
        let indexed = self.indexed();
        for (s, &state) in self.state.iter().enumerate() {
            match state {
                SlotState::Dynamic => (live, dynamic) = (live + 1, dynamic + 1),
                SlotState::Static => live += 1,
                SlotState::Free => blank += usize::from(self.generation[s] == 0),
                SlotState::Removed if !self.removed.get(s) => {
                    return Err("a removed slot is not marked removed");
                }
                SlotState::Removed => {}
            }
            let at_rest = state.is_live() && (self.asleep.get(s) || state == SlotState::Static);
            if self.at_rest.get(s) != at_rest || (self.asleep.get(s) && !state.is_live()) {
                return Err("a slot's rest marks do not match its state");
            }
            if state.is_live() {
                let (aabb, fat) = (&self.boxes[s], &indexed[s]);
                if aabb.validate(s).is_err() || fat.validate(s).is_err() {
                    return Err("a live proxy's box is not finite or is inverted");
                }
                if !self.queued.get(s)
                    && (!contains(fat, aabb) || (self.exact.get(s) && !same(aabb, fat)))
                {
                    return Err("a live proxy's box is not inside its enlarged box");
                }
            }
        }
        let ones = |bits: &Bits| bits.words.iter().map(|w| w.count_ones() as usize).sum::<usize>();
        if live != self.live
            || dynamic != self.dynamic
            || ones(&self.at_rest) != self.resting
            || ones(&self.asleep) != self.sleeping
            || self.blank > blank
        {
            return Err("the proxy counts do not match the slots");
        }
        let mut listed = Bits::default();
        listed.grow_to(n);
        for &slot in &self.free {
            if slot as usize >= n || !listed.test_and_set(slot as usize) {
                return Err("the free list holds a slot out of range or twice");
            }
        }
        if listed.words != self.free_listed.words {
            return Err("the free list and its marks differ");
        }
        Ok(())
    }
}

#[cfg(feature = "serde")]
impl Bits {
    /// Whether the marks cover `slots` slots, set none past them, and,
    /// where `cleared` (marks cleared per update), set none outside the
    /// words noted.
    fn check(&self, slots: usize, cleared: bool) -> Result<(), &'static str> {
        let words = self.words.len();
        if words != slots.div_ceil(64)
            || self.dirty.start > self.dirty.end
            || self.dirty.end > words
        {
            return Err("a slot mark array does not match the slots");
        }
        if !slots.is_multiple_of(64) && self.words.last().is_some_and(|w| w >> (slots % 64) != 0) {
            return Err("a slot mark is set past the slots");
        }
        let outside = |(k, &w): (usize, &u64)| w != 0 && !self.dirty.contains(&k);
        if cleared && self.words.iter().enumerate().any(outside) {
            return Err("a slot mark is set outside the words to clear");
        }
        Ok(())
    }
}
