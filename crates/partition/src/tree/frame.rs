//! The tree users hold, and one frame: bounds and the input check, the
//! root split in parallel chunks, the subtrees as jobs, the merge.

use core::fmt;

use broadphase_jobs::{JobError, JobSystem};
use broadphase_kernel::AdaptiveGrid;
use broadphase_kernel::parts::{Bounds, Cell, ChildCounts, NodeSplit, Quantizer, Step, Union};
use broadphase_storage::{Aabb, InputError, MAX_BOXES, Pool};
use parking_lot::Mutex;

use super::config::{GridTreeConfig, PairMerge};
use super::error::PartitionError;
use super::merge::PairArena;
use super::passes::{
    BoundsPass, Chunk, Chunks, CountPass, Pass, QuantizePass, ScatterPass, Source, UnionPass,
    chunk_len,
};
use super::sharded::ShardedSets;
use super::subtree::{MergeInto, Subtree, SubtreeJobs, Worker, equalize};

/// The grid tree: the kernel's grid with its root split on all cores.
///
/// A frame of more than [`split_threshold`](GridTreeConfig::split_threshold)
/// boxes runs the kernel's own steps ([`broadphase_kernel::parts`]) with
/// the root's passes cut into chunks of the input, one job each: the bounds
/// and the input check, quantization and the count of the root's child
/// cells, then the scatter of each chunk into its share of every child.
/// Each occupied child is then one job: the kernel walks its subtree on
/// that thread, finding each leaf's pairs as it goes. By default
/// ([`PairMerge::ReferencePoint`]) every pair is reported by the one leaf
/// that holds its reference point, so nothing is merged but the jobs'
/// lists, concatenated in child order; with
/// [`PairMerge::ShardedFastUnique`] every leaf reports all its pairs into
/// per-box sets sharded behind mutexes, and the merge lists them sorted.
/// Either way the output is the same, pair for pair and in the same order,
/// for any thread count. A smaller input runs [`AdaptiveGrid::find_pairs`]
/// on the calling thread.
///
/// Memory: the frame's jobs borrow the caller's boxes (no copy is made).
/// The tree owns each chunk's quantized boxes and child shares, the jobs'
/// pairs (or, for the sharded merge, one set per box), and per thread of
/// the [`JobSystem`] a kernel grid; jobs are indices into the tree's
/// state, not boxed closures. All of it is kept from one frame to the
/// next, and after each frame every thread's buffers are grown to the
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
/// tree.find_pairs(&jobs, &boxes, &mut pairs)?;
///
/// let mut expected = Vec::new();
/// AdaptiveGrid::default().find_pairs(&boxes, &mut expected)?;
/// pairs.sort_unstable();
/// expected.sort_unstable();
/// assert_eq!(pairs, expected);
/// assert!(tree.stats().regions > 1);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
pub struct GridTree {
    config: GridTreeConfig,
    /// The kernel for inputs too small to split, run on the calling thread.
    small: AdaptiveGrid,
    /// Per chunk of the input.
    chunks: Vec<Chunk>,
    /// Per participant of the job system, by worker index.
    workers: Vec<Mutex<Worker>>,
    /// Every subtree's pairs, keyed by its place in the tree.
    arena: Mutex<PairArena<u64>>,
    /// Every box's partners, for the sharded merge.
    sets: ShardedSets,
    failure: Mutex<Option<broadphase_kernel::PairsError>>,
    /// Nodes still to split in parallel passes.
    huge: Pool<Subtree>,
    /// The frame's subtree jobs.
    subtrees: Pool<Subtree>,
    /// Subtree jobs, biggest first.
    order: Pool<usize>,
    stats: TreeStats,
}

impl fmt::Debug for GridTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GridTree")
            .field("config", &self.config)
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
/// tree.find_pairs(&JobSystem::new(1), &[], &mut Vec::new())?;
/// assert_eq!(tree.stats().regions, 0);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TreeStats {
    /// Boxes in the input.
    pub boxes: usize,
    /// Subtrees walked, one job or call each; 1 when the root was not
    /// split, 0 when empty.
    pub regions: usize,
    /// Splits run as parallel passes (the root's: 0 or 1).
    pub splits: usize,
    /// Level of the subtrees' roots (0: the root itself).
    pub depth: u32,
    /// Box slots over all subtrees: more than `boxes` by the copies of
    /// boxes that reach several child cells.
    pub slots: u64,
    /// Pairs the leaves reported before the merge: the output's length
    /// with [`PairMerge::ReferencePoint`], more with
    /// [`PairMerge::ShardedFastUnique`] by every repeat of a pair found in
    /// several leaves.
    pub reported: u64,
}

impl GridTree {
    /// An empty tree with the given tuning.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::{GridTree, GridTreeConfig};
    /// let config = GridTreeConfig { split_threshold: 100, ..Default::default() };
    /// assert_eq!(GridTree::with_config(config).config().split_threshold, 100);
    /// ```
    pub fn with_config(config: GridTreeConfig) -> Self {
        Self {
            config,
            small: AdaptiveGrid::with_config(config.grid),
            chunks: Vec::new(),
            workers: Vec::new(),
            arena: Mutex::default(),
            sets: ShardedSets::default(),
            failure: Mutex::default(),
            huge: Pool::new(),
            subtrees: Pool::new(),
            order: Pool::new(),
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
        &self.config
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
    /// tree.find_pairs(&JobSystem::new(1), &[Aabb::default(); 3], &mut Vec::new())?;
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
    /// count: the subtrees' order in the tree with
    /// [`PairMerge::ReferencePoint`], sorted with
    /// [`PairMerge::ShardedFastUnique`].
    ///
    /// # Errors
    ///
    /// [`InputError`] naming the first box with a NaN or infinite
    /// coordinate or `min > max` (then `out` is empty).
    ///
    /// # Panics
    ///
    /// If a job panics (a bug): the panic is caught on its thread and
    /// raised again here with its message; if the pair output cannot grow,
    /// like `Vec::push`. [`try_find_pairs`](GridTree::try_find_pairs)
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
    /// GridTree::default().find_pairs(&JobSystem::new(2), &boxes, &mut pairs)?;
    /// assert_eq!(pairs, [[0, 1]]);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn find_pairs(
        &mut self,
        jobs: &JobSystem,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), InputError> {
        match self.try_find_pairs(jobs, boxes, out) {
            Ok(()) => Ok(()),
            Err(PartitionError::Input(e)) => Err(e),
            Err(e) => panic!("broadphase GridTree: {e}"),
        }
    }

    /// As [`find_pairs`](GridTree::find_pairs), with a panicking job reported as
    /// [`PartitionError::Job`] and an output that cannot grow as
    /// [`PartitionError::Pairs`] instead of a panic or an abort.
    ///
    /// # Errors
    ///
    /// [`PartitionError::Input`] for bad input, [`PartitionError::Job`] if
    /// a job panicked, [`PartitionError::Pairs`] if the output could not
    /// grow; `out` is empty in every case.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_partition::GridTree;
    /// let mut pairs = vec![[9, 9]];
    /// GridTree::default().try_find_pairs(&JobSystem::new(2), &[], &mut pairs)?;
    /// assert!(pairs.is_empty());
    /// # Ok::<(), broadphase_partition::PartitionError>(())
    /// ```
    pub fn try_find_pairs(
        &mut self,
        jobs: &JobSystem,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), PartitionError> {
        out.clear();
        self.stats = TreeStats::default();
        let result = if boxes.len() <= self.config.split_threshold {
            self.small_frame(boxes, out)
        } else {
            self.frame(jobs, boxes, out)
        };
        if result.is_err() {
            out.clear();
        }
        result
    }

    /// The old name of [`find_pairs`](GridTree::find_pairs): a one-call
    /// frame is `find_pairs` on every structure, as on
    /// [`AdaptiveGrid`](broadphase_kernel::AdaptiveGrid).
    ///
    /// # Errors
    ///
    /// As [`find_pairs`](GridTree::find_pairs).
    #[deprecated(since = "0.1.0", note = "renamed to `find_pairs`")]
    pub fn pairs(
        &mut self,
        jobs: &JobSystem,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), InputError> {
        self.find_pairs(jobs, boxes, out)
    }

    /// The old name of [`try_find_pairs`](GridTree::try_find_pairs).
    ///
    /// # Errors
    ///
    /// As [`try_find_pairs`](GridTree::try_find_pairs).
    #[deprecated(since = "0.1.0", note = "renamed to `try_find_pairs`")]
    pub fn try_pairs(
        &mut self,
        jobs: &JobSystem,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), PartitionError> {
        self.try_find_pairs(jobs, boxes, out)
    }

    /// A frame too small to split: the kernel on the calling thread. Its
    /// one walk finds each pair once, so the sharded merge has nothing to
    /// merge; its order is kept by sorting.
    fn small_frame(
        &mut self,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), PartitionError> {
        if self.small.config() != &self.config.grid {
            self.small = AdaptiveGrid::with_config(self.config.grid);
        }
        self.small.try_find_pairs(boxes, out)?;
        if self.config.merge == PairMerge::ShardedFastUnique {
            out.sort_unstable();
        }
        self.stats = TreeStats {
            boxes: boxes.len(),
            regions: usize::from(!boxes.is_empty()),
            splits: 0,
            depth: 0,
            slots: boxes.len() as u64,
            reported: out.len() as u64,
        };
        Ok(())
    }

    /// A frame on all threads: the root's passes, then the subtrees.
    fn frame(
        &mut self,
        jobs: &JobSystem,
        input: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), PartitionError> {
        let n = input.len();
        if n > MAX_BOXES {
            return Err(InputError::TooManyBoxes { count: n }.into());
        }
        let config = self.config.grid;
        let chunk_count = n.div_ceil(chunk_len(n));
        while self.chunks.len() < chunk_count {
            self.chunks.push(Chunk::default());
        }
        while self.workers.len() < jobs.threads() {
            self.workers.push(Mutex::new(Worker::new(config)));
        }
        let sharded = self.config.merge == PairMerge::ShardedFastUnique;
        let shards = if sharded { ShardedSets::shard_count(jobs.threads()) } else { 0 };
        for worker in &mut self.workers {
            if worker.get_mut().config() != &config {
                *worker.get_mut() = Worker::new(config);
            }
            worker.get_mut().start_frame(shards);
        }
        if sharded {
            self.sets.reset(n, jobs.threads());
        }
        self.arena.get_mut().clear();
        *self.failure.get_mut() = None;
        let chunks = Chunks { input, len: chunk_len(n) };
        let states = &mut self.chunks[..chunk_count];

        // Bounds and the input check, then the quantizer.
        run_pass(jobs, &BoundsPass { chunks }, states)?;
        let bounds = states.iter().fold(Bounds::EMPTY, |all, chunk| all.merge(chunk.bounds));
        let quantizer = Quantizer::new(&bounds, input)?;

        // Then the splits, each decided as the kernel decides it, each pass
        // over the chunks in parallel; every node not split further is one
        // subtree job.
        self.huge.reset();
        self.subtrees.reset();
        self.huge.push(Subtree { key: 0, source: Source::Root, cell: Cell::ROOT, count: n });
        let mut quantize = Some(&quantizer);
        let mut splits = 0;
        let mut slots = 0u64;
        let mut depth = 0;
        while let Some(node) = self.huge.pop() {
            let Some(children) =
                split_node(jobs, chunks, states, &node, &mut quantize, &config, splits)?
            else {
                self.subtrees.push(node);
                slots += node.count as u64;
                continue;
            };
            splits += 1;
            let (block, counts) = children;
            let child_level = KEY_LEVELS - (level_of(node.key) + 1);
            depth = depth.max(KEY_LEVELS - child_level);
            for cell in (0..64).filter(|&c| counts.get(c) > 0) {
                let child = Subtree {
                    key: node.key | ((cell as u64 + 1) << (KEY_BITS * child_level)),
                    source: Source::Share { split: splits - 1, cell },
                    cell: block.child(cell),
                    count: counts.get(cell) as usize,
                };
                let is_huge = child.count > self.config.split_threshold.max(n / 8)
                    && child_level > 0
                    && child.count < node.count;
                if is_huge {
                    self.huge.push(child);
                } else {
                    self.subtrees.push(child);
                    slots += child.count as u64;
                }
            }
        }
        if let Some(pending) = quantize {
            // The root was a leaf before any count: quantize for its walk.
            let pass = QuantizePass { chunks, quantizer: pending, config: &config };
            run_pass(jobs, &pass, states)?;
        }

        // Biggest subtrees first: they are the long jobs.
        let subtrees = &self.subtrees;
        self.order.reset();
        self.order.extend(0..subtrees.len());
        self.order
            .sort_unstable_by_key(|&j| (core::cmp::Reverse(subtrees[j].count), subtrees[j].key));
        let subtree_jobs = SubtreeJobs {
            chunks,
            states,
            subtrees,
            workers: &self.workers,
            merge: if sharded {
                MergeInto::Sets(&self.sets)
            } else {
                MergeInto::Arena(&self.arena)
            },
            failure: &self.failure,
        };
        let order = &self.order;
        // One job per subtree, not a parallel loop: the jobs are uneven,
        // and handed out one by one, biggest first, they even out.
        jobs.reserve_queue(order.len());
        jobs.scope(|scope| order.iter().for_each(|&job| scope.spawn_indexed(&subtree_jobs, job)))?;

        equalize(&mut self.workers);
        let arena = self.arena.get_mut();
        if let Some(e) = self.failure.get_mut().take() {
            arena.clear();
            return Err(e.into());
        }
        if sharded {
            self.sets.drain_into(out)?;
        } else {
            arena.drain_into(out);
        }
        let reported = self.workers.iter_mut().map(|w| w.get_mut().reported).sum();
        self.stats =
            TreeStats { boxes: n, regions: self.subtrees.len(), splits, depth, slots, reported };
        Ok(())
    }
}

/// Bits of a subtree key per level of parallel splits: a child cell + 1.
const KEY_BITS: u32 = 7;
/// Levels a key holds (the kernel's tree has at most 8 below the root).
const KEY_LEVELS: u32 = 9;

/// The level of a node from its key: how many child fields are set.
fn level_of(key: u64) -> u32 {
    (0..KEY_LEVELS).filter(|&l| (key >> (KEY_BITS * (KEY_LEVELS - 1 - l))) & 0x7F != 0).count()
        as u32
}

/// Decides and, if so, performs the split of `node` in parallel passes
/// over the chunks, as parallel split number `split`: its block and child
/// counts, or `None` when the node is one subtree. The root's first count
/// quantizes the chunks (`quantize` is then taken).
fn split_node(
    jobs: &JobSystem,
    chunks: Chunks<'_>,
    states: &mut [Chunk],
    node: &Subtree,
    quantize: &mut Option<&Quantizer>,
    config: &broadphase_kernel::GridConfig,
    split: usize,
) -> Result<Option<(NodeSplit, ChildCounts)>, JobError> {
    let Some(mut decision) = NodeSplit::start(node.cell, node.count, config) else {
        return Ok(None);
    };
    let room = (f64::from(config.copy_budget.max(1.0)) * node.count as f64) as usize;
    let room = room.saturating_add(4096);
    loop {
        let pass = CountPass {
            chunks,
            source: node.source,
            quantizer: quantize.take(),
            split: &decision,
            config,
        };
        run_pass(jobs, &pass, states)?;
        let totals = states.iter().fold(ChildCounts::default(), |mut all, c| {
            all.add(&c.counts);
            all
        });
        match decision.judge(&totals, room) {
            Step::Split => {
                run_pass(jobs, &ScatterPass { source: node.source, split }, states)?;
                return Ok(Some((decision, totals)));
            }
            Step::Leaf => return Ok(None),
            Step::NeedUnion => {
                run_pass(jobs, &UnionPass { source: node.source }, states)?;
                let union = states.iter().fold(Union::EMPTY, |all, chunk| all.merge(chunk.union));
                if !decision.deeper(union) {
                    return Ok(None);
                }
            }
        }
    }
}

/// Runs `pass` on every chunk, one job each with its chunk's state, and
/// waits for them (the calling thread runs jobs too).
fn run_pass(jobs: &JobSystem, pass: &impl Pass, states: &mut [Chunk]) -> Result<(), JobError> {
    jobs.for_each_mut(states, |chunk, state| pass.run(chunk, state))
}
