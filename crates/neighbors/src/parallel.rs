//! Neighbor lists filled on all cores: the structures search slot ranges
//! independently, so the job system fills one range per job and one pass
//! joins them in slot order.

use crate::cross::{check_queries, neighbors_of_range};
use crate::{NeighborLists, NeighborSearch, PointError};
use broadphase_jobs::{JobError, JobSystem};
use glam::Vec3;

/// Sorted-order CSR neighbor lists of a built neighbor structure, filled by
/// the job system.
///
/// The slots are cut into a few ranges per thread; each job fills its
/// range's lists into a buffer kept here across frames, and the ranges are
/// joined in slot order, so the result equals
/// `structure.sorted_neighbor_lists(0..len, ..)` exactly, for any thread
/// count. The build is the caller's: on the calling thread, or for the
/// grid on the job system too
/// ([`CountingSortGrid::build_parallel`](crate::CountingSortGrid::build_parallel)).
///
/// The jobs are a parallel loop ([`JobSystem::for_each_mut`], one range's
/// buffer each): they borrow the structure for the call, so it stays the
/// caller's to rebuild between frames, and a warm fill allocates nothing.
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
    /// One buffer per range, reused across frames; range `i`'s job fills
    /// buffer `i`.
    parts: Vec<NeighborLists>,
}

/// Ranges per thread: a few, so a dense range does not hold up the frame.
const RANGES_PER_THREAD: usize = 4;

/// Where one part goes in the joined lists: its rows' offsets and its
/// entries, and the entries before it.
type Destination<'a> = (&'a mut [usize], &'a mut [u32], usize);

/// Most parts joined on the job system; more are joined on the calling
/// thread (their destinations live in an array on the stack).
const MAX_JOINED: usize = 64;

/// Replaces `out` with the parts' rows one after the other. The copy (the
/// whole answer, 120 MB at a million particles) runs on the job system:
/// on one thread it was a sixth of the fill.
fn join(
    jobs: &JobSystem,
    parts: &[NeighborLists],
    out: &mut NeighborLists,
) -> Result<(), JobError> {
    out.clear();
    if parts.len() > MAX_JOINED {
        for part in parts {
            out.append_rows(part);
        }
        return Ok(());
    }
    let rows: usize = parts.iter().map(NeighborLists::len).sum();
    let total: usize = parts.iter().map(NeighborLists::total).sum();
    out.offsets.resize(rows + 1, 0);
    out.offsets[0] = 0;
    if out.indices.len() < total {
        out.indices.resize(total, 0);
    }
    let mut destinations: [Destination<'_>; MAX_JOINED] =
        std::array::from_fn(|_| (&mut [][..], &mut [][..], 0));
    let (mut offsets, mut indices) = (&mut out.offsets[1..], &mut out.indices[..total]);
    let mut base = 0;
    for (part, destination) in parts.iter().zip(&mut destinations) {
        let (these_offsets, rest_offsets) = offsets.split_at_mut(part.len());
        let (these_indices, rest_indices) = indices.split_at_mut(part.total());
        *destination = (these_offsets, these_indices, base);
        base += part.total();
        (offsets, indices) = (rest_offsets, rest_indices);
    }
    jobs.for_each_mut(&mut destinations[..parts.len()], |index, (offsets, indices, base)| {
        let part = &parts[index];
        for (to, &from) in offsets.iter_mut().zip(&part.offsets[1..]) {
            *to = *base + from;
        }
        indices.copy_from_slice(part.indices());
    })
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
        if len == 0 {
            structure.sorted_neighbor_lists(0..0, out);
            return Ok(());
        }
        let step = len.div_ceil(jobs.threads() * RANGES_PER_THREAD).max(1);
        let ranges = len.div_ceil(step);
        if self.parts.len() < ranges {
            self.parts.resize_with(ranges, NeighborLists::default);
        }
        jobs.for_each_mut(&mut self.parts[..ranges], |range, part| {
            let from = range * step;
            structure.sorted_neighbor_lists(from..(from + step).min(len), part);
        })?;
        join(jobs, &self.parts[..ranges], out)
    }

    /// [`neighbors_of`](crate::neighbors_of) on `jobs`: the queries are cut
    /// into a few ranges per thread, each answered by a scoped job into a
    /// buffer kept here, and the rows joined in query order, so `out`
    /// equals the one-thread answer exactly, for any thread count.
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
        let step = queries.len().div_ceil(jobs.threads() * RANGES_PER_THREAD).max(1);
        let ranges = queries.len().div_ceil(step);
        if self.parts.len() < ranges {
            self.parts.resize_with(ranges, NeighborLists::default);
        }
        jobs.for_each_mut(&mut self.parts[..ranges], |range, part| {
            let queries = &queries[range * step..((range + 1) * step).min(queries.len())];
            neighbors_of_range(structure, queries, radius, part);
        })
        .map_err(FillError::Job)?;
        join(jobs, &self.parts[..ranges], out).map_err(FillError::Job)
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
