//! Tight bounds for rays: per node of the kept build, the world box of
//! what lies under it, computed on the first ray after a build and kept
//! until the next one.
//!
//! A node's cell is where its boxes' corners were sorted, not where the
//! boxes are: a long ray crosses many leaf cells that hold nothing it
//! meets. The ray walk enters a node only where the ray meets its tight
//! box, and takes its entry there, so leaves whose boxes lie beside the
//! ray are skipped and a first-hit ray stops sooner. Pairs and box
//! queries never read these bounds, so a build pays nothing for them.

use super::hierarchy::Node;
use super::leaf::{LeafColumns, unflip};
use super::quantize::WorldSteps;
use broadphase_storage::Pool;
use std::sync::{Mutex, OnceLock, PoisonError};

/// The world span of a node's contents per axis, in `f32` rounded outward:
/// every point the quantizer puts inside both the node's cell and the
/// hull of the quantized boxes under it (see [`WorldSteps::span`]), so a
/// ray that misses it misses every box under the node where the node
/// holds it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RayBox {
    pub(crate) lo: [f32; 3],
    pub(crate) hi: [f32; 3],
}

impl RayBox {
    /// The box of no point, the start of a hull.
    const EMPTY: RayBox = RayBox { lo: [f32::INFINITY; 3], hi: [f32::NEG_INFINITY; 3] };

    /// The box of both.
    fn hull(self, other: RayBox) -> RayBox {
        RayBox {
            lo: core::array::from_fn(|a| self.lo[a].min(other.lo[a])),
            hi: core::array::from_fn(|a| self.hi[a].max(other.hi[a])),
        }
    }
}

/// The largest `f32` at or below `x` (`-inf` below the range).
fn down(x: f64) -> f32 {
    let near = x as f32;
    if f64::from(near) > x { near.next_down() } else { near }
}

/// The smallest `f32` at or above `x` (`+inf` above the range).
fn up(x: f64) -> f32 {
    let near = x as f32;
    if f64::from(near) < x { near.next_up() } else { near }
}

/// The tight boxes of a kept build, one per node in node order, and the
/// buffer they are computed into.
///
/// Filled once through `&self` (rays take `&self`, from any thread; the
/// first one computes, the others wait for it), emptied by `&mut self`
/// when a build replaces the nodes. The buffer moves between the two
/// fields, never freed, so a warm frame of build then rays allocates
/// nothing.
#[derive(Default)]
pub(crate) struct RayBounds {
    boxes: OnceLock<Pool<RayBox>>,
    /// The buffer while no bounds are computed.
    spare: Mutex<Pool<RayBox>>,
}

impl core::fmt::Debug for RayBounds {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RayBounds").field("nodes", &self.boxes.get().map(Pool::len)).finish()
    }
}

impl RayBounds {
    /// Drops the bounds (the nodes they were computed from are about to
    /// change), keeping their buffer.
    pub(crate) fn forget(&mut self) {
        let buffer = self.take_buffer();
        *self.spare.get_mut().unwrap_or_else(PoisonError::into_inner) = buffer;
    }

    /// The buffer, emptied, from wherever it is.
    fn take_buffer(&mut self) -> Pool<RayBox> {
        let spare = self.spare.get_mut().unwrap_or_else(PoisonError::into_inner);
        let mut buffer = self.boxes.take().unwrap_or_else(|| core::mem::take(spare));
        buffer.reset();
        buffer
    }

    /// Makes these bounds `source`'s: copied if it has computed them,
    /// else left to compute. Copies into the buffer already here.
    pub(crate) fn clone_from(&mut self, source: &RayBounds) {
        let mut buffer = self.take_buffer();
        match source.boxes.get() {
            Some(boxes) => {
                buffer.extend_from_slice(boxes);
                // Just emptied by `take_buffer`: the cell is free.
                let _ = self.boxes.set(buffer);
            }
            None => *self.spare.get_mut().unwrap_or_else(PoisonError::into_inner) = buffer,
        }
    }

    /// Nodes the buffer holds without allocating.
    pub(crate) fn capacity(&self) -> usize {
        // Locked first: the first ray's computation takes the buffer from
        // `spare` under this lock, so it is in one place or the other.
        let spare = self.spare.lock().unwrap_or_else(PoisonError::into_inner);
        self.boxes.get().map_or(spare.capacity(), Pool::capacity)
    }

    /// Grows the buffer to hold `nodes` boxes without allocating.
    pub(crate) fn reserve_exact(&mut self, nodes: usize) {
        let buffer = match self.boxes.get_mut() {
            Some(buffer) => buffer,
            None => self.spare.get_mut().unwrap_or_else(PoisonError::into_inner),
        };
        buffer.reserve_exact(nodes.saturating_sub(buffer.len()));
    }

    /// Whether the bounds, if a ray has computed them, are those of the
    /// build given (for [`validate`](super::AdaptiveGrid::validate)).
    pub(crate) fn are_of(&self, nodes: &[Node], leaves: &LeafColumns, steps: &WorldSteps) -> bool {
        self.boxes.get().is_none_or(|kept| {
            let mut fresh = Pool::new();
            compute(nodes, leaves, steps, &mut fresh);
            kept.as_slice() == fresh.as_slice()
        })
    }

    /// The tight box of every node, computed now if this build has none
    /// yet.
    #[inline]
    pub(crate) fn get(
        &self,
        nodes: &[Node],
        leaves: &LeafColumns,
        steps: &WorldSteps,
    ) -> &[RayBox] {
        self.boxes.get_or_init(|| {
            let spare = &mut *self.spare.lock().unwrap_or_else(PoisonError::into_inner);
            let mut buffer = core::mem::take(spare);
            compute(nodes, leaves, steps, &mut buffer);
            buffer
        })
    }
}

/// Writes the tight box of every node into `out`. Children come after
/// their parent in `nodes`, so one pass from the back sees every child
/// before its parent.
fn compute(nodes: &[Node], leaves: &LeafColumns, steps: &WorldSteps, out: &mut Pool<RayBox>) {
    out.reset();
    out.resize(nodes.len(), RayBox::EMPTY);
    for index in (0..nodes.len()).rev() {
        let node = &nodes[index];
        out[index] = if node.is_leaf() {
            leaf_box(node, leaves, steps)
        } else {
            let children =
                node.first as usize..node.first as usize + node.occupancy.count_ones() as usize;
            out[children].iter().fold(RayBox::EMPTY, |hull, child| hull.hull(*child))
        };
    }
}

/// A leaf's tight box: the hull of its slots' quantized boxes, cut to its
/// cell (a box reaching outside the cell is met there in the leaves it
/// also lies in), in world units.
fn leaf_box(node: &Node, leaves: &LeafColumns, steps: &WorldSteps) -> RayBox {
    let (start, count) = (node.first as usize, node.count as usize);
    let mut tight = RayBox::EMPTY;
    for axis in 0..3 {
        let (cell_lo, cell_hi) = node.cell.span(axis);
        let lows = leaves.lo[axis][start..start + count].iter();
        let highs = leaves.hi[axis][start..start + count].iter();
        // Columns store coordinates flipped, ordered as signed integers.
        let low = lows.copied().min().map_or(cell_lo, |c| u32::from(unflip(c)));
        let high = highs.copied().max().map_or(cell_hi, |c| u32::from(unflip(c)));
        let (mut low, mut high) = (low.max(cell_lo), high.min(cell_hi));
        if low > high {
            // Only a leaf that holds no box of its cell: never built, but
            // the cell is always safe.
            (low, high) = (cell_lo, cell_hi);
        }
        let (min, max) = steps.span(axis, low, high);
        (tight.lo[axis], tight.hi[axis]) = (down(min), up(max));
    }
    tight
}

#[cfg(test)]
mod tests {
    use super::{RayBox, down, up};
    use crate::AdaptiveGrid;
    use broadphase_storage::{Aabb, Ray};
    use glam::Vec3;

    #[test]
    fn rounding_goes_outward() {
        for x in [0.1f64, -0.1, 1e300, -1e300, 3.0, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(f64::from(down(x)) <= x, "{x}");
            assert!(f64::from(up(x)) >= x, "{x}");
        }
        assert_eq!(down(3.0), 3.0);
        assert_eq!(up(3.0), 3.0);
    }

    /// Small boxes far apart: each leaf cell is much larger than what
    /// it holds.
    fn sparse_boxes() -> Vec<Aabb> {
        (0..400)
            .map(|i| {
                let c = Vec3::new(
                    (i % 7) as f32 * 50.0,
                    (i / 7 % 7) as f32 * 50.0,
                    (i / 49) as f32 * 50.0,
                );
                Aabb::from_center_half_extent(c, Vec3::splat(0.5 + (i % 3) as f32 * 0.25))
            })
            .collect()
    }

    fn world_box(b: &RayBox) -> (Vec3, Vec3) {
        (Vec3::from_array(b.lo), Vec3::from_array(b.hi))
    }

    /// Every box reaches into its leaf's tight box, every child's tight box
    /// lies in its parent's, and leaves are cut well inside their cells.
    #[test]
    fn tight_boxes_hold_their_boxes_and_are_tighter_than_cells() {
        let boxes = sparse_boxes();
        let mut grid =
            AdaptiveGrid::with_config(crate::GridConfig { leaf_capacity: 4, ..Default::default() });
        grid.build(&boxes).unwrap();
        let steps = grid.quantizer.world_steps();
        let nodes = &grid.builder.nodes;
        let tight = grid.ray_bounds.get(nodes, &grid.leaves, &steps).to_vec();
        assert_eq!(tight.len(), nodes.len());
        let mut tighter = 0;
        for (index, node) in nodes.iter().enumerate() {
            let (lo, hi) = world_box(&tight[index]);
            if node.is_leaf() {
                let leaf = grid.leaves.view(node.first as usize, node.count as usize);
                for &id in &leaf.ids[..leaf.count] {
                    let b = boxes[id as usize];
                    assert!(
                        b.min.cmple(hi).all() && b.max.cmpge(lo).all(),
                        "box {id} outside leaf {index}"
                    );
                }
                let cell_width = steps.step[0] * f64::from(1u32 << node.cell.shift());
                if f64::from(hi.x - lo.x) < cell_width / 4.0 {
                    tighter += 1;
                }
            } else {
                for child in node.first..node.first + node.occupancy.count_ones() {
                    let (child_lo, child_hi) = world_box(&tight[child as usize]);
                    assert!(child_lo.cmpge(lo).all() && child_hi.cmple(hi).all());
                }
            }
        }
        assert!(tighter > 10, "{tighter} leaves cut inside their cells");
    }

    /// A grid given the room of one whose rays have run computes its own
    /// bounds into that room: the buffer does not grow.
    #[test]
    fn reserved_room_holds_the_bounds() {
        let boxes = sparse_boxes();
        let config = crate::GridConfig { leaf_capacity: 4, ..Default::default() };
        let mut roomy = AdaptiveGrid::with_config(config);
        roomy.build(&boxes).unwrap();
        let ray = Ray::new(Vec3::new(-10.0, 0.0, 0.0), Vec3::X, f32::INFINITY);
        roomy.cast_ray(&ray).unwrap();
        let room = roomy.ray_bounds.capacity();
        assert!(room >= roomy.builder.nodes.len());

        let mut grid = AdaptiveGrid::with_config(config);
        grid.reserve(&roomy.capacity());
        assert!(grid.ray_bounds.capacity() >= roomy.builder.nodes.len());
        grid.build(&boxes).unwrap();
        let before = grid.ray_bounds.capacity();
        assert_eq!(grid.cast_ray(&ray).unwrap(), roomy.cast_ray(&ray).unwrap());
        assert_eq!(grid.ray_bounds.capacity(), before);
        // The next build keeps the buffer.
        grid.build(&boxes[..100]).unwrap();
        assert_eq!(grid.ray_bounds.capacity(), before);
        assert_eq!(grid.capacity().max(roomy.capacity()), grid.capacity());
    }

    /// `validate` finds bounds that are not the build's.
    #[test]
    fn validate_checks_computed_bounds() {
        let boxes = sparse_boxes();
        let mut grid =
            AdaptiveGrid::with_config(crate::GridConfig { leaf_capacity: 4, ..Default::default() });
        grid.build(&boxes).unwrap();
        assert!(grid.validate(&boxes).is_ok());
        grid.cast_ray(&Ray::new(Vec3::new(-10.0, 0.0, 0.0), Vec3::X, f32::INFINITY)).unwrap();
        assert!(grid.validate(&boxes).is_ok());
        let kept = grid.ray_bounds.boxes.get_mut().unwrap();
        let last = kept.len() - 1;
        kept[last].lo[1] += 1.0;
        assert!(grid.validate(&boxes).is_err());
    }

    #[test]
    fn a_grid_with_bounds_is_send_and_sync() {
        fn shared<T: Send + Sync>() {}
        shared::<AdaptiveGrid>();
    }

    /// A new build drops the bounds of the old one: a ray that met a box
    /// of the first build meets the second build's boxes, wherever they
    /// now lie, and misses where they left.
    #[test]
    fn a_new_build_recomputes_the_bounds() {
        let first = sparse_boxes();
        let mut grid =
            AdaptiveGrid::with_config(crate::GridConfig { leaf_capacity: 4, ..Default::default() });
        grid.build(&first).unwrap();
        let ray = Ray::new(Vec3::new(-10.0, 0.0, 0.0), Vec3::X, f32::INFINITY);
        assert_eq!(grid.cast_ray(&ray).unwrap(), Some((0, 9.5)));
        // The same count and layout, moved up by 20: the old bounds would
        // say the ray still meets row 0.
        let moved: Vec<Aabb> = first
            .iter()
            .map(|b| Aabb::new(b.min + Vec3::Y * 20.0, b.max + Vec3::Y * 20.0))
            .collect();
        grid.build(&moved).unwrap();
        assert_eq!(grid.cast_ray(&ray).unwrap(), None);
        let through = Ray::new(Vec3::new(-10.0, 20.0, 0.0), Vec3::X, f32::INFINITY);
        assert_eq!(grid.cast_ray(&through).unwrap(), Some((0, 9.5)));
        let steps = grid.quantizer.world_steps();
        let fresh = grid.ray_bounds.get(&grid.builder.nodes, &grid.leaves, &steps);
        let mut rebuilt = AdaptiveGrid::with_config(*grid.config());
        rebuilt.build(&moved).unwrap();
        let steps = rebuilt.quantizer.world_steps();
        assert_eq!(fresh, rebuilt.ray_bounds.get(&rebuilt.builder.nodes, &rebuilt.leaves, &steps));
    }
}
