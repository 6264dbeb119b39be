//! Neighbor lists filled on all cores: the structures search slot ranges
//! independently, so the jobs fill chunks of rows, each written into the
//! answer in slot order: straight there once the chunks before it are
//! placed, through a buffer until then.

use crate::block::{MAX_BLOCK, MAX_CANDIDATES};
use crate::cross::{check_queries, neighbors_of_range};
use crate::{NeighborLists, NeighborSearch, PointError};
use broadphase_jobs::{JobError, JobSystem};
use core::sync::atomic::{AtomicUsize, Ordering};
use glam::Vec3;
use parking_lot::{Condvar, Mutex};

/// Sorted-order CSR neighbor lists of a built neighbor structure, filled by
/// the job system.
///
/// The slots are cut into chunks of 4,096. The job holding the first
/// chunk not yet placed writes its rows straight into the answer; the
/// others fill theirs into buffers kept here across frames, and move them
/// into the answer as soon as the chunks before them are placed (while the
/// buffer is still in cache). The result equals
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
    /// The rows in sorted order before a caller-order fill moves them.
    sorted: NeighborLists,
}

/// Rows per chunk: a chunk's lists (about 500 KB at 30 neighbors a row)
/// stay in the filling core's cache until they are placed.
const ROWS_PER_CHUNK: usize = 4096;

/// Rows a job fills before it checks again whether its chunk's rows can
/// go straight into the answer: an eighth of a chunk, so that the walk
/// restarts (and cuts a block of particles short) rarely.
const ROWS_PER_PIECE: usize = ROWS_PER_CHUNK / 8;

/// The most entries a block walk reserves past its last row (a block of
/// particles times its most candidates): room kept past the answer.
const HEADROOM: usize = MAX_BLOCK * MAX_CANDIDATES;

/// Chunk buffers per thread: a job runs up to this many chunks ahead of
/// the first one not yet placed before it waits for a free buffer.
const BUFFERS_PER_THREAD: usize = 4;

/// How [`ParallelNeighborLists::fill_chunks`] writes a chunk's rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Writing {
    /// In pieces, each appended after the rows before it: straight into
    /// the answer once the chunks before are placed.
    InPlace,
    /// In one call per chunk, into the chunk's buffer.
    WholeChunks,
}

/// The fill's progress, shared by its jobs: which chunks of the ring are
/// filled, and how far `out` is placed.
struct Placing<'a> {
    /// The answer; taken, while it writes, by the job filling chunk
    /// [`next`](Self::next) straight into it.
    out: Option<&'a mut NeighborLists>,
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

/// Whether `rows` rows fill on the calling thread alone: one chunk at
/// most, or a single thread.
fn one_chunk_or_thread(jobs: &JobSystem, rows: usize) -> bool {
    rows <= ROWS_PER_CHUNK || jobs.threads() == 1
}

/// Waits until chunk `chunk`'s ring buffer is free: once the chunk a ring
/// before it is placed. Returns `false` if the fill failed meanwhile.
fn wait_for_buffer(
    placing: &Mutex<Placing<'_>>,
    buffer_free: &Condvar,
    chunk: usize,
    ring_len: usize,
) -> bool {
    let mut placing = placing.lock();
    while placing.next + ring_len <= chunk && !placing.failed {
        placing.waiting += 1;
        buffer_free.wait(&mut placing);
        placing.waiting -= 1;
    }
    !placing.failed
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
    /// their ring buffers.
    fn place_ready(&mut self, ring: &[Mutex<NeighborLists>]) {
        loop {
            let slot = self.next % ring.len();
            if self.filled & (1 << slot) == 0 {
                return;
            }
            // Chunk `next` is filled, so no job is writing it into `out`.
            let out = self.out.as_deref_mut().expect("the answer is back once its chunk is done");
            out.append_rows_streaming(&ring[slot].lock());
            self.filled &= !(1 << slot);
            self.next += 1;
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
        if one_chunk_or_thread(jobs, len) {
            structure.sorted_neighbor_lists(0..len, out);
            return Ok(());
        }
        self.fill_chunks(jobs, len, out, Writing::InPlace, |rows, lists| {
            structure.append_sorted_neighbor_lists(rows, lists);
        })
    }

    /// [`NeighborSearch::neighbor_lists`] on `jobs`: replaces `out` with
    /// every particle's row in caller order, entries the caller's
    /// indices, exactly as the one-thread call gives them. The rows are
    /// filled in sorted order as [`fill`](Self::fill) fills them (their
    /// entries read out as caller indices), then moved into caller order
    /// by one job per range of rows.
    ///
    /// # Errors
    /// [`JobError`] if a job panicked; `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch, ParallelNeighborLists};
    /// use glam::Vec3;
    /// let points: Vec<Vec3> = (0..20_000).map(|i| Vec3::new((i * 7919 % 20_000) as f32 * 0.01, 0.0, 0.0)).collect();
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&points, 0.015)?;
    /// let (mut parallel, mut lists, mut single) =
    ///     (ParallelNeighborLists::default(), NeighborLists::default(), NeighborLists::default());
    /// parallel.fill_caller_order(&JobSystem::new(2), &grid, &mut lists)?;
    /// grid.neighbor_lists(&mut single);
    /// assert_eq!((lists.offsets(), lists.indices()), (single.offsets(), single.indices()));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fill_caller_order<S: NeighborSearch + Sync>(
        &mut self,
        jobs: &JobSystem,
        structure: &S,
        out: &mut NeighborLists,
    ) -> Result<(), JobError> {
        let len = structure.len();
        if one_chunk_or_thread(jobs, len) {
            structure.neighbor_lists(out);
            return Ok(());
        }
        let mut sorted = core::mem::take(&mut self.sorted);
        let filled = self.fill_chunks(jobs, len, &mut sorted, Writing::InPlace, |rows, lists| {
            structure.append_caller_entry_rows(rows, lists);
        });
        let moved =
            filled.and_then(|()| out.move_rows_from(jobs, &sorted, structure.sorted_order()));
        self.sorted = sorted;
        if moved.is_err() {
            out.clear();
        }
        moved
    }

    /// The ring of buffers for `jobs`: [`BUFFERS_PER_THREAD`] a thread, at
    /// most 64 (one bit of `Placing::filled` each); and whether it was
    /// just made (the first fill, or a new thread count).
    fn ring_for(&mut self, jobs: &JobSystem) -> (&[Mutex<NeighborLists>], bool) {
        let ring_len = (jobs.threads() * BUFFERS_PER_THREAD).min(u64::BITS as usize);
        let made = self.ring.len() != ring_len;
        if made {
            self.ring.resize_with(ring_len, Mutex::default);
        }
        (&self.ring, made)
    }

    /// Replaces `out` with the lists of `rows` rows, equal to one fill of
    /// all the rows in turn: `fill(rows, lists)` writes the lists of those
    /// rows after the rows `lists` holds ([`Writing::InPlace`]), or into
    /// `lists` emptied, which it may replace ([`Writing::WholeChunks`]).
    ///
    /// The rows are cut into chunks of [`ROWS_PER_CHUNK`]; each job claims
    /// the next chunk and fills it into its ring buffer, which stays in its
    /// core's cache, and a chunk is appended to `out` as soon as every
    /// chunk before it is, by whichever job fills or places the one before
    /// it. The lists thus reach memory once: parts joined at the end would
    /// be written, read and written again (at a million particles, 120 MB
    /// each time). A job that runs a whole ring ahead of the first chunk
    /// not yet placed waits for that buffer.
    ///
    /// In place, each chunk is filled in pieces of [`ROWS_PER_PIECE`]. The
    /// job holding the first chunk not yet placed (the *frontier*) knows
    /// where its rows start, so it takes `out` and appends its pieces there
    /// directly; every other job appends its pieces to its ring buffer.
    /// Before each piece a job checks whether its chunk has become the
    /// frontier: if so it moves what it buffered into `out` (still in its
    /// cache) and goes on directly. On two threads about half the rows are
    /// written straight into place; copying all of them (120 MB at a
    /// million particles) cost a fifth of the fill. Every move into `out`
    /// writes around the cache ([`broadphase_storage::copy_streaming`]):
    /// with ordinary stores each line of the answer was read before it was
    /// written, and the moves took a tenth of the two threads' time.
    fn fill_chunks(
        &mut self,
        jobs: &JobSystem,
        rows: usize,
        out: &mut NeighborLists,
        writing: Writing,
        fill: impl Fn(core::ops::Range<usize>, &mut NeighborLists) + Sync,
    ) -> Result<(), JobError> {
        let chunks = rows.div_ceil(ROWS_PER_CHUNK);
        out.clear();
        out.offsets.push(0);
        // A new ring fills every chunk through its buffer once, so each
        // buffer grows to the most its chunks need; later fills write some
        // rows in place and never need more for the same particles.
        let (ring, cold) = self.ring_for(jobs);
        let ring_len = ring.len();
        let (piece_rows, in_place) = match writing {
            Writing::InPlace => (ROWS_PER_PIECE, !cold),
            Writing::WholeChunks => (ROWS_PER_CHUNK, false),
        };
        let placing =
            Mutex::new(Placing { out: Some(out), next: 0, filled: 0, waiting: 0, failed: false });
        // `placing.next`, read without the lock between pieces: it only
        // grows, and reaches a chunk only while that chunk's job runs.
        let frontier = AtomicUsize::new(0);
        let buffer_free = Condvar::new();
        let claimed = AtomicUsize::new(0);
        let filled = jobs.for_each(jobs.threads(), 1, |_, _| {
            loop {
                let chunk = claimed.fetch_add(1, Ordering::Relaxed);
                if chunk >= chunks || !wait_for_buffer(&placing, &buffer_free, chunk, ring_len) {
                    return;
                }
                let slot = chunk % ring_len;
                let start = chunk * ROWS_PER_CHUNK;
                let end = (start + ROWS_PER_CHUNK).min(rows);
                let unwinding = PanicFlag { placing: &placing, buffer_free: &buffer_free };
                let mut buffer = ring[slot].lock();
                buffer.clear();
                buffer.offsets.push(0);
                let mut direct: Option<&mut NeighborLists> = None;
                for piece in (start..end).step_by(piece_rows) {
                    if in_place && direct.is_none() && frontier.load(Ordering::Acquire) == chunk {
                        let taken = placing.lock().out.take();
                        let out = taken.expect("only the frontier chunk's job takes the answer");
                        out.append_rows_streaming(&buffer);
                        direct = Some(out);
                    }
                    let piece = piece..(piece + piece_rows).min(end);
                    match direct.as_deref_mut() {
                        Some(out) => fill(piece, out),
                        None => fill(piece, &mut buffer),
                    }
                }
                drop(buffer);
                core::mem::forget(unwinding);
                let mut placing = placing.lock();
                match direct {
                    Some(out) => {
                        placing.out = Some(out);
                        placing.next = chunk + 1;
                    }
                    None => placing.filled |= 1 << slot,
                }
                placing.place_ready(ring);
                frontier.store(placing.next, Ordering::Release);
                if placing.waiting > 0 {
                    buffer_free.notify_all();
                }
            }
        });
        // A row written in place reserves room past it, which a buffered
        // chunk's copy never needs: keep that room past the answer's end,
        // so that whichever chunk goes in place last next time, a warm
        // fill does not grow it.
        if let Some(out) = placing.into_inner().out.filter(|_| writing == Writing::InPlace) {
            let room = out.total() + HEADROOM;
            NeighborLists::reserve_entries(&mut out.indices, room);
        }
        filled
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
        // A chunk's queries are sorted by cell as a whole: one call each.
        let writing = Writing::WholeChunks;
        self.fill_chunks(jobs, queries.len(), out, writing, |rows, part| {
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
