//! Plain configuration for [`GridTree`](super::GridTree).

use broadphase_kernel::GridConfig;

/// How a [`GridTree`](super::GridTree) frame keeps each pair once when the
/// input is split into subtrees (boxes crossing a cell border reach several
/// of them). Both give the same set of pairs; they differ in cost and in
/// the order of the output.
///
/// # Examples
///
/// ```
/// use broadphase_partition::{GridTreeConfig, PairMerge};
/// assert_eq!(GridTreeConfig::default().merge, PairMerge::ReferencePoint);
/// let sharded = GridTreeConfig { merge: PairMerge::ShardedFastUnique, ..Default::default() };
/// assert_ne!(sharded, GridTreeConfig::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum PairMerge {
    /// Each leaf reports only the pairs whose reference point (the max of
    /// the two low corners) it holds, so no pair is found twice and the
    /// merge concatenates the subtrees' lists in their order in the tree.
    /// The output is in that tree order. The fastest.
    #[default]
    ReferencePoint,
    /// Each leaf reports every overlapping pair of its boxes, so a pair is
    /// found once per leaf its two boxes share. The subtree jobs put their
    /// pairs into one small set per box (the smaller id's; 8 inline
    /// partners, a shared spill for more), kept in shards by the low bits
    /// of the box id, each shard behind its own mutex: a power-of-two count
    /// of at least 4 per thread. The merge then lists every box's set. The
    /// output is sorted: by the first id, then the second. Slower than
    /// [`ReferencePoint`](PairMerge::ReferencePoint) (measured in
    /// `docs/BENCHMARKS.md`); it is the merge for pairs that come from
    /// regions with no shared rule for which region reports a pair.
    ShardedFastUnique,
}

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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GridTreeConfig {
    /// An input of at most this many boxes runs the kernel on the calling
    /// thread, with no job at all; a bigger one has its root split on all
    /// threads and each child subtree walked as one job.
    ///
    /// Default 10,000: the size at which the load-balancing tree splits.
    /// A child above it is split again, so a scene whose children are
    /// big pays for it on one thread and gains on two: stretched40k took
    /// 1.04–1.07× on one thread and 0.95× on two the time of the build
    /// before, which split at 16,384 (`docs/BENCHMARKS.md`).
    pub split_threshold: usize,
    /// How the subtrees' pairs are merged (default
    /// [`PairMerge::ReferencePoint`]).
    pub merge: PairMerge,
    /// The kernel's configuration: leaf sizes, replication limit, copy
    /// budget, pair kernel. The tree's root split is the kernel's own
    /// split, so it obeys these too.
    pub grid: GridConfig,
}

impl Default for GridTreeConfig {
    fn default() -> Self {
        Self {
            split_threshold: 10_000,
            merge: PairMerge::ReferencePoint,
            grid: GridConfig::default(),
        }
    }
}
