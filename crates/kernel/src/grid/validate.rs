//! The kept build's invariants, checked from scratch. Tests call this after
//! every build; it is O(boxes × nodes) and meant for tests, not frames.

use super::hierarchy::AdaptiveGrid;
use super::leaf::flip;
use super::quantize::{Cell, Item, Quantizer};
use super::split::child_cell;
use broadphase_storage::{Aabb, SENTINEL_ID};
use core::fmt;

/// A broken invariant of the kept build, found by [`AdaptiveGrid::validate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationError(String);

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "adaptive grid invariant broken: {}", self.0)
    }
}

impl std::error::Error for ValidationError {}

macro_rules! ensure {
    ($cond:expr, $($msg:tt)+) => {
        if !$cond {
            return Err(ValidationError(format!($($msg)+)));
        }
    };
}

/// Whether the item's quantized box meets the cell.
fn meets(item: &Item, cell: Cell) -> bool {
    let shift = cell.shift();
    (0..3).all(|a| {
        let p = u32::from(cell.prefix[a]);
        (u32::from(item.lo[a]) >> shift) <= p && p <= (u32::from(item.hi[a]) >> shift)
    })
}

/// Whether the item's box, clipped to `cell`, lies inside the 4×4×4 block.
fn clipped_inside(item: &Item, cell: Cell, block: Cell) -> bool {
    let shift = block.shift();
    (0..3).all(|a| {
        let (cell_lo, cell_hi) = cell.span(a);
        let lo = u32::from(item.lo[a]).max(cell_lo);
        let hi = u32::from(item.hi[a]).min(cell_hi);
        let block_lo = u32::from(block.prefix[a]) << shift;
        let block_hi = ((u32::from(block.prefix[a]) + 4) << shift) - 1;
        block_lo <= lo && hi <= block_hi
    })
}

impl AdaptiveGrid {
    /// Checks the kept build of `boxes` against its invariants:
    /// every node reached once; occupancy masks match the children; each
    /// block lies in its node's cell one level or more below it; every box
    /// that meets a node's cell lies, inside that cell, in the node's block
    /// and reaches an existing child for every child cell it meets; every
    /// box is in exactly the leaves whose cells it meets, with its
    /// quantized bounds, its low-corner axes, and no repeat; padding is
    /// sentinels. Together these say every point of every box lies in one
    /// leaf that holds the box, which is what makes every pair found once.
    /// And once a cast has built the rays' tree, it holds every box once,
    /// each node's boxes the hulls of its children's.
    ///
    /// # Errors
    /// A [`ValidationError`] describing the first broken invariant.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use glam::Vec3;
    /// let boxes: Vec<Aabb> =
    ///     (0..500).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 2.0))).collect();
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// assert!(grid.validate(&boxes).is_ok());
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn validate(&self, boxes: &[Aabb]) -> Result<(), ValidationError> {
        if !self.kept {
            // After find_pairs the grid keeps nothing: the build of no box.
            ensure!(
                boxes.is_empty(),
                "{} boxes given, none kept (find_pairs keeps nothing)",
                boxes.len()
            );
            return Ok(());
        }
        ensure!(self.boxes.as_slice() == boxes, "the kept boxes differ from the input");
        let nodes = &self.builder.nodes;
        if boxes.is_empty() {
            ensure!(nodes.is_empty() && self.leaves.len() == 0, "empty input left nodes");
            return Ok(());
        }
        ensure!(
            Quantizer::covering(boxes).is_ok_and(|q| q == self.quantizer),
            "quantizer differs from the input's bounds"
        );
        let items: Vec<Item> =
            boxes.iter().enumerate().map(|(id, b)| self.quantizer.item(b, id as u32)).collect();
        let mut node_seen = vec![false; nodes.len()];
        let mut in_a_leaf = vec![false; boxes.len()];
        let mut stack = vec![0usize];
        ensure!(nodes[0].cell == Cell::ROOT, "the root is not the whole cube");
        while let Some(index) = stack.pop() {
            ensure!(index < nodes.len(), "node {index} out of range");
            ensure!(!node_seen[index], "node {index} reached twice");
            node_seen[index] = true;
            let node = nodes[index];
            if node.is_leaf() {
                self.check_leaf(index, &items, &mut in_a_leaf)?;
                continue;
            }
            let block = node.block;
            ensure!(block.depth > node.cell.depth, "node {index}: block not below the node");
            ensure!(block.prefix.iter().all(|p| p % 4 == 0), "node {index}: block not aligned");
            let up = 2 * u32::from(block.depth - node.cell.depth);
            ensure!(
                (0..3).all(|a| u32::from(block.prefix[a]) >> up == u32::from(node.cell.prefix[a])),
                "node {index}: block outside the node's cell"
            );
            let children = node.occupancy.count_ones() as usize;
            ensure!(
                node.first as usize + children <= nodes.len(),
                "node {index}: children past the end"
            );
            for item in items.iter().filter(|item| meets(item, node.cell)) {
                ensure!(
                    clipped_inside(item, node.cell, block),
                    "node {index}: box {} leaves the block inside the node's cell",
                    item.id
                );
                for c in 0..64 {
                    let reaches = meets(item, child_cell(block, c));
                    ensure!(
                        !reaches || node.occupancy >> c & 1 == 1,
                        "node {index}: box {} meets child cell {c}, which has no node",
                        item.id
                    );
                }
            }
            let occupied = (0..64).filter(|c| node.occupancy >> c & 1 == 1);
            for (child, c) in (node.first as usize..).zip(occupied) {
                ensure!(
                    nodes[child].cell == child_cell(block, c),
                    "node {child}: cell differs from its parent's cell {c}"
                );
                stack.push(child);
            }
        }
        ensure!(node_seen.iter().all(|&s| s), "a node is unreachable from the root");
        if let Some(tree) = self.ray_tree.built() {
            tree.covers(boxes).map_err(ValidationError)?;
        }
        let lost = in_a_leaf.iter().position(|&s| !s);
        ensure!(lost.is_none(), "box {} is in no leaf", lost.unwrap_or(0));
        Ok(())
    }

    fn check_leaf(
        &self,
        index: usize,
        items: &[Item],
        in_a_leaf: &mut [bool],
    ) -> Result<(), ValidationError> {
        let node = self.builder.nodes[index];
        let count = node.count as usize;
        ensure!(count > 0, "leaf {index} is empty");
        ensure!(
            node.first as usize + count <= self.leaves.len(),
            "leaf {index}: slots past the end"
        );
        let leaf = self.leaves.view(node.first as usize, count);
        ensure!(leaf.is_padded(), "leaf {index}: columns not padded");
        let mut in_leaf = vec![false; items.len()];
        for slot in 0..leaf.padded_len() {
            let id = leaf.ids[slot];
            if slot >= count {
                ensure!(id == SENTINEL_ID, "leaf {index}: padding slot {slot} holds box {id}");
                ensure!(leaf.owned[slot] == 0, "leaf {index}: padding slot {slot} owns axes");
                continue;
            }
            ensure!((id as usize) < items.len(), "leaf {index}: id {id} out of range");
            ensure!(!in_leaf[id as usize], "leaf {index}: box {id} stored twice");
            in_leaf[id as usize] = true;
            in_a_leaf[id as usize] = true;
            let item = items[id as usize];
            let stored_lo = [leaf.lo[0][slot], leaf.lo[1][slot], leaf.lo[2][slot]];
            let stored_hi = [leaf.hi[0][slot], leaf.hi[1][slot], leaf.hi[2][slot]];
            ensure!(
                stored_lo == item.lo.map(flip) && stored_hi == item.hi.map(flip),
                "leaf {index}: box {id}'s quantized bounds differ from the input's"
            );
            ensure!(
                leaf.owned[slot] == i16::from(node.cell.owned_axes(item.lo)),
                "leaf {index}: box {id}'s low-corner axes are wrong"
            );
        }
        for item in items {
            let meets = meets(item, node.cell);
            ensure!(
                meets == in_leaf[item.id as usize],
                "box {} meets leaf {index}'s cell {:?}: {meets}, but is in it: {}",
                item.id,
                node.cell,
                in_leaf[item.id as usize]
            );
        }
        if count > self.config.sweep_above {
            ensure!(leaf.lo[0][..count].is_sorted(), "leaf {index}: big leaf not sorted by low x");
        }
        Ok(())
    }
}
