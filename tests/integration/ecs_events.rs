//! Collision events: a pair starts, persists, ends; entities appear, move,
//! lose their box, change kind and despawn between frames; a despawned
//! entity ends its pairs once and is never seen again; the plugin never
//! moves entities between archetypes.

use crate::ecs_support;

use broadphase::ecs::hecs::World;
use broadphase::ecs::{Aabb, BroadPhasePlugin, Collider, Static};
use broadphase::glam::Vec3;
use ecs_support::{cube, expected_pairs};

#[test]
fn start_persist_end() {
    let mut world = World::new();
    let a = world.spawn((cube(Vec3::ZERO, 1.0),));
    let b = world.spawn((cube(Vec3::splat(5.0), 1.0),));
    let mut plugin = BroadPhasePlugin::new();

    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty() && plugin.started().is_empty() && plugin.ended().is_empty());

    *world.get::<&mut Aabb>(b).unwrap() = cube(Vec3::splat(0.5), 1.0);
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(a, b)]);
    assert_eq!(plugin.started(), [(a, b)]);
    assert!(plugin.ended().is_empty());

    // Still overlapping, moved a little: persists, no event.
    *world.get::<&mut Aabb>(b).unwrap() = cube(Vec3::splat(0.75), 1.0);
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(a, b)]);
    assert!(plugin.started().is_empty() && plugin.ended().is_empty());
    assert_eq!(plugin.stats().pairs, 1);

    *world.get::<&mut Aabb>(b).unwrap() = cube(Vec3::splat(3.0), 1.0);
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty());
    assert!(plugin.started().is_empty());
    assert_eq!(plugin.ended(), [(a, b)]);

    plugin.run(&mut world).unwrap();
    assert!(plugin.ended().is_empty(), "an end is reported once");
}

#[test]
fn despawn_ends_pairs_once_and_never_leaks_the_entity() {
    let mut world = World::new();
    let a = world.spawn((cube(Vec3::ZERO, 2.0),));
    let b = world.spawn((cube(Vec3::ONE, 2.0),));
    let c = world.spawn((Vec3::splat(1.5), Collider::sphere(1.0)));
    let s = world.spawn((cube(Vec3::splat(-1.0), 10.0), Static));
    let mut plugin = BroadPhasePlugin::new();
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs().len(), 6, "{:?}", plugin.pairs()); // a-b a-c b-c, and each with s

    world.despawn(b).unwrap();
    world.despawn(s).unwrap();
    plugin.run(&mut world).unwrap();
    let mut ended = vec![(a, b), (b, c), (a, s), (b, s), (c, s)];
    ended.iter_mut().for_each(|p| *p = if p.0 < p.1 { *p } else { (p.1, p.0) });
    ended.sort_unstable();
    assert_eq!(plugin.ended(), ended);
    assert!(plugin.started().is_empty());
    assert_eq!(plugin.pairs(), [(a, c)]);

    // Spawning reuses the freed ids with a new generation: the newcomers
    // are new pairs, never confused with the despawned entities.
    let b2 = world.spawn((cube(Vec3::ONE, 2.0),));
    assert!([b.id(), s.id()].contains(&b2.id()), "hecs reuses freed ids");
    assert!(b2 != b && b2 != s);
    plugin.run(&mut world).unwrap();
    for &(x, y) in plugin.pairs().iter().chain(plugin.started()).chain(plugin.ended()) {
        for dead in [b, s] {
            assert!(x != dead && y != dead, "stale entity {dead:?} in ({x:?}, {y:?})");
        }
    }
    assert_eq!(plugin.pairs(), expected_pairs(&world));
    assert_eq!(plugin.started().len(), 2);
}

#[test]
fn reused_id_in_the_same_frame_is_a_new_pair() {
    let mut world = World::new();
    let a = world.spawn((cube(Vec3::ZERO, 1.0),));
    let b = world.spawn((cube(Vec3::ZERO, 1.0),));
    let mut plugin = BroadPhasePlugin::new();
    plugin.run(&mut world).unwrap();
    world.despawn(b).unwrap();
    let b2 = world.spawn((cube(Vec3::ZERO, 1.0),)); // same id, same place, same archetype row
    assert_eq!(b2.id(), b.id());
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.ended(), [(a, b)]);
    assert_eq!(plugin.started(), [(a, b2)]);
    assert_eq!(plugin.pairs(), [(a, b2)]);
}

#[test]
fn appear_move_lose_box_change_kind() {
    let mut world = World::new();
    let a = world.spawn((Vec3::ZERO, Collider::sphere(1.0)));
    let mut plugin = BroadPhasePlugin::new();
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty());

    // Appears overlapping.
    let b = world.spawn((Vec3::X, Collider::sphere(0.5)));
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.started(), [(a, b)]);

    // Becomes static: still the same pair (dynamic a vs static b), no event.
    world.insert_one(b, Static).unwrap();
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(a, b)]);
    assert!(plugin.started().is_empty() && plugin.ended().is_empty());
    assert!(plugin.stats().static_rebuilt);

    // Both static: static pairs are not reported.
    world.insert_one(a, Static).unwrap();
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty());
    assert_eq!(plugin.ended(), [(a, b)]);

    // a moves again as a dynamic body and gains an Aabb, which wins over
    // its collider: far away now.
    world.remove_one::<Static>(a).unwrap();
    world.insert_one(a, cube(Vec3::splat(50.0), 1.0)).unwrap();
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty() && plugin.started().is_empty() && plugin.ended().is_empty());

    // Without its Aabb, a's collider at the origin counts again.
    world.remove_one::<Aabb>(a).unwrap();
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.started(), [(a, b)]);

    // Losing every box component ends the pair.
    world.remove::<(Vec3, Collider)>(a).unwrap();
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.ended(), [(a, b)]);
    assert!(plugin.pairs().is_empty());
}

#[test]
fn the_plugin_moves_no_entity_between_archetypes() {
    let mut world = World::new();
    for i in 0..100 {
        let p = Vec3::new(i as f32 * 0.5, 0.0, 0.0);
        world.spawn((p, Collider::sphere(0.4)));
        world.spawn((cube(p, 0.6), Static));
    }
    let mut plugin = BroadPhasePlugin::new();
    plugin.run(&mut world).unwrap();
    let generation = world.archetypes_generation();
    let shapes: Vec<(usize, u32)> =
        world.archetypes().map(|a| (a.component_types().len(), a.len())).collect();
    for frame in 0..5 {
        for p in world.query_mut::<&mut Vec3>() {
            p.y = frame as f32 * 0.1;
        }
        plugin.run(&mut world).unwrap();
        assert!(!plugin.pairs().is_empty());
    }
    assert_eq!(world.archetypes_generation(), generation);
    let after: Vec<(usize, u32)> =
        world.archetypes().map(|a| (a.component_types().len(), a.len())).collect();
    assert_eq!(after, shapes);
}

#[test]
fn plugin_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<BroadPhasePlugin>();
}
