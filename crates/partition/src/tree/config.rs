//! Plain configuration for [`GridTree`](super::GridTree).

use broadphase_kernel::GridConfig;

/// How a pair whose boxes both reach several regions is reported once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RegionDedup {
    /// Each region keeps only the pairs whose reference point (the min
    /// corner of the two boxes' intersection) lies in its half-open
    /// region; regions tile space, so exactly one region keeps each pair.
    /// No shared state, no locks, and the per-region lists concatenated in
    /// tree order are already the deterministic output. Measured faster
    /// (see `docs/BENCHMARKS.md`), so the default.
    #[default]
    ReferencePoint,
    /// A benchmark baseline, kept to measure the default against: every
    /// region reports every pair it finds; the pairs go through per-box
    /// `FastUnique` sets behind `parking_lot` mutexes sharded by the
    /// smaller box id, and only the first insertion of a pair is kept.
    /// Which region keeps it depends on timing, so the merged output is
    /// sorted to be the same for every thread count. Same pairs, measured
    /// slower; not meant for production frames.
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
pub struct GridTreeConfig {
    /// A node holding more boxes than this is split into up to 4×4×4
    /// regions; one that holds at most this many becomes one job running
    /// the kernel. A whole input of at most this many boxes runs on the
    /// calling thread with no job at all.
    ///
    /// Default 5,000. Measured against 10,000, 5,000 was 17–18% faster on the 40k-box scenes and 7% faster
    /// at a million boxes, on one thread (`docs/BENCHMARKS.md`): smaller
    /// regions keep the kernel's working set in cache, and clustered
    /// scenes get one cluster per region.
    pub split_threshold: usize,
    /// Levels (zoom steps included) after which a node becomes a region
    /// whatever it holds; at most 16.
    pub max_depth: u32,
    /// An axis is split only where a box overlaps on average at most this
    /// many of its cells (a pile, long thin boxes or one huge box are not
    /// split along axes where splitting only copies them).
    pub max_axis_replication: f32,
    /// Box copies the whole tree may make, per input box; past it nodes
    /// become regions instead of splitting further.
    pub max_copies_per_box: u32,
    /// How repeats across regions are removed.
    pub dedup: RegionDedup,
    /// The kernel configuration every region's grid uses.
    pub grid: GridConfig,
}

impl Default for GridTreeConfig {
    fn default() -> Self {
        Self {
            split_threshold: 5_000,
            max_depth: 8,
            max_axis_replication: 1.5,
            max_copies_per_box: 8,
            dedup: RegionDedup::ReferencePoint,
            grid: GridConfig::default(),
        }
    }
}
