//! What `broadphase.dask` needs of the crates' regions: cuts from a
//! sample, where each point or box goes, and which region owns a box pair.
//! Hidden helpers, not part of the API. They see one chunk at a time, so
//! their errors name the chunk's own rows; the dask layer renames them to
//! rows of the whole input.

use crate::convert::{Coords, boxes, show32};
use crate::neighbors::domain;
use crate::threads::{detached, failed};
use broadphase::neighbors::PeriodicError;
use broadphase::regions::{Assignment, RegionError, Regions};
use broadphase::storage::Axis;
use numpy::{PyArray1, PyReadonlyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The regions of three cut lists (x, y, z), as the dask layer passes
/// them around.
fn regions_of(cuts: [Vec<f32>; 3]) -> PyResult<Regions> {
    Regions::new(cuts).map_err(region_error)
}

fn region_error(error: RegionError) -> PyErr {
    match error {
        RegionError::Periodic(PeriodicError::OutsideDomain { index, axis, value }) => {
            PyValueError::new_err(format!(
                "point {index}: points[{index}, {}] = {} is outside the periodic box",
                axis as usize,
                show32(value)
            ))
        }
        RegionError::Periodic(PeriodicError::RadiusAboveHalfBox { radius, axis, half }) => {
            PyValueError::new_err(format!(
                "r = {} exceeds half the periodic box along axis {} ({})",
                show32(radius),
                axis as usize,
                show32(half)
            ))
        }
        other => PyValueError::new_err(other.to_string()),
    }
}

/// `count` regions cut from a sample of points (or box centers): slabs
/// along the axis the sample spreads widest, at its quantiles. Returns
/// the cuts per axis. Not part of the API.
#[pyfunction]
pub(crate) fn _region_cuts<'py>(
    py: Python<'py>,
    sample: &Bound<'py, PyAny>,
    count: usize,
) -> PyResult<Vec<Bound<'py, PyArray1<f32>>>> {
    let sample = Coords::extract(sample, "sample")?.points("point")?;
    let regions = Regions::from_sample(&sample, count).map_err(region_error)?;
    Ok(Axis::ALL.iter().map(|&a| PyArray1::from_slice(py, regions.cuts(a))).collect())
}

/// The arrays of an assignment: home region per row, then every region
/// of each row as CSR (`indptr` int64, `regions` uint32).
type AssignmentArrays<'py> =
    (Bound<'py, PyArray1<u32>>, Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<u32>>);

fn arrays<'py>(py: Python<'py>, assignment: &Assignment) -> AssignmentArrays<'py> {
    (
        PyArray1::from_slice(py, assignment.homes()),
        PyArray1::from_iter(py, assignment.offsets().iter().map(|&o| o as i64)),
        PyArray1::from_slice(py, assignment.regions()),
    )
}

/// Each point's home region and every region within `r` of it (wrapping
/// with `periodic`). Not part of the API.
#[pyfunction]
#[pyo3(signature = (points, cuts, r, periodic = None))]
pub(crate) fn _point_regions<'py>(
    py: Python<'py>,
    points: &Bound<'py, PyAny>,
    cuts: [Vec<f32>; 3],
    r: f32,
    periodic: Option<&Bound<'py, PyAny>>,
) -> PyResult<AssignmentArrays<'py>> {
    let coords = Coords::extract(points, "points")?;
    let domain = periodic.map(|p| domain(p, coords.dims())).transpose()?;
    let points = coords.points("point")?;
    let regions = regions_of(cuts)?;
    let mut assignment = Assignment::default();
    detached(py, || regions.assign_points(&points, r, domain.as_ref(), &mut assignment))?
        .map_err(region_error)?;
    Ok(arrays(py, &assignment))
}

/// Each box's home region (that of its min corner) and every region it
/// overlaps. Not part of the API.
#[pyfunction]
pub(crate) fn _box_regions<'py>(
    py: Python<'py>,
    mins: &Bound<'py, PyAny>,
    maxs: &Bound<'py, PyAny>,
    cuts: [Vec<f32>; 3],
) -> PyResult<AssignmentArrays<'py>> {
    let boxes = boxes(&Coords::extract(mins, "mins")?, &Coords::extract(maxs, "maxs")?, "box")?;
    let regions = regions_of(cuts)?;
    let mut assignment = Assignment::default();
    detached(py, || regions.assign_boxes(&boxes, &mut assignment))?.map_err(region_error)?;
    Ok(arrays(py, &assignment))
}

/// The region owning each overlapping pair `(a, b)` of rows of `mins`,
/// `maxs`: the home of the low corner of their intersection. Not part of
/// the API.
#[pyfunction]
pub(crate) fn _box_pair_owners<'py>(
    py: Python<'py>,
    mins: &Bound<'py, PyAny>,
    maxs: &Bound<'py, PyAny>,
    pairs: PyReadonlyArray2<'py, u32>,
    cuts: [Vec<f32>; 3],
) -> PyResult<Bound<'py, PyArray1<u32>>> {
    let boxes = boxes(&Coords::extract(mins, "mins")?, &Coords::extract(maxs, "maxs")?, "box")?;
    let regions = regions_of(cuts)?;
    let pairs = pairs.as_array();
    if pairs.ncols() != 2 {
        return Err(PyValueError::new_err("pairs must have shape (m, 2)"));
    }
    let mut owners = Vec::with_capacity(pairs.nrows());
    for pair in pairs.rows() {
        let (a, b) = (pair[0] as usize, pair[1] as usize);
        let (Some(box_a), Some(box_b)) = (boxes.get(a), boxes.get(b)) else {
            return Err(PyValueError::new_err(format!(
                "pair ({a}, {b}) names a row past the {} boxes",
                boxes.len()
            )));
        };
        owners.push(regions.box_pair_owner(box_a, box_b).map_err(failed)?);
    }
    Ok(PyArray1::from_vec(py, owners))
}
