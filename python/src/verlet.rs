//! `VerletLists`: the neighbor crate's skin lists, built within `r + skin`
//! and reused across the steps of a simulation while no point has moved
//! more than `skin / 2`.

use crate::convert::{Coords, show};
use crate::neighbors::{CallerRows, Structure, point_error, radius, structure_of};
use crate::order::{Csr, build_csr};
use crate::threads::{detached, failed, job_system};
use broadphase::glam::Vec3;
use broadphase::neighbors::{
    self, CountingSortGrid, MAX_RADIUS, NeighborLists, SpatialHash, VerletError,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Neighbor lists within ``r``, reused from one step of a simulation to
/// the next (Verlet lists).
///
/// The lists are built with ``r + skin``. Two points within ``r`` now
/// moved at most ``skin / 2`` each since the build, so they were within
/// ``r + skin`` then: while no point has moved more than ``skin / 2``,
/// the kept lists filtered to ``r`` at the current positions are exactly
/// ``neighbor_lists(points, r)``, and a step costs a filter instead of a
/// search.
///
/// Each step, call ``update(points)`` (it rebuilds only when a point moved
/// too far, or the point count changed, and says whether it did), then
/// ``neighbor_lists(points)``. ``needs_rebuild(points)`` asks without
/// rebuilding. A point's index is its row in ``points``, the same every
/// step.
///
/// Parameters
/// ----------
/// r : float
///     The radius, as for ``neighbor_pairs`` (rounded to the nearest
///     float32; the same inclusive float32 rule).
/// skin : float
///     How far beyond ``r`` the lists reach, finite, ``>= 0``, rounded to
///     the nearest float32, with ``r + skin <= 1e19``. A larger skin
///     rebuilds less often and filters longer lists.
///
/// Moves are measured in float64 against ``skin / 2`` less a margin for
/// the float32 rounding of the distance test, so a point that moved
/// exactly ``skin / 2`` already rebuilds. Builds and filters run on the
/// calling thread (the crate has no parallel entry point for them), with
/// the GIL released. One call at a time: a second thread's call during
/// one raises ``RuntimeError``.
///
/// Examples
/// --------
/// >>> import numpy as np, broadphase
/// >>> points = np.array([[0, 0, 0], [1.2, 0, 0], [5, 0, 0]], dtype=np.float32)
/// >>> lists = broadphase.VerletLists(1.0, 0.5)
/// >>> lists.update(points)
/// True
/// >>> points[1, 0] = 1.0  # moved 0.2 < skin / 2: the lists still hold
/// >>> lists.update(points)
/// False
/// >>> lists.neighbor_lists(points)
/// (array([0, 1, 2, 2], dtype=int32), array([1, 0], dtype=int32))
#[pyclass(module = "broadphase")]
#[derive(Debug)]
pub(crate) struct VerletLists {
    lists: neighbors::VerletLists,
    /// The structures a build searches with: the grid where cells of
    /// `r + skin` fit its budget, the hash otherwise (as `neighbor_lists`
    /// picks).
    grid: CountingSortGrid,
    hash: SpatialHash,
    /// Columns of the points of the last build.
    dims: Option<usize>,
    rebuilds: u64,
}

/// Why the kept lists cannot answer for some points.
fn verlet_error(error: VerletError) -> PyErr {
    match error {
        VerletError::Point(e) => point_error(e),
        VerletError::CountChanged { built, now } => PyValueError::new_err(format!(
            "points has {now} rows but the lists were built for {built}: call update(points)"
        )),
        VerletError::NotBuilt => {
            PyValueError::new_err("the lists were never built: call update(points) first")
        }
        other => failed(other),
    }
}

impl VerletLists {
    /// `points` as float32 points, checking the columns against the last
    /// build's.
    fn points(&self, points: &Bound<'_, PyAny>) -> PyResult<(Vec<Vec3>, usize)> {
        let coords = Coords::extract(points, "points")?;
        if let Some(dims) = self.dims
            && dims != coords.dims()
        {
            return Err(PyValueError::new_err(format!(
                "points has {} columns but the lists were built from points of {dims}",
                coords.dims()
            )));
        }
        Ok((coords.points("point")?, coords.dims()))
    }

    /// Builds the lists for `points` with the structure they suit.
    fn build(&mut self, py: Python<'_>, points: Vec<Vec3>, dims: usize) -> PyResult<()> {
        let Self { lists, grid, hash, .. } = self;
        let reach = lists.radius() + lists.skin();
        detached(py, move || match structure_of(&points, reach) {
            Structure::Grid => lists.rebuild(grid, &points),
            Structure::Hash => lists.rebuild(hash, &points),
        })?
        .map_err(verlet_error)?;
        self.dims = Some(dims);
        self.rebuilds += 1;
        Ok(())
    }

    /// Whether the kept lists answer exactly for `points`: built, for as
    /// many points, none of which moved too far.
    fn holds(&self, py: Python<'_>, points: &[Vec3]) -> PyResult<bool> {
        let lists = &self.lists;
        match detached(py, move || lists.is_valid(points))? {
            Ok(valid) => Ok(valid),
            Err(VerletError::NotBuilt | VerletError::CountChanged { .. }) => Ok(false),
            Err(other) => Err(verlet_error(other)),
        }
    }
}

#[pymethods]
impl VerletLists {
    #[new]
    fn new(r: f64, skin: f64) -> PyResult<Self> {
        let r = radius(r)?;
        let bad_skin = || {
            PyValueError::new_err(format!(
                "skin must be a finite number >= 0 with r + skin <= {MAX_RADIUS:e}, got {}",
                show(skin)
            ))
        };
        if !(skin.is_finite() && skin >= 0.0) {
            return Err(bad_skin());
        }
        let lists = match neighbors::VerletLists::new(r, skin as f32) {
            Ok(lists) => lists,
            Err(VerletError::BadSkin { .. }) => return Err(bad_skin()),
            Err(other) => return Err(verlet_error(other)),
        };
        Ok(Self {
            lists,
            grid: CountingSortGrid::default(),
            hash: SpatialHash::default(),
            dims: None,
            rebuilds: 0,
        })
    }

    /// The radius neighbors are filtered to (as float32).
    #[getter]
    fn r(&self) -> f32 {
        self.lists.radius()
    }

    /// How far beyond ``r`` the lists reach (as float32).
    #[getter]
    fn skin(&self) -> f32 {
        self.lists.skin()
    }

    /// How many times the lists were built.
    #[getter]
    fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// Whether ``points`` need a rebuild: the lists were never built, the
    /// point count changed, or a point moved ``skin / 2`` or more since
    /// the build (less the rounding margin). Changes nothing.
    fn needs_rebuild(&self, py: Python<'_>, points: &Bound<'_, PyAny>) -> PyResult<bool> {
        let (points, _) = self.points(points)?;
        Ok(!self.holds(py, &points)?)
    }

    /// Rebuilds the lists if ``needs_rebuild(points)``; returns whether it
    /// did. A changed point count or column count rebuilds.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     For a wrong shape or dtype, or the first point that is not
    ///     finite, naming its index; the lists are then left unbuilt.
    fn update(&mut self, py: Python<'_>, points: &Bound<'_, PyAny>) -> PyResult<bool> {
        let coords = Coords::extract(points, "points")?;
        let dims = coords.dims();
        let points = coords.points("point")?;
        let stale = self.dims != Some(dims) || !self.holds(py, &points)?;
        if stale {
            self.build(py, points, dims)?;
        }
        Ok(stale)
    }

    /// Rebuilds the lists for ``points`` whether they need it or not.
    fn rebuild(&mut self, py: Python<'_>, points: &Bound<'_, PyAny>) -> PyResult<()> {
        let coords = Coords::extract(points, "points")?;
        let dims = coords.dims();
        self.build(py, coords.points("point")?, dims)
    }

    /// Every point's neighbors within ``r`` at ``points``, from the kept
    /// lists: the answer of ``neighbor_lists(points, r)``.
    ///
    /// Parameters
    /// ----------
    /// points : ndarray, shape (n, dims), float32 or float64
    ///     The current positions, as many as at the build.
    /// sort : bool, optional
    ///     True (the default): each row ascending; False: in the lists'
    ///     own order.
    ///
    /// Returns
    /// -------
    /// indptr, indices : ndarray
    ///     CSR rows, as ``neighbor_lists`` returns them.
    ///
    /// Raises
    /// ------
    /// ValueError
    ///     If the lists do not hold for ``points`` (never built, another
    ///     point count, or a point moved too far: call ``update`` first),
    ///     rather than give an answer that may miss pairs.
    #[pyo3(signature = (points, sort = true))]
    fn neighbor_lists<'py>(
        &mut self,
        py: Python<'py>,
        points: &Bound<'py, PyAny>,
        sort: bool,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
        let (points, _) = self.points(points)?;
        let jobs = job_system(None)?;
        let lists = &mut self.lists;
        let csr = detached(py, move || -> PyResult<Csr> {
            if !lists.is_valid(&points).map_err(verlet_error)? {
                return Err(PyValueError::new_err(
                    "a point moved skin / 2 or more since the lists were built: call \
                     update(points) first",
                ));
            }
            let mut rows = NeighborLists::default();
            lists.neighbors_within(&points, &mut rows).map_err(verlet_error)?;
            build_csr(&jobs, &CallerRows(&rows), points.len(), sort)
        })??;
        Ok(csr.into_arrays(py))
    }

    fn __repr__(&self) -> String {
        format!(
            "VerletLists(r={}, skin={}, rebuilds={})",
            self.lists.radius(),
            self.lists.skin(),
            self.rebuilds
        )
    }
}
