//! `Grid`: a set of boxes indexed once by the kernel's grid, then asked
//! batches of box, point, sphere and ray queries on the job system.

use crate::convert::{Coords, boxes};
use crate::order::{Index, RowSource, build_csr};
use crate::shapes::{FirstHitArrays, RayHitArrays, grid_rays_hits, rays_from, spheres};
use crate::threads::{detached, failed, job_system};
use broadphase::AdaptiveGrid;
use broadphase::query::{BatchHits, cast_rays};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// A set of boxes indexed once, for many batches of queries.
///
/// Parameters
/// ----------
/// mins, maxs : ndarray, shape (n, 3) or (n, 2), float32 or float64
///     The boxes' corners, under the rules of ``overlap_pairs`` (float64
///     rounded outward to float32). Queries must have the same number of
///     columns.
///
/// Every query returns the boxes it touches, faces, edges and corners
/// included. Box, point and sphere queries return a CSR table ``(indptr,
/// indices)``: the hits of query ``k`` are
/// ``indices[indptr[k]:indptr[k + 1]]``, ascending (``rays_hits``: nearest
/// first, with each hit's ``t``). Both arrays are int32
/// when every value fits (int64 otherwise), as ``scipy.sparse.csr_array``
/// takes them without a copy.
///
/// Examples
/// --------
/// >>> import numpy as np, broadphase
/// >>> mins = np.array([[0, 0], [2, 0]], dtype=np.float32)
/// >>> grid = broadphase.Grid(mins, mins + 1)
/// >>> grid.query_points(np.array([[0.5, 0.5], [1.5, 0.5]]))
/// (array([0, 1, 1], dtype=int32), array([0], dtype=int32))
#[pyclass(module = "broadphase", frozen)]
#[derive(Debug)]
pub(crate) struct Grid {
    grid: AdaptiveGrid,
    dims: usize,
}

/// The rows of a batch's answer.
struct HitRows<'a>(&'a BatchHits);

impl RowSource for HitRows<'_> {
    fn rows(&self) -> usize {
        self.0.len()
    }
    fn row_len(&self, row: usize) -> usize {
        self.0.hits(row).len()
    }
    fn write_row<I: Index>(&self, row: usize, out: &mut [I]) {
        for (o, &id) in out.iter_mut().zip(self.0.hits(row)) {
            *o = I::of(id as usize);
        }
    }
}

impl Grid {
    fn check_dims(&self, coords: &Coords<'_>, name: &str) -> PyResult<()> {
        if coords.dims() == self.dims {
            return Ok(());
        }
        Err(PyValueError::new_err(format!(
            "{name} has {} columns but the grid was built from boxes of {}",
            coords.dims(),
            self.dims
        )))
    }

    /// The rays of `origins`, `dirs` and `max_t`, checked (as
    /// ``cast_rays`` documents) and of this structure's columns.
    fn rays_of(
        &self,
        origins: &Bound<'_, PyAny>,
        dirs: &Bound<'_, PyAny>,
        max_t: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Vec<broadphase::query::Ray>> {
        rays_from(origins, dirs, max_t, |origins| self.check_dims(origins, "origins"))
    }
}

#[pymethods]
impl Grid {
    #[new]
    fn new(py: Python<'_>, mins: &Bound<'_, PyAny>, maxs: &Bound<'_, PyAny>) -> PyResult<Self> {
        let (mins, maxs) = (Coords::extract(mins, "mins")?, Coords::extract(maxs, "maxs")?);
        let dims = mins.dims();
        let boxes = boxes(&mins, &maxs, "box")?;
        let grid = detached(py, move || {
            let mut grid = AdaptiveGrid::default();
            grid.build(&boxes).map(|()| grid)
        })?
        .map_err(failed)?;
        Ok(Self { grid, dims })
    }

    /// The number of boxes.
    fn __len__(&self) -> usize {
        self.grid.len()
    }

    /// Columns of the boxes the grid was built from: 2 or 3.
    #[getter]
    fn dims(&self) -> usize {
        self.dims
    }

    fn __repr__(&self) -> String {
        format!("Grid(boxes={}, dims={})", self.grid.len(), self.dims)
    }

    /// The boxes each query box overlaps.
    ///
    /// Parameters
    /// ----------
    /// mins, maxs : ndarray, shape (m, dims), float32 or float64
    ///     The query boxes (float64 rounded outward, as for the grid).
    /// threads : int, optional
    ///     As for ``overlap_pairs``.
    ///
    /// Returns
    /// -------
    /// indptr, indices : ndarray
    ///     CSR rows, one per query, each ascending.
    #[pyo3(signature = (mins, maxs, threads = None))]
    fn query<'py>(
        &self,
        py: Python<'py>,
        mins: &Bound<'py, PyAny>,
        maxs: &Bound<'py, PyAny>,
        threads: Option<i64>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let jobs = job_system(threads)?;
        let (mins, maxs) = (Coords::extract(mins, "mins")?, Coords::extract(maxs, "maxs")?);
        self.check_dims(&mins, "mins")?;
        let queries = boxes(&mins, &maxs, "query box")?;
        let grid = &self.grid;
        let csr = detached(py, move || {
            let mut hits = BatchHits::default();
            hits.query_aabbs(&jobs, grid, &queries).map_err(failed)?;
            build_csr(&jobs, &HitRows(&hits), grid.len(), true)
        })??;
        Ok(csr.into_arrays(py))
    }

    /// The boxes that contain each point (faces included).
    ///
    /// Parameters
    /// ----------
    /// points : ndarray, shape (m, dims), float32 or float64
    ///     float64 points are rounded to the nearest float32; as the boxes
    ///     were rounded outward, a point inside a box stays inside it.
    /// threads : int, optional
    ///     As for ``overlap_pairs``.
    ///
    /// Returns
    /// -------
    /// indptr, indices : ndarray
    ///     CSR rows, one per point, each ascending.
    #[pyo3(signature = (points, threads = None))]
    fn query_points<'py>(
        &self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        threads: Option<i64>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let jobs = job_system(threads)?;
        let points = Coords::extract(points, "points")?;
        self.check_dims(&points, "points")?;
        let points = points.points("point")?;
        let grid = &self.grid;
        let csr = detached(py, move || {
            let mut hits = BatchHits::default();
            hits.query_points(&jobs, grid, &points).map_err(failed)?;
            build_csr(&jobs, &HitRows(&hits), grid.len(), true)
        })??;
        Ok(csr.into_arrays(py))
    }

    /// The boxes each sphere meets: those whose closest point lies within
    /// the radius of the center (touching counts).
    ///
    /// Parameters
    /// ----------
    /// centers : ndarray, shape (m, dims), float32 or float64
    ///     float64 centers are rounded to the nearest float32.
    /// radii : float or ndarray of shape (m,)
    ///     One radius for every sphere or one each; finite, not negative.
    ///     float64 is rounded up to float32, so no box is lost.
    /// threads : int, optional
    ///     As for ``overlap_pairs``.
    ///
    /// Returns
    /// -------
    /// indptr, indices : ndarray
    ///     CSR rows, one per sphere, each ascending.
    #[pyo3(signature = (centers, radii, threads = None))]
    fn query_spheres<'py>(
        &self,
        py: Python<'py>,
        centers: &Bound<'py, PyAny>,
        radii: &Bound<'py, PyAny>,
        threads: Option<i64>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let jobs = job_system(threads)?;
        let centers = Coords::extract(centers, "centers")?;
        self.check_dims(&centers, "centers")?;
        let spheres = spheres(&centers, radii)?;
        let grid = &self.grid;
        let csr = detached(py, move || {
            let mut hits = BatchHits::default();
            hits.query_spheres(&jobs, grid, &spheres).map_err(failed)?;
            build_csr(&jobs, &HitRows(&hits), grid.len(), true)
        })??;
        Ok(csr.into_arrays(py))
    }

    /// The first box each ray hits.
    ///
    /// A ray is the points ``origin + t * dir`` for ``t`` in ``[0,
    /// max_t]``; ``dir`` need not be unit length (``t`` is in units of
    /// it) and may be zero. A ray that starts inside a box hits it at
    /// ``t = 0``; grazing a face is a hit. Ties in ``t`` go to the lower
    /// index.
    ///
    /// Parameters
    /// ----------
    /// origins, dirs : ndarray, shape (m, dims), float32 or float64
    ///     float64 values are rounded to the nearest float32.
    /// max_t : float or ndarray of shape (m,), optional
    ///     Where each ray ends, ``inf`` (the default) for no end; not NaN,
    ///     not negative. float64 is rounded up to float32.
    /// threads : int, optional
    ///     As for ``overlap_pairs``.
    ///
    /// Returns
    /// -------
    /// index : ndarray, shape (m,), int64
    ///     The box hit first, -1 where none.
    /// t : ndarray, shape (m,), float32
    ///     Where the ray enters it, ``inf`` where none.
    #[pyo3(signature = (origins, dirs, max_t = None, threads = None))]
    fn cast_rays<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        dirs: &Bound<'py, PyAny>,
        max_t: Option<&Bound<'py, PyAny>>,
        threads: Option<i64>,
    ) -> PyResult<FirstHitArrays<'py>> {
        let jobs = job_system(threads)?;
        let rays = self.rays_of(origins, dirs, max_t)?;
        let grid = &self.grid;
        let (index, t) = detached(py, move || -> PyResult<(Vec<i64>, Vec<f32>)> {
            let mut hits = Vec::new();
            cast_rays(&jobs, grid, &rays, &mut hits).map_err(failed)?;
            Ok(hits
                .iter()
                .map(|hit| hit.map_or((-1, f32::INFINITY), |(id, t)| (i64::from(id), t)))
                .unzip())
        })??;
        Ok((PyArray1::from_vec(py, index), PyArray1::from_vec(py, t)))
    }

    /// Every box each ray hits, with where it enters each.
    ///
    /// Takes the arguments of ``cast_rays`` (same rays, same rounding,
    /// same inclusive test): a ray hits every box it meets for ``t`` in
    /// ``[0, max_t]``, the one it starts in at ``t = 0``, the ones whose
    /// face it grazes too.
    ///
    /// Returns
    /// -------
    /// indptr, indices : ndarray
    ///     CSR rows, one per ray: the boxes ray ``k`` hits are
    ///     ``indices[indptr[k]:indptr[k + 1]]``, nearest first (by ``t``,
    ///     ties by index), each box once; int32 when every value fits
    ///     (int64 otherwise).
    /// t : ndarray, shape (len(indices),), float32
    ///     Where the ray enters each of those boxes: ``t[indptr[k] +
    ///     m]`` belongs to ``indices[indptr[k] + m]``, ascending within a
    ///     row. A row's first entry is ``cast_rays``' answer. A box so far
    ///     that ``t`` exceeds the float32 range is hit at ``inf``.
    ///
    /// Examples
    /// --------
    /// >>> import numpy as np, broadphase
    /// >>> mins = np.array([[2, -1, -1], [5, -1, -1]], dtype=np.float32)
    /// >>> grid = broadphase.Grid(mins, mins + [1, 2, 2])
    /// >>> grid.rays_hits(np.zeros((1, 3)), np.array([[1.0, 0, 0]]))
    /// (array([0, 2], dtype=int32), array([0, 1], dtype=int32), array([2., 5.], dtype=float32))
    #[pyo3(signature = (origins, dirs, max_t = None, threads = None))]
    fn rays_hits<'py>(
        &self,
        py: Python<'py>,
        origins: &Bound<'py, PyAny>,
        dirs: &Bound<'py, PyAny>,
        max_t: Option<&Bound<'py, PyAny>>,
        threads: Option<i64>,
    ) -> PyResult<RayHitArrays<'py>> {
        let jobs = job_system(threads)?;
        let rays = self.rays_of(origins, dirs, max_t)?;
        let grid = &self.grid;
        let rows = detached(py, move || grid_rays_hits(&jobs, grid, &rays))??;
        Ok(rows.into_arrays(py))
    }
}
