//! `overlap_pairs`: every overlapping pair of a set of boxes, found by the
//! grid tree on the job system; and the hidden timing helper that measures
//! what the Python layer adds to it.

use crate::convert::{Coords, boxes, pairs_array};
use crate::gpu::{self, Backend};
use crate::order::pairs_ordered;
use crate::threads::{detached, failed, job_system};
use broadphase::tree::GridTree;
use numpy::PyArray2;
use pyo3::prelude::*;
use std::time::Instant;

/// Every pair of overlapping boxes.
///
/// Parameters
/// ----------
/// mins, maxs : ndarray, shape (n, 3) or (n, 2), float32 or float64
///     The boxes' corners. Boxes must be finite with ``mins <= maxs``;
///     a zero-size box (a point) is fine. Overlap is inclusive: boxes
///     whose faces, edges or corners touch overlap. float64 corners are
///     rounded outward to float32 (mins down, maxs up), so no overlapping
///     pair is lost; boxes apart by less than a float32 step may be
///     reported too.
/// threads : int, optional
///     Threads to run on, the calling one included: None (the default) is
///     one, 0 is one per core. The result does not depend on it.
/// sort : bool, optional
///     False (the default) keeps the grid's order, the same for the same
///     input on any thread count; True orders the rows by ``(i, j)``.
/// backend : {"cpu", "gpu", "auto"}, optional
///     Where the search runs. "cpu" (the default): the grid tree above.
///     "gpu": the GPU backend (a grid of the boxes' min corners on a
///     Vulkan device), exactly the CPU's pairs, always in ``(i, j)``
///     order; it ignores ``threads`` and ``sort``. It suits boxes of
///     similar sizes (one huge box or far outliers make its cells wide and
///     slow, never wrong), and raises ``GpuUnavailable`` where this build
///     has no GPU backend or no adapter is found. "auto": the GPU where
///     "gpu" would run, the CPU otherwise, silently; ``last_backend()``
///     says which ran.
///
/// Returns
/// -------
/// ndarray, shape (m, 2), uint32
///     Each overlapping pair once, as ``(i, j)`` with ``i < j``.
///
/// Raises
/// ------
/// ValueError
///     For a wrong shape or dtype, a bad ``backend``, or the first box
///     with a NaN or infinite coordinate, ``min > max``, or a coordinate
///     beyond float32, naming its index.
/// GpuUnavailable
///     For ``backend="gpu"`` where there is no GPU backend (a
///     ``RuntimeError``).
///
/// Examples
/// --------
/// >>> import numpy as np, broadphase
/// >>> mins = np.array([[0, 0, 0], [1, 1, 1], [5, 5, 5]], dtype=np.float32)
/// >>> broadphase.overlap_pairs(mins, mins + 1)
/// array([[0, 1]], dtype=uint32)
#[pyfunction]
#[pyo3(signature = (mins, maxs, threads = None, sort = false, backend = "cpu"))]
pub(crate) fn overlap_pairs<'py>(
    py: Python<'py>,
    mins: &Bound<'py, PyAny>,
    maxs: &Bound<'py, PyAny>,
    threads: Option<i64>,
    sort: bool,
    backend: &str,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let backend = Backend::parse(backend)?;
    let jobs = job_system(threads)?;
    let boxes = boxes(&Coords::extract(mins, "mins")?, &Coords::extract(maxs, "maxs")?, "box")?;
    let on_gpu = gpu::use_gpu(backend, boxes.len(), None)?;
    let pairs = detached(py, move || -> PyResult<Vec<[u32; 2]>> {
        if on_gpu {
            return gpu::overlap_pairs(&boxes);
        }
        let mut pairs = crate::pool::take();
        GridTree::default().try_find_pairs(&jobs, &boxes, &mut pairs).map_err(failed)?;
        Ok(pairs_ordered(pairs, boxes.len(), sort))
    })??;
    gpu::ran_on(on_gpu);
    pairs_array(py, pairs)
}

/// What `overlap_pairs` spends inside Rust, for measuring the Python
/// layer's share of a call: runs it `repeats` times on boxes converted
/// once, and returns the seconds of each run's grid-tree call and of each
/// run's sort. Not part of the API.
#[pyfunction]
#[pyo3(signature = (mins, maxs, repeats, threads = None))]
pub(crate) fn _time_overlap_pairs(
    py: Python<'_>,
    mins: &Bound<'_, PyAny>,
    maxs: &Bound<'_, PyAny>,
    repeats: usize,
    threads: Option<i64>,
) -> PyResult<(Vec<f64>, Vec<f64>)> {
    let jobs = job_system(threads)?;
    let boxes = boxes(&Coords::extract(mins, "mins")?, &Coords::extract(maxs, "maxs")?, "box")?;
    detached(py, move || -> PyResult<(Vec<f64>, Vec<f64>)> {
        let (mut find, mut sort) = (Vec::new(), Vec::new());
        for _ in 0..repeats {
            let start = Instant::now();
            let mut pairs = Vec::new();
            GridTree::default().try_find_pairs(&jobs, &boxes, &mut pairs).map_err(failed)?;
            find.push(start.elapsed().as_secs_f64());
            let start = Instant::now();
            let sorted = pairs_ordered(pairs, boxes.len(), true);
            sort.push(start.elapsed().as_secs_f64());
            drop(sorted);
        }
        Ok((find, sort))
    })?
}
