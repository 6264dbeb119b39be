//! Many queries against one kept grid in one call, split over a job
//! system: every thread asks the same read-only grid, each job writes its
//! own piece of the caller's output, and the results come back in input
//! order.

mod shapes;

pub use shapes::BatchHits;

use broadphase_jobs::{JobError, JobSystem};
use broadphase_kernel::AdaptiveGrid;
use broadphase_storage::{InputError, QueryError, Ray};
use core::fmt;

/// A ray's first hit: the box and where the ray enters it.
type Hit = Option<(u32, f32)>;

/// Queries per job at least: enough to outweigh handing the job out.
pub(super) const CHUNK: usize = 256;

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
    Input {
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
            BatchError::Input { index, error } => write!(f, "query box {index}: {error}"),
            BatchError::Job(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for BatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BatchError::Query { error, .. } => Some(error),
            BatchError::Input { error, .. } => Some(error),
            BatchError::Job(e) => Some(e),
        }
    }
}

impl From<JobError> for BatchError {
    fn from(e: JobError) -> Self {
        BatchError::Job(e)
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
    let result = jobs.for_each_chunk_mut(out, CHUNK, |range, hits| {
        crate::profile::zone!("batch: cast rays");
        for (hit, ray) in hits.iter_mut().zip(&rays[range]) {
            // Checked before the jobs started: a refusal cannot happen.
            *hit = grid.cast_ray(ray).unwrap_or(None);
        }
    });
    if let Err(e) = result {
        out.clear();
        return Err(e.into());
    }
    Ok(())
}
