//! The tree users hold, and one frame: validation, the root split in
//! parallel chunks, the subtrees as jobs, the merge.

use core::fmt;
use std::sync::atomic::Ordering;

use broadphase_jobs::JobSystem;
use broadphase_kernel::AdaptiveGrid;
use broadphase_storage::{Aabb, InputError, MAX_BOXES};
use parking_lot::Mutex;

use super::config::{GridTreeConfig, RegionDedup};
use super::error::PartitionError;
use super::node::{FrameShared, NodeJobs, WorkerScratch, equalize};
use super::planner::Planner;

/// The load-balancer grid tree: all pairs on all cores.
///
/// While a node holds more than [`split_threshold`](GridTreeConfig::split_threshold)
/// boxes it is split into up to 4×4×4 half-open regions that tile it (the
/// root, in one parallel pass, into up to 16 per axis: two levels at once);
/// a box goes into every region it overlaps. Every node that holds fewer
/// becomes one job that runs the single-thread kernel
/// ([`AdaptiveGrid`]) on its boxes with its thread's own grid. Each region
/// keeps only the pairs whose reference point lies in it, so every pair is
/// reported exactly once, and the regions' lists are concatenated in tree
/// order: the output is the same, pair for pair and in the same order,
/// for any thread count. An input of at most `split_threshold` boxes runs
/// the kernel directly on the calling thread.
///
/// Memory: the frame's jobs borrow the caller's boxes (no copy is made).
/// The tree owns the buffers its splits write, the regions' pairs, and
/// per thread of the [`JobSystem`] a kernel grid and its scratch; jobs are
/// indices into the tree's state, not boxed closures. All of it is kept from one frame to
/// the next, and after each frame every thread's buffers are grown to the
/// largest any thread used: once a scene's frames are warm (same boxes,
/// same thread count), a frame allocates nothing on any thread, however
/// the threads share the work.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_partition::{GridTree, GridTreeConfig};
/// use broadphase_kernel::{Aabb, AdaptiveGrid};
/// use glam::Vec3;
///
/// let boxes: Vec<Aabb> = (0..5_000)
///     .map(|i| {
///         let c = Vec3::new((i % 20) as f32, ((i / 20) % 20) as f32, (i / 400) as f32) * 3.0;
///         Aabb::new(c, c + Vec3::splat(3.5))
///     })
///     .collect();
/// let jobs = JobSystem::new(2);
/// let mut tree = GridTree::with_config(GridTreeConfig { split_threshold: 500, ..Default::default() });
/// let mut pairs = Vec::new();
/// tree.pairs(&jobs, &boxes, &mut pairs)?;
///
/// let mut grid = AdaptiveGrid::default();
/// grid.build(&boxes)?;
/// let mut expected = Vec::new();
/// grid.pairs(&mut expected);
/// pairs.sort_unstable();
/// expected.sort_unstable();
/// assert_eq!(pairs, expected);
/// assert!(tree.stats().regions > 1);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
pub struct GridTree {
    frame: FrameShared,
    /// The kernel for inputs too small to split, run on the calling thread.
    small: AdaptiveGrid,
    planner: Planner,
    stats: TreeStats,
}

impl fmt::Debug for GridTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GridTree")
            .field("config", &self.frame.config)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Default for GridTree {
    fn default() -> Self {
        Self::with_config(GridTreeConfig::default())
    }
}

/// Shape of the last frame's tree.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_partition::GridTree;
/// let mut tree = GridTree::default();
/// tree.pairs(&JobSystem::new(1), &[], &mut Vec::new())?;
/// assert_eq!(tree.stats().regions, 0);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TreeStats {
    /// Boxes in the input.
    pub boxes: usize,
    /// Regions (kernel jobs); 1 when the input was not split, 0 when empty.
    pub regions: usize,
    /// Nodes that were split (the root included).
    pub splits: usize,
    /// Level of the deepest region (0: the root itself).
    pub depth: u32,
    /// Box slots over all regions: more than `boxes` by the copies of
    /// boxes that overlap several regions.
    pub slots: u64,
}

impl GridTree {
    /// An empty tree with the given tuning.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::{GridTree, GridTreeConfig, RegionDedup};
    /// let config = GridTreeConfig { dedup: RegionDedup::ShardedFastUnique, ..Default::default() };
    /// assert_eq!(GridTree::with_config(config).config().dedup, RegionDedup::ShardedFastUnique);
    /// ```
    pub fn with_config(config: GridTreeConfig) -> Self {
        Self {
            frame: FrameShared { config, ..FrameShared::default() },
            small: AdaptiveGrid::with_config(config.grid),
            planner: Planner::default(),
            stats: TreeStats::default(),
        }
    }

    /// The tuning this tree was made with.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::{GridTree, GridTreeConfig};
    /// assert_eq!(GridTree::default().config(), &GridTreeConfig::default());
    /// ```
    pub fn config(&self) -> &GridTreeConfig {
        &self.frame.config
    }

    /// Shape of the last frame's tree (zeros after an error).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_partition::GridTree;
    /// use broadphase_kernel::Aabb;
    /// let mut tree = GridTree::default();
    /// tree.pairs(&JobSystem::new(1), &[Aabb::default(); 3], &mut Vec::new())?;
    /// assert_eq!((tree.stats().boxes, tree.stats().regions), (3, 1));
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn stats(&self) -> TreeStats {
        self.stats
    }

    /// Writes every overlapping pair of `boxes` into `out` (cleared first),
    /// each exactly once as `[a, b]` with `a < b`, indices into `boxes`:
    /// the kernel's set of pairs, found on all threads of `jobs`. The order
    /// is deterministic for a given input and config, whatever the thread
    /// count.
    ///
    /// # Errors
    ///
    /// [`InputError`] naming the first box with a NaN or infinite
    /// coordinate or `min > max` (then `out` is empty).
    ///
    /// # Panics
    ///
    /// If a job panics (a bug): the panic is caught on its thread and
    /// raised again here with its message. [`try_pairs`](GridTree::try_pairs)
    /// returns it as an error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_partition::GridTree;
    /// use broadphase_kernel::Aabb;
    /// use glam::Vec3;
    /// let boxes = [Aabb::new(Vec3::ZERO, Vec3::ONE), Aabb::new(Vec3::ONE, Vec3::splat(2.0))];
    /// let mut pairs = Vec::new();
    /// GridTree::default().pairs(&JobSystem::new(2), &boxes, &mut pairs)?;
    /// assert_eq!(pairs, [[0, 1]]);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn pairs(
        &mut self,
        jobs: &JobSystem,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), InputError> {
        match self.try_pairs(jobs, boxes, out) {
            Ok(()) => Ok(()),
            Err(PartitionError::Input(e)) => Err(e),
            Err(PartitionError::Job(e)) => panic!("broadphase GridTree: {e}"),
        }
    }

    /// As [`pairs`](GridTree::pairs), with a panicking job reported as
    /// [`PartitionError::Job`] instead of a panic.
    ///
    /// # Errors
    ///
    /// [`PartitionError::Input`] for bad input, [`PartitionError::Job`] if
    /// a job panicked; `out` is empty either way.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_partition::GridTree;
    /// let mut pairs = vec![[9, 9]];
    /// GridTree::default().try_pairs(&JobSystem::new(2), &[], &mut pairs)?;
    /// assert!(pairs.is_empty());
    /// # Ok::<(), broadphase_partition::PartitionError>(())
    /// ```
    pub fn try_pairs(
        &mut self,
        jobs: &JobSystem,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), PartitionError> {
        if boxes.len() <= self.frame.config.split_threshold {
            return self.small_frame(boxes, out);
        }
        self.frame(jobs, boxes, out)
    }

    /// A frame too small to split: the kernel on the calling thread.
    fn small_frame(
        &mut self,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), PartitionError> {
        self.stats = TreeStats::default();
        out.clear();
        if self.small.config() != &self.frame.config.grid {
            self.small = AdaptiveGrid::with_config(self.frame.config.grid);
        }
        self.small.build(boxes)?;
        self.small.pairs(out);
        self.stats = TreeStats {
            boxes: boxes.len(),
            regions: usize::from(!boxes.is_empty()),
            splits: 0,
            depth: 0,
            slots: boxes.len() as u64,
        };
        Ok(())
    }

    /// A frame on all threads: validate, split the root in chunks, spawn
    /// the subtrees, merge.
    fn frame(
        &mut self,
        jobs: &JobSystem,
        input: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), PartitionError> {
        out.clear();
        self.stats = TreeStats::default();
        let n = input.len();
        if n > MAX_BOXES {
            return Err(InputError::TooManyBoxes { count: n }.into());
        }
        let frame = &mut self.frame;
        frame.stats.reset();
        frame.arena.get_mut().clear();
        frame.nodes.get_mut().clear();
        let grid_config = frame.config.grid;
        while frame.workers.len() < jobs.threads() {
            frame.workers.push(Mutex::new(WorkerScratch::new(grid_config)));
        }
        if frame.config.dedup == RegionDedup::ShardedFastUnique {
            frame.shards.reset(n);
        }
        self.planner.start_frame(jobs);

        let node_jobs = NodeJobs { frame: &self.frame, input };
        let planner = &mut self.planner;
        let result = jobs
            .scope(|scope| planner.split_root(jobs, &node_jobs, scope))
            .map_err(PartitionError::from)
            .and_then(|split| split);

        let frame = &mut self.frame;
        let nodes = frame.nodes.get_mut();
        self.planner.end_frame(nodes.len());
        nodes.clear();
        frame.pool.recycle();
        equalize(&mut frame.workers);
        let arena = frame.arena.get_mut();
        if let Err(e) = result {
            arena.clear();
            return Err(e);
        }
        arena.drain_into(out);
        if frame.config.dedup == RegionDedup::ShardedFastUnique {
            out.sort_unstable();
        }
        let stats = &frame.stats;
        self.stats = TreeStats {
            boxes: n,
            regions: stats.regions.load(Ordering::Relaxed) as usize,
            splits: stats.splits.load(Ordering::Relaxed) as usize,
            depth: stats.depth.load(Ordering::Relaxed),
            slots: stats.slots.load(Ordering::Relaxed),
        };
        Ok(())
    }
}
