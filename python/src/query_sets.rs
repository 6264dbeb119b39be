//! `neighbors_of`: the points within `r` of each of a set of query
//! points, or of each point of a subset, from the neighbor crate's query
//! sets (`neighbors_of`, filled on the job system).

use crate::convert::{Coords, bad_row, ids};
use crate::neighbors::{CallerRows, Input, point_error, radius, with_structure};
use crate::order::{Csr, Index, RowSource, build_csr};
use crate::threads::{detached, failed, job_system};
use broadphase::JobSystem;
use broadphase::glam::Vec3;
use broadphase::neighbors::{FillError, NeighborLists, NeighborSearch, ParallelNeighborLists};
use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Rows of a subset's neighbors: each query is a point of the data, and
/// its row leaves that point out, as `neighbor_lists` does.
struct SubsetRows<'a> {
    lists: &'a NeighborLists,
    subset: &'a [u32],
}

impl SubsetRows<'_> {
    /// Row `row` and where its own point sits in it (rows are ascending,
    /// and a point is always within `r` of itself).
    fn row(&self, row: usize) -> (&[u32], Option<usize>) {
        let entries = self.lists.neighbors(row);
        (entries, entries.binary_search(&self.subset[row]).ok())
    }
}

impl RowSource for SubsetRows<'_> {
    fn rows(&self) -> usize {
        self.lists.len()
    }
    fn row_len(&self, row: usize) -> usize {
        let (entries, own) = self.row(row);
        entries.len() - usize::from(own.is_some())
    }
    fn write_row<I: Index>(&self, row: usize, out: &mut [I]) {
        let (entries, own) = self.row(row);
        let others = entries.iter().enumerate().filter(|&(at, _)| Some(at) != own).map(|(_, &e)| e);
        for (o, e) in out.iter_mut().zip(others) {
            *o = I::of(e as usize);
        }
    }
}

fn fill_error(error: FillError) -> PyErr {
    match error {
        FillError::Point(e) => point_error(e),
        other => failed(other),
    }
}

/// The rows of `queries` among the points `search` holds, on `jobs`.
fn rows_of<S: NeighborSearch + Sync>(
    jobs: &JobSystem,
    search: &S,
    queries: &[Vec3],
    r: f32,
) -> PyResult<NeighborLists> {
    let mut lists = NeighborLists::default();
    ParallelNeighborLists::default()
        .fill_queries(jobs, search, queries, r, &mut lists)
        .map_err(fill_error)?;
    Ok(lists)
}

/// The points within distance ``r`` of each query, as CSR rows.
///
/// Parameters
/// ----------
/// points : ndarray, shape (n, 3) or (n, 2), float32 or float64
///     The points searched, as for ``neighbor_pairs`` (float64 rounded to
///     the nearest float32).
/// queries : ndarray
///     Either query points of shape ``(m, dims)`` (float32 or float64,
///     rounded as ``points``): row ``k`` lists every point within ``r`` of
///     ``queries[k]``, a point at the same place included. Or a 1-D
///     integer array of indices into ``points`` (a subset, repeats
///     allowed): row ``k`` lists the neighbors of point ``queries[k]``
///     other than itself, the row ``neighbor_lists`` gives it.
/// r : float
///     The radius, as for ``neighbor_pairs``: inclusive, the same float32
///     rule (``dx*dx + dy*dy + dz*dz <= r*r`` from left to right).
/// threads : int, optional
///     As for ``neighbor_pairs``; the result does not depend on it.
///
/// Returns
/// -------
/// indptr, indices : ndarray
///     One row per query: the indices into ``points`` of its neighbors are
///     ``indices[indptr[k]:indptr[k + 1]]``, ascending. int32 when every
///     value fits (int64 otherwise).
///
/// Raises
/// ------
/// ValueError
///     For a wrong shape or dtype, a bad ``r``, the first point or query
///     that is not finite, or the first index outside ``points``.
///
/// Examples
/// --------
/// >>> import numpy as np, broadphase
/// >>> points = np.array([[0, 0], [1, 0], [5, 0]], dtype=np.float32)
/// >>> broadphase.neighbors_of(points, np.array([[0.5, 0], [9, 9]]), 1.0)
/// (array([0, 2, 2], dtype=int32), array([0, 1], dtype=int32))
/// >>> broadphase.neighbors_of(points, np.array([1, 2]), 1.0)
/// (array([0, 1, 1], dtype=int32), array([0], dtype=int32))
#[pyfunction]
#[pyo3(signature = (points, queries, r, threads = None))]
pub(crate) fn neighbors_of<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
    queries: &Bound<'py, PyAny>,
    r: f64,
    threads: Option<i64>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let jobs = job_system(threads)?;
    let coords = Coords::extract(points, "points")?;
    let r = radius(r)?;
    let data = coords.checked_points("point")?;
    let subset = match queries.cast::<PyUntypedArray>() {
        Ok(array) if array.ndim() == 1 => Some(subset_of(queries, data.len())?),
        _ => None,
    };
    let queries = match &subset {
        Some(subset) => subset.iter().map(|&i| data[i as usize]).collect(),
        None => {
            let queries = Coords::extract(queries, "queries")?;
            if queries.dims() != coords.dims() {
                return Err(PyValueError::new_err(format!(
                    "queries has {} columns but points has {}",
                    queries.dims(),
                    coords.dims()
                )));
            }
            queries.points("query")?
        }
    };
    let input = Input { points: data, r, domain: None };
    let csr = detached(py, move || -> PyResult<Csr> {
        let lists = with_structure(
            &jobs,
            &input,
            |grid| rows_of(&jobs, grid, &queries, r),
            |hash| rows_of(&jobs, hash, &queries, r),
        )?;
        let n = input.points.len();
        match &subset {
            Some(subset) => build_csr(&jobs, &SubsetRows { lists: &lists, subset }, n, false),
            None => build_csr(&jobs, &CallerRows(&lists), n, false),
        }
    })??;
    Ok(csr.into_arrays(py))
}

/// A subset of `n` points: indices in `0..n`.
fn subset_of(obj: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<u32>> {
    let last = u32::try_from(n.saturating_sub(1)).unwrap_or(u32::MAX);
    let subset = ids(obj, "queries", "query", last)?;
    if n == 0
        && let Some(&first) = subset.first()
    {
        return Err(bad_row("query", 0, format!("queries[0] = {first} but points is empty")));
    }
    Ok(subset)
}
