//! parry3d 0.31 `Bvh` (rapier's broad phase): binned build, then either the
//! self traversal (`traverse_bvtt_single_tree`) or one `intersect_aabb`
//! query per box.

use broadphase::Aabb;
use parry3d::bounding_volume::Aabb as PAabb;
use parry3d::math::Vector;
use parry3d::partitioning::{Bvh, BvhBuildStrategy, BvhWorkspace};

/// parry's box for ours.
pub fn to_parry(b: &Aabb) -> PAabb {
    PAabb::new(Vector::new(b.min.x, b.min.y, b.min.z), Vector::new(b.max.x, b.max.y, b.max.z))
}

/// Builds the tree.
pub fn build(boxes: &[Aabb], leaves: &mut Vec<PAabb>) -> Bvh {
    leaves.clear();
    leaves.extend(boxes.iter().map(to_parry));
    Bvh::from_leaves(BvhBuildStrategy::Binned, leaves)
}

/// Build + self traversal.
pub fn self_pairs(
    boxes: &[Aabb],
    leaves: &mut Vec<PAabb>,
    ws: &mut BvhWorkspace,
    out: &mut Vec<[u32; 2]>,
) {
    let bvh = build(boxes, leaves);
    out.clear();
    bvh.traverse_bvtt_single_tree::<false>(ws, &mut |a, b| super::keep(boxes, a, b, out));
}

/// Build + one query per box (partners with a higher index kept).
pub fn query_pairs(boxes: &[Aabb], leaves: &mut Vec<PAabb>, out: &mut Vec<[u32; 2]>) {
    let bvh = build(boxes, leaves);
    out.clear();
    for (i, leaf) in leaves.iter().enumerate() {
        let i = i as u32;
        for j in bvh.intersect_aabb(leaf) {
            if j > i {
                super::keep(boxes, i, j, out);
            }
        }
    }
}

/// One query on a built tree.
pub fn query(bvh: &Bvh, boxes: &[Aabb], q: &Aabb, out: &mut Vec<u32>) {
    out.clear();
    let pq = to_parry(q);
    out.extend(bvh.intersect_aabb(&pq).filter(|&i| boxes[i as usize].overlaps(q)));
}
