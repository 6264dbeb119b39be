//! One box against the kept build, descending only into occupied cells.

#[cfg(simd)]
use super::cpu::Avx2PopcntToken;
use super::cpu::Kernel;
use super::hierarchy::AdaptiveGrid;
use super::leaf::{Corners, LeafView, corners_of, surely_overlap};
use super::quantize::{Item, LEVELS, OWNS_PAIR, Quantizer};
use super::split::AXIS_CELLS;
use broadphase_storage::{Aabb, InputError};
use core::mem::MaybeUninit;

impl AdaptiveGrid {
    /// Writes into `out` (cleared first) the index of every kept box that
    /// overlaps `query`, each once, in unspecified order.
    ///
    /// # Errors
    /// [`InputError`] with index 0 when the query box itself breaks the
    /// input contract; `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use glam::Vec3;
    /// let boxes: Vec<Aabb> =
    ///     (0..100).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 0.5))).collect();
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// let mut hits = Vec::new();
    /// grid.query_aabb(&Aabb::new(Vec3::splat(10.25), Vec3::splat(11.0)), &mut hits)?;
    /// hits.sort();
    /// assert_eq!(hits, [10, 11]);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn query_aabb(&self, query: &Aabb, out: &mut Vec<u32>) -> Result<(), InputError> {
        out.clear();
        if !query.is_valid() {
            query.validate(0)?;
        }
        let test = BoxTest { query, boxes: &self.boxes };
        self.walk(out, test);
        Ok(())
    }

    /// [`query_aabb`](Self::query_aabb) under the name the crate's contract
    /// promises: outside code calls `AdaptiveGrid::query`, so it stays, and
    /// answers exactly as `query_aabb`.
    ///
    /// # Errors
    /// As [`query_aabb`](Self::query_aabb).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use glam::Vec3;
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&[Aabb::new(Vec3::ZERO, Vec3::ONE)])?;
    /// let mut hits = Vec::new();
    /// grid.query(&Aabb::new(Vec3::splat(0.5), Vec3::splat(2.0)), &mut hits)?;
    /// assert_eq!(hits, [0]);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    #[inline]
    pub fn query(&self, query: &Aabb, out: &mut Vec<u32>) -> Result<(), InputError> {
        self.query_aabb(query, out)
    }

    /// Pushes onto `out` every kept box, each once, whose quantized box
    /// meets the query's ([`SlotTest::quantized`]) and that `accept` keeps.
    #[inline(always)]
    pub(super) fn walk(&self, out: &mut Vec<u32>, accept: impl SlotTest) {
        if !self.kept || self.builder.nodes.is_empty() {
            return;
        }
        #[cfg(simd)]
        if let Some(avx2_popcnt) = self.kernel.avx2_popcnt() {
            // SAFETY: the token proves the CPU check passed.
            return unsafe { self.walk_avx2(avx2_popcnt, out, accept) };
        }
        self.walk_with(out, accept);
    }

    /// [`walk_with`](Self::walk_with) compiled for AVX2 and POPCNT (child
    /// indices are a population count per visited cell), which the token
    /// proves.
    #[cfg(simd)]
    #[target_feature(enable = "avx2,popcnt")]
    fn walk_avx2(&self, _: Avx2PopcntToken, out: &mut Vec<u32>, accept: impl SlotTest) {
        self.walk_with(out, accept);
    }

    /// The descent, depth first with an explicit stack: every occupied child
    /// cell the query meets, then every leaf's slots.
    #[inline(always)]
    fn walk_with(&self, out: &mut Vec<u32>, mut accept: impl SlotTest) {
        let quantized = accept.quantized(&self.quantizer);
        let query_corners = corners_of(&quantized);
        let nodes = &self.builder.nodes;
        // At most 63 siblings wait per level above the current node. Left
        // uninitialised: zeroing 2 KiB would cost more than most queries.
        let mut stack = [const { MaybeUninit::<u32>::uninit() }; 64 * LEVELS as usize];
        stack[0].write(0); // the root
        let mut waiting = 1;
        while waiting > 0 {
            waiting -= 1;
            // SAFETY: slots below `waiting` were all written: slot 0 above,
            // every other by the push that raised `waiting` past it.
            let index = unsafe { stack[waiting].assume_init() };
            let node = &nodes[index as usize];
            if node.is_leaf() {
                let leaf = self.leaves.view(node.first as usize, node.count as usize);
                let owned = i16::from(node.cell.owned_axes(quantized.lo));
                let mut report = |slot: usize| {
                    if owned | leaf.owned[slot] == i16::from(OWNS_PAIR) {
                        let id = leaf.ids[slot];
                        if accept.accept(id, query_corners, leaf.corners(slot)) {
                            out.push(id);
                        }
                    }
                };
                leaf_hits(self.kernel, &leaf, &quantized, &mut report);
                continue;
            }
            let Some(cells) = cells_met(node.block, &quantized) else { continue };
            let mut visit = cells & node.occupancy;
            while visit != 0 {
                let cell = visit.trailing_zeros();
                visit &= visit - 1;
                let below = node.occupancy & ((1u64 << cell) - 1);
                stack[waiting].write(node.first + below.count_ones());
                waiting += 1;
            }
        }
    }
}

/// A query as the walk sees it: a quantized box, and the exact test of the
/// boxes whose quantized boxes meet it.
pub(super) trait SlotTest {
    /// The query's quantized box. Any box around the query works: a box's
    /// reference point with it (the max of the two low corners) lies in
    /// exactly one leaf the walk visits and the box is in, so each box is
    /// reported once.
    fn quantized(&self, quantizer: &Quantizer) -> Item;

    /// Whether kept box `id`, whose quantized box is `slot`, answers the
    /// query.
    fn accept(&mut self, id: u32, query: Corners, slot: Corners) -> bool;
}

/// The box query's test: the quantized boxes overlap strictly, or the
/// boxes overlap.
struct BoxTest<'a> {
    query: &'a Aabb,
    boxes: &'a [Aabb],
}

impl SlotTest for BoxTest<'_> {
    /// Clamped to the build's bounds like every box.
    #[inline(always)]
    fn quantized(&self, quantizer: &Quantizer) -> Item {
        quantizer.item(self.query, 0)
    }

    #[inline(always)]
    fn accept(&mut self, id: u32, query: Corners, slot: Corners) -> bool {
        surely_overlap(query, slot) || self.boxes[id as usize].overlaps(self.query)
    }
}

/// The cells of a block the quantized box meets, or `None` if it misses the
/// block.
#[inline(always)]
pub(super) fn cells_met(block: super::quantize::Cell, quantized: &Item) -> Option<u64> {
    let shift = block.shift();
    let mut cells = !0u64;
    for (axis, table) in AXIS_CELLS.iter().enumerate() {
        let base = u32::from(block.prefix[axis]);
        let first = u32::from(quantized.lo[axis]) >> shift;
        let last = u32::from(quantized.hi[axis]) >> shift;
        if last < base || first > base + 3 {
            return None;
        }
        let first = (first.max(base) - base) as usize;
        let last = (last.min(base + 3) - base) as usize;
        cells &= table[first][last];
    }
    Some(cells)
}

/// Calls `hit(slot)` for every slot of the leaf whose quantized box meets
/// the quantized query.
#[inline(always)]
pub(super) fn leaf_hits(
    kernel: Kernel,
    leaf: &LeafView<'_>,
    query: &Item,
    hit: &mut impl FnMut(usize),
) {
    assert!(leaf.is_padded(), "leaf columns are not padded");
    let (lo, hi) = corners_of(query);
    match kernel {
        #[cfg(simd)]
        Kernel::Avx2(avx2) => {
            // SAFETY: the token proves the CPU check passed, and the leaf's
            // padding was just checked.
            unsafe { x86::leaf_hits_avx2(avx2, leaf, lo, hi, hit) }
        }
        Kernel::Scalar => {
            for chunk in (0..leaf.count).step_by(16) {
                report_mask(leaf.meets_mask16(chunk, (lo, hi)), chunk, leaf.count, hit);
            }
        }
    }
}

/// Reports the set bits of a 16-lane mask at `chunk`, dropping padding.
#[inline(always)]
fn report_mask(mut mask: u32, chunk: usize, count: usize, hit: &mut impl FnMut(usize)) {
    if count < chunk + 16 {
        mask &= (1u32 << (count - chunk)) - 1;
    }
    while mask != 0 {
        hit(chunk + mask.trailing_zeros() as usize);
        mask &= mask - 1;
    }
}

#[cfg(simd)]
mod x86 {
    use super::{LeafView, report_mask};
    use crate::grid::cpu::Avx2Token;
    use std::arch::x86_64::*;

    /// Compiled for AVX2, which the token proves.
    ///
    /// # Safety
    /// The leaf's columns must be padded to a multiple of 16 slots
    /// ([`LeafView::is_padded`]).
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) unsafe fn leaf_hits_avx2(
        _: Avx2Token,
        leaf: &LeafView<'_>,
        lo: [i16; 3],
        hi: [i16; 3],
        hit: &mut impl FnMut(usize),
    ) {
        let sixteen = |column: &[i16], at: usize| {
            debug_assert!(at + 16 <= column.len());
            // SAFETY: `at` is a multiple of 16 below `count`, and the columns
            // are padded to a multiple of 16.
            unsafe { _mm256_loadu_si256(column.as_ptr().add(at).cast()) }
        };
        let (lo_x, lo_y, lo_z) =
            (_mm256_set1_epi16(lo[0]), _mm256_set1_epi16(lo[1]), _mm256_set1_epi16(lo[2]));
        let (hi_x, hi_y, hi_z) =
            (_mm256_set1_epi16(hi[0]), _mm256_set1_epi16(hi[1]), _mm256_set1_epi16(hi[2]));
        for chunk in (0..leaf.count).step_by(16) {
            let apart = _mm256_or_si256(
                _mm256_or_si256(
                    _mm256_cmpgt_epi16(sixteen(leaf.lo[0], chunk), hi_x),
                    _mm256_cmpgt_epi16(lo_x, sixteen(leaf.hi[0], chunk)),
                ),
                _mm256_or_si256(
                    _mm256_or_si256(
                        _mm256_cmpgt_epi16(sixteen(leaf.lo[1], chunk), hi_y),
                        _mm256_cmpgt_epi16(lo_y, sixteen(leaf.hi[1], chunk)),
                    ),
                    _mm256_or_si256(
                        _mm256_cmpgt_epi16(sixteen(leaf.lo[2], chunk), hi_z),
                        _mm256_cmpgt_epi16(lo_z, sixteen(leaf.hi[2], chunk)),
                    ),
                ),
            );
            // Narrow 16-bit lanes to bytes so movemask gives one bit per lane.
            let packed = _mm_packs_epi16(
                _mm256_castsi256_si128(apart),
                _mm256_extracti128_si256::<1>(apart),
            );
            report_mask(!(_mm_movemask_epi8(packed) as u32) & 0xFFFF, chunk, leaf.count, hit);
        }
    }
}
