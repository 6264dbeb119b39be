//! The host's half of the search: the input checks and the grid's plan
//! (cell size, cells per axis), written into the shaders' `Params`.

use crate::error::GpuError;
use broadphase_neighbors::{Axis, MAX_RADIUS, PeriodicDomain, PeriodicError, PointError};
use broadphase_storage::{Aabb, InputError};
use glam::Vec3;

/// The smallest radius a GPU search accepts (`2⁻³⁰`, about `9.3e-10`).
///
/// Devices may flush subnormal `f32` values to zero, where the CPU keeps
/// them. A subnormal is below `2⁻¹²⁶`; with the squared radius at least
/// `2⁻⁶⁰`, such a value is far below half a unit in the last place of any
/// squared distance that could land near it, so flushing it cannot change
/// a sum that is compared with the radius, and the two answers agree.
pub const MIN_RADIUS: f32 = 1.0 / (1u64 << 30) as f32;

/// Cell size over radius. Cells computed in `f32` on the device may be off
/// by up to `2⁻⁷` of a cell (grids of at most [`MAX_CELLS_PER_AXIS`] cells
/// along an axis); with cells this much larger than the radius, two points
/// within the radius are never two cells apart, so 3×3×3 cells find them.
const CELL_OVER_RADIUS: f64 = 1.0625;

/// The most cells along one axis (bounds the rounding of a cell coordinate).
const MAX_CELLS_PER_AXIS: f64 = 65_535.0;

/// Cells larger than this put every point in one cell: `2 / cell` must stay
/// a normal `f32`.
const MAX_CELL: f64 = 1.329_228e36; // 2^120

/// The workgroup size of every pass.
pub(crate) const WG: u32 = 256;

/// The most workgroups one dispatch may have along x.
pub(crate) const MAX_GROUPS: u32 = 65_535;

/// The uniform of `common.wgsl`, byte for byte.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Params {
    pub(crate) half_lo: [f32; 3],
    pub(crate) r2: f32,
    pub(crate) inv2: [f32; 3],
    pub(crate) one: f32,
    pub(crate) dims: [u32; 3],
    pub(crate) n: u32,
    pub(crate) size: [f32; 3],
    pub(crate) wrap: u32,
    pub(crate) stride: u32,
    pub(crate) unused: [u32; 3],
}

/// The uniform of `scan.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct ScanParams {
    pub(crate) len: u32,
    pub(crate) blocks: u32,
    pub(crate) unused: [u32; 2],
}

impl ScanParams {
    pub(crate) fn of(len: u32) -> Self {
        Self { len, blocks: len.div_ceil(WG).max(1), unused: [0; 2] }
    }
}

/// Checks the radius and the points (first bad one by index, as the CPU
/// structures report it) and returns the points' bounds (`None` when empty).
pub(crate) fn validate(
    points: &[Vec3],
    radius: f32,
    max_points: usize,
) -> Result<Option<(Vec3, Vec3)>, PointError> {
    if !(MIN_RADIUS..=MAX_RADIUS).contains(&radius) {
        return Err(PointError::InvalidRadius { value: radius });
    }
    if points.len() > max_points {
        return Err(PointError::TooManyPoints { count: points.len() });
    }
    let Some(&first) = points.first() else { return Ok(None) };
    let (mut lo, mut hi) = (first, first);
    for (index, &p) in points.iter().enumerate() {
        if !p.is_finite() {
            let axis = Axis::ALL.into_iter().find(|&a| !p[a as usize].is_finite());
            let axis = axis.unwrap_or(Axis::X);
            return Err(PointError::NotFinite { index, axis, value: p[axis as usize] });
        }
        lo = lo.min(p);
        hi = hi.max(p);
    }
    Ok(Some((lo, hi)))
}

/// Plans the grid of `n` points in `lo..=hi` for `radius`: cells of at least
/// `CELL_OVER_RADIUS · radius`, grown until the grid has at most
/// `max(4096, 8n)` cells (and `max_cells`), so its memory stays linear.
pub(crate) fn plan(n: usize, lo: Vec3, hi: Vec3, radius: f32, max_cells: u32) -> Params {
    let mut params = plan_cells(n, lo, hi, f64::from(radius) * CELL_OVER_RADIUS, max_cells);
    params.r2 = radius * radius;
    params
}

/// The grid of cells at least `cell` wide (and more, for the budget) over
/// `lo..=hi`.
fn plan_cells(n: usize, lo: Vec3, hi: Vec3, mut cell: f64, max_cells: u32) -> Params {
    let extent = [0, 1, 2].map(|a| f64::from(hi[a]) - f64::from(lo[a]));
    let budget = (n as f64 * 8.0).max(4096.0).min(f64::from(max_cells));
    let mut dims = [1.0; 3];
    for _ in 0..400 {
        dims = extent.map(|e| (e / cell).floor() + 1.0);
        let count = dims[0] * dims[1] * dims[2];
        let widest = dims[0].max(dims[1]).max(dims[2]);
        if count <= budget && widest <= MAX_CELLS_PER_AXIS {
            break;
        }
        cell *= (count / budget).cbrt().max(widest / MAX_CELLS_PER_AXIS).max(1.01);
    }
    let (dims, inv2) = if cell > MAX_CELL {
        ([1; 3], [0.0; 3])
    } else {
        // One cell along an axis: every point in it (and 2 / cell may not be finite).
        let dims = dims.map(|d| d as u32);
        (dims, [0, 1, 2].map(|a| if dims[a] > 1 { (2.0 / cell) as f32 } else { 0.0 }))
    };
    Params {
        half_lo: (lo * 0.5).to_array(),
        r2: 0.0,
        inv2,
        one: 1.0,
        dims,
        n: n as u32,
        size: [0.0; 3],
        wrap: 0,
        stride: 3,
        unused: [0; 3],
    }
}

/// Checks a periodic search's input in the CPU's order (radius, points,
/// radius against half the box, points inside the box).
pub(crate) fn validate_periodic(
    domain: &PeriodicDomain,
    points: &[Vec3],
    radius: f32,
    max_points: usize,
) -> Result<bool, PeriodicError> {
    let bounds = validate(points, radius, max_points)?;
    let size = domain.size();
    for (axis, name) in Axis::ALL.into_iter().enumerate() {
        let half = size[axis] * 0.5;
        if domain.periodic()[axis] && radius > half {
            return Err(PeriodicError::RadiusAboveHalfBox { radius, axis: name, half });
        }
    }
    let (min, max) = (domain.min(), domain.max());
    for (index, p) in points.iter().enumerate() {
        for (axis, name) in Axis::ALL.into_iter().enumerate() {
            let value = p[axis];
            if value < min[axis] || value > max[axis] {
                return Err(PeriodicError::OutsideDomain { index, axis: name, value });
            }
        }
    }
    Ok(bounds.is_some())
}

/// Plans the grid of `n` points in `domain`: cells tile the box exactly on
/// every axis (so on a periodic one they wrap with it), each at least
/// `CELL_OVER_RADIUS` times the radius plus the rounding of the
/// nearest-image rule (a wrap adds the length: a few units in the last
/// place of the box's coordinates), at most `max(4096, 8n)` cells.
pub(crate) fn plan_periodic(
    n: usize,
    domain: &PeriodicDomain,
    radius: f32,
    max_cells: u32,
) -> Params {
    let (min, size) = (domain.min(), domain.size());
    let length = size.to_array().map(f64::from);
    let magnitude = [0, 1, 2]
        .map(|a| f64::from(min[a].abs().max(domain.max()[a].abs()).max(size[a])))
        .into_iter()
        .fold(0.0, f64::max);
    let rounding = 8.0 * magnitude / f64::from(1u32 << 23);
    let budget = (n as f64 * 8.0).max(4096.0).min(f64::from(max_cells));
    let mut cell = (f64::from(radius) + rounding) * CELL_OVER_RADIUS;
    let mut dims = [1.0; 3];
    for _ in 0..400 {
        dims = length.map(|l| (l / cell).floor().clamp(1.0, MAX_CELLS_PER_AXIS));
        if dims[0] * dims[1] * dims[2] <= budget {
            break;
        }
        cell *= (dims[0] * dims[1] * dims[2] / budget).cbrt().max(1.01);
    }
    let wrap = (0..3).filter(|&a| domain.periodic()[a]).map(|a| 1u32 << a).sum();
    Params {
        half_lo: (min * 0.5).to_array(),
        r2: radius * radius,
        // One cell along an axis: every point in it, whatever its coordinate.
        inv2: [0, 1, 2]
            .map(|a| if dims[a] > 1.0 { (2.0 * dims[a] / length[a]) as f32 } else { 0.0 }),
        one: 1.0,
        dims: dims.map(|d| d as u32),
        n: n as u32,
        size: size.to_array(),
        wrap,
        stride: 3,
        unused: [0; 3],
    }
}

/// Checks boxes as every CPU structure does (the first bad one by index)
/// and returns the bounds of their min corners and the widest extent along
/// any axis (`None` when empty).
pub(crate) fn validate_boxes(
    boxes: &[Aabb],
    max_boxes: usize,
) -> Result<Option<(Vec3, Vec3, f64)>, InputError> {
    if boxes.len() > max_boxes {
        return Err(InputError::TooManyBoxes { count: boxes.len() });
    }
    broadphase_storage::validate_boxes(boxes)?;
    let Some(first) = boxes.first() else { return Ok(None) };
    let (mut lo, mut hi, mut widest) = (first.min, first.min, 0.0f64);
    for b in boxes {
        lo = lo.min(b.min);
        hi = hi.max(b.min);
        for a in 0..3 {
            widest = widest.max(f64::from(b.max[a]) - f64::from(b.min[a]));
        }
    }
    Ok(Some((lo, hi, widest)))
}

/// Plans the grid of `n` boxes whose min corners lie in `lo..=hi`: cells
/// `CELL_OVER_RADIUS` times the widest box extent `widest` (two
/// overlapping boxes' min corners are at most that far apart per axis),
/// grown like [`plan`]'s. Boxes of no extent overlap only at one min
/// corner, in one cell whatever its size: the cells are then as small as
/// the budget allows.
pub(crate) fn plan_boxes(n: usize, lo: Vec3, hi: Vec3, widest: f64, max_cells: u32) -> Params {
    let span =
        [0, 1, 2].map(|a| f64::from(hi[a]) - f64::from(lo[a])).into_iter().fold(0.0, f64::max);
    let floor = (span / MAX_CELLS_PER_AXIS).max(f64::MIN_POSITIVE);
    let mut params = plan_cells(n, lo, hi, (widest * CELL_OVER_RADIUS).max(floor), max_cells);
    params.stride = 6;
    params
}

/// Checks spheres as the CPU does (lengths, then centers and radii in
/// index order: a bad radius before the first bad center comes first), then
/// the one thing the GPU refuses that the CPU takes, a radius below
/// [`MIN_RADIUS`]. Returns the centers' bounds and the largest radius
/// (`None` when empty).
pub(crate) fn validate_spheres(
    centers: &[Vec3],
    radii: &[f32],
    max_points: usize,
) -> Result<Option<(Vec3, Vec3, f32)>, GpuError> {
    if centers.len() != radii.len() {
        return Err(
            PointError::LengthMismatch { centers: centers.len(), radii: radii.len() }.into()
        );
    }
    // MIN_RADIUS is valid as a point search's radius: the centers' own
    // check, without its radius check.
    let bounds = match validate(centers, MIN_RADIUS, max_points) {
        Ok(bounds) => bounds,
        Err(e @ PointError::NotFinite { index, .. }) => {
            return Err(first_bad_sphere_radius(&radii[..index]).unwrap_or(e).into());
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(e) = first_bad_sphere_radius(radii) {
        return Err(e.into());
    }
    if let Some((index, &value)) = radii.iter().enumerate().find(|(_, r)| **r < MIN_RADIUS) {
        return Err(GpuError::SphereRadiusTooSmall { index, value });
    }
    let largest = radii.iter().fold(0.0f32, |m, &r| m.max(r));
    Ok(bounds.map(|(lo, hi)| (lo, hi, largest)))
}

/// The CPU's check of a sphere radius: NaN, negative or above
/// `MAX_RADIUS / 2` (two of them must sum to a valid radius).
fn first_bad_sphere_radius(radii: &[f32]) -> Option<PointError> {
    let valid = 0.0..=MAX_RADIUS / 2.0;
    radii.iter().enumerate().find_map(|(index, &value)| {
        (!valid.contains(&value)).then_some(PointError::InvalidSphereRadius { index, value })
    })
}

/// Plans the grid of `n` spheres whose centers lie in `lo..=hi`, the
/// largest radius `largest`: the grid of a point search of radius
/// `2 · largest`, which every contact's `ra + rb` is at most (rounding is
/// monotone and doubling exact), four floats an item.
pub(crate) fn plan_spheres(n: usize, lo: Vec3, hi: Vec3, largest: f32, max_cells: u32) -> Params {
    let mut params = plan(n, lo, hi, 2.0 * largest, max_cells);
    params.stride = 4;
    params
}

/// Workgroups for `items` invocations, one per item.
pub(crate) fn groups(items: u32) -> u32 {
    items.div_ceil(WG).max(1)
}

/// The fill passes' workgroup size (on an H100 the insertion-sort fill of
/// an earlier build took the same time with 128 and with 256; the rank
/// fill was measured with 128 only).
pub(crate) const FILL_WG: u32 = 128;

/// The longest row a fill sorts in the invocation's own memory; longer
/// rows are sorted in the list buffer.
pub(crate) const MAX_SHORT_ROW: u32 = 64;

/// A fill's workgroups for `items` invocations, in two dimensions (x at
/// most [`MAX_GROUPS`]): `fill_slot` in rows.wgsl undoes it.
pub(crate) fn fill_groups(items: u32) -> (u32, u32) {
    let groups = items.div_ceil(FILL_WG).max(1);
    let x = groups.min(MAX_GROUPS);
    (x, groups.div_ceil(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_groups_cover_every_item_once() {
        for items in
            [0, 1, FILL_WG, FILL_WG + 1, MAX_GROUPS * FILL_WG, MAX_GROUPS * FILL_WG + 1, 16_776_960]
        {
            let (x, y) = fill_groups(items);
            assert!((1..=MAX_GROUPS).contains(&x) && y >= 1, "{items}: {x} x {y}");
            // Every item has an invocation, and no row of workgroups is idle.
            assert!(u64::from(x) * u64::from(y) * u64::from(FILL_WG) >= u64::from(items));
            assert!(u64::from(x) * u64::from(y - 1) * u64::from(FILL_WG) < u64::from(items).max(1));
        }
    }

    #[test]
    fn cells_stay_within_budget_and_axis_limit() {
        let cases = [
            (10, Vec3::ZERO, Vec3::splat(1.0), 1.0),
            (10, Vec3::ZERO, Vec3::new(1e6, 0.0, 0.0), 1.0),
            (3, Vec3::splat(-3e38), Vec3::splat(3e38), 1.0),
            (1000, Vec3::splat(-1.0), Vec3::splat(1.0), MIN_RADIUS),
            (1000, Vec3::ZERO, Vec3::splat(100.0), MAX_RADIUS),
        ];
        for (n, lo, hi, r) in cases {
            let p = plan(n, lo, hi, r, 1 << 24);
            let cells: u64 = p.dims.iter().map(|&d| u64::from(d)).product();
            assert!(cells <= (8 * n as u64).max(4096), "{p:?}");
            assert!(p.dims.iter().all(|&d| (1..=65_535).contains(&d)), "{p:?}");
            for a in 0..3 {
                assert!(p.inv2[a] == 0.0 || p.inv2[a].is_normal(), "{p:?}");
                // A cell is never narrower than CELL_OVER_RADIUS radii.
                assert!(p.inv2[a] == 0.0 || 2.0 / f64::from(p.inv2[a]) >= f64::from(r) * 1.06);
            }
        }
    }

    #[test]
    fn the_first_bad_point_is_named() {
        let points = [Vec3::ZERO, Vec3::new(0.0, 0.0, f32::INFINITY), Vec3::NAN];
        assert_eq!(
            validate(&points, 1.0, 10),
            Err(PointError::NotFinite { index: 1, axis: Axis::Z, value: f32::INFINITY })
        );
        assert!(validate(&points[..1], 0.0, 10).is_err());
        assert!(validate(&points[..1], MIN_RADIUS / 2.0, 10).is_err());
        assert!(validate(&points[..1], f32::INFINITY, 10).is_err());
        assert!(validate(&points[..1], f32::NAN, 10).is_err());
        assert_eq!(validate(&points[..1], MIN_RADIUS, 10), Ok(Some((Vec3::ZERO, Vec3::ZERO))));
        assert_eq!(validate(&points[..1], 1.0, 0), Err(PointError::TooManyPoints { count: 1 }));
    }
}
