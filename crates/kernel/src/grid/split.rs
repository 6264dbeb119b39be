//! The split of one node: which child cells its boxes reach, whether
//! splitting pays, and the counting sort that writes the children's items.
//!
//! This is the one place that defines cells, levels, level skipping, the
//! replication limit and the copy budget. The single-thread build walks the
//! hierarchy with it; a parallel caller runs the same `plan` and `scatter` on
//! whichever node it schedules.

use super::cpu::Kernel;
use super::quantize::{Cell, Item, LEVELS};
use broadphase_storage::Pool;

/// The tuning and limits a split obeys.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SplitParams {
    /// The kernel that runs: with AVX2, the count pass uses SSE4.1.
    pub(crate) kernel: Kernel,
    /// At most this many boxes: a leaf.
    pub(crate) leaf_capacity: usize,
    /// At most this many copies per box in one split.
    pub(crate) max_replication: f32,
    /// At most this many items may the split write.
    pub(crate) room: usize,
}

/// A decided split: the 4×4×4 block of child cells and their box counts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Split {
    /// The block's first cell: its depth is the children's depth (deeper
    /// than the node's + 1 when levels were skipped), its prefix the cell
    /// coordinates of the block's low corner, a multiple of 4.
    pub(crate) block: Cell,
    /// Boxes per child cell, index `x + 4y + 16z` within the block.
    pub(crate) counts: [u32; 64],
    /// Items the children hold in all.
    pub(crate) total: usize,
}

impl Split {
    /// Bit `c` set when child cell `c` holds a box.
    pub(crate) fn occupancy(&self) -> u64 {
        (0..64).fold(0u64, |mask, cell| mask | u64::from(self.counts[cell] > 0) << cell)
    }

    /// The cell of child `c` of the block.
    #[inline]
    pub(crate) fn child_cell(&self, c: usize) -> Cell {
        child_cell(self.block, c)
    }
}

/// The cell of child `c` (`x + 4y + 16z`) of a block.
#[inline]
pub(crate) fn child_cell(block: Cell, c: usize) -> Cell {
    let mut cell = block;
    for axis in 0..3 {
        cell.prefix[axis] += ((c >> (2 * axis)) & 3) as u16;
    }
    cell
}

/// Per-item scratch of the split being planned, kept across nodes and
/// frames: reset per node, never freed.
#[derive(Debug, Default)]
pub(crate) struct Splitter {
    /// Per item: the child range, 2 bits per end, 4 bits per axis
    /// (`lx | hx << 2 | ly << 4 | …`).
    codes: Pool<u16>,
    /// Items reaching more than one child cell, by index.
    spanning: Pool<u32>,
}

/// What a node's counts in a block say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Split into the block's occupied cells.
    Split,
    /// One child would get every box: try the block under the deepest cell
    /// that holds the boxes' union (see [`deeper_block`]).
    Deeper,
    /// Make the node a leaf.
    Leaf,
}

/// The block one level below `cell`, or `None` when a node of `count`
/// boxes in `cell` is a leaf whatever its boxes: few enough, or at the
/// finest level.
pub(crate) fn first_block(cell: Cell, count: usize, leaf_capacity: usize) -> Option<Cell> {
    if count <= leaf_capacity.max(1) || u32::from(cell.depth) >= LEVELS {
        return None;
    }
    Some(Cell { prefix: cell.prefix.map(|p| p << 2), depth: cell.depth + 1 })
}

/// Judges a node of `count` boxes by its child counts in a block (`total`
/// items in all). `deeper_tried`: the block already is the deeper one.
pub(crate) fn judge(
    counts: &[u32; 64],
    total: usize,
    count: usize,
    deeper_tried: bool,
    params: &SplitParams,
) -> Verdict {
    if counts.iter().any(|&c| c as usize == count) {
        // One child would get every box. Split where the boxes' union
        // (clipped to the node) stops fitting in one cell instead, so a
        // cluster far from the rest gets fine cells at once rather than a
        // chain of one-child nodes; if that too separates nothing, these
        // boxes are a pile.
        return if deeper_tried { Verdict::Leaf } else { Verdict::Deeper };
    }
    let too_many_copies = total as f64 > f64::from(params.max_replication) * count as f64;
    if too_many_copies || total > params.room { Verdict::Leaf } else { Verdict::Split }
}

impl Splitter {
    /// Whether and how to split a node holding `items` in `cell`; `None`
    /// makes it a leaf. Leaves the codes `scatter` needs.
    pub(crate) fn plan(
        &mut self,
        items: &[Item],
        cell: Cell,
        params: &SplitParams,
    ) -> Option<Split> {
        let count = items.len();
        let mut block = first_block(cell, count, params.leaf_capacity)?;
        let mut deeper_tried = false;
        loop {
            let split = self.count(items, block, params.kernel);
            match judge(&split.counts, split.total, count, deeper_tried, params) {
                Verdict::Split => return Some(split),
                Verdict::Leaf => return None,
                Verdict::Deeper => {
                    block = deeper_block(union(items), cell)?;
                    deeper_tried = true;
                }
            }
        }
    }

    /// Child ranges and per-cell counts of `items` in `block`.
    pub(crate) fn count(&mut self, items: &[Item], block: Cell, kernel: Kernel) -> Split {
        self.codes.reset();
        self.spanning.reset();
        // Every code is written below; sizing first lets the loops store by
        // index instead of growing the pools item by item.
        self.codes.allocate(items.len(), 0);
        self.spanning.allocate(items.len(), 0);
        // Four histograms, item by item in turn: consecutive items often
        // share a cell (a cluster, or a node's items in their parent's
        // order), and one histogram would make each increment wait for the
        // last one's store.
        let mut partial = [[0u32; 64]; 4];
        let spanning = match kernel {
            #[cfg(simd)]
            Kernel::Avx2(avx2) => {
                let (codes, spanning) = (&mut self.codes, &mut self.spanning);
                // SAFETY: the token proves the CPU check passed.
                unsafe {
                    x86::codes_sse41(avx2.sse41(), items, block, codes, spanning, &mut partial)
                }
            }
            Kernel::Scalar => {
                codes_scalar(items, block, &mut self.codes, &mut self.spanning, &mut partial)
            }
        };
        self.spanning.truncate(spanning);
        let mut counts: [u32; 64] =
            core::array::from_fn(|c| partial[0][c] + partial[1][c] + partial[2][c] + partial[3][c]);
        for &index in &self.spanning {
            let mut others = other_cells(self.codes[index as usize]);
            while others != 0 {
                counts[others.trailing_zeros() as usize] += 1;
                others &= others - 1;
            }
        }
        let total = counts.iter().map(|&c| c as usize).sum();
        Split { block, counts, total }
    }

    /// The counting sort: writes `items` into `out` (`split.total` long),
    /// child by child in cell order, and returns each child's first index.
    /// `split` must be what `plan` just returned for these items.
    pub(crate) fn scatter(&self, items: &[Item], split: &Split, out: &mut [Item]) -> [u32; 64] {
        debug_assert_eq!(out.len(), split.total);
        let mut first = [0u32; 64];
        let mut running = 0u32;
        for (cell, &count) in split.counts.iter().enumerate() {
            first[cell] = running;
            running += count;
        }
        let mut cursor = first;
        self.place_each(items, |cell, item| {
            out[cursor[cell] as usize] = item;
            cursor[cell] += 1;
        });
        first
    }
}

impl Splitter {
    /// Hands every item to `place` once per child cell it reaches, in the
    /// counting sort's order: each item into its low corner cell, then the
    /// items listed as spanning into their other cells. Both scatters write
    /// in this order, so a child's items come out the same either way.
    #[inline(always)]
    fn place_each(&self, items: &[Item], mut place: impl FnMut(usize, Item)) {
        debug_assert_eq!(self.codes.len(), items.len());
        for (item, &code) in items.iter().zip(&self.codes) {
            place(low_cell(code), *item);
        }
        for &index in &self.spanning {
            let item = items[index as usize];
            let mut others = other_cells(self.codes[index as usize]);
            while others != 0 {
                place(others.trailing_zeros() as usize, item);
                others &= others - 1;
            }
        }
    }

    /// The counting sort into separate destinations: `out[c]` receives the
    /// items that reach child cell `c`, in the same order `scatter` would
    /// write them. Each `out[c]` must be exactly as long as the count of
    /// cell `c` that the last `count` of these items returned.
    pub(crate) fn scatter_to(&self, items: &[Item], out: &mut [&mut [Item]; 64]) {
        let mut cursor = [0usize; 64];
        self.place_each(items, |cell, item| {
            out[cell][cursor[cell]] = item;
            cursor[cell] += 1;
        });
        debug_assert!((0..64).all(|c| cursor[c] == out[c].len()));
    }
}

/// The low corner and high corner of a set of items (empty: inverted).
pub(crate) fn union(items: &[Item]) -> ([u16; 3], [u16; 3]) {
    let mut lo = [u16::MAX; 3];
    let mut hi = [0u16; 3];
    for item in items {
        for axis in 0..3 {
            lo[axis] = lo[axis].min(item.lo[axis]);
            hi[axis] = hi[axis].max(item.hi[axis]);
        }
    }
    (lo, hi)
}

/// The block one level below the deepest cell (inside `cell`) that holds
/// the union `(lo, hi)` of a node's items clipped to `cell`, or `None` if
/// that cell is `cell` itself or is at the finest level.
pub(crate) fn deeper_block((lo, hi): ([u16; 3], [u16; 3]), cell: Cell) -> Option<Cell> {
    let mut depth = LEVELS;
    let mut clipped_lo = [0u32; 3];
    for axis in 0..3 {
        let (cell_lo, cell_hi) = cell.span(axis);
        let l = u32::from(lo[axis]).max(cell_lo);
        let h = u32::from(hi[axis]).min(cell_hi);
        if l > h {
            return None; // no item meets the cell: nothing to split
        }
        clipped_lo[axis] = l;
        // Levels whose cell holds both ends: the common leading bit pairs.
        depth = depth.min(((l ^ h) as u16).leading_zeros() / 2);
    }
    if depth <= u32::from(cell.depth) || depth >= LEVELS {
        return None;
    }
    let holder =
        Cell { prefix: clipped_lo.map(|l| (l >> (16 - 2 * depth)) as u16), depth: depth as u8 };
    Some(Cell { prefix: holder.prefix.map(|p| p << 2), depth: holder.depth + 1 })
}

/// Writes every item's child range code, counts it in its low corner cell
/// (branch-free, in histogram `index % 4`), and lists the items reaching
/// more cells; returns how many it listed.
fn codes_scalar(
    items: &[Item],
    block: Cell,
    codes: &mut [u16],
    spanning: &mut [u32],
    counts: &mut [[u32; 64]; 4],
) -> usize {
    let shift = block.shift();
    let base = block.prefix.map(u32::from);
    let mut listed = 0;
    for (index, (item, code_out)) in items.iter().zip(codes.iter_mut()).enumerate() {
        let code = range_code(item, shift, base);
        *code_out = code;
        counts[index & 3][low_cell(code)] += 1;
        spanning[listed] = index as u32;
        listed += usize::from(spans_cells(code));
    }
    listed
}

#[cfg(simd)]
mod x86 {
    use super::{Cell, Item, low_cell, spans_cells};
    use crate::grid::cpu::Sse41Token;
    use std::arch::x86_64::*;

    /// [`codes_scalar`](super::codes_scalar) with the code of an item in a
    /// few vector instructions: shift all six coordinates, clamp the lows
    /// up and the highs down to the block, subtract the base, and sum the
    /// two-bit fields into place with one multiply-add. Compiled for
    /// SSE4.1, which the token proves.
    #[target_feature(enable = "sse4.1")]
    pub(super) fn codes_sse41(
        _: Sse41Token,
        items: &[Item],
        block: Cell,
        codes: &mut [u16],
        spanning: &mut [u32],
        counts: &mut [[u32; 64]; 4],
    ) -> usize {
        assert!(codes.len() >= items.len() && spanning.len() >= items.len());
        let [bx, by, bz] = block.prefix.map(|p| p as i16);
        // A low end is never above the block and a high end never below it
        // (every item meets the node inside the block), so one clamp each.
        let floor = _mm_setr_epi16(bx, by, bz, 0, 0, 0, 0, 0);
        let ceiling = _mm_setr_epi16(-1, -1, -1, bx + 3, by + 3, bz + 3, 0, 0);
        let base = _mm_setr_epi16(bx, by, bz, bx, by, bz, 0, 0);
        let weights = _mm_setr_epi16(1, 16, 256, 4, 64, 1024, 0, 0);
        let shift = _mm_cvtsi32_si128(block.shift() as i32);
        let mut listed = 0;
        for (index, item) in items.iter().enumerate() {
            // SAFETY: `Item` is 16 bytes, 16-byte aligned.
            let v = unsafe { _mm_load_si128((item as *const Item).cast()) };
            let cells = _mm_srl_epi16(v, shift);
            let clamped = _mm_min_epu16(_mm_max_epu16(cells, floor), ceiling);
            let fields = _mm_madd_epi16(_mm_sub_epi16(clamped, base), weights);
            let fields = _mm_add_epi32(fields, _mm_srli_si128::<8>(fields));
            let code = (_mm_cvtsi128_si32(fields) + _mm_extract_epi32::<1>(fields)) as u16;
            // SAFETY: `index < items.len() <= codes.len(), spanning.len()`,
            // asserted above; `low_cell` is below 64.
            unsafe {
                *codes.get_unchecked_mut(index) = code;
                *counts.get_unchecked_mut(index & 3).get_unchecked_mut(low_cell(code)) += 1;
                *spanning.get_unchecked_mut(listed) = index as u32;
            }
            listed += usize::from(spans_cells(code));
        }
        listed
    }
}

/// The child range of an item in a block, packed: on each axis the first
/// and last child (0..4) its quantized bounds reach, clamped to the block.
#[inline(always)]
fn range_code(item: &Item, shift: u32, base: [u32; 3]) -> u16 {
    let mut code = 0u16;
    for (axis, &base) in base.iter().enumerate() {
        let first = (u32::from(item.lo[axis]) >> shift).clamp(base, base + 3) - base;
        let last = (u32::from(item.hi[axis]) >> shift).clamp(base, base + 3) - base;
        code |= ((first | last << 2) as u16) << (4 * axis);
    }
    code
}

/// The child cell of an item's low corner.
#[inline(always)]
fn low_cell(code: u16) -> usize {
    let code = usize::from(code);
    (code & 3) | ((code >> 2) & 0x0C) | ((code >> 4) & 0x30)
}

/// Whether an item reaches more than one child cell.
#[inline(always)]
fn spans_cells(code: u16) -> bool {
    (code >> 2) & 0x333 != code & 0x333
}

/// The child cells of a packed range other than its low corner's, as a
/// 64-cell mask: three table lookups instead of a loop nest.
#[inline(always)]
fn other_cells(code: u16) -> u64 {
    let code = usize::from(code);
    let axis = |a: usize| AXIS_CELLS[a][(code >> (4 * a)) & 3][(code >> (4 * a + 2)) & 3];
    axis(0) & axis(1) & axis(2) & !(1u64 << low_cell(code as u16))
}

/// `AXIS_CELLS[axis][first][last]`: the 64-cell mask (bit `x + 4y + 16z`)
/// of every cell of a block whose coordinate on `axis` is in
/// `first..=last`.
pub(crate) const AXIS_CELLS: [[[u64; 4]; 4]; 3] = {
    let mut table = [[[0u64; 4]; 4]; 3];
    let mut axis = 0;
    while axis < 3 {
        let mut first = 0;
        while first < 4 {
            let mut last = first;
            while last < 4 {
                let mut mask = 0u64;
                let mut cell = 0;
                while cell < 64 {
                    let k = (cell >> (2 * axis)) & 3;
                    if k >= first && k <= last {
                        mask |= 1 << cell;
                    }
                    cell += 1;
                }
                table[axis][first][last] = mask;
                last += 1;
            }
            first += 1;
        }
        axis += 1;
    }
    table
};

impl Splitter {
    /// Room in the code and spanning lists.
    pub(crate) fn capacity(&self) -> [usize; 2] {
        [self.codes.capacity(), self.spanning.capacity()]
    }

    /// Grows the lists to at least this room.
    pub(crate) fn reserve_exact(&mut self, codes: usize, spanning: usize) {
        self.codes.reserve_exact(codes.saturating_sub(self.codes.len()));
        self.spanning.reserve_exact(spanning.saturating_sub(self.spanning.len()));
    }
}
