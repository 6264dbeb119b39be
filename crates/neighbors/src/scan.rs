//! The inner loop every neighbor structure shares: one particle against a
//! contiguous range of sorted slots, eight lanes a step, the hits written
//! branch-free into a buffer.
//!
//! A step computes eight squared distances from the SoA columns, turns the
//! comparisons into an 8-bit mask, and writes the hit slots with one table
//! lookup: `COMPRESS[mask]` lists the set lanes first, all eight lanes are
//! stored, and the write position advances by the number of hits. No branch
//! depends on the data, so the ~30% hit rate of an SPH search costs no
//! mispredictions.
//!
//! The distance test is `dx·dx + dy·dy + dz·dz <= t` with `dx = x_j - x_p`,
//! evaluated left to right in `f32` with no fused multiply-add, exactly as
//! the brute-force oracles do, so every structure agrees with them bit for
//! bit, boundary cases included.

use super::sorted::{PAD, Sorted};

/// Lanes per step of the scalar and AVX2 kernels (and of the lookup tables).
/// Eight, not storage's 16: a compress table for 16-lane masks would have
/// 65,536 rows, and only AVX-512 (its own 16-lane kernel) has 16 lanes.
pub(crate) const LANES: usize = 8;

/// The most lanes any kernel stores per step (the AVX-512 kernel's, which
/// is storage's widest SIMD width): buffers keep this much room past their
/// last entry, the columns this much padding.
pub(crate) const MAX_LANES: usize = broadphase_storage::LANES;

/// The columns' padding holds a whole step past the last particle.
const _: () = assert!(PAD >= MAX_LANES && MAX_LANES >= LANES);

/// `COMPRESS[mask]` holds the indices of the set bits of `mask`, lowest
/// first, then zeros.
pub(crate) static COMPRESS: [[u8; LANES]; 256] = compress_table();

/// `HITS[mask]` is the number of set bits of `mask` (a table: the x86-64
/// baseline has no `popcnt`).
pub(crate) static HITS: [u8; 256] = hits_table();

const fn compress_table() -> [[u8; LANES]; 256] {
    let mut table = [[0u8; LANES]; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut lane, mut n) = (0, 0);
        while lane < LANES {
            if mask & (1 << lane) != 0 {
                table[mask][n] = lane as u8;
                n += 1;
            }
            lane += 1;
        }
        mask += 1;
    }
    table
}

const fn hits_table() -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut mask = 0;
    while mask < 256 {
        table[mask] = (mask as u32).count_ones() as u8;
        mask += 1;
    }
    table
}

/// The columns a scan reads.
#[derive(Clone, Copy)]
pub(crate) struct Columns<'a> {
    pub(crate) x: &'a [f32],
    pub(crate) y: &'a [f32],
    pub(crate) z: &'a [f32],
    pub(crate) r: &'a [f32],
}

impl<'a> Columns<'a> {
    #[inline(always)]
    pub(crate) fn new(sorted: &'a Sorted) -> Self {
        let (x, y, z) = (sorted.x.as_slice(), sorted.y.as_slice(), sorted.z.as_slice());
        let r = sorted.r.as_slice();
        // The SIMD kernels check `c.x` bounds and rely on these.
        assert!(y.len() == x.len() && z.len() == x.len());
        assert!(r.is_empty() || r.len() == x.len());
        Self { x, y, z, r }
    }
}

/// The per-lane distance threshold of one search.
pub(crate) trait Test: Copy {
    /// Whether the threshold is `(value + r_j)²` (spheres) rather than `value` (points).
    const SPHERES: bool;
    /// `r²` for points, the searching particle's radius for spheres.
    fn value(self) -> f32;
    /// The test whose [`value`](Test::value) is `value`.
    fn with_value(value: f32) -> Self;
    /// Bit `l` set when slot `at + l` passes the test against `p`.
    fn mask(self, c: &Columns<'_>, at: usize, p: [f32; 3]) -> u32;
}

/// Points: the threshold is one squared radius.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Within {
    pub(crate) r2: f32,
}

/// Spheres: in contact when `distance <= r_p + r_j`; `rp` is the searching
/// particle's radius (or a query's).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Contact {
    pub(crate) rp: f32,
}

/// Squared distances of eight slots from `p`, in the oracles' order.
#[inline(always)]
fn distances(c: &Columns<'_>, at: usize, p: [f32; 3]) -> [f32; LANES] {
    let x: &[f32; LANES] = c.x[at..at + LANES].try_into().expect("padded column");
    let y: &[f32; LANES] = c.y[at..at + LANES].try_into().expect("padded column");
    let z: &[f32; LANES] = c.z[at..at + LANES].try_into().expect("padded column");
    let mut d2 = [0.0f32; LANES];
    for l in 0..LANES {
        let (dx, dy, dz) = (x[l] - p[0], y[l] - p[1], z[l] - p[2]);
        d2[l] = dx * dx + dy * dy + dz * dz;
    }
    d2
}

impl Test for Within {
    const SPHERES: bool = false;
    #[inline(always)]
    fn value(self) -> f32 {
        self.r2
    }
    #[inline(always)]
    fn with_value(r2: f32) -> Self {
        Within { r2 }
    }
    #[inline(always)]
    fn mask(self, c: &Columns<'_>, at: usize, p: [f32; 3]) -> u32 {
        let d2 = distances(c, at, p);
        let mut mask = 0u32;
        for (l, d) in d2.iter().enumerate() {
            mask |= u32::from(*d <= self.r2) << l;
        }
        mask
    }
}

impl Test for Contact {
    const SPHERES: bool = true;
    #[inline(always)]
    fn value(self) -> f32 {
        self.rp
    }
    #[inline(always)]
    fn with_value(rp: f32) -> Self {
        Contact { rp }
    }
    #[inline(always)]
    fn mask(self, c: &Columns<'_>, at: usize, p: [f32; 3]) -> u32 {
        let d2 = distances(c, at, p);
        let r: &[f32; LANES] = c.r[at..at + LANES].try_into().expect("padded column");
        let mut mask = 0u32;
        for l in 0..LANES {
            let t = self.rp + r[l];
            mask |= u32::from(d2[l] <= t * t) << l;
        }
        mask
    }
}

/// Which scan kernel runs: the scalar one, or a SIMD twin picked at run
/// time. Every kernel gives the same slots in the same order.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::ScanKernel;
/// assert_eq!(ScanKernel::available()[0], ScanKernel::Scalar);
/// assert_ne!(ScanKernel::Auto.resolve(), ScanKernel::Auto);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ScanKernel {
    /// The best this CPU runs, detected at run time, per build: AVX-512
    /// where a row of cells is expected to hold 16 particles or more (dense
    /// SPH data: measured ~15% faster), AVX2 otherwise (sparse contacts,
    /// where 16 lanes run half empty: ~20% slower). [`resolve`](Self::resolve),
    /// which has no build to look at, says AVX2.
    ///
    /// One exception: a [`CountingSortGrid`](crate::CountingSortGrid)'s
    /// neighbor lists (and query sets) take the block walk (a block of
    /// particles against each candidate at once), sixteen particles a block
    /// where AVX-512 F, BW, VL and VBMI2 run (Ice Lake, Zen 4 and later)
    /// and eight where AVX2 does, at every density: on sph1m the AVX2 block
    /// walk is 1.57× the per-particle AVX2 walk, and the AVX-512 one 1.4×
    /// the AVX2 one.
    #[default]
    Auto,
    /// Plain Rust, no intrinsics: the twin the SIMD kernels are tested
    /// against, and what the `scalar` feature forces.
    Scalar,
    /// AVX2, 8 lanes: a table lookup and one store compact the hits (and
    /// the grid's neighbor lists run by blocks of eight, even where
    /// AVX-512F runs).
    Avx2,
    /// AVX-512F, 16 lanes: the hits are compacted by `vpcompressd` (and
    /// the grid's neighbor lists run by blocks of sixteen where BW, VL and
    /// VBMI2 also run, by blocks of eight otherwise).
    Avx512,
}

impl ScanKernel {
    /// The kernels this CPU (and this build) runs, scalar first.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::ScanKernel;
    /// assert!(ScanKernel::available().contains(&ScanKernel::Scalar));
    /// ```
    pub fn available() -> Vec<ScanKernel> {
        [ScanKernel::Scalar, ScanKernel::Avx2, ScanKernel::Avx512]
            .into_iter()
            .filter(|k| k.is_supported())
            .collect()
    }

    /// Whether this CPU (and this build) runs the kernel.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::ScanKernel;
    /// assert!(ScanKernel::Scalar.is_supported());
    /// ```
    pub fn is_supported(self) -> bool {
        match self {
            ScanKernel::Auto | ScanKernel::Scalar => true,
            #[cfg(simd)]
            ScanKernel::Avx2 => super::simd::Avx2::detect().is_some(),
            #[cfg(simd)]
            ScanKernel::Avx512 => super::simd::Avx512::detect().is_some(),
            #[cfg(not(simd))]
            ScanKernel::Avx2 | ScanKernel::Avx512 => false,
        }
    }

    /// The kernel that runs: `Auto` and unsupported requests become the
    /// best supported kernel (AVX2 where there is one).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::ScanKernel;
    /// assert_eq!(ScanKernel::Scalar.resolve(), ScanKernel::Scalar);
    /// ```
    pub fn resolve(self) -> ScanKernel {
        let wanted = match self {
            ScanKernel::Auto => ScanKernel::Avx2,
            other => other,
        };
        let order = [ScanKernel::Avx512, ScanKernel::Avx2, ScanKernel::Scalar];
        let from = order.iter().position(|&k| k == wanted).unwrap_or(0);
        order[from..].iter().copied().find(|k| k.is_supported()).unwrap_or(ScanKernel::Scalar)
    }
}

/// A scan kernel, as a type, so the walks are compiled once per kernel.
///
/// A walk prepares each searching particle once ([`probe`](Kernel::probe))
/// and then runs [`step`](Kernel::step)s: `LANES` slots from `at`, of which
/// those below `end` count.
pub(crate) trait Kernel: Copy {
    /// Slots per step (at most [`MAX_LANES`]).
    const LANES: usize;

    /// A searching particle, broadcast once for all its steps.
    type Probe: Copy;

    /// Prepares the particle at `p` with `test`'s threshold; the slot
    /// `skip` (its own, or [`NO_SKIP`]) never counts as a hit.
    fn probe<T: Test>(self, test: T, p: [f32; 3], skip: usize) -> Self::Probe;

    /// The hit mask of the step at `at` (bit `l`: slot `at + l`): the slots
    /// of `at..min(at + Self::LANES, end)`, except the probe's skip, that
    /// pass the test. Reads the columns `at + Self::LANES` slots (asserted).
    fn hits<T: Test>(self, c: &Columns<'_>, probe: &Self::Probe, at: usize, end: usize) -> u32;

    /// Writes the slots of `mask`'s set bits (slot `at + l` for bit `l`)
    /// into `buf[pos..]`, in increasing order; returns the new end. Stores
    /// a whole step: `buf` must have room for `pos + Self::LANES`.
    fn emit(self, mask: u32, at: usize, buf: &mut [u32], pos: usize) -> usize;

    /// [`emit`](Kernel::emit)s the [`hits`](Kernel::hits) of the step at
    /// `at`. `end` must be at most the particle count.
    #[inline(always)]
    fn step<T: Test>(
        self,
        c: &Columns<'_>,
        probe: &Self::Probe,
        at: usize,
        end: usize,
        buf: &mut [u32],
        pos: usize,
    ) -> usize {
        self.emit(self.hits::<T>(c, probe, at, end), at, buf, pos)
    }

    /// Scans the whole range `from..to` (steps from `from`); `buf` must
    /// have room for `pos + (to - from) + MAX_LANES` entries.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn scan<T: Test>(
        self,
        c: &Columns<'_>,
        test: T,
        p: [f32; 3],
        from: usize,
        to: usize,
        skip: usize,
        buf: &mut [u32],
        mut pos: usize,
    ) -> usize {
        let probe = self.probe(test, p, skip);
        let mut at = from;
        while at < to {
            pos = self.step::<T>(c, &probe, at, to, buf, pos);
            at += Self::LANES;
        }
        pos
    }
}

/// The scalar kernel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Scalar;

/// A particle prepared for the scalar kernel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScalarProbe {
    pub(crate) p: [f32; 3],
    pub(crate) value: f32,
    pub(crate) skip: usize,
}

impl Kernel for Scalar {
    const LANES: usize = LANES;
    type Probe = ScalarProbe;

    #[inline(always)]
    fn probe<T: Test>(self, test: T, p: [f32; 3], skip: usize) -> ScalarProbe {
        ScalarProbe { p, value: test.value(), skip }
    }

    #[inline(always)]
    fn hits<T: Test>(self, c: &Columns<'_>, probe: &ScalarProbe, at: usize, end: usize) -> u32 {
        keep(T::with_value(probe.value).mask(c, at, probe.p), at, end, probe.skip)
    }

    #[inline(always)]
    fn emit(self, mask: u32, at: usize, buf: &mut [u32], pos: usize) -> usize {
        let out: &mut [u32; LANES] = (&mut buf[pos..pos + LANES]).try_into().expect("room");
        let lanes = &COMPRESS[mask as usize];
        let base = at as u32;
        for l in 0..LANES {
            out[l] = base + u32::from(lanes[l]);
        }
        pos + usize::from(HITS[mask as usize])
    }
}

/// Drops from a step's mask the lanes past `end` and the lane of `skip`.
#[inline(always)]
fn keep(mut mask: u32, at: usize, end: usize, skip: usize) -> u32 {
    // Lanes past `end`: keep the first `end - at`.
    let left = end.saturating_sub(at).min(LANES);
    mask &= (1u32 << left) - 1;
    // The particle itself: `skip - at` wraps to a huge number unless it is
    // a lane of this step; shifting by 63 then drops out of the mask.
    let own = skip.wrapping_sub(at).min(63);
    mask & !((1u64 << own) as u32)
}

/// `skip` value that matches no slot.
pub(crate) const NO_SKIP: usize = usize::MAX;

#[cfg(simd)]
pub(crate) use super::simd::{Avx2, Avx512, Avx512Blocks};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sorted::Shape;
    use glam::Vec3;

    fn sorted(points: &[Vec3], radii: Option<&[f32]>) -> Sorted {
        let mut s = Sorted::default();
        let identity: Vec<u32> = (0..points.len() as u32).collect();
        s.gather(points, radii, &identity, Shape::Points { radius: 1.0 });
        s
    }

    /// A kernel value is had exactly where the CPU check of its features
    /// passes, and a SIMD kernel asked for where the CPU or the build
    /// lacks it resolves to the best one that runs.
    #[test]
    fn kernels_exist_only_where_detected() {
        #[cfg(simd)]
        let (avx2, avx512) = {
            use std::arch::is_x86_feature_detected as has;
            let avx2 = has!("avx2");
            let avx512 = has!("avx512f") && has!("popcnt");
            let blocks = avx512 && has!("avx512bw") && has!("avx512vl") && has!("avx512vbmi2");
            assert_eq!(Avx2::detect().is_some(), avx2);
            assert_eq!(Avx512::detect().is_some(), avx512);
            assert_eq!(Avx512Blocks::detect().is_some(), blocks);
            (avx2, avx512)
        };
        #[cfg(not(simd))]
        let (avx2, avx512) = (false, false);
        assert_eq!(ScanKernel::Avx2.is_supported(), avx2);
        assert_eq!(ScanKernel::Avx512.is_supported(), avx512);
        let best_avx2 = if avx2 { ScanKernel::Avx2 } else { ScanKernel::Scalar };
        assert_eq!(ScanKernel::Avx2.resolve(), best_avx2);
        assert_eq!(ScanKernel::Auto.resolve(), best_avx2);
        let best_avx512 = if avx512 { ScanKernel::Avx512 } else { best_avx2 };
        assert_eq!(ScanKernel::Avx512.resolve(), best_avx512);
        assert_eq!(ScanKernel::Scalar.resolve(), ScanKernel::Scalar);
    }

    #[test]
    fn tables() {
        assert_eq!(COMPRESS[0b1010_0110], [1, 2, 5, 7, 0, 0, 0, 0]);
        assert_eq!(HITS[0b1010_0110], 4);
        assert_eq!(HITS[255], 8);
    }

    #[test]
    fn scan_finds_exactly_the_close_slots() {
        let points: Vec<Vec3> = (0..37).map(|i| Vec3::new(i as f32 * 0.5, 0.0, 0.0)).collect();
        let s = sorted(&points, None);
        let c = Columns::new(&s);
        let mut buf = vec![0u32; 64];
        // Around point 10 (x = 5), radius 1: x in [4, 6] -> slots 8..=12; skip 10.
        let n = Scalar.scan(&c, Within { r2: 1.0 }, [5.0, 0.0, 0.0], 3, 37, 10, &mut buf, 0);
        assert_eq!(&buf[..n], [8, 9, 11, 12]);
        // A range that stops mid-step drops the lanes after it.
        let n = Scalar.scan(&c, Within { r2: 1.0 }, [5.0, 0.0, 0.0], 3, 10, NO_SKIP, &mut buf, 0);
        assert_eq!(&buf[..n], [8, 9]);
        // Appending after existing entries.
        buf[0] = 99;
        let n = Scalar.scan(&c, Within { r2: 0.0 }, [5.0, 0.0, 0.0], 0, 37, NO_SKIP, &mut buf, 1);
        assert_eq!(&buf[..n], [99, 10]);
    }

    /// Every kernel gives the scalar kernel's slots, for random ranges,
    /// skips, radii and both tests.
    #[test]
    #[cfg_attr(not(simd), allow(unused_mut, unused_variables, unreachable_code))]
    fn kernels_agree() {
        let mut rng = 0x1234_5678_u64;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng >> 40) as f32 / (1u64 << 24) as f32
        };
        let points: Vec<Vec3> = (0..300).map(|_| Vec3::new(next(), next(), next()) * 4.0).collect();
        let radii: Vec<f32> = (0..300).map(|_| next()).collect();
        let s = sorted(&points, Some(&radii));
        let c = Columns::new(&s);
        let (mut want, mut got) = (vec![0u32; 400], vec![0u32; 400]);
        for round in 0..2000 {
            let from = (next() * 300.0) as usize;
            let to = (from + (next() * 80.0) as usize).min(300);
            let skip = if round % 3 == 0 { NO_SKIP } else { from + (next() * 20.0) as usize };
            let p = [next() * 4.0, next() * 4.0, next() * 4.0];
            let r = next() * 2.0;
            let n = Scalar.scan(&c, Within { r2: r * r }, p, from, to, skip, &mut want, 3);
            let m = Scalar.scan(&c, Contact { rp: r }, p, from, to, skip, &mut want, n);
            for kernel in ScanKernel::available() {
                let (k, l) = match kernel {
                    #[cfg(simd)]
                    ScanKernel::Avx2 => {
                        let avx2 = Avx2::detect().expect("available");
                        let k = avx2.scan(&c, Within { r2: r * r }, p, from, to, skip, &mut got, 3);
                        (k, avx2.scan(&c, Contact { rp: r }, p, from, to, skip, &mut got, k))
                    }
                    #[cfg(simd)]
                    ScanKernel::Avx512 => {
                        let avx512 = Avx512::detect().expect("available");
                        let k =
                            avx512.scan(&c, Within { r2: r * r }, p, from, to, skip, &mut got, 3);
                        (k, avx512.scan(&c, Contact { rp: r }, p, from, to, skip, &mut got, k))
                    }
                    _ => continue,
                };
                assert_eq!((k, l), (n, m), "{kernel:?} round {round}");
                assert_eq!(got[3..l], want[3..m], "{kernel:?} round {round}");
            }
        }
    }

    #[test]
    fn contact_uses_both_radii() {
        let points = [Vec3::ZERO, Vec3::new(3.0, 0.0, 0.0), Vec3::new(3.1, 0.0, 0.0)];
        let s = sorted(&points, Some(&[1.0, 2.0, 2.0]));
        let c = Columns::new(&s);
        let mut buf = vec![0u32; 16];
        let n = Scalar.scan(&c, Contact { rp: 1.0 }, [0.0; 3], 0, 3, 0, &mut buf, 0);
        assert_eq!(&buf[..n], [1]); // exactly touching counts, 3.1 > 1 + 2 does not
    }
}
