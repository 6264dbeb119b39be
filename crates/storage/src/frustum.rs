//! A view frustum as a query: six planes and the box around the space
//! they bound.

use crate::{Aabb, QueryError, RegionTest, planes_hold};
use glam::{DVec3, DVec4, Mat4, Vec3, Vec4};

/// A view frustum: the points inside six planes (left, right, bottom, top,
/// near, far), each `normal · p + offset >= 0` inside, and
/// [`bounds`](Self::bounds), the box around the space they bound.
///
/// [`overlaps`](Self::overlaps) is the standard conservative
/// frustum–box test used for culling: a box is met unless one plane has
/// the whole box outside it (or the box misses the bounds). It never
/// rejects a box that meets the frustum, and accepts a few that only come
/// near it, past an edge or a corner, where no single plane separates
/// them. Queries answer exactly by this test: the boxes a brute-force pass
/// over [`overlaps`](Self::overlaps) accepts. (Being conservative, it
/// cannot skip the hierarchy's cells by plane: a big box that straddles two
/// planes' outsides passes the test in no cell of its own. A query walks
/// the bounds, and, given the planes by
/// [`plane_test`](RegionTest::plane_test), drops a plane below a cell that
/// lies inside it and decides most boxes from their quantized corners; see
/// [`RegionTest`].)
///
/// Planes are kept in `f64`, and the tests run in `f64`.
///
/// # Examples
///
/// ```
/// use broadphase_storage::{Aabb, Frustum};
/// use glam::{Mat4, Vec3};
/// let projection = Mat4::perspective_rh(90f32.to_radians(), 1.0, 0.1, 100.0);
/// let view = Mat4::look_at_rh(Vec3::ZERO, Vec3::NEG_Z, Vec3::Y);
/// let frustum = Frustum::from_view_projection(projection * view)?;
/// let ahead = Aabb::new(Vec3::new(-1.0, -1.0, -11.0), Vec3::new(1.0, 1.0, -9.0));
/// let behind = Aabb::new(Vec3::new(-1.0, -1.0, 9.0), Vec3::new(1.0, 1.0, 11.0));
/// assert!(frustum.overlaps(&ahead));
/// assert!(!frustum.overlaps(&behind));
/// # Ok::<(), broadphase_storage::QueryError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frustum {
    planes: [DVec4; 6],
    bounds: Aabb,
    /// The planes bound no point: nothing is met.
    empty: bool,
}

impl Frustum {
    /// The frustum of a view-projection matrix (`projection * view`, as
    /// glam multiplies: clip = matrix × point) whose clip space has depth
    /// `0..=1`: glam's `perspective_*` and `orthographic_*`, Vulkan, Metal,
    /// Direct3D and wgpu. Planes by the Gribb–Hartmann rows, in `f64`.
    ///
    /// # Errors
    /// [`QueryError::BadPlane`] if the matrix has a NaN or infinite entry.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_storage::Frustum;
    /// use glam::Mat4;
    /// let box_view = Mat4::orthographic_rh(-1.0, 1.0, -1.0, 1.0, 0.0, 10.0);
    /// let frustum = Frustum::from_view_projection(box_view)?;
    /// let bounds = frustum.bounds();
    /// assert!(bounds.min.z <= -10.0 && bounds.max.z >= 0.0 && bounds.max.x >= 1.0);
    /// # Ok::<(), broadphase_storage::QueryError>(())
    /// ```
    pub fn from_view_projection(view_projection: Mat4) -> Result<Self, QueryError> {
        let rows = rows(view_projection);
        Self::from_clip_rows(rows, rows[2])
    }

    /// [`from_view_projection`](Self::from_view_projection) for a clip
    /// space with depth `-1..=1`: OpenGL, glam's `*_gl` projections.
    ///
    /// # Errors
    /// [`QueryError::BadPlane`] if the matrix has a NaN or infinite entry.
    pub fn from_view_projection_gl(view_projection: Mat4) -> Result<Self, QueryError> {
        let rows = rows(view_projection);
        Self::from_clip_rows(rows, rows[3] + rows[2])
    }

    /// The six planes of a clip volume from the matrix's rows: left, right,
    /// bottom, top, the given near plane (it is where the two depth
    /// conventions differ), far.
    fn from_clip_rows(rows: [DVec4; 4], near: DVec4) -> Result<Self, QueryError> {
        Self::from_planes_f64([
            rows[3] + rows[0],
            rows[3] - rows[0],
            rows[3] + rows[1],
            rows[3] - rows[1],
            near,
            rows[3] - rows[2],
        ])
    }

    /// The frustum inside six planes, each `(normal, offset)` as
    /// `Vec4::new(nx, ny, nz, offset)` with `normal · p + offset >= 0`
    /// inside; the normals need not be unit length. The
    /// [`bounds`](Self::bounds) are found from the planes: the box around
    /// the corners where three of them meet, inside all six; the whole
    /// finite range if the planes leave a direction open (a far plane at
    /// infinity, a plane of zero normal); a point, and nothing met, if they
    /// bound no point.
    ///
    /// # Errors
    /// [`QueryError::BadPlane`] naming the first plane with a NaN or
    /// infinite coefficient.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_storage::{Aabb, Frustum};
    /// use glam::{Vec3, Vec4};
    /// // The unit cube as six planes.
    /// let cube = Frustum::from_planes([
    ///     Vec4::new(1.0, 0.0, 0.0, 0.0),
    ///     Vec4::new(-1.0, 0.0, 0.0, 1.0),
    ///     Vec4::new(0.0, 1.0, 0.0, 0.0),
    ///     Vec4::new(0.0, -1.0, 0.0, 1.0),
    ///     Vec4::new(0.0, 0.0, 1.0, 0.0),
    ///     Vec4::new(0.0, 0.0, -1.0, 1.0),
    /// ])?;
    /// assert!(cube.overlaps(&Aabb::new(Vec3::splat(1.0), Vec3::splat(2.0))));
    /// assert!(!cube.overlaps(&Aabb::new(Vec3::splat(1.01), Vec3::splat(2.0))));
    /// # Ok::<(), broadphase_storage::QueryError>(())
    /// ```
    pub fn from_planes(planes: [Vec4; 6]) -> Result<Self, QueryError> {
        Self::from_planes_f64(planes.map(|p| p.as_dvec4()))
    }

    fn from_planes_f64(planes: [DVec4; 6]) -> Result<Self, QueryError> {
        if let Some(index) = planes.iter().position(|p| !p.is_finite()) {
            return Err(QueryError::BadPlane { index, plane: planes[index] });
        }
        let (bounds, empty) = match corner_bounds(&planes) {
            Corners::Bounded(lo, hi) => (outward(lo, hi), false),
            Corners::Open => (Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(f32::MAX)), false),
            Corners::Empty => (Aabb::default(), true),
        };
        Ok(Frustum { planes, bounds, empty })
    }

    /// The six planes, `(normal, offset)` each, inside where
    /// `normal · p + offset >= 0`.
    pub fn planes(&self) -> &[DVec4; 6] {
        &self.planes
    }

    /// The box around the frustum: every box it meets overlaps this one.
    pub fn bounds(&self) -> Aabb {
        self.bounds
    }

    /// The conservative frustum–box test: `aabb` overlaps the bounds and
    /// no plane has all of `aabb` outside it (the box's corner furthest
    /// along the plane's normal is outside). Touching counts.
    #[inline]
    pub fn overlaps(&self, aabb: &Aabb) -> bool {
        !self.empty && self.bounds.overlaps(aabb) && self.inside_planes(aabb)
    }

    /// No plane has all of `aabb` outside it.
    #[inline]
    fn inside_planes(&self, aabb: &Aabb) -> bool {
        planes_hold(&self.planes, aabb)
    }
}

/// A frustum as a region: [`Frustum::overlaps`]. It keeps the default
/// [`may_meet`](RegionTest::may_meet), since its test is conservative, and
/// gives its planes as its [`plane_test`](RegionTest::plane_test) unless
/// they bound no point (then nothing is met, whatever the planes say).
impl RegionTest for Frustum {
    #[inline]
    fn bounds(&self) -> Aabb {
        self.bounds
    }

    #[inline]
    fn meets(&self, aabb: &Aabb) -> bool {
        self.overlaps(aabb)
    }

    #[inline]
    fn plane_test(&self) -> Option<&[DVec4]> {
        (!self.empty).then_some(&self.planes[..])
    }
}

/// The matrix's rows, in `f64`.
fn rows(m: Mat4) -> [DVec4; 4] {
    let m = m.as_dmat4();
    let row = |i: usize| DVec4::new(m.x_axis[i], m.y_axis[i], m.z_axis[i], m.w_axis[i]);
    [row(0), row(1), row(2), row(3)]
}

enum Corners {
    Bounded(DVec3, DVec3),
    Open,
    Empty,
}

/// Relative slack for "on a plane" and "parallel" in the corner search:
/// far above `f64` rounding, and only ever widening the bounds.
const SLACK: f64 = 1e-9;

/// The box around the points inside all planes: the corners where three
/// planes meet and the others hold them, when no direction is left open.
fn corner_bounds(planes: &[DVec4; 6]) -> Corners {
    let normals = planes.map(|p| p.truncate());
    // A direction `d` with `n · d >= 0` for every normal leads to infinity
    // from any inside point. If one exists and the normals span space, one
    // lies along a cross product of two of them; if they do not span
    // space, their common perpendicular is one.
    let mut spans = false;
    for i in 0..6 {
        for j in i + 1..6 {
            let d = normals[i].cross(normals[j]);
            if d.length() <= SLACK * normals[i].length() * normals[j].length() {
                continue;
            }
            for d in [d, -d] {
                if normals.iter().all(|n| n.dot(d) >= -SLACK * n.length() * d.length()) {
                    return Corners::Open;
                }
            }
            spans |= normals.iter().any(|n| n.dot(d).abs() > SLACK * n.length() * d.length());
        }
    }
    if !spans {
        return Corners::Open;
    }
    let (mut lo, mut hi) = (DVec3::INFINITY, DVec3::NEG_INFINITY);
    for i in 0..6 {
        for j in i + 1..6 {
            for k in j + 1..6 {
                let Some(corner) = meeting_point(planes[i], planes[j], planes[k]) else { continue };
                let holds = planes.iter().all(|p| {
                    let n = p.truncate();
                    n.dot(corner) + p.w >= -SLACK * (n.length() * corner.length() + p.w.abs())
                });
                if holds {
                    lo = lo.min(corner);
                    hi = hi.max(corner);
                }
            }
        }
    }
    if lo.x > hi.x { Corners::Empty } else { Corners::Bounded(lo, hi) }
}

/// Where three planes meet, if they meet in one point.
fn meeting_point(a: DVec4, b: DVec4, c: DVec4) -> Option<DVec3> {
    let (na, nb, nc) = (a.truncate(), b.truncate(), c.truncate());
    let det = na.dot(nb.cross(nc));
    let scale = na.length() * nb.length() * nc.length();
    if det.abs() <= SLACK * scale {
        return None;
    }
    let point = -(a.w * nb.cross(nc) + b.w * nc.cross(na) + c.w * na.cross(nb)) / det;
    point.is_finite().then_some(point)
}

/// `lo..=hi` as an `f32` box holding it: widened by a relative margin for
/// the corners' rounding, rounded outward, kept in the finite range.
fn outward(lo: DVec3, hi: DVec3) -> Aabb {
    let margin = (hi - lo).max_element().max(lo.abs().max(hi.abs()).max_element()) * 1e-7;
    let (lo, hi) = (lo - margin, hi + margin);
    let down = |x: f64| {
        let y = x.clamp(f64::from(f32::MIN), f64::from(f32::MAX)) as f32;
        if f64::from(y) > x { y.next_down().max(f32::MIN) } else { y }
    };
    let up = |x: f64| {
        let y = x.clamp(f64::from(f32::MIN), f64::from(f32::MAX)) as f32;
        if f64::from(y) < x { y.next_up().min(f32::MAX) } else { y }
    };
    Aabb::new(
        Vec3::new(down(lo.x), down(lo.y), down(lo.z)),
        Vec3::new(up(hi.x), up(hi.y), up(hi.z)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camera() -> Mat4 {
        let projection = Mat4::perspective_rh(60f32.to_radians(), 1.5, 0.5, 50.0);
        let view = Mat4::look_at_rh(Vec3::new(3.0, 2.0, 1.0), Vec3::new(10.0, 2.0, -5.0), Vec3::Y);
        projection * view
    }

    #[test]
    fn planes_hold_the_points_clip_space_keeps() {
        let m = camera();
        let frustum = Frustum::from_view_projection(m).unwrap();
        let inverse = m.inverse();
        // Points well inside clip space are inside all planes, points
        // well outside are outside one.
        for &(x, y, z, inside) in &[
            (0.0, 0.0, 0.5, true),
            (0.9, -0.9, 0.1, true),
            (1.2, 0.0, 0.5, false),
            (0.0, -1.2, 0.5, false),
            (0.0, 0.0, -0.1, false),
            (0.0, 0.0, 1.1, false),
        ] {
            let p = inverse.project_point3(Vec3::new(x, y, z));
            let point = Aabb::new(p, p);
            assert_eq!(frustum.overlaps(&point), inside, "{x} {y} {z}: {p}");
        }
    }

    #[test]
    fn bounds_hold_the_corners() {
        let m = camera();
        let frustum = Frustum::from_view_projection(m).unwrap();
        let inverse = m.inverse();
        for corner in 0..8 {
            let ndc = Vec3::new(
                if corner & 1 == 0 { -1.0 } else { 1.0 },
                if corner & 2 == 0 { -1.0 } else { 1.0 },
                if corner & 4 == 0 { 0.0 } else { 1.0 },
            );
            let p = inverse.project_point3(ndc);
            let b = frustum.bounds();
            let tolerance = 1e-3;
            assert!(
                (b.min - p).max_element() <= tolerance && (p - b.max).max_element() <= tolerance,
                "{p} outside {b:?}"
            );
        }
        // And not much more: the far corners span about 2 * 50 * tan(30°) * 1.5.
        let extent = frustum.bounds().max - frustum.bounds().min;
        assert!(extent.max_element() < 100.0, "{extent}");
    }

    #[test]
    fn gl_depth_puts_the_near_plane_at_minus_one() {
        let projection = Mat4::perspective_rh_gl(90f32.to_radians(), 1.0, 1.0, 10.0);
        let frustum = Frustum::from_view_projection_gl(projection).unwrap();
        let at = |z: f32| Aabb::new(Vec3::new(0.0, 0.0, z), Vec3::new(0.0, 0.0, z));
        assert!(frustum.overlaps(&at(-1.01)) && frustum.overlaps(&at(-9.99)));
        assert!(!frustum.overlaps(&at(-0.9)) && !frustum.overlaps(&at(-10.5)));
    }

    #[test]
    fn an_infinite_far_plane_leaves_the_bounds_open() {
        let projection = Mat4::perspective_infinite_rh(90f32.to_radians(), 1.0, 1.0);
        let frustum = Frustum::from_view_projection(projection).unwrap();
        assert_eq!(frustum.bounds().max.x, f32::MAX);
        assert!(
            frustum.overlaps(&Aabb::new(Vec3::new(0.0, 0.0, -1e30), Vec3::new(1.0, 1.0, -1e30)))
        );
        assert!(!frustum.overlaps(&Aabb::new(Vec3::new(0.0, 0.0, 1.0), Vec3::ONE * 2.0)));
    }

    #[test]
    fn planes_that_bound_nothing_meet_nothing() {
        let x = |n: f32, offset: f32| Vec4::new(n, 0.0, 0.0, offset);
        let y = |n: f32, offset: f32| Vec4::new(0.0, n, 0.0, offset);
        let z = |n: f32, offset: f32| Vec4::new(0.0, 0.0, n, offset);
        // x >= 2 and x <= 1.
        let frustum = Frustum::from_planes([
            x(1.0, -2.0),
            x(-1.0, 1.0),
            y(1.0, 0.0),
            y(-1.0, 1.0),
            z(1.0, 0.0),
            z(-1.0, 1.0),
        ])
        .unwrap();
        assert!(frustum.bounds().is_valid());
        assert!(!frustum.overlaps(&Aabb::new(Vec3::splat(-10.0), Vec3::splat(10.0))));
    }

    /// Random planes around a point: every point inside all six lies in
    /// the bounds, whether the planes close a polytope or leave it open.
    #[test]
    fn bounds_hold_every_inside_point_of_random_planes() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut unit = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
        };
        let (mut closed, mut open) = (0, 0);
        for _ in 0..400 {
            let center = Vec3::new(unit(), unit(), unit()) * 50.0;
            let planes: [Vec4; 6] = core::array::from_fn(|_| {
                let normal = Vec3::new(unit(), unit(), unit());
                let offset = -normal.dot(center) + (unit() + 1.0) * 10.0;
                normal.extend(offset)
            });
            let frustum = Frustum::from_planes(planes).unwrap();
            let bounds = frustum.bounds();
            assert!(bounds.is_valid(), "{bounds:?}");
            if bounds.max.x == f32::MAX {
                open += 1;
            } else {
                closed += 1;
            }
            for _ in 0..200 {
                let p = center + Vec3::new(unit(), unit(), unit()) * 200.0;
                let inside = planes.iter().all(|plane| plane.truncate().dot(p) + plane.w >= 0.0);
                if inside {
                    assert!(frustum.overlaps(&Aabb::new(p, p)), "{p} outside {bounds:?}");
                }
            }
        }
        assert!(closed > 20 && open > 20, "{closed} closed, {open} open");
    }

    #[test]
    fn non_finite_planes_are_typed_errors() {
        let mut planes = [Vec4::X; 6];
        planes[3].w = f32::NAN;
        assert!(matches!(Frustum::from_planes(planes), Err(QueryError::BadPlane { index: 3, .. })));
        let mut m = Mat4::IDENTITY;
        m.x_axis.y = f32::INFINITY;
        assert!(matches!(Frustum::from_view_projection(m), Err(QueryError::BadPlane { .. })));
    }
}
