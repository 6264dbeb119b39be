//! Plain configuration for [`AdaptiveGrid`](super::AdaptiveGrid).

use super::cpu::Kernel;

/// Which implementation of the leaf overlap tests to run.
///
/// Every variant computes the same pairs; tests run all of them that the
/// machine supports. A requested kernel the CPU lacks falls back to the
/// portable one (see [`PairKernel::resolve`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PairKernel {
    /// The best the CPU offers, detected at run time.
    #[default]
    Auto,
    /// Plain Rust, no intrinsics (the compiler vectorizes it for the
    /// x86-64 baseline, SSE2); the twin every SIMD kernel is tested against.
    Scalar,
    /// AVX2: a 4×4 tile of quantized boxes in one 16-lane vector, and
    /// 8-lane `f32` sweeps in leaves too big to tile.
    Avx2,
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
        [PairKernel::Scalar, PairKernel::Avx2].into_iter().filter(|k| k.is_supported()).collect()
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
            PairKernel::Avx2 => Kernel::resolve(self) != Kernel::Scalar,
        }
    }

    /// The kernel that will actually run: `Auto` becomes the best supported
    /// kernel, and an unsupported request falls back to `Scalar`.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::PairKernel;
    /// assert_ne!(PairKernel::Auto.resolve(), PairKernel::Auto);
    /// ```
    pub fn resolve(self) -> PairKernel {
        Kernel::resolve(self).name()
    }
}

/// How [`AdaptiveGrid::ray_hits`](super::AdaptiveGrid::ray_hits) drops
/// the copies of a box: a box lies in every leaf its quantized box meets,
/// so a ray crossing several of those leaves meets it once in each. Both
/// give the same hits in the same order (sorted by `t`, then index).
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{AdaptiveGrid, GridConfig, RayDedup};
/// let grid = AdaptiveGrid::with_config(GridConfig { ray_dedup: RayDedup::FastUnique, ..GridConfig::default() });
/// assert_eq!(grid.config().ray_dedup, RayDedup::FastUnique);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum RayDedup {
    /// Every copy is tested and kept; sorting the hits puts a box's copies
    /// (same index, same `t`) side by side and one pass drops them.
    #[default]
    Sort,
    /// The first 16 distinct boxes the ray meets are remembered in a
    /// [`FastUnique`](broadphase_storage::FastUnique) (one compare of all
    /// 16 per box met): their copies are skipped before the exact test, so
    /// they are neither tested again nor sorted. Boxes past the 16th are
    /// kept as with `Sort`, and the same pass drops their copies.
    FastUnique,
}

/// Tuning of [`AdaptiveGrid`](super::AdaptiveGrid). Defaults are the
/// measured best on the shared scenes (`docs/BENCHMARKS.md`); every field is
/// safe to change: no value makes a result wrong, only slower.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{AdaptiveGrid, GridConfig};
/// let grid = AdaptiveGrid::with_config(GridConfig { leaf_capacity: 32, ..GridConfig::default() });
/// assert_eq!(grid.config().leaf_capacity, 32);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GridConfig {
    /// A node with at most this many boxes becomes a leaf.
    pub leaf_capacity: usize,
    /// A leaf with more boxes than this (only a node that could not be
    /// split: a pile, a dense knot at the finest cell, boxes much larger
    /// than the cells) is swept along x instead of tested all against all.
    pub sweep_above: usize,
    /// A node is split only if its boxes land in at most this many child
    /// cells each on average; beyond that, the split copies boxes more than
    /// it separates them, and the node is a leaf.
    pub max_replication: f32,
    /// Box copies the build may hold at once, per input box. Only input built
    /// to copy boxes level after level gets near it; its nodes then become
    /// leaves instead of exhausting memory.
    pub copy_budget: f32,
    /// Which leaf overlap kernel runs.
    pub kernel: PairKernel,
    /// How all-hits rays drop the copies of boxes in several leaves.
    pub ray_dedup: RayDedup,
}

impl Default for GridConfig {
    fn default() -> Self {
        Self {
            leaf_capacity: 128,
            sweep_above: 1024,
            max_replication: 4.0,
            copy_budget: 8.0,
            kernel: PairKernel::Auto,
            ray_dedup: RayDedup::Sort,
        }
    }
}
