//! A leaf's boxes as the pair and query kernels read them, and the choice
//! of kernel for a leaf.
//!
//! Leaves are quantized SoA columns: 16-bit coordinates with the top bit
//! flipped (`q ^ 0x8000`) so that signed SIMD compares order them as
//! unsigned, the box ids, and per box the axes of the leaf's cell that hold
//! its low corner (see [`Cell::owned_axes`]). A slot is 14 bytes against 28
//! for `f32` bounds and an id; the exact `f32` test reads the input only for
//! candidates the integers could not rule out.

use super::cpu::Kernel;
use super::quantize::{Cell, Item};
use super::sweep::sweep_pairs;
use super::tiles::tile_pairs;
use broadphase_storage::{Aabb, AlignedColumn, Lane, SENTINEL_ID};

pub(crate) use super::sweep::SweepScratch;

/// Slots per leaf are padded to a multiple of this, so the 16-lane query
/// kernel and the 4×4 tiles load whole vectors with no scalar tail.
pub(crate) const LEAF_PAD: usize = 16;

/// The flipped quantized coordinate of a padding slot's low and high ends:
/// above and below every box, so padding never overlaps as long as no box
/// spans the whole root on an axis (kernels still mask padding out).
const SENTINEL_LO: i16 = i16::MAX;
const SENTINEL_HI: i16 = i16::MIN;

/// A quantized coordinate as its column stores it.
#[inline(always)]
pub(crate) fn flip(q: u16) -> i16 {
    (q ^ 0x8000) as i16
}

/// The quantized coordinate a column stores as `c`.
#[inline(always)]
pub(crate) fn unflip(c: i16) -> u16 {
    (c as u16) ^ 0x8000
}

/// Leaves laid end to end in padded SoA columns, storage's 64-byte-aligned
/// [`AlignedColumn`]s: every leaf starts on a multiple of [`LEAF_PAD`]
/// slots, so on a 32-byte boundary of its `i16` columns and a 64-byte one
/// of its ids.
#[derive(Debug, Default)]
pub(crate) struct LeafColumns {
    pub(crate) lo: [AlignedColumn<i16>; 3],
    pub(crate) hi: [AlignedColumn<i16>; 3],
    pub(crate) ids: AlignedColumn<u32>,
    /// Owned axes (see [`Cell::owned_axes`]), widened to the coordinates'
    /// 16-bit lanes.
    pub(crate) owned: AlignedColumn<i16>,
}

/// `clone_from` copies the slots in use into the columns' own storage,
/// each column first grown to its source's room (see
/// [`AdaptiveGrid`](super::AdaptiveGrid)'s `clone_from`).
impl Clone for LeafColumns {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        let columns =
            self.lo.iter_mut().chain(&mut self.hi).zip(source.lo.iter().chain(&source.hi));
        for (to, from) in columns.chain([(&mut self.owned, &source.owned)]) {
            copy_column(to, from);
        }
        copy_column(&mut self.ids, &source.ids);
    }
}

/// Copies `from` into `to`, growing `to` to `from`'s room first.
fn copy_column<T: Lane>(to: &mut AlignedColumn<T>, from: &AlignedColumn<T>) {
    if to.capacity() < from.capacity() {
        to.clear();
        to.reserve_exact(from.capacity());
    }
    to.clone_from(from);
}

impl LeafColumns {
    pub(crate) fn clear(&mut self) {
        self.lo.iter_mut().chain(&mut self.hi).for_each(AlignedColumn::clear);
        self.ids.clear();
        self.owned.clear();
    }

    /// Slots in use, padding included.
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }

    pub(crate) fn capacity(&self) -> usize {
        self.lo
            .iter()
            .chain(&self.hi)
            .map(AlignedColumn::capacity)
            .chain([self.ids.capacity(), self.owned.capacity()])
            .min()
            .unwrap_or(0)
    }

    pub(crate) fn reserve_exact(&mut self, slots: usize) {
        let more = slots.saturating_sub(self.len());
        self.lo.iter_mut().chain(&mut self.hi).for_each(|c| c.reserve_exact(more));
        self.ids.reserve_exact(more);
        self.owned.reserve_exact(more);
    }

    /// Appends one leaf of `cell` holding `items`, padded to [`LEAF_PAD`];
    /// returns its first slot.
    pub(crate) fn push_leaf(&mut self, items: &[Item], cell: Cell) -> usize {
        let start = self.len();
        self.write_leaf(start, items, cell);
        start
    }

    /// Makes these columns hold exactly one leaf, at slot 0. Grows, never
    /// shrinks: slots past the leaf's padding keep whatever they held,
    /// which no view of this leaf reaches.
    pub(crate) fn set_only_leaf(&mut self, items: &[Item], cell: Cell) {
        self.write_leaf(0, items, cell);
    }

    /// Writes a leaf at slot `start` (the columns grow to hold it) and its
    /// padding.
    fn write_leaf(&mut self, start: usize, items: &[Item], cell: Cell) {
        let end = start + items.len();
        let padded = start + items.len().next_multiple_of(LEAF_PAD);
        if self.len() < padded {
            for axis in 0..3 {
                self.lo[axis].resize(padded, SENTINEL_LO);
                self.hi[axis].resize(padded, SENTINEL_HI);
            }
            self.ids.resize(padded, SENTINEL_ID);
            self.owned.resize(padded, 0);
        }
        let [lo_x, lo_y, lo_z] = &mut self.lo;
        let [hi_x, hi_y, hi_z] = &mut self.hi;
        let (lo_x, lo_y, lo_z) =
            (&mut lo_x[start..padded], &mut lo_y[start..padded], &mut lo_z[start..padded]);
        let (hi_x, hi_y, hi_z) =
            (&mut hi_x[start..padded], &mut hi_y[start..padded], &mut hi_z[start..padded]);
        let (ids, owned) = (&mut self.ids[start..padded], &mut self.owned[start..padded]);
        for (k, item) in items.iter().enumerate() {
            lo_x[k] = flip(item.lo[0]);
            lo_y[k] = flip(item.lo[1]);
            lo_z[k] = flip(item.lo[2]);
            hi_x[k] = flip(item.hi[0]);
            hi_y[k] = flip(item.hi[1]);
            hi_z[k] = flip(item.hi[2]);
            ids[k] = item.id;
            owned[k] = i16::from(cell.owned_axes(item.lo));
        }
        for k in end - start..padded - start {
            (lo_x[k], lo_y[k], lo_z[k]) = (SENTINEL_LO, SENTINEL_LO, SENTINEL_LO);
            (hi_x[k], hi_y[k], hi_z[k]) = (SENTINEL_HI, SENTINEL_HI, SENTINEL_HI);
            (ids[k], owned[k]) = (SENTINEL_ID, 0);
        }
    }

    /// The leaf of `count` boxes starting at slot `start`, padding included.
    #[inline]
    pub(crate) fn view(&self, start: usize, count: usize) -> LeafView<'_> {
        let end = start + count.next_multiple_of(LEAF_PAD);
        LeafView {
            lo: [&self.lo[0][start..end], &self.lo[1][start..end], &self.lo[2][start..end]],
            hi: [&self.hi[0][start..end], &self.hi[1][start..end], &self.hi[2][start..end]],
            ids: &self.ids[start..end],
            owned: &self.owned[start..end],
            count,
        }
    }
}

/// One leaf's columns: `count` boxes, then padding to a multiple of
/// [`LEAF_PAD`]. Every slice has the same, padded, length.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LeafView<'a> {
    pub(crate) lo: [&'a [i16]; 3],
    pub(crate) hi: [&'a [i16]; 3],
    pub(crate) ids: &'a [u32],
    pub(crate) owned: &'a [i16],
    pub(crate) count: usize,
}

/// A quantized box as the columns store it: low corner, high corner.
pub(crate) type Corners = ([i16; 3], [i16; 3]);

/// An item's box as the columns store it.
#[inline(always)]
pub(crate) fn corners_of(item: &Item) -> Corners {
    (item.lo.map(flip), item.hi.map(flip))
}

impl LeafView<'_> {
    /// The box in `slot`.
    #[inline(always)]
    pub(crate) fn corners(&self, slot: usize) -> Corners {
        (self.lo.map(|column| column[slot]), self.hi.map(|column| column[slot]))
    }

    /// Bit `lane` set when the box in slot `chunk + lane` (16 lanes) meets
    /// `other`; padding lanes are the caller's to mask. The portable twin
    /// of the 16-lane vector compares, written so the compiler vectorizes it.
    #[inline(always)]
    pub(crate) fn meets_mask16(&self, chunk: usize, (lo, hi): Corners) -> u32 {
        let mut mask = 0u32;
        for lane in 0..16 {
            let j = chunk + lane;
            let overlap = (self.lo[0][j] <= hi[0])
                & (lo[0] <= self.hi[0][j])
                & (self.lo[1][j] <= hi[1])
                & (lo[1] <= self.hi[1][j])
                & (self.lo[2][j] <= hi[2])
                & (lo[2] <= self.hi[2][j]);
            mask |= u32::from(overlap) << lane;
        }
        mask
    }

    /// Slots, padding included.
    #[inline]
    pub(crate) fn padded_len(&self) -> usize {
        self.ids.len()
    }

    /// What the SIMD kernels' unchecked loads rely on: every column the
    /// same length, a multiple of [`LEAF_PAD`], holding `count`.
    pub(crate) fn is_padded(&self) -> bool {
        let len = self.padded_len();
        len.is_multiple_of(LEAF_PAD)
            && len >= self.count
            && self.lo.iter().chain(&self.hi).all(|c| c.len() == len)
            && self.owned.len() == len
    }
}

/// Where the pairs of the leaves go: a growing `Vec`, or one that reports
/// running out of memory.
///
/// # Safety
/// When [`reserve`](PairOut::reserve)`(n)` returns `Ok`, the `Vec` that
/// [`pairs`](PairOut::pairs) returns has room for `n` more pairs without
/// growing: the AVX2 sweep stores pairs into that room in bulk, through
/// raw pointers.
pub(crate) unsafe trait PairOut {
    type Error;
    /// Makes room for `more` pairs.
    fn reserve(&mut self, more: usize) -> Result<(), Self::Error>;
    /// The output itself: `push` adds to it, and kernels that store pairs
    /// in bulk write into room they reserved.
    fn pairs(&mut self) -> &mut Vec<[u32; 2]>;
    /// Adds one pair as `[min, max]`; room for it was reserved.
    #[inline(always)]
    fn push(&mut self, a: u32, b: u32) {
        self.pairs().push([a.min(b), a.max(b)]);
    }
}

/// Grows like `Vec::push` (aborts if memory runs out).
#[derive(Debug)]
pub(crate) struct Growing<'a>(pub(crate) &'a mut Vec<[u32; 2]>);

// SAFETY: `reserve_huge` makes room for `more` further pairs (at least
// the length asked for) or aborts.
unsafe impl PairOut for Growing<'_> {
    type Error = core::convert::Infallible;
    #[inline(always)]
    fn reserve(&mut self, more: usize) -> Result<(), Self::Error> {
        let len = self.0.len();
        broadphase_storage::reserve_huge(self.0, len.saturating_add(more));
        Ok(())
    }
    #[inline(always)]
    fn pairs(&mut self) -> &mut Vec<[u32; 2]> {
        self.0
    }
}

/// Grows with `try_reserve`, reporting failure as
/// [`PairsError`](super::PairsError).
#[derive(Debug)]
pub(crate) struct Fallible<'a>(pub(crate) &'a mut Vec<[u32; 2]>);

// SAFETY: `try_reserve_huge` returns `Ok` only with room for `more`
// further pairs (at least the length asked for).
unsafe impl PairOut for Fallible<'_> {
    type Error = super::PairsError;
    #[inline(always)]
    fn reserve(&mut self, more: usize) -> Result<(), Self::Error> {
        let found = self.0.len();
        broadphase_storage::try_reserve_huge(self.0, found.saturating_add(more))
            .map_err(|_| super::PairsError::OutOfMemory { found })
    }
    #[inline(always)]
    fn pairs(&mut self) -> &mut Vec<[u32; 2]> {
        self.0
    }
}

/// What a leaf's pair kernels need besides the leaf.
#[derive(Debug)]
pub(crate) struct LeafContext<'a> {
    pub(crate) kernel: Kernel,
    pub(crate) boxes: &'a [Aabb],
    pub(crate) sweep_above: usize,
}

/// Reports every pair of the leaf's boxes that overlaps in `f32` and whose
/// reference point the leaf holds. A leaf of more than `sweep_above` boxes
/// must have its slots sorted by low x.
pub(crate) fn leaf_pairs<O: PairOut>(
    leaf: &LeafView<'_>,
    context: &LeafContext<'_>,
    sweep: &mut SweepScratch,
    out: &mut O,
) -> Result<(), O::Error> {
    if leaf.count < 2 {
        return Ok(());
    }
    assert!(leaf.is_padded(), "leaf columns are not padded");
    if leaf.count > context.sweep_above {
        sweep_pairs(context.kernel, leaf, context.boxes, sweep, out)
    } else {
        tile_pairs(context.kernel, leaf, context.boxes, out)
    }
}

/// Leaves of at most this many boxes are tested straight from the build's
/// items: gathering them into columns costs more than the few pairs.
pub(crate) const SMALL_LEAF: usize = 16;

/// Leaves of at most this many boxes are tested pair by pair on their
/// items (AVX2 builds): fewer instructions than a 16-lane row per box.
pub(crate) const TINY_LEAF: usize = 8;

/// All pairs of a tiny leaf (at most [`TINY_LEAF`] boxes) straight from its
/// items, one pair at a time: each item is one 128-bit vector, and a pair
/// is four instructions (two saturating subtractions say `a.lo <= b.hi`
/// and `b.lo <= a.hi` on all three axes at once).
pub(crate) fn tiny_leaf_pairs<O: PairOut>(
    kernel: Kernel,
    items: &[Item],
    cell: Cell,
    boxes: &[Aabb],
    out: &mut O,
) -> Result<(), O::Error> {
    debug_assert!((2..=TINY_LEAF).contains(&items.len()));
    match kernel {
        #[cfg(simd)]
        // SAFETY: the token proves the CPU check passed.
        Kernel::Avx2(avx2) => unsafe { x86::tiny_leaf_pairs_avx2(avx2, items, cell, boxes, out) },
        Kernel::Scalar => small_leaf_pairs(kernel, items, cell, boxes, out),
    }
}

/// A candidate pair of a tiny leaf's items: kept if the leaf owns it and
/// the boxes overlap (strictly as integers, or exactly in `f32`).
#[cfg(simd)]
#[inline(always)]
fn report_items<O: PairOut>(a: &Item, b: &Item, cell: Cell, boxes: &[Aabb], out: &mut O) {
    if cell.owned_axes(a.lo) | cell.owned_axes(b.lo) != super::quantize::OWNS_PAIR {
        return;
    }
    if surely_overlap(corners_of(a), corners_of(b))
        || boxes[a.id as usize].overlaps(&boxes[b.id as usize])
    {
        out.push(a.id, b.id);
    }
}

#[cfg(simd)]
mod x86 {
    use super::{Cell, Item, PairOut, TINY_LEAF, report_items};
    use crate::grid::cpu::Avx2Token;
    use broadphase_storage::Aabb;
    use std::arch::x86_64::*;

    /// Compiled for AVX2, which the token proves (SSE4.1 and SSSE3 are
    /// what is used).
    #[target_feature(enable = "avx2")]
    pub(super) fn tiny_leaf_pairs_avx2<O: PairOut>(
        _: Avx2Token,
        items: &[Item],
        cell: Cell,
        boxes: &[Aabb],
        out: &mut O,
    ) -> Result<(), O::Error> {
        let count = items.len();
        assert!(count <= TINY_LEAF);
        out.reserve(count * (count - 1) / 2)?;
        // An item is lo x, y, z, hi x, y, z (16-bit lanes 0..6), then its
        // id; `swapped` puts hi in lanes 0..3 and lo in lanes 3..6.
        let swap = _mm_setr_epi8(6, 7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 12, 13, 14, 15);
        let mut plain = [_mm_setzero_si128(); TINY_LEAF];
        let mut swapped = [_mm_setzero_si128(); TINY_LEAF];
        for (k, item) in items.iter().enumerate() {
            // SAFETY: `Item` is 16 bytes, 16-byte aligned.
            plain[k] = unsafe { _mm_load_si128((item as *const Item).cast()) };
            swapped[k] = _mm_shuffle_epi8(plain[k], swap);
        }
        let coordinates = _mm_setr_epi16(-1, -1, -1, -1, -1, -1, 0, 0);
        for i in 0..count - 1 {
            for j in i + 1..count {
                // Lanes 0..3: a.lo - b.hi, zero when a.lo <= b.hi; lanes
                // 3..6: b.lo - a.hi, zero when b.lo <= a.hi (saturating).
                let a_past_b = _mm_subs_epu16(plain[i], swapped[j]);
                let b_past_a = _mm_subs_epu16(swapped[j], plain[i]);
                let apart = _mm_blend_epi16::<0b0011_1000>(a_past_b, b_past_a);
                if _mm_testz_si128(apart, coordinates) != 0 {
                    report_items(&items[i], &items[j], cell, boxes, out);
                }
            }
        }
        Ok(())
    }
}

/// All pairs of a small leaf, from its items as the build left them:
/// gathered into 16-lane columns on the stack, then each row against all 16
/// columns at once, ownership included; only the pairs that touch within a
/// quantization step take the exact test.
pub(crate) fn small_leaf_pairs<O: PairOut>(
    kernel: Kernel,
    items: &[Item],
    cell: Cell,
    boxes: &[Aabb],
    out: &mut O,
) -> Result<(), O::Error> {
    let count = items.len();
    debug_assert!((2..=SMALL_LEAF).contains(&count));
    out.reserve(count * (count - 1) / 2)?;
    let mut columns =
        SmallLeaf { columns: [[SENTINEL_LO; SMALL_LEAF]; 7], ids: [SENTINEL_ID; SMALL_LEAF] };
    for (k, item) in items.iter().enumerate() {
        for axis in 0..3 {
            columns.columns[axis][k] = flip(item.lo[axis]);
            columns.columns[3 + axis][k] = flip(item.hi[axis]);
        }
        columns.columns[6][k] = i16::from(cell.owned_axes(item.lo));
        columns.ids[k] = item.id;
    }
    let masks = super::tiles::leaf_masks16(kernel, &columns.columns, count);
    for (i, (&found, &sure)) in masks.found.iter().zip(&masks.sure).enumerate().take(count - 1) {
        // Columns after the row and before the padding.
        let live = ((1u32 << count) - 1) & (u32::MAX << (i + 1));
        let row_id = columns.ids[i];
        let mut certain = found & sure & live;
        while certain != 0 {
            out.push(row_id, columns.ids[certain.trailing_zeros() as usize]);
            certain &= certain - 1;
        }
        let mut touching = found & !sure & live;
        while touching != 0 {
            let id = columns.ids[touching.trailing_zeros() as usize];
            touching &= touching - 1;
            if boxes[row_id as usize].overlaps(&boxes[id as usize]) {
                out.push(row_id, id);
            }
        }
    }
    Ok(())
}

/// A small leaf's columns on the stack: low x, y, z, high x, y, z, owned
/// axes; then the ids.
struct SmallLeaf {
    columns: [[i16; SMALL_LEAF]; 7],
    ids: [u32; SMALL_LEAF],
}

/// Whether two quantized boxes overlap strictly on every axis, which proves
/// the `f32` boxes overlap.
///
/// Quantization is monotone, so `q(u) < q(v)` implies `u < v`: a strict
/// integer overlap is an `f32` overlap, and only a pair that touches within
/// one quantization step needs the exact test, with its two reads of the
/// input (cache misses on a large scene).
#[inline(always)]
pub(crate) fn surely_overlap((a_lo, a_hi): Corners, (b_lo, b_hi): Corners) -> bool {
    (0..3).fold(true, |sure, axis| sure & (a_lo[axis] < b_hi[axis]) & (b_lo[axis] < a_hi[axis]))
}

/// A candidate pair of slots: kept if the leaf owns it and the `f32` boxes
/// overlap.
#[inline(always)]
pub(crate) fn report<O: PairOut>(
    leaf: &LeafView<'_>,
    boxes: &[Aabb],
    i: usize,
    j: usize,
    out: &mut O,
) {
    if leaf.owned[i] | leaf.owned[j] == i16::from(super::quantize::OWNS_PAIR) {
        let (a, b) = (leaf.ids[i], leaf.ids[j]);
        if surely_overlap(leaf.corners(i), leaf.corners(j))
            || boxes[a as usize].overlaps(&boxes[b as usize])
        {
            out.push(a, b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Fallible, Growing, LEAF_PAD, PairOut};
    use crate::AdaptiveGrid;
    use broadphase_storage::Aabb;
    use glam::Vec3;

    /// A pair output that grows large sits on memory advised huge pages,
    /// whichever way it grows, and keeps the pairs it held.
    #[test]
    fn a_large_pair_output_grows_into_advised_pages() {
        let (mut growing, mut fallible) = (vec![[1, 2]], vec![[3, 4]]);
        Growing(&mut growing).reserve(1_000_000).unwrap();
        Fallible(&mut fallible).reserve(1_000_000).unwrap();
        for (pairs, first) in [(&growing, [1, 2]), (&fallible, [3, 4])] {
            assert!(pairs.capacity() > 1_000_000 && pairs[..] == [first]);
            let middle = pairs.as_ptr() as usize + 4_000_000;
            assert_ne!(broadphase_testkit::huge_pages_advised(middle), Some(false));
        }
        let refused = Fallible(&mut fallible).reserve(usize::MAX / 16);
        assert!(refused.is_err(), "more room than memory is an error, not an abort");
        assert_eq!(fallible, [[3, 4]]);
    }

    fn aligned<T>(s: &[T], bytes: usize) -> bool {
        (s.as_ptr() as usize).is_multiple_of(bytes)
    }

    /// Every kept leaf starts on a whole 16-lane vector of each column: 32
    /// bytes into the `i16` columns, 64 into the ids.
    #[test]
    fn kept_leaves_start_on_aligned_vectors() {
        let boxes: Vec<Aabb> = (0..3000)
            .map(|i| {
                let c = Vec3::new((i % 17) as f32, (i % 13) as f32 * 1.5, (i % 11) as f32 * 2.0);
                Aabb::from_center_half_extent(c, Vec3::splat(0.4 + (i % 5) as f32 * 0.1))
            })
            .collect();
        let mut grid = AdaptiveGrid::default();
        grid.build(&boxes).expect("valid boxes");
        let mut leaves = 0;
        for node in grid.builder.nodes.iter().filter(|n| n.is_leaf()) {
            let leaf = grid.leaves.view(node.first as usize, node.count as usize);
            assert!(leaf.is_padded());
            for column in leaf.lo.iter().chain(&leaf.hi).chain([&leaf.owned]) {
                assert!(aligned(column, LEAF_PAD * size_of::<i16>()));
            }
            assert!(aligned(leaf.ids, 64));
            leaves += 1;
        }
        assert!(leaves > 10, "the scene must split");
    }
}
