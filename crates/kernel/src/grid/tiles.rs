//! All pairs of a leaf on the quantized columns: every box against every
//! later one, the integer overlap test as a filter, then ownership and the
//! exact `f32` test on the candidates.

use super::cpu::Kernel;
use super::leaf::{LeafView, PairOut, report};
use super::quantize::OWNS_PAIR;
use broadphase_storage::Aabb;

/// Dispatches to the kernel; `leaf` is padded and holds at least 2 boxes.
pub(crate) fn tile_pairs<O: PairOut>(
    kernel: Kernel,
    leaf: &LeafView<'_>,
    boxes: &[Aabb],
    out: &mut O,
) -> Result<(), O::Error> {
    match kernel {
        #[cfg(simd)]
        Kernel::Avx2(avx2) => {
            // SAFETY: the token proves the CPU check passed, and
            // `leaf_pairs` asserted the padding the kernel's loads rely on.
            unsafe { x86::tile_pairs_avx2(avx2, leaf, boxes, out) }
        }
        Kernel::Scalar => tile_pairs_scalar(leaf, boxes, out),
    }
}

/// Per row of a 16-slot leaf, the slots it may pair with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RowMasks {
    /// Lanes whose quantized box meets the row's, and whose pair with the
    /// row the leaf owns.
    pub(crate) found: [u32; 16],
    /// Lanes whose quantized box meets the row's strictly on every axis, so
    /// the `f32` boxes surely overlap (see `surely_overlap`).
    pub(crate) sure: [u32; 16],
}

/// [`RowMasks`] for the first `rows` slots of a 16-slot leaf (columns low
/// x, y, z, high x, y, z, owned axes); padding lanes are the caller's to
/// mask.
#[inline]
pub(crate) fn leaf_masks16(kernel: Kernel, columns: &[[i16; 16]; 7], rows: usize) -> RowMasks {
    match kernel {
        #[cfg(simd)]
        // SAFETY: the token proves the CPU check passed.
        Kernel::Avx2(avx2) => unsafe { x86::leaf_masks16_avx2(avx2, columns, rows) },
        Kernel::Scalar => {
            let mut masks = RowMasks { found: [0; 16], sure: [0; 16] };
            for row in 0..rows {
                let (lo, hi) =
                    ([0, 1, 2].map(|a| columns[a][row]), [3, 4, 5].map(|a| columns[a][row]));
                for lane in 0..16 {
                    let mut meets = columns[6][row] | columns[6][lane] == i16::from(OWNS_PAIR);
                    let mut strictly = true;
                    for axis in 0..3 {
                        let (lane_lo, lane_hi) = (columns[axis][lane], columns[3 + axis][lane]);
                        meets &= (lane_lo <= hi[axis]) & (lo[axis] <= lane_hi);
                        strictly &= (lane_lo < hi[axis]) & (lo[axis] < lane_hi);
                    }
                    masks.found[row] |= u32::from(meets) << lane;
                    masks.sure[row] |= u32::from(strictly) << lane;
                }
            }
            masks
        }
    }
}

/// Scalar twin: one row against 16 columns at a time, as a bitmask the
/// compiler builds with vector compares.
fn tile_pairs_scalar<O: PairOut>(
    leaf: &LeafView<'_>,
    boxes: &[Aabb],
    out: &mut O,
) -> Result<(), O::Error> {
    const W: usize = 16;
    let count = leaf.count;
    for i in 0..count - 1 {
        out.reserve(count - i - 1)?;
        let row = leaf.corners(i);
        let mut chunk = (i + 1) & !(W - 1);
        while chunk < count {
            // Columns up to the row and past the leaf's last box are not pairs.
            let mut mask = leaf.meets_mask16(chunk, row) & live_lanes(chunk, i + 1, count);
            while mask != 0 {
                report(leaf, boxes, i, chunk + mask.trailing_zeros() as usize, out);
                mask &= mask - 1;
            }
            chunk += W;
        }
    }
    Ok(())
}

/// Lanes `chunk..chunk + 16` that are columns `from..count`.
#[inline(always)]
fn live_lanes(chunk: usize, from: usize, count: usize) -> u32 {
    let below = if from > chunk { u32::MAX << (from - chunk) } else { u32::MAX };
    let above = if count < chunk + 16 { (1u32 << (count - chunk)) - 1 } else { 0xFFFF };
    below & above
}

#[cfg(simd)]
mod x86 {
    //! AVX2: one 4×4 tile of (row, column) pairs is one 16-lane vector of
    //! 16-bit compares.
    use super::super::leaf::{LeafView, PairOut, report};
    use super::super::quantize::OWNS_PAIR;
    use super::RowMasks;
    use crate::grid::cpu::Avx2Token;
    use broadphase_storage::Aabb;
    use std::arch::x86_64::*;

    /// Spreads a 16-bit lane mask to `movemask_epi8`'s layout (bit `2l`).
    const fn spread(mask: u32) -> u32 {
        let mut spread = 0;
        let mut lane = 0;
        while lane < 16 {
            if mask >> lane & 1 == 1 {
                spread |= 1 << (2 * lane);
            }
            lane += 1;
        }
        spread
    }

    /// The strict upper triangle of a diagonal tile (lane = 4 row + column).
    const DIAGONAL: u32 = spread(0x08CE);
    /// The first 1..=4 columns of a tile, every row.
    const COLUMNS: [u32; 5] = [0, spread(0x1111), spread(0x3333), spread(0x7777), spread(0xFFFF)];

    /// [`leaf_masks16`](super::leaf_masks16): one vector per column,
    /// each row broadcast against it. Compiled for AVX2, which the token
    /// proves.
    #[target_feature(enable = "avx2")]
    pub(crate) fn leaf_masks16_avx2(
        _: Avx2Token,
        columns: &[[i16; 16]; 7],
        rows: usize,
    ) -> RowMasks {
        // SAFETY: each column is exactly 16 `i16`, one 256-bit load.
        let column: [__m256i; 7] =
            core::array::from_fn(|c| unsafe { _mm256_loadu_si256(columns[c].as_ptr().cast()) });
        let owns = _mm256_set1_epi16(i16::from(OWNS_PAIR));
        // One mask bit per 16-bit lane: narrow the lanes to bytes first.
        let lanes = |v: __m256i| {
            let packed =
                _mm_packs_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
            _mm_movemask_epi8(packed) as u32
        };
        let mut masks = RowMasks { found: [0; 16], sure: [0; 16] };
        #[expect(clippy::needless_range_loop, reason = "row `row` of seven columns")]
        for row in 0..rows {
            let at = |c: usize| _mm256_set1_epi16(columns[c][row]);
            let (lo, hi) = ([at(0), at(1), at(2)], [at(3), at(4), at(5)]);
            // Apart on an axis: the lane starts after the row ends or ends
            // before it starts. Touching: the same with equality.
            let mut apart = _mm256_xor_si256(
                _mm256_cmpeq_epi16(_mm256_or_si256(column[6], at(6)), owns),
                _mm256_set1_epi16(-1),
            );
            let mut touching = _mm256_setzero_si256();
            for axis in 0..3 {
                apart = _mm256_or_si256(apart, _mm256_cmpgt_epi16(column[axis], hi[axis]));
                apart = _mm256_or_si256(apart, _mm256_cmpgt_epi16(lo[axis], column[3 + axis]));
                touching = _mm256_or_si256(touching, _mm256_cmpeq_epi16(column[axis], hi[axis]));
                touching =
                    _mm256_or_si256(touching, _mm256_cmpeq_epi16(lo[axis], column[3 + axis]));
            }
            masks.found[row] = !lanes(apart) & 0xFFFF;
            masks.sure[row] = !lanes(touching) & 0xFFFF;
        }
        masks
    }

    /// Compiled for AVX2, which the token proves.
    ///
    /// # Safety
    /// Every column of `leaf` must be padded to a multiple of 16 slots
    /// holding `leaf.count` (checked by [`LeafView::is_padded`]).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn tile_pairs_avx2<O: PairOut>(
        _: Avx2Token,
        leaf: &LeafView<'_>,
        boxes: &[Aabb],
        out: &mut O,
    ) -> Result<(), O::Error> {
        let count = leaf.count;
        let padded = count.next_multiple_of(4);
        debug_assert!(padded <= leaf.padded_len());
        let columns =
            [leaf.lo[0], leaf.lo[1], leaf.lo[2], leaf.hi[0], leaf.hi[1], leaf.hi[2], leaf.owned];
        // Four slots of one column from `at`, as 64 bits.
        let four = |column: usize, at: usize| -> i64 {
            let column = columns[column];
            debug_assert!(at + 4 <= column.len());
            // SAFETY: `at` is a multiple of 4 below `padded`, and every
            // column is at least `padded` long (the padding contract).
            unsafe { column.as_ptr().add(at).cast::<i64>().read_unaligned() }
        };
        // Rows: in each 128-bit half, lanes 0..4 repeat row 2h, lanes 4..8
        // row 2h + 1, so the vector's 16 lanes are rows 0,0,0,0,1,…,3,3.
        let row_spread = _mm256_setr_epi8(
            0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6,
            7, 6, 7,
        );
        let owns = _mm256_set1_epi16(i16::from(OWNS_PAIR));
        let last_columns = COLUMNS[count - (padded - 4)];
        let mut row = 0;
        while row < padded {
            out.reserve(4 * (padded - row))?;
            let rows: [__m256i; 7] = core::array::from_fn(|c| {
                _mm256_shuffle_epi8(_mm256_set1_epi64x(four(c, row)), row_spread)
            });
            let mut column = row;
            while column < padded {
                // Columns: lanes 4r..4r+4 are the tile's four columns.
                let cols: [__m256i; 7] =
                    core::array::from_fn(|c| _mm256_set1_epi64x(four(c, column)));
                let mut apart = _mm256_setzero_si256();
                for axis in 0..3 {
                    apart = _mm256_or_si256(apart, _mm256_cmpgt_epi16(cols[axis], rows[3 + axis]));
                    apart = _mm256_or_si256(apart, _mm256_cmpgt_epi16(rows[axis], cols[3 + axis]));
                }
                let mut bits = !(_mm256_movemask_epi8(apart) as u32) & 0x5555_5555;
                if column == row {
                    bits &= DIAGONAL;
                }
                if column + 4 == padded {
                    bits &= last_columns;
                }
                if bits != 0 {
                    // Found pairs are rare outside dense leaves: only now
                    // drop those the leaf does not own, and tell the sure
                    // ones from those touching within a step.
                    let mut touching = _mm256_setzero_si256();
                    for axis in 0..3 {
                        let ends_meet = _mm256_cmpeq_epi16(cols[axis], rows[3 + axis]);
                        let starts_meet = _mm256_cmpeq_epi16(rows[axis], cols[3 + axis]);
                        touching =
                            _mm256_or_si256(touching, _mm256_or_si256(ends_meet, starts_meet));
                    }
                    let sure = !(_mm256_movemask_epi8(touching) as u32);
                    let owned = _mm256_cmpeq_epi16(_mm256_or_si256(rows[6], cols[6]), owns);
                    bits &= _mm256_movemask_epi8(owned) as u32;
                    let mut certain = bits & sure;
                    while certain != 0 {
                        let lane = (certain.trailing_zeros() >> 1) as usize;
                        certain &= certain - 1;
                        out.push(leaf.ids[row + (lane >> 2)], leaf.ids[column + (lane & 3)]);
                    }
                    let mut near = bits & !sure;
                    while near != 0 {
                        let lane = (near.trailing_zeros() >> 1) as usize;
                        near &= near - 1;
                        report(leaf, boxes, row + (lane >> 2), column + (lane & 3), out);
                    }
                }
                column += 4;
            }
            row += 4;
        }
        Ok(())
    }
}
