//! The node jobs of a frame: splitting a node (one job per node, its
//! children spawned as sub-jobs) and running the kernel on a region (one
//! job per leaf).
//!
//! A node job is an index into the frame's node table, run through
//! [`NodeJobs`], an [`IndexedJob`] that borrows the tree's state and the
//! caller's boxes for the frame's scope; spawning one allocates nothing,
//! and every buffer a job writes is kept across frames.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use broadphase_jobs::{IndexedJob, JobContext};
use broadphase_kernel::{AdaptiveGrid, GridCapacity, GridConfig};
use broadphase_storage::Aabb;
use parking_lot::Mutex;

use super::buffers::{BufferPool, Source};
use super::config::{GridTreeConfig, RegionDedup};
use super::merge::{PairArena, Shards};
use super::plan::{
    Counts, Decision, Extent, Key, MAX_LEVELS, Planes, Region, UNSPLIT, child_allowance, decide,
    for_each_cell, planes_over_extent,
};

/// What every job of one frame shares; owned by the tree, kept across
/// frames, lent to the frame's jobs.
#[derive(Debug, Default)]
pub(crate) struct FrameShared {
    pub(crate) config: GridTreeConfig,
    pub(crate) pool: BufferPool,
    /// Node and region jobs spawned this frame, taken by the job that runs
    /// them (the job's index is the position here).
    pub(crate) nodes: Mutex<Vec<Option<NodeTask>>>,
    /// Every region's pairs, keyed by its place in the tree.
    pub(crate) arena: Mutex<PairArena<Key>>,
    /// Per participant of the job system, by worker index.
    pub(crate) workers: Vec<Mutex<WorkerScratch>>,
    pub(crate) shards: Shards,
    pub(crate) stats: AtomicStats,
}

/// Shape of the frame's tree, counted by the jobs.
#[derive(Debug, Default)]
pub(crate) struct AtomicStats {
    pub(crate) regions: AtomicU32,
    pub(crate) splits: AtomicU32,
    pub(crate) depth: AtomicU32,
    pub(crate) slots: AtomicU64,
}

impl AtomicStats {
    pub(crate) fn reset(&self) {
        self.regions.store(0, Ordering::Relaxed);
        self.splits.store(0, Ordering::Relaxed);
        self.depth.store(0, Ordering::Relaxed);
        self.slots.store(0, Ordering::Relaxed);
    }
}

/// A node of the tree waiting for its job: its boxes, its region, and its
/// place.
#[derive(Debug)]
pub(crate) struct NodeTask {
    pub(crate) source: Source,
    pub(crate) count: usize,
    pub(crate) region: Region,
    /// Place in the tree (sorts depth first).
    pub(crate) key: Key,
    /// Tree level of the node (the root is 0).
    pub(crate) level: u32,
    /// Levels plus zoom steps so far.
    pub(crate) depth: u32,
    /// Box copies its subtree may still make.
    pub(crate) allowance: u64,
}

/// Memory of one participant's jobs, kept across frames. After each frame
/// the tree grows every participant's buffers to the largest any of them
/// used ([`equalize`]), so whichever thread runs whichever job next frame,
/// nothing grows.
#[derive(Debug)]
pub(crate) struct WorkerScratch {
    grid: AdaptiveGrid,
    gathered: Vec<Aabb>,
    ids: Vec<u32>,
    pairs: Vec<[u32; 2]>,
    found: Vec<[u32; 2]>,
    node_ranges: Vec<u16>,
    root_ranges: Vec<u32>,
    cursor: Vec<u32>,
}

impl WorkerScratch {
    /// The packed cell ranges and cursors a scatter pass uses.
    pub(crate) fn scatter_scratch(&mut self) -> (&mut Vec<u32>, &mut Vec<u32>) {
        (&mut self.root_ranges, &mut self.cursor)
    }

    pub(crate) fn new(grid: GridConfig) -> Self {
        WorkerScratch {
            grid: AdaptiveGrid::with_config(grid),
            gathered: Vec::new(),
            ids: Vec::new(),
            pairs: Vec::new(),
            found: Vec::new(),
            node_ranges: Vec::new(),
            root_ranges: Vec::new(),
            cursor: Vec::new(),
        }
    }
}

/// Grows every participant's buffers to the largest room any has.
pub(crate) fn equalize(workers: &mut [Mutex<WorkerScratch>]) {
    // Exact, or the levelled buffers would overshoot each other and keep
    // doubling frame after frame.
    fn room<T>(v: &mut Vec<T>, capacity: usize) {
        v.reserve_exact(capacity.saturating_sub(v.len()));
    }
    let mut grid = GridCapacity::default();
    let mut most = [0usize; 7];
    let capacities = |w: &WorkerScratch| {
        [
            w.gathered.capacity(),
            w.ids.capacity(),
            w.pairs.capacity(),
            w.found.capacity(),
            w.node_ranges.capacity(),
            w.root_ranges.capacity(),
            w.cursor.capacity(),
        ]
    };
    for worker in workers.iter_mut() {
        let w = worker.get_mut();
        grid = grid.max(w.grid.capacity());
        most = std::array::from_fn(|i| most[i].max(capacities(w)[i]));
    }
    for worker in workers.iter_mut() {
        let w = worker.get_mut();
        w.grid.reserve(&grid);
        room(&mut w.gathered, most[0]);
        room(&mut w.ids, most[1]);
        room(&mut w.pairs, most[2]);
        room(&mut w.found, most[3]);
        room(&mut w.node_ranges, most[4]);
        room(&mut w.root_ranges, most[5]);
        room(&mut w.cursor, most[6]);
    }
}

/// The frame's node jobs: the tree's state and the caller's boxes,
/// borrowed for the frame's scope; job `index` is node `index` of the
/// node table.
#[derive(Debug)]
pub(crate) struct NodeJobs<'a> {
    pub(crate) frame: &'a FrameShared,
    pub(crate) input: &'a [Aabb],
}

impl<'scope> IndexedJob<'scope> for NodeJobs<'_> {
    fn run(&'scope self, ctx: &mut JobContext<'_, 'scope>, index: usize) {
        let task = self.frame.nodes.lock()[index].take();
        let Some(task) = task else {
            unreachable!("node job {index} ran twice");
        };
        if self.frame.splits(&task) {
            split_node(ctx, self, task);
        } else {
            run_region(ctx.worker_index(), self.frame, self.input, task);
        }
    }
}

impl FrameShared {
    /// Whether a node splits again in its job (else it is a region).
    pub(crate) fn splits(&self, task: &NodeTask) -> bool {
        task.count > self.config.split_threshold
            && task.key.can_split(64)
            && task.depth < self.config.max_depth.min(MAX_LEVELS)
    }

    /// Participant `worker`'s scratch memory.
    pub(crate) fn scratch(&self, worker: usize) -> parking_lot::MutexGuard<'_, WorkerScratch> {
        // Each participant locks only its own: never contended.
        self.workers[worker].lock()
    }
}

/// Enters `task` in the frame's node table and queues its job through
/// `spawn`, which receives its index.
pub(crate) fn spawn_node(frame: &FrameShared, task: NodeTask, spawn: impl FnOnce(usize)) {
    let index = {
        let mut nodes = frame.nodes.lock();
        nodes.push(Some(task));
        nodes.len() - 1
    };
    spawn(index);
}

/// Splits one node on this thread and spawns its children; a node that
/// should not split after all runs as a region right here.
fn split_node<'scope>(
    ctx: &mut JobContext<'_, 'scope>,
    jobs: &'scope NodeJobs<'_>,
    task: NodeTask,
) {
    let NodeJobs { frame, input } = *jobs;
    let config = &frame.config;
    let mut scratch = frame.scratch(ctx.worker_index());
    let ranges = &mut scratch.node_ranges;
    let mut window = task.region;
    let mut depth = task.depth;
    let mut counts = Counts::default();
    let planes: Option<Planes> = 'plan: loop {
        if depth >= config.max_depth.min(MAX_LEVELS) {
            break None;
        }
        let mut extent = Extent::EMPTY;
        task.source
            .for_each_part(input, |part| part.for_each(|b, _| extent.add_clamped(b, &window)));
        let mut planes = planes_over_extent(&extent, task.count, config.split_threshold);
        if planes.iter().all(|p| *p == UNSPLIT) {
            break None;
        }
        loop {
            counts = Counts::default();
            ranges.clear();
            task.source.for_each_part(input, |part| {
                part.for_each(|b, _| ranges.push(counts.add(&planes, b)));
            });
            let decision = decide(
                planes.map(|p| p != UNSPLIT),
                &counts.spans,
                &counts.cells,
                task.count,
                config.max_axis_replication,
                task.allowance,
            );
            match decision {
                Decision::Split => break 'plan Some(planes),
                Decision::Recount(drop) => {
                    (0..3).filter(|&a| drop[a]).for_each(|a| planes[a] = UNSPLIT);
                }
                Decision::Zoom(cell) => {
                    window = window.child(&planes, cell);
                    depth += 1;
                    continue 'plan;
                }
                Decision::Leaf => break 'plan None,
            }
        }
    };
    let Some(planes) = planes else {
        drop(scratch);
        return run_region(ctx.worker_index(), frame, input, task);
    };

    // Counting sort of the node's boxes into one buffer, cell by cell.
    let mut offsets = [0usize; 65];
    for cell in 0..64 {
        offsets[cell + 1] = offsets[cell] + counts.cells[cell] as usize;
    }
    let copies = offsets[64];
    let buffer = frame.pool.take(copies, |storage| {
        let mut cursor = offsets;
        let mut packed = ranges.iter();
        task.source.for_each_part(input, |part| {
            part.for_each(|b, id| {
                let cells = packed.next().copied().unwrap_or(0);
                for_each_cell(cells, |cell| {
                    storage.boxes[cursor[cell]] = *b;
                    storage.ids[cursor[cell]] = id;
                    cursor[cell] += 1;
                });
            });
        });
    });
    drop(scratch);
    frame.stats.splits.fetch_add(1, Ordering::Relaxed);

    for cell in 0..64 {
        let count = counts.cells[cell];
        if count == 0 {
            continue;
        }
        let child = NodeTask {
            source: Source::Buffer(Arc::clone(&buffer), offsets[cell]..offsets[cell + 1]),
            count: count as usize,
            region: task.region.child(&planes, cell),
            key: task.key.child(64, cell),
            level: task.level + 1,
            depth: depth + 1,
            allowance: child_allowance(task.allowance, copies as u64, count),
        };
        spawn_node(frame, child, |index| ctx.spawn_indexed(jobs, index));
    }
}

/// Runs the kernel on one region, on participant `worker`, and reports
/// its pairs.
fn run_region(worker: usize, frame: &FrameShared, input: &[Aabb], task: NodeTask) {
    crate::profile::zone!("partition: region kernel");
    let config = &frame.config;
    let mut scratch = frame.scratch(worker);
    let WorkerScratch { grid, gathered, ids, pairs, found, .. } = &mut *scratch;
    ids.clear();
    task.source.for_each_part(input, |part| part.extend_ids(ids));
    let boxes: &[Aabb] = match task.source.as_slice(input) {
        Some(boxes) => boxes,
        None => {
            gathered.clear();
            task.source.for_each_part(input, |part| gathered.extend_from_slice(part.boxes));
            gathered
        }
    };
    if let Err(e) = grid.build(boxes) {
        // The input was validated before the tree was built.
        unreachable!("region of validated boxes rejected: {e}");
    }
    grid.pairs(pairs);

    found.clear();
    let id_pair = |i: u32, j: u32| {
        let (a, b) = (ids[i as usize], ids[j as usize]);
        if a < b { [a, b] } else { [b, a] }
    };
    match config.dedup {
        RegionDedup::ReferencePoint if task.region != Region::EVERYWHERE => {
            let region = task.region;
            found.extend(
                pairs
                    .iter()
                    .filter(|&&[i, j]| region.owns_pair(&boxes[i as usize], &boxes[j as usize]))
                    .map(|&[i, j]| id_pair(i, j)),
            );
        }
        RegionDedup::ReferencePoint => found.extend(pairs.iter().map(|&[i, j]| id_pair(i, j))),
        RegionDedup::ShardedFastUnique => {
            found.extend(pairs.iter().map(|&[i, j]| id_pair(i, j)));
            frame.shards.keep_first(found);
        }
    }
    let stats = &frame.stats;
    stats.regions.fetch_add(1, Ordering::Relaxed);
    stats.depth.fetch_max(task.level, Ordering::Relaxed);
    stats.slots.fetch_add(task.count as u64, Ordering::Relaxed);
    frame.arena.lock().push(task.key, found);
}
