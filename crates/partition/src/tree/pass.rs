//! The orchestrating thread's parallel passes over a node too big to
//! split inside one job (the root, and huge nodes below it): one job per
//! part of the node, each writing only its own slot.
//!
//! A pass is a value on the orchestrating thread's stack, lent to its jobs
//! for the pass's scope; nothing about it outlives the pass.

use broadphase_jobs::{IndexedJob, JobContext};
use broadphase_storage::Aabb;
use parking_lot::Mutex;

use super::buffers::{ChunkSet, Source};
use super::node::FrameShared;
use super::plan::{Extent, Region};
use super::root::{RootGrid, scatter_into};

/// Where a pass's parts come from: a node's boxes cut into parts of
/// `chunk` boxes (a run of the input) or into the chunks of the split
/// that made it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Parts<'a> {
    pub(crate) input: &'a [Aabb],
    pub(crate) source: &'a Source,
    pub(crate) chunk: usize,
}

impl Parts<'_> {
    /// How many parts, so how many jobs, the pass has.
    pub(crate) fn count(&self) -> usize {
        self.source.part_count(self.chunk)
    }
}

/// The extent of each part's boxes inside a window, one slot per part.
#[derive(Debug)]
pub(crate) struct ExtentPass<'a> {
    pub(crate) parts: Parts<'a>,
    pub(crate) window: Region,
    /// Filled by part `k` at index `k`; sized by the caller.
    pub(crate) extents: &'a Mutex<Vec<Extent>>,
}

impl<'scope> IndexedJob<'scope> for ExtentPass<'_> {
    fn run(&'scope self, _ctx: &mut JobContext<'_, 'scope>, part: usize) {
        let Parts { input, source, chunk } = self.parts;
        let extent = source.with_part(input, part, chunk, |boxes| {
            let mut extent = Extent::EMPTY;
            boxes.boxes.iter().for_each(|b| extent.add_clamped(b, &self.window));
            extent
        });
        self.extents.lock()[part] = extent;
    }
}

/// Each part validated, counted per cell of `grid` and scattered into its
/// chunk of `set`, using the scratch of the thread that runs it.
#[derive(Debug)]
pub(crate) struct ScatterPass<'a> {
    pub(crate) parts: Parts<'a>,
    pub(crate) grid: RootGrid,
    pub(crate) set: &'a ChunkSet,
    pub(crate) frame: &'a FrameShared,
}

impl<'scope> IndexedJob<'scope> for ScatterPass<'_> {
    fn run(&'scope self, ctx: &mut JobContext<'_, 'scope>, part: usize) {
        let Parts { input, source, chunk } = self.parts;
        let mut scratch = self.frame.scratch(ctx.worker_index());
        let (ranges, cursor) = scratch.scatter_scratch();
        let mut chunk_split = self.set.chunk_mut(part);
        source.with_part(input, part, chunk, |boxes| {
            scatter_into(boxes, &self.grid, &mut chunk_split, ranges, cursor);
        });
    }
}
