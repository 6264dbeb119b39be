//! obvhs 0.4 (no rayon): a compressed wide BVH (eight children per node,
//! quantized child boxes) built by PLOC with its slow, best-quality
//! preset, traversed by its `CwBvh::ray_traverse`, the fastest ray
//! traversal it has on the CPU. Rays only: it has no box query on this
//! tree.

use broadphase::Aabb;
use broadphase::query::Ray;
use obvhs::BvhBuildParams;
use obvhs::cwbvh::CwBvh;
use obvhs::cwbvh::builder::build_cwbvh;
use obvhs::ray::{Ray as ORay, RayHit};
use obvhs_glam::Vec3A;
use std::time::Duration;

fn vec(v: broadphase::glam::Vec3) -> Vec3A {
    Vec3A::from_array(v.to_array())
}

/// The tree over `boxes` (build time not measured).
pub fn build(boxes: &[Aabb]) -> CwBvh {
    let prims: Vec<obvhs::aabb::Aabb> =
        boxes.iter().map(|b| obvhs::aabb::Aabb { min: vec(b.min), max: vec(b.max) }).collect();
    build_cwbvh(&prims, BvhBuildParams::slow_build(), &mut Duration::default())
}

/// The first box `ray` hits. The leaf test is ours ([`Ray::entry`]), so
/// the answers can be gated equal and the time is obvhs's traversal. It
/// keeps a hit only below its `tmax`: that starts one step above `max_t`,
/// since an entry at `max_t` itself counts.
pub fn cast_ray(bvh: &CwBvh, boxes: &[Aabb], ray: &Ray) -> Option<(u32, f32)> {
    let oray = ORay::new(vec(ray.origin), vec(ray.dir), 0.0, ray.max_t.next_up());
    let mut hit = RayHit::none();
    let found = bvh.ray_traverse(oray, &mut hit, |_, slot| {
        let id = bvh.primitive_indices[slot];
        ray.entry(&boxes[id as usize]).unwrap_or(f32::INFINITY)
    });
    found.then(|| (bvh.primitive_indices[hit.primitive_id as usize], hit.t))
}
