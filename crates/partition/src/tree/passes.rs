//! The root split's parallel passes: one job per chunk of the input, each
//! writing only its own chunk's state, with the kernel's own steps
//! ([`broadphase_kernel::parts`]).
//!
//! A pass is a value on the orchestrating thread's stack, run over the
//! chunks' states by [`JobSystem::for_each_mut`](broadphase_jobs::JobSystem::for_each_mut):
//! each job gets its chunk's state as `&mut`; nothing about the pass
//! outlives it.

use std::ops::Range;

use broadphase_kernel::GridConfig;
use broadphase_kernel::parts::{
    Bounds, ChildCounts, ChunkSplitter, Item, NodeSplit, Quantizer, Union,
};
use broadphase_storage::{Aabb, Pool};

/// Boxes per chunk of the root's passes. Fixed by the box count alone,
/// never by the thread count: a child's items are its share of each chunk
/// in chunk order, so the same chunks give the same tree and the same
/// pairs in the same order on any number of threads.
pub(crate) fn chunk_len(boxes: usize) -> usize {
    (boxes / 64).clamp(2 * 1024, 16 * 1024)
}

/// One chunk's state through a frame, kept across frames.
#[derive(Debug)]
pub(crate) struct Chunk {
    pub(crate) bounds: Bounds,
    /// The chunk's boxes, quantized.
    pub(crate) items: Pool<Item>,
    pub(crate) splitter: ChunkSplitter,
    pub(crate) counts: ChildCounts,
    pub(crate) union: Union,
    /// Per parallel split of the frame, in order: the chunk's share of each
    /// child cell's items. Kept until the frame's subtree jobs have read
    /// them.
    pub(crate) shares: Vec<Shares>,
}

/// One chunk's part of a split's children: their items one cell after
/// another in one buffer, so that however the boxes move between cells
/// from frame to frame the buffer only grows with the chunk's total.
#[derive(Debug)]
pub(crate) struct Shares {
    items: Pool<Item>,
    /// Where each cell's items end in `items`.
    ends: [u32; 64],
}

impl Default for Shares {
    fn default() -> Self {
        Shares { items: Pool::new(), ends: [0; 64] }
    }
}

impl Shares {
    /// Cell `cell`'s items.
    pub(crate) fn cell(&self, cell: usize) -> &[Item] {
        let start = if cell == 0 { 0 } else { self.ends[cell - 1] as usize };
        &self.items[start..self.ends[cell] as usize]
    }

    /// Room for `counts` items per cell, as one slice per cell to scatter
    /// into.
    fn slices(&mut self, counts: &ChildCounts) -> [&mut [Item]; 64] {
        let mut end = 0;
        for (cell, cell_end) in self.ends.iter_mut().enumerate() {
            end += counts.get(cell);
            *cell_end = end;
        }
        self.items.resize(end as usize, Item::default());
        let mut rest = self.items.as_mut_slice();
        core::array::from_fn(|cell| {
            let (head, tail) = core::mem::take(&mut rest).split_at_mut(counts.get(cell) as usize);
            rest = tail;
            head
        })
    }
}

impl Default for Chunk {
    fn default() -> Self {
        Chunk {
            bounds: Bounds::EMPTY,
            items: Pool::new(),
            splitter: ChunkSplitter::default(),
            counts: ChildCounts::default(),
            union: Union::EMPTY,
            shares: Vec::new(),
        }
    }
}

/// Where a node's items are, chunk by chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// The root: each chunk's items.
    Root,
    /// Child `cell` of parallel split `split`: each chunk's share of it.
    Share { split: usize, cell: usize },
}

impl Chunk {
    /// This chunk's part of a node's items.
    pub(crate) fn part(&self, source: Source) -> &[Item] {
        match source {
            Source::Root => &self.items,
            Source::Share { split, cell } => self.shares[split].cell(cell),
        }
    }
}

/// The frame's input cut into chunks (their states are kept apart, in the
/// tree, one [`Chunk`] each).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Chunks<'a> {
    pub(crate) input: &'a [Aabb],
    pub(crate) len: usize,
}

/// A pass over the chunks: what it does to one chunk's state.
pub(crate) trait Pass: Sync {
    /// Runs the pass on chunk `chunk`, whose state is `state`.
    fn run(&self, chunk: usize, state: &mut Chunk);
}

impl Chunks<'_> {
    fn range(&self, chunk: usize) -> Range<usize> {
        chunk * self.len..((chunk + 1) * self.len).min(self.input.len())
    }

    /// Quantizes chunk `chunk` of the input into `items`.
    fn quantize(
        &self,
        chunk: usize,
        items: &mut Pool<Item>,
        quantizer: &Quantizer,
        config: &GridConfig,
    ) {
        let range = self.range(chunk);
        items.resize(range.len(), Item::default());
        let first_id = range.start as u32; // the input holds at most u32::MAX boxes
        quantizer.quantize_chunk(&self.input[range], first_id, items, config.kernel);
    }
}

/// Each chunk's [`Bounds`].
#[derive(Debug)]
pub(crate) struct BoundsPass<'a> {
    pub(crate) chunks: Chunks<'a>,
}

impl Pass for BoundsPass<'_> {
    fn run(&self, chunk: usize, state: &mut Chunk) {
        crate::profile::zone!("partition: bounds");
        state.bounds = Bounds::of(&self.chunks.input[self.chunks.range(chunk)]);
    }
}

/// Each chunk's part of a node counted in the node's current block,
/// quantizing the chunk first when `quantizer` is given (the root's first
/// count).
#[derive(Debug)]
pub(crate) struct CountPass<'a> {
    pub(crate) chunks: Chunks<'a>,
    pub(crate) source: Source,
    pub(crate) quantizer: Option<&'a Quantizer>,
    pub(crate) split: &'a NodeSplit,
    pub(crate) config: &'a GridConfig,
}

impl Pass for CountPass<'_> {
    fn run(&self, chunk: usize, state: &mut Chunk) {
        crate::profile::zone!("partition: quantize and count");
        if let Some(quantizer) = self.quantizer {
            self.chunks.quantize(chunk, &mut state.items, quantizer, self.config);
        }
        let Chunk { items, splitter, counts, shares, .. } = state;
        let part = match self.source {
            Source::Root => items.as_slice(),
            Source::Share { split, cell } => shares[split].cell(cell),
        };
        *counts = splitter.count(part, self.split, self.config);
    }
}

/// Each chunk quantized, when the root is a leaf before any count.
#[derive(Debug)]
pub(crate) struct QuantizePass<'a> {
    pub(crate) chunks: Chunks<'a>,
    pub(crate) quantizer: &'a Quantizer,
    pub(crate) config: &'a GridConfig,
}

impl Pass for QuantizePass<'_> {
    fn run(&self, chunk: usize, state: &mut Chunk) {
        self.chunks.quantize(chunk, &mut state.items, self.quantizer, self.config);
    }
}

/// Each chunk's part's [`Union`], when a node's first block separates
/// nothing.
#[derive(Debug)]
pub(crate) struct UnionPass {
    pub(crate) source: Source,
}

impl Pass for UnionPass {
    fn run(&self, _chunk: usize, state: &mut Chunk) {
        state.union = Union::of(state.part(self.source));
    }
}

/// Each chunk's part of a node scattered into its share of every child
/// cell, as parallel split number `split` (later than the source's).
#[derive(Debug)]
pub(crate) struct ScatterPass {
    pub(crate) source: Source,
    pub(crate) split: usize,
}

impl Pass for ScatterPass {
    fn run(&self, _chunk: usize, state: &mut Chunk) {
        crate::profile::zone!("partition: scatter");
        let Chunk { items, splitter, counts, shares, .. } = state;
        while shares.len() <= self.split {
            shares.push(Shares::default());
        }
        let (earlier, from_here) = shares.split_at_mut(self.split);
        let part = match self.source {
            Source::Root => items.as_slice(),
            Source::Share { split, cell } => earlier[split].cell(cell),
        };
        let mut out = from_here[0].slices(counts);
        splitter.scatter(part, &mut out);
    }
}
