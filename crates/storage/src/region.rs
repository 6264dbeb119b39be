//! The seam for query shapes: a region of space as a structure's walk sees
//! it, so that a new shape is one `impl` in one file.

use crate::{Aabb, QueryError, Sphere};
use glam::{DVec3, DVec4};

/// A query region: what a structure needs from a shape to find every box
/// it meets.
///
/// A walk takes [`bounds`](Self::bounds) as the box to search, may skip a
/// cell of its hierarchy where [`may_meet`](Self::may_meet) is false, and
/// reports each box it keeps that [`meets`](Self::meets) accepts, once.
/// The answer is exactly the boxes a brute-force pass over
/// [`meets`](Self::meets) accepts, as long as the three agree:
///
/// - every box `meets` accepts overlaps `bounds()` (a box outside it is
///   never looked at);
/// - `may_meet(cell)` is false only for a cell that shares no point with
///   the region, and `meets` is the test "the box shares a point with the
///   region", for one fixed set of points. Then a box the region meets is
///   found in the cell that holds a shared point. A shape whose `meets` is
///   only conservative (it accepts some boxes that come near the region
///   without touching it, as [`Frustum`](crate::Frustum)'s plane test does)
///   keeps the default, `true`, or a box it accepts could lie only in
///   cells that were skipped. A shape cut to a box (a half-space inside a
///   world box) tests the part of the box inside that box, not the whole.
///
/// [`validate`](Self::validate) checks the shape's own contract before a
/// query; a query also refuses a `bounds()` that breaks the box contract.
///
/// # Examples
///
/// A half-space, `normal · p >= offset`, clipped to a finite box, is one
/// impl:
///
/// ```
/// use broadphase_storage::{Aabb, RegionTest};
/// use glam::Vec3;
///
/// struct Above {
///     height: f32,
///     world: Aabb,
/// }
///
/// impl RegionTest for Above {
///     fn bounds(&self) -> Aabb {
///         Aabb::new(Vec3::new(self.world.min.x, self.height, self.world.min.z), self.world.max)
///     }
///     fn may_meet(&self, cell: &Aabb) -> bool {
///         cell.max.y >= self.height
///     }
///     fn meets(&self, aabb: &Aabb) -> bool {
///         aabb.overlaps(&self.bounds())
///     }
/// }
///
/// let above = Above { height: 2.0, world: Aabb::new(Vec3::splat(-10.0), Vec3::splat(10.0)) };
/// assert!(above.meets(&Aabb::new(Vec3::ZERO, Vec3::splat(2.0))));
/// assert!(!above.meets(&Aabb::new(Vec3::ZERO, Vec3::ONE)));
/// ```
pub trait RegionTest {
    /// A box around the region: every box [`meets`](Self::meets) accepts
    /// overlaps it. Must be a valid box (finite, `min <= max`); the tighter
    /// it is, the fewer boxes a walk looks at.
    fn bounds(&self) -> Aabb;

    /// Whether the region may share a point with `cell`, a box of world
    /// space a walk is about to descend into (already cut to
    /// [`bounds`](Self::bounds)). False only when it surely does not; see
    /// the trait's docs for when a shape may say false at all. The
    /// default, `true`, never skips a cell.
    #[inline]
    fn may_meet(&self, cell: &Aabb) -> bool {
        let _ = cell;
        true
    }

    /// Whether the region meets `aabb`: the exact test a query answers by.
    fn meets(&self, aabb: &Aabb) -> bool;

    /// The planes [`meets`](Self::meets) is made of, where it is the
    /// conservative plane test of [`Frustum`](crate::Frustum):
    /// `Some(planes)` promises that `meets(aabb)` is exactly "`aabb`
    /// overlaps [`bounds`](Self::bounds), and for every plane `(n, w)`
    /// (as `DVec4::new(nx, ny, nz, w)`) the corner `p` of `aabb` furthest
    /// along `n` (its max on an axis where `n >= 0`, else its min) has
    /// `n.dot(p) + w >= 0`", computed so, in `f64`, with `n` and `p` as
    /// `DVec3`. A walk may then decide most boxes from their quantized
    /// boxes, and drops a plane for every box of a cell that lies inside
    /// it, calling [`meets`](Self::meets) only where that is too close to
    /// call. The default, `None`: every candidate is tested by `meets`.
    #[inline]
    fn plane_test(&self) -> Option<&[DVec4]> {
        None
    }

    /// Checks the shape's own contract (a radius, a plane) before a query.
    /// The default accepts every value.
    ///
    /// # Errors
    /// [`QueryError`] naming what is wrong.
    #[inline]
    fn validate(&self) -> Result<(), QueryError> {
        Ok(())
    }
}

/// The plane rule of [`RegionTest::plane_test`]: for every plane `(n, w)`,
/// the corner of `aabb` furthest along `n` has `n.dot(p) + w >= 0`, in
/// `f64`. A region that gives its planes tests them with this, so that
/// its [`meets`](RegionTest::meets) is exactly what a walk decides from
/// them.
///
/// # Examples
///
/// ```
/// use broadphase_storage::{Aabb, planes_hold};
/// use glam::{DVec4, Vec3};
/// let above_ground = [DVec4::new(0.0, 1.0, 0.0, 0.0)]; // y >= 0
/// assert!(planes_hold(&above_ground, &Aabb::new(Vec3::splat(-1.0), Vec3::ONE)));
/// assert!(!planes_hold(&above_ground, &Aabb::new(Vec3::splat(-2.0), Vec3::splat(-1.0))));
/// ```
#[inline]
pub fn planes_hold(planes: &[DVec4], aabb: &Aabb) -> bool {
    let (lo, hi) = (aabb.min.as_dvec3(), aabb.max.as_dvec3());
    planes.iter().all(|plane| {
        let normal = plane.truncate();
        let furthest = DVec3::select(normal.cmpge(DVec3::ZERO), hi, lo);
        normal.dot(furthest) + plane.w >= 0.0
    })
}

/// A box as a region: the boxes it overlaps (touching counts).
impl RegionTest for Aabb {
    #[inline]
    fn bounds(&self) -> Aabb {
        *self
    }

    #[inline]
    fn meets(&self, aabb: &Aabb) -> bool {
        self.overlaps(aabb)
    }
}

/// A sphere as a region: [`Sphere::overlaps`]. A cell is skipped when the
/// sphere misses its box: the point of a box closest to the center, for a
/// box the sphere meets, lies inside the sphere's bounds and so in a cell
/// the sphere reaches (the distance to a cell holding it is no larger).
impl RegionTest for Sphere {
    #[inline]
    fn bounds(&self) -> Aabb {
        Sphere::bounds(self)
    }

    #[inline]
    fn may_meet(&self, cell: &Aabb) -> bool {
        self.reaches(cell)
    }

    #[inline]
    fn meets(&self, aabb: &Aabb) -> bool {
        self.overlaps(aabb)
    }

    #[inline]
    fn validate(&self) -> Result<(), QueryError> {
        Sphere::validate(self)
    }
}
