//! Pair buffers and neighbor structures kept between calls.
//!
//! A million points give some 15 million pairs: 117 MB that a fresh
//! buffer pays for page by page as it is first written (in a VM, about as
//! long as finding the pairs). A pair array handed to Python owns its
//! buffer through a [`PooledPairs`]; when Python frees the array, the
//! buffer comes back here, and the next call writes into memory that is
//! already mapped. A loop that drops each frame's pairs before asking for
//! the next (the usual game or simulation step) reuses one buffer.
//!
//! The neighbor searches' grids and hashes are kept the same way: a
//! structure rebuilt over warm buffers allocates nothing. So are the
//! float32 copies of the input points (12 MB at a million points, whose
//! first writes took about 4 ms a call), and the neighbor lists that
//! `neighbor_lists` copies out of (at a million points, mapping their
//! 250 MB anew took a third of the call).
//!
//! The pool keeps at most [`KEPT`] pair buffers and [`KEPT_STRUCTURES`]
//! structures and point buffers of each kind; `release_pooled_memory()`
//! empties it.

use broadphase::glam::Vec3;
use broadphase::neighbors::{CountingSortGrid, NeighborLists, ParallelNeighborLists, SpatialHash};
use numpy::PyArray2;
use numpy::ndarray::ArrayView2;
use pyo3::prelude::*;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Most buffers kept: a result and the chunk buffers a parallel search
/// fills.
const KEPT: usize = 16;

/// Freed pair buffers, emptied, ready to be written again.
static FREE: Mutex<Vec<Vec<[u32; 2]>>> = Mutex::new(Vec::new());

/// Most structures of one kind kept: one per Python thread searching at
/// once, for a few threads.
const KEPT_STRUCTURES: usize = 2;

/// Grids and hashes between calls.
static GRIDS: Mutex<Vec<CountingSortGrid>> = Mutex::new(Vec::new());
static HASHES: Mutex<Vec<SpatialHash>> = Mutex::new(Vec::new());

/// Neighbor lists (and a parallel fill's chunk buffers) between calls:
/// the rows are copied out into the arrays handed to Python, so the
/// lists' own buffers (some 250 MB at a million points, rows and their
/// scratch) need not be mapped anew each call.
static LISTS: Mutex<Vec<(NeighborLists, ParallelNeighborLists)>> = Mutex::new(Vec::new());

/// Point buffers between calls, emptied.
static POINTS: Mutex<Vec<Vec<Vec3>>> = Mutex::new(Vec::new());

/// An empty point buffer with room for `n` points: the smallest kept one
/// that holds them, else the largest, else a new one.
pub(crate) fn take_points(n: usize) -> Vec<Vec3> {
    let mut kept = POINTS.lock().unwrap_or_else(PoisonError::into_inner);
    let chosen = fitting(&kept, n);
    let mut points = chosen.map(|i| kept.swap_remove(i)).unwrap_or_default();
    drop(kept);
    points.reserve(n);
    points
}

/// Keeps `points`' buffer for a later call (at most [`KEPT_STRUCTURES`]).
pub(crate) fn give_back_points(mut points: Vec<Vec3>) {
    points.clear();
    let mut kept = POINTS.lock().unwrap_or_else(PoisonError::into_inner);
    if kept.len() < KEPT_STRUCTURES {
        kept.push(points);
    }
}

/// `f` on a structure from `pool` (or a new one), which then goes back.
/// A structure whose call failed or panicked is not kept.
fn with_pooled<S: Default, T, E>(
    pool: &Mutex<Vec<S>>,
    f: impl FnOnce(&mut S) -> Result<T, E>,
) -> Result<T, E> {
    let taken = pool.lock().unwrap_or_else(PoisonError::into_inner).pop();
    let mut structure = taken.unwrap_or_default();
    let result = f(&mut structure)?;
    let mut pool = pool.lock().unwrap_or_else(PoisonError::into_inner);
    if pool.len() < KEPT_STRUCTURES {
        pool.push(structure);
    }
    Ok(result)
}

/// `f` on a counting-sort grid kept between calls.
pub(crate) fn with_grid<T, E>(
    f: impl FnOnce(&mut CountingSortGrid) -> Result<T, E>,
) -> Result<T, E> {
    with_pooled(&GRIDS, f)
}

/// `f` on neighbor lists and a parallel fill kept between calls.
pub(crate) fn with_lists<T, E>(
    f: impl FnOnce(&mut (NeighborLists, ParallelNeighborLists)) -> Result<T, E>,
) -> Result<T, E> {
    with_pooled(&LISTS, f)
}

/// `f` on a spatial hash kept between calls.
pub(crate) fn with_hash<T, E>(f: impl FnOnce(&mut SpatialHash) -> Result<T, E>) -> Result<T, E> {
    with_pooled(&HASHES, f)
}

/// The pool (a panic while it was held left nothing half done in it).
fn free() -> MutexGuard<'static, Vec<Vec<[u32; 2]>>> {
    FREE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// An empty pair buffer: the pool's buffer at the index `choose` picks
/// from the pool (if any), or a new one.
fn take_chosen(choose: impl FnOnce(&[Vec<[u32; 2]>]) -> Option<usize>) -> Vec<[u32; 2]> {
    let mut free = free();
    let chosen = choose(&free);
    chosen.map(|i| free.swap_remove(i)).unwrap_or_default()
}

/// The index of the largest buffer of `buffers`.
fn largest<T>(buffers: &[Vec<T>]) -> Option<usize> {
    (0..buffers.len()).max_by_key(|&i| buffers[i].capacity())
}

/// The index of the smallest buffer of `buffers`.
fn smallest<T>(buffers: &[Vec<T>]) -> Option<usize> {
    (0..buffers.len()).min_by_key(|&i| buffers[i].capacity())
}

/// The index of the smallest buffer of `buffers` that holds `len` items,
/// else of the largest.
fn fitting<T>(buffers: &[Vec<T>], len: usize) -> Option<usize> {
    let fits = (0..buffers.len()).filter(|&i| buffers[i].capacity() >= len);
    fits.min_by_key(|&i| buffers[i].capacity()).or_else(|| largest(buffers))
}

/// An empty pair buffer for a whole answer: the pool's largest, or a new
/// one.
pub(crate) fn take() -> Vec<[u32; 2]> {
    take_chosen(largest)
}

/// An empty pair buffer for one chunk of a parallel search: the pool's
/// smallest, which leaves the large ones to whole answers.
pub(crate) fn take_piece() -> Vec<[u32; 2]> {
    take_chosen(smallest)
}

/// An empty pair buffer for `pairs` pairs: the pool's smallest that holds
/// them, else its largest, else a new one.
pub(crate) fn take_for(pairs: usize) -> Vec<[u32; 2]> {
    let mut buffer = take_chosen(|buffers| fitting(buffers, pairs));
    broadphase::storage::reserve_huge(&mut buffer, pairs);
    buffer
}

/// Gives `pairs`' memory back to the pool (dropped if the pool is full
/// and it is smaller than every buffer there).
pub(crate) fn give_back(mut pairs: Vec<[u32; 2]>) {
    if pairs.capacity() == 0 {
        return;
    }
    pairs.clear();
    let mut free = free();
    if free.len() < KEPT {
        free.push(pairs);
    } else if let Some(i) = smallest(&free)
        && free[i].capacity() < pairs.capacity()
    {
        free[i] = pairs;
    }
}

/// Frees every pair buffer, neighbor structure and point buffer kept for
/// reuse between calls; returns the pair buffers' bytes freed.
///
/// Pair arrays returned earlier and still alive are not affected: their
/// memory comes back to the pool when Python frees them.
#[pyfunction]
pub(crate) fn release_pooled_memory() -> usize {
    GRIDS.lock().unwrap_or_else(PoisonError::into_inner).clear();
    HASHES.lock().unwrap_or_else(PoisonError::into_inner).clear();
    LISTS.lock().unwrap_or_else(PoisonError::into_inner).clear();
    POINTS.lock().unwrap_or_else(PoisonError::into_inner).clear();
    let freed = std::mem::take(&mut *free());
    freed.iter().map(|pairs| pairs.capacity() * size_of::<[u32; 2]>()).sum()
}

/// The owner of a pair array's memory: gives it back to the pool when
/// Python frees the array.
#[pyclass(frozen)]
pub(crate) struct PooledPairs {
    pairs: Vec<[u32; 2]>,
}

impl Drop for PooledPairs {
    fn drop(&mut self) {
        give_back(std::mem::take(&mut self.pairs));
    }
}

/// Pairs as an `(m, 2)` uint32 array over `pairs`' own memory, which goes
/// back to the pool when the array is freed.
pub(crate) fn pairs_array(
    py: Python<'_>,
    pairs: Vec<[u32; 2]>,
) -> PyResult<Bound<'_, PyArray2<u32>>> {
    let owner = Bound::new(py, PooledPairs { pairs })?;
    let flat = owner.get().pairs.as_flattened();
    let view = ArrayView2::from_shape((flat.len() / 2, 2), flat).map_err(crate::threads::failed)?;
    // SAFETY: the array reads `owner`'s buffer and keeps `owner` alive as
    // its base. `PooledPairs` is frozen and its buffer is neither changed
    // nor moved until it is dropped, which Python does only after the
    // array and every view of it are gone.
    let array = unsafe { PyArray2::borrow_from_array(&view, owner.clone().into_any()) };
    Ok(array)
}
