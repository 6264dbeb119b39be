//! The subtree jobs: each child of the root split (or the whole input, if
//! the root does not split) walked by the kernel on one thread, its pairs
//! put in the arena under the child's place, or (the sharded merge) every
//! pair its leaves find put into the sharded per-box sets.

use broadphase_jobs::{IndexedJob, JobContext};
use broadphase_kernel::parts::{Cell, Item};
use broadphase_kernel::{AdaptiveGrid, GridCapacity, GridConfig, PairsError};
use broadphase_storage::Pool;
use parking_lot::Mutex;

use super::merge::PairArena;
use super::passes::{Chunk, Chunks, Source};
use super::sharded::{ShardedSets, bucket};

/// Memory of one participant's jobs, kept across frames. After each frame
/// the tree grows every participant's buffers to the largest any of them
/// used ([`equalize`]), so whichever thread runs whichever job next frame,
/// nothing grows.
#[derive(Debug)]
pub(crate) struct Worker {
    grid: AdaptiveGrid,
    /// A `Vec`: the kernel's subtree walk fills it through its public
    /// `&mut Vec` interface.
    found: Vec<[u32; 2]>,
    /// The sharded merge: `found` grouped by shard, and where each
    /// shard's run ends.
    bucketed: Pool<[u32; 2]>,
    ends: Pool<usize>,
    /// Pairs this participant's jobs found this frame, repeats included.
    pub(crate) reported: u64,
}

impl Worker {
    pub(crate) fn new(config: GridConfig) -> Self {
        Worker {
            grid: AdaptiveGrid::with_config(config),
            found: Vec::new(),
            bucketed: Pool::new(),
            ends: Pool::new(),
            reported: 0,
        }
    }

    pub(crate) fn config(&self) -> &GridConfig {
        self.grid.config()
    }

    /// Readies the worker for a frame whose sharded merge, if any, has
    /// `shards` shards (0: the reference-point merge).
    pub(crate) fn start_frame(&mut self, shards: usize) {
        self.ends.resize(shards, 0);
        self.reported = 0;
    }
}

/// Grows every participant's buffers to the largest room any has.
pub(crate) fn equalize(workers: &mut [Mutex<Worker>]) {
    let mut grid = GridCapacity::default();
    let (mut found, mut bucketed) = (0, 0);
    for worker in workers.iter_mut() {
        let w = worker.get_mut();
        grid = grid.max(w.grid.capacity());
        found = found.max(w.found.capacity());
        bucketed = bucketed.max(w.bucketed.capacity());
    }
    for worker in workers.iter_mut() {
        let w = worker.get_mut();
        w.grid.reserve(&grid);
        // Exact, or levelled buffers would overshoot each other and keep
        // doubling frame after frame.
        w.found.reserve_exact(found.saturating_sub(w.found.len()));
        w.bucketed.reserve_exact(bucketed.saturating_sub(w.bucketed.len()));
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

/// Where the subtree jobs put their pairs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum MergeInto<'a> {
    /// Each leaf's own pairs (the reference-point rule), one run per
    /// subtree in the arena.
    Arena(&'a Mutex<PairArena<u64>>),
    /// Every pair each leaf finds, into the sharded per-box sets.
    Sets(&'a ShardedSets),
}

/// What the subtree jobs of one frame share: job `j` walks `subtrees[j]`.
#[derive(Debug)]
pub(crate) struct SubtreeJobs<'a> {
    pub(crate) chunks: Chunks<'a>,
    /// The chunks' states, which the root's passes filled.
    pub(crate) states: &'a [Chunk],
    pub(crate) subtrees: &'a [Subtree],
    pub(crate) workers: &'a [Mutex<Worker>],
    pub(crate) merge: MergeInto<'a>,
    /// The first failure to grow a worker's pair list.
    pub(crate) failure: &'a Mutex<Option<PairsError>>,
}

impl<'scope> IndexedJob<'scope> for SubtreeJobs<'_> {
    fn run(&'scope self, ctx: &mut JobContext<'_, 'scope>, job: usize) {
        crate::profile::zone!("partition: subtree");
        let subtree = self.subtrees[job];
        let mut worker = self.workers[ctx.worker_index()].lock();
        let Worker { grid, found, bucketed, ends, reported } = &mut *worker;
        found.clear();
        let chunks = self.chunks;
        let fill = |stack: &mut [Item]| {
            let mut at = 0;
            for chunk in self.states {
                let part = chunk.part(subtree.source);
                stack[at..at + part.len()].copy_from_slice(part);
                at += part.len();
            }
        };
        let (count, cell, input) = (subtree.count, subtree.cell, chunks.input);
        let walk = match self.merge {
            MergeInto::Arena(arena) => {
                grid.find_node_pairs_with(count, cell, input, found, fill).map(|()| {
                    arena.lock().push(subtree.key, found);
                })
            }
            MergeInto::Sets(sets) => grid
                .find_node_overlaps_with(count, cell, input, found, fill)
                .and_then(|()| bucket(found, sets.count(), bucketed, ends))
                .map(|()| {
                    // Each shard's lock once, starting from a different
                    // shard per job so that jobs seldom queue on one.
                    let shards = sets.count();
                    for step in 0..shards {
                        let shard = (job + step) & (shards - 1);
                        let start = if shard == 0 { 0 } else { ends[shard - 1] };
                        if start < ends[shard] {
                            sets.insert(shard, &bucketed[start..ends[shard]]);
                        }
                    }
                }),
        };
        *reported += found.len() as u64;
        if let Err(e) = walk {
            self.failure.lock().get_or_insert(e);
        }
    }
}
