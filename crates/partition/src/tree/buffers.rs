//! Where a node's boxes live, and the buffers splits write, reused frame
//! after frame.
//!
//! Jobs are `'static`, so what several jobs read is shared through `Arc`.
//! Nothing here is allocated once a scene's frames are warm: a split takes
//! a buffer from the tree's [`BufferPool`], fills it while it alone holds
//! it, and shares it read-only with the node's children; every buffer a
//! frame used goes back to the pool when the frame ends. Buffers live for
//! the whole frame, so the pool holds as many as one frame's splits use —
//! a number fixed by the scene, not by the timing of the threads.

use std::ops::Range;
use std::sync::Arc;

use broadphase_storage::Aabb;
use parking_lot::Mutex;

use super::root::ChunkSet;

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

/// Where a node's boxes are: a run of the input, a run of a split buffer,
/// or one cell of a chunked split (its run in every chunk, in chunk order,
/// which is input order).
#[derive(Clone, Debug)]
pub(crate) enum Source {
    Input(Arc<Vec<Aabb>>, Range<usize>),
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
            Source::Input(_, range) => range.len().div_ceil(chunk.max(1)),
            Source::Buffer(..) => 1,
            Source::Cell(set, _) => set.len(),
        }
    }

    /// Runs `f` on part `k` (as counted by [`part_count`](Source::part_count)).
    pub(crate) fn with_part<R>(
        &self,
        k: usize,
        chunk: usize,
        f: impl FnOnce(PartRef<'_>) -> R,
    ) -> R {
        match self {
            Source::Input(input, range) => {
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
    pub(crate) fn for_each_part(&self, mut f: impl FnMut(PartRef<'_>)) {
        match self {
            Source::Input(_, range) => self.with_part(0, range.len(), f),
            Source::Buffer(..) => self.with_part(0, 0, f),
            Source::Cell(set, cell) => (0..set.len()).for_each(|k| set.with_cell(k, *cell, &mut f)),
        }
    }

    /// The boxes as one slice, when they are one run.
    pub(crate) fn as_slice(&self) -> Option<&[Aabb]> {
        match self {
            Source::Input(input, range) => Some(&input[range.clone()]),
            Source::Buffer(buffer, range) => Some(&buffer.boxes[range.clone()]),
            Source::Cell(..) => None,
        }
    }
}
