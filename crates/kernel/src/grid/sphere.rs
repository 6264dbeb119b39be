//! The boxes a sphere meets: the box query's walk with the sphere's bounds,
//! each candidate settled by its quantized box where it can be, by the
//! exact sphere–box test where it cannot.

use super::hierarchy::AdaptiveGrid;
use super::leaf::{Corners, unflip};
use super::quantize::{Item, Quantizer, WorldSteps};
use super::query::SlotTest;
use broadphase_storage::{Aabb, QueryError, Sphere};

impl AdaptiveGrid {
    /// Writes into `out` (cleared first) the index of every kept box that
    /// `sphere` meets ([`Sphere::overlaps`]: touching counts), each once,
    /// in unspecified order.
    ///
    /// # Errors
    /// [`QueryError`] if the sphere breaks its contract
    /// ([`Sphere::validate`]); `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use broadphase_storage::Sphere;
    /// use glam::Vec3;
    /// let boxes = [
    ///     Aabb::new(Vec3::splat(1.0), Vec3::splat(2.0)), // corner 1.73 from the origin
    ///     Aabb::new(Vec3::new(1.5, 0.0, 0.0), Vec3::new(2.0, 0.5, 0.5)), // face 1.5 away
    /// ];
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// let mut hits = Vec::new();
    /// grid.query_sphere(&Sphere::new(Vec3::ZERO, 1.6), &mut hits)?;
    /// assert_eq!(hits, [1]); // the first box's bounds meet, its corner does not
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_sphere(&self, sphere: &Sphere, out: &mut Vec<u32>) -> Result<(), QueryError> {
        out.clear();
        sphere.validate()?;
        let reach = Reach::of(sphere, self.quantizer.world_steps());
        self.walk(out, SphereTest { reach, sphere, boxes: &self.boxes });
        Ok(())
    }
}

/// The sphere query's test.
struct SphereTest<'a> {
    reach: Reach,
    sphere: &'a Sphere,
    boxes: &'a [Aabb],
}

impl SlotTest for SphereTest<'_> {
    #[inline(always)]
    fn quantized(&self, _: &Quantizer) -> Item {
        self.reach.quantized_bounds()
    }

    #[inline(always)]
    fn accept(&mut self, id: u32, _: Corners, slot: Corners) -> bool {
        // Most candidates are settled by their quantized box, which the
        // walk has read already; the box itself is a load from anywhere in
        // the build.
        match self.reach.settled(slot) {
            Some(answer) => answer,
            None => self.sphere.overlaps(&self.boxes[id as usize]),
        }
    }
}

/// The sphere against quantized boxes, in `f64`: a box is surely missed
/// when the sphere misses the world span its coordinates allow, surely met
/// when the sphere reaches a span inside every box with those coordinates,
/// each with a margin far above the exact test's rounding.
struct Reach {
    center: [f64; 3],
    radius: f64,
    radius_sq: f64,
    steps: WorldSteps,
}

/// The relative margin on squared distances (the exact test rounds a few
/// times at 2^-53 each).
const MARGIN: f64 = 1.0 / (1u64 << 40) as f64;

impl Reach {
    fn of(sphere: &Sphere, steps: WorldSteps) -> Self {
        let radius = f64::from(sphere.radius);
        Reach {
            center: sphere.center.to_array().map(f64::from),
            radius,
            radius_sq: radius * radius,
            steps,
        }
    }

    /// A quantized box around the sphere's bounds: what the quantizer
    /// makes of the center minus and plus the radius, a step wider on each
    /// side for its `f32` rounding, at the last coordinate where the
    /// offset overflows `f32` there. (Computed here in `f64`: the bounds
    /// themselves, rounded outward in `f32`, cost more than the query's
    /// walk through a few leaves.)
    #[inline(always)]
    fn quantized_bounds(&self) -> Item {
        let mut item = Item::default();
        for axis in 0..3 {
            // The center's offset first: minus the radius first would
            // round the radius away against a center far from 0.
            let offset = self.center[axis] - self.steps.zero[axis];
            let (low, high) = (offset - self.radius, offset + self.radius);
            (item.lo[axis], item.hi[axis]) = self.steps.coords_of_offsets(axis, low, high, 1.0);
        }
        item
    }

    /// The squared distance from the center to the box `min..=max` per
    /// axis.
    #[inline(always)]
    fn distance_sq(&self, span: impl Fn(usize) -> (f64, f64)) -> f64 {
        (0..3).fold(0.0, |sum, axis| {
            let (min, max) = span(axis);
            let c = self.center[axis];
            // One of the two is 0 (or both, inside). Bounds are never NaN
            // but may be infinite: the difference is then -inf, kept at 0.
            let gap = (min - c).max(0.0) + (c - max).max(0.0);
            sum + gap * gap
        })
    }

    /// `Some(true)` if every box with these coordinates meets the sphere,
    /// `Some(false)` if none does, `None` if only the box can tell.
    #[inline(always)]
    fn settled(&self, (lo, hi): Corners) -> Option<bool> {
        let coords = |axis: usize| (u32::from(unflip(lo[axis])), u32::from(unflip(hi[axis])));
        // Most candidates of a sphere's bounds meet it: that test first.
        let inner = |axis: usize| {
            let (lo, hi) = coords(axis);
            self.steps.covered(axis, lo, hi)
        };
        if let (Some(x), Some(y), Some(z)) = (inner(0), inner(1), inner(2))
            && self.distance_sq(|axis| [x, y, z][axis]) <= self.radius_sq * (1.0 - MARGIN)
        {
            return Some(true);
        }
        let outer = self.distance_sq(|axis| {
            let (lo, hi) = coords(axis);
            self.steps.span(axis, lo, hi)
        });
        (outer > self.radius_sq * (1.0 + MARGIN)).then_some(false)
    }
}
