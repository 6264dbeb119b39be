//! Rays and spheres from numpy arrays, and answers kept as CSR tables
//! (`offsets`, entries) turned into numpy's: shared by `Grid` and
//! `PersistentBroadPhase`, whose queries take the same arguments and
//! return the same forms.

use crate::convert::{Coords, first_bad_row, lengths};
use crate::order::{Csr, Index, RowSource, build_csr};
use crate::threads::failed;
use broadphase::query::{Ray, Sphere};
use broadphase::{AdaptiveGrid, JobSystem};
use numpy::PyArray1;
use pyo3::prelude::*;

/// Rays per piece of an all-hits batch at least, so a piece outweighs
/// handing it out (the crates' batches use the same).
const RAYS_PER_PIECE: usize = 256;

/// The rays of `origins`, `dirs` (of one shape) and `max_t` (None: no
/// end). Origins and directions are rounded to the nearest float32, `max_t`
/// up; the first bad row over all three is a `ValueError` (`ray 4: ...`).
pub(crate) fn rays(
    origins: &Coords<'_>,
    dirs: &Coords<'_>,
    max_t: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<Ray>> {
    origins.same_shape(dirs)?;
    let n = origins.len();
    let max_t = match max_t {
        Some(obj) => lengths(obj, n, "max_t", "ray", false)?,
        None => Ok(vec![f32::INFINITY; n]),
    };
    let (origins, dirs, max_t) =
        first_bad_row(origins.points_by_row("ray"), dirs.points_by_row("ray"), max_t)?;
    Ok((0..n).map(|i| Ray::new(origins[i], dirs[i], max_t[i])).collect())
}

/// [`rays`] of the arrays `origins` and `dirs`, whose columns `check`
/// accepts first (a structure's own dimension check).
pub(crate) fn rays_from(
    origins: &Bound<'_, PyAny>,
    dirs: &Bound<'_, PyAny>,
    max_t: Option<&Bound<'_, PyAny>>,
    check: impl FnOnce(&Coords<'_>) -> PyResult<()>,
) -> PyResult<Vec<Ray>> {
    let (origins, dirs) = (Coords::extract(origins, "origins")?, Coords::extract(dirs, "dirs")?);
    check(&origins)?;
    rays(&origins, &dirs, max_t)
}

/// The spheres of `centers` and `radii` (one float for all, or one each).
/// Centers are rounded to the nearest float32, radii up; the first bad row
/// is a `ValueError` (`sphere 2: ...`).
pub(crate) fn spheres(centers: &Coords<'_>, radii: &Bound<'_, PyAny>) -> PyResult<Vec<Sphere>> {
    let n = centers.len();
    let radii = lengths(radii, n, "radii", "sphere", true)?;
    let (centers, radii, ()) = first_bad_row(centers.points_by_row("sphere"), radii, Ok(()))?;
    Ok((0..n).map(|i| Sphere::new(centers[i], radii[i])).collect())
}

/// The rows of an answer kept as `offsets` (one more than the rows, or
/// none for no rows) and its entries, each below `u32::MAX`.
pub(crate) struct SliceRows<'a> {
    pub(crate) offsets: &'a [usize],
    pub(crate) entries: &'a [u32],
}

impl RowSource for SliceRows<'_> {
    fn rows(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
    fn row_len(&self, row: usize) -> usize {
        self.offsets[row + 1] - self.offsets[row]
    }
    fn write_row<I: Index>(&self, row: usize, out: &mut [I]) {
        let entries = &self.entries[self.offsets[row]..self.offsets[row + 1]];
        for (o, &e) in out.iter_mut().zip(entries) {
            *o = I::of(e as usize);
        }
    }
}

/// Each ray's first hit: the box index (-1 for none) and the entry `t`.
pub(crate) type FirstHitArrays<'py> = (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<f32>>);

/// Every hit of a batch of rays: CSR rows, one per ray, each in the
/// crates' order (by `t`, ties by index), with each hit's `t`.
#[derive(Debug)]
pub(crate) struct RayHitRows {
    csr: Csr,
    t: Vec<f32>,
}

/// `indptr`, `indices` and `t` of a batch of rays' hits.
pub(crate) type RayHitArrays<'py> =
    (Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyArray1<f32>>);

impl RayHitRows {
    /// The rows of `offsets` and `hits` (`(index, t)`, indices below
    /// `columns`), their order kept, the CSR arrays filled on `jobs`.
    pub(crate) fn new(
        jobs: &JobSystem,
        offsets: &[usize],
        hits: &[(u32, f32)],
        columns: usize,
    ) -> PyResult<Self> {
        let (entries, t): (Vec<u32>, Vec<f32>) = hits.iter().copied().unzip();
        let csr = build_csr(jobs, &SliceRows { offsets, entries: &entries }, columns, false)?;
        Ok(Self { csr, t })
    }

    /// The three arrays, handed to numpy without a copy.
    pub(crate) fn into_arrays(self, py: Python<'_>) -> RayHitArrays<'_> {
        let (indptr, indices) = self.csr.into_arrays(py);
        (indptr, indices, PyArray1::from_vec(py, self.t))
    }
}

/// One job's answers in an all-hits batch: its rays' hits, one ray after
/// the other, and how many each had.
#[derive(Clone, Debug, Default)]
struct Piece {
    hits: Vec<(u32, f32)>,
    counts: Vec<usize>,
}

/// Every box of `grid` each ray hits ([`AdaptiveGrid::ray_hits`], rays
/// already checked), on `jobs`: each job answers a run of rays into lists
/// of its own, joined in ray order, so the answer is the same on any
/// thread count.
pub(crate) fn grid_rays_hits(
    jobs: &JobSystem,
    grid: &AdaptiveGrid,
    rays: &[Ray],
) -> PyResult<RayHitRows> {
    let pieces = if jobs.threads() == 1 || rays.len() <= RAYS_PER_PIECE {
        1
    } else {
        rays.len().div_ceil(RAYS_PER_PIECE).min(4 * jobs.threads())
    };
    let step = rays.len().div_ceil(pieces).max(1);
    let mut parts = vec![Piece::default(); pieces];
    jobs.for_each_mut(&mut parts, |piece, Piece { hits, counts }| {
        let start = (piece * step).min(rays.len());
        let end = (start + step).min(rays.len());
        let mut one = Vec::new();
        for ray in &rays[start..end] {
            // The rays were checked before the jobs started.
            if grid.ray_hits(ray, &mut one).is_err() {
                one.clear();
            }
            hits.extend_from_slice(&one);
            counts.push(one.len());
        }
    })
    .map_err(failed)?;
    let mut offsets = Vec::with_capacity(rays.len() + 1);
    offsets.push(0);
    let mut all = Vec::with_capacity(parts.iter().map(|part| part.hits.len()).sum());
    for Piece { hits, counts } in parts {
        all.extend(hits);
        for count in counts {
            offsets.push(offsets[offsets.len() - 1] + count);
        }
    }
    RayHitRows::new(jobs, &offsets, &all, grid.len())
}
