//! The boxes a region of the caller's own meets: the box query's walk with
//! the region's bounds, cells skipped where the region says it misses
//! them, and the region's exact test on every candidate.

use super::hierarchy::AdaptiveGrid;
use super::planes::MAX_PLANES;
use super::quantize::{Cell, Item, LEVELS, OWNS_PAIR, WorldSteps};
use super::query::{cells_met, leaf_hits};
use broadphase_storage::{Aabb, QueryError, RegionTest};
use glam::Vec3;

impl AdaptiveGrid {
    /// Writes into `out` (cleared first) the index of every kept box that
    /// `region` [meets](RegionTest::meets), each once, in unspecified
    /// order: the query for a shape of the caller's own
    /// ([`Frustum`](broadphase_storage::Frustum),
    /// [`Capsule`](broadphase_storage::Capsule), or any [`RegionTest`]).
    ///
    /// The walk searches [`bounds`](RegionTest::bounds) as the box query
    /// does, and skips a cell where [`may_meet`](RegionTest::may_meet) is
    /// false. Without skips, each box is reported by the one leaf that
    /// holds its reference point (the max of its low corner and the
    /// bounds'), as in the box query. A skipped cell may hold that point
    /// for a box the region meets elsewhere, so at the first skip the walk
    /// starts again, reporting every accepted box of every leaf it visits,
    /// and removes the repeats at the end (the answer is then sorted). It
    /// allocates nothing but the room `out` needs.
    ///
    /// A region that gives its planes
    /// ([`plane_test`](RegionTest::plane_test), at most 8, as
    /// [`Frustum`](broadphase_storage::Frustum) does) has a walk of its
    /// own: no cell is skipped and each box is reported once by its
    /// reference point; a plane is dropped below a cell that lies inside
    /// it, so a cell inside every plane reports its boxes by the bounds
    /// test alone; and a box is called inside or outside each remaining
    /// plane from its quantized corners, 16 slots at a time, unless the
    /// plane passes within a few steps of them. Only those boxes, and boxes
    /// at the border of the coordinates, reach
    /// [`meets`](RegionTest::meets).
    ///
    /// [`query_aabb`](Self::query_aabb) and
    /// [`query_sphere`](Self::query_sphere) give the same answers as this
    /// query with an [`Aabb`] or a
    /// [`Sphere`](broadphase_storage::Sphere), through their own
    /// quantized fast paths.
    ///
    /// # Errors
    /// [`QueryError`] from the region's [`validate`](RegionTest::validate),
    /// or [`QueryError::Input`] if its bounds break the box contract; `out`
    /// is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb, Capsule};
    /// use glam::Vec3;
    /// let boxes: Vec<Aabb> =
    ///     (0..10).map(|i| Aabb::new(Vec3::new(i as f32, 3.0, 0.0), Vec3::new(i as f32 + 0.5, 3.5, 0.5))).collect();
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// // A capsule along x at height 2, reaching up to 3: the boxes over
    /// // 2..=5 (box 1 ends at x = 1.5, sqrt(1.25) from the segment's end).
    /// let capsule = Capsule::new(Vec3::new(2.0, 2.0, 0.0), Vec3::new(5.0, 2.0, 0.0), 1.0);
    /// let mut hits = Vec::new();
    /// grid.query_with(&capsule, &mut hits)?;
    /// hits.sort();
    /// assert_eq!(hits, [2, 3, 4, 5]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_with(
        &self,
        region: &impl RegionTest,
        out: &mut Vec<u32>,
    ) -> Result<(), QueryError> {
        out.clear();
        region.validate()?;
        let bounds = region.bounds();
        bounds.validate(0)?;
        if !self.kept || self.builder.nodes.is_empty() {
            return Ok(());
        }
        let quantized = self.quantizer.item(&bounds, 0);
        if let Some(planes) = region.plane_test().filter(|planes| planes.len() <= MAX_PLANES) {
            self.plane_walk(region, planes, &bounds, &quantized, out);
            return Ok(());
        }
        // Each box reported by the one leaf that holds its reference point,
        // until a cell is skipped: then the walk starts again and reports
        // every accepted box of every leaf it visits (see above).
        let walk = |report_all: bool, out: &mut Vec<u32>| {
            self.region_walk(region, &bounds, &quantized, report_all, out)
        };
        if walk(false, out) == Walk::Skipped {
            out.clear();
            walk(true, out);
            out.sort_unstable();
            out.dedup();
        }
        Ok(())
    }

    /// One walk of [`query_with`](Self::query_with) over the region's
    /// quantized bounds: the box query's walk (`query.rs`) with a cell
    /// test and a stop. Kept apart from it: the same walk with the cell
    /// test and the every-leaf switch as hooks of its `SlotTest`, defaulted
    /// to constants, made the box and sphere queries 2–4% slower. Depth
    /// first: every leaf's accepted boxes if
    /// `report_all`, else those whose reference point the leaf holds, and
    /// then the walk stops at the first cell it would skip.
    fn region_walk(
        &self,
        region: &impl RegionTest,
        bounds: &Aabb,
        quantized: &Item,
        report_all: bool,
        out: &mut Vec<u32>,
    ) -> Walk {
        let steps = self.quantizer.world_steps();
        let nodes = &self.builder.nodes;
        // At most 63 siblings wait per level above the current node; on the
        // stack, so a query allocates nothing.
        let mut stack = [0u32; 64 * LEVELS as usize];
        let mut waiting = 1; // the root, at 0
        while waiting > 0 {
            waiting -= 1;
            let index = stack[waiting];
            let node = &nodes[index as usize];
            if index != 0 && !region.may_meet(&world_box(node.cell, &steps, bounds)) {
                if !report_all {
                    return Walk::Skipped;
                }
                continue;
            }
            if node.is_leaf() {
                let leaf = self.leaves.view(node.first as usize, node.count as usize);
                let owned = i16::from(node.cell.owned_axes(quantized.lo));
                let mut report = |slot: usize| {
                    if report_all || owned | leaf.owned[slot] == i16::from(OWNS_PAIR) {
                        let id = leaf.ids[slot];
                        if region.meets(&self.boxes[id as usize]) {
                            out.push(id);
                        }
                    }
                };
                leaf_hits(self.kernel, &leaf, quantized, &mut report);
                continue;
            }
            let Some(cells) = cells_met(node.block, quantized) else { continue };
            let mut visit = cells & node.occupancy;
            while visit != 0 {
                let cell = visit.trailing_zeros();
                visit &= visit - 1;
                let below = node.occupancy & ((1u64 << cell) - 1);
                stack[waiting] = node.first + below.count_ones();
                waiting += 1;
            }
        }
        Walk::Done
    }
}

/// How a walk of [`AdaptiveGrid::region_walk`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walk {
    Done,
    /// It stopped at a cell the region misses, before reporting by
    /// reference points could lose a box.
    Skipped,
}

/// The world box of `cell`: every point the quantizer puts in it, cut to
/// `bounds` (finite, where the cell's span is open at the border of the
/// coordinates), rounded outward to `f32`.
fn world_box(cell: Cell, steps: &WorldSteps, bounds: &Aabb) -> Aabb {
    let mut min = [0.0f32; 3];
    let mut max = [0.0f32; 3];
    for axis in 0..3 {
        let (lo, hi) = cell.span(axis);
        let (low, high) = steps.span(axis, lo, hi);
        let low = low.max(f64::from(bounds.min[axis]));
        // Where the cut is empty the region has no point in the cell, and
        // any answer for a point of it is sound.
        let high = high.min(f64::from(bounds.max[axis])).max(low);
        // `as` rounds to nearest; a step outward where that went inward.
        let (l, h) = (low as f32, high as f32);
        min[axis] = if f64::from(l) > low { l.next_down() } else { l };
        max[axis] = if f64::from(h) < high { h.next_up() } else { h };
    }
    Aabb::new(Vec3::from(min), Vec3::from(max))
}
