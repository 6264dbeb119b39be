//! Where a node's boxes live, and the buffers splits write, reused frame
//! after frame.
//!
//! The caller's boxes are borrowed for the frame; a node's run of them is
//! a range, read against that slice. What a split writes is shared by its
//! children through `Arc`, since the children outlive the job that made
//! it. Nothing here is allocated once a scene's frames are warm: a split takes
//! a buffer from the tree's [`BufferPool`], fills it while it alone holds
//! it, and shares it read-only with the node's children; every buffer a
//! frame used goes back to the pool when the frame ends. Buffers live for
//! the whole frame, so the pool holds as many as one frame's splits use —
//! a number fixed by the scene, not by the timing of the threads.

use std::ops::Range;
use std::sync::Arc;

use broadphase_storage::Aabb;
use parking_lot::{Mutex, MutexGuard};

/// Boxes and their ids in the caller's slice.
#[derive(Debug, Default)]
pub(crate) struct Storage {
    pub(crate) boxes: Vec<Aabb>,
    pub(crate) ids: Vec<u32>,
}

/// Split buffers: the free ones, and those lent out this frame.
#[derive(Debug, Default)]
pub(crate) struct BufferPool {
    free: Mutex<Vec<Arc<Storage>>>,
    lent: Mutex<Vec<Arc<Storage>>>,
}

impl BufferPool {
    /// A buffer of `len` boxes filled by `fill`, then shared.
    ///
    /// It is the free buffer with the least room that holds `len` boxes
    /// (or the roomiest, grown). The buffers returned at the end of a
    /// frame each held one of its requests, so they can meet the same
    /// requests next frame in any order: the best fit always leaves a fit
    /// for the rest. A warm frame therefore never grows a buffer, whichever
    /// thread asks first.
    pub(crate) fn take(&self, len: usize, fill: impl FnOnce(&mut Storage)) -> Arc<Storage> {
        let mut buffer = {
            let mut free = self.free.lock();
            let room = |b: &Arc<Storage>| b.boxes.capacity().min(b.ids.capacity());
            let fits = free
                .iter()
                .enumerate()
                .filter(|(_, b)| room(b) >= len)
                .min_by_key(|(_, b)| room(b));
            let pick = fits.or_else(|| free.iter().enumerate().max_by_key(|(_, b)| room(b)));
            match pick.map(|(i, _)| i) {
                Some(i) => free.swap_remove(i),
                None => Arc::default(),
            }
        };
        // A free buffer is held by the pool alone: its frame has ended.
        let storage = match Arc::get_mut(&mut buffer) {
            Some(storage) => storage,
            None => {
                buffer = Arc::default();
                Arc::get_mut(&mut buffer).expect("a new Arc is unique")
            }
        };
        storage.boxes.resize(len, Aabb::default());
        storage.ids.resize(len, 0);
        fill(storage);
        self.lent.lock().push(Arc::clone(&buffer));
        buffer
    }

    /// Takes back every buffer lent this frame; call once no job holds one.
    pub(crate) fn recycle(&mut self) {
        let lent = self.lent.get_mut();
        self.free.get_mut().append(lent);
    }
}

/// Where a node's boxes are: a run of the frame's input, a run of a split
/// buffer, or one cell of a chunked split (its run in every chunk, in
/// chunk order, which is input order).
#[derive(Clone, Debug)]
pub(crate) enum Source {
    Input(Range<usize>),
    Buffer(Arc<Storage>, Range<usize>),
    Cell(Arc<ChunkSet>, usize),
}

/// One contiguous run of a node's boxes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PartRef<'a> {
    pub(crate) boxes: &'a [Aabb],
    ids: Ids<'a>,
}

/// The ids of a run: positions in the input from a start, or stored.
#[derive(Clone, Copy, Debug)]
enum Ids<'a> {
    From(u32),
    Stored(&'a [u32]),
}

impl<'a> PartRef<'a> {
    /// A run of the input starting at position `start`.
    pub(crate) fn input(boxes: &'a [Aabb], start: usize) -> Self {
        PartRef { boxes, ids: Ids::From(start as u32) }
    }

    /// A run of boxes with their ids beside them.
    pub(crate) fn stored(boxes: &'a [Aabb], ids: &'a [u32]) -> Self {
        PartRef { boxes, ids: Ids::Stored(ids) }
    }

    /// Calls `visit(box, id)` for every box of the run, in order.
    #[inline]
    pub(crate) fn for_each(&self, mut visit: impl FnMut(&Aabb, u32)) {
        match self.ids {
            Ids::From(start) => {
                for (i, b) in self.boxes.iter().enumerate() {
                    visit(b, start + i as u32);
                }
            }
            Ids::Stored(ids) => {
                for (b, &id) in self.boxes.iter().zip(ids) {
                    visit(b, id);
                }
            }
        }
    }

    /// The id of the run's `i`-th box.
    #[inline(always)]
    pub(crate) fn id(&self, i: usize) -> u32 {
        match self.ids {
            Ids::From(start) => start + i as u32,
            Ids::Stored(ids) => ids[i],
        }
    }

    /// Appends the ids of the run to `ids`.
    pub(crate) fn extend_ids(&self, ids: &mut Vec<u32>) {
        match self.ids {
            Ids::From(start) => ids.extend(start..start + self.boxes.len() as u32),
            Ids::Stored(stored) => ids.extend_from_slice(stored),
        }
    }
}

impl Source {
    /// How many parts a parallel pass over the source has: chunks of
    /// `chunk` boxes for a run of the input, one per chunk of a chunked
    /// split, one for a buffer.
    pub(crate) fn part_count(&self, chunk: usize) -> usize {
        match self {
            Source::Input(range) => range.len().div_ceil(chunk.max(1)),
            Source::Buffer(..) => 1,
            Source::Cell(set, _) => set.len(),
        }
    }

    /// Runs `f` on part `k` (as counted by [`part_count`](Source::part_count));
    /// `input` is the frame's input.
    pub(crate) fn with_part<R>(
        &self,
        input: &[Aabb],
        k: usize,
        chunk: usize,
        f: impl FnOnce(PartRef<'_>) -> R,
    ) -> R {
        match self {
            Source::Input(range) => {
                let start = range.start + k * chunk;
                let end = (start + chunk).min(range.end);
                f(PartRef::input(&input[start..end], start))
            }
            Source::Buffer(buffer, range) => {
                f(PartRef::stored(&buffer.boxes[range.clone()], &buffer.ids[range.clone()]))
            }
            Source::Cell(set, cell) => set.with_cell(k, *cell, f),
        }
    }

    /// Calls `f` on every part, in order (a run of the input is one part).
    pub(crate) fn for_each_part(&self, input: &[Aabb], mut f: impl FnMut(PartRef<'_>)) {
        match self {
            Source::Input(range) => self.with_part(input, 0, range.len(), f),
            Source::Buffer(..) => self.with_part(input, 0, 0, f),
            Source::Cell(set, cell) => (0..set.len()).for_each(|k| set.with_cell(k, *cell, &mut f)),
        }
    }

    /// The boxes as one slice, when they are one run.
    pub(crate) fn as_slice<'a>(&'a self, input: &'a [Aabb]) -> Option<&'a [Aabb]> {
        match self {
            Source::Input(range) => Some(&input[range.clone()]),
            Source::Buffer(buffer, range) => Some(&buffer.boxes[range.clone()]),
            Source::Cell(..) => None,
        }
    }
}

/// One part of a node (for the root, a chunk of the input) counted and
/// scattered, cell by cell, into a buffer of its own. Kept across frames
/// in its [`ChunkSet`] with all its memory.
#[derive(Debug, Default)]
pub(crate) struct ChunkSplit {
    pub(crate) storage: Storage,
    /// `offsets[c]..offsets[c + 1]` are cell `c`'s boxes in `storage`.
    pub(crate) offsets: Vec<u32>,
    pub(crate) spans: [u64; 3],
    /// Whether every box of the part met the input contract (if not, the
    /// rest of the split is meaningless).
    pub(crate) valid: bool,
}

impl ChunkSplit {
    /// Boxes of `cell` in this chunk.
    pub(crate) fn count(&self, cell: usize) -> u32 {
        self.offsets[cell + 1] - self.offsets[cell]
    }

    fn range(&self, cell: usize) -> Range<usize> {
        self.offsets[cell] as usize..self.offsets[cell + 1] as usize
    }
}

/// The chunks of one parallel split, each written by one job and then read
/// by every child of the split. The tree keeps its sets across frames and
/// takes them in the same order every frame, so their memory settles.
#[derive(Debug, Default)]
pub(crate) struct ChunkSet {
    /// Written by the pass's jobs, one chunk each. Both vectors only grow;
    /// the first `len` of each are this frame's.
    filling: Vec<Mutex<ChunkSplit>>,
    /// The finished chunks, read by the split's children without a lock.
    chunks: Vec<ChunkSplit>,
    len: usize,
}

impl ChunkSet {
    /// Chunks in this split.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Makes room for a split in `parts` chunks.
    pub(crate) fn reset(&mut self, parts: usize) {
        if self.filling.len() < parts {
            self.filling.resize_with(parts, Mutex::default);
            self.chunks.resize_with(parts, ChunkSplit::default);
        }
        self.len = parts;
    }

    /// Chunk `k`, to scatter into during the pass.
    pub(crate) fn chunk_mut(&self, k: usize) -> MutexGuard<'_, ChunkSplit> {
        self.filling[k].lock()
    }

    /// Ends the pass: the chunks written become the ones read (their
    /// buffers swap places with last use's, so no memory moves).
    pub(crate) fn finish(&mut self) {
        for (filled, chunk) in self.filling.iter_mut().zip(&mut self.chunks).take(self.len) {
            std::mem::swap(filled.get_mut(), chunk);
        }
    }

    /// Runs `f` on chunk `k`'s run of `cell`.
    pub(crate) fn with_cell<R>(
        &self,
        k: usize,
        cell: usize,
        f: impl FnOnce(PartRef<'_>) -> R,
    ) -> R {
        let chunk = &self.chunks[k];
        let range = chunk.range(cell);
        let storage = &chunk.storage;
        f(PartRef::stored(&storage.boxes[range.clone()], &storage.ids[range]))
    }

    /// Adds every chunk's count per cell to `cells` and spans to `spans`;
    /// `false` if a chunk met a bad box.
    pub(crate) fn totals(&self, cells: &mut [u32], spans: &mut [u64; 3]) -> bool {
        let mut valid = true;
        for chunk in &self.chunks[..self.len] {
            valid &= chunk.valid;
            if valid {
                cells.iter_mut().enumerate().for_each(|(c, total)| *total += chunk.count(c));
                (0..3).for_each(|a| spans[a] += chunk.spans[a]);
            }
        }
        valid
    }
}
