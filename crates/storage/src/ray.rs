//! Rays and spheres as queries: their contract, and the exact tests every
//! structure and oracle shares.

use crate::{Aabb, Axis, InputError};
use core::fmt;
use glam::Vec3;

/// A ray or a segment: the points `origin + t * dir` for `t` in
/// `0..=max_t`.
///
/// `dir` need not be unit length (`t` is then in units of `dir`), and may
/// be zero (the ray is the point `origin`) or have zero components. A box
/// is hit where the ray meets it, faces, edges and corners included, as
/// [`Aabb::overlaps`] counts touching; a ray that starts inside a box hits
/// it at `t = 0`.
///
/// # Examples
///
/// ```
/// use broadphase_storage::{Aabb, Ray};
/// use glam::Vec3;
/// let wall = Aabb::new(Vec3::new(5.0, -1.0, -1.0), Vec3::new(6.0, 1.0, 1.0));
/// let ray = Ray::new(Vec3::ZERO, Vec3::X, f32::INFINITY);
/// assert_eq!(ray.entry(&wall), Some(5.0));
/// let short = Ray::segment(Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0));
/// assert_eq!(short.entry(&wall), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray {
    /// Where the ray starts (`t = 0`).
    pub origin: Vec3,
    /// Its direction, any length.
    pub dir: Vec3,
    /// Where it ends, in units of `dir`: `f32::INFINITY` for no end, `0`
    /// for the point `origin` alone. `-0.0` is accepted and is that same
    /// point (it compares equal to 0); any other negative length, and NaN,
    /// is refused by [`validate`](Self::validate).
    pub max_t: f32,
}

impl Ray {
    /// A ray from `origin` along `dir` up to `max_t`.
    pub fn new(origin: Vec3, dir: Vec3, max_t: f32) -> Self {
        Self { origin, dir, max_t }
    }

    /// The segment from `from` to `to` (`t` from 0 to 1).
    pub fn segment(from: Vec3, to: Vec3) -> Self {
        Self { origin: from, dir: to - from, max_t: 1.0 }
    }

    /// Checks the ray's contract: a finite origin and direction, a `max_t`
    /// that is not NaN and not negative (it may be `+inf`; `-0.0` passes,
    /// as 0).
    ///
    /// # Errors
    /// [`QueryError`] naming the first bad part.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_storage::{Aabb, QueryError, QueryPart, Ray};
    /// use glam::Vec3;
    /// let ray = Ray::new(Vec3::new(0.0, f32::NAN, 0.0), Vec3::X, 1.0);
    /// assert!(matches!(ray.validate(), Err(QueryError::NotFinite { part: QueryPart::Origin, .. })));
    /// let ray = Ray::new(Vec3::ZERO, Vec3::X, -1.0);
    /// assert!(matches!(ray.validate(), Err(QueryError::BadLength { part: QueryPart::MaxT, .. })));
    ///
    /// // `max_t = -0.0` is accepted as 0: the ray is its origin alone.
    /// let point = Ray::new(Vec3::ZERO, Vec3::X, -0.0);
    /// assert!(point.validate().is_ok());
    /// assert_eq!(point.entry(&Aabb::new(Vec3::splat(-1.0), Vec3::ONE)), Some(0.0));
    /// assert_eq!(point.entry(&Aabb::new(Vec3::new(0.5, -1.0, -1.0), Vec3::ONE)), None);
    /// ```
    pub fn validate(&self) -> Result<(), QueryError> {
        finite(QueryPart::Origin, self.origin)?;
        finite(QueryPart::Direction, self.dir)?;
        if self.max_t.is_nan() || self.max_t < 0.0 {
            return Err(QueryError::BadLength { part: QueryPart::MaxT, value: self.max_t });
        }
        Ok(())
    }

    /// Where the ray enters `aabb` (the smallest `t` in `0..=max_t` whose
    /// point lies in the box), or `None` if it misses it. Computed in
    /// `f64`, so nothing overflows or loses the answer at the ends of the
    /// `f32` range; the `t` returned is that value rounded to `f32`, the
    /// value queries order hits by. The ray must be valid
    /// ([`validate`](Self::validate)).
    #[inline]
    pub fn entry(&self, aabb: &Aabb) -> Option<f32> {
        self.entry_f64(aabb).map(|t| t as f32)
    }

    /// [`entry`](Self::entry) before rounding.
    ///
    /// Every axis is computed and the answer picked at the end, without an
    /// early exit: a walk tests many boxes that miss, and a branch on each
    /// axis mispredicts about as often as it is taken. The answer is the
    /// same, since later axes only raise `first` and lower `last`.
    #[inline(always)]
    fn entry_f64(&self, aabb: &Aabb) -> Option<f64> {
        let (mut first, mut last) = (0.0f64, f64::from(self.max_t));
        for axis in 0..3 {
            let (o, d) = (f64::from(self.origin[axis]), f64::from(self.dir[axis]));
            let (lo, hi) = (f64::from(aabb.min[axis]), f64::from(aabb.max[axis]));
            // Division, not a reciprocal: `(lo - o) / d` is never NaN when
            // d is not 0 (d is finite, lo - o is finite in f64).
            let (a, b) = ((lo - o) / d, (hi - o) / d);
            let (near, far) = if d != 0.0 {
                (a.min(b), a.max(b))
            } else if o < lo || o > hi {
                // Never moves on this axis and outside the slab: never in.
                (f64::INFINITY, f64::NEG_INFINITY)
            } else {
                (f64::NEG_INFINITY, f64::INFINITY)
            };
            // Replaced only by a strictly larger value: `first` starts at
            // +0.0 and can never become -0.0 (which orders before 0.0 in a
            // total order). `f64::max(0.0, -0.0)` may return either zero,
            // and compilers disagree on which, so the oracle and a walk
            // inlined elsewhere could tie-break differently.
            if near > first {
                first = near;
            }
            if far < last {
                last = far;
            }
        }
        (first <= last).then_some(first)
    }
}

/// A sphere as a query: the points within `radius` of `center`.
///
/// # Examples
///
/// ```
/// use broadphase_storage::{Aabb, Sphere};
/// use glam::Vec3;
/// let blast = Sphere::new(Vec3::ZERO, 2.0);
/// assert!(blast.overlaps(&Aabb::new(Vec3::splat(1.0), Vec3::splat(3.0))));  // corner at distance 1.73
/// assert!(!blast.overlaps(&Aabb::new(Vec3::splat(1.2), Vec3::splat(3.0)))); // corner at distance 2.08
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sphere {
    /// The center.
    pub center: Vec3,
    /// The radius: finite, not negative (`-0.0` is accepted, as 0: a
    /// sphere that touches only what contains its center).
    pub radius: f32,
}

impl Sphere {
    /// A sphere of `radius` around `center`.
    pub fn new(center: Vec3, radius: f32) -> Self {
        Self { center, radius }
    }

    /// Checks a finite center and a finite radius that is not negative
    /// (`-0.0` passes, and behaves as 0).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_storage::{glam::Vec3, Sphere};
    /// assert!(Sphere::new(Vec3::ZERO, -0.0).validate().is_ok());
    /// assert!(Sphere::new(Vec3::ZERO, -1.0).validate().is_err());
    /// ```
    ///
    /// # Errors
    /// [`QueryError`] naming the first bad part.
    pub fn validate(&self) -> Result<(), QueryError> {
        finite(QueryPart::Center, self.center)?;
        if !self.radius.is_finite() || self.radius < 0.0 {
            return Err(QueryError::BadLength { part: QueryPart::Radius, value: self.radius });
        }
        Ok(())
    }

    /// The box around the sphere: every box the sphere meets overlaps it.
    /// Rounded outward, so no box the exact test accepts is outside it,
    /// and kept within the finite `f32` range, so that it is a valid box
    /// for any valid sphere (a box cannot reach past that range either).
    pub fn bounds(&self) -> Aabb {
        let r = Vec3::splat(self.radius);
        let (lo, hi) = (self.center - r, self.center + r);
        let (min, max) = (Vec3::splat(f32::MIN), Vec3::splat(f32::MAX));
        Aabb::new(lo.map(f32::next_down).max(min), hi.map(f32::next_up).min(max))
    }

    /// Whether the sphere meets `aabb` (touching counts): the box overlaps
    /// the sphere's [`bounds`](Self::bounds), and the distance from the
    /// center to the box's closest point is at most the radius, computed in
    /// `f64`. (The first test keeps the second's rounding from accepting a
    /// box a hair beyond the radius on one axis.)
    #[inline]
    pub fn overlaps(&self, aabb: &Aabb) -> bool {
        self.bounds().overlaps(aabb) && self.reaches(aabb)
    }

    /// The second half of [`overlaps`](Self::overlaps), for a box already
    /// known to overlap [`bounds`](Self::bounds) (a structure's candidates):
    /// whether the box's closest point is within the radius, in `f64`.
    #[inline]
    pub fn reaches(&self, aabb: &Aabb) -> bool {
        let mut distance_sq = 0.0f64;
        for axis in 0..3 {
            let c = f64::from(self.center[axis]);
            // `max` then `min`, not `clamp`: the same point for a valid box,
            // without `clamp`'s check that its bounds are ordered.
            let closest = c.max(f64::from(aabb.min[axis])).min(f64::from(aabb.max[axis]));
            distance_sq += (c - closest) * (c - closest);
        }
        let r = f64::from(self.radius);
        distance_sq <= r * r
    }
}

/// Which part of a query broke its contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QueryPart {
    /// A ray's origin.
    Origin,
    /// A ray's direction.
    Direction,
    /// A ray's `max_t`.
    MaxT,
    /// A point query's point.
    Point,
    /// A sphere's center.
    Center,
    /// A sphere's or a capsule's radius.
    Radius,
    /// A capsule's first end.
    Start,
    /// A capsule's second end.
    End,
}

/// Why a ray, point, sphere or region query was refused.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum QueryError {
    /// A coordinate is NaN or infinite.
    NotFinite {
        /// The vector it belongs to.
        part: QueryPart,
        /// Its axis.
        axis: Axis,
        /// The value.
        value: f32,
    },
    /// A length (`max_t`, a radius) is NaN or negative, or a radius is
    /// infinite.
    BadLength {
        /// Which length.
        part: QueryPart,
        /// The value.
        value: f32,
    },
    /// A frustum plane has a coefficient that is NaN or infinite.
    BadPlane {
        /// Which of the six planes (left, right, bottom, top, near, far).
        index: usize,
        /// The plane: normal in `x, y, z`, offset in `w`.
        plane: glam::DVec4,
    },
    /// A region's [`bounds`](crate::RegionTest::bounds) break the box
    /// contract (index 0).
    Input(InputError),
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryError::NotFinite { part, axis, value } => {
                write!(f, "query {part:?} has a non-finite {axis:?} coordinate ({value})")
            }
            QueryError::BadLength { part, value } => {
                write!(f, "query {part:?} must be a length >= 0, got {value}")
            }
            QueryError::BadPlane { index, plane } => {
                write!(f, "frustum plane {index} has a non-finite coefficient ({plane})")
            }
            QueryError::Input(error) => write!(f, "the region's bounds: {error}"),
        }
    }
}

impl std::error::Error for QueryError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            QueryError::Input(error) => Some(error),
            _ => None,
        }
    }
}

impl From<InputError> for QueryError {
    fn from(error: InputError) -> Self {
        QueryError::Input(error)
    }
}

/// A point query's point must be finite.
///
/// # Errors
/// [`QueryError::NotFinite`] with [`QueryPart::Point`].
pub fn validate_point(point: Vec3) -> Result<(), QueryError> {
    finite(QueryPart::Point, point)
}

pub(crate) fn finite(part: QueryPart, v: Vec3) -> Result<(), QueryError> {
    for axis in Axis::ALL {
        let value = v[axis as usize];
        if !value.is_finite() {
            return Err(QueryError::NotFinite { part, axis, value });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_at(x: f32) -> Aabb {
        Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0))
    }

    #[test]
    fn rays_hit_faces_edges_and_corners_inclusively() {
        let b = unit_at(2.0);
        // Grazing the top face along x.
        assert_eq!(Ray::new(Vec3::new(0.0, 1.0, 0.5), Vec3::X, 10.0).entry(&b), Some(2.0));
        // Along an edge.
        assert_eq!(Ray::new(Vec3::new(0.0, 1.0, 1.0), Vec3::X, 10.0).entry(&b), Some(2.0));
        // Just above: misses.
        assert_eq!(Ray::new(Vec3::new(0.0, 1.0001, 0.5), Vec3::X, 10.0).entry(&b), None);
        // Ending exactly on the face.
        assert_eq!(Ray::new(Vec3::new(0.0, 0.5, 0.5), Vec3::X, 2.0).entry(&b), Some(2.0));
        // Ending just short.
        assert_eq!(Ray::new(Vec3::new(0.0, 0.5, 0.5), Vec3::X, 1.999).entry(&b), None);
    }

    #[test]
    fn degenerate_rays_are_points_or_axis_lines() {
        let b = unit_at(2.0);
        let inside = Vec3::new(2.5, 0.5, 0.5);
        // Zero direction: the point itself.
        assert_eq!(Ray::new(inside, Vec3::ZERO, 0.0).entry(&b), Some(0.0));
        assert_eq!(Ray::new(Vec3::ZERO, Vec3::ZERO, f32::INFINITY).entry(&b), None);
        // Starting inside, any direction: t = 0.
        assert_eq!(Ray::new(inside, -Vec3::X, 5.0).entry(&b), Some(0.0));
        // Starting on a face and leaving by it: the face point at t = 0,
        // a positive zero (a -0.0 would sort before other hits at 0).
        let on_face = Vec3::new(2.0, 0.5, 0.5);
        let t = Ray::new(on_face, Vec3::new(-1e-45, 0.0, 0.0), 1.0).entry(&b);
        assert!(t.is_some_and(|t| t.to_bits() == 0), "{t:?}");
        // A subnormal direction and an infinite length still arrive.
        let far = Ray::new(Vec3::new(0.0, 0.5, 0.5), Vec3::new(1e-40, 0.0, 0.0), f32::INFINITY);
        assert!(far.entry(&b).is_some());
    }

    #[test]
    fn huge_coordinates_do_not_overflow() {
        let b = Aabb::new(Vec3::splat(3.0e38), Vec3::splat(f32::MAX));
        let ray = Ray::new(Vec3::splat(-3.0e38), Vec3::ONE, f32::INFINITY);
        assert_eq!(ray.entry(&b), Some(6.0e38_f64 as f32));
        assert!(ray.entry(&b).is_some_and(f32::is_infinite), "6e38 rounds to inf in f32");
        let ray = Ray::new(Vec3::splat(-3.0e38), Vec3::splat(1.0e10), f32::INFINITY);
        assert_eq!(ray.entry(&b), Some(6.0e28));
    }

    #[test]
    fn bad_queries_are_typed_errors() {
        let ray = Ray::new(Vec3::ZERO, Vec3::new(0.0, 0.0, f32::INFINITY), 1.0);
        assert_eq!(
            ray.validate(),
            Err(QueryError::NotFinite {
                part: QueryPart::Direction,
                axis: Axis::Z,
                value: f32::INFINITY
            })
        );
        let ray = Ray::new(Vec3::ZERO, Vec3::X, -1.0);
        assert_eq!(
            ray.validate(),
            Err(QueryError::BadLength { part: QueryPart::MaxT, value: -1.0 })
        );
        assert!(Ray::new(Vec3::ZERO, Vec3::X, f32::NAN).validate().is_err());
        assert!(Ray::new(Vec3::ZERO, Vec3::ZERO, f32::INFINITY).validate().is_ok());
        assert!(Sphere::new(Vec3::ZERO, -0.5).validate().is_err());
        assert!(Sphere::new(Vec3::ZERO, f32::INFINITY).validate().is_err());
        assert!(Sphere::new(Vec3::new(f32::NAN, 0.0, 0.0), 1.0).validate().is_err());
        assert!(validate_point(Vec3::new(0.0, f32::NEG_INFINITY, 0.0)).is_err());
        let shown = Sphere::new(Vec3::ZERO, -0.5).validate().unwrap_err().to_string();
        assert!(shown.contains("Radius") && shown.contains("-0.5"), "{shown}");
    }

    #[test]
    fn a_box_a_hair_beyond_the_radius_is_not_met() {
        // 2.875 + 3.8e-18 rounds to 2.875 in f64: without the bounds test
        // the distance would equal the radius.
        let sphere = Sphere::new(Vec3::new(0.0, 0.0, -2.875), 2.875);
        let beyond = Aabb::new(Vec3::new(-1.0, -1.0, 3.7648977e-18), Vec3::ONE);
        assert!(!sphere.overlaps(&beyond));
        assert!(sphere.overlaps(&Aabb::new(Vec3::new(-1.0, -1.0, 0.0), Vec3::ONE)));
    }

    #[test]
    fn spheres_touch_boxes_at_exactly_their_radius() {
        let b = unit_at(2.0);
        assert!(Sphere::new(Vec3::new(0.0, 0.5, 0.5), 2.0).overlaps(&b));
        assert!(!Sphere::new(Vec3::new(0.0, 0.5, 0.5), 1.999).overlaps(&b));
        // Nearest to a corner: sqrt(3) away.
        let corner = Sphere::new(Vec3::new(1.0, -1.0, -1.0), 3.0f32.sqrt() + 1e-6);
        assert!(corner.overlaps(&b));
        let bounds = Sphere::new(Vec3::ZERO, 1.0).bounds();
        assert!(bounds.min.x < -1.0 && bounds.max.x > 1.0);
        let huge = Sphere::new(Vec3::splat(3.0e38), 3.0e38);
        assert!(huge.validate().is_ok() && huge.bounds().is_valid(), "{:?}", huge.bounds());
    }
}
