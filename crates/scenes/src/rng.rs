//! SplitMix64: the one random-number generator every scene draws from.
//!
//! Written out here (a dozen lines) instead of taken from `rand` so that a
//! scene's boxes depend on nothing but this file and a seed: no upstream
//! release can change them.

/// The SplitMix64 generator (Steele, Lea and Flood, 2014), as used to seed
/// xoshiro: a 64-bit counter advanced by a fixed odd constant and hashed.
///
/// Not cryptographic; fast, statistically sound for scene generation, and
/// fully determined by its seed on every platform.
///
/// # Examples
///
/// ```
/// use broadphase_scenes::SplitMix64;
///
/// let mut a = SplitMix64::new(42);
/// let mut b = SplitMix64::new(42);
/// assert_eq!(a.next_u64(), b.next_u64());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose whole output is fixed by `seed`.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_scenes::SplitMix64;
    ///
    /// let mut rng = SplitMix64::new(1234567);
    /// assert_eq!(rng.next_u64(), 6457827717110365317);
    /// ```
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 uniformly distributed bits.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_scenes::SplitMix64;
    ///
    /// let mut rng = SplitMix64::new(7);
    /// assert_ne!(rng.next_u64(), rng.next_u64());
    /// ```
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform `f32` in `[0, 1)`: the top 24 bits of [`next_u64`](Self::next_u64)
    /// scaled by 2⁻²⁴, so every value is a multiple of 2⁻²⁴ and exact.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_scenes::SplitMix64;
    ///
    /// let mut rng = SplitMix64::new(7);
    /// let x = rng.next_f32();
    /// assert!((0.0..1.0).contains(&x));
    /// ```
    pub fn next_f32(&mut self) -> f32 {
        const SCALE: f32 = 1.0 / (1u32 << 24) as f32;
        (self.next_u64() >> 40) as f32 * SCALE
    }

    /// A uniform `f32` in `[lo, hi)` for finite `lo < hi`.
    ///
    /// `lo + (hi - lo) * u` can round up to `hi` in `f32`; such a draw is
    /// returned as the largest `f32` below `hi`, so the interval stays
    /// half-open.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_scenes::SplitMix64;
    ///
    /// let mut rng = SplitMix64::new(7);
    /// let x = rng.range_f32(-3.0, 5.0);
    /// assert!((-3.0..5.0).contains(&x));
    /// ```
    pub fn range_f32(&mut self, lo: f32, hi: f32) -> f32 {
        let x = lo + (hi - lo) * self.next_f32();
        if x < hi { x } else { hi.next_down() }
    }

    /// A uniform index in `0..n` for `n > 0` (Lemire's multiply-shift; the
    /// bias is below 2⁻³² for any `n` that fits `u32`).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_scenes::SplitMix64;
    ///
    /// let mut rng = SplitMix64::new(7);
    /// assert!(rng.below(10) < 10);
    /// ```
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_reference_vector() {
        // The published SplitMix64 test vector for seed 1234567.
        let mut rng = SplitMix64::new(1234567);
        let got: Vec<u64> = (0..5).map(|_| rng.next_u64()).collect();
        assert_eq!(
            got,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821,
            ]
        );
    }

    #[test]
    fn floats_stay_in_range() {
        let mut rng = SplitMix64::new(99);
        for _ in 0..100_000 {
            let u = rng.next_f32();
            assert!((0.0..1.0).contains(&u));
            let x = rng.range_f32(0.0, 900.0);
            assert!((0.0..900.0).contains(&x));
            let y = rng.range_f32(-0.25, 0.25);
            assert!((-0.25..0.25).contains(&y));
        }
    }

    #[test]
    fn range_never_returns_hi() {
        // lo + (hi - lo) * (1 - 2^-24) rounds to hi here; the clamp keeps it below.
        let lo = 1.0e6_f32;
        let hi = lo + 1.0;
        let x = lo + (hi - lo) * (1.0 - f32::EPSILON / 2.0);
        assert_eq!(x, hi, "the case this test guards must exist");
        let mut rng = SplitMix64::new(3);
        for _ in 0..100_000 {
            assert!(rng.range_f32(lo, hi) < hi);
        }
    }

    #[test]
    fn below_is_in_range_and_covers() {
        let mut rng = SplitMix64::new(5);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let i = rng.below(7);
            seen[i] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }
}
