//! Plain configuration for [`AdaptiveGrid`](super::AdaptiveGrid).

/// How a pair found in several leaves is reported only once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Dedup {
    /// Report a pair only in the leaf whose region holds the min corner of
    /// the two boxes' intersection. Costs one scalar test per overlapping
    /// candidate and no memory; measured faster (see `docs/BENCHMARKS.md`).
    #[default]
    ReferencePoint,
    /// A benchmark baseline, kept to measure the default against: every
    /// leaf reports every overlap and a per-box
    /// [`FastUniqueSets`](broadphase_storage::FastUniqueSets) drops the
    /// repeats (the scheme the adaptive grid was first described with).
    /// Same pairs, never faster here; not meant for production frames.
    FastUnique,
}

/// Which implementation of the leaf overlap test to run.
///
/// Every variant computes the same pairs; tests run all of them that the
/// machine supports. A requested kernel the CPU lacks falls back to the best
/// one it has (see [`PairKernel::resolve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PairKernel {
    /// The best the CPU offers, detected at run time.
    #[default]
    Auto,
    /// Portable Rust, no intrinsics; the twin every SIMD kernel is tested against.
    Scalar,
    /// 4 lanes, x86-64 baseline.
    Sse2,
    /// 8 lanes, needs AVX2.
    Avx2,
    /// 16 lanes, needs AVX-512F.
    Avx512,
}

impl PairKernel {
    /// The kernels this CPU can run, scalar first.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::PairKernel;
    /// assert_eq!(PairKernel::available()[0], PairKernel::Scalar);
    /// ```
    pub fn available() -> Vec<PairKernel> {
        [PairKernel::Scalar, PairKernel::Sse2, PairKernel::Avx2, PairKernel::Avx512]
            .into_iter()
            .filter(|k| k.is_supported())
            .collect()
    }

    /// Whether this CPU (and this build) can run the kernel.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::PairKernel;
    /// assert!(PairKernel::Scalar.is_supported());
    /// ```
    pub fn is_supported(self) -> bool {
        match self {
            PairKernel::Auto | PairKernel::Scalar => true,
            #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
            PairKernel::Sse2 => true,
            #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
            PairKernel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
            PairKernel::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(not(all(target_arch = "x86_64", not(feature = "scalar"))))]
            _ => false,
        }
    }

    /// The kernel that will actually run: `Auto` becomes the preferred
    /// supported kernel, and an unsupported request falls back to the best
    /// supported one below it.
    ///
    /// `Auto` prefers AVX2 over AVX-512: with the short rows of a leaf the
    /// 16-lane kernel wastes more lanes than it gains (measured in
    /// `benches/kernel.rs`, recorded in `docs/BENCHMARKS.md`).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::PairKernel;
    /// assert_ne!(PairKernel::Auto.resolve(), PairKernel::Auto);
    /// ```
    pub fn resolve(self) -> PairKernel {
        let wanted = match self {
            PairKernel::Auto => PairKernel::Avx2,
            other => other,
        };
        let order = [PairKernel::Avx512, PairKernel::Avx2, PairKernel::Sse2, PairKernel::Scalar];
        let from = order.iter().position(|&k| k == wanted).unwrap_or(0);
        order[from..].iter().copied().find(|k| k.is_supported()).unwrap_or(PairKernel::Scalar)
    }
}

/// Tuning of [`AdaptiveGrid`](super::AdaptiveGrid). Defaults are the
/// measured best on the shared scenes; every field is safe to change.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{AdaptiveGrid, Dedup, GridConfig};
/// let grid = AdaptiveGrid::with_config(GridConfig { dedup: Dedup::FastUnique, ..GridConfig::default() });
/// assert_eq!(grid.config().dedup, Dedup::FastUnique);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridConfig {
    /// A node with at most this many boxes becomes a leaf.
    pub leaf_capacity: usize,
    /// Levels (including zoom steps) after which a node becomes a leaf
    /// whatever it holds, so no input recurses without bound.
    pub max_depth: u32,
    /// An axis is split only where a box overlaps on average at most this
    /// many of its 4 cells; beyond that, splitting copies boxes more than it
    /// separates them (a pile, or long thin boxes along that axis).
    pub max_axis_replication: f32,
    /// How repeats of a pair across leaves are removed.
    pub dedup: Dedup,
    /// Which leaf overlap kernel runs.
    pub kernel: PairKernel,
}

impl Default for GridConfig {
    fn default() -> Self {
        Self {
            leaf_capacity: 64,
            max_depth: 32,
            max_axis_replication: 1.5,
            dedup: Dedup::ReferencePoint,
            kernel: PairKernel::Auto,
        }
    }
}
