//! The tree's invariants, checked from scratch. Tests call this after every
//! build; it is O(boxes × leaves) and meant for tests, not frames.

use super::tree::{AdaptiveGrid, Region, leaf_columns};
use broadphase_storage::{Aabb, LANES, SENTINEL_ID};
use core::fmt;

/// A broken tree invariant found by [`AdaptiveGrid::validate`].
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

impl AdaptiveGrid {
    /// Checks the tree built from `boxes` against its invariants: every node
    /// reached once; occupancy masks match the children; the leaf regions
    /// partition space; every box is in every leaf whose region it meets
    /// (so every cell it overlaps reaches it); leaf data equals the input;
    /// padding is sentinels.
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
        ensure!(
            boxes.len() == self.box_count,
            "built {} boxes, given {}",
            self.box_count,
            boxes.len()
        );
        if boxes.is_empty() {
            ensure!(self.nodes.is_empty() && self.leaves.is_empty(), "empty input left nodes");
            return Ok(());
        }
        let mut node_seen = vec![false; self.nodes.len()];
        let mut leaf_seen = vec![false; self.leaves.len()];
        let mut box_seen = vec![false; boxes.len()];
        self.check_node(
            0,
            Region::EVERYWHERE,
            boxes,
            &mut node_seen,
            &mut leaf_seen,
            &mut box_seen,
        )?;
        ensure!(node_seen.iter().all(|&s| s), "a node is unreachable from the root");
        ensure!(leaf_seen.iter().all(|&s| s), "a leaf is unreachable from the root");
        let lost = box_seen.iter().position(|&s| !s);
        ensure!(lost.is_none(), "box {} is in no leaf", lost.unwrap_or(0));
        Ok(())
    }

    fn check_node(
        &self,
        index: usize,
        region: Region,
        boxes: &[Aabb],
        node_seen: &mut [bool],
        leaf_seen: &mut [bool],
        box_seen: &mut [bool],
    ) -> Result<(), ValidationError> {
        ensure!(index < self.nodes.len(), "node {index} out of range");
        ensure!(!node_seen[index], "node {index} reached twice");
        node_seen[index] = true;
        let node = self.nodes[index];
        if node.is_leaf {
            let leaf_index = node.first_child as usize;
            ensure!(leaf_index < self.leaves.len(), "leaf {leaf_index} out of range");
            ensure!(!leaf_seen[leaf_index], "leaf {leaf_index} reached twice");
            leaf_seen[leaf_index] = true;
            return self.check_leaf(leaf_index, region, boxes, box_seen);
        }
        let children = node.occupancy.count_ones() as usize;
        ensure!(children > 0, "inner node {index} has an empty occupancy mask");
        ensure!(
            node.first_child as usize + children <= self.nodes.len(),
            "node {index}: children past the end"
        );
        let mut child = node.first_child as usize;
        for cell in 0..64 {
            if node.occupancy & (1 << cell) == 0 {
                continue;
            }
            let child_region = region.child(&node.planes, cell);
            self.check_node(child, child_region, boxes, node_seen, leaf_seen, box_seen)?;
            child += 1;
        }
        Ok(())
    }

    fn check_leaf(
        &self,
        leaf_index: usize,
        region: Region,
        boxes: &[Aabb],
        box_seen: &mut [bool],
    ) -> Result<(), ValidationError> {
        let leaf = self.leaves[leaf_index];
        ensure!(leaf.region == region, "leaf {leaf_index}: stored region differs from its cell");
        ensure!(leaf.count > 0 || self.leaves.len() == 1, "leaf {leaf_index} is empty");
        ensure!(
            (leaf.start as usize).is_multiple_of(LANES),
            "leaf {leaf_index} is not lane-aligned"
        );
        let (cols, ids) = leaf_columns(&self.soa, &leaf);
        let count = leaf.count as usize;
        let mut in_leaf = vec![false; boxes.len()];
        for (slot, &id) in ids.iter().enumerate() {
            if slot >= count {
                ensure!(id == SENTINEL_ID, "leaf {leaf_index}: padding slot {slot} holds box {id}");
                let padding_is_empty = cols.row(slot).max.x < cols.row(slot).min.x;
                ensure!(padding_is_empty, "leaf {leaf_index}: padding slot {slot} can overlap");
                continue;
            }
            ensure!((id as usize) < boxes.len(), "leaf {leaf_index}: id {id} out of range");
            ensure!(!in_leaf[id as usize], "leaf {leaf_index}: box {id} stored twice");
            ensure!(
                cols.row(slot) == boxes[id as usize],
                "leaf {leaf_index}: box {id} differs from input"
            );
            in_leaf[id as usize] = true;
            box_seen[id as usize] = true;
        }
        for (id, b) in boxes.iter().enumerate() {
            ensure!(
                !region.meets(b) || in_leaf[id],
                "box {id} meets leaf {leaf_index}'s region {region:?} but is not in it"
            );
        }
        Ok(())
    }
}
