//! `neighbor_pairs` and `neighbor_lists`: fixed-radius neighbors of a
//! point set, in open space (the counting-sort grid, or the spatial hash
//! where the grid would have to coarsen) or in a box whose faces wrap (the
//! periodic grid).

use crate::convert::{Coords, bad_row, pairs_array, show, show32};
use crate::gpu::{self, Backend};
use crate::order::{Csr, Index, RowSource, build_csr, pairs_in_chunk_order, pairs_ordered};
use crate::threads::{detached, failed, job_system};
use broadphase::JobSystem;
use broadphase::glam::Vec3;
use broadphase::neighbors::{
    BuildError, CheckedPoints, CountingSortGrid, MAX_RADIUS, NeighborLists, NeighborSearch,
    PeriodicDomain, PeriodicError, PeriodicGrid, PointError, SpatialHash,
};
use numpy::PyArray2;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// The counting-sort grid's default cap on cells per point: past it the
/// grid coarsens its cells, and a set whose bounds are mostly empty (a
/// cluster and a far outlier) would then put most points in one cell.
const GRID_CELLS_PER_POINT: f64 = 8.0;

/// Which structure answers a non-periodic search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Structure {
    /// `CountingSortGrid`: the fastest, while cells of the radius tile the
    /// points' bounds within its cell budget.
    Grid,
    /// `SpatialHash`: cells of the radius whatever the bounds, memory per
    /// point; for outliers and sparse sets, where the grid would coarsen.
    Hash,
}

/// The structure for checked `points` and radius `r` (see [`structure_in`]).
pub(crate) fn structure(points: &CheckedPoints, r: f32) -> Structure {
    structure_in(points.bounds(), points.len(), r)
}

/// [`structure`] for points not checked yet: their bounds take a pass.
pub(crate) fn structure_of(points: &[Vec3], r: f32) -> Structure {
    structure_in(bounds(points), points.len(), r)
}

/// The structure for `len` points within `bounds` and radius `r`: the
/// grid when cells of the radius over the bounds fit its budget, the hash
/// otherwise.
fn structure_in(bounds: Option<(Vec3, Vec3)>, len: usize, r: f32) -> Structure {
    let Some((lo, hi)) = bounds.filter(|_| r > 0.0) else {
        // Cells are then sized by the count, not the radius: the grid.
        return Structure::Grid;
    };
    let span = |a: usize| f64::from(hi[a]) - f64::from(lo[a]);
    let cells: f64 = (0..3).map(|a| (span(a) / f64::from(r)).floor() + 1.0).product();
    let budget = (len as f64 * GRID_CELLS_PER_POINT).max(4096.0);
    if cells <= budget { Structure::Grid } else { Structure::Hash }
}

/// The smallest and largest coordinate of finite `points` on each axis,
/// or None for no points (or, never for checked input, a bad one: the
/// structure's build then names it).
fn bounds(points: &[Vec3]) -> Option<(Vec3, Vec3)> {
    broadphase::neighbors::point_bounds(points).ok().flatten()
}

/// A box whose faces wrap, as the `periodic=` argument describes it.
pub(crate) fn domain(obj: &Bound<'_, PyAny>, dims: usize) -> PyResult<PeriodicDomain> {
    let usage = || {
        PyTypeError::new_err(
            "periodic must be (lo, hi) or (lo, hi, wrap): lo and hi a float or one per axis, \
             wrap a bool or one per axis",
        )
    };
    let parts: Vec<Bound<'_, PyAny>> = obj.extract().map_err(|_| usage())?;
    if !(2..=3).contains(&parts.len()) {
        return Err(usage());
    }
    let per_axis = |item: &Bound<'_, PyAny>, name: &str| -> PyResult<Vec<f64>> {
        let values = match item.extract::<f64>() {
            Ok(v) => vec![v; dims],
            Err(_) => item.extract::<Vec<f64>>().map_err(|_| usage())?,
        };
        if values.len() != dims {
            return Err(PyValueError::new_err(format!(
                "periodic {name} has {} values for points of {dims} columns",
                values.len()
            )));
        }
        Ok(values)
    };
    let (lo, hi) = (per_axis(&parts[0], "lo")?, per_axis(&parts[1], "hi")?);
    let wrap = match parts.get(2) {
        None => vec![true; dims],
        Some(item) => match item.extract::<bool>() {
            Ok(w) => vec![w; dims],
            Err(_) => item.extract::<Vec<bool>>().map_err(|_| usage())?,
        },
    };
    if wrap.len() != dims {
        return Err(PyValueError::new_err(format!(
            "periodic wrap has {} values for points of {dims} columns",
            wrap.len()
        )));
    }
    // Two columns: the points lie at z = 0, in a slab that does not wrap.
    let (mut min, mut max, mut periodic) = (Vec3::splat(-1.0), Vec3::splat(1.0), [false; 3]);
    for axis in 0..dims {
        let (a, b) = (lo[axis], hi[axis]);
        if !(a.is_finite() && b.is_finite() && a < b) {
            return Err(PyValueError::new_err(format!(
                "periodic box: axis {axis} needs finite lo < hi, got lo = {}, hi = {}",
                show(a),
                show(b)
            )));
        }
        (min[axis], max[axis], periodic[axis]) = (a as f32, b as f32, wrap[axis]);
    }
    PeriodicDomain::new(min, max, periodic).map_err(periodic_error)
}

/// The `ValueError` for what a neighbor search refused.
pub(crate) fn point_error(error: PointError) -> PyErr {
    match error {
        PointError::NotFinite { index, axis, value } => bad_row(
            "point",
            index,
            format!(
                "points[{index}, {}] = {} is not a finite number",
                axis as usize,
                show32(value)
            ),
        ),
        PointError::InvalidRadius { value } => PyValueError::new_err(format!(
            "r = {} must be a finite number in 0..={MAX_RADIUS:e}",
            show32(value)
        )),
        other => failed(other),
    }
}

pub(crate) fn periodic_error(error: PeriodicError) -> PyErr {
    match error {
        PeriodicError::Point(e) => point_error(e),
        PeriodicError::BadDomain { axis, min, max } => PyValueError::new_err(format!(
            "periodic box: axis {} needs lo < hi with a finite float32 length, got lo = {}, hi = {}",
            axis as usize,
            show32(min),
            show32(max)
        )),
        PeriodicError::OutsideDomain { index, axis, value } => bad_row(
            "point",
            index,
            format!(
                "points[{index}, {}] = {} is outside the periodic box",
                axis as usize,
                show32(value)
            ),
        ),
        PeriodicError::RadiusAboveHalfBox { radius, axis, half } => PyValueError::new_err(format!(
            "r = {} exceeds half the periodic box along axis {} ({})",
            show32(radius),
            axis as usize,
            show32(half)
        )),
        other => failed(other),
    }
}

fn build_error(error: BuildError) -> PyErr {
    match error {
        BuildError::Point(e) => point_error(e),
        BuildError::Job(e) => failed(e),
        other => failed(other),
    }
}

/// The radius as float32, refusing NaN, negative values and any above
/// `MAX_RADIUS`, whose float32 square would overflow.
pub(crate) fn radius(r: f64) -> PyResult<f32> {
    if r.is_finite() && r >= 0.0 && r as f32 <= MAX_RADIUS {
        return Ok(r as f32);
    }
    Err(PyValueError::new_err(format!(
        "r must be a finite number in 0..={MAX_RADIUS:e} (r*r must fit float32), got {}",
        show(r)
    )))
}

/// What both functions take, checked and converted.
pub(crate) struct Input {
    /// Checked once, with their bounds: the build does not read them again.
    pub(crate) points: CheckedPoints,
    pub(crate) r: f32,
    pub(crate) domain: Option<PeriodicDomain>,
}

/// The points' buffer goes back to the pool for the next call.
impl Drop for Input {
    fn drop(&mut self) {
        crate::pool::give_back_points(std::mem::take(&mut self.points).into_buffer());
    }
}

fn input(
    points: &Bound<'_, PyAny>,
    r: f64,
    periodic: Option<&Bound<'_, PyAny>>,
) -> PyResult<Input> {
    let coords = Coords::extract(points, "points")?;
    let r = radius(r)?;
    let domain = periodic.map(|p| domain(p, coords.dims())).transpose()?;
    Ok(Input { points: coords.checked_points("point")?, r, domain })
}

/// Slots per chunk of a walk on several threads: a chunk's pairs (about
/// 15 per point at 30 neighbors, 8 bytes each) stay in the core's cache
/// until they are copied into the answer.
const SLOTS_PER_CHUNK: usize = 4096;

/// Every pair of `search` once, `(a, b)` with `a < b`, in the search's
/// order, walked on `jobs`.
fn pairs_of<S: NeighborSearch + Sync>(jobs: &JobSystem, search: &S) -> PyResult<Vec<[u32; 2]>> {
    let len = search.len();
    let chunks = len.div_ceil(SLOTS_PER_CHUNK);
    if jobs.threads() == 1 || chunks <= 1 {
        // Straight into the answer, a particle's row at a time (grown into
        // huge pages where the system offers them): on one thread this
        // measured faster than batches, which the answer must then copy.
        let mut pairs = crate::pool::take();
        search.neighbor_pairs(&mut pairs);
        return Ok(pairs);
    }
    // A chunk's pairs go to its piece in batches: with two threads this
    // measured a quarter faster than one pair at a time.
    pairs_in_chunk_order(jobs, chunks, |chunk, pairs| {
        let start = chunk * SLOTS_PER_CHUNK;
        let slots = start..start + SLOTS_PER_CHUNK;
        search.for_each_neighbor_pair_batch_in(slots, |batch| pairs.extend_from_slice(batch));
    })
}

/// Lists already in caller order.
pub(crate) struct CallerRows<'a>(pub(crate) &'a NeighborLists);

impl RowSource for CallerRows<'_> {
    fn rows(&self) -> usize {
        self.0.len()
    }
    fn row_len(&self, row: usize) -> usize {
        self.0.neighbors(row).len()
    }
    fn write_row<I: Index>(&self, row: usize, out: &mut [I]) {
        for (o, &i) in out.iter_mut().zip(self.0.neighbors(row)) {
            *o = I::of(i as usize);
        }
    }
}

/// Every point's row in caller order: the search reads its rows out in
/// caller indices and moves them into caller order (on `jobs`, a range of
/// rows a job), then they are copied into the arrays handed to Python,
/// each row sorted there with `sort`. The lists' buffers are the pool's,
/// kept between calls.
fn lists_of<S: NeighborSearch + Sync>(jobs: &JobSystem, search: &S, sort: bool) -> PyResult<Csr> {
    let n = search.len();
    crate::pool::with_lists(|(lists, fill)| {
        fill.fill_caller_order(jobs, search, lists).map_err(failed)?;
        build_csr(jobs, &CallerRows(lists), n, sort)
    })
}

/// Builds the structure for `input` on `jobs` and hands it to
/// `grid_then` or `hash_then`.
pub(crate) fn with_structure<T>(
    jobs: &JobSystem,
    input: &Input,
    grid_then: impl FnOnce(&CountingSortGrid) -> PyResult<T>,
    hash_then: impl FnOnce(&SpatialHash) -> PyResult<T>,
) -> PyResult<T> {
    match structure(&input.points, input.r) {
        Structure::Grid => crate::pool::with_grid(|grid| {
            if jobs.threads() > 1 {
                grid.build_parallel(jobs, &input.points, input.r).map_err(build_error)?;
            } else {
                grid.build_checked(&input.points, input.r).map_err(point_error)?;
            }
            grid_then(grid)
        }),
        Structure::Hash => crate::pool::with_hash(|hash| {
            hash.build_checked(&input.points, input.r).map_err(point_error)?;
            hash_then(hash)
        }),
    }
}

/// Every pair of points within distance ``r`` of each other.
///
/// Parameters
/// ----------
/// points : ndarray, shape (n, 3) or (n, 2), float32 or float64
///     Finite coordinates. float64 is rounded to the nearest float32 first
///     (and ``r`` too): the search runs on the float32 values.
/// r : float
///     The radius, finite, in ``0 ..= 1e19`` (``r*r`` must fit float32).
///     Inclusive: ``i`` and ``j`` are neighbors when
///     ``dx*dx + dy*dy + dz*dz <= r*r``, computed in float32 from left to
///     right, exactly as the crate's brute force does; on float32 data this
///     is ``scipy.spatial.cKDTree.query_pairs(r)``'s set except where a
///     distance lies within float32 rounding of ``r``, or below about
///     1e-19, where the float32 squares lose precision (subnormal) or
///     become 0.
/// periodic : tuple, optional
///     ``(lo, hi)`` or ``(lo, hi, wrap)``: a box whose faces wrap, ``lo``
///     and ``hi`` a float or one per axis, ``wrap`` a bool or one per axis
///     (default True on every axis). Distances then go by the nearest
///     image along the wrapping axes. ``lo`` and ``hi`` are rounded to
///     the nearest float32, as the points are, and the box is that float32
///     box: points must lie in it (faces included), and ``r`` may not
///     exceed half its float32 length on a wrapping axis (``(0.3, 0.5)``
///     is 0.19999999 long in float32, so ``r = 0.1`` is refused).
/// threads : int, optional
///     Threads, the calling one included: None (the default) is one, 0 one
///     per core. The result does not depend on it. The periodic search
///     runs on one thread.
/// sort : bool, optional
///     False (the default) keeps the search's own order, the same for the
///     same input on any thread count, as ``cKDTree.query_pairs`` keeps
///     its tree's; True orders the rows by ``(i, j)``, which at a million
///     points takes longer than the search itself.
/// backend : {"cpu", "gpu", "auto"}, optional
///     Where the search runs. "cpu" (the default): the structures above.
///     "gpu": the GPU backend (the counting-sort grid on a Vulkan device),
///     exactly the CPU's pairs, always in ``(i, j)`` order; it ignores
///     ``threads`` and ``sort``, and needs ``r >= 2**-30``. It raises
///     ``GpuUnavailable`` where this build has no GPU backend or no
///     adapter is found. "auto": the GPU where "gpu" would run, the CPU
///     otherwise, silently; ``last_backend()`` says which ran.
///
/// Returns
/// -------
/// ndarray, shape (m, 2), uint32
///     Each pair once, as ``(i, j)`` with ``i < j``.
///
/// Raises
/// ------
/// ValueError
///     For a wrong shape or dtype, a bad ``r`` or ``backend``, or the first
///     point that is not finite (or outside the periodic box), naming its
///     index.
/// GpuUnavailable
///     For ``backend="gpu"`` where there is no GPU backend (a
///     ``RuntimeError``).
#[pyfunction]
#[pyo3(signature = (points, r, periodic = None, threads = None, sort = false, backend = "cpu"))]
pub(crate) fn neighbor_pairs<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
    r: f64,
    periodic: Option<&Bound<'py, PyAny>>,
    threads: Option<i64>,
    sort: bool,
    backend: &str,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let backend = Backend::parse(backend)?;
    let jobs = job_system(threads)?;
    let input = input(points, r, periodic)?;
    let on_gpu = gpu::use_gpu(backend, input.points.len(), Some(input.r))?;
    let pairs = detached(py, move || -> PyResult<Vec<[u32; 2]>> {
        let n = input.points.len();
        if on_gpu {
            let lists = gpu::neighbor_lists(&input.points, input.r, input.domain.as_ref())?;
            return Ok(gpu::pairs_of_rows(&lists));
        }
        let pairs = match &input.domain {
            Some(domain) => {
                let mut grid = PeriodicGrid::default();
                grid.build(domain, &input.points, input.r).map_err(periodic_error)?;
                let mut pairs = crate::pool::take();
                grid.for_each_neighbor_pair(|a, b| pairs.push([a.min(b), a.max(b)]));
                pairs
            }
            None => with_structure(
                &jobs,
                &input,
                |grid| pairs_of(&jobs, grid),
                |hash| pairs_of(&jobs, hash),
            )?,
        };
        Ok(pairs_ordered(pairs, n, sort))
    })??;
    gpu::ran_on(on_gpu);
    pairs_array(py, pairs)
}

/// Every point's neighbors within distance ``r``, as CSR rows.
///
/// Takes the arguments of ``neighbor_pairs`` (same rule, same periodic
/// box, same rounding, same ``backend``). Row ``i`` lists every ``j != i``
/// within ``r`` of point ``i``: each pair appears in both rows. The GPU's
/// rows are ascending whatever ``sort`` says: the CPU's with ``sort=True``.
///
/// Returns
/// -------
/// indptr, indices : ndarray
///     The neighbors of point ``i`` are ``indices[indptr[i]:indptr[i +
///     1]]``, ascending (with ``sort=False``, in the search's own order).
///     Both arrays are int32 when every value fits (int64 otherwise), so
///     ``scipy.sparse.csr_array((np.ones(len(indices)), indices, indptr),
///     shape=(n, n))`` takes them without a copy.
#[pyfunction]
#[pyo3(signature = (points, r, periodic = None, threads = None, sort = true, backend = "cpu"))]
pub(crate) fn neighbor_lists<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
    r: f64,
    periodic: Option<&Bound<'py, PyAny>>,
    threads: Option<i64>,
    sort: bool,
    backend: &str,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let backend = Backend::parse(backend)?;
    let jobs = job_system(threads)?;
    let input = input(points, r, periodic)?;
    let on_gpu = gpu::use_gpu(backend, input.points.len(), Some(input.r))?;
    let csr = detached(py, move || -> PyResult<Csr> {
        if on_gpu {
            let lists = gpu::neighbor_lists(&input.points, input.r, input.domain.as_ref())?;
            // Rows ascending already.
            return build_csr(&jobs, &CallerRows(&lists), input.points.len(), false);
        }
        match &input.domain {
            Some(domain) => {
                let mut grid = PeriodicGrid::default();
                grid.build(domain, &input.points, input.r).map_err(periodic_error)?;
                let mut lists = NeighborLists::default();
                grid.neighbor_lists(&mut lists);
                // Its rows are ascending already.
                build_csr(&jobs, &CallerRows(&lists), input.points.len(), false)
            }
            None => with_structure(
                &jobs,
                &input,
                |grid| lists_of(&jobs, grid, sort),
                |hash| lists_of(&jobs, hash, sort),
            ),
        }
    })??;
    gpu::ran_on(on_gpu);
    Ok(csr.into_arrays(py))
}

/// Which structure a non-periodic search of these points and radius
/// uses, ``"grid"`` or ``"hash"``: for tests. Not part of the API.
#[pyfunction]
pub(crate) fn _neighbor_structure(points: &Bound<'_, PyAny>, r: f64) -> PyResult<&'static str> {
    let input = input(points, r, None)?;
    Ok(match structure(&input.points, input.r) {
        Structure::Grid => "grid",
        Structure::Hash => "hash",
    })
}
