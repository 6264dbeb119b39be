//! A capsule as a query: a sphere swept along a segment.

use crate::ray::finite;
use crate::{Aabb, QueryError, QueryPart, RegionTest};
use glam::{DVec3, Vec3};

/// The points within `radius` of the segment from `start` to `end`: a
/// sphere swept along the segment (a character's body, a sword's arc, a
/// sphere cast up to a distance).
///
/// # Examples
///
/// ```
/// use broadphase_storage::{Aabb, Capsule};
/// use glam::Vec3;
/// let body = Capsule::new(Vec3::ZERO, Vec3::new(0.0, 2.0, 0.0), 0.5);
/// // 0.4 from the segment's middle: met.
/// assert!(body.overlaps(&Aabb::new(Vec3::new(0.4, 1.0, 0.0), Vec3::new(1.0, 1.5, 0.5))));
/// // Its corner is 0.6 from the segment's end: missed, though its bounds meet.
/// let corner = Aabb::new(Vec3::new(0.36, 2.48, 0.0), Vec3::ONE * 3.0);
/// assert!(!body.overlaps(&corner));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Capsule {
    /// One end of the segment.
    pub start: Vec3,
    /// The other end (equal to `start` for a sphere).
    pub end: Vec3,
    /// The radius: finite, not negative (`-0.0` is accepted, as 0: the
    /// segment alone).
    pub radius: f32,
}

impl Capsule {
    /// The capsule of `radius` around the segment from `start` to `end`.
    pub fn new(start: Vec3, end: Vec3, radius: f32) -> Self {
        Self { start, end, radius }
    }

    /// Checks finite ends and a finite radius that is not negative (`-0.0`
    /// passes, and behaves as 0).
    ///
    /// # Errors
    /// [`QueryError`] naming the first bad part.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_storage::{Capsule, QueryError, QueryPart};
    /// use glam::Vec3;
    /// let bad = Capsule::new(Vec3::ZERO, Vec3::ONE, f32::NAN);
    /// assert!(matches!(bad.validate(), Err(QueryError::BadLength { part: QueryPart::Radius, .. })));
    /// let bad = Capsule::new(Vec3::ZERO, Vec3::new(0.0, f32::INFINITY, 0.0), 1.0);
    /// assert!(matches!(bad.validate(), Err(QueryError::NotFinite { part: QueryPart::End, .. })));
    /// ```
    pub fn validate(&self) -> Result<(), QueryError> {
        finite(QueryPart::Start, self.start)?;
        finite(QueryPart::End, self.end)?;
        if !self.radius.is_finite() || self.radius < 0.0 {
            return Err(QueryError::BadLength { part: QueryPart::Radius, value: self.radius });
        }
        Ok(())
    }

    /// The box around the capsule: every box it meets overlaps this one.
    /// Rounded outward and kept within the finite `f32` range, as
    /// [`Sphere::bounds`](crate::Sphere::bounds) is.
    pub fn bounds(&self) -> Aabb {
        let r = Vec3::splat(self.radius);
        let (lo, hi) = (self.start.min(self.end) - r, self.start.max(self.end) + r);
        let (min, max) = (Vec3::splat(f32::MIN), Vec3::splat(f32::MAX));
        Aabb::new(lo.map(f32::next_down).max(min), hi.map(f32::next_up).min(max))
    }

    /// Whether the capsule meets `aabb` (touching counts): the box overlaps
    /// the capsule's [`bounds`](Self::bounds), and the distance from the
    /// segment to the box ([`distance_sq`](Self::distance_sq)) is at most
    /// the radius. The capsule must be valid ([`validate`](Self::validate)).
    #[inline]
    pub fn overlaps(&self, aabb: &Aabb) -> bool {
        self.bounds().overlaps(aabb) && self.distance_sq(aabb) <= f64::from(self.radius).powi(2)
    }

    /// The squared distance from the segment to `aabb`, in `f64` (0 when
    /// they meet).
    ///
    /// Along the segment, the squared distance to a box is a convex
    /// function of the segment's parameter, and a quadratic between the
    /// (at most six) parameters where the segment crosses one of the box's
    /// slab planes. Each piece's minimum is found in closed form and the
    /// distance evaluated there directly, so the answer is the true
    /// minimum up to `f64` rounding of the coordinates.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_storage::{Aabb, Capsule};
    /// use glam::Vec3;
    /// let segment = Capsule::new(Vec3::new(-5.0, 3.0, 0.5), Vec3::new(5.0, 3.0, 0.5), 0.0);
    /// assert_eq!(segment.distance_sq(&Aabb::new(Vec3::ZERO, Vec3::ONE)), 4.0);
    /// ```
    pub fn distance_sq(&self, aabb: &Aabb) -> f64 {
        let start = self.start.as_dvec3();
        let along = self.end.as_dvec3() - start;
        let (lo, hi) = (aabb.min.as_dvec3(), aabb.max.as_dvec3());
        // The pieces' ends: 0, 1 and every slab crossing strictly between.
        let mut cuts = [0.0f64; 8];
        let mut count = 0;
        for axis in 0..3 {
            if along[axis] != 0.0 {
                for plane in [lo[axis], hi[axis]] {
                    let t = (plane - start[axis]) / along[axis];
                    if t > 0.0 && t < 1.0 {
                        cuts[count] = t;
                        count += 1;
                    }
                }
            }
        }
        cuts[count] = 0.0;
        cuts[count + 1] = 1.0;
        let cuts = &mut cuts[..count + 2];
        cuts.sort_unstable_by(f64::total_cmp);
        let at = |t: f64| point_distance_sq(start + along * t, lo, hi);
        let mut best = at(0.0).min(at(1.0));
        for piece in cuts.windows(2) {
            let (t0, t1) = (piece[0], piece[1]);
            if t1 <= t0 {
                continue;
            }
            // On this piece each axis' gap is 0 or one line `a + b t`: the
            // side of the slab the piece's middle is on.
            let middle = start + along * (0.5 * (t0 + t1));
            let (mut ab, mut bb) = (0.0, 0.0);
            for axis in 0..3 {
                let (a, b) = if middle[axis] < lo[axis] {
                    (lo[axis] - start[axis], -along[axis])
                } else if middle[axis] > hi[axis] {
                    (start[axis] - hi[axis], along[axis])
                } else {
                    continue;
                };
                ab += a * b;
                bb += b * b;
            }
            if bb > 0.0 {
                best = best.min(at((-ab / bb).clamp(t0, t1)));
            }
        }
        best
    }
}

/// The squared distance from `p` to the box `lo..=hi`.
#[inline]
fn point_distance_sq(p: DVec3, lo: DVec3, hi: DVec3) -> f64 {
    let gap = (lo - p).max(DVec3::ZERO) + (p - hi).max(DVec3::ZERO);
    gap.length_squared()
}

/// A capsule as a region: [`Capsule::overlaps`]. A cell is skipped when
/// the segment is further from it than the radius by more than the
/// distance's rounding: the box's point closest to the segment lies in
/// the capsule's bounds, so in a cell that is not skipped.
impl RegionTest for Capsule {
    #[inline]
    fn bounds(&self) -> Aabb {
        Capsule::bounds(self)
    }

    #[inline]
    fn may_meet(&self, cell: &Aabb) -> bool {
        // The rounding of the distance grows with the coordinates, not the
        // radius: a margin of 2^-30 of the largest of them is far above it.
        let scale = self.start.abs().max(self.end.abs()).max(cell.min.abs()).max(cell.max.abs());
        let margin = f64::from(scale.max_element()) * (1.0 / (1u64 << 30) as f64);
        self.distance_sq(cell).sqrt() <= f64::from(self.radius) + margin
    }

    #[inline]
    fn meets(&self, aabb: &Aabb) -> bool {
        self.overlaps(aabb)
    }

    #[inline]
    fn validate(&self) -> Result<(), QueryError> {
        Capsule::validate(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distance by brute force: the closest of `samples + 1` evenly
    /// spaced points of the segment, and how far the true minimum can be
    /// below it (half a spacing: the distance is 1-Lipschitz in the point).
    fn sampled_distance(capsule: &Capsule, aabb: &Aabb, samples: u32) -> (f64, f64) {
        let start = capsule.start.as_dvec3();
        let along = capsule.end.as_dvec3() - start;
        let (lo, hi) = (aabb.min.as_dvec3(), aabb.max.as_dvec3());
        let best = (0..=samples)
            .map(|k| point_distance_sq(start + along * (f64::from(k) / f64::from(samples)), lo, hi))
            .fold(f64::INFINITY, f64::min);
        (best.sqrt(), along.length() / f64::from(samples) / 2.0)
    }

    /// A small deterministic generator (xorshift), for the random cases.
    struct Cases(u64);
    impl Cases {
        fn unit(&mut self) -> f32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 40) as f32 / (1u64 << 24) as f32
        }
        fn point(&mut self, spread: f32) -> Vec3 {
            Vec3::new(self.unit(), self.unit(), self.unit()) * 2.0 * spread - spread
        }
    }

    #[test]
    fn distance_matches_dense_sampling_on_random_cases() {
        let mut cases = Cases(0x9E37_79B9_7F4A_7C15);
        for case in 0..1200 {
            let spread = [1.0, 10.0, 1000.0][case % 3];
            let (start, end) = (cases.point(spread), cases.point(spread));
            // Some segments along an axis, or a point, where pieces are few.
            let end = match case % 7 {
                0 => start,
                1 => Vec3::new(end.x, start.y, start.z),
                _ => end,
            };
            let center = cases.point(spread);
            let half = Vec3::new(cases.unit(), cases.unit(), cases.unit()) * spread * 0.5;
            let aabb = Aabb::new(center - half, center + half);
            let capsule = Capsule::new(start, end, 0.0);
            let exact = capsule.distance_sq(&aabb).sqrt();
            let (sampled, slack) = sampled_distance(&capsule, &aabb, 10_000);
            let rounding = 1e-9 * f64::from(spread);
            assert!(
                exact <= sampled + rounding && exact >= sampled - slack - rounding,
                "case {case}: {exact} against sampled {sampled} ± {slack}: {capsule:?} {aabb:?}"
            );
        }
    }

    #[test]
    fn distance_is_zero_through_the_box_and_exact_beside_it() {
        let aabb = Aabb::new(Vec3::ZERO, Vec3::ONE);
        let through = Capsule::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::new(2.0, 0.5, 0.5), 0.0);
        assert_eq!(through.distance_sq(&aabb), 0.0);
        // Diagonal past an edge: closest at the segment's middle, (1.5,
        // 1.5, 0.5) against the edge x = y = 1, a distance of sqrt(0.5).
        let past = Capsule::new(Vec3::new(0.5, 2.5, 0.5), Vec3::new(2.5, 0.5, 0.5), 0.0);
        assert!((past.distance_sq(&aabb) - 0.5).abs() < 1e-12);
        // Ends touching a face at exactly the radius count.
        let touching = Capsule::new(Vec3::new(3.0, 0.5, 0.5), Vec3::new(5.0, 0.5, 0.5), 2.0);
        assert!(touching.overlaps(&aabb));
        assert!(!Capsule { radius: 1.999, ..touching }.overlaps(&aabb));
    }

    #[test]
    fn huge_coordinates_do_not_overflow() {
        let capsule = Capsule::new(Vec3::splat(-3.0e38), Vec3::splat(3.0e38), 1.0);
        assert!(capsule.validate().is_ok() && capsule.bounds().is_valid());
        assert!(capsule.overlaps(&Aabb::new(Vec3::splat(1.0e38), Vec3::splat(2.0e38))));
        let beside = Aabb::new(Vec3::new(1.0e38, -2.0e38, 0.0), Vec3::new(2.0e38, -1.0e38, 1.0));
        assert!(!capsule.overlaps(&beside));
    }

    #[test]
    fn bad_capsules_are_typed_errors() {
        let bad = |capsule: Capsule| capsule.validate().unwrap_err();
        assert!(matches!(
            bad(Capsule::new(Vec3::ZERO, Vec3::ONE, -1.0)),
            QueryError::BadLength { part: QueryPart::Radius, value } if value == -1.0
        ));
        assert!(matches!(
            bad(Capsule::new(Vec3::ZERO, Vec3::ONE, f32::INFINITY)),
            QueryError::BadLength { part: QueryPart::Radius, .. }
        ));
        assert!(matches!(
            bad(Capsule::new(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::ONE, 1.0)),
            QueryError::NotFinite { part: QueryPart::Start, .. }
        ));
        assert!(Capsule::new(Vec3::ZERO, Vec3::ONE, -0.0).validate().is_ok());
    }
}
