//! rstar 0.14: R*-tree, `bulk_load`, then the self join
//! `intersection_candidates_with_other_tree(&tree)` (each unordered pair
//! comes twice plus self pairs; `i < j` is kept).

use broadphase::Aabb;
use rstar::primitives::{GeomWithData, Rectangle};
use rstar::{AABB, RTree};

/// A box with its id.
pub type Item = GeomWithData<Rectangle<[f32; 3]>, u32>;

/// Bulk-loads the tree.
pub fn build(boxes: &[Aabb]) -> RTree<Item> {
    let items = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            GeomWithData::new(Rectangle::from_corners(b.min.to_array(), b.max.to_array()), i as u32)
        })
        .collect();
    RTree::bulk_load(items)
}

/// Bulk load + self join.
pub fn pairs(boxes: &[Aabb], out: &mut Vec<[u32; 2]>) {
    let tree = build(boxes);
    out.clear();
    for (a, b) in tree.intersection_candidates_with_other_tree(&tree) {
        if a.data < b.data {
            super::keep(boxes, a.data, b.data, out);
        }
    }
}

/// One query on a built tree.
pub fn query(tree: &RTree<Item>, boxes: &[Aabb], q: &Aabb, out: &mut Vec<u32>) {
    out.clear();
    let env = AABB::from_corners(q.min.to_array(), q.max.to_array());
    out.extend(
        tree.locate_in_envelope_intersecting(env)
            .map(|item| item.data)
            .filter(|&i| boxes[i as usize].overlaps(q)),
    );
}
