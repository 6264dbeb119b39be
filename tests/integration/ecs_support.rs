//! The oracle the ECS tests compare the plugin against: every pair of the
//! world's boxes, by brute force, read straight from the components, and
//! the body pairs they make.

#![allow(dead_code, unreachable_pub)]

use broadphase::ecs::hecs::{Entity, World};
use broadphase::ecs::{Aabb, Collider, ColliderOf, CollisionLayers, Static};
use broadphase::glam::Vec3;

/// One entity as the plugin should see it.
#[derive(Clone, Copy, Debug)]
pub struct Body {
    pub entity: Entity,
    pub aabb: Aabb,
    pub layers: CollisionLayers,
    pub is_static: bool,
    /// The body it is part of: its `ColliderOf`'s entity, else itself.
    pub body: Entity,
}

/// Every entity with a box: its `Aabb`, else its `Collider` at its `Vec3`.
pub fn bodies(world: &World) -> Vec<Body> {
    let mut out = Vec::new();
    for entity in world.iter() {
        let e = entity.entity();
        let aabb = if let Some(b) = entity.get::<&Aabb>() {
            *b
        } else if let (Some(p), Some(c)) = (entity.get::<&Vec3>(), entity.get::<&Collider>()) {
            c.aabb_at(*p)
        } else {
            continue;
        };
        let layers = entity.get::<&CollisionLayers>().map(|l| *l).unwrap_or_default();
        let body = entity.get::<&ColliderOf>().map_or(e, |of| of.0);
        out.push(Body { entity: e, aabb, layers, is_static: entity.has::<Static>(), body });
    }
    out
}

/// The pairs the plugin must publish for `world`: overlapping, layers
/// matching, not both static, not of one body; `(a, b)` with `a < b`,
/// sorted.
pub fn expected_pairs(world: &World) -> Vec<(Entity, Entity)> {
    let bodies = bodies(world);
    let mut pairs = Vec::new();
    for (i, a) in bodies.iter().enumerate() {
        for b in &bodies[i + 1..] {
            if (a.is_static && b.is_static) || a.body == b.body {
                continue;
            }
            if a.aabb.overlaps(&b.aabb) && a.layers.interacts_with(&b.layers) {
                pairs.push(if a.entity < b.entity {
                    (a.entity, b.entity)
                } else {
                    (b.entity, a.entity)
                });
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

/// `now` minus `prev`, both sorted.
pub fn minus(now: &[(Entity, Entity)], prev: &[(Entity, Entity)]) -> Vec<(Entity, Entity)> {
    now.iter().filter(|p| prev.binary_search(p).is_err()).copied().collect()
}

/// A cube of side `size` with its min corner at `at`.
pub fn cube(at: Vec3, size: f32) -> Aabb {
    Aabb::new(at, at + Vec3::splat(size))
}

/// The body pairs the plugin must publish for `world`: the bodies of
/// [`expected_pairs`], each pair once, `(a, b)` with `a < b`, sorted.
pub fn expected_body_pairs(world: &World) -> Vec<(Entity, Entity)> {
    let body_of = |e: Entity| world.get::<&ColliderOf>(e).map_or(e, |of| of.0);
    let mut pairs: Vec<(Entity, Entity)> = expected_pairs(world)
        .into_iter()
        .map(|(a, b)| {
            let (a, b) = (body_of(a), body_of(b));
            assert_ne!(a, b, "a pair within one body");
            if a < b { (a, b) } else { (b, a) }
        })
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}
