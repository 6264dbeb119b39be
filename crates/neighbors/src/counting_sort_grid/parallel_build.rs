//! The grid's build on the job system:
//! [`CountingSortGrid::build_parallel`] and
//! [`CountingSortGrid::build_spheres_parallel`].
//!
//! The same stable counting sort as the single-thread build, cut into one
//! part of the input per thread: each part checks its input, then computes
//! its particles' cells
//! and counts them into its own histogram; one pass over the cells turns
//! the histograms into each part's first slot in each cell (parts in input
//! order, so the sort stays stable and the slots are exactly the
//! single-thread build's); each part then writes its particles' records
//! (coordinates and caller index) into their slots, and each part of the
//! slots splits its records into columns.

use super::CountingSortGrid;
use crate::api::Index;
use crate::points::{PointError, check_radius, validate_points, validate_spheres};
use crate::sorted::{SCATTER_AHEAD, Shape, stencil_k};
use broadphase_jobs::{JobError, JobSystem};
use glam::Vec3;
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a parallel build failed; the grid is then empty, as after a failed
/// single-thread build.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_neighbors::{BuildError, CountingSortGrid, PointError};
/// use glam::Vec3;
/// let mut grid = CountingSortGrid::default();
/// let bad = [Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0)];
/// let error = grid.build_parallel(&JobSystem::new(2), &bad, 1.0).unwrap_err();
/// assert!(matches!(error, BuildError::Point(PointError::NotFinite { index: 1, .. })));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum BuildError {
    /// The input was refused, exactly as the single-thread build refuses it.
    Point(PointError),
    /// A job panicked, or the call was made from inside a job.
    Job(JobError),
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BuildError::Point(error) => error.fmt(f),
            BuildError::Job(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BuildError::Point(error) => Some(error),
            BuildError::Job(error) => Some(error),
        }
    }
}

impl From<PointError> for BuildError {
    fn from(error: PointError) -> Self {
        BuildError::Point(error)
    }
}

/// Most parts a build is cut into.
const MAX_PARTS: usize = 64;

/// Particles per part below which another part is not worth its job (and
/// its histogram of every cell).
const MIN_PART: usize = 32_768;

/// Scratch of the parallel build, kept across builds. A clone starts empty.
#[derive(Debug, Default)]
pub(crate) struct PartScratch {
    /// One histogram per part: counts per cell, then the part's next slot
    /// in each cell.
    counts: Vec<Vec<u32>>,
    /// Each slot's particle as two words, `x | y << 32` and
    /// `z | index << 32` (coordinates as bits), written by the part that
    /// owns the particle (each slot exactly once): one scattered 16-byte
    /// record per particle, then a sequential split into columns.
    records: Vec<[AtomicU64; 2]>,
}

impl Clone for PartScratch {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl CountingSortGrid {
    /// [`build`](crate::NeighborSearch::build) with the insert, the count
    /// and the scatter on `jobs`: the same grid, slot for slot (the
    /// counting sort stays stable), from one part of the input per thread.
    /// Below about 65,000 particles it builds on the calling thread.
    ///
    /// # Errors
    ///
    /// [`BuildError::Point`] with what [`build`](crate::NeighborSearch::build)
    /// would return for the same input; [`BuildError::Job`] if a job
    /// panicked or the call was made from inside a job. Either way the grid
    /// is left empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch, ParallelNeighborLists};
    /// use glam::Vec3;
    ///
    /// let points: Vec<Vec3> = (0..100_000)
    ///     .map(|i| Vec3::new((i % 50) as f32, (i / 50 % 50) as f32, (i / 2500) as f32))
    ///     .collect();
    /// let jobs = JobSystem::new(2);
    /// let (mut parallel, mut serial) = (CountingSortGrid::default(), CountingSortGrid::default());
    /// parallel.build_parallel(&jobs, &points, 1.0)?;
    /// serial.build(&points, 1.0)?;
    /// assert_eq!(parallel.sorted_order(), serial.sorted_order());
    ///
    /// // The whole frame on the job system: build, then lists.
    /// let mut lists = NeighborLists::default();
    /// ParallelNeighborLists::default().fill(&jobs, &parallel, &mut lists)?;
    /// assert_eq!(lists.neighbors(0).len(), 3); // a corner of the lattice
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build_parallel(
        &mut self,
        jobs: &JobSystem,
        points: &[Vec3],
        radius: f32,
    ) -> Result<(), BuildError> {
        self.reset();
        check_radius(radius)?;
        let bounds = checked_in_parts(
            jobs,
            points.len(),
            || validate_points(points),
            |range| validate_points(&points[range]),
        )?;
        self.index_parallel(jobs, points, None, bounds, Shape::Points { radius })
    }

    /// [`build_spheres`](crate::NeighborSearch::build_spheres) on `jobs`,
    /// as [`build_parallel`](Self::build_parallel) is `build`.
    ///
    /// # Errors
    ///
    /// As [`build_parallel`](Self::build_parallel), with
    /// `build_spheres`'s input errors.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_neighbors::{CountingSortGrid, NeighborSearch};
    /// use glam::Vec3;
    /// let mut grid = CountingSortGrid::default();
    /// grid.build_spheres_parallel(&JobSystem::new(2), &[Vec3::ZERO, Vec3::X], &[0.5, 0.5])?;
    /// let mut pairs = Vec::new();
    /// grid.neighbor_pairs(&mut pairs);
    /// assert_eq!(pairs, [[0, 1]]); // touching counts
    /// # Ok::<(), broadphase_neighbors::BuildError>(())
    /// ```
    pub fn build_spheres_parallel(
        &mut self,
        jobs: &JobSystem,
        centers: &[Vec3],
        radii: &[f32],
    ) -> Result<(), BuildError> {
        self.reset();
        let whole = || validate_spheres(centers, radii);
        let (bounds, max_radius) = if centers.len() == radii.len() {
            checked_in_parts(jobs, centers.len(), whole, |range| {
                validate_spheres(&centers[range.clone()], &radii[range])
            })?
        } else {
            whole()?
        };
        self.index_parallel(jobs, centers, Some(radii), bounds, Shape::Spheres { max_radius })
    }

    fn index_parallel(
        &mut self,
        jobs: &JobSystem,
        points: &[Vec3],
        radii: Option<&[f32]>,
        bounds: Option<(Vec3, Vec3)>,
        shape: Shape,
    ) -> Result<(), BuildError> {
        let n = points.len();
        let parts = jobs.threads().min(MAX_PARTS).min(n / MIN_PART);
        let Some((lo, hi)) = bounds.filter(|_| parts > 1) else {
            self.index(points, radii, bounds, shape);
            return Ok(());
        };
        let result = self.sort_in_parts(jobs, parts, points, radii, lo, hi, shape);
        if result.is_err() {
            self.reset();
        }
        result.map_err(BuildError::Job)
    }

    #[allow(clippy::too_many_arguments)]
    fn sort_in_parts(
        &mut self,
        jobs: &JobSystem,
        parts: usize,
        points: &[Vec3],
        radii: Option<&[f32]>,
        lo: Vec3,
        hi: Vec3,
        shape: Shape,
    ) -> Result<(), JobError> {
        let n = points.len();
        let cell = self.plan(n, lo, hi, shape);
        let cells = self.cell_count();
        let step = n.div_ceil(parts);
        let mut keys = std::mem::take(&mut self.keys);
        let mut scratch = std::mem::take(&mut self.parts);
        // `keys_of` writes every key: no need to clear the last build's.
        keys.truncate(n);
        broadphase_storage::reserve_huge(&mut keys, n);
        keys.resize(n, 0);
        scratch.counts.resize_with(parts, Vec::new);
        let counts = &mut scratch.counts[..parts];

        // Insert and count, one histogram per part.
        let grid = &*self;
        let inserted =
            run_parts(jobs, keys.chunks_mut(step).zip(counts.iter_mut()), |part, item| {
                let (keys, counts) = item;
                grid.keys_of(&points[part * step..][..keys.len()], keys);
                counts.clear();
                counts.resize(cells, 0);
                for &key in keys.iter() {
                    counts[key as usize] += 1;
                }
            });

        // Each part's first slot in each cell: cells in order, and within a
        // cell the parts in input order (a stable sort).
        let scattered = inserted.and_then(|()| {
            self.offsets.clear();
            self.offsets.resize(cells + 1, 0);
            let mut sum = 0u32;
            for (cell, offset) in self.offsets[..cells].iter_mut().enumerate() {
                *offset = sum;
                for part in counts.iter_mut() {
                    let count = part[cell];
                    part[cell] = sum;
                    sum += count;
                }
            }
            self.offsets[cells] = sum;

            // Each part writes its particles' records into their slots.
            broadphase_storage::reserve_huge(&mut scratch.records, n);
            scratch.records.resize_with(n, Default::default);
            let records = &scratch.records[..n];
            run_parts(jobs, keys.chunks(step).zip(counts.iter_mut()), |part, (keys, next)| {
                let from = part * step;
                for (i, (&key, p)) in (from..).zip(keys.iter().zip(&points[from..])) {
                    // The line a particle a few ahead will be written to
                    // (its cell's next slot now; by then at most a slot or
                    // two further), asked for now, as the serial scatter does.
                    if let Some(&later) = keys.get(i - from + SCATTER_AHEAD) {
                        let at = next[later as usize] as usize;
                        broadphase_storage::prefetch(records.as_ptr().wrapping_add(at));
                    }
                    let slot = &mut next[key as usize];
                    let record = &records[*slot as usize];
                    let word =
                        |low: f32, high: u32| u64::from(low.to_bits()) | u64::from(high) << 32;
                    record[0].store(word(p.x, p.y.to_bits()), Ordering::Relaxed);
                    // n <= MAX_POINTS: indices fit u32.
                    record[1].store(word(p.z, i as u32), Ordering::Relaxed);
                    *slot += 1;
                }
            })
        });

        // Each part of the slots splits its records into columns.
        let gathered = scattered.and_then(|()| {
            let records = &scratch.records[..n];
            let (x, y, z, r, order) = self.sorted.columns_mut(n, radii.is_some(), shape);
            let mut r = r.chunks_mut(step);
            let pieces = x
                .chunks_mut(step)
                .zip(y.chunks_mut(step))
                .zip(z.chunks_mut(step))
                .zip(order.chunks_mut(step))
                .map(|(((x, y), z), order)| (x, y, z, order, r.next()));
            run_parts(jobs, pieces, |part, (x, y, z, order, r)| {
                let records = &records[part * step..][..x.len()];
                for (s, record) in records.iter().enumerate() {
                    let [xy, zi] = [0, 1].map(|w| record[w].load(Ordering::Relaxed));
                    x[s] = f32::from_bits(xy as u32);
                    y[s] = f32::from_bits((xy >> 32) as u32);
                    z[s] = f32::from_bits(zi as u32);
                    order[s] = (zi >> 32) as u32;
                }
                if let (Some(r), Some(radii)) = (r, radii) {
                    for (s, r) in r.iter_mut().enumerate() {
                        *r = radii[order[s] as usize];
                    }
                }
            })
        });
        self.keys = keys;
        self.parts = scratch;
        gathered?;
        self.sorted.estimate_rows(lo, hi, cell, stencil_k(self.config.cells_per_radius) as i32);
        Ok(())
    }
}

/// The input check of a parallel build, in parts on `jobs`: `check_part`
/// checks a range of the input and returns what `check_whole` returns for
/// the whole (the bounds, for spheres with the largest radius), whose
/// parts' answers combine with [`Combine`]. Where a part refuses its
/// range, or a job panics, `check_whole` runs on the calling thread, so
/// the error is the whole input's first, exactly as `build` reports it.
/// Below two parts of [`MIN_PART`], `check_whole` alone.
fn checked_in_parts<T: Combine + Send>(
    jobs: &JobSystem,
    len: usize,
    check_whole: impl FnOnce() -> Result<T, PointError>,
    check_part: impl Fn(core::ops::Range<usize>) -> Result<T, PointError> + Sync,
) -> Result<T, PointError> {
    let parts = jobs.threads().min(MAX_PARTS).min(len / MIN_PART);
    if parts < 2 || len > crate::points::MAX_POINTS {
        return check_whole();
    }
    let step = len.div_ceil(parts);
    let mut answers: [Option<Result<T, PointError>>; MAX_PARTS] = std::array::from_fn(|_| None);
    let ran = run_parts(jobs, answers[..parts].iter_mut().enumerate(), |_, (part, answer)| {
        *answer = Some(check_part(part * step..((part + 1) * step).min(len)));
    });
    let mut whole: Option<T> = None;
    for answer in &mut answers[..parts] {
        match answer.take() {
            Some(Ok(part)) if ran.is_ok() => {
                whole = Some(match whole {
                    Some(before) => before.combine(part),
                    None => part,
                });
            }
            _ => return check_whole(),
        }
    }
    whole.map_or_else(check_whole, Ok)
}

/// Answers of an input check over consecutive parts, combined into the
/// whole input's.
trait Combine {
    /// The answer for this part followed by `next`.
    fn combine(self, next: Self) -> Self;
}

/// The bounds of a set of points (`None` when empty).
impl Combine for Option<(Vec3, Vec3)> {
    fn combine(self, next: Self) -> Self {
        match (self, next) {
            (Some((lo, hi)), Some((next_lo, next_hi))) => Some((lo.min(next_lo), hi.max(next_hi))),
            (bounds, None) | (None, bounds) => bounds,
        }
    }
}

/// The bounds of the centers and the largest radius.
impl Combine for (Option<(Vec3, Vec3)>, f32) {
    fn combine(self, next: Self) -> Self {
        (self.0.combine(next.0), self.1.max(next.1))
    }
}

/// Runs `f(i, item)` for each of (at most [`MAX_PARTS`]) `items` on `jobs`,
/// allocating nothing: the items wait in an array on this stack.
fn run_parts<T: Send, F: Fn(usize, T) + Sync>(
    jobs: &JobSystem,
    items: impl IntoIterator<Item = T>,
    f: F,
) -> Result<(), JobError> {
    let mut slots: [Option<T>; MAX_PARTS] = std::array::from_fn(|_| None);
    let mut count = 0;
    for (slot, item) in slots.iter_mut().zip(items) {
        *slot = Some(item);
        count += 1;
    }
    jobs.for_each_mut(&mut slots[..count], |i, slot| {
        if let Some(item) = slot.take() {
            f(i, item);
        }
    })
}
