//! The input contract of neighbor search: finite points, finite non-negative
//! radii, ids that fit `u32`; and [`PointError`], the typed error that names
//! the first thing that breaks it.

use broadphase_storage::Axis;
use core::fmt;
use glam::Vec3;

/// The most points one structure accepts: ids are `u32`.
pub(crate) const MAX_POINTS: usize = u32::MAX as usize;

/// Input that breaks the neighbor-search contract.
///
/// Every structure checks its input in slice order and reports the *first*
/// problem, so the same input gives the same error everywhere. A failed
/// build leaves the structure empty and reusable.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{Axis, CountingSortGrid, NeighborSearch, PointError};
/// use glam::Vec3;
///
/// let mut grid = CountingSortGrid::default();
/// let points = [Vec3::ZERO, Vec3::new(1.0, f32::NAN, 0.0)];
/// assert!(matches!(
///     grid.build(&points, 1.0),
///     Err(PointError::NotFinite { index: 1, axis: Axis::Y, .. })
/// ));
/// assert!(matches!(grid.build(&points[..1], -1.0), Err(PointError::InvalidRadius { .. })));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum PointError {
    /// A coordinate of a point (or sphere center) is NaN or infinite. A bad
    /// query point is reported with `index` 0.
    NotFinite {
        /// Index of the point in the caller's slice (0 for a query point).
        index: usize,
        /// The axis of the bad coordinate.
        axis: Axis,
        /// The coordinate itself.
        value: f32,
    },
    /// The radius given to a build or a query is NaN, negative, or above
    /// [`MAX_RADIUS`] (its square would overflow `f32`).
    InvalidRadius {
        /// The radius given.
        value: f32,
    },
    /// A sphere's radius is NaN, negative, or above `MAX_RADIUS / 2`.
    InvalidSphereRadius {
        /// Index of the sphere in the caller's slices.
        index: usize,
        /// The radius given.
        value: f32,
    },
    /// A query radius is larger than the structure was built for.
    QueryRadiusTooLarge {
        /// The radius asked for.
        radius: f32,
        /// The largest radius a query may use: the build radius for points,
        /// the largest sphere radius for spheres.
        max: f32,
    },
    /// `centers` and `radii` have different lengths.
    LengthMismatch {
        /// Number of centers.
        centers: usize,
        /// Number of radii.
        radii: usize,
    },
    /// More points than `u32` ids can name.
    TooManyPoints {
        /// How many points were given.
        count: usize,
    },
}

impl fmt::Display for PointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PointError::NotFinite { index, axis, value } => {
                write!(f, "point {index}: {axis:?} coordinate is {value}, not a finite number")
            }
            PointError::InvalidRadius { value } => {
                write!(f, "radius {value} is not a number in 0..={MAX_RADIUS}")
            }
            PointError::InvalidSphereRadius { index, value } => {
                write!(
                    f,
                    "sphere {index}: radius {value} is not a number in 0..={}",
                    MAX_RADIUS / 2.0
                )
            }
            PointError::QueryRadiusTooLarge { radius, max } => {
                write!(
                    f,
                    "query radius {radius} is larger than the {max} the structure was built for"
                )
            }
            PointError::LengthMismatch { centers, radii } => {
                write!(f, "{centers} centers but {radii} radii")
            }
            PointError::TooManyPoints { count } => {
                write!(f, "{count} points given; at most {MAX_POINTS} fit u32 ids")
            }
        }
    }
}

impl std::error::Error for PointError {}

/// The largest radius accepted: distances are compared squared in `f32`,
/// and above `sqrt(f32::MAX)` (about 1.8e19) the squared radius is
/// infinite, which would make every pair of points "within" it, however far
/// apart. A sphere radius may be at most half of this, so that the squared
/// sum of two radii stays finite too.
pub const MAX_RADIUS: f32 = 1.0e19;

/// Checks one radius argument: `0 <= radius <= MAX_RADIUS` (so not NaN).
pub(crate) fn check_radius(radius: f32) -> Result<(), PointError> {
    if (0.0..=MAX_RADIUS).contains(&radius) {
        Ok(())
    } else {
        Err(PointError::InvalidRadius { value: radius })
    }
}

/// Checks one query point; a bad coordinate is reported with index 0.
pub(crate) fn check_point(point: Vec3) -> Result<(), PointError> {
    first_bad_coordinate(0, point)
}

fn first_bad_coordinate(index: usize, p: Vec3) -> Result<(), PointError> {
    for axis in Axis::ALL {
        let value = p[axis as usize];
        if !value.is_finite() {
            return Err(PointError::NotFinite { index, axis, value });
        }
    }
    Ok(())
}

/// The smallest and largest coordinate of `points` on each axis (`None`
/// for no points), checked as every structure of this crate checks its
/// points: every coordinate finite, and not more points than a structure
/// can index. One pass that vectorizes; only a set that fails pays for
/// the search of its first bad point.
///
/// # Errors
///
/// [`PointError::NotFinite`] naming the first point with a NaN or
/// infinite coordinate, or [`PointError::TooManyPoints`].
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::point_bounds;
/// use glam::Vec3;
/// let points = [Vec3::new(1.0, -2.0, 3.0), Vec3::new(-1.0, 4.0, 0.5)];
/// let (lo, hi) = point_bounds(&points)?.expect("two points");
/// assert_eq!((lo, hi), (Vec3::new(-1.0, -2.0, 0.5), Vec3::new(1.0, 4.0, 3.0)));
/// assert!(point_bounds(&[Vec3::new(0.0, f32::NAN, 0.0)]).is_err());
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
pub fn point_bounds(points: &[Vec3]) -> Result<Option<(Vec3, Vec3)>, PointError> {
    validate_points(points)
}

/// Checks every point and returns the bounds of the set (`None` when empty).
///
/// One pass: running bounds and a running "all finite" flag
/// ([`LaneBounds`]); only a set that fails pays for the search of the
/// first bad point.
pub(crate) fn validate_points(points: &[Vec3]) -> Result<Option<(Vec3, Vec3)>, PointError> {
    if points.len() > MAX_POINTS {
        return Err(PointError::TooManyPoints { count: points.len() });
    }
    let Some(&first) = points.first() else { return Ok(None) };
    let mut bounds = LaneBounds::new(first);
    let chunks = points.chunks_exact(BOUND_LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for (lane, &p) in chunk.iter().enumerate() {
            bounds.take(lane, p);
        }
    }
    for (lane, &p) in rest.iter().enumerate() {
        bounds.take(lane, p);
    }
    bounds.finish().map(Some).ok_or_else(|| first_not_finite(points))
}

/// Points a [`LaneBounds`] takes at a time, one per lane.
pub(crate) const BOUND_LANES: usize = 8;

/// The running bounds and finiteness of points taken [`BOUND_LANES`] at a
/// time, one per lane, so that a loop over them vectorizes (one running
/// min/max is a chain of dependent steps). A plain `<` keeps the running
/// value on equal and on NaN, as `minps` does; NaN is caught by the
/// finiteness flags.
pub(crate) struct LaneBounds {
    lo: [[f32; BOUND_LANES]; 3],
    hi: [[f32; BOUND_LANES]; 3],
    finite: [bool; BOUND_LANES],
}

impl LaneBounds {
    /// Bounds starting at `first` in every lane.
    pub(crate) fn new(first: Vec3) -> Self {
        let lo = first.to_array().map(|v| [v; BOUND_LANES]);
        Self { lo, hi: lo, finite: [true; BOUND_LANES] }
    }

    /// Takes point `p` in `lane` (below [`BOUND_LANES`]).
    #[inline(always)]
    pub(crate) fn take(&mut self, lane: usize, p: Vec3) {
        for (a, v) in p.to_array().into_iter().enumerate() {
            self.lo[a][lane] = if v < self.lo[a][lane] { v } else { self.lo[a][lane] };
            self.hi[a][lane] = if v > self.hi[a][lane] { v } else { self.hi[a][lane] };
        }
        // `&`, not `&&`: no branch per point.
        self.finite[lane] &= p.x.is_finite() & p.y.is_finite() & p.z.is_finite();
    }

    /// The bounds of the points taken, if every one was finite.
    pub(crate) fn finish(&self) -> Option<(Vec3, Vec3)> {
        if !self.finite.iter().all(|&f| f) {
            return None;
        }
        let bound = |axes: [[f32; BOUND_LANES]; 3], pick: fn(f32, f32) -> f32| {
            Vec3::from_array(axes.map(|lanes| lanes.into_iter().fold(lanes[0], pick)))
        };
        Some((bound(self.lo, f32::min), bound(self.hi, f32::max)))
    }
}

/// The error naming the first NaN or infinite coordinate of `points`,
/// which have one.
pub(crate) fn first_not_finite(points: &[Vec3]) -> PointError {
    for (index, p) in points.iter().enumerate() {
        if let Err(error) = first_bad_coordinate(index, *p) {
            return error;
        }
    }
    unreachable!("a non-finite coordinate was seen but not found again")
}

/// Checks spheres (centers, then radii, in index order) and returns the
/// bounds of the centers and the largest radius.
pub(crate) fn validate_spheres(
    centers: &[Vec3],
    radii: &[f32],
) -> Result<(Option<(Vec3, Vec3)>, f32), PointError> {
    if centers.len() != radii.len() {
        return Err(PointError::LengthMismatch { centers: centers.len(), radii: radii.len() });
    }
    let bounds = match validate_points(centers) {
        Ok(bounds) => bounds,
        // A bad radius before the first bad center comes first in index order.
        Err(e @ PointError::NotFinite { index, .. }) => {
            return Err(first_bad_radius(&radii[..index]).unwrap_or(e));
        }
        Err(e) => return Err(e),
    };
    if let Some(e) = first_bad_radius(radii) {
        return Err(e);
    }
    let max_radius = radii.iter().fold(0.0f32, |m, &r| m.max(r));
    Ok((bounds, max_radius))
}

/// The first sphere radius that is NaN, negative or above `MAX_RADIUS / 2`.
fn first_bad_radius(radii: &[f32]) -> Option<PointError> {
    let valid = 0.0..=MAX_RADIUS / 2.0; // NaN is not contained
    let ok = radii.iter().fold(true, |ok, r| ok & valid.contains(r));
    if ok {
        return None;
    }
    radii.iter().enumerate().find_map(|(index, &value)| {
        (!valid.contains(&value)).then_some(PointError::InvalidSphereRadius { index, value })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_of_good_points() {
        let points = [Vec3::new(1.0, -2.0, 3.0), Vec3::new(-1.0, 5.0, 0.0)];
        let (lo, hi) = validate_points(&points).unwrap().unwrap();
        assert_eq!(lo, Vec3::new(-1.0, -2.0, 0.0));
        assert_eq!(hi, Vec3::new(1.0, 5.0, 3.0));
        assert_eq!(validate_points(&[]), Ok(None));
    }

    /// The lane-parallel bounds equal a plain fold for every set size
    /// around the lane count (extremes in whole chunks and in the rest), and
    /// a bad coordinate is found wherever it lies.
    #[test]
    fn bounds_and_bad_points_at_every_position() {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 20) as f32 - 8.0
        };
        for n in 1..40 {
            let points: Vec<Vec3> = (0..n).map(|_| Vec3::new(next(), next(), next())).collect();
            let lo = points.iter().fold(points[0], |m, p| m.min(*p));
            let hi = points.iter().fold(points[0], |m, p| m.max(*p));
            assert_eq!(validate_points(&points).unwrap(), Some((lo, hi)), "{n} points");
            for bad in 0..n {
                for value in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                    let mut with_bad = points.clone();
                    with_bad[bad][bad % 3] = value;
                    match validate_points(&with_bad) {
                        Err(PointError::NotFinite { index, .. }) => assert_eq!(index, bad),
                        other => panic!("{n} points, bad at {bad}: {other:?}"),
                    }
                }
            }
        }
    }

    #[test]
    fn first_bad_point_is_named() {
        let mut points = vec![Vec3::ONE; 10];
        points[7].z = f32::NEG_INFINITY;
        points[3].y = f32::NAN;
        let err = validate_points(&points).unwrap_err();
        assert!(matches!(err, PointError::NotFinite { index: 3, axis: Axis::Y, .. }), "{err:?}");
        points[3].y = 0.0;
        let err = validate_points(&points).unwrap_err();
        assert_eq!(
            err,
            PointError::NotFinite { index: 7, axis: Axis::Z, value: f32::NEG_INFINITY }
        );
    }

    #[test]
    fn radii_are_checked_in_index_order_with_centers() {
        let centers = vec![Vec3::ONE; 5];
        let mut radii = vec![1.0; 5];
        assert_eq!(validate_spheres(&centers, &radii).map(|(_, m)| m), Ok(1.0));
        radii[4] = -0.5;
        assert_eq!(
            validate_spheres(&centers, &radii).unwrap_err(),
            PointError::InvalidSphereRadius { index: 4, value: -0.5 }
        );
        let mut bad_center = centers.clone();
        bad_center[2].x = f32::INFINITY;
        assert!(matches!(
            validate_spheres(&bad_center, &radii),
            Err(PointError::NotFinite { index: 2, .. })
        ));
        radii[1] = f32::NAN;
        assert!(matches!(
            validate_spheres(&bad_center, &radii),
            Err(PointError::InvalidSphereRadius { index: 1, .. })
        ));
        assert_eq!(
            validate_spheres(&centers, &radii[..3]).unwrap_err(),
            PointError::LengthMismatch { centers: 5, radii: 3 }
        );
    }

    #[test]
    fn radius_argument() {
        assert!(check_radius(0.0).is_ok());
        assert!(check_radius(MAX_RADIUS).is_ok());
        for bad in [-1.0, f32::NAN, f32::INFINITY, -0.0001, 1.9e19, f32::MAX] {
            assert!(matches!(check_radius(bad), Err(PointError::InvalidRadius { .. })));
        }
        assert!(check_point(Vec3::new(0.0, 0.0, f32::NAN)).is_err());
    }

    #[test]
    fn messages_name_the_problem() {
        let e = PointError::NotFinite { index: 4, axis: Axis::X, value: f32::NAN };
        assert!(e.to_string().contains("point 4"));
        let e = PointError::QueryRadiusTooLarge { radius: 3.0, max: 2.0 };
        assert!(e.to_string().contains("larger"));
    }
}
