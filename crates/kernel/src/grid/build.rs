//! Building the tree: depth first, one counting sort per node.
//!
//! A node's split planes are placed over the extent its boxes cover inside
//! the node (not over the node's region, which may be all of space), so a
//! cluster beside far outliers gets fine cells at once. Where one cell would
//! receive every box, the planes zoom into that cell instead of making a
//! level that separates nothing. An axis is split only where it separates
//! boxes more than it copies them; a node with no such axis, or past the
//! depth limit, is a leaf whatever its size. That is what keeps a pile of
//! identical boxes, one huge box, or long thin boxes from recursing forever.

use super::tree::{AdaptiveGrid, Item, Leaf, Node, Region, Task, cell_of};
use broadphase_storage::{Aabb, InputError, validate_boxes};

/// Planes of an axis that is not split: everything falls in cell 0.
const UNSPLIT: [f32; 3] = [f32::INFINITY; 3];

impl AdaptiveGrid {
    /// Indexes `boxes`, replacing what the grid held.
    ///
    /// Bounds come from the data: boxes may lie anywhere in `f32` range. On
    /// an error the grid is left empty.
    ///
    /// # Errors
    /// [`InputError`] naming the first box with a NaN or infinite coordinate
    /// or `min > max`, or more than [`MAX_BOXES`](broadphase_storage::MAX_BOXES) boxes.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb, InputError};
    /// use glam::Vec3;
    /// let mut grid = AdaptiveGrid::default();
    /// let bad = [Aabb::new(Vec3::ZERO, Vec3::ONE), Aabb::new(Vec3::ONE, Vec3::ZERO)];
    /// assert!(matches!(grid.build(&bad), Err(InputError::Inverted { index: 1, .. })));
    /// assert!(grid.is_empty());
    /// ```
    pub fn build(&mut self, boxes: &[Aabb]) -> Result<(), InputError> {
        self.nodes.reset();
        self.leaves.reset();
        self.soa.clear();
        self.scratch.items.reset();
        self.scratch.tasks.clear();
        self.box_count = 0;
        validate_boxes(boxes)?;
        self.box_count = boxes.len();
        if boxes.is_empty() {
            return Ok(());
        }
        for (id, bounds) in boxes.iter().enumerate() {
            self.scratch.items.push(Item { bounds: *bounds, id: id as u32 });
        }
        self.nodes.push(Node::default());
        self.scratch.tasks.push(Task {
            node: 0,
            start: 0,
            count: boxes.len(),
            region: Region::EVERYWHERE,
            depth: 0,
        });
        while let Some(task) = self.scratch.tasks.pop() {
            match self.plan_split(&task) {
                Some((planes, occupancy_counts)) => self.split(&task, planes, &occupancy_counts),
                None => self.make_leaf(&task),
            }
        }
        Ok(())
    }

    /// Chooses the split planes of a node, or `None` when it must be a leaf.
    /// Leaves the per-item cell ranges for those planes in `scratch.ranges`
    /// and returns the box count of each of the 64 cells.
    fn plan_split(&mut self, task: &Task) -> Option<([[f32; 3]; 3], [u32; 64])> {
        let config = self.config;
        if task.count <= config.leaf_capacity.max(1) {
            return None;
        }
        let items_total = self.scratch.items.len();
        let items = &self.scratch.items.as_slice()[task.start..task.start + task.count];
        let ranges = &mut self.scratch.ranges;
        let mut window = task.region;
        let mut depth = task.depth;
        loop {
            if depth >= config.max_depth {
                return None;
            }
            let planes = planes_over_extent(items, &window, task.count, config.leaf_capacity);
            // Cell range of every item per axis, how many cells each axis
            // copies boxes into, and the box count per cell, in one pass.
            ranges.reset();
            ranges.allocate(items.len(), 0);
            let mut spans = [0u64; 3];
            let mut counts = [0u32; 64];
            for (item, packed_out) in items.iter().zip(ranges.as_mut_slice()) {
                let mut packed = 0u16;
                for axis in 0..3 {
                    let first = cell_of(&planes[axis], item.bounds.min[axis]);
                    let last = cell_of(&planes[axis], item.bounds.max[axis]);
                    spans[axis] += (last - first + 1) as u64;
                    packed |= ((first | last << 2) as u16) << (4 * axis);
                }
                *packed_out = packed;
                for_each_cell(packed, |cell| counts[cell] += 1);
            }
            let limit = f64::from(config.max_axis_replication) * task.count as f64;
            let mut split_axes = [false; 3];
            let mut chosen = planes;
            for axis in 0..3 {
                split_axes[axis] = planes[axis] != UNSPLIT && (spans[axis] as f64) <= limit;
                if !split_axes[axis] {
                    chosen[axis] = UNSPLIT;
                }
            }
            if split_axes == [false; 3] {
                return None;
            }
            if chosen != planes {
                // An axis was dropped for copying too much: its boxes all go
                // to cell 0 there, so clear its ranges and count again.
                let keep = (0..3).filter(|&a| split_axes[a]).fold(0u16, |m, a| m | 0xF << (4 * a));
                counts = [0u32; 64];
                for packed in ranges.as_mut_slice() {
                    *packed &= keep;
                    for_each_cell(*packed, |cell| counts[cell] += 1);
                }
            }
            let copies: usize = counts.iter().map(|&c| c as usize).sum();
            if exceeds_copy_budget(items_total, copies, self.box_count) {
                return None;
            }
            let busiest = (0..64).max_by_key(|&c| counts[c]).unwrap_or(0);
            if (counts[busiest] as usize) < task.count {
                return Some((chosen, counts));
            }
            // Every box lands in one cell: zoom the planes into it.
            // (Unsplit axes have one cell, so their window stays.)
            window = window.child(&chosen, busiest);
            depth += 1;
        }
    }

    /// Scatters a node's items to its occupied cells (a counting sort) and
    /// queues one task per child.
    fn split(&mut self, task: &Task, planes: [[f32; 3]; 3], counts: &[u32; 64]) {
        let mut occupancy = 0u64;
        let mut offsets = [0usize; 64];
        let base = self.scratch.items.len();
        let mut total = 0usize;
        for cell in 0..64 {
            offsets[cell] = base + total;
            total += counts[cell] as usize;
            occupancy |= u64::from(counts[cell] > 0) << cell;
        }
        self.scratch.items.allocate(total, Item::default());
        let (old, new) = self.scratch.items.as_mut_slice().split_at_mut(base);
        let items = &old[task.start..task.start + task.count];
        let mut cursor = offsets;
        for (item, &packed) in items.iter().zip(self.scratch.ranges.as_slice()) {
            for_each_cell(packed, |cell| {
                new[cursor[cell] - base] = *item;
                cursor[cell] += 1;
            });
        }

        let first_child = self.nodes.len();
        self.nodes.allocate(occupancy.count_ones() as usize, Node::default());
        self.nodes[task.node as usize] =
            Node { planes, occupancy, first_child: first_child as u32, is_leaf: false };
        let mut bits = occupancy;
        let mut child = first_child;
        while bits != 0 {
            let cell = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let region = task.region.child(&planes, cell);
            self.scratch.tasks.push(Task {
                node: child as u32,
                start: offsets[cell],
                count: counts[cell] as usize,
                region,
                depth: task.depth + 1,
            });
            child += 1;
        }
    }

    /// Copies a node's boxes into the SoA buffer as one padded leaf.
    fn make_leaf(&mut self, task: &Task) {
        let items = &self.scratch.items.as_slice()[task.start..task.start + task.count];
        let start = self.soa.push_group(items.iter().map(|item| (item.id, item.bounds)));
        let leaf = self.leaves.push(Leaf {
            start: start as u32,
            count: task.count as u32,
            region: task.region,
        });
        self.nodes[task.node as usize] =
            Node { planes: [UNSPLIT; 3], occupancy: 0, first_child: leaf as u32, is_leaf: true };
    }
}

/// Split planes over the extent the items cover inside `window`: 1, 2 or
/// 4 equal cells per axis, as few as give about one cell per
/// `leaf_capacity` boxes. A node just over the leaf limit is halved rather
/// than cut into 64 slivers of a few boxes each, whose per-leaf overhead
/// would dominate.
fn planes_over_extent(
    items: &[Item],
    window: &Region,
    count: usize,
    leaf_capacity: usize,
) -> [[f32; 3]; 3] {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for item in items {
        // Plain compares, not f32::min/max: the input is validated NaN-free,
        // and these compile to single minss/maxss instead of NaN handling.
        for axis in 0..3 {
            let (min, max) = (item.bounds.min[axis], item.bounds.max[axis]);
            let clamped_min = if min > window.lo[axis] { min } else { window.lo[axis] };
            let clamped_max = if max < window.hi[axis] { max } else { window.hi[axis] };
            lo[axis] = if clamped_min < lo[axis] { clamped_min } else { lo[axis] };
            hi[axis] = if clamped_max > hi[axis] { clamped_max } else { hi[axis] };
        }
    }
    // f64: the extent of two f32 coordinates near ±3.4e38 overflows f32.
    let extent: [f64; 3] = core::array::from_fn(|a| f64::from(hi[a]) - f64::from(lo[a]));
    let wanted_cells = count.div_ceil(leaf_capacity.max(1)).clamp(2, 64);
    let mut divisions = [1usize; 3];
    while divisions.iter().product::<usize>() < wanted_cells {
        // Halve the axis whose cells are longest; stop when none can be.
        let widest = (0..3).filter(|&a| divisions[a] < 4 && extent[a] > 0.0).max_by(|&a, &b| {
            (extent[a] / divisions[a] as f64).total_cmp(&(extent[b] / divisions[b] as f64))
        });
        match widest {
            Some(axis) => divisions[axis] *= 2,
            None => break,
        }
    }
    core::array::from_fn(|axis| {
        let step = extent[axis] / divisions[axis] as f64;
        let plane = |k: usize| {
            if k < divisions[axis] {
                (f64::from(lo[axis]) + step * k as f64) as f32
            } else {
                f32::INFINITY
            }
        };
        if divisions[axis] == 1 { UNSPLIT } else { [plane(1), plane(2), plane(3)] }
    })
}

/// Box copies the build may hold in all, per input box. Normal scenes use
/// 2–6; only input built to defeat the replication limit level after level
/// gets near it, and then its nodes become leaves instead of exhausting
/// memory.
const MAX_COPIES_PER_BOX: usize = 32;

/// Whether splitting would take the item buffer past its budget.
#[inline]
fn exceeds_copy_budget(items_now: usize, copies: usize, box_count: usize) -> bool {
    items_now + copies > MAX_COPIES_PER_BOX * box_count + 4096
}

/// Calls `visit(cell)` for every cell of a packed per-axis cell range.
#[inline(always)]
fn for_each_cell(packed: u16, mut visit: impl FnMut(usize)) {
    let range = |axis: usize| {
        let bits = (packed >> (4 * axis)) as usize;
        (bits & 3, (bits >> 2) & 3)
    };
    let ((x0, x1), (y0, y1), (z0, z1)) = (range(0), range(1), range(2));
    if (x0, y0, z0) == (x1, y1, z1) {
        // Most boxes are in one cell; skip the loop nest for them.
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
