//! The index of enlarged boxes: a kept grid built from every live proxy's
//! enlarged box, plus the list of proxies whose entry in it went stale
//! since (re-indexed, inserted after the build).
//!
//! Rebuilding the grid costs about what one pass of the grid tree over
//! all proxies costs; finding the pairs among the stale ones costs that
//! per stale proxy, every update. So the grid is rebuilt when the stale
//! proxies' cost summed over the updates since the last build reaches
//! that of a rebuild (the ski-rental rule: at most twice the cost of the
//! best schedule in hindsight).

use super::slots::{SlotState, Slots};
use broadphase_jobs::{IndexedJob, JobContext};
use broadphase_kernel::{AdaptiveGrid, GridConfig};
use broadphase_storage::{Aabb, InputError};
use parking_lot::Mutex;

/// Re-indexed proxies queried against the grid per job.
pub(crate) const QUERY_CHUNK: usize = 1024;

/// The grid of enlarged boxes and what went stale in it.
#[derive(Debug)]
pub(crate) struct FatIndex {
    grid: AdaptiveGrid,
    /// Grid index → slot.
    ids: Vec<u32>,
    /// The grid's boxes, gathered for the build.
    gathered: Vec<Aabb>,
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
            grid: AdaptiveGrid::with_config(config),
            ids: Vec::new(),
            gathered: Vec::new(),
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

    /// Builds the grid from every live slot's enlarged box; nothing is
    /// stale after it.
    pub(crate) fn rebuild(&mut self, slots: &mut Slots) -> Result<(), InputError> {
        slots.gather_live(&mut self.gathered, &mut self.ids);
        self.number = self.number.wrapping_add(1);
        if self.number == 0 {
            // Marks from 2^32 builds ago would read as current.
            slots.dirty.fill(0);
            self.number = 1;
        }
        self.stale.clear();
        self.debt = 0;
        self.built = false;
        self.grid.build(&self.gathered)?;
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
            if let Err(e) = self.index.grid.query(&slots.fat[s], hits) {
                *failure = Some(e);
                return;
            }
            for &hit in hits.iter() {
                let other = self.index.ids[hit as usize];
                let o = other as usize;
                let state = slots.state[o];
                // A stale entry's pairs come from the stale proxies' own
                // pass; a moved proxy that is current (the grid was just
                // rebuilt) finds the other and is found by it: keep one.
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
