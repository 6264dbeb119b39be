//! The leaf overlap test: one box (a row) against a leaf's boxes in SoA
//! columns, `W` columns per step, as a bitmask of hits.
//!
//! Each kernel is the same six compares and five ANDs per step; only the lane
//! count and the instructions differ. The portable kernel is the twin the
//! SIMD ones are tested against. Rows are not blocked 4 at a time: a row is
//! six broadcast registers, so four rows plus six column loads would need 30
//! vector registers and spill on AVX2 (16 registers).

use broadphase_storage::{Aabb, LANES};

/// One leaf's boxes as SoA columns, each a multiple of [`LANES`] long with
/// sentinel padding that never overlaps anything.
#[derive(Clone, Copy)]
pub(crate) struct Columns<'a> {
    pub(crate) min: [&'a [f32]; 3],
    pub(crate) max: [&'a [f32]; 3],
}

impl<'a> Columns<'a> {
    /// Number of slots, padding included.
    #[inline]
    pub(crate) fn padded_len(&self) -> usize {
        self.min[0].len()
    }

    /// Whether every column has the same length, a multiple of [`LANES`]
    /// and at least `count`: what the SIMD kernels' unchecked loads rely on.
    #[inline]
    pub(crate) fn is_padded_for(&self, count: usize) -> bool {
        let len = self.padded_len();
        len.is_multiple_of(LANES)
            && len >= count
            && self.min.iter().chain(&self.max).all(|column| column.len() == len)
    }

    #[inline(always)]
    pub(crate) fn row(&self, slot: usize) -> Aabb {
        Aabb::new(
            glam::Vec3::new(self.min[0][slot], self.min[1][slot], self.min[2][slot]),
            glam::Vec3::new(self.max[0][slot], self.max[1][slot], self.max[2][slot]),
        )
    }
}

/// Calls `hit(slot)` for every slot in `from..count` whose box overlaps `row`
/// (inclusive), in increasing order. Portable twin of the SIMD kernels.
#[inline(always)]
pub(crate) fn row_hits_scalar(
    cols: &Columns<'_>,
    row: &Aabb,
    from: usize,
    count: usize,
    mut hit: impl FnMut(usize),
) {
    const W: usize = 8;
    let mut chunk = from & !(W - 1);
    while chunk < count {
        let mut mask = 0u32;
        for lane in 0..W {
            let j = chunk + lane;
            let overlap = (cols.min[0][j] <= row.max.x)
                & (row.min.x <= cols.max[0][j])
                & (cols.min[1][j] <= row.max.y)
                & (row.min.y <= cols.max[1][j])
                & (cols.min[2][j] <= row.max.z)
                & (row.min.z <= cols.max[2][j]);
            mask |= (overlap as u32) << lane;
        }
        emit(mask, chunk, from, &mut hit);
        chunk += W;
    }
}

/// Drops lanes before `from`, then reports the set bits as slots.
#[inline(always)]
fn emit(mut mask: u32, chunk: usize, from: usize, hit: &mut impl FnMut(usize)) {
    if chunk < from {
        mask &= u32::MAX << (from - chunk);
    }
    while mask != 0 {
        hit(chunk + mask.trailing_zeros() as usize);
        mask &= mask - 1;
    }
}

#[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
pub(crate) mod x86 {
    //! SSE2, AVX2 and AVX-512 kernels. Callers guarantee the CPU feature
    //! (checked once by `PairKernel::resolve`) and that every column is a
    //! multiple of `LANES` long.
    use super::{Columns, emit};
    use broadphase_storage::Aabb;
    use core::ops::Range;
    use std::arch::x86_64::*;

    /// Loads `N` floats of a column starting at slot `at`, unchecked: the
    /// row loops only ask for `at < count` with `at` a multiple of `N`, and
    /// the dispatchers assert every column is the same multiple of 16 long
    /// and at least `count`, so `at + N` never passes the end. (Checked
    /// slicing cost six compares per step, measured.)
    macro_rules! load {
        ($load:ident, $col:expr, $at:expr, $n:expr) => {{
            debug_assert!($at + $n <= $col.len());
            // SAFETY: `$at + $n <= $col.len()` by the padding contract above,
            // and the caller's function enables the load's feature.
            unsafe { $load($col.as_ptr().add($at)) }
        }};
    }

    /// SSE2 kernel, 4 lanes.
    ///
    /// # Safety
    /// Every column of `cols` must be a multiple of 4 long and at least
    /// `count` rounded up to 4. SSE2 is part of x86-64, so no CPU check.
    #[target_feature(enable = "sse2")]
    #[inline]
    pub(crate) unsafe fn row_hits_sse2(
        cols: &Columns<'_>,
        row: &Aabb,
        from: usize,
        count: usize,
        mut hit: impl FnMut(usize),
    ) {
        const W: usize = 4;
        let (amin_x, amax_x) = (_mm_set1_ps(row.min.x), _mm_set1_ps(row.max.x));
        let (amin_y, amax_y) = (_mm_set1_ps(row.min.y), _mm_set1_ps(row.max.y));
        let (amin_z, amax_z) = (_mm_set1_ps(row.min.z), _mm_set1_ps(row.max.z));
        let mut chunk = from & !(W - 1);
        while chunk < count {
            let x = _mm_and_ps(
                _mm_cmple_ps(load!(_mm_loadu_ps, cols.min[0], chunk, W), amax_x),
                _mm_cmple_ps(amin_x, load!(_mm_loadu_ps, cols.max[0], chunk, W)),
            );
            let y = _mm_and_ps(
                _mm_cmple_ps(load!(_mm_loadu_ps, cols.min[1], chunk, W), amax_y),
                _mm_cmple_ps(amin_y, load!(_mm_loadu_ps, cols.max[1], chunk, W)),
            );
            let z = _mm_and_ps(
                _mm_cmple_ps(load!(_mm_loadu_ps, cols.min[2], chunk, W), amax_z),
                _mm_cmple_ps(amin_z, load!(_mm_loadu_ps, cols.max[2], chunk, W)),
            );
            let mask = _mm_movemask_ps(_mm_and_ps(x, _mm_and_ps(y, z))) as u32;
            emit(mask, chunk, from, &mut hit);
            chunk += W;
        }
    }

    /// AVX2 kernel, 8 lanes.
    ///
    /// # Safety
    /// The CPU must support AVX2; every column must be a multiple of 8 long
    /// and at least `count` rounded up to 8.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(crate) unsafe fn row_hits_avx2(
        cols: &Columns<'_>,
        row: &Aabb,
        from: usize,
        count: usize,
        mut hit: impl FnMut(usize),
    ) {
        const W: usize = 8;
        const LE: i32 = _CMP_LE_OQ;
        let (amin_x, amax_x) = (_mm256_set1_ps(row.min.x), _mm256_set1_ps(row.max.x));
        let (amin_y, amax_y) = (_mm256_set1_ps(row.min.y), _mm256_set1_ps(row.max.y));
        let (amin_z, amax_z) = (_mm256_set1_ps(row.min.z), _mm256_set1_ps(row.max.z));
        let mut chunk = from & !(W - 1);
        while chunk < count {
            let x = _mm256_and_ps(
                _mm256_cmp_ps::<LE>(load!(_mm256_loadu_ps, cols.min[0], chunk, W), amax_x),
                _mm256_cmp_ps::<LE>(amin_x, load!(_mm256_loadu_ps, cols.max[0], chunk, W)),
            );
            let y = _mm256_and_ps(
                _mm256_cmp_ps::<LE>(load!(_mm256_loadu_ps, cols.min[1], chunk, W), amax_y),
                _mm256_cmp_ps::<LE>(amin_y, load!(_mm256_loadu_ps, cols.max[1], chunk, W)),
            );
            let z = _mm256_and_ps(
                _mm256_cmp_ps::<LE>(load!(_mm256_loadu_ps, cols.min[2], chunk, W), amax_z),
                _mm256_cmp_ps::<LE>(amin_z, load!(_mm256_loadu_ps, cols.max[2], chunk, W)),
            );
            let mask = _mm256_movemask_ps(_mm256_and_ps(x, _mm256_and_ps(y, z))) as u32;
            emit(mask, chunk, from, &mut hit);
            chunk += W;
        }
    }

    /// AVX-512 kernel, 16 lanes.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; every column must be a multiple of 16
    /// long and at least `count` rounded up to 16.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(crate) unsafe fn row_hits_avx512(
        cols: &Columns<'_>,
        row: &Aabb,
        from: usize,
        count: usize,
        mut hit: impl FnMut(usize),
    ) {
        const W: usize = 16;
        const LE: i32 = _CMP_LE_OQ;
        let (amin_x, amax_x) = (_mm512_set1_ps(row.min.x), _mm512_set1_ps(row.max.x));
        let (amin_y, amax_y) = (_mm512_set1_ps(row.min.y), _mm512_set1_ps(row.max.y));
        let (amin_z, amax_z) = (_mm512_set1_ps(row.min.z), _mm512_set1_ps(row.max.z));
        let mut chunk = from & !(W - 1);
        while chunk < count {
            let x = _mm512_cmp_ps_mask::<LE>(load!(_mm512_loadu_ps, cols.min[0], chunk, W), amax_x)
                & _mm512_cmp_ps_mask::<LE>(amin_x, load!(_mm512_loadu_ps, cols.max[0], chunk, W));
            let y = _mm512_cmp_ps_mask::<LE>(load!(_mm512_loadu_ps, cols.min[1], chunk, W), amax_y)
                & _mm512_cmp_ps_mask::<LE>(amin_y, load!(_mm512_loadu_ps, cols.max[1], chunk, W));
            let z = _mm512_cmp_ps_mask::<LE>(load!(_mm512_loadu_ps, cols.min[2], chunk, W), amax_z)
                & _mm512_cmp_ps_mask::<LE>(amin_z, load!(_mm512_loadu_ps, cols.max[2], chunk, W));
            emit(u32::from(x & y & z), chunk, from, &mut hit);
            chunk += W;
        }
    }

    /// Per kernel: one leaf's all-pairs walk, and one query row. The hit
    /// closures are created here, inside the feature-enabled function, so
    /// they inline into the row loop; a closure from a caller without the
    /// feature stays a call and forces the broadcast row out of registers
    /// at every step (seen in the disassembly).
    macro_rules! entry_points {
        ($leaf:ident, $query:ident, $row:ident, $feature:literal) => {
            /// Appends `[i, j]` for every overlapping pair of slots
            /// `i < j < count` with `i` in `rows`.
            ///
            /// # Safety
            /// The CPU has the feature; columns padded to a multiple of 16.
            #[target_feature(enable = $feature)]
            pub(crate) unsafe fn $leaf(
                cols: &Columns<'_>,
                rows: Range<usize>,
                count: usize,
                hits: &mut Vec<[u32; 2]>,
            ) {
                for i in rows {
                    let row = cols.row(i);
                    // SAFETY: same feature and padding contract as ours.
                    unsafe { $row(cols, &row, i + 1, count, |j| hits.push([i as u32, j as u32])) };
                }
            }

            /// Appends every slot `< count` whose box overlaps `row`.
            ///
            /// # Safety
            /// As for the leaf walk.
            #[target_feature(enable = $feature)]
            pub(crate) unsafe fn $query(
                cols: &Columns<'_>,
                row: &Aabb,
                count: usize,
                hits: &mut Vec<u32>,
            ) {
                // SAFETY: same feature and padding contract as ours.
                unsafe { $row(cols, row, 0, count, |j| hits.push(j as u32)) };
            }
        };
    }
    entry_points!(leaf_hits_sse2, query_hits_sse2, row_hits_sse2, "sse2");
    entry_points!(leaf_hits_avx2, query_hits_avx2, row_hits_avx2, "avx2");
    entry_points!(leaf_hits_avx512, query_hits_avx512, row_hits_avx512, "avx512f");
}

use crate::grid::config::PairKernel;

/// Appends to `hits` the slot pair `[i, j]` (`i < j`) of every overlapping
/// pair among a leaf's first `count` slots whose first slot `i` is in
/// `rows`, with the resolved kernel.
///
/// `kernel` must come from [`PairKernel::resolve`], which only returns
/// kernels the CPU supports; `cols` must be padded to [`LANES`].
#[inline]
pub(crate) fn leaf_hits(
    kernel: PairKernel,
    cols: &Columns<'_>,
    rows: core::ops::Range<usize>,
    count: usize,
    hits: &mut Vec<[u32; 2]>,
) {
    assert!(cols.is_padded_for(count));
    match kernel {
        #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
        // SAFETY: resolve() returned this kernel only after detecting its
        // feature; the assert above checked the padding.
        PairKernel::Sse2 => unsafe { x86::leaf_hits_sse2(cols, rows, count, hits) },
        #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
        // SAFETY: as above.
        PairKernel::Avx2 => unsafe { x86::leaf_hits_avx2(cols, rows, count, hits) },
        #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
        // SAFETY: as above.
        PairKernel::Avx512 => unsafe { x86::leaf_hits_avx512(cols, rows, count, hits) },
        _ => {
            for i in rows {
                let row = cols.row(i);
                row_hits_scalar(cols, &row, i + 1, count, |j| hits.push([i as u32, j as u32]));
            }
        }
    }
}

/// Appends to `hits` every slot among a leaf's first `count` whose box
/// overlaps `row`. Same contract as [`leaf_hits`].
#[inline]
pub(crate) fn row_hits(
    kernel: PairKernel,
    cols: &Columns<'_>,
    row: &Aabb,
    count: usize,
    hits: &mut Vec<u32>,
) {
    assert!(cols.is_padded_for(count));
    match kernel {
        #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
        // SAFETY: resolve() detected the feature; the assert checked the padding.
        PairKernel::Sse2 => unsafe { x86::query_hits_sse2(cols, row, count, hits) },
        #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
        // SAFETY: as above.
        PairKernel::Avx2 => unsafe { x86::query_hits_avx2(cols, row, count, hits) },
        #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
        // SAFETY: as above.
        PairKernel::Avx512 => unsafe { x86::query_hits_avx512(cols, row, count, hits) },
        _ => row_hits_scalar(cols, row, 0, count, |j| hits.push(j as u32)),
    }
}

/// Compile-time check that every kernel's width divides the padding.
const _: () = assert!(LANES.is_multiple_of(16));
