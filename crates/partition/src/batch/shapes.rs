//! Many box, point, sphere or region queries in one call: each job answers a run
//! of queries into its own lists, and the lists, in input order, become
//! one CSR answer (`offsets`, `ids`).

use super::{BatchError, CHUNK};
use broadphase_jobs::JobSystem;
use broadphase_kernel::AdaptiveGrid;
use broadphase_storage::{Aabb, RegionTest, Sphere, validate_point};
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
    fn answer<Q>(&mut self, queries: &[Q], answer: &impl Fn(&Q, &mut Vec<u32>)) {
        let Piece { ids, counts, scratch } = self;
        ids.clear();
        counts.clear();
        for query in queries {
            answer(query, scratch);
            ids.extend_from_slice(scratch);
            counts.push(scratch.len() as u32);
        }
    }
}

/// The answers of a batch of box, point, sphere or region queries, in CSR form:
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
        let check =
            |b: &Aabb, index| b.validate(0).map_err(|error| BatchError::Input { index, error });
        // Checked before the jobs started: a refusal cannot happen.
        self.run(jobs, boxes, check, |b, out| grid.query_aabb(b, out).unwrap_or_default())
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
        let check = |&p: &Vec3, index| {
            validate_point(p).map_err(|error| BatchError::Query { index, error })
        };
        self.run(jobs, points, check, |&p, out| grid.query_point(p, out).unwrap_or_default())
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
        let check =
            |s: &Sphere, index| s.validate().map_err(|error| BatchError::Query { index, error });
        self.run(jobs, spheres, check, |s, out| grid.query_sphere(s, out).unwrap_or_default())
    }

    /// Every kept box each region meets ([`AdaptiveGrid::query_with`]): a
    /// batch of the caller's own shapes (frustums of several views,
    /// capsules of several characters), answered in input order.
    ///
    /// # Errors
    /// [`BatchError::Query`] naming the first region refused (its
    /// [`validate`](RegionTest::validate), or bounds that break the box
    /// contract), or [`BatchError::Job`]; the answer is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_kernel::{AdaptiveGrid, Aabb, Capsule};
    /// use broadphase_partition::BatchHits;
    /// use glam::Vec3;
    /// let boxes: Vec<Aabb> = (0..10).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 0.5))).collect();
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// let capsules = [
    ///     Capsule::new(Vec3::splat(0.25), Vec3::splat(1.25), 0.0),
    ///     Capsule::new(Vec3::splat(20.0), Vec3::splat(30.0), 1.0),
    /// ];
    /// let mut hits = BatchHits::default();
    /// hits.query_regions(&JobSystem::new(2), &grid, &capsules)?;
    /// let mut first = hits.hits(0).to_vec();
    /// first.sort();
    /// assert_eq!(first, [0, 1]);
    /// assert!(hits.hits(1).is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_regions<R: RegionTest + Sync>(
        &mut self,
        jobs: &JobSystem,
        grid: &AdaptiveGrid,
        regions: &[R],
    ) -> Result<(), BatchError> {
        let check = |region: &R, index| {
            region
                .validate()
                .and_then(|()| Ok(region.bounds().validate(0)?))
                .map_err(|error| BatchError::Query { index, error })
        };
        self.run(jobs, regions, check, |region, out| {
            grid.query_with(region, out).unwrap_or_default();
        })
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

    /// Checks every query, then answers them in pieces on `jobs`.
    fn run<Q: Sync>(
        &mut self,
        jobs: &JobSystem,
        queries: &[Q],
        check: impl Fn(&Q, usize) -> Result<(), BatchError>,
        answer: impl Fn(&Q, &mut Vec<u32>) + Sync,
    ) -> Result<(), BatchError> {
        self.offsets.clear();
        self.ids.clear();
        for (index, query) in queries.iter().enumerate() {
            check(query, index)?;
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
            out.answer(&queries[start..(start + piece_len).min(queries.len())], &answer);
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
