//! Many box, point or sphere queries in one call: each job answers a run
//! of queries into its own lists, and the lists, in input order, become
//! one CSR answer (`offsets`, `ids`).

use super::{BatchError, CHUNK};
use broadphase_jobs::JobSystem;
use broadphase_kernel::AdaptiveGrid;
use broadphase_storage::{Aabb, Sphere, validate_point};
use glam::Vec3;

/// Most pieces a batch is cut into.
const MAX_PIECES: usize = 64;

/// One job's answers: the hits of its queries, one after the other, and
/// how many each had.
#[derive(Debug, Default)]
struct Piece {
    ids: Vec<u32>,
    counts: Vec<u32>,
    scratch: Vec<u32>,
}

impl Piece {
    /// Replaces the answers with those of `queries`.
    fn answer<S: Shape>(&mut self, grid: &AdaptiveGrid, queries: &[S]) {
        let Piece { ids, counts, scratch } = self;
        ids.clear();
        counts.clear();
        for query in queries {
            query.answer(grid, scratch);
            ids.extend_from_slice(scratch);
            counts.push(scratch.len() as u32);
        }
    }
}

/// The answers of a batch of box, point or sphere queries, in CSR form:
/// the hits of query `i` are `ids()[offsets()[i]..offsets()[i + 1]]`, in
/// the grid's order for that query (the same on any thread count). The
/// buffers are kept, so a batch of the same size allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_kernel::{AdaptiveGrid, Aabb};
/// use broadphase_partition::BatchHits;
/// use glam::Vec3;
/// let boxes: Vec<Aabb> = (0..10).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 1.0))).collect();
/// let mut grid = AdaptiveGrid::default();
/// grid.build(&boxes)?;
/// let mut hits = BatchHits::default();
/// hits.query_points(&JobSystem::new(2), &grid, &[Vec3::splat(0.5), Vec3::splat(3.0), Vec3::splat(-1.0)])?;
/// assert_eq!(hits.len(), 3);
/// assert_eq!(hits.hits(0), [0]);
/// let mut on_corner = hits.hits(1).to_vec();
/// on_corner.sort();
/// assert_eq!(on_corner, [2, 3]); // the corner the two share
/// assert!(hits.hits(2).is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct BatchHits {
    offsets: Vec<usize>,
    ids: Vec<u32>,
    pieces: Vec<Piece>,
}

/// The queries a batch can hold, each with its check and its answer.
trait Shape: Sync {
    fn check(&self, index: usize) -> Result<(), BatchError>;
    fn answer(&self, grid: &AdaptiveGrid, out: &mut Vec<u32>);
}

impl Shape for Aabb {
    fn check(&self, index: usize) -> Result<(), BatchError> {
        self.validate(0).map_err(|error| BatchError::Input { index, error })
    }
    fn answer(&self, grid: &AdaptiveGrid, out: &mut Vec<u32>) {
        // Checked before the jobs started: a refusal cannot happen.
        grid.query_aabb(self, out).unwrap_or_default();
    }
}

impl Shape for Vec3 {
    fn check(&self, index: usize) -> Result<(), BatchError> {
        validate_point(*self).map_err(|error| BatchError::Query { index, error })
    }
    fn answer(&self, grid: &AdaptiveGrid, out: &mut Vec<u32>) {
        grid.query_point(*self, out).unwrap_or_default();
    }
}

impl Shape for Sphere {
    fn check(&self, index: usize) -> Result<(), BatchError> {
        self.validate().map_err(|error| BatchError::Query { index, error })
    }
    fn answer(&self, grid: &AdaptiveGrid, out: &mut Vec<u32>) {
        grid.query_sphere(self, out).unwrap_or_default();
    }
}

impl BatchHits {
    /// Every kept box each query box overlaps
    /// ([`AdaptiveGrid::query_aabb`]).
    ///
    /// # Errors
    /// [`BatchError::Input`] naming the first bad query box, or
    /// [`BatchError::Job`]; the answer is then empty.
    pub fn query_aabbs(
        &mut self,
        jobs: &JobSystem,
        grid: &AdaptiveGrid,
        boxes: &[Aabb],
    ) -> Result<(), BatchError> {
        self.run(jobs, grid, boxes)
    }

    /// The old name of [`query_aabbs`](Self::query_aabbs), kept one release.
    ///
    /// # Errors
    /// As [`query_aabbs`](Self::query_aabbs).
    #[deprecated(since = "0.1.0", note = "renamed to `query_aabbs`")]
    pub fn query_boxes(
        &mut self,
        jobs: &JobSystem,
        grid: &AdaptiveGrid,
        boxes: &[Aabb],
    ) -> Result<(), BatchError> {
        self.query_aabbs(jobs, grid, boxes)
    }

    /// Every kept box that contains each point
    /// ([`AdaptiveGrid::query_point`]).
    ///
    /// # Errors
    /// [`BatchError::Query`] naming the first point that is not finite, or
    /// [`BatchError::Job`]; the answer is then empty.
    pub fn query_points(
        &mut self,
        jobs: &JobSystem,
        grid: &AdaptiveGrid,
        points: &[Vec3],
    ) -> Result<(), BatchError> {
        self.run(jobs, grid, points)
    }

    /// Every kept box each sphere meets ([`AdaptiveGrid::query_sphere`]).
    ///
    /// # Errors
    /// [`BatchError::Query`] naming the first bad sphere, or
    /// [`BatchError::Job`]; the answer is then empty.
    pub fn query_spheres(
        &mut self,
        jobs: &JobSystem,
        grid: &AdaptiveGrid,
        spheres: &[Sphere],
    ) -> Result<(), BatchError> {
        self.run(jobs, grid, spheres)
    }

    /// Queries answered by the last call.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the last call answered no query.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where each query's hits start in [`ids`](Self::ids), and where the
    /// last ends: `len() + 1` entries (none after a refused call).
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Every query's hits, one query after the other.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// The hits of query `query`.
    ///
    /// # Panics
    /// If `query >= len()`.
    pub fn hits(&self, query: usize) -> &[u32] {
        &self.ids[self.offsets[query]..self.offsets[query + 1]]
    }

    fn run<S: Shape>(
        &mut self,
        jobs: &JobSystem,
        grid: &AdaptiveGrid,
        queries: &[S],
    ) -> Result<(), BatchError> {
        self.offsets.clear();
        self.ids.clear();
        for (index, query) in queries.iter().enumerate() {
            query.check(index)?;
        }
        // Pieces of at least `CHUNK` queries, a few per thread so that a
        // slow piece does not hold the others up; each fills its own kept
        // buffers, joined in query order after.
        let pieces = if jobs.threads() == 1 || queries.len() <= CHUNK {
            1
        } else {
            queries.len().div_ceil(CHUNK).min(MAX_PIECES).min(4 * jobs.threads())
        };
        while self.pieces.len() < pieces {
            self.pieces.push(Piece::default());
        }
        let piece_len = queries.len().div_ceil(pieces).max(1);
        jobs.for_each_mut(&mut self.pieces[..pieces], |piece, out| {
            crate::profile::zone!("batch: shape queries");
            let start = piece * piece_len;
            out.answer(grid, &queries[start..(start + piece_len).min(queries.len())]);
        })?;
        self.offsets.push(0);
        for piece in &self.pieces[..pieces] {
            self.ids.extend_from_slice(&piece.ids);
            let mut at = *self.offsets.last().unwrap_or(&0);
            for &count in &piece.counts {
                at += count as usize;
                self.offsets.push(at);
            }
        }
        Ok(())
    }
}
