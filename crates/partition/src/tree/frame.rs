//! The tree users hold, and one frame: validation, the root split in
//! parallel chunks, the subtrees as jobs, the merge.

use core::fmt;
use std::cmp::Reverse;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use broadphase_kernel::AdaptiveGrid;
use broadphase_storage::{Aabb, InputError, MAX_BOXES, validate_boxes};
use parking_lot::Mutex;

use super::buffers::Source;
use super::config::{GridTreeConfig, RegionDedup};
use super::node::{
    FrameShared, NodeTask, PASS_PART, PassKind, WorkerScratch, equalize, spawn_node,
};
use super::plan::{Decision, Extent, Key, MAX_LEVELS, Region, child_allowance, decide};
use super::root::{ChunkSet, RootGrid};
use crate::jobs::{IndexedJob, JobError, JobGroup, JobSystem};

/// Boxes per chunk of the root's parallel passes: about four chunks per
/// thread, within these bounds. Chunking never changes the output: every
/// decision uses totals over all chunks, and a cell's boxes are gathered
/// chunk after chunk, so each region sees its boxes in input order
/// whatever the chunk size or thread count.
const CHUNK_MIN: usize = 2 * 1024;
const CHUNK_MAX: usize = 16 * 1024;

/// Nodes below the root with more boxes than this are split in parallel
/// passes (one job per part) instead of inside one job: a serial split of
/// a node this big takes about a millisecond.
const HUGE_NODE: usize = 64 * 1024;

/// About how many boxes the root's extent is taken from.
const EXTENT_SAMPLE: usize = 4096;

/// The input contract for one box (the fast check of `validate_boxes`).
#[inline(always)]
pub(crate) fn is_valid(b: &Aabb) -> bool {
    b.min.cmple(b.max).all() && b.min.is_finite() && b.max.is_finite()
}

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
/// Memory: the tree owns a copy of the input (reused each frame), the
/// buffers its splits write, the regions' pairs, and per thread of the
/// [`JobSystem`] a kernel grid and its scratch; jobs are indices into the
/// tree's state, not boxed closures. All of it is kept from one frame to
/// the next, and after each frame every thread's buffers are grown to the
/// largest any thread used: once a scene's frames are warm (same boxes,
/// same thread count), a frame allocates nothing on any thread, however
/// the threads share the work.
///
/// # Examples
///
/// ```
/// use broadphase_partition::{GridTree, GridTreeConfig, JobSystem};
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
    frame: Arc<FrameShared>,
    /// The copy of the caller's boxes that jobs read.
    input: Arc<Vec<Aabb>>,
    /// The kernel for inputs too small to split, run on the calling thread.
    small: AdaptiveGrid,
    planner: Planner,
    stats: TreeStats,
}

/// The orchestrating thread's memory, kept across frames.
#[derive(Debug, Default)]
struct Planner {
    /// Boxes per cell of the split being decided.
    cells: Vec<u32>,
    /// Occupied cells, biggest first.
    order: Vec<usize>,
    /// Huge nodes waiting for their parallel split.
    huge: Vec<NodeTask>,
    /// Chunk sets, taken in the same order every frame.
    sets: Vec<Arc<ChunkSet>>,
    sets_taken: usize,
    /// Pass jobs spawned this frame.
    pass_jobs: usize,
    /// Jobs spawned last frame: the room the shared queue needs.
    jobs_last_frame: usize,
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
/// use broadphase_partition::{GridTree, JobSystem};
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

/// Why a frame of [`GridTree`] failed.
///
/// # Examples
///
/// ```
/// use broadphase_partition::{GridTree, JobSystem, PartitionError};
/// use broadphase_kernel::{Aabb, InputError};
/// use glam::Vec3;
/// let bad = [Aabb::new(Vec3::ONE, Vec3::ZERO)];
/// let err = GridTree::default().try_pairs(&JobSystem::new(1), &bad, &mut Vec::new()).unwrap_err();
/// assert!(matches!(err, PartitionError::Input(InputError::Inverted { index: 0, .. })));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PartitionError {
    /// The input breaks the contract; names the first bad box.
    Input(InputError),
    /// A job panicked (a bug); the frame's output is empty.
    Job(JobError),
}

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionError::Input(e) => e.fmt(f),
            PartitionError::Job(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for PartitionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PartitionError::Input(e) => Some(e),
            PartitionError::Job(e) => Some(e),
        }
    }
}

impl From<InputError> for PartitionError {
    fn from(e: InputError) -> Self {
        PartitionError::Input(e)
    }
}

impl From<JobError> for PartitionError {
    fn from(e: JobError) -> Self {
        PartitionError::Job(e)
    }
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
            frame: Arc::new(FrameShared { config, ..FrameShared::default() }),
            input: Arc::new(Vec::new()),
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
    /// use broadphase_partition::{GridTree, JobSystem};
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
    /// use broadphase_partition::{GridTree, JobSystem};
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
    /// use broadphase_partition::{GridTree, JobSystem};
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
        // Jobs outlive this borrow of `boxes` as far as the compiler knows,
        // so they read a copy the tree owns (and reuses every frame).
        match Arc::get_mut(&mut self.input) {
            Some(copy) => {
                copy.clear();
                copy.extend_from_slice(boxes);
            }
            None => self.input = Arc::new(boxes.to_vec()),
        }
        // A second handle for the frame to lend its jobs; dropped after it,
        // so the copy is ours alone again for the next frame.
        let input = Arc::clone(&self.input);
        self.frame(jobs, &input, out)
    }

    /// As [`try_pairs`](GridTree::try_pairs) on boxes the caller already
    /// shares: no copy of the input is made. The tree drops its clones of
    /// `boxes` before returning, so `Arc::get_mut` on it succeeds again
    /// and the caller can refill it in place for the next frame.
    ///
    /// # Errors
    ///
    /// As [`try_pairs`](GridTree::try_pairs).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::{GridTree, JobSystem};
    /// use broadphase_kernel::Aabb;
    /// use std::sync::Arc;
    /// let jobs = JobSystem::new(2);
    /// let mut tree = GridTree::default();
    /// let mut boxes = Arc::new(vec![Aabb::default(); 4]);
    /// let mut pairs = Vec::new();
    /// tree.pairs_shared(&jobs, &boxes, &mut pairs)?;
    /// assert_eq!(pairs.len(), 6);
    /// Arc::get_mut(&mut boxes).expect("no job holds it").clear(); // refill for the next frame
    /// # Ok::<(), broadphase_partition::PartitionError>(())
    /// ```
    pub fn pairs_shared(
        &mut self,
        jobs: &JobSystem,
        boxes: &Arc<Vec<Aabb>>,
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
        input: &Arc<Vec<Aabb>>,
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), PartitionError> {
        out.clear();
        self.stats = TreeStats::default();
        let n = input.len();
        if n > MAX_BOXES {
            return Err(InputError::TooManyBoxes { count: n }.into());
        }
        let frame = Arc::get_mut(&mut self.frame).expect("no job outlives a frame");
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
        jobs.shared.reserve_injected(self.planner.jobs_last_frame);
        self.planner.sets_taken = 0;
        self.planner.pass_jobs = 0;

        let result = self.split_and_run(jobs, input);

        self.planner.huge.clear();
        let frame = Arc::get_mut(&mut self.frame).expect("no job outlives a frame");
        let nodes = frame.nodes.get_mut();
        self.planner.jobs_last_frame = nodes.len() + self.planner.pass_jobs;
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

    /// The root split in parallel chunks of the input, then the huge
    /// children likewise, each spawning its other children as jobs;
    /// returns when every job has finished.
    fn split_and_run(
        &mut self,
        jobs: &JobSystem,
        input: &Arc<Vec<Aabb>>,
    ) -> Result<(), PartitionError> {
        let config = self.frame.config;
        let n = input.len();
        let chunk = (n / (4 * jobs.threads())).clamp(CHUNK_MIN, CHUNK_MAX);
        let root = NodeTask {
            source: Source::Input(Arc::clone(input), 0..n),
            count: n,
            region: Region::EVERYWHERE,
            key: Key::ROOT,
            level: 0,
            depth: 0,
            allowance: u64::from(config.max_copies_per_box) * n as u64 + 4096,
        };
        let group = jobs.group();
        let planner = &mut self.planner;
        planner.split_in_chunks(jobs, &self.frame, &group, root, chunk, Some(input))?;
        while let Some(node) = planner.huge.pop() {
            planner.split_in_chunks(jobs, &self.frame, &group, node, chunk, None)?;
        }
        Ok(group.wait()?)
    }
}

impl Planner {
    /// Splits a node on the calling thread, each pass over its boxes in
    /// parallel (one job per part), and spawns its children into `group`;
    /// children that are still huge wait in `huge` to be split the same
    /// way. The root (`input` given) cuts up to 16 cells per axis and
    /// validates the input on the way; a huge node below it cuts up to 4
    /// per axis, like a node job. Which nodes are split this way depends
    /// only on their box count, never on the thread count, so the tree
    /// stays the same for every thread count.
    fn split_in_chunks(
        &mut self,
        jobs: &JobSystem,
        frame: &Arc<FrameShared>,
        group: &JobGroup<'_>,
        node: NodeTask,
        chunk: usize,
        input: Option<&Arc<Vec<Aabb>>>,
    ) -> Result<(), PartitionError> {
        let config = frame.config;
        let n = node.count;
        // Up to 16 cells per axis where the key has room for 4,096 cells.
        let max_per_axis = if node.key.can_split(4096) { 16 } else { 4 };
        let mut extent = Extent::EMPTY;
        if let Some(input) = input {
            // The extent, from a fixed sample of the boxes: a box outside
            // it only lands in an edge cell, whose region reaches to
            // infinity. The boxes are validated while the chunks are counted.
            for b in input.iter().step_by((n / EXTENT_SAMPLE).max(1)) {
                if is_valid(b) {
                    extent.add(b);
                }
            }
        } else {
            extent = self.parallel_extent(jobs, frame, &node.source, chunk, node.region)?;
        }

        // Zoom and recount as a node job would, every pass in parallel.
        let parts = node.source.part_count(chunk);
        let mut window = node.region;
        let mut depth = node.depth;
        let split: Option<(RootGrid, Arc<ChunkSet>)> = 'plan: loop {
            if depth >= config.max_depth.min(MAX_LEVELS) {
                break None;
            }
            let mut grid = RootGrid::over_extent(&extent, n, config.split_threshold, max_per_axis);
            if grid.cells() == 1 {
                break None;
            }
            loop {
                let taken = self.take_set(parts);
                let set = Some(Arc::clone(&self.sets[taken]));
                self.run_pass(jobs, frame, PassKind::Scatter(grid), &node.source, chunk, set)?;
                // The pass's jobs are done and the pass let go of the set.
                let set = Arc::get_mut(&mut self.sets[taken]).expect("no job holds the set");
                set.finish();
                let set = &self.sets[taken];
                self.cells.clear();
                self.cells.resize(grid.cells(), 0);
                let mut spans = [0u64; 3];
                if !set.totals(&mut self.cells, &mut spans) {
                    validate_boxes(input.map_or(&[][..], |i| &i[..]))?;
                    unreachable!("a chunk failed validation but the whole input passed");
                }
                let max_replication = config.max_axis_replication;
                let cells = &self.cells;
                match decide(grid.split_axes(), &spans, cells, n, max_replication, node.allowance) {
                    Decision::Split => break 'plan Some((grid, Arc::clone(set))),
                    Decision::Recount(drop) => grid = grid.without(drop),
                    Decision::Zoom(cell) => {
                        window = grid.region(&window, cell);
                        depth += 1;
                        self.sets_taken -= 1; // nothing refers to it: reuse it
                        extent = self.parallel_extent(jobs, frame, &node.source, chunk, window)?;
                        continue 'plan;
                    }
                    Decision::Leaf => break 'plan None,
                }
                self.sets_taken -= 1;
            }
        };

        let spawn = |job: Arc<dyn IndexedJob>, index| group.spawn_indexed(job, index);
        let Some((grid, set)) = split else {
            // Not split: one region.
            let source = match input {
                Some(input) => {
                    // The chunks may not have looked at every box.
                    validate_boxes(input)?;
                    Source::Input(Arc::clone(input), 0..n)
                }
                None => node.source,
            };
            let region = NodeTask { source, depth: MAX_LEVELS, ..node };
            spawn_node(frame, region, spawn);
            return Ok(());
        };
        frame.stats.splits.fetch_add(1, Ordering::Relaxed);
        let cells = &self.cells;
        let copies: u64 = cells.iter().map(|&c| u64::from(c)).sum();
        // Biggest children first: they are the long jobs.
        self.order.clear();
        self.order.extend((0..cells.len()).filter(|&c| cells[c] > 0));
        self.order.sort_unstable_by_key(|&c| (Reverse(cells[c]), c));
        let first_huge = self.huge.len();
        for &cell in &self.order {
            let child = NodeTask {
                source: Source::Cell(Arc::clone(&set), cell),
                count: cells[cell] as usize,
                region: grid.region(&node.region, cell),
                key: node.key.child(grid.cells(), cell),
                level: node.level + 1,
                depth: depth + 1,
                allowance: child_allowance(node.allowance, copies, cells[cell]),
            };
            if frame.splits(&child) && child.count > HUGE_NODE {
                self.huge.push(child);
            } else {
                spawn_node(frame, child, spawn);
            }
        }
        // Biggest huge node first, as the stack pops.
        self.huge[first_huge..].reverse();
        Ok(())
    }

    /// The next chunk set of this frame, reset for `parts` chunks: its
    /// index in `sets`.
    fn take_set(&mut self, parts: usize) -> usize {
        if self.sets_taken == self.sets.len() {
            self.sets.push(Arc::default());
        }
        let slot = &mut self.sets[self.sets_taken];
        self.sets_taken += 1;
        if Arc::get_mut(slot).is_none() {
            // Unreachable: the children that read a set end with the frame.
            *slot = Arc::default();
        }
        Arc::get_mut(slot).expect("a set no job holds").reset(parts);
        self.sets_taken - 1
    }

    /// Runs one pass over the parts of `source`, one job each, and waits
    /// for it (running other jobs of the frame meanwhile).
    fn run_pass(
        &mut self,
        jobs: &JobSystem,
        frame: &Arc<FrameShared>,
        kind: PassKind,
        source: &Source,
        chunk: usize,
        set: Option<Arc<ChunkSet>>,
    ) -> Result<(), JobError> {
        let parts = source.part_count(chunk);
        {
            let mut pass = frame.pass.write();
            pass.kind = kind;
            pass.source = Some(source.clone());
            pass.chunk = chunk;
            pass.set = set;
        }
        if let PassKind::Extent(_) = kind {
            let mut extents = frame.extents.lock();
            extents.clear();
            extents.resize(parts, Extent::EMPTY);
        }
        let group = jobs.group();
        for part in 0..parts {
            group.spawn_indexed(Arc::clone(frame) as Arc<dyn IndexedJob>, PASS_PART | part);
        }
        self.pass_jobs += parts;
        let result = group.wait();
        let mut pass = frame.pass.write();
        pass.source = None;
        pass.set = None;
        result
    }

    /// The extent of a node's boxes inside `window`, one job per part.
    fn parallel_extent(
        &mut self,
        jobs: &JobSystem,
        frame: &Arc<FrameShared>,
        source: &Source,
        chunk: usize,
        window: Region,
    ) -> Result<Extent, JobError> {
        self.run_pass(jobs, frame, PassKind::Extent(window), source, chunk, None)?;
        let mut extent = Extent::EMPTY;
        frame.extents.lock().iter().for_each(|e| extent.merge(e));
        Ok(extent)
    }
}
