//! bvh 0.13 (SAH build, no rayon): it has no self join, so the frame is
//! build + one `traverse_iterator` query per box (partners with a higher
//! index kept).

use broadphase::Aabb;
use bvh::aabb::{Aabb as BAabb, Bounded};
use bvh::bounding_hierarchy::BHShape;
use bvh::bvh::Bvh;
use nalgebra::Point3;

/// A box with its id and its node in the tree.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    aabb: BAabb<f32, 3>,
    node: usize,
    id: u32,
}

impl Bounded<f32, 3> for Shape {
    fn aabb(&self) -> BAabb<f32, 3> {
        self.aabb
    }
}

impl BHShape<f32, 3> for Shape {
    fn set_bh_node_index(&mut self, index: usize) {
        self.node = index;
    }

    fn bh_node_index(&self) -> usize {
        self.node
    }
}

/// bvh's box for ours.
pub fn to_bvh(b: &Aabb) -> BAabb<f32, 3> {
    BAabb::with_bounds(
        Point3::new(b.min.x, b.min.y, b.min.z),
        Point3::new(b.max.x, b.max.y, b.max.z),
    )
}

/// Builds the tree over `shapes`.
pub fn build(boxes: &[Aabb], shapes: &mut Vec<Shape>) -> Bvh<f32, 3> {
    shapes.clear();
    shapes.extend(boxes.iter().enumerate().map(|(i, b)| Shape {
        aabb: to_bvh(b),
        node: 0,
        id: i as u32,
    }));
    Bvh::build(shapes)
}

/// Build + one query per box.
pub fn pairs(boxes: &[Aabb], shapes: &mut Vec<Shape>, out: &mut Vec<[u32; 2]>) {
    let tree = build(boxes, shapes);
    out.clear();
    for s in shapes.iter() {
        for t in tree.traverse_iterator(&s.aabb, shapes) {
            if t.id > s.id {
                super::keep(boxes, s.id, t.id, out);
            }
        }
    }
}

/// One query on a built tree.
pub fn query(tree: &Bvh<f32, 3>, shapes: &[Shape], boxes: &[Aabb], q: &Aabb, out: &mut Vec<u32>) {
    out.clear();
    let bq = to_bvh(q);
    out.extend(
        tree.traverse_iterator(&bq, shapes)
            .map(|s| s.id)
            .filter(|&i| boxes[i as usize].overlaps(q)),
    );
}

/// The first box `ray` hits, with bvh's `nearest_traverse_iterator`
/// (boxes whose bounds the ray meets, nearest first): the first with an
/// exact hit ([`Ray::entry`], within `max_t`) wins. The leaf test is ours,
/// so the answers can be gated equal.
pub fn cast_ray(
    tree: &Bvh<f32, 3>,
    shapes: &[Shape],
    boxes: &[Aabb],
    ray: &broadphase::query::Ray,
) -> Option<(u32, f32)> {
    let (o, d) = (ray.origin, ray.dir);
    let bray =
        bvh::ray::Ray::new(Point3::new(o.x, o.y, o.z), nalgebra::Vector3::new(d.x, d.y, d.z));
    tree.nearest_traverse_iterator(&bray, shapes)
        .find_map(|s| ray.entry(&boxes[s.id as usize]).map(|t| (s.id, t)))
}
