//! The tree users hold, and one frame: validation, the root split in
//! parallel chunks, the subtrees as jobs, the merge.

use core::fmt;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use broadphase_kernel::AdaptiveGrid;
use broadphase_storage::{Aabb, InputError, MAX_BOXES, validate_boxes};
use parking_lot::Mutex;

use super::buffers::Part;
use super::config::{GridTreeConfig, RegionDedup};
use super::merge::concatenate;
use super::node::{FrameShared, NodeTask, spawn_node};
use super::plan::{Decision, Extent, Key, MAX_LEVELS, Region, child_allowance, decide};
use super::root::{ChunkSplit, RootGrid, scatter_part};
use crate::jobs::{JobContext, JobError, JobGroup, JobSystem};

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
/// buffers its splits write (pooled, reused each frame) and the result
/// lists; each thread of the [`JobSystem`] owns its kernel grid. After the
/// first frames of a scene, none of the large buffers is reallocated.
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
        let mut input = std::mem::take(&mut self.input);
        match Arc::get_mut(&mut input) {
            Some(copy) => {
                copy.clear();
                copy.extend_from_slice(boxes);
            }
            None => input = Arc::new(boxes.to_vec()),
        }
        let result = self.frame(jobs, &input, out);
        self.input = input;
        result
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
        frame.results.get_mut().clear();
        if frame.config.dedup == RegionDedup::ShardedFastUnique {
            frame.shards.reset(n);
        }
        let result = self.split_and_run(jobs, input);
        let frame = Arc::get_mut(&mut self.frame).expect("no job outlives a frame");
        let results = frame.results.get_mut();
        if let Err(e) = result {
            results.clear();
            return Err(e);
        }
        let pool = &frame.pool;
        concatenate(results, out, |pairs| pool.give_pairs(pairs));
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

    /// The root split in parallel chunks of the input, then one job per
    /// child; returns when every job has finished.
    fn split_and_run(
        &self,
        jobs: &JobSystem,
        input: &Arc<Vec<Aabb>>,
    ) -> Result<(), PartitionError> {
        let config = self.frame.config;
        let n = input.len();
        let chunk = (n / (4 * jobs.threads())).clamp(CHUNK_MIN, CHUNK_MAX);
        let root = NodeTask {
            parts: (0..n.div_ceil(chunk))
                .map(|k| Part::Input(Arc::clone(input), k * chunk..((k + 1) * chunk).min(n)))
                .collect(),
            count: n,
            region: Region::EVERYWHERE,
            key: Key::ROOT,
            level: 0,
            depth: 0,
            allowance: u64::from(config.max_copies_per_box) * n as u64 + 4096,
        };
        let group = jobs.group();
        self.split_in_chunks(jobs, &group, root, Some(input))?;
        Ok(group.wait()?)
    }

    /// Splits a node on the calling thread's orchestration, each pass over
    /// its boxes in parallel (one job per part), and spawns its children
    /// into `group`; children that are still huge are split the same way.
    /// The root (`input` given) cuts up to 16 cells per axis and validates
    /// the input on the way; a huge node below it cuts up to 4 per axis,
    /// like a node job. Which nodes are split this way depends only on
    /// their box count, never on the thread count, so the tree stays the
    /// same for every thread count.
    fn split_in_chunks(
        &self,
        jobs: &JobSystem,
        group: &JobGroup<'_>,
        node: NodeTask,
        input: Option<&Arc<Vec<Aabb>>>,
    ) -> Result<(), PartitionError> {
        let config = self.frame.config;
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
            extent = parallel_extent(jobs, &node.parts, node.region)?;
        }

        // Zoom and recount as a node job would, every pass in parallel.
        let mut window = node.region;
        let mut depth = node.depth;
        let split: Option<(RootGrid, Vec<ChunkSplit>, Vec<u32>)> = 'plan: loop {
            if depth >= config.max_depth.min(MAX_LEVELS) {
                break None;
            }
            let mut grid = RootGrid::over_extent(&extent, n, config.split_threshold, max_per_axis);
            if grid.cells() == 1 {
                break None;
            }
            loop {
                let pool = Arc::clone(&self.frame.pool);
                let splits = map_jobs(jobs, node.parts.clone(), move |part, ctx| {
                    scatter_part(&part, &grid, &pool, ctx.scratch())
                })?;
                let Some(splits) = splits.into_iter().collect::<Option<Vec<ChunkSplit>>>() else {
                    validate_boxes(input.map_or(&[][..], |i| &i[..]))?;
                    unreachable!("a chunk failed validation but the whole input passed");
                };
                let mut cells = vec![0u32; grid.cells()];
                let mut spans = [0u64; 3];
                for s in &splits {
                    cells.iter_mut().enumerate().for_each(|(c, total)| *total += s.count(c));
                    (0..3).for_each(|a| spans[a] += s.spans[a]);
                }
                let max_replication = config.max_axis_replication;
                match decide(grid.split_axes(), &spans, &cells, n, max_replication, node.allowance)
                {
                    Decision::Split => break 'plan Some((grid, splits, cells)),
                    Decision::Recount(drop) => grid = grid.without(drop),
                    Decision::Zoom(cell) => {
                        window = grid.region(&window, cell);
                        depth += 1;
                        extent = parallel_extent(jobs, &node.parts, window)?;
                        continue 'plan;
                    }
                    Decision::Leaf => break 'plan None,
                }
            }
        };

        let spawn = |job| group.spawn(job);
        let Some((grid, splits, cells)) = split else {
            // Not split: one region.
            let parts = match input {
                Some(input) => {
                    // The chunks may not have looked at every box.
                    validate_boxes(input)?;
                    vec![Part::Input(Arc::clone(input), 0..n)]
                }
                None => node.parts,
            };
            let region = NodeTask { parts, depth: MAX_LEVELS, ..node };
            spawn_node(&self.frame, region, spawn);
            return Ok(());
        };
        self.frame.stats.splits.fetch_add(1, Ordering::Relaxed);
        let copies: u64 = cells.iter().map(|&c| u64::from(c)).sum();
        // Biggest children first: they are the long jobs.
        let mut order: Vec<usize> = (0..cells.len()).filter(|&c| cells[c] > 0).collect();
        order.sort_by_key(|&c| std::cmp::Reverse(cells[c]));
        let mut huge = Vec::new();
        for cell in order {
            let child = NodeTask {
                parts: splits.iter().filter_map(|s| s.part(cell)).collect(),
                count: cells[cell] as usize,
                region: grid.region(&node.region, cell),
                key: node.key.child(grid.cells(), cell),
                level: node.level + 1,
                depth: depth + 1,
                allowance: child_allowance(node.allowance, copies, cells[cell]),
            };
            let splits_again = child.count > config.split_threshold
                && child.key.can_split(64)
                && child.depth < config.max_depth.min(MAX_LEVELS);
            if splits_again && child.count > HUGE_NODE {
                huge.push(child);
            } else {
                spawn_node(&self.frame, child, spawn);
            }
        }
        drop(splits);
        for child in huge {
            self.split_in_chunks(jobs, group, child, None)?;
        }
        Ok(())
    }
}

/// The extent of a node's boxes inside `window`, one job per part.
fn parallel_extent(jobs: &JobSystem, parts: &[Part], window: Region) -> Result<Extent, JobError> {
    let extents = map_jobs(jobs, parts.to_vec(), move |part, _| {
        let mut extent = Extent::EMPTY;
        part.boxes().iter().for_each(|b| extent.add_clamped(b, &window));
        extent
    })?;
    let mut extent = Extent::EMPTY;
    extents.iter().for_each(|e| extent.merge(e));
    Ok(extent)
}

/// Runs `f` on every item as one job each; the results in item order.
fn map_jobs<I, T, F>(jobs: &JobSystem, items: Vec<I>, f: F) -> Result<Vec<T>, JobError>
where
    I: Send + 'static,
    T: Send + 'static,
    F: Fn(I, &mut JobContext<'_>) -> T + Send + Sync + 'static,
{
    let f = Arc::new(f);
    let slots: Arc<Mutex<Vec<Option<T>>>> =
        Arc::new(Mutex::new((0..items.len()).map(|_| None).collect()));
    let group = jobs.group();
    for (i, item) in items.into_iter().enumerate() {
        let (f, slots) = (Arc::clone(&f), Arc::clone(&slots));
        group.spawn(move |ctx| {
            let value = f(item, ctx);
            slots.lock()[i] = Some(value);
        });
    }
    group.wait()?;
    let values = std::mem::take(&mut *slots.lock());
    Ok(values.into_iter().map(|v| v.expect("every job of a finished group ran")).collect())
}
