//! Many queries against one kept grid in one call, split over a job
//! system: every thread asks the same read-only grid, each job writes its
//! own piece of the caller's output, and the results come back in input
//! order.

mod shapes;

pub use shapes::BatchHits;

use broadphase_jobs::{IndexedJob, JobContext, JobError, JobSystem};
use broadphase_kernel::AdaptiveGrid;
use broadphase_storage::{InputError, QueryError, Ray};
use core::fmt;
use parking_lot::Mutex;

/// A ray's first hit: the box and where the ray enters it.
type Hit = Option<(u32, f32)>;

/// One job's piece of the output.
type Piece<'a> = Mutex<&'a mut [Hit]>;

/// Queries per job: enough to outweigh handing the job out.
pub(super) const CHUNK: usize = 256;

/// Most pieces the output is cut into at once.
pub(super) const MAX_PIECES: usize = 64;

/// Why a batch of queries was refused.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BatchError {
    /// A query breaks its contract; `index` is its position in the batch
    /// (the first such). Nothing was answered.
    Query {
        /// Its position in the batch.
        index: usize,
        /// What is wrong with it.
        error: QueryError,
    },
    /// A query box breaks the box contract; `index` is its position in the
    /// batch (the first such). Nothing was answered.
    Box {
        /// Its position in the batch.
        index: usize,
        /// What is wrong with it (its own `index` is 0).
        error: InputError,
    },
    /// A job panicked (a bug); the output is empty.
    Job(JobError),
}

impl fmt::Display for BatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BatchError::Query { index, error } => write!(f, "query {index}: {error}"),
            BatchError::Box { index, error } => write!(f, "query box {index}: {error}"),
            BatchError::Job(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for BatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BatchError::Query { error, .. } => Some(error),
            BatchError::Box { error, .. } => Some(error),
            BatchError::Job(e) => Some(e),
        }
    }
}

impl From<JobError> for BatchError {
    fn from(e: JobError) -> Self {
        BatchError::Job(e)
    }
}

/// One job: a run of rays and the piece of the output they fill.
struct RayPass<'a> {
    grid: &'a AdaptiveGrid,
    rays: &'a [Ray],
    pieces: &'a [Piece<'a>],
    piece_len: usize,
}

impl<'scope> IndexedJob<'scope> for RayPass<'_> {
    fn run(&'scope self, _ctx: &mut JobContext<'_, 'scope>, piece: usize) {
        crate::profile::zone!("batch: cast rays");
        let start = piece * self.piece_len;
        let mut out = self.pieces[piece].lock();
        let rays = &self.rays[start..start + out.len()];
        for (hit, ray) in out.iter_mut().zip(rays) {
            // Checked before the jobs started: a refusal cannot happen.
            *hit = self.grid.cast_ray(ray).unwrap_or(None);
        }
    }
}

/// Casts every ray of `rays` against `grid` (built with
/// [`AdaptiveGrid::build`]) on the threads of `jobs`: `out[i]` becomes ray
/// `i`'s first hit, as [`AdaptiveGrid::cast_ray`] gives it. Every ray is
/// checked first; one that breaks its contract refuses the whole batch.
///
/// # Errors
/// [`BatchError::Query`] naming the first bad ray, or
/// [`BatchError::Job`] if a job panicked; `out` is then empty.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_kernel::{AdaptiveGrid, Aabb};
/// use broadphase_partition::cast_rays;
/// use broadphase_storage::Ray;
/// use glam::Vec3;
/// let boxes: Vec<Aabb> =
///     (0..100).map(|i| Aabb::new(Vec3::new(i as f32, 0.0, 0.0), Vec3::new(i as f32 + 0.5, 1.0, 1.0))).collect();
/// let mut grid = AdaptiveGrid::default();
/// grid.build(&boxes)?;
/// // Rays from x = 0, 0.25, 0.5, ... along +x, 0.2 long.
/// let rays: Vec<Ray> = (0..400).map(|i| Ray::new(Vec3::new(i as f32 * 0.25, 0.5, 0.5), Vec3::X, 0.2)).collect();
/// let mut hits = Vec::new();
/// cast_rays(&JobSystem::new(2), &grid, &rays, &mut hits)?;
/// assert_eq!(hits[0], Some((0, 0.0))); // starts in box 0
/// assert_eq!(hits[3], None); // from 0.75 to 0.95: between boxes 0 and 1
/// assert_eq!(hits[396], Some((99, 0.0))); // starts on box 99's face
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn cast_rays(
    jobs: &JobSystem,
    grid: &AdaptiveGrid,
    rays: &[Ray],
    out: &mut Vec<Hit>,
) -> Result<(), BatchError> {
    out.clear();
    if let Some((index, error)) =
        rays.iter().enumerate().find_map(|(i, ray)| ray.validate().err().map(|e| (i, e)))
    {
        return Err(BatchError::Query { index, error });
    }
    out.resize(rays.len(), None);
    if rays.len() <= CHUNK || jobs.threads() == 1 {
        for (hit, ray) in out.iter_mut().zip(rays) {
            *hit = grid.cast_ray(ray).unwrap_or(None);
        }
        return Ok(());
    }
    // Pieces of at least `CHUNK` rays, at most `MAX_PIECES` of them, a few
    // per thread so that a slow piece does not hold the others up.
    let pieces = rays.len().div_ceil(CHUNK).min(MAX_PIECES).min(4 * jobs.threads());
    let piece_len = rays.len().div_ceil(pieces);
    let result = {
        let mut cells: [Piece<'_>; MAX_PIECES] = core::array::from_fn(|_| Mutex::new(&mut [][..]));
        let mut used = 0;
        for (cell, piece) in cells.iter_mut().zip(out.chunks_mut(piece_len)) {
            *cell.get_mut() = piece;
            used += 1;
        }
        let pass = RayPass { grid, rays, pieces: &cells[..used], piece_len };
        jobs.reserve_queue(used);
        jobs.scope(|s| (0..used).for_each(|piece| s.spawn_indexed(&pass, piece)))
    };
    if let Err(e) = result {
        out.clear();
        return Err(e.into());
    }
    Ok(())
}
