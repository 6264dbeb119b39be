//! The index of enlarged boxes: kept grids built from every live proxy's
//! enlarged box, plus the list of proxies whose entry in them went stale
//! since (re-indexed, inserted after the build).
//!
//! A big index is one grid per thread, each over a contiguous range of
//! slots, built at once: a rebuild of a million proxies is one long frame
//! for the game, and this shortens it by the thread count. A query asks
//! every grid (a few tens of nanoseconds more per grid); the pairs are the
//! same whatever the split.
//!
//! Rebuilding the grid costs about what one pass of the grid tree over
//! all proxies costs; finding the pairs among the stale ones costs that
//! per stale proxy, every update. So the grid is rebuilt when the stale
//! proxies' cost summed over the updates since the last build reaches
//! that of a rebuild (the ski-rental rule: at most twice the cost of the
//! best schedule in hindsight).

use super::slots::{SlotState, Slots};
use crate::PartitionError;
use broadphase_jobs::{IndexedJob, JobContext, JobSystem};
use broadphase_kernel::{AdaptiveGrid, GridConfig};
use broadphase_storage::{Aabb, InputError};
use parking_lot::Mutex;

/// Live proxies per grid at least, when the index is split over threads.
const PART_MIN: usize = 64 * 1024;

/// Most grids the index splits into.
const MAX_PARTS: usize = 16;

/// Re-indexed proxies queried against the grid per job.
pub(crate) const QUERY_CHUNK: usize = 1024;

/// One grid of the index: a contiguous range of slots.
#[derive(Debug)]
struct Part {
    grid: AdaptiveGrid,
    /// Grid index → slot.
    ids: Vec<u32>,
    /// The grid's boxes, gathered for the build.
    gathered: Vec<Aabb>,
    failure: Option<InputError>,
}

/// The grids of enlarged boxes and what went stale in them.
#[derive(Debug)]
pub(crate) struct FatIndex {
    config: GridConfig,
    parts: Vec<Part>,
    /// How many of `parts` the last build used.
    used: usize,
    /// Whether the grid reflects a build that later updates patched with
    /// the stale list; false before the first build and after a full
    /// recomputation.
    pub(crate) built: bool,
    /// Build number: a slot whose `dirty` mark equals it is stale.
    pub(crate) number: u32,
    /// Slots marked stale since the build, each once.
    pub(crate) stale: Vec<u32>,
    /// Stale proxies summed over the updates since the build.
    debt: u64,
}

impl FatIndex {
    pub(crate) fn new(config: GridConfig) -> Self {
        Self {
            config,
            parts: Vec::new(),
            used: 0,
            built: false,
            number: 1,
            stale: Vec::new(),
            debt: 0,
        }
    }

    /// Whether the next update should rebuild before it queries.
    pub(crate) fn wants_rebuild(&self, live: usize) -> bool {
        !self.built || self.debt >= live as u64
    }

    /// Drops the grid: every entry is stale (after a full recomputation).
    pub(crate) fn invalidate(&mut self) {
        self.built = false;
        self.stale.clear();
        self.debt = 0;
    }

    /// Builds the grids from every live slot's enlarged box, on all
    /// threads of `jobs` when big; nothing is stale after it.
    pub(crate) fn rebuild(
        &mut self,
        jobs: &JobSystem,
        slots: &mut Slots,
    ) -> Result<(), PartitionError> {
        self.number = self.number.wrapping_add(1);
        if self.number == 0 {
            // Marks from 2^32 builds ago would read as current.
            slots.dirty.fill(0);
            self.number = 1;
        }
        self.stale.clear();
        self.debt = 0;
        self.built = false;
        let parts = (slots.live / PART_MIN).clamp(1, jobs.threads().min(MAX_PARTS));
        while self.parts.len() < parts {
            self.parts.push(Part {
                grid: AdaptiveGrid::with_config(self.config),
                ids: Vec::new(),
                gathered: Vec::new(),
                failure: None,
            });
        }
        self.used = parts;
        let range_len = slots.len().div_ceil(parts);
        for (k, part) in self.parts[..parts].iter_mut().enumerate() {
            let range = k * range_len..((k + 1) * range_len).min(slots.len());
            slots.gather_live_in(range, &mut part.gathered, &mut part.ids);
            part.failure = None;
        }
        if parts == 1 {
            let part = &mut self.parts[0];
            part.grid.build(&part.gathered)?;
        } else {
            {
                let cells: [Mutex<Option<&mut Part>>; MAX_PARTS] =
                    [const { Mutex::new(None) }; MAX_PARTS];
                for (cell, part) in cells.iter().zip(self.parts[..parts].iter_mut()) {
                    *cell.lock() = Some(part);
                }
                let pass = BuildPass { parts: &cells[..parts] };
                jobs.reserve_queue(parts);
                jobs.scope(|s| (0..parts).for_each(|part| s.spawn_indexed(&pass, part)))?;
            }
            if let Some(e) = self.parts[..parts].iter_mut().find_map(|p| p.failure.take()) {
                return Err(e.into());
            }
        }
        self.built = true;
        Ok(())
    }

    /// Marks `slot` stale (once per build).
    #[inline]
    pub(crate) fn mark_stale(&mut self, slots: &mut Slots, slot: u32) {
        let mark = &mut slots.dirty[slot as usize];
        if *mark != self.number {
            *mark = self.number;
            self.stale.push(slot);
        }
    }

    /// Adds this update's stale count to the debt.
    pub(crate) fn charge(&mut self, stale_live: usize) {
        self.debt += stale_live as u64;
    }
}

/// Every part's grid built, one job each.
struct BuildPass<'a, 'b> {
    parts: &'a [Mutex<Option<&'b mut Part>>],
}

impl<'scope> IndexedJob<'scope> for BuildPass<'_, '_> {
    fn run(&'scope self, _ctx: &mut JobContext<'_, 'scope>, part: usize) {
        crate::profile::zone!("persistent: build index part");
        if let Some(part) = self.parts[part].lock().as_mut()
            && let Err(e) = part.grid.build(&part.gathered)
        {
            part.failure = Some(e);
        }
    }
}

/// One query job's results, kept across updates.
#[derive(Debug, Default)]
pub(crate) struct QueryChunk {
    hits: Vec<u32>,
    pub(crate) pairs: Vec<[u32; 2]>,
    pub(crate) failure: Option<InputError>,
}

/// Every re-indexed proxy's enlarged box against the grid: the pairs with
/// proxies whose entry in the grid is current.
pub(crate) struct QueryPass<'a> {
    pub(crate) moved: &'a [u32],
    pub(crate) slots: &'a Slots,
    pub(crate) index: &'a FatIndex,
    pub(crate) out: &'a [Mutex<QueryChunk>],
}

impl<'scope> IndexedJob<'scope> for QueryPass<'_> {
    fn run(&'scope self, _ctx: &mut JobContext<'_, 'scope>, chunk: usize) {
        crate::profile::zone!("persistent: query");
        let mut out = self.out[chunk].lock();
        let QueryChunk { hits, pairs, failure } = &mut *out;
        pairs.clear();
        *failure = None;
        let first = chunk * QUERY_CHUNK;
        let moved = &self.moved[first..(first + QUERY_CHUNK).min(self.moved.len())];
        let slots = self.slots;
        for &slot in moved {
            let s = slot as usize;
            let is_static = slots.state[s] == SlotState::Static;
            for part in &self.index.parts[..self.index.used] {
                if let Err(e) = part.grid.query(&slots.indexed()[s], hits) {
                    *failure = Some(e);
                    return;
                }
                for &hit in hits.iter() {
                    let other = part.ids[hit as usize];
                    let o = other as usize;
                    let state = slots.state[o];
                    // A stale entry's pairs come from the stale proxies' own
                    // pass; a moved proxy that is current (the grids were
                    // just rebuilt) finds the other and is found by it: keep
                    // one.
                    let keep = state.is_live()
                        && slots.dirty[o] != self.index.number
                        && other != slot
                        && (!slots.queued.get(o) || other > slot)
                        && !(is_static && state == SlotState::Static);
                    if keep {
                        pairs.push(if slot < other { [slot, other] } else { [other, slot] });
                    }
                }
            }
        }
    }
}
