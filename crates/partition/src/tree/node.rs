//! The two jobs of the tree below its root: splitting a node (one job per
//! node, its children spawned as sub-jobs) and running the kernel on a
//! region (one job per leaf).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use broadphase_kernel::AdaptiveGrid;
use broadphase_storage::Aabb;
use parking_lot::Mutex;

use super::buffers::{BufferPool, Part};
use super::config::{GridTreeConfig, RegionDedup};
use super::merge::Shards;
use super::plan::{
    Counts, Decision, Extent, Key, MAX_LEVELS, Planes, Region, UNSPLIT, child_allowance, decide,
    for_each_cell, planes_over_extent,
};
use crate::jobs::JobContext;

/// What every job of one frame shares; owned by the tree, kept across frames.
#[derive(Debug, Default)]
pub(crate) struct FrameShared {
    pub(crate) config: GridTreeConfig,
    pub(crate) pool: Arc<BufferPool>,
    /// Each region's pairs, keyed by its place in the tree.
    pub(crate) results: Mutex<Vec<(Key, Vec<[u32; 2]>)>>,
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

/// A node of the tree waiting for its job: its boxes (possibly spread over
/// several buffers), its region, and its place.
#[derive(Debug)]
pub(crate) struct NodeTask {
    pub(crate) parts: Vec<Part>,
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

/// Per-thread memory of node jobs.
#[derive(Debug, Default)]
struct NodeScratch {
    ranges: Vec<u16>,
}

/// Per-thread memory of region jobs: the kernel grid and the region's
/// boxes, kept across frames so a warm frame's kernel allocates nothing.
#[derive(Debug, Default)]
struct LeafScratch {
    grid: Option<AdaptiveGrid>,
    boxes: Vec<Aabb>,
    ids: Vec<u32>,
    pairs: Vec<[u32; 2]>,
}

/// Spawns the job for a child: a split if it is still big, else a region.
pub(crate) fn spawn_node(frame: &Arc<FrameShared>, task: NodeTask, spawn: impl FnOnce(NodeJob)) {
    let frame = Arc::clone(frame);
    let splits = task.count > frame.config.split_threshold
        && task.key.can_split(64)
        && task.depth < frame.config.max_depth.min(MAX_LEVELS);
    spawn(Box::new(move |ctx: &mut JobContext<'_>| {
        if splits {
            split_node(ctx, &frame, task);
        } else {
            run_region(ctx, &frame, task);
        }
    }));
}

/// A boxed node or region job.
pub(crate) type NodeJob = Box<dyn FnOnce(&mut JobContext<'_>) + Send + 'static>;

/// Splits one node on this thread and spawns its children; a node that
/// should not split after all runs as a region right here.
fn split_node(ctx: &mut JobContext<'_>, frame: &Arc<FrameShared>, task: NodeTask) {
    let config = &frame.config;
    let mut ranges = std::mem::take(&mut ctx.scratch::<NodeScratch>().ranges);
    let mut window = task.region;
    let mut depth = task.depth;
    let mut counts = Counts::default();
    let planes: Option<Planes> = 'plan: loop {
        if depth >= config.max_depth.min(MAX_LEVELS) {
            break None;
        }
        let mut extent = Extent::EMPTY;
        for part in &task.parts {
            part.for_each(|b, _| extent.add_clamped(b, &window));
        }
        let mut planes = planes_over_extent(&extent, task.count, config.split_threshold);
        if planes.iter().all(|p| *p == UNSPLIT) {
            break None;
        }
        loop {
            counts = Counts::default();
            ranges.clear();
            for part in &task.parts {
                part.for_each(|b, _| ranges.push(counts.add(&planes, b)));
            }
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
        ctx.scratch::<NodeScratch>().ranges = ranges;
        return run_region(ctx, frame, task);
    };

    // Counting sort of the node's boxes into one buffer, cell by cell.
    let mut offsets = [0usize; 65];
    for cell in 0..64 {
        offsets[cell + 1] = offsets[cell] + counts.cells[cell] as usize;
    }
    let copies = offsets[64];
    let mut buffer = frame.pool.take();
    let storage = &mut buffer.storage;
    storage.boxes.resize(copies, Aabb::default());
    storage.ids.resize(copies, 0);
    let mut cursor = offsets;
    let mut packed = ranges.iter();
    for part in &task.parts {
        part.for_each(|b, id| {
            let cells = packed.next().copied().unwrap_or(0);
            for_each_cell(cells, |cell| {
                storage.boxes[cursor[cell]] = *b;
                storage.ids[cursor[cell]] = id;
                cursor[cell] += 1;
            });
        });
    }
    ctx.scratch::<NodeScratch>().ranges = ranges;
    frame.stats.splits.fetch_add(1, Ordering::Relaxed);

    let buffer = Arc::new(buffer);
    let parent_key = task.key;
    drop(task.parts); // the children hold the new buffer; the old one may go back
    for cell in 0..64 {
        let count = counts.cells[cell];
        if count == 0 {
            continue;
        }
        let child = NodeTask {
            parts: vec![Part::Buffer(Arc::clone(&buffer), offsets[cell]..offsets[cell + 1])],
            count: count as usize,
            region: task.region.child(&planes, cell),
            key: parent_key.child(64, cell),
            level: task.level + 1,
            depth: depth + 1,
            allowance: child_allowance(task.allowance, copies as u64, count),
        };
        spawn_node(frame, child, |job| ctx.spawn(job));
    }
}

/// Runs the kernel on one region and reports its pairs.
pub(crate) fn run_region(ctx: &mut JobContext<'_>, frame: &FrameShared, task: NodeTask) {
    crate::profile::zone!("partition: region kernel");
    let config = &frame.config;
    let LeafScratch { grid, boxes: gathered, ids, pairs } = ctx.scratch::<LeafScratch>();
    let grid = match grid {
        Some(g) if g.config() == &config.grid => g,
        slot => slot.insert(AdaptiveGrid::with_config(config.grid)),
    };
    ids.clear();
    for part in &task.parts {
        part.extend_ids(ids);
    }
    let boxes: &[Aabb] = if let [part] = task.parts.as_slice() {
        part.boxes()
    } else {
        gathered.clear();
        for part in &task.parts {
            gathered.extend_from_slice(part.boxes());
        }
        gathered
    };
    if let Err(e) = grid.build(boxes) {
        // The input was validated before the tree was built.
        unreachable!("region of validated boxes rejected: {e}");
    }
    grid.pairs(pairs);

    let mut found = frame.pool.take_pairs();
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
            frame.shards.keep_first(&mut found);
        }
    }
    let stats = &frame.stats;
    stats.regions.fetch_add(1, Ordering::Relaxed);
    stats.depth.fetch_max(task.level, Ordering::Relaxed);
    stats.slots.fetch_add(task.count as u64, Ordering::Relaxed);
    frame.results.lock().push((task.key, found));
}
