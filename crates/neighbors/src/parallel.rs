//! Neighbor lists filled on all cores: the structures search slot ranges
//! independently, so the jobs fill chunks of rows, each appended to the
//! answer in slot order as soon as the chunks before it are.

use crate::cross::{check_queries, neighbors_of_range};
use crate::{NeighborLists, NeighborSearch, PointError};
use broadphase_jobs::{JobError, JobSystem};
use core::sync::atomic::{AtomicUsize, Ordering};
use glam::Vec3;
use parking_lot::{Condvar, Mutex};

/// Sorted-order CSR neighbor lists of a built neighbor structure, filled by
/// the job system.
///
/// The slots are cut into chunks of 4,096; each job fills the next chunk's
/// lists into a buffer kept here across frames, and the chunks are
/// appended to the answer in slot order as soon as the chunks before them
/// are (while the buffer is still in cache), so the result equals
/// `structure.sorted_neighbor_lists(0..len, ..)` exactly, for any thread
/// count. The build is the caller's: on the calling thread, or for the
/// grid on the job system too
/// ([`CountingSortGrid::build_parallel`](crate::CountingSortGrid::build_parallel)).
///
/// The jobs are one per thread ([`JobSystem::for_each`]), each claiming
/// chunks until none is left, with four buffers per thread in a ring:
/// they borrow the structure for the call, so it stays the caller's to
/// rebuild between frames, and a warm fill allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_neighbors::{
///     CountingSortGrid, NeighborLists, NeighborSearch, ParallelNeighborLists,
/// };
/// use glam::Vec3;
///
/// let points: Vec<Vec3> = (0..1000).map(|i| Vec3::new((i % 10) as f32, (i / 10 % 10) as f32, (i / 100) as f32)).collect();
/// let mut grid = CountingSortGrid::default();
/// let jobs = JobSystem::new(2);
/// let mut parallel = ParallelNeighborLists::default();
/// let (mut lists, mut single) = (NeighborLists::default(), NeighborLists::default());
/// for radius in [1.0, 1.5] {
///     grid.build(&points, radius)?; // the grid is borrowed by `fill` only
///     parallel.fill(&jobs, &grid, &mut lists)?;
///
///     grid.sorted_neighbor_lists(0..grid.len(), &mut single);
///     assert_eq!(lists.offsets(), single.offsets());
///     assert_eq!(lists.indices(), single.indices());
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct ParallelNeighborLists {
    /// The ring of chunk buffers, reused across frames: chunk `c` is
    /// filled into buffer `c % len`, so each buffer holds the same chunks
    /// every frame and, once warm, never grows.
    ring: Vec<Mutex<NeighborLists>>,
}

/// Rows per chunk: a chunk's lists (about 500 KB at 30 neighbors a row)
/// stay in the filling core's cache until they are placed.
const ROWS_PER_CHUNK: usize = 4096;

/// Chunk buffers per thread: a job runs up to this many chunks ahead of
/// the first one not yet placed before it waits for a free buffer.
const BUFFERS_PER_THREAD: usize = 4;

/// The fill's progress, shared by its jobs: which chunks of the ring are
/// filled, and how far `out` is placed.
struct Placing<'a> {
    out: &'a mut NeighborLists,
    /// The first chunk not yet placed.
    next: usize,
    /// Whether ring buffer `c % ring.len()` holds chunk `c`, filled and
    /// not yet placed (one bit per buffer).
    filled: u64,
    /// Jobs waiting for a buffer to be placed.
    waiting: usize,
    /// A job panicked: its chunk will never be placed, so no job waits.
    failed: bool,
}

/// Armed around a chunk's fill: dropped only if the fill panicked, when
/// it marks the fill failed and wakes the jobs waiting for a buffer (the
/// chunk will never be placed).
struct PanicFlag<'p, 'a> {
    placing: &'p Mutex<Placing<'a>>,
    buffer_free: &'p Condvar,
}

impl Drop for PanicFlag<'_, '_> {
    fn drop(&mut self) {
        self.placing.lock().failed = true;
        self.buffer_free.notify_all();
    }
}

impl Placing<'_> {
    /// Places chunk `next` and each filled chunk that follows it, from
    /// their ring buffers; returns whether any was placed.
    fn place_ready(&mut self, ring: &[Mutex<NeighborLists>]) -> bool {
        let mut placed = false;
        loop {
            let slot = self.next % ring.len();
            if self.filled & (1 << slot) == 0 {
                return placed;
            }
            self.out.append_rows(&ring[slot].lock());
            self.filled &= !(1 << slot);
            self.next += 1;
            placed = true;
        }
    }
}

impl ParallelNeighborLists {
    /// Replaces `out` with the sorted-order neighbor lists of every slot of
    /// `structure` (see [`NeighborSearch::sorted_neighbor_lists`]), filled
    /// by scoped jobs on `jobs` that borrow `structure` until this returns.
    ///
    /// # Errors
    ///
    /// [`JobError::Panicked`] if a job panicked (`out` is then
    /// unspecified); [`JobError::WaitInsideJob`] if called from inside a
    /// job.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_neighbors::{NeighborLists, NeighborSearch, ParallelNeighborLists, SpatialHash};
    /// use glam::Vec3;
    /// let mut hash = SpatialHash::default();
    /// hash.build(&[Vec3::ZERO, Vec3::X, Vec3::Y], 1.0)?;
    /// let mut lists = NeighborLists::default();
    /// ParallelNeighborLists::default().fill(&JobSystem::new(2), &hash, &mut lists)?;
    /// assert_eq!(lists.total(), 4); // 0-1 and 0-2, each in both rows
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fill<S: NeighborSearch + Sync>(
        &mut self,
        jobs: &JobSystem,
        structure: &S,
        out: &mut NeighborLists,
    ) -> Result<(), JobError> {
        let len = structure.len();
        if len <= ROWS_PER_CHUNK || jobs.threads() == 1 {
            structure.sorted_neighbor_lists(0..len, out);
            return Ok(());
        }
        self.fill_in_chunk_order(jobs, len, out, |rows, part| {
            structure.sorted_neighbor_lists(rows, part);
        })
    }

    /// Replaces `out` with the lists of `rows` rows, a chunk of
    /// [`ROWS_PER_CHUNK`] at a time (`fill_chunk(rows, part)` replaces
    /// `part` with the lists of those rows), equal to one fill of all the
    /// rows in turn.
    ///
    /// Each job claims the next chunk and fills it into its ring buffer,
    /// which stays in its core's cache; a chunk is appended to `out` as
    /// soon as every chunk before it is, by whichever job fills or places
    /// the one before it. The lists thus reach memory once: parts joined
    /// at the end would be written, read and written again (at a million
    /// particles, 120 MB each time). A job that runs a whole ring ahead of
    /// the first chunk not yet placed waits for that buffer.
    fn fill_in_chunk_order(
        &mut self,
        jobs: &JobSystem,
        rows: usize,
        out: &mut NeighborLists,
        fill_chunk: impl Fn(core::ops::Range<usize>, &mut NeighborLists) + Sync,
    ) -> Result<(), JobError> {
        let chunks = rows.div_ceil(ROWS_PER_CHUNK);
        out.clear();
        out.offsets.push(0);
        // At most 64: one bit of `filled` per buffer.
        let ring_len = (jobs.threads() * BUFFERS_PER_THREAD).min(u64::BITS as usize);
        if self.ring.len() != ring_len {
            self.ring.resize_with(ring_len, Mutex::default);
        }
        let ring = &self.ring[..];
        let placing = Mutex::new(Placing { out, next: 0, filled: 0, waiting: 0, failed: false });
        let buffer_free = Condvar::new();
        let claimed = AtomicUsize::new(0);
        jobs.for_each(jobs.threads(), 1, |_, _| {
            loop {
                let chunk = claimed.fetch_add(1, Ordering::Relaxed);
                if chunk >= chunks {
                    return;
                }
                {
                    // The buffer is free once the chunk a ring before
                    // this one is placed.
                    let mut placing = placing.lock();
                    while placing.next + ring_len <= chunk && !placing.failed {
                        placing.waiting += 1;
                        buffer_free.wait(&mut placing);
                        placing.waiting -= 1;
                    }
                    if placing.failed {
                        return;
                    }
                }
                let slot = chunk % ring_len;
                let start = chunk * ROWS_PER_CHUNK;
                let unwinding = PanicFlag { placing: &placing, buffer_free: &buffer_free };
                fill_chunk(start..(start + ROWS_PER_CHUNK).min(rows), &mut ring[slot].lock());
                core::mem::forget(unwinding);
                let mut placing = placing.lock();
                placing.filled |= 1 << slot;
                if placing.place_ready(ring) && placing.waiting > 0 {
                    buffer_free.notify_all();
                }
            }
        })
    }

    /// [`neighbors_of`](crate::neighbors_of) on `jobs`: the queries are cut
    /// into chunks answered by scoped jobs into buffers kept here, each
    /// chunk's rows appended in query order as soon as the chunks before it
    /// are (as [`fill`](Self::fill) does), so `out` equals the one-thread
    /// answer exactly, for any thread count.
    ///
    /// # Errors
    /// [`FillError::Point`] with what `neighbors_of` would refuse (before
    /// any job runs; `out` is then empty), or [`FillError::Job`].
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch, ParallelNeighborLists, neighbors_of};
    /// use glam::Vec3;
    /// let data: Vec<Vec3> = (0..500).map(|i| Vec3::new(i as f32 * 0.1, 0.0, 0.0)).collect();
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&data, 0.25)?;
    /// let probes: Vec<Vec3> = (0..300).map(|i| Vec3::new(i as f32 * 0.17, 0.0, 0.0)).collect();
    /// let (mut parallel, mut rows, mut single) = (ParallelNeighborLists::default(), NeighborLists::default(), NeighborLists::default());
    /// parallel.fill_queries(&JobSystem::new(2), &grid, &probes, 0.25, &mut rows)?;
    /// neighbors_of(&grid, &probes, 0.25, &mut single)?;
    /// assert_eq!(rows.offsets(), single.offsets());
    /// assert_eq!(rows.indices(), single.indices());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fill_queries<S: NeighborSearch + Sync>(
        &mut self,
        jobs: &JobSystem,
        structure: &S,
        queries: &[Vec3],
        radius: f32,
        out: &mut NeighborLists,
    ) -> Result<(), FillError> {
        out.clear();
        check_queries(structure, queries, radius).map_err(FillError::Point)?;
        if queries.is_empty() {
            out.offsets.push(0);
            return Ok(());
        }
        self.fill_in_chunk_order(jobs, queries.len(), out, |rows, part| {
            neighbors_of_range(structure, &queries[rows], radius, part);
        })
        .map_err(FillError::Job)
    }
}

/// Why [`ParallelNeighborLists::fill_queries`] gave no answer.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FillError {
    /// The radius or a query point was refused (see
    /// [`neighbors_of`](crate::neighbors_of)).
    Point(PointError),
    /// A job panicked, or the call was made from inside a job.
    Job(JobError),
}

impl std::fmt::Display for FillError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FillError::Point(error) => error.fmt(f),
            FillError::Job(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for FillError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FillError::Point(error) => Some(error),
            FillError::Job(error) => Some(error),
        }
    }
}
