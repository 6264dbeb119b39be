//! The orchestrating thread's side of a frame: the root split, and the
//! splits of nodes too big for one job, each pass over their boxes run in
//! parallel (one job per part); every other node is spawned as a job.
//!
//! The planner runs inside the frame's scope: node jobs it spawns run
//! while it goes on, and each of its passes is a scope of its own, nested
//! on this thread, whose wait runs the frame's other jobs too.

use std::cmp::Reverse;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use broadphase_jobs::{IndexedJob, JobError, JobSystem, Scope};
use broadphase_storage::validate_boxes;
use parking_lot::Mutex;

use super::buffers::{ChunkSet, Source};
use super::error::PartitionError;
use super::node::{NodeJobs, NodeTask, spawn_node};
use super::pass::{ExtentPass, Parts, ScatterPass};
use super::plan::{Decision, Extent, Key, MAX_LEVELS, Region, child_allowance, decide};
use super::root::RootGrid;

/// Boxes per chunk of the root's parallel passes: about four chunks per
/// thread, within these bounds. Chunking never changes the output: every
/// decision uses totals over all chunks, and a cell's boxes are gathered
/// chunk after chunk, so each region sees its boxes in input order
/// whatever the chunk size or thread count.
pub(crate) const CHUNK_MIN: usize = 2 * 1024;
pub(crate) const CHUNK_MAX: usize = 16 * 1024;

/// Nodes below the root with more boxes than this are split in parallel
/// passes (one job per part) instead of inside one job: a serial split of
/// a node this big takes about a millisecond.
const HUGE_NODE: usize = 64 * 1024;

/// About how many boxes the root's extent is taken from.
const EXTENT_SAMPLE: usize = 4096;

/// The orchestrating thread's memory, kept across frames.
#[derive(Debug, Default)]
pub(crate) struct Planner {
    /// Boxes per cell of the split being decided.
    cells: Vec<u32>,
    /// Occupied cells, biggest first.
    order: Vec<usize>,
    /// Huge nodes waiting for their parallel split.
    huge: Vec<NodeTask>,
    /// Chunk sets, taken in the same order every frame.
    sets: Vec<Arc<ChunkSet>>,
    sets_taken: usize,
    /// What an extent pass found, per part.
    extents: Mutex<Vec<Extent>>,
    /// Pass jobs spawned this frame.
    pass_jobs: usize,
    /// Jobs spawned last frame: the room the shared queue needs.
    jobs_last_frame: usize,
}

impl Planner {
    /// Forgets the last frame's passes (their memory stays), and asks
    /// `jobs` for room for as many queued jobs as the last frame spawned,
    /// so a frame like it queues without allocating.
    pub(crate) fn start_frame(&mut self, jobs: &JobSystem) {
        jobs.reserve_queue(self.jobs_last_frame);
        self.sets_taken = 0;
        self.pass_jobs = 0;
    }

    /// Closes a frame that spawned `node_jobs` node jobs.
    pub(crate) fn end_frame(&mut self, node_jobs: usize) {
        self.huge.clear();
        self.jobs_last_frame = node_jobs + self.pass_jobs;
    }

    /// Splits the root in parallel chunks of the input, then every huge
    /// child likewise, spawning the other nodes into `scope` as jobs of
    /// `node_jobs`.
    pub(crate) fn split_root<'scope>(
        &mut self,
        jobs: &JobSystem,
        node_jobs: &'scope NodeJobs<'_>,
        scope: &Scope<'scope>,
    ) -> Result<(), PartitionError> {
        let config = node_jobs.frame.config;
        let n = node_jobs.input.len();
        let chunk = (n / (4 * jobs.threads())).clamp(CHUNK_MIN, CHUNK_MAX);
        let root = NodeTask {
            source: Source::Input(0..n),
            count: n,
            region: Region::EVERYWHERE,
            key: Key::ROOT,
            level: 0,
            depth: 0,
            allowance: u64::from(config.max_copies_per_box) * n as u64 + 4096,
        };
        self.split_in_chunks(jobs, node_jobs, scope, root, chunk, true)?;
        while let Some(node) = self.huge.pop() {
            self.split_in_chunks(jobs, node_jobs, scope, node, chunk, false)?;
        }
        Ok(())
    }

    /// Splits a node on the calling thread, each pass over its boxes in
    /// parallel (one job per part), and spawns its children into `scope`;
    /// children that are still huge wait in `huge` to be split the same
    /// way. The root (`is_root`) cuts up to 16 cells per axis and
    /// validates the input on the way; a huge node below it cuts up to 4
    /// per axis, like a node job. Which nodes are split this way depends
    /// only on their box count, never on the thread count, so the tree
    /// stays the same for every thread count.
    fn split_in_chunks<'scope>(
        &mut self,
        jobs: &JobSystem,
        node_jobs: &'scope NodeJobs<'_>,
        scope: &Scope<'scope>,
        node: NodeTask,
        chunk: usize,
        is_root: bool,
    ) -> Result<(), PartitionError> {
        let NodeJobs { frame, input } = *node_jobs;
        let config = frame.config;
        let n = node.count;
        // Up to 16 cells per axis where the key has room for 4,096 cells.
        let max_per_axis = if node.key.can_split(4096) { 16 } else { 4 };
        let mut extent = Extent::EMPTY;
        let parts = Parts { input, source: &node.source, chunk };
        if is_root {
            // The extent, from a fixed sample of the boxes: a box outside
            // it only lands in an edge cell, whose region reaches to
            // infinity. The boxes are validated while the chunks are counted.
            for b in input.iter().step_by((n / EXTENT_SAMPLE).max(1)) {
                if b.is_valid() {
                    extent.add(b);
                }
            }
        } else {
            extent = self.parallel_extent(jobs, parts, node.region)?;
        }

        // Zoom and recount as a node job would, every pass in parallel.
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
                let taken = self.take_set(parts.count());
                let pass = ScatterPass { parts, grid, set: &self.sets[taken], frame };
                self.pass_jobs += run_pass(jobs, &pass, parts.count())?;
                // The pass's scope has ended: no job holds the set.
                let set = Arc::get_mut(&mut self.sets[taken]).expect("no job holds the set");
                set.finish();
                let set = &self.sets[taken];
                self.cells.clear();
                self.cells.resize(grid.cells(), 0);
                let mut spans = [0u64; 3];
                if !set.totals(&mut self.cells, &mut spans) {
                    // Only the root's parts validate boxes; name the first bad one.
                    validate_boxes(input)?;
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
                        extent = self.parallel_extent(jobs, parts, window)?;
                        continue 'plan;
                    }
                    Decision::Leaf => break 'plan None,
                }
                self.sets_taken -= 1;
            }
        };

        let spawn = |index| scope.spawn_indexed(node_jobs, index);
        let Some((grid, set)) = split else {
            // Not split: one region.
            if is_root {
                // The chunks may not have looked at every box.
                validate_boxes(input)?;
            }
            let region = NodeTask { depth: MAX_LEVELS, ..node };
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

    /// The extent of a node's boxes inside `window`, one job per part.
    fn parallel_extent(
        &mut self,
        jobs: &JobSystem,
        parts: Parts<'_>,
        window: Region,
    ) -> Result<Extent, JobError> {
        {
            let extents = self.extents.get_mut();
            extents.clear();
            extents.resize(parts.count(), Extent::EMPTY);
        }
        let pass = ExtentPass { parts, window, extents: &self.extents };
        self.pass_jobs += run_pass(jobs, &pass, parts.count())?;
        let mut extent = Extent::EMPTY;
        self.extents.get_mut().iter().for_each(|e| extent.merge(e));
        Ok(extent)
    }
}

/// Runs `pass` on parts `0..parts`, one job each, and waits for them
/// (running other jobs of the frame meanwhile); returns the jobs spawned.
fn run_pass<'pass, J: IndexedJob<'pass>>(
    jobs: &'pass JobSystem,
    pass: &'pass J,
    parts: usize,
) -> Result<usize, JobError> {
    jobs.scope(|s| (0..parts).for_each(|part| s.spawn_indexed(pass, part)))?;
    Ok(parts)
}
