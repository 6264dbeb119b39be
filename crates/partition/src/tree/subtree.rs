//! The subtree jobs: each child of the root split (or the whole input, if
//! the root does not split) walked by the kernel on one thread, its pairs
//! put in the arena under the child's place.

use broadphase_jobs::{IndexedJob, JobContext};
use broadphase_kernel::parts::{Cell, Item};
use broadphase_kernel::{AdaptiveGrid, GridCapacity, GridConfig, PairsError};
use parking_lot::Mutex;

use super::merge::PairArena;
use super::passes::{Chunks, Source};

/// Memory of one participant's jobs, kept across frames. After each frame
/// the tree grows every participant's buffers to the largest any of them
/// used ([`equalize`]), so whichever thread runs whichever job next frame,
/// nothing grows.
#[derive(Debug)]
pub(crate) struct Worker {
    grid: AdaptiveGrid,
    found: Vec<[u32; 2]>,
}

impl Worker {
    pub(crate) fn new(config: GridConfig) -> Self {
        Worker { grid: AdaptiveGrid::with_config(config), found: Vec::new() }
    }

    pub(crate) fn config(&self) -> &GridConfig {
        self.grid.config()
    }
}

/// Grows every participant's buffers to the largest room any has.
pub(crate) fn equalize(workers: &mut [Mutex<Worker>]) {
    let mut grid = GridCapacity::default();
    let mut found = 0;
    for worker in workers.iter_mut() {
        let w = worker.get_mut();
        grid = grid.max(w.grid.capacity());
        found = found.max(w.found.capacity());
    }
    for worker in workers.iter_mut() {
        let w = worker.get_mut();
        w.grid.reserve(&grid);
        // Exact, or levelled buffers would overshoot each other and keep
        // doubling frame after frame.
        w.found.reserve_exact(found.saturating_sub(w.found.len()));
    }
}

/// A node handed whole to one job.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Subtree {
    /// Place in the tree: depth-first order of the merge.
    pub(crate) key: u64,
    pub(crate) source: Source,
    pub(crate) cell: Cell,
    pub(crate) count: usize,
}

/// What the subtree jobs of one frame share: job `j` walks `subtrees[j]`.
#[derive(Debug)]
pub(crate) struct SubtreeJobs<'a> {
    pub(crate) chunks: Chunks<'a>,
    pub(crate) subtrees: &'a [Subtree],
    pub(crate) workers: &'a [Mutex<Worker>],
    pub(crate) arena: &'a Mutex<PairArena<u64>>,
    /// The first failure to grow a worker's pair list.
    pub(crate) failure: &'a Mutex<Option<PairsError>>,
}

impl<'scope> IndexedJob<'scope> for SubtreeJobs<'_> {
    fn run(&'scope self, ctx: &mut JobContext<'_, 'scope>, job: usize) {
        crate::profile::zone!("partition: subtree");
        let subtree = self.subtrees[job];
        let mut worker = self.workers[ctx.worker_index()].lock();
        let Worker { grid, found } = &mut *worker;
        found.clear();
        let chunks = self.chunks;
        let fill = |stack: &mut [Item]| {
            let mut at = 0;
            for chunk in &chunks.state[..chunks.count()] {
                let chunk = chunk.read();
                let part = chunk.part(subtree.source);
                stack[at..at + part.len()].copy_from_slice(part);
                at += part.len();
            }
        };
        let walk =
            grid.find_subtree_pairs_with(subtree.count, subtree.cell, chunks.input, found, fill);
        match walk {
            Ok(()) => self.arena.lock().push(subtree.key, found),
            Err(e) => {
                self.failure.lock().get_or_insert(e);
            }
        }
    }
}
