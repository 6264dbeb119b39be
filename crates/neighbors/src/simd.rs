//! The x86-64 SIMD twins of the scan kernel: AVX2 (8 lanes, a table lookup
//! and `vpermd` compact the hits) and AVX-512F (16 lanes, `vpcompressd`).
//!
//! A kernel value ([`Avx2`], [`Avx512`], [`Avx512Blocks`]) exists only
//! where its CPU features were detected (`detect` is its only maker), so
//! its intrinsics are sound wherever it is called. It is also the token
//! every SIMD path of the crate holds: the shared walks of `search.rs` run
//! compiled with the features enabled (so that the intrinsics inline) as
//! its safe methods (`walks!` below), and the other `#[target_feature]`
//! functions (the periodic grid's pair walk, the grid's cell keys, the
//! Verlet filter) take it as a parameter.

use super::block::{BlockKernel, GROUP, LaneValues, MAX_BLOCK, block_columns};
use super::scan::{COMPRESS, Columns, HITS, Kernel, LANES, Scalar, ScalarProbe, Test};
use super::search::{self, Cells, Stencil};
use super::sorted::Sorted;
use std::arch::x86_64::*;
use std::ops::Range;

/// The AVX2 kernel. A value exists only where AVX2 was detected.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// The kernel, if this CPU has AVX2.
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        std::arch::is_x86_feature_detected!("avx2").then_some(Avx2(()))
    }
}

/// Squared distances between the points `a` and `b`, lane by lane, in the
/// oracles' expression: the differences squared and summed left to right,
/// `(dx² + dy²) + dz²`, no fused multiply-add. Either order of `a` and `b`
/// gives the same bits (a difference's negation squares to the same value).
#[inline(always)]
fn squared_distances(_: Avx2, a: [__m256; 3], b: [__m256; 3]) -> __m256 {
    // SAFETY: AVX2 (hence AVX) is present: an `Avx2` exists only where
    // `detect` found it. Register arithmetic only.
    unsafe {
        // Written out, not `array::map`: a closure there is not always
        // inlined, and an intrinsic called out of line costs a call each.
        let dx = _mm256_sub_ps(a[0], b[0]);
        let dy = _mm256_sub_ps(a[1], b[1]);
        let dz = _mm256_sub_ps(a[2], b[2]);
        _mm256_add_ps(
            _mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)),
            _mm256_mul_ps(dz, dz),
        )
    }
}

/// The slots `at..at + 8` in lanes (as `i32` bits: a slot above 2³¹ keeps
/// its bits).
#[inline(always)]
fn slots_from(_: Avx2, at: usize) -> __m256i {
    // SAFETY: AVX2 is present (an `Avx2` exists). Register arithmetic only.
    unsafe {
        _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(at as i32))
    }
}

/// Writes the lanes of `values` whose bit is set in `mask` (its low eight
/// bits), lowest first, into `out[pos..]`; returns `pos` plus their count.
/// Stores all eight lanes: `out` must have room for `pos + 8` (asserted).
#[inline(always)]
fn compress_store(_: Avx2, values: __m256i, mask: u32, out: &mut [u32], pos: usize) -> usize {
    assert!(pos + LANES <= out.len());
    let mask = mask as usize & 0xff;
    // SAFETY: AVX2 is present (an `Avx2` exists); the table load reads the
    // 8 bytes of `COMPRESS[mask]`, the store writes `out[pos..pos + 8]`, in
    // bounds by the assert above (unaligned loads and stores only).
    unsafe {
        let lanes = _mm_loadl_epi64(COMPRESS[mask].as_ptr().cast());
        let packed = _mm256_permutevar8x32_epi32(values, _mm256_cvtepu8_epi32(lanes));
        _mm256_storeu_si256(out.as_mut_ptr().add(pos).cast(), packed);
    }
    pos + usize::from(HITS[mask])
}

/// A particle broadcast to eight lanes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2Probe {
    p: [__m256; 3],
    value: __m256,
    /// The skipped slot in every lane (-1 for none: slots are below 2³¹).
    own: __m256i,
    /// The same particle for the scalar kernel (slots beyond 2³¹).
    scalar: ScalarProbe,
}

impl Kernel for Avx2 {
    const LANES: usize = LANES;
    type Probe = Avx2Probe;

    #[inline(always)]
    fn probe<T: Test>(self, test: T, p: [f32; 3], skip: usize) -> Avx2Probe {
        let own = i32::try_from(skip).unwrap_or(-1);
        // SAFETY: AVX2 (hence AVX) is present: `self` exists only where
        // `detect` found it. Broadcasts touch no memory.
        unsafe {
            Avx2Probe {
                p: [_mm256_set1_ps(p[0]), _mm256_set1_ps(p[1]), _mm256_set1_ps(p[2])],
                value: _mm256_set1_ps(test.value()),
                own: _mm256_set1_epi32(own),
                scalar: Scalar.probe(test, p, skip),
            }
        }
    }

    #[inline(always)]
    fn hits<T: Test>(self, c: &Columns<'_>, probe: &Avx2Probe, at: usize, end: usize) -> u32 {
        // Loads read `at..at + LANES` of each column; lanes are compared as
        // i32, so slots stay below 2³¹ (more particles take the scalar
        // kernel).
        assert!(at + LANES <= c.x.len());
        assert!(!T::SPHERES || at + LANES <= c.r.len());
        if end > i32::MAX as usize {
            return Scalar.hits::<T>(c, &probe.scalar, at, end);
        }
        // SAFETY: the intrinsics need AVX2 (and AVX, SSE2, which it
        // implies): `self` exists only where `detect` found it. The loads
        // stay inside the columns by the asserts above (`c.y`, `c.z` are as
        // long as `c.x`, checked by `Columns::new`); only unaligned loads
        // are used.
        unsafe {
            let column = |v: &[f32]| _mm256_loadu_ps(v.as_ptr().add(at));
            let d2 = squared_distances(self, probe.p, [c.x, c.y, c.z].map(column));
            let limit = if T::SPHERES {
                let t = _mm256_add_ps(probe.value, _mm256_loadu_ps(c.r.as_ptr().add(at)));
                _mm256_mul_ps(t, t)
            } else {
                probe.value
            };
            let slots = slots_from(self, at);
            let valid = _mm256_andnot_si256(
                _mm256_cmpeq_epi32(slots, probe.own),
                _mm256_cmpgt_epi32(_mm256_set1_epi32(end as i32), slots),
            );
            let hits =
                _mm256_and_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(d2, limit), _mm256_castsi256_ps(valid));
            _mm256_movemask_ps(hits) as u32
        }
    }

    #[inline(always)]
    fn emit(self, mask: u32, at: usize, buf: &mut [u32], pos: usize) -> usize {
        compress_store(self, slots_from(self, at), mask, buf, pos)
    }
}

/// The AVX-512F kernel. A value exists only where AVX-512F was detected.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512(());

impl Avx512 {
    /// The kernel, if this CPU has AVX-512F (and POPCNT, which every
    /// AVX-512 CPU has, for counting a 16-lane mask's hits).
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        let found = std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("popcnt");
        found.then_some(Avx512(()))
    }
}

/// A particle broadcast to sixteen lanes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512Probe {
    p: [__m512; 3],
    value: __m512,
    own: __m512i,
    scalar: ScalarProbe,
}

impl Kernel for Avx512 {
    const LANES: usize = 16;
    type Probe = Avx512Probe;

    #[inline(always)]
    fn probe<T: Test>(self, test: T, p: [f32; 3], skip: usize) -> Avx512Probe {
        let own = i32::try_from(skip).unwrap_or(-1);
        // SAFETY: AVX-512F is present: `self` exists only where `detect`
        // found it. Broadcasts touch no memory.
        unsafe {
            Avx512Probe {
                p: [_mm512_set1_ps(p[0]), _mm512_set1_ps(p[1]), _mm512_set1_ps(p[2])],
                value: _mm512_set1_ps(test.value()),
                own: _mm512_set1_epi32(own),
                scalar: Scalar.probe(test, p, skip),
            }
        }
    }

    #[inline(always)]
    fn hits<T: Test>(self, c: &Columns<'_>, probe: &Avx512Probe, at: usize, end: usize) -> u32 {
        const W: usize = 16;
        assert!(at + W <= c.x.len());
        assert!(!T::SPHERES || at + W <= c.r.len());
        if end > i32::MAX as usize {
            let low = Scalar.hits::<T>(c, &probe.scalar, at, end);
            return low | Scalar.hits::<T>(c, &probe.scalar, at + LANES, end) << LANES;
        }
        // SAFETY: the intrinsics need AVX-512F: `self` exists only where
        // `detect` found it. The loads stay inside the columns by the
        // asserts above (`c.y`, `c.z` are as long as `c.x`, checked by
        // `Columns::new`); only unaligned loads are used.
        unsafe {
            let [px, py, pz] = probe.p;
            let dx = _mm512_sub_ps(px, _mm512_loadu_ps(c.x.as_ptr().add(at)));
            let dy = _mm512_sub_ps(py, _mm512_loadu_ps(c.y.as_ptr().add(at)));
            let dz = _mm512_sub_ps(pz, _mm512_loadu_ps(c.z.as_ptr().add(at)));
            let d2 = _mm512_add_ps(
                _mm512_add_ps(_mm512_mul_ps(dx, dx), _mm512_mul_ps(dy, dy)),
                _mm512_mul_ps(dz, dz),
            );
            let limit = if T::SPHERES {
                let t = _mm512_add_ps(probe.value, _mm512_loadu_ps(c.r.as_ptr().add(at)));
                _mm512_mul_ps(t, t)
            } else {
                probe.value
            };
            let slots = _mm512_add_epi32(
                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                _mm512_set1_epi32(at as i32),
            );
            let valid = _mm512_cmplt_epi32_mask(slots, _mm512_set1_epi32(end as i32))
                & _mm512_cmpneq_epi32_mask(slots, probe.own);
            u32::from(_mm512_mask_cmp_ps_mask::<_CMP_LE_OQ>(valid, d2, limit))
        }
    }

    #[inline(always)]
    fn emit(self, mask: u32, at: usize, buf: &mut [u32], pos: usize) -> usize {
        assert!(pos + 16 <= buf.len());
        let mask = mask as u16;
        // SAFETY: AVX-512F was detected; the store stays inside `buf` by
        // the assert above.
        unsafe {
            let slots = _mm512_add_epi32(
                _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                _mm512_set1_epi32(at as i32),
            );
            let packed = _mm512_maskz_compress_epi32(mask, slots);
            _mm512_storeu_si512(buf.as_mut_ptr().add(pos).cast(), packed);
            pos + mask.count_ones() as usize
        }
    }
}

/// A block of eight particles in AVX2 lanes (see `block.rs`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx2Lanes {
    p: [__m256; 3],
    values: __m256,
}

impl BlockKernel for Avx2 {
    const WIDTH: usize = LANES;
    type Mask = u8;
    type Lanes = Avx2Lanes;

    #[inline(always)]
    fn lanes(self, c: &Columns<'_>, from: usize, n: usize, values: LaneValues) -> Avx2Lanes {
        let columns = block_columns::<LANES>(c, from, n);
        let values = values.array::<LANES>(c, from, n);
        // SAFETY: AVX2 was detected (`self` exists); the loads read the
        // local arrays above, eight lanes each.
        unsafe {
            Avx2Lanes {
                p: [
                    _mm256_loadu_ps(columns[0].as_ptr()),
                    _mm256_loadu_ps(columns[1].as_ptr()),
                    _mm256_loadu_ps(columns[2].as_ptr()),
                ],
                values: _mm256_loadu_ps(values.as_ptr()),
            }
        }
    }

    #[inline(always)]
    fn test<T: Test>(self, lanes: &Avx2Lanes, p: [f32; 3], r: f32) -> u8 {
        // SAFETY: AVX2 was detected (`self` exists); no memory is touched.
        unsafe {
            let p = [_mm256_set1_ps(p[0]), _mm256_set1_ps(p[1]), _mm256_set1_ps(p[2])];
            let d2 = squared_distances(self, p, lanes.p);
            let limit = if T::SPHERES {
                let t = _mm256_add_ps(lanes.values, _mm256_set1_ps(r));
                _mm256_mul_ps(t, t)
            } else {
                lanes.values
            };
            _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(d2, limit)) as u8
        }
    }

    #[inline(always)]
    fn emit_lane(
        self,
        masks: &[u8; GROUP],
        lane: u32,
        slots: &[u32; GROUP],
        out: &mut [u32],
        mut pos: usize,
    ) -> usize {
        // SAFETY: AVX2 was detected (`self` exists); the loads read the 32
        // bytes of `masks` and eight entries of `slots` at a time, in
        // bounds (`part * 8 + 8 <= 32`). The stores are `compress_store`'s,
        // which checks its bounds.
        unsafe {
            let bytes = _mm256_loadu_si256(masks.as_ptr().cast());
            // Shifting each 16-bit pair left by 7 - lane moves bit `lane` of
            // both bytes to their top bit (the low byte's other bits land
            // below the high byte's top bit), which movemask collects.
            let shift = _mm_cvtsi32_si128(7 - lane as i32);
            let bits = _mm256_movemask_epi8(_mm256_sll_epi16(bytes, shift)) as u32;
            for part in 0..GROUP / LANES {
                let slots = _mm256_loadu_si256(slots.as_ptr().add(part * LANES).cast());
                pos = compress_store(self, slots, bits >> (part * LANES), out, pos);
            }
        }
        pos
    }
}

/// The AVX-512 block kernel (see `block.rs`): sixteen particles a block.
/// Its read-out compacts a particle's hits among 32 candidates at once with
/// byte compression and a two-table permute, so it needs AVX-512BW, VL and
/// VBMI2 beside F (Ice Lake, Zen 4 and later). A value exists only where
/// they were all detected.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512Blocks(Avx512);

impl Avx512Blocks {
    /// The kernel, if this CPU has AVX-512 F, BW, VL and VBMI2 (and POPCNT).
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        let found = std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512vbmi2");
        Avx512::detect().filter(|_| found).map(Avx512Blocks)
    }
}

/// The crowded blocks' per-particle fallback is the 16-lane scan kernel.
impl Kernel for Avx512Blocks {
    const LANES: usize = 16;
    type Probe = Avx512Probe;

    #[inline(always)]
    fn probe<T: Test>(self, test: T, p: [f32; 3], skip: usize) -> Avx512Probe {
        self.0.probe(test, p, skip)
    }

    #[inline(always)]
    fn hits<T: Test>(self, c: &Columns<'_>, probe: &Avx512Probe, at: usize, end: usize) -> u32 {
        self.0.hits::<T>(c, probe, at, end)
    }

    #[inline(always)]
    fn emit(self, mask: u32, at: usize, buf: &mut [u32], pos: usize) -> usize {
        self.0.emit(mask, at, buf, pos)
    }
}

/// A block of sixteen particles in AVX-512 lanes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Avx512Lanes {
    p: [__m512; 3],
    values: __m512,
}

impl BlockKernel for Avx512Blocks {
    const WIDTH: usize = 16;
    type Mask = u16;
    type Lanes = Avx512Lanes;

    #[inline(always)]
    fn lanes(self, c: &Columns<'_>, from: usize, n: usize, values: LaneValues) -> Avx512Lanes {
        assert!(n <= 16 && from + n <= c.x.len());
        let radii = matches!(values, LaneValues::Radii);
        assert!(!radii || from + n <= c.r.len());
        // SAFETY: AVX-512F was detected (`self` exists). Masked loads read
        // only the lanes below `n`, slots `from..from + n` of each column,
        // in bounds by the asserts above (`c.y`, `c.z` are as long as
        // `c.x`); masked-off lanes touch no memory and read as NaN, which
        // fails every comparison.
        unsafe {
            let nan = _mm512_set1_ps(f32::NAN);
            let live = ((1u32 << n) - 1) as __mmask16;
            // Written out, not through a closure (see `squared_distances`).
            Avx512Lanes {
                p: [
                    _mm512_mask_loadu_ps(nan, live, c.x.as_ptr().add(from)),
                    _mm512_mask_loadu_ps(nan, live, c.y.as_ptr().add(from)),
                    _mm512_mask_loadu_ps(nan, live, c.z.as_ptr().add(from)),
                ],
                values: match values {
                    LaneValues::Same(value) => _mm512_set1_ps(value),
                    LaneValues::Radii => _mm512_mask_loadu_ps(nan, live, c.r.as_ptr().add(from)),
                },
            }
        }
    }

    #[inline(always)]
    fn test<T: Test>(self, lanes: &Avx512Lanes, p: [f32; 3], r: f32) -> u16 {
        // SAFETY: AVX-512F was detected (`self` exists); no memory is
        // touched.
        unsafe {
            // Written out, as in `squared_distances`. Lanes minus the
            // candidate (the square is the same either way): the broadcast
            // is then the second operand, which AVX-512 folds into the
            // subtraction as an embedded broadcast (three instructions
            // fewer a candidate: sph1m lists 44.7 -> 42.6 ms).
            let dx = _mm512_sub_ps(lanes.p[0], _mm512_set1_ps(p[0]));
            let dy = _mm512_sub_ps(lanes.p[1], _mm512_set1_ps(p[1]));
            let dz = _mm512_sub_ps(lanes.p[2], _mm512_set1_ps(p[2]));
            let d2 = _mm512_add_ps(
                _mm512_add_ps(_mm512_mul_ps(dx, dx), _mm512_mul_ps(dy, dy)),
                _mm512_mul_ps(dz, dz),
            );
            let limit = if T::SPHERES {
                let t = _mm512_add_ps(lanes.values, _mm512_set1_ps(r));
                _mm512_mul_ps(t, t)
            } else {
                lanes.values
            };
            _mm512_cmp_ps_mask::<_CMP_LE_OQ>(d2, limit)
        }
    }

    #[inline(always)]
    fn emit_lane(
        self,
        masks: &[u16; GROUP],
        lane: u32,
        slots: &[u32; GROUP],
        out: &mut [u32],
        pos: usize,
    ) -> usize {
        // SAFETY: AVX-512 F, BW, VL and VBMI2 and POPCNT were detected
        // (`self` exists). The loads read the 64 bytes of `masks` and the
        // two halves of `slots`. Every store ends at most `MAX_BLOCK` past
        // `pos + count`, in bounds by the assert: the first ends at `pos +
        // 8`, the second (only past eight hits) at `pos + 16`, the third
        // (only past sixteen) at `pos + 32`. Unaligned loads and stores only.
        unsafe {
            let bits = _mm512_test_epi16_mask(
                _mm512_loadu_si512(masks.as_ptr().cast()),
                _mm512_set1_epi16(1 << lane),
            );
            let count = bits.count_ones() as usize;
            assert!(pos + count + MAX_BLOCK <= out.len());
            // The hits' places in the group, as bytes, lowest first; each
            // sixteen of them become slots by one permute of both halves.
            let places = _mm256_maskz_compress_epi8(
                bits,
                _mm256_setr_epi8(
                    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
                    22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
                ),
            );
            let low = _mm512_loadu_si512(slots.as_ptr().cast());
            let high = _mm512_loadu_si512(slots.as_ptr().add(16).cast());
            let slots_at = |places: __m128i| {
                _mm512_permutex2var_epi32(low, _mm512_cvtepu8_epi32(places), high)
            };
            let first = slots_at(_mm256_castsi256_si128(places));
            let at = out.as_mut_ptr().add(pos);
            // Half-width stores: a row rarely takes more than eight of 32
            // candidates, and full-width stores measured slower.
            _mm256_storeu_si256(at.cast(), _mm512_castsi512_si256(first));
            if count > 8 {
                _mm256_storeu_si256(at.add(8).cast(), _mm512_extracti64x4_epi64::<1>(first));
                if count > 16 {
                    let second = slots_at(_mm256_extracti128_si256::<1>(places));
                    _mm512_storeu_si512(at.add(16).cast(), second);
                }
            }
            pos + count
        }
    }
}

/// The Verlet filter's rows on AVX2 (see `verlet.rs`): for each slot `s`
/// of `lists` (rows and entries are slots), keeps the entries `j` with
/// `distance2(p_s, p_j) <= r2` (positions in the columns `x`, `y`, `z`, by
/// slot), eight entries a step with gathered coordinates, writing them
/// from `out[0..]` and pushing each row's end to `offsets`. `out` must have
/// room for the lists' total plus [`LANES`]; fewer than 2³¹ slots.
#[inline(always)]
pub(crate) fn filter_rows(
    avx2: Avx2,
    columns: [&[f32]; 3],
    r2: f32,
    lists: &crate::NeighborLists,
    offsets: &mut Vec<usize>,
    out: &mut [u32],
) {
    // SAFETY: `avx2` proves the CPU check passed.
    unsafe { filter_rows_avx2(avx2, columns, r2, lists, offsets, out) }
}

/// [`filter_rows`] compiled for AVX2, which the token proves.
#[target_feature(enable = "avx2")]
fn filter_rows_avx2(
    avx2: Avx2,
    columns: [&[f32]; 3],
    r2: f32,
    lists: &crate::NeighborLists,
    offsets: &mut Vec<usize>,
    out: &mut [u32],
) {
    let [x, y, z] = columns;
    let n = x.len();
    assert!(y.len() == n && z.len() == n && lists.len() == n && n <= i32::MAX as usize);
    assert!(out.len() >= lists.total() + LANES);
    let indices = lists.indices.as_slice();
    let mut pos = 0;
    for s in 0..n {
        let (from, to) = (lists.offsets[s], lists.offsets[s + 1]);
        // Each step loads eight entries from `at`, past the row's end in
        // its last step (the lists keep MAX_LANES of slack).
        assert!(to + LANES <= indices.len() && to <= lists.total());
        // SAFETY: AVX2 is enabled on this function, which takes an `Avx2`
        // (it exists only where AVX2 was detected). Loads read
        // `indices[at..at + 8]` with `at < to`, in bounds by the assert
        // above; the gathers read `x`, `y`, `z` at indices clamped to
        // `n - 1` (n > 0: there is a row), so in bounds whatever the
        // entries past the row hold. The stores are `compress_store`'s,
        // which checks its bounds.
        unsafe {
            let p = [_mm256_set1_ps(x[s]), _mm256_set1_ps(y[s]), _mm256_set1_ps(z[s])];
            let limit = _mm256_set1_ps(r2);
            let last = _mm256_set1_epi32(n as i32 - 1);
            let mut at = from;
            while at < to {
                let slots = _mm256_loadu_si256(indices.as_ptr().add(at).cast());
                let safe = _mm256_min_epu32(slots, last);
                let gathered = [
                    _mm256_i32gather_ps::<4>(x.as_ptr(), safe),
                    _mm256_i32gather_ps::<4>(y.as_ptr(), safe),
                    _mm256_i32gather_ps::<4>(z.as_ptr(), safe),
                ];
                let d2 = squared_distances(avx2, gathered, p);
                let hits = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_LE_OQ>(d2, limit)) as u32;
                let mask = hits & ((1u32 << (to - at).min(LANES)) - 1);
                pos = compress_store(avx2, slots, mask, out, pos);
                at += LANES;
            }
        }
        offsets.push(pos);
    }
}

/// The shared walks of `search.rs`, compiled with a kernel's features
/// enabled so that its intrinsics inline into them, as safe methods of the
/// kernel: its value is the proof that those features were detected. Each
/// kernel gets the walks it runs (`walks!(Kernel, "features": walk, …)`).
macro_rules! walks {
    ($kernel:ty, $feature:literal: $($walk:ident),+) => {
        impl $kernel {
            $(walks!(@ $walk, $kernel, $feature);)+
        }
    };
    (@ pairs, $kernel:ty, $feature:literal) => {
        /// [`pairs_shape`](crate::search::pairs_shape) with this kernel.
        #[inline(always)]
        pub(crate) fn walk_pairs<C: Cells>(
            self,
            c: &C,
            slots: Range<usize>,
            sink: &mut impl crate::pair_batch::PairSink,
        ) {
            #[target_feature(enable = $feature)]
            fn pairs<C: Cells>(
                kernel: $kernel,
                c: &C,
                slots: Range<usize>,
                sink: &mut impl crate::pair_batch::PairSink,
            ) {
                search::pairs_shape(kernel, c, slots, sink);
            }
            // SAFETY: the kernel proves the CPU check of these features passed.
            unsafe { pairs(self, c, slots, sink) }
        }
    };
    (@ rows, $kernel:ty, $feature:literal) => {
        /// [`rows_shape`](crate::search::rows_shape) with this kernel.
        #[inline(always)]
        pub(crate) fn walk_rows<C: Cells>(
            self,
            c: &C,
            slots: Range<usize>,
            offsets: &mut Vec<usize>,
            indices: &mut Vec<u32>,
        ) {
            #[target_feature(enable = $feature)]
            fn rows<C: Cells>(
                kernel: $kernel,
                c: &C,
                slots: Range<usize>,
                offsets: &mut Vec<usize>,
                indices: &mut Vec<u32>,
            ) {
                search::rows_shape(kernel, c, slots, offsets, indices);
            }
            // SAFETY: the kernel proves the CPU check of these features passed.
            unsafe { rows(self, c, slots, offsets, indices) }
        }
    };
    (@ block_pairs, $kernel:ty, $feature:literal) => {
        /// [`block_pairs_shape`](crate::search::block_pairs_shape) with
        /// this kernel.
        #[inline(always)]
        pub(crate) fn walk_block_pairs<C: Cells>(
            self,
            c: &C,
            slots: Range<usize>,
            sink: &mut impl crate::pair_batch::PairSink,
        ) {
            #[target_feature(enable = $feature)]
            fn block_pairs<C: Cells>(
                kernel: $kernel,
                c: &C,
                slots: Range<usize>,
                sink: &mut impl crate::pair_batch::PairSink,
            ) {
                search::block_pairs_shape(kernel, c, slots, sink);
            }
            // SAFETY: the kernel proves the CPU check of these features passed.
            unsafe { block_pairs(self, c, slots, sink) }
        }
    };
    (@ block_rows, $kernel:ty, $feature:literal) => {
        /// [`block_rows_shape`](crate::search::block_rows_shape) with this
        /// kernel.
        #[inline(always)]
        pub(crate) fn walk_block_rows<C: Cells>(
            self,
            c: &C,
            slots: Range<usize>,
            ids: Option<&[u32]>,
            offsets: &mut Vec<usize>,
            indices: &mut Vec<u32>,
        ) {
            #[target_feature(enable = $feature)]
            fn block_rows<C: Cells>(
                kernel: $kernel,
                c: &C,
                slots: Range<usize>,
                ids: Option<&[u32]>,
                offsets: &mut Vec<usize>,
                indices: &mut Vec<u32>,
            ) {
                search::block_rows_shape(kernel, c, slots, ids, offsets, indices);
            }
            // SAFETY: the kernel proves the CPU check of these features passed.
            unsafe { block_rows(self, c, slots, ids, offsets, indices) }
        }
    };
    (@ query_blocks, $kernel:ty, $feature:literal) => {
        /// [`query_blocks_shape`](crate::search::query_blocks_shape) with
        /// this kernel.
        #[inline(always)]
        pub(crate) fn walk_query_blocks<C: Cells>(
            self,
            c: &C,
            queries: &Columns<'_>,
            cells: &[[i32; 3]],
            radius: f32,
            offsets: &mut Vec<usize>,
            indices: &mut Vec<u32>,
        ) {
            #[target_feature(enable = $feature)]
            fn query_blocks<C: Cells>(
                kernel: $kernel,
                c: &C,
                queries: &Columns<'_>,
                cells: &[[i32; 3]],
                radius: f32,
                offsets: &mut Vec<usize>,
                indices: &mut Vec<u32>,
            ) {
                search::query_blocks_shape(kernel, c, queries, cells, radius, offsets, indices);
            }
            // SAFETY: the kernel proves the CPU check of these features passed.
            unsafe { query_blocks(self, c, queries, cells, radius, offsets, indices) }
        }
    };
    (@ query, $kernel:ty, $feature:literal) => {
        /// [`query_shape`](crate::search::query_shape) with this kernel.
        #[inline(always)]
        pub(crate) fn walk_query(
            self,
            sorted: &Sorted,
            stencil: &Stencil,
            radius: f32,
            q: [f32; 3],
            out: &mut Vec<u32>,
        ) {
            #[target_feature(enable = $feature)]
            fn query(
                kernel: $kernel,
                sorted: &Sorted,
                stencil: &Stencil,
                radius: f32,
                q: [f32; 3],
                out: &mut Vec<u32>,
            ) {
                search::query_shape(kernel, sorted, stencil, radius, q, out);
            }
            // SAFETY: the kernel proves the CPU check of these features passed.
            unsafe { query(self, sorted, stencil, radius, q, out) }
        }
    };
}

walks!(Avx2, "avx2": pairs, rows, block_pairs, block_rows, query_blocks, query);
walks!(Avx512, "avx512f,popcnt": pairs, rows, query);
walks!(
    Avx512Blocks,
    "avx512f,avx512bw,avx512vl,avx512vbmi2,popcnt": block_pairs, block_rows, query_blocks
);
