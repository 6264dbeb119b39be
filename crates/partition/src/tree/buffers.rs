//! Box buffers that move between jobs and come back for the next frame.
//!
//! Jobs are `'static`, so what several jobs read is shared through `Arc`.
//! A [`Buffer`] is taken from the tree's [`BufferPool`], filled by the one
//! job that splits a node, shared read-only with the node's children, and
//! handed back to the pool (capacity kept) when the last child drops it.
//! After a few frames of one scene the big buffers stop being allocated.

use core::fmt;
use std::ops::Range;
use std::sync::Arc;

use broadphase_storage::Aabb;
use parking_lot::Mutex;

/// Storage of one buffer: boxes and their ids in the caller's slice.
#[derive(Debug, Default)]
pub(crate) struct Storage {
    pub(crate) boxes: Vec<Aabb>,
    pub(crate) ids: Vec<u32>,
}

/// Buffers and pair vectors waiting to be reused.
#[derive(Debug, Default)]
pub(crate) struct BufferPool {
    storage: Mutex<Vec<Storage>>,
    pairs: Mutex<Vec<Vec<[u32; 2]>>>,
}

impl BufferPool {
    /// An empty buffer with whatever capacity the pool has.
    pub(crate) fn take(self: &Arc<Self>) -> Buffer {
        let mut storage = self.storage.lock().pop().unwrap_or_default();
        storage.boxes.clear();
        storage.ids.clear();
        Buffer { storage, pool: Arc::clone(self) }
    }

    /// An empty pair vector.
    pub(crate) fn take_pairs(&self) -> Vec<[u32; 2]> {
        let mut pairs = self.pairs.lock().pop().unwrap_or_default();
        pairs.clear();
        pairs
    }

    /// Gives a pair vector back.
    pub(crate) fn give_pairs(&self, pairs: Vec<[u32; 2]>) {
        self.pairs.lock().push(pairs);
    }
}

/// Boxes (with ids) that one job wrote and others read; returns its
/// storage to the pool when dropped.
pub(crate) struct Buffer {
    pub(crate) storage: Storage,
    pool: Arc<BufferPool>,
}

impl fmt::Debug for Buffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Buffer").field("len", &self.storage.ids.len()).finish_non_exhaustive()
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let storage = std::mem::take(&mut self.storage);
        self.pool.storage.lock().push(storage);
    }
}

/// A contiguous run of boxes, all or part of a node: a slice of the input
/// (ids are positions) or of a buffer (ids stored beside the boxes).
#[derive(Clone, Debug)]
pub(crate) enum Part {
    Input(Arc<Vec<Aabb>>, Range<usize>),
    Buffer(Arc<Buffer>, Range<usize>),
}

impl Part {
    /// The boxes of the run.
    pub(crate) fn boxes(&self) -> &[Aabb] {
        match self {
            Part::Input(input, r) => &input[r.clone()],
            Part::Buffer(buffer, r) => &buffer.storage.boxes[r.clone()],
        }
    }

    /// Calls `visit(box, id)` for every box of the run, in order.
    #[inline]
    pub(crate) fn for_each(&self, mut visit: impl FnMut(&Aabb, u32)) {
        match self {
            Part::Input(input, r) => {
                for (i, b) in input[r.clone()].iter().enumerate() {
                    visit(b, (r.start + i) as u32);
                }
            }
            Part::Buffer(buffer, r) => {
                let s = &buffer.storage;
                for (b, &id) in s.boxes[r.clone()].iter().zip(&s.ids[r.clone()]) {
                    visit(b, id);
                }
            }
        }
    }

    /// Appends the ids of the run to `ids`.
    pub(crate) fn extend_ids(&self, ids: &mut Vec<u32>) {
        match self {
            Part::Input(_, r) => ids.extend(r.start as u32..r.end as u32),
            Part::Buffer(buffer, r) => ids.extend_from_slice(&buffer.storage.ids[r.clone()]),
        }
    }
}
