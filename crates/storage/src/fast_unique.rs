//! `FastUnique`: tiny sets of `u32` whose membership test compares every
//! inline slot at once (the compiler turns the fold into a few SIMD
//! compares), with a spill so that no value is ever lost.

use ahash::AHashSet;
use core::fmt;

/// Value of an unused inline slot in [`FastUnique`]. It can still be inserted:
/// it is always stored in the spill, never inline.
const EMPTY: u32 = u32::MAX;

/// A small set of `u32` with `N` inline slots and a spill for the rest.
///
/// Membership compares all `N` slots branch-free, whatever the fill — unused
/// slots hold `u32::MAX`, which is never stored inline — so for small `N` it
/// is a handful of vector compares, faster than hashing. When the inline
/// slots are full, further values go to a sorted spill `Vec` (binary search):
/// any number of values may be inserted, none is lost, nothing panics.
/// `u32::MAX` itself is a valid value; it always lives in the spill.
///
/// [`clear`](FastUnique::clear) keeps the spill's storage.
///
/// # Examples
///
/// ```
/// use broadphase_storage::FastUnique;
///
/// let mut partners: FastUnique = FastUnique::new();
/// assert!(partners.insert(7));
/// assert!(!partners.insert(7)); // already there
/// assert!(partners.insert(u32::MAX));
/// assert!(partners.contains(7) && partners.contains(u32::MAX));
/// assert_eq!(partners.len(), 2);
/// ```
#[derive(Clone)]
pub struct FastUnique<const N: usize = 16> {
    /// `slots[..fill]` are values; the rest hold `EMPTY`.
    slots: [u32; N],
    fill: usize,
    /// Sorted, no duplicates; holds overflow values and `EMPTY` itself.
    spill: Vec<u32>,
}

impl<const N: usize> Default for FastUnique<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Debug for FastUnique<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter()).finish()
    }
}

impl<const N: usize> FastUnique<N> {
    /// An empty set; allocates nothing until the inline slots overflow.
    ///
    /// # Examples
    ///
    /// ```
    /// let set = broadphase_storage::FastUnique::<8>::new();
    /// assert!(set.is_empty());
    /// ```
    #[inline]
    pub const fn new() -> Self {
        Self { slots: [EMPTY; N], fill: 0, spill: Vec::new() }
    }

    /// Whether any inline slot holds `v`: all `N` slots compared, no branch.
    #[inline]
    fn inline_contains(&self, v: u32) -> bool {
        self.slots.iter().fold(false, |acc, &s| acc | (s == v))
    }

    /// Whether `v` is in the set.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set = broadphase_storage::FastUnique::<4>::new();
    /// set.insert(3);
    /// assert!(set.contains(3));
    /// assert!(!set.contains(4));
    /// assert!(!set.contains(u32::MAX)); // unused slots never match
    /// ```
    #[inline]
    pub fn contains(&self, v: u32) -> bool {
        (v != EMPTY && self.inline_contains(v))
            || (!self.spill.is_empty() && self.spill.binary_search(&v).is_ok())
    }

    /// Adds `v`; returns `true` if it was not already in the set.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set = broadphase_storage::FastUnique::<2>::new();
    /// assert!(set.insert(1) && set.insert(2) && set.insert(3)); // 3 spills
    /// assert!(!set.insert(3));
    /// assert_eq!(set.len(), 3);
    /// ```
    #[inline]
    pub fn insert(&mut self, v: u32) -> bool {
        if v != EMPTY && self.inline_contains(v) {
            return false;
        }
        if v != EMPTY && self.fill < N {
            self.slots[self.fill] = v;
            self.fill += 1;
            return true;
        }
        self.insert_spill(v)
    }

    /// [`insert`](Self::insert) without the spill, so it never allocates:
    /// `Some(true)` if `v` was added (to an inline slot), `Some(false)` if
    /// it was in the set already, and `None` if it is not in the set and
    /// has no inline slot (all `N` are taken, or `v` is `u32::MAX`, which
    /// only the spill holds): nothing is stored then.
    ///
    /// A filter in front of an exact de-duplication uses it: `Some(false)`
    /// is a sure repeat, `None` is left to the exact step.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set = broadphase_storage::FastUnique::<2>::new();
    /// assert_eq!(set.try_insert(4), Some(true));
    /// assert_eq!(set.try_insert(4), Some(false));
    /// assert_eq!(set.try_insert(5), Some(true));
    /// assert_eq!(set.try_insert(6), None); // both slots are taken
    /// assert!(!set.contains(6) && set.len() == 2);
    /// assert_eq!(set.try_insert(u32::MAX), None);
    /// ```
    #[inline]
    pub fn try_insert(&mut self, v: u32) -> Option<bool> {
        if v != EMPTY && self.inline_contains(v) {
            return Some(false);
        }
        if !self.spill.is_empty() && self.spill.binary_search(&v).is_ok() {
            return Some(false);
        }
        if v != EMPTY && self.fill < N {
            self.slots[self.fill] = v;
            self.fill += 1;
            return Some(true);
        }
        None
    }

    #[cold]
    fn insert_spill(&mut self, v: u32) -> bool {
        match self.spill.binary_search(&v) {
            Ok(_) => false,
            Err(at) => {
                self.spill.insert(at, v);
                true
            }
        }
    }

    /// The number of values in the set.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set = broadphase_storage::FastUnique::<16>::new();
    /// (0..20).for_each(|v| { set.insert(v); });
    /// assert_eq!(set.len(), 20);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.fill + self.spill.len()
    }

    /// Whether the set is empty.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set = broadphase_storage::FastUnique::<16>::new();
    /// assert!(set.is_empty());
    /// set.insert(0);
    /// assert!(!set.is_empty());
    /// ```
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the set; the spill keeps its storage.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set = broadphase_storage::FastUnique::<16>::new();
    /// set.insert(5);
    /// set.clear();
    /// assert!(!set.contains(5) && set.is_empty());
    /// ```
    #[inline]
    pub fn clear(&mut self) {
        self.slots[..self.fill].fill(EMPTY);
        self.fill = 0;
        self.spill.clear();
    }

    /// The values: inline ones in insertion order, then the spill ascending.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut set = broadphase_storage::FastUnique::<16>::new();
    /// set.insert(9);
    /// set.insert(4);
    /// assert_eq!(set.iter().collect::<Vec<_>>(), [9, 4]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.slots[..self.fill].iter().chain(&self.spill).copied()
    }
}

/// Inline slots per set in [`FastUniqueSets`].
///
/// 8, not 16: eight `u32` are 32 bytes — one AVX2 compare, or two SSE ones —
/// and two sets share a cache line without straddling one. In broad-phase
/// scenes a box has few partners (the dense 20k-box scene has ~1.5 pairs per
/// box; a pair is usually recorded under one of its two ids), so 8 slots
/// rarely spill, while 16 would double the memory touched per set (64 MB
/// instead of 32 MB at a million sets) for slots that mostly stay unused.
const SLOTS: usize = 8;

/// One set's inline slots, aligned so a set never straddles a cache line.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug)]
struct SetSlots([u32; SLOTS]);

const _: () = assert!(size_of::<SetSlots>() == 32 && align_of::<SetSlots>() == 32);

/// Many small sets, one per id, for merging and de-duplicating partner lists
/// (for example pairs found by several regions of a partition).
///
/// Each set has 8 inline slots in one flat buffer; membership compares all 8
/// at once, masked by the set's fill count, so stale slots from an earlier
/// frame never need clearing. A set that overflows keeps going in a shared
/// spill (`AHashSet<u64>` keyed by `set << 32 | value`): any number of values
/// per set, any `u32` value (`u32::MAX` included).
///
/// The sets that hold a value are listed in the order they got their first
/// ([`touched_sets`](FastUniqueSets::touched_sets)), so a reader can visit
/// only those, and [`reset`](FastUniqueSets::reset) zeroes only their fill
/// counts: O(sets touched), not O(set count). It keeps every buffer, so a
/// warm frame of the same shape allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_storage::FastUniqueSets;
///
/// let mut seen = FastUniqueSets::new();
/// seen.reset(100);
/// assert!(seen.insert(3, 17)); // pair (3, 17) is new
/// assert!(!seen.insert(3, 17)); // found again by another region
/// assert!(seen.contains(3, 17) && !seen.contains(17, 3));
/// seen.reset(100);
/// assert!(!seen.contains(3, 17));
/// ```
#[derive(Clone, Default)]
pub struct FastUniqueSets {
    /// At least `fills.len()` entries; entries past a set's fill are stale.
    slots: Vec<SetSlots>,
    /// Per set: inline slots in use, `0..=SLOTS`. Its length is the set count.
    fills: Vec<u8>,
    /// `touched[..touched_len]`: every set whose fill is not 0, once, in
    /// the order they got their first value. One entry per set and one
    /// more, so adding one never allocates and a batch may write the next
    /// entry whether or not it adds one; entries past `touched_len` are
    /// stale.
    touched: Vec<u32>,
    touched_len: usize,
    /// Values in inline slots, over all sets.
    inline_count: usize,
    spill: AHashSet<u64>,
}

impl fmt::Debug for FastUniqueSets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FastUniqueSets")
            .field("set_count", &self.set_count())
            .field("touched", &self.touched_len)
            .field("spilled", &self.spilled())
            .finish_non_exhaustive()
    }
}

impl FastUniqueSets {
    /// Inline slots per set: a set's first 8 values are in
    /// [`inline_values`](FastUniqueSets::inline_values), the rest in the
    /// spill.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_storage::FastUniqueSets;
    /// let mut sets = FastUniqueSets::new();
    /// sets.reset(1);
    /// (0..10).for_each(|v| { sets.insert(0, v); });
    /// assert_eq!(sets.inline_values(0).len(), FastUniqueSets::INLINE_SLOTS);
    /// assert_eq!(sets.spilled(), 10 - FastUniqueSets::INLINE_SLOTS);
    /// ```
    pub const INLINE_SLOTS: usize = SLOTS;

    /// No sets; call [`reset`](FastUniqueSets::reset) before inserting.
    ///
    /// # Examples
    ///
    /// ```
    /// let sets = broadphase_storage::FastUniqueSets::new();
    /// assert_eq!(sets.set_count(), 0);
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties every set and makes `set_count` of them (ids
    /// `0..set_count`). O(sets touched since the last reset), plus the
    /// new sets when the count grows; buffers are kept and only grow.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(2);
    /// sets.insert(1, 5);
    /// sets.reset(10);
    /// assert!(!sets.contains(1, 5));
    /// assert_eq!(sets.set_count(), 10);
    /// ```
    pub fn reset(&mut self, set_count: usize) {
        // Only the touched sets have a fill count to zero, one by one
        // while they are few (past 1 in 32, one fill of the whole list
        // costs less); the count may then shrink (dropping zeros) or grow
        // (adding zeros).
        let touched = &self.touched[..self.touched_len];
        if touched.len() < self.fills.len() / 32 {
            touched.iter().for_each(|&set| self.fills[set as usize] = 0);
        } else {
            self.fills.clear();
        }
        self.fills.resize(set_count, 0);
        if self.slots.len() < set_count {
            self.slots.resize(set_count, SetSlots([0; SLOTS]));
        }
        if self.touched.len() <= set_count {
            self.touched.resize(set_count + 1, 0);
        }
        self.touched_len = 0;
        self.inline_count = 0;
        self.spill.clear();
    }

    /// The number of sets made by the last [`reset`](FastUniqueSets::reset).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(4);
    /// assert_eq!(sets.set_count(), 4);
    /// ```
    #[inline]
    pub fn set_count(&self) -> usize {
        self.fills.len()
    }

    #[inline]
    fn spill_key(set: u32, value: u32) -> u64 {
        (u64::from(set) << 32) | u64::from(value)
    }

    /// Whether one of the first `fill` slots holds `v`: all slots compared,
    /// masked by position against a constant `0..SLOTS`, no branch (this
    /// form compiles to vector compares; `enumerate` did not).
    #[inline]
    fn inline_contains(slots: &SetSlots, fill: usize, v: u32) -> bool {
        const POSITION: [u32; SLOTS] = [0, 1, 2, 3, 4, 5, 6, 7];
        let fill = fill as u32; // at most SLOTS
        slots.0.iter().zip(&POSITION).fold(false, |acc, (&s, &i)| acc | ((s == v) & (i < fill)))
    }

    /// Adds `value` to set `set`; returns `true` if it was not already there.
    ///
    /// # Panics
    ///
    /// If `set >= self.set_count()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(1);
    /// assert!(sets.insert(0, u32::MAX));
    /// assert!(!sets.insert(0, u32::MAX));
    /// ```
    #[inline]
    pub fn insert(&mut self, set: u32, value: u32) -> bool {
        let s = set as usize;
        let fill = usize::from(self.fills[s]);
        if Self::inline_contains(&self.slots[s], fill, value) {
            return false;
        }
        if fill < SLOTS {
            if fill == 0 {
                self.touched[self.touched_len] = set;
                self.touched_len += 1;
            }
            self.slots[s].0[fill] = value;
            self.fills[s] += 1;
            self.inline_count += 1;
            return true;
        }
        self.spill.insert(Self::spill_key(set, value))
    }

    /// Adds each `(set, value)` of `values` when the caller knows no set
    /// holds its value yet and none repeats in `values`: one
    /// [`insert`](FastUniqueSets::insert) each, without the membership test
    /// while the set has a free inline slot (the spill still tests, as a
    /// hash set does). For merging lists already free of repeats.
    ///
    /// If a set did hold a value while it had a free inline slot, the set
    /// lists it twice: nothing is lost and nothing is unsafe, but the set
    /// is no longer one.
    ///
    /// # Panics
    ///
    /// If a set is `>= self.set_count()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(3);
    /// let values: Vec<(u32, u32)> = (0..10).map(|v| (1, 10 - v)).chain([(2, 0)]).collect();
    /// sets.extend_distinct(&values);
    /// assert_eq!(sets.inline_values(1), [10, 9, 8, 7, 6, 5, 4, 3]);
    /// assert!(sets.contains(1, 1) && sets.spilled() == 2);
    /// assert_eq!(sets.touched_sets(), [1, 2]);
    /// assert_eq!(sets.value_count(), 11);
    /// ```
    pub fn extend_distinct(&mut self, values: &[(u32, u32)]) {
        /// The counts as the loop keeps them, in registers, written back
        /// when it ends, or unwinds from a set out of range: then every
        /// set with a value is still listed and counted.
        struct Counts<'a> {
            touched_len: &'a mut usize,
            inline_count: &'a mut usize,
            touched: usize,
            inline: usize,
        }
        impl Drop for Counts<'_> {
            fn drop(&mut self) {
                *self.touched_len = self.touched;
                *self.inline_count += self.inline;
            }
        }
        let Self { slots, fills, touched, touched_len, inline_count, spill } = self;
        // The buffers as slices: their places then stay in registers
        // across the loop's stores.
        let (slots, fills, touched) = (&mut slots[..], &mut fills[..], &mut touched[..]);
        let mut counts = Counts { touched: *touched_len, touched_len, inline_count, inline: 0 };
        for &(set, value) in values {
            let s = set as usize;
            let fill = fills[s];
            if usize::from(fill) < SLOTS {
                // Written always, kept only for a first value: no branch
                // to guess wrong (first and later values come mixed).
                touched[counts.touched] = set;
                counts.touched += usize::from(fill == 0);
                slots[s].0[usize::from(fill)] = value;
                fills[s] = fill + 1;
                counts.inline += 1;
            } else {
                spill.insert(Self::spill_key(set, value));
            }
        }
    }

    /// How many values the sets hold in all (counting a value twice where
    /// [`extend_distinct`](FastUniqueSets::extend_distinct) was given a
    /// repeat).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(2);
    /// (0..10).for_each(|v| { sets.insert(0, v); sets.insert(1, v % 3); });
    /// assert_eq!(sets.value_count(), 13);
    /// ```
    #[inline]
    pub fn value_count(&self) -> usize {
        self.inline_count + self.spill.len()
    }

    /// The sets that hold at least one value, each once, in the order they
    /// got their first since the last [`reset`](FastUniqueSets::reset):
    /// a reader that only wants the non-empty sets visits these instead of
    /// every set.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(100);
    /// sets.insert(42, 1);
    /// sets.insert(7, 1);
    /// sets.insert(42, 2);
    /// assert_eq!(sets.touched_sets(), [42, 7]);
    /// sets.reset(100);
    /// assert!(sets.touched_sets().is_empty());
    /// ```
    #[inline]
    pub fn touched_sets(&self) -> &[u32] {
        &self.touched[..self.touched_len]
    }

    /// Whether set `set` holds `value`.
    ///
    /// # Panics
    ///
    /// If `set >= self.set_count()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(3);
    /// sets.insert(2, 8);
    /// assert!(sets.contains(2, 8) && !sets.contains(1, 8));
    /// ```
    #[inline]
    pub fn contains(&self, set: u32, value: u32) -> bool {
        let s = set as usize;
        let fill = usize::from(self.fills[s]);
        Self::inline_contains(&self.slots[s], fill, value)
            || (fill == SLOTS && self.spill.contains(&Self::spill_key(set, value)))
    }

    /// The values of set `set` held in its inline slots (at most 8), in
    /// insertion order. The set's other values are in the spill (see
    /// [`spilled_values`](FastUniqueSets::spilled_values)).
    ///
    /// # Panics
    ///
    /// If `set >= self.set_count()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(2);
    /// (0..10).for_each(|v| { sets.insert(1, 100 - v); });
    /// assert_eq!(sets.inline_values(1), [100, 99, 98, 97, 96, 95, 94, 93]);
    /// assert!(sets.inline_values(0).is_empty());
    /// ```
    #[inline]
    pub fn inline_values(&self, set: u32) -> &[u32] {
        let s = set as usize;
        &self.slots[s].0[..usize::from(self.fills[s])]
    }

    /// Set `set`'s 8 inline slots and how many of them, from the first,
    /// hold its values: [`inline_values`](FastUniqueSets::inline_values)
    /// as a whole array, for readers that handle a fixed number of slots
    /// without a branch on the count. Slots past the count hold leftovers
    /// of earlier values (or 0), to be ignored.
    ///
    /// # Panics
    ///
    /// If `set >= self.set_count()`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(1);
    /// sets.insert(0, 7);
    /// sets.insert(0, 9);
    /// let (slots, count) = sets.inline_slots(0);
    /// assert_eq!(&slots[..count], [7, 9]);
    /// assert_eq!(&slots[..count], sets.inline_values(0));
    /// ```
    #[inline]
    pub fn inline_slots(&self, set: u32) -> (&[u32; SLOTS], usize) {
        let s = set as usize;
        (&self.slots[s].0, usize::from(self.fills[s]))
    }

    /// Every set's inline values, in set order: item `i` is
    /// [`inline_values(i)`](FastUniqueSets::inline_values). One pass over
    /// the sets with no lookup per set.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(3);
    /// sets.insert(0, 4);
    /// sets.insert(2, 6);
    /// sets.insert(2, 5);
    /// let all: Vec<&[u32]> = sets.inline_sets().collect();
    /// assert_eq!(all, [&[4][..], &[], &[6, 5]]);
    /// ```
    pub fn inline_sets(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        self.slots.iter().zip(&self.fills).map(|(slots, &fill)| &slots.0[..usize::from(fill)])
    }

    /// Every value in the spill as `(set, value)`, in no particular order:
    /// with [`inline_values`](FastUniqueSets::inline_values), every value
    /// of every set, each once.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(2);
    /// (0..10).for_each(|v| { sets.insert(1, v); });
    /// let mut spilled: Vec<(u32, u32)> = sets.spilled_values().collect();
    /// spilled.sort_unstable();
    /// assert_eq!(spilled, [(1, 8), (1, 9)]);
    /// ```
    pub fn spilled_values(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.spill.iter().map(|&key| ((key >> 32) as u32, key as u32))
    }

    /// How many values, over all sets, went to the spill since the last reset.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reset(1);
    /// (0..10).for_each(|v| { sets.insert(0, v); });
    /// assert_eq!(sets.spilled(), 2); // 8 inline slots per set
    /// ```
    #[inline]
    pub fn spilled(&self) -> usize {
        self.spill.len()
    }

    /// How many sets, and how many spilled values over all sets, fit
    /// without allocating: `[sets, spilled]`.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reserve(100, 10);
    /// let [set_room, spill_room] = sets.capacity();
    /// assert!(set_room >= 100 && spill_room >= 10);
    /// ```
    pub fn capacity(&self) -> [usize; 2] {
        let touched = self.touched.capacity().saturating_sub(1);
        let sets = self.slots.capacity().min(self.fills.capacity()).min(touched);
        [sets, self.spill.capacity()]
    }

    /// Makes room for `sets` sets and `spilled` spilled values in all
    /// (totals, not additions, and no amortised slack for the sets), so
    /// resets and inserts within them allocate nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut sets = broadphase_storage::FastUniqueSets::new();
    /// sets.reserve(50, 0);
    /// sets.reset(50); // no allocation
    /// assert!(sets.capacity()[0] >= 50);
    /// ```
    pub fn reserve(&mut self, sets: usize, spilled: usize) {
        self.slots.reserve_exact(sets.saturating_sub(self.slots.len()));
        self.fills.reserve_exact(sets.saturating_sub(self.fills.len()));
        self.touched.reserve_exact((sets + 1).saturating_sub(self.touched.len()));
        let spill_len = self.spill.len();
        self.spill.reserve(spilled.saturating_sub(spill_len));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::alloc_count::allocations_in;
    use std::collections::HashSet;

    /// SplitMix64: a tiny deterministic generator for property-style tests.
    struct SplitMix64(u64);

    impl SplitMix64 {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        /// Mostly small values (so repeats happen), sometimes u32::MAX.
        fn value(&mut self, range: u32) -> u32 {
            let r = self.next();
            if r.is_multiple_of(17) { u32::MAX } else { (r >> 32) as u32 % range }
        }
    }

    fn check_against_hashset<const N: usize>(seed: u64) {
        let mut rng = SplitMix64(seed);
        let mut set = FastUnique::<N>::new();
        for round in 0..20 {
            set.clear();
            let mut oracle = HashSet::new();
            let range = [4, 16, 40, 1000][round % 4];
            for _ in 0..(round * 13) {
                let v = rng.value(range);
                assert_eq!(set.insert(v), oracle.insert(v), "insert {v}");
                let probe = rng.value(range);
                assert_eq!(set.contains(probe), oracle.contains(&probe), "probe {probe}");
            }
            assert_eq!(set.len(), oracle.len());
            assert_eq!(set.is_empty(), oracle.is_empty());
            let listed: Vec<u32> = set.iter().collect();
            assert_eq!(listed.len(), oracle.len(), "iter yields duplicates");
            assert_eq!(listed.into_iter().collect::<HashSet<_>>(), oracle);
        }
    }

    #[test]
    fn fast_unique_matches_hashset() {
        check_against_hashset::<16>(1);
        check_against_hashset::<8>(2);
        check_against_hashset::<1>(3);
        check_against_hashset::<0>(4);
    }

    /// `try_insert` agrees with a `HashSet` fed the same values, except
    /// that a value with no inline slot left is refused (`None`), not
    /// stored; values put in the spill earlier by `insert` still count.
    fn check_try_insert<const N: usize>(seed: u64) {
        let mut rng = SplitMix64(seed);
        let mut set = FastUnique::<N>::new();
        for round in 0..20 {
            set.clear();
            let mut oracle = HashSet::new();
            let range = [4, 16, 40, 1000][round % 4];
            // Some rounds start with values `insert` put in the spill.
            for _ in 0..(round % 3) * (N + 2) {
                let v = rng.value(range);
                assert_eq!(set.insert(v), oracle.insert(v));
            }
            for _ in 0..(round * 13) {
                let v = rng.value(range);
                let full_before = set.fill == N;
                match set.try_insert(v) {
                    Some(added) => assert_eq!(added, oracle.insert(v), "try_insert {v}"),
                    None => {
                        assert!(!oracle.contains(&v), "refused {v}, which is in the set");
                        assert!(v == u32::MAX || full_before, "refused {v} with a free slot");
                        assert!(!set.contains(v));
                    }
                }
            }
            assert_eq!(set.len(), oracle.len());
            assert_eq!(set.iter().collect::<HashSet<_>>(), oracle);
        }
    }

    #[test]
    fn try_insert_never_spills() {
        check_try_insert::<16>(5);
        check_try_insert::<8>(6);
        check_try_insert::<1>(7);
        check_try_insert::<0>(8);
        let mut set = FastUnique::<4>::new();
        let fill = |set: &mut FastUnique<4>| {
            set.clear();
            (0..50).for_each(|v| _ = set.try_insert(v));
        };
        assert_eq!(allocations_in(|| fill(&mut set)), 0);
        assert_eq!(set.len(), 4);
    }

    #[test]
    fn fast_unique_u32_max_is_a_value_not_an_empty_slot() {
        let mut set: FastUnique = FastUnique::default();
        assert!(!set.contains(u32::MAX));
        assert!(set.insert(u32::MAX));
        assert!(!set.insert(u32::MAX));
        assert!(set.insert(0));
        assert_eq!(set.len(), 2);
        assert_eq!(format!("{set:?}"), "{0, 4294967295}");
    }

    #[test]
    fn fast_unique_spills_without_losing_values() {
        let mut set = FastUnique::<16>::new();
        for v in (0..10_000u32).rev() {
            assert!(set.insert(v * 7));
        }
        assert_eq!(set.len(), 10_000);
        assert!((0..10_000u32).all(|v| set.contains(v * 7) && !set.contains(v * 7 + 1)));
        assert!((0..10_000u32).all(|v| !set.insert(v * 7)));
        set.clear();
        assert!(set.is_empty() && !set.contains(0) && !set.contains(7 * 9_999));
    }

    #[test]
    fn fast_unique_clear_then_refill_allocates_nothing() {
        let mut set = FastUnique::<4>::new();
        let fill = |set: &mut FastUnique<4>| {
            set.clear();
            (0..50).for_each(|v| assert!(set.insert(v)));
        };
        fill(&mut set);
        assert_eq!(allocations_in(|| fill(&mut set)), 0);
    }

    #[test]
    fn sets_match_hashset_oracle() {
        let mut rng = SplitMix64(99);
        let mut sets = FastUniqueSets::new();
        for round in 0..12 {
            let set_count = [1, 3, 50, 7][round % 4];
            sets.reset(set_count);
            let mut oracle = HashSet::new();
            let range = [8, 12, 30, 200][round / 3 % 4];
            for _ in 0..2000 {
                let (set, v) =
                    (rng.value(set_count as u32 + 1) % set_count as u32, rng.value(range));
                assert_eq!(sets.insert(set, v), oracle.insert((set, v)), "insert {set} {v}");
                let (ps, pv) =
                    (rng.value(set_count as u32 + 1) % set_count as u32, rng.value(range));
                assert_eq!(sets.contains(ps, pv), oracle.contains(&(ps, pv)));
            }
            // Every set's inline part plus its spill holds exactly its values.
            assert_eq!(sets.value_count(), oracle.len());
            let expected_spill: usize = (0..set_count as u32)
                .map(|s| oracle.iter().filter(|(os, _)| *os == s).count().saturating_sub(SLOTS))
                .sum();
            assert_eq!(sets.spilled(), expected_spill);
            // Inline values and the spill list each set's values once.
            let mut listed: Vec<(u32, u32)> = (0..set_count as u32)
                .flat_map(|s| sets.inline_values(s).iter().map(move |&v| (s, v)))
                .chain(sets.spilled_values())
                .collect();
            listed.sort_unstable();
            let mut expected: Vec<(u32, u32)> = oracle.iter().copied().collect();
            expected.sort_unstable();
            assert_eq!(listed, expected);
        }
    }

    #[test]
    fn sets_hold_ten_thousand_values_and_u32_max() {
        let mut sets = FastUniqueSets::new();
        sets.reset(3);
        assert!(sets.insert(1, u32::MAX));
        for v in 0..10_000 {
            assert!(sets.insert(1, v));
        }
        assert!(sets.insert(2, u32::MAX));
        assert!(!sets.insert(1, u32::MAX) && !sets.insert(1, 9_999));
        assert!((0..10_000).all(|v| sets.contains(1, v) && !sets.contains(0, v)));
        assert!(sets.contains(1, u32::MAX) && sets.contains(2, u32::MAX));
        assert!(!sets.contains(0, u32::MAX) && !sets.contains(1, 10_000));
        assert_eq!(sets.spilled(), 10_001 - SLOTS);
    }

    #[test]
    fn sets_read_out_every_value_once() {
        let mut rng = SplitMix64(5);
        let mut sets = FastUniqueSets::new();
        for round in 0..6 {
            let set_count = [1, 4, 30][round % 3];
            sets.reset(set_count);
            let mut oracle = HashSet::new();
            for _ in 0..(round * 300) {
                let (set, v) = (rng.value(set_count as u32 + 1) % set_count as u32, rng.value(64));
                sets.insert(set, v);
                oracle.insert((set, v));
            }
            let mut listed: Vec<(u32, u32)> = (0..set_count as u32)
                .flat_map(|s| sets.inline_values(s).iter().map(move |&v| (s, v)))
                .chain(sets.spilled_values())
                .collect();
            assert_eq!(sets.inline_sets().len(), set_count);
            assert!(sets.inline_sets().enumerate().all(|(s, v)| v == sets.inline_values(s as u32)));
            assert!((0..set_count as u32).all(|s| {
                let (slots, count) = sets.inline_slots(s);
                &slots[..count] == sets.inline_values(s)
            }));
            let count = listed.len();
            listed.sort_unstable();
            listed.dedup();
            assert_eq!(listed.len(), count, "a value listed twice");
            assert_eq!(listed.into_iter().collect::<HashSet<_>>(), oracle);
            assert!((0..set_count as u32).all(|s| sets.inline_values(s).len() <= SLOTS));
        }
    }

    #[test]
    fn sets_reset_forgets_stale_slots() {
        let mut sets = FastUniqueSets::new();
        sets.reset(4);
        (0..20).for_each(|v| _ = sets.insert(2, v));
        sets.reset(4);
        assert_eq!(sets.spilled(), 0);
        // Slot memory still holds 0..8 for set 2, masked by a zero fill.
        assert!((0..20).all(|v| !sets.contains(2, v)));
        assert!(sets.insert(2, 5) && sets.contains(2, 5) && !sets.contains(2, 0));
        sets.reset(2); // the count may shrink; buffers are kept
        assert_eq!(sets.set_count(), 2);
    }

    /// `touched_sets` lists exactly the non-empty sets, in the order of
    /// their first value, and a reset (to fewer or more sets) empties every
    /// set though it zeroes only the touched ones.
    #[test]
    fn sets_touched_lists_the_nonempty_sets_in_first_value_order() {
        let mut rng = SplitMix64(17);
        let mut sets = FastUniqueSets::new();
        for round in 0..40 {
            // 10,000 sets with a few touched: zeroed one by one; the rest
            // by one fill.
            let set_count = [1, 9, 64, 3, 200, 5, 10_000, 10_000][round % 8];
            sets.reset(set_count);
            assert!(sets.touched_sets().is_empty());
            for set in 0..set_count as u32 {
                assert!(sets.inline_values(set).is_empty(), "round {round}: set {set} kept values");
                assert!((0..40).all(|v| !sets.contains(set, v)));
            }
            let mut order = Vec::new();
            for _ in 0..(round * 7) {
                let (set, v) = (rng.value(set_count as u32 + 1) % set_count as u32, rng.value(40));
                if !order.contains(&set) {
                    order.push(set);
                }
                if rng.next().is_multiple_of(2) {
                    sets.insert(set, v);
                } else if !sets.contains(set, v) {
                    sets.extend_distinct(&[(set, v)]);
                }
            }
            assert_eq!(sets.touched_sets(), order, "round {round}");
            let nonempty = (0..set_count as u32).filter(|&s| !sets.inline_values(s).is_empty());
            assert_eq!(nonempty.count(), order.len());
        }
    }

    /// On values a set does not hold, `extend_distinct` stores what
    /// `insert` stores, inline and spilled, `u32::MAX` included.
    #[test]
    fn sets_extend_distinct_matches_insert_on_new_values() {
        let mut rng = SplitMix64(23);
        let (mut checked, mut trusted) = (FastUniqueSets::new(), FastUniqueSets::new());
        for round in 0..10 {
            let set_count = [1, 4, 30, 100][round % 4];
            checked.reset(set_count);
            trusted.reset(set_count);
            let mut new = Vec::new();
            for _ in 0..(round * 150) {
                let (set, v) = (rng.value(set_count as u32 + 1) % set_count as u32, rng.value(50));
                if checked.insert(set, v) {
                    new.push((set, v));
                }
            }
            // In batches of every size, the empty one included.
            let mut rest = &new[..];
            for size in (0..).map(|k| k % 7) {
                let (batch, more) = rest.split_at(size.min(rest.len()));
                trusted.extend_distinct(batch);
                rest = more;
                if rest.is_empty() {
                    break;
                }
            }
            assert_eq!(checked.value_count(), new.len());
            assert_eq!(trusted.value_count(), new.len());
            assert!(round < 4 || checked.spilled() > 0, "round {round} must spill");
            assert_eq!(checked.touched_sets(), trusted.touched_sets());
            assert_eq!(checked.spilled(), trusted.spilled());
            for set in 0..set_count as u32 {
                assert_eq!(checked.inline_values(set), trusted.inline_values(set));
            }
            let sorted = |sets: &FastUniqueSets| {
                let mut spilled: Vec<_> = sets.spilled_values().collect();
                spilled.sort_unstable();
                spilled
            };
            assert_eq!(sorted(&checked), sorted(&trusted));
        }
    }

    /// A value given twice to `extend_distinct` (the caller's promise
    /// broken) is listed twice inline, never lost; in the spill, once.
    #[test]
    fn sets_extend_distinct_on_a_repeat_keeps_every_value() {
        let mut sets = FastUniqueSets::new();
        sets.reset(1);
        sets.extend_distinct(&[(0, 5), (0, 5)]);
        assert_eq!(sets.inline_values(0), [5, 5]);
        (10..16).for_each(|v| sets.extend_distinct(&[(0, v)]));
        sets.extend_distinct(&[(0, 99), (0, 99)]);
        assert_eq!(sets.spilled_values().collect::<Vec<_>>(), [(0, 99)]);
        assert_eq!(sets.value_count(), 9);
    }

    /// A batch that panics on a set out of range leaves the values before
    /// it listed and counted, so the next reset still empties every set.
    #[test]
    fn sets_extend_distinct_panic_keeps_the_sets_consistent() {
        let mut sets = FastUniqueSets::new();
        sets.reset(4);
        let batch = [(1, 10), (2, 20), (1, 11), (9, 0), (3, 30)];
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            sets.extend_distinct(&batch);
        }));
        assert!(panicked.is_err());
        assert_eq!(sets.touched_sets(), [1, 2]);
        assert_eq!(sets.value_count(), 3);
        assert_eq!(sets.inline_values(1), [10, 11]);
        sets.reset(4);
        assert!((0..4).all(|set| sets.inline_values(set).is_empty()));
        assert_eq!(sets.value_count(), 0);
    }

    #[test]
    #[should_panic]
    fn sets_out_of_range_panics() {
        let mut sets = FastUniqueSets::new();
        sets.reset(2);
        sets.insert(2, 0);
    }

    #[test]
    fn sets_warm_reset_allocates_nothing() {
        let mut sets = FastUniqueSets::new();
        let frame = |sets: &mut FastUniqueSets| {
            sets.reset(1000);
            for set in 0..1000u32 {
                for v in 0..(set % 13) {
                    sets.insert(set, v * 31 + set);
                }
            }
        };
        frame(&mut sets);
        assert!(sets.spilled() > 0, "the frame must exercise the spill");
        assert_eq!(allocations_in(|| frame(&mut sets)), 0);
        // Trusted inserts, more sets touched than the frame before, and a
        // count that shrinks and grows back within the buffers.
        let trusted = |sets: &mut FastUniqueSets, count: u32| {
            sets.reset(count as usize);
            for set in (0..count).rev() {
                (0..(set % 11)).for_each(|v| sets.extend_distinct(&[(set, v * 7 + set)]));
            }
        };
        trusted(&mut sets, 1000);
        assert_eq!(
            allocations_in(|| [10, 1000, 400, 1000]
                .into_iter()
                .for_each(|n| trusted(&mut sets, n))),
            0
        );
        assert_eq!(sets.touched_sets().len(), 1000 - 1000_usize.div_ceil(11));
    }
}
