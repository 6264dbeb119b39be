//! Plain configuration for [`GridTree`](super::GridTree).

use broadphase_kernel::GridConfig;

/// Tuning of [`GridTree`](super::GridTree). Every field is safe to change;
/// no value makes it drop, repeat or invent a pair.
///
/// # Examples
///
/// ```
/// use broadphase_partition::{GridTree, GridTreeConfig};
/// let tree = GridTree::with_config(GridTreeConfig { split_threshold: 2_000, ..Default::default() });
/// assert_eq!(tree.config().split_threshold, 2_000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridTreeConfig {
    /// An input of at most this many boxes runs the kernel on the calling
    /// thread, with no job at all; a bigger one has its root split on all
    /// threads and each child subtree walked as one job.
    ///
    /// Default 16,384: below it, the passes and jobs of a parallel frame
    /// cost about what they save on two cores (`docs/BENCHMARKS.md`).
    pub split_threshold: usize,
    /// The kernel's configuration: leaf sizes, replication limit, copy
    /// budget, pair kernel. The tree's root split is the kernel's own
    /// split, so it obeys these too.
    pub grid: GridConfig,
}

impl Default for GridTreeConfig {
    fn default() -> Self {
        Self { split_threshold: 16_384, grid: GridConfig::default() }
    }
}
