//! `sphere_pairs`: every pair of touching spheres, whatever the spread of
//! their radii, from the neighbor crate's multi-level grid.

use crate::convert::{Coords, RowError, bad_row, first_bad_row, lengths, pairs_array, show32};
use crate::gpu::{self, Backend};
use crate::neighbors::point_error;
use crate::order::pairs_ordered;
use crate::threads::detached;
use broadphase::neighbors::{MAX_RADIUS, MultiLevelGrid};
use numpy::{PyArray2, PyUntypedArray};
use pyo3::prelude::*;

/// The largest sphere radius: two of them summed and squared still fit
/// float32, as the crate requires.
const MAX_SPHERE_RADIUS: f32 = MAX_RADIUS / 2.0;

/// `radii`, or the error of the first above [`MAX_SPHERE_RADIUS`].
fn within_limit(radii: Vec<f32>, per_sphere: bool) -> Result<Vec<f32>, RowError> {
    match radii.iter().position(|&r| r > MAX_SPHERE_RADIUS) {
        None => Ok(radii),
        Some(row) => {
            let at = if per_sphere { format!("radii[{row}]") } else { "radii".to_owned() };
            let error = bad_row(
                "sphere",
                row,
                format!(
                    "{at} = {} is above {MAX_SPHERE_RADIUS:e}, the largest sphere radius",
                    show32(radii[row])
                ),
            );
            Err(RowError::new(row, error))
        }
    }
}

/// Every pair of spheres that touch: ``distance <= r_i + r_j``.
///
/// Radii may spread over orders of magnitude (pebbles beside boulders):
/// the spheres are sorted into levels of radii within a factor 4 of each
/// other, each level a grid sized for its own spheres (the crate's
/// ``MultiLevelGrid``), so a small sphere never scans cells sized for the
/// largest.
///
/// Parameters
/// ----------
/// centers : ndarray, shape (n, 3) or (n, 2), float32 or float64
///     Finite coordinates; float64 is rounded to the nearest float32.
/// radii : float or ndarray of shape (n,)
///     One radius for every sphere or one each, in ``0 ..= 5e18`` (the sum
///     of two, squared, must fit float32); float64 is rounded up to
///     float32, so a sphere never shrinks.
/// sort : bool, optional
///     False (the default) keeps the search's own order, the same for the
///     same input; True orders the rows by ``(i, j)``.
/// backend : {"cpu", "gpu", "auto"}, optional
///     Where the search runs. "cpu" (the default): the multi-level grid.
///     "gpu": the GPU backend (one grid of cells twice the largest radius
///     on a Vulkan device, so it suits radii of similar sizes), exactly
///     the CPU's pairs, always in ``(i, j)`` order; it ignores ``sort``
///     and needs every radius ``>= 2**-30``. It raises ``GpuUnavailable``
///     where this build has no GPU backend or no adapter is found.
///     "auto": the GPU where "gpu" would run, the CPU otherwise, silently;
///     ``last_backend()`` says which ran.
///
/// Inclusive and exact on the float32 values, as the crate's brute force
/// (``brute_force_sphere_contacts``): ``i`` and ``j`` touch when
/// ``dx*dx + dy*dy + dz*dz <= t*t`` with ``t = r_i + r_j``, all in
/// float32 from left to right with no fused multiply-add. Runs on the
/// calling thread (the crate has no parallel entry point for it), with
/// the GIL released.
///
/// Returns
/// -------
/// ndarray, shape (m, 2), uint32
///     Each touching pair once, as ``(i, j)`` with ``i < j``.
///
/// Raises
/// ------
/// ValueError
///     For a wrong shape or dtype, a bad ``backend``, or the first sphere
///     with a coordinate that is not finite or a radius that is NaN,
///     negative, infinite or above ``5e18``, naming its index.
/// GpuUnavailable
///     For ``backend="gpu"`` where there is no GPU backend (a
///     ``RuntimeError``).
///
/// Examples
/// --------
/// >>> import numpy as np, broadphase
/// >>> centers = np.array([[0, 0, 0], [10.05, 0, 0], [10.3, 0, 0]])
/// >>> broadphase.sphere_pairs(centers, np.array([10, 0.1, 0.1]))
/// array([[0, 1]], dtype=uint32)
#[pyfunction]
#[pyo3(signature = (centers, radii, sort = false, backend = "cpu"))]
pub(crate) fn sphere_pairs<'py>(
    py: Python<'py>,
    centers: &Bound<'py, PyAny>,
    radii: &Bound<'py, PyAny>,
    sort: bool,
    backend: &str,
) -> PyResult<Bound<'py, PyArray2<u32>>> {
    let backend = Backend::parse(backend)?;
    let centers = Coords::extract(centers, "centers")?;
    let n = centers.len();
    let per_sphere = radii.cast::<PyUntypedArray>().is_ok();
    let radii = lengths(radii, n, "radii", "sphere", true)?
        .and_then(|radii| within_limit(radii, per_sphere));
    let (centers, radii, ()) = first_bad_row(centers.points_by_row("sphere"), radii, Ok(()))?;
    let smallest = radii.iter().copied().reduce(f32::min);
    let on_gpu = gpu::use_gpu(backend, n, smallest)?;
    let pairs = detached(py, move || -> PyResult<Vec<[u32; 2]>> {
        if on_gpu {
            return gpu::sphere_contacts(&centers, &radii);
        }
        let mut grid = MultiLevelGrid::default();
        grid.build_spheres(&centers, &radii).map_err(point_error)?;
        let mut pairs = crate::pool::take();
        grid.contacts(&mut pairs);
        Ok(pairs_ordered(pairs, n, sort))
    })??;
    gpu::ran_on(on_gpu);
    pairs_array(py, pairs)
}
