//! Where a node splits: regions, split planes, cell ranges, and the rules
//! that keep any input from recursing forever.
//!
//! The rules are the kernel's (see `docs/ARCHITECTURE.md`), applied at the
//! coarse level of regions: planes over the extent the node's boxes cover
//! inside it, as few cells per axis as the count needs, no split along an
//! axis that copies more than it separates, zoom when one cell would take
//! everything, and a depth limit and a copy allowance that always end it.

use broadphase_storage::Aabb;

/// Split planes of a node, per axis; `+inf` everywhere on an unsplit axis.
pub(crate) type Planes = [[f32; 3]; 3];

/// Planes of an axis that is not split: every coordinate is in cell 0.
pub(crate) const UNSPLIT: [f32; 3] = [f32::INFINITY; 3];

/// Most levels, zoom steps included, whatever `max_depth` says.
pub(crate) const MAX_LEVELS: u32 = 16;

/// A half-open region of space, `lo <= p < hi` on every axis. The root's is
/// all of space; a node's children tile it exactly.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Region {
    pub(crate) lo: [f32; 3],
    pub(crate) hi: [f32; 3],
}

impl Region {
    pub(crate) const EVERYWHERE: Region =
        Region { lo: [f32::NEG_INFINITY; 3], hi: [f32::INFINITY; 3] };

    /// Whether the point lies in the region (min faces in, max faces out).
    #[inline(always)]
    pub(crate) fn contains(&self, p: [f32; 3]) -> bool {
        (self.lo[0] <= p[0])
            & (p[0] < self.hi[0])
            & (self.lo[1] <= p[1])
            & (p[1] < self.hi[1])
            & (self.lo[2] <= p[2])
            & (p[2] < self.hi[2])
    }

    /// Whether this region holds the min corner of the intersection of two
    /// overlapping boxes: the one region that reports the pair.
    #[inline(always)]
    pub(crate) fn owns_pair(&self, a: &Aabb, b: &Aabb) -> bool {
        self.contains([a.min.x.max(b.min.x), a.min.y.max(b.min.y), a.min.z.max(b.min.z)])
    }

    /// The region of `cell` (index `x + 4y + 16z`) of a node with these
    /// planes and this region.
    pub(crate) fn child(&self, planes: &Planes, cell: usize) -> Region {
        let mut child = *self;
        for (axis, planes) in planes.iter().enumerate() {
            let k = (cell >> (2 * axis)) & 3;
            if k > 0 {
                child.lo[axis] = self.lo[axis].max(planes[k - 1]);
            }
            if k < 3 {
                child.hi[axis] = self.hi[axis].min(planes[k]);
            }
        }
        child
    }
}

/// The extent boxes cover, clamped to a window; empty is `lo = +inf`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Extent {
    pub(crate) lo: [f32; 3],
    pub(crate) hi: [f32; 3],
}

impl Extent {
    pub(crate) const EMPTY: Extent = Extent { lo: [f32::INFINITY; 3], hi: [f32::NEG_INFINITY; 3] };

    /// Grows the extent by the part of `b` inside `window` (plain compares:
    /// input is validated NaN-free before any extent is taken).
    #[inline(always)]
    pub(crate) fn add_clamped(&mut self, b: &Aabb, window: &Region) {
        for axis in 0..3 {
            let (min, max) = (b.min[axis], b.max[axis]);
            let min = if min > window.lo[axis] { min } else { window.lo[axis] };
            let max = if max < window.hi[axis] { max } else { window.hi[axis] };
            self.lo[axis] = if min < self.lo[axis] { min } else { self.lo[axis] };
            self.hi[axis] = if max > self.hi[axis] { max } else { self.hi[axis] };
        }
    }

    /// Grows the extent by the whole of `b`.
    #[inline(always)]
    pub(crate) fn add(&mut self, b: &Aabb) {
        for axis in 0..3 {
            self.lo[axis] = if b.min[axis] < self.lo[axis] { b.min[axis] } else { self.lo[axis] };
            self.hi[axis] = if b.max[axis] > self.hi[axis] { b.max[axis] } else { self.hi[axis] };
        }
    }

    pub(crate) fn merge(&mut self, other: &Extent) {
        for axis in 0..3 {
            self.lo[axis] = self.lo[axis].min(other.lo[axis]);
            self.hi[axis] = self.hi[axis].max(other.hi[axis]);
        }
    }
}

/// Cells per axis over `extent`: powers of two up to `max_per_axis`, as
/// few as give about one cell per `threshold` boxes, widest cells halved
/// first. Cut always 4×4×4, a node just over the threshold would become
/// 64 regions of a few boxes, each a job with its own kernel build.
pub(crate) fn divisions(
    extent: &Extent,
    count: usize,
    threshold: usize,
    max_per_axis: usize,
) -> [usize; 3] {
    let size = extent_size(extent);
    let max_cells = max_per_axis * max_per_axis * max_per_axis;
    let wanted = count.div_ceil(threshold.max(1)).clamp(2, max_cells);
    let mut divisions = [1usize; 3];
    while divisions.iter().product::<usize>() < wanted {
        let widest =
            (0..3).filter(|&a| divisions[a] < max_per_axis && size[a] > 0.0).max_by(|&a, &b| {
                (size[a] / divisions[a] as f64).total_cmp(&(size[b] / divisions[b] as f64))
            });
        match widest {
            Some(axis) => divisions[axis] *= 2,
            None => break,
        }
    }
    divisions
}

/// Size of the extent per axis, in `f64`: the extent of two `f32`
/// coordinates near ±3.4e38 overflows `f32`.
fn extent_size(extent: &Extent) -> [f64; 3] {
    core::array::from_fn(|a| (f64::from(extent.hi[a]) - f64::from(extent.lo[a])).max(0.0))
}

/// Plane `k` (the lower bound of cell `k`, `1 <= k < divisions`) of an
/// axis cut into `divisions` equal cells over the extent.
pub(crate) fn plane(extent: &Extent, axis: usize, divisions: usize, k: usize) -> f32 {
    let step = extent_size(extent)[axis] / divisions as f64;
    (f64::from(extent.lo[axis]) + step * k as f64) as f32
}

/// 4×4×4-at-most split planes of a node over `extent` (see [`divisions`]).
pub(crate) fn planes_over_extent(extent: &Extent, count: usize, threshold: usize) -> Planes {
    let divisions = divisions(extent, count, threshold, 4);
    core::array::from_fn(|axis| {
        if divisions[axis] == 1 {
            return UNSPLIT;
        }
        core::array::from_fn(|i| {
            let k = i + 1;
            if k < divisions[axis] {
                plane(extent, axis, divisions[axis], k)
            } else {
                f32::INFINITY
            }
        })
    })
}

/// The cell index (0..4) of a coordinate on one axis.
#[inline(always)]
fn cell_of(planes: &[f32; 3], x: f32) -> usize {
    (x >= planes[0]) as usize + (x >= planes[1]) as usize + (x >= planes[2]) as usize
}

/// Per-cell box counts and per-axis cell spans of a node under some planes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Counts {
    pub(crate) cells: [u32; 64],
    /// Per axis, the number of cells all boxes span there (`count` when no
    /// box crosses a plane of that axis).
    pub(crate) spans: [u64; 3],
}

impl Default for Counts {
    fn default() -> Self {
        Counts { cells: [0; 64], spans: [0; 3] }
    }
}

impl Counts {
    /// Counts one box; returns its cell range, 2 bits per end, 4 per axis.
    #[inline(always)]
    pub(crate) fn add(&mut self, planes: &Planes, b: &Aabb) -> u16 {
        let mut packed = 0u16;
        for (axis, (planes, span)) in planes.iter().zip(&mut self.spans).enumerate() {
            let first = cell_of(planes, b.min[axis]);
            let last = cell_of(planes, b.max[axis]);
            *span += (last - first + 1) as u64;
            packed |= ((first | last << 2) as u16) << (4 * axis);
        }
        for_each_cell(packed, |cell| self.cells[cell] += 1);
        packed
    }
}

/// Calls `visit(cell)` for every cell of a packed per-axis cell range.
#[inline(always)]
pub(crate) fn for_each_cell(packed: u16, mut visit: impl FnMut(usize)) {
    let range = |axis: usize| {
        let bits = (packed >> (4 * axis)) as usize;
        (bits & 3, (bits >> 2) & 3)
    };
    let ((x0, x1), (y0, y1), (z0, z1)) = (range(0), range(1), range(2));
    if (x0, y0, z0) == (x1, y1, z1) {
        visit(x0 | y0 << 2 | z0 << 4);
        return;
    }
    for z in z0..=z1 {
        for y in y0..=y1 {
            for x in x0..=x1 {
                visit(x | y << 2 | z << 4);
            }
        }
    }
}

/// What to do with a node after counting it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Decision {
    /// Scatter under the planes counted.
    Split,
    /// Some axes copy more than they separate: count again with the axes
    /// marked `true` unsplit.
    Recount([bool; 3]),
    /// Every box falls in this cell: place new planes inside it.
    Zoom(usize),
    /// Do not split: the node becomes one region.
    Leaf,
}

/// The rules, in the kernel's order: drop axes that replicate more than
/// `max_replication` copies per box, stop when none is left or when the
/// copies would exceed the node's `allowance`, zoom when one cell would
/// receive every box. `split[a]` tells whether axis `a` has planes.
pub(crate) fn decide(
    split: [bool; 3],
    spans: &[u64; 3],
    cells: &[u32],
    count: usize,
    max_replication: f32,
    allowance: u64,
) -> Decision {
    let limit = f64::from(max_replication) * count as f64;
    let drop: [bool; 3] = core::array::from_fn(|a| split[a] && spans[a] as f64 > limit);
    if (0..3).all(|a| !split[a] || drop[a]) {
        return Decision::Leaf;
    }
    if drop.contains(&true) {
        return Decision::Recount(drop);
    }
    let copies: u64 = cells.iter().map(|&c| u64::from(c)).sum();
    if copies > allowance {
        return Decision::Leaf;
    }
    let mut busiest = 0;
    for (cell, &c) in cells.iter().enumerate() {
        if c > cells[busiest] {
            busiest = cell;
        }
    }
    if cells.get(busiest).is_some_and(|&c| c as usize >= count) {
        return Decision::Zoom(busiest);
    }
    Decision::Split
}

/// Copies the children of a split may still make, shared out by box count
/// so that the whole tree never holds more than its root allowance.
pub(crate) fn child_allowance(allowance: u64, copies: u64, child_count: u32) -> u64 {
    let left = allowance.saturating_sub(copies);
    (u128::from(left) * u128::from(child_count) / u128::from(copies.max(1))) as u64
}

/// A node's place in the tree, as a key that sorts depth first: the path
/// of cells from the root, left-aligned in a `u128`. The children of a node
/// with `cells` cells each write `cell + 1` in the next [`key_width`] bits,
/// so siblings sort by cell and every descendant of a child sorts before
/// the next child. Leaves sorted by key are therefore in tree order, which
/// fixes the output order whatever the thread count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Key {
    pub(crate) bits: u128,
    /// Low bits still free for descendants.
    pub(crate) free: u32,
}

impl Key {
    pub(crate) const ROOT: Key = Key { bits: 0, free: 128 };

    /// Whether the node can have `cells` children (the key has room).
    pub(crate) fn can_split(self, cells: usize) -> bool {
        key_width(cells) <= self.free
    }

    /// The key of child `cell` of a node split into `cells` cells.
    pub(crate) fn child(self, cells: usize, cell: usize) -> Key {
        let width = key_width(cells);
        debug_assert!(cell < cells && width <= self.free);
        let free = self.free - width;
        Key { bits: self.bits | (cell as u128 + 1) << free, free }
    }
}

/// Bits that hold `cell + 1` for every cell of a split into `cells`.
pub(crate) fn key_width(cells: usize) -> u32 {
    usize::BITS - cells.leading_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn children_tile_the_parent() {
        let planes = [[1.0, 2.0, 3.0], UNSPLIT, [-5.0, f32::INFINITY, f32::INFINITY]];
        let parent = Region { lo: [0.0, -1.0, -10.0], hi: [10.0, 1.0, 10.0] };
        for p in [[0.0, 0.0, 0.0], [1.0, -1.0, -5.0], [2.999, 0.5, 9.0], [9.0, 0.0, -10.0]] {
            let owners = (0..64).filter(|&c| parent.child(&planes, c).contains(p)).count();
            assert_eq!(owners, 1, "{p:?}");
        }
    }

    #[test]
    fn pile_is_a_leaf_and_one_cell_zooms() {
        let b = Aabb::new(Vec3::ZERO, Vec3::ONE);
        let mut extent = Extent::EMPTY;
        extent.add(&b);
        let planes = planes_over_extent(&extent, 1000, 10);
        let mut counts = Counts::default();
        for _ in 0..1000 {
            counts.add(&planes, &b);
        }
        let split = planes.map(|p| p != UNSPLIT);
        assert_eq!(
            decide(split, &counts.spans, &counts.cells, 1000, 1.5, u64::MAX),
            Decision::Leaf
        );

        let far = Aabb::new(Vec3::splat(100.0), Vec3::splat(101.0));
        let mut counts = Counts::default();
        let planes = [[200.0, 300.0, 400.0], UNSPLIT, UNSPLIT];
        counts.add(&planes, &b);
        counts.add(&planes, &far);
        let split = [true, false, false];
        assert_eq!(
            decide(split, &counts.spans, &counts.cells, 2, 1.5, u64::MAX),
            Decision::Zoom(0)
        );
    }

    #[test]
    fn keys_sort_depth_first() {
        let a = Key::ROOT.child(4096, 3);
        let a_child = a.child(64, 63);
        let a_grandchild = a_child.child(2, 0);
        let b = Key::ROOT.child(4096, 4);
        assert!(a.bits < a_child.bits && a_child.bits < a_grandchild.bits);
        assert!(a_grandchild.bits < b.bits);
        assert_eq!((a.free, a_child.free, a_grandchild.free), (115, 108, 106));
        let mut deep = Key::ROOT.child(4096, 4095);
        while deep.can_split(64) {
            deep = deep.child(64, 63);
        }
        assert!(deep.bits > b.bits && deep.free < 7);
    }
}
