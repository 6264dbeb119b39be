//! All pairs of a leaf too big to tile: a sweep along x.
//!
//! Only a node that no split separates becomes a big leaf: a pile of equal
//! boxes, a knot of boxes inside one finest cell, boxes far larger than the
//! cells. Its slots are sorted by quantized low x, so each box is tested
//! only against the later boxes that start before it ends, 8 at a time on
//! exact `f32` columns gathered once for the leaf. On a pile every box meets
//! every other and the sweep is all pairs with no wasted lane.

use super::cpu::Kernel;
use super::leaf::{LeafView, PairOut};
use super::quantize::OWNS_PAIR;
use broadphase_storage::{Aabb, AlignedColumn};

/// Lanes per step, and the padding after the last box.
const W: usize = 8;

/// The big leaf's exact bounds, ids and owned axes, gathered once per
/// leaf, kept across leaves and frames.
#[derive(Debug, Default)]
pub(crate) struct SweepScratch {
    /// min x, y, z, then max x, y, z, each padded with `W` boxes that meet
    /// nothing (min `+inf`, max `-inf`).
    columns: [AlignedColumn<f32>; 6],
    /// Box ids, padded like the columns.
    ids: AlignedColumn<u32>,
    /// Owned axes (see `Cell::owned_axes`) widened to 32-bit lanes.
    owned: AlignedColumn<u32>,
}

impl SweepScratch {
    pub(crate) fn capacity(&self) -> usize {
        self.columns
            .iter()
            .map(AlignedColumn::capacity)
            .chain([self.ids.capacity(), self.owned.capacity()])
            .min()
            .unwrap_or(0)
    }

    pub(crate) fn reserve_exact(&mut self, slots: usize) {
        for column in &mut self.columns {
            column.reserve_exact(slots.saturating_sub(column.len()));
        }
        self.ids.reserve_exact(slots.saturating_sub(self.ids.len()));
        self.owned.reserve_exact(slots.saturating_sub(self.owned.len()));
    }

    fn gather(&mut self, leaf: &LeafView<'_>, boxes: &[Aabb]) {
        let count = leaf.count;
        for (axis, column) in self.columns.iter_mut().enumerate() {
            let (corner, axis) = (axis / 3, axis % 3);
            let empty = if corner == 0 { f32::INFINITY } else { f32::NEG_INFINITY };
            column.clear();
            column.resize(count + W, empty);
            for (bound, &id) in column.iter_mut().zip(&leaf.ids[..count]) {
                let b = &boxes[id as usize];
                *bound = if corner == 0 { b.min[axis] } else { b.max[axis] };
            }
        }
        self.ids.clear();
        self.ids.extend_from_slice(&leaf.ids[..count]);
        self.ids.resize(count + W, 0);
        self.owned.clear();
        self.owned.resize(count + W, 0);
        for (wide, &o) in self.owned.iter_mut().zip(&leaf.owned[..count]) {
            *wide = o as u32;
        }
    }
}

/// Dispatches to the kernel; the leaf's slots are sorted by low x.
pub(crate) fn sweep_pairs<O: PairOut>(
    kernel: Kernel,
    leaf: &LeafView<'_>,
    boxes: &[Aabb],
    scratch: &mut SweepScratch,
    out: &mut O,
) -> Result<(), O::Error> {
    debug_assert!(leaf.lo[0][..leaf.count].is_sorted());
    scratch.gather(leaf, boxes);
    match kernel {
        #[cfg(simd)]
        Kernel::Avx2(avx2) => {
            // SAFETY: the token proves the CPU check passed, and `out` is
            // one of the crate's `PairOut`s, which reserve in `pairs()`.
            unsafe { x86::sweep_avx2(avx2, leaf, scratch, out) }
        }
        Kernel::Scalar => sweep_scalar(leaf, scratch, out),
    }
}

/// The later slots that may overlap slot `i`: those whose quantized low x
/// is at most its high x (sorted, so a prefix of what follows `i`).
#[inline(always)]
fn reach(leaf: &LeafView<'_>, i: usize) -> usize {
    let end_x = leaf.hi[0][i];
    let later = &leaf.lo[0][i + 1..leaf.count];
    i + 1 + later.partition_point(|&start_x| start_x <= end_x)
}

/// Reports the set bits of an 8-lane hit mask of row `i` from column `j`.
#[inline(always)]
fn report_hits<O: PairOut>(scratch: &SweepScratch, i: usize, j: usize, mut mask: u32, out: &mut O) {
    let (row_id, row_owned) = (scratch.ids[i], scratch.owned[i]);
    while mask != 0 {
        let k = j + mask.trailing_zeros() as usize;
        mask &= mask - 1;
        if row_owned | scratch.owned[k] == u32::from(OWNS_PAIR) {
            out.push(row_id, scratch.ids[k]);
        }
    }
}

/// Scalar twin.
fn sweep_scalar<O: PairOut>(
    leaf: &LeafView<'_>,
    scratch: &SweepScratch,
    out: &mut O,
) -> Result<(), O::Error> {
    let [min_x, min_y, min_z, max_x, max_y, max_z] = &scratch.columns;
    for i in 0..leaf.count - 1 {
        let end = reach(leaf, i);
        out.reserve(end - i - 1)?;
        let mut j = i + 1;
        while j < end {
            let mut mask = 0u32;
            for lane in 0..W {
                let k = j + lane;
                let overlap = (min_x[k] <= max_x[i])
                    & (min_x[i] <= max_x[k])
                    & (min_y[k] <= max_y[i])
                    & (min_y[i] <= max_y[k])
                    & (min_z[k] <= max_z[i])
                    & (min_z[i] <= max_z[k]);
                mask |= u32::from(overlap) << lane;
            }
            // Lanes past `end` hold boxes that start after row `i` ends (or
            // padding), so the exact test already rejected them.
            report_hits(scratch, i, j, mask, out);
            j += W;
        }
    }
    Ok(())
}

#[cfg(simd)]
mod x86 {
    use super::{LeafView, PairOut, SweepScratch, W, reach};
    use crate::grid::cpu::Avx2Token;
    use crate::grid::quantize::OWNS_PAIR;
    use std::arch::x86_64::*;

    /// `COMPRESS[mask]`: the lanes of `mask`'s set bits, in order, then
    /// zeros; a permutation that packs the hits of an 8-lane step.
    static COMPRESS: [[u32; 8]; 256] = {
        let mut table = [[0u32; 8]; 256];
        let mut mask = 0;
        while mask < 256 {
            let (mut lane, mut packed) = (0, 0);
            while lane < 8 {
                if mask >> lane & 1 == 1 {
                    table[mask][packed] = lane as u32;
                    packed += 1;
                }
                lane += 1;
            }
            mask += 1;
        }
        table
    };

    /// The sweep, writing hits straight into the output: the step's hit
    /// ids packed by one permutation, paired with the row's id as
    /// `[min, max]`, and stored as eight pairs at once; the length then
    /// advances by the number of hits. A pile (every pair a hit) costs a
    /// few instructions per eight pairs.
    ///
    /// Compiled for AVX2, which the token proves; `scratch` must hold the
    /// leaf gathered (`leaf.count + W` slots in every column, asserted).
    ///
    /// # Safety
    /// The pairs are stored eight at a time into the room `out.reserve(n)`
    /// made, which the unsafe trait [`PairOut`] promises of every
    /// implementation; the caller's part is the token's CPU check.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sweep_avx2<O: PairOut>(
        _: Avx2Token,
        leaf: &LeafView<'_>,
        scratch: &SweepScratch,
        out: &mut O,
    ) -> Result<(), O::Error> {
        let count = leaf.count;
        let columns = &scratch.columns;
        assert!(columns.iter().all(|c| c.len() == count + W));
        assert!(scratch.ids.len() == count + W && scratch.owned.len() == count + W);
        let eight_f32 = |column: usize, at: usize| {
            // SAFETY: `at < count` and every column holds `count + W` slots.
            unsafe { _mm256_loadu_ps(columns[column].as_ptr().add(at)) }
        };
        let eight_u32 = |column: &[u32], at: usize| {
            // SAFETY: as above, for the id and owned columns.
            unsafe { _mm256_loadu_si256(column.as_ptr().add(at).cast()) }
        };
        let owns = _mm256_set1_epi32(i32::from(OWNS_PAIR));
        #[expect(clippy::needless_range_loop, reason = "row `i` of six columns and two lists")]
        for i in 0..count - 1 {
            let end = reach(leaf, i);
            // Every later box up to `end` may be a hit, and a step stores
            // eight pairs whatever it found.
            out.reserve(end - i - 1 + W)?;
            let row: [__m256; 6] = core::array::from_fn(|c| _mm256_set1_ps(columns[c][i]));
            let row_id = _mm256_set1_epi32(scratch.ids[i] as i32);
            let row_owned = _mm256_set1_epi32(scratch.owned[i] as i32);
            let pairs = out.pairs();
            let mut written = pairs.len();
            let mut j = i + 1;
            while j < end {
                let meets = |lo: usize, hi: usize| {
                    _mm256_and_ps(
                        _mm256_cmp_ps::<_CMP_LE_OQ>(eight_f32(lo, j), row[hi]),
                        _mm256_cmp_ps::<_CMP_LE_OQ>(row[lo], eight_f32(hi, j)),
                    )
                };
                let overlap = _mm256_and_ps(meets(0, 3), _mm256_and_ps(meets(1, 4), meets(2, 5)));
                let owned = _mm256_cmpeq_epi32(
                    _mm256_or_si256(eight_u32(&scratch.owned, j), row_owned),
                    owns,
                );
                let hits = _mm256_and_si256(_mm256_castps_si256(overlap), owned);
                let mask = _mm256_movemask_ps(_mm256_castsi256_ps(hits)) as usize;
                let packed = _mm256_permutevar8x32_epi32(
                    eight_u32(&scratch.ids, j),
                    // SAFETY: a movemask of 8 lanes is below 256.
                    unsafe { _mm256_loadu_si256(COMPRESS.get_unchecked(mask).as_ptr().cast()) },
                );
                let low = _mm256_min_epu32(row_id, packed);
                let high = _mm256_max_epu32(row_id, packed);
                let (even, odd) =
                    (_mm256_unpacklo_epi32(low, high), _mm256_unpackhi_epi32(low, high));
                let first_four = _mm256_permute2x128_si256::<0x20>(even, odd);
                let last_four = _mm256_permute2x128_si256::<0x31>(even, odd);
                debug_assert!(written + W <= pairs.capacity());
                // SAFETY: `reserve` made room for `end - i - 1 + W` pairs
                // past the length at the row's start, and `written` has
                // advanced by at most `j - (i + 1)` since, so these eight
                // pairs fit in the capacity. The stored pairs past the hits
                // are overwritten by the next step or left past the length.
                unsafe {
                    let at = pairs.as_mut_ptr().add(written).cast::<__m256i>();
                    _mm256_storeu_si256(at, first_four);
                    _mm256_storeu_si256(at.add(1), last_four);
                }
                written += mask.count_ones() as usize;
                j += W;
            }
            // SAFETY: the first `written` pairs are initialised: the old
            // length, then the packed hits stored above.
            unsafe { pairs.set_len(written) };
        }
        Ok(())
    }
}
