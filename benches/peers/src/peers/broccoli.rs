//! broccoli 6.3: a 2D KD-tree / sweep-and-prune hybrid. It sees x and y only
//! (each rect padded by one ulp outward, so touching boxes stay
//! candidates whatever its boundary rule); z is filtered in the callback by
//! the exact 3D test.

use broadphase::Aabb;
use broccoli::aabb::BBox;
use broccoli::aabb::pin::AabbPin;

/// The 2D rect of a box, padded by one ulp.
fn rect(b: &Aabb) -> broccoli::axgeom::Rect<f32> {
    broccoli::rect(b.min.x.next_down(), b.max.x.next_up(), b.min.y.next_down(), b.max.y.next_up())
}

/// Fills `bots` from `boxes` (id in the payload).
pub fn fill(boxes: &[Aabb], bots: &mut Vec<BBox<f32, u32>>) {
    bots.clear();
    bots.extend(boxes.iter().enumerate().map(|(i, b)| broccoli::bbox(rect(b), i as u32)));
}

/// Build + `find_colliding_pairs`, one thread.
pub fn pairs(boxes: &[Aabb], bots: &mut Vec<BBox<f32, u32>>, out: &mut Vec<[u32; 2]>) {
    fill(boxes, bots);
    let mut tree = broccoli::Tree::new(bots);
    out.clear();
    tree.find_colliding_pairs(|a, b| {
        super::keep(boxes, *a.unpack_inner(), *b.unpack_inner(), out);
    });
}

/// One rect query on a built tree, z filtered.
pub fn query(
    tree: &mut broccoli::Tree<'_, BBox<f32, u32>>,
    boxes: &[Aabb],
    q: &Aabb,
    out: &mut Vec<u32>,
) {
    out.clear();
    let mut r = broccoli::bbox(rect(q), ());
    tree.find_all_intersect_rect(AabbPin::from_mut(&mut r), |_, b| {
        let i = *b.unpack_inner();
        if boxes[i as usize].overlaps(q) {
            out.push(i);
        }
    });
}
