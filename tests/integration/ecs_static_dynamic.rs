//! Static vs dynamic: a world split into static and dynamic entities gives
//! exactly the all-dynamic pairs minus the static-static ones; the static
//! entities are read once and again only when one is added, removed,
//! moved or re-layered.

use crate::ecs_support;

use broadphase::ecs::hecs::{Entity, World};
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, Collider, CollisionLayers, PluginConfig, Static, StaticChanges,
};
use broadphase::glam::Vec3;
use broadphase_scenes::{SplitMix64, mixed100k};
use ecs_support::{cube, expected_pairs};

/// mixed100k's first `n` boxes; every third static; some with layers.
fn split_world(n: usize, with_static: bool) -> (World, Vec<Entity>) {
    let scene = mixed100k();
    let mut world = World::new();
    let mut rng = SplitMix64::new(17);
    let entities = scene.boxes[..n]
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let layers = CollisionLayers::new(1 << rng.below(3), 0b011 | (1 << rng.below(3)));
            match (with_static && i.is_multiple_of(3), i.is_multiple_of(5)) {
                (true, true) => world.spawn((*b, Static, layers)),
                (true, false) => world.spawn((*b, Static)),
                (false, true) => world.spawn((*b, layers)),
                (false, false) => world.spawn((*b,)),
            }
        })
        .collect();
    (world, entities)
}

#[test]
fn split_equals_all_dynamic_minus_static_pairs() {
    let n = 30_000;
    let (mut split, entities) = split_world(n, true);
    let (mut all_dynamic, same_entities) = split_world(n, false);
    // Same spawn order in two fresh worlds: the same `Entity` handles.
    assert_eq!(entities, same_entities);

    let mut reference = BroadPhasePlugin::new();
    reference.run(&mut all_dynamic).unwrap();
    assert_eq!(reference.stats().static_boxes, 0);
    let is_static = |e: Entity| split.satisfies::<&Static>(e);
    let expected: Vec<(Entity, Entity)> = reference
        .pairs()
        .iter()
        .copied()
        .filter(|&(a, b)| !(is_static(a) && is_static(b)))
        .collect();
    assert!(expected.len() > 1_000, "the scene has pairs of every kind: {}", expected.len());
    assert!(expected.len() < reference.pairs().len());

    // Static changes detected or reported.
    for static_changes in [StaticChanges::Detect, StaticChanges::Notify] {
        let config = PluginConfig { static_changes, ..PluginConfig::default() };
        let mut plugin = BroadPhasePlugin::with_config(config);
        plugin.run(&mut split).unwrap();
        assert_eq!(plugin.stats().static_boxes, n.div_ceil(3));
        assert!(plugin.stats().static_rebuilt);
        assert_eq!(plugin.pairs(), expected, "{static_changes:?}");
    }
}

#[test]
fn statics_are_reindexed_only_when_they_change() {
    let mut world = World::new();
    let statics: Vec<Entity> = (0..200)
        .map(|i| world.spawn((cube(Vec3::new(i as f32 * 2.0, 0.0, 0.0), 1.5), Static)))
        .collect();
    let movers: Vec<Entity> = (0..20)
        .map(|i| world.spawn((Vec3::new(i as f32 * 20.0, 0.5, 0.5), Collider::sphere(0.5))))
        .collect();
    let mut plugin = BroadPhasePlugin::new();
    let mut run = |world: &mut World| {
        plugin.run(world).unwrap();
        assert_eq!(plugin.pairs(), expected_pairs(world));
        (plugin.stats().static_rebuilt, plugin.stats().static_rebuilds)
    };
    assert_eq!(run(&mut world), (true, 1));

    // Dynamic bodies move for 10 frames: the static set is not touched.
    for frame in 1..=10 {
        for &m in &movers {
            world.get::<&mut Vec3>(m).unwrap().x += frame as f32 * 0.3;
        }
        assert_eq!(run(&mut world), (false, 1));
    }

    // Writing the same value is not a change.
    let same = *world.get::<&Aabb>(statics[3]).unwrap();
    *world.get::<&mut Aabb>(statics[3]).unwrap() = same;
    assert_eq!(run(&mut world), (false, 1));

    // Moved.
    world.get::<&mut Aabb>(statics[7]).unwrap().max.y += 1.0;
    assert_eq!(run(&mut world), (true, 2));
    assert_eq!(run(&mut world), (false, 2));
    // Added.
    let extra = world.spawn((cube(Vec3::splat(1.0), 1.0), Static));
    assert_eq!(run(&mut world), (true, 3));
    // Despawned, and its id reused by a static with the same box in the
    // same frame, landing in the same archetype row (`extra` is the last
    // row): a different entity, so a re-index.
    let b = *world.get::<&Aabb>(extra).unwrap();
    world.despawn(extra).unwrap();
    let reborn = world.spawn((b, Static));
    assert_eq!(reborn.id(), extra.id());
    assert_eq!(run(&mut world), (true, 4));
    // Re-layered.
    world.insert_one(statics[0], CollisionLayers::new(2, 2)).unwrap();
    assert_eq!(run(&mut world), (true, 5));
    // Marker removed: the entity becomes dynamic.
    world.remove_one::<Static>(statics[1]).unwrap();
    assert_eq!(run(&mut world), (true, 6));
    // Despawned.
    world.despawn(reborn).unwrap();
    assert_eq!(run(&mut world), (true, 7));
    // A dynamic entity spawning or despawning is not a static change.
    let d = world.spawn((cube(Vec3::ZERO, 1.0),));
    assert_eq!(run(&mut world), (false, 7));
    world.despawn(d).unwrap();
    assert_eq!(run(&mut world), (false, 7));
}

/// `StaticChanges::Notify`: runs never look at the static entities unless
/// told, except that a static entity hit by a dynamic box is checked, so a
/// despawned or no-longer-static entity is never reported.
#[test]
fn notify_mode_trusts_the_index_but_never_leaks_an_entity() {
    let config = PluginConfig { static_changes: StaticChanges::Notify, ..PluginConfig::default() };
    let mut world = World::new();
    let wall = world.spawn((cube(Vec3::ZERO, 4.0), Static));
    let far = world.spawn((cube(Vec3::splat(100.0), 1.0), Static));
    let ball = world.spawn((cube(Vec3::ONE, 1.0),));
    let mut plugin = BroadPhasePlugin::with_config(config);
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(wall, ball)]);
    assert_eq!(plugin.stats().static_rebuilds, 1);

    // An unreported move is not seen...
    *world.get::<&mut Aabb>(far).unwrap() = cube(Vec3::ONE, 1.0);
    plugin.run(&mut world).unwrap();
    assert_eq!((plugin.pairs().len(), plugin.stats().static_rebuilds), (1, 1));
    // ...until reported.
    plugin.statics_changed();
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), expected_pairs(&world));
    assert_eq!(plugin.started(), [(far, ball)]);
    assert_eq!(plugin.stats().static_rebuilds, 2);

    // An unreported despawn of a static entity the ball touches: caught in
    // the same run, re-indexed, never reported as a pair.
    world.despawn(wall).unwrap();
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), expected_pairs(&world));
    assert_eq!(plugin.ended(), [(wall, ball)]);
    assert!(plugin.stats().static_rebuilt);

    // An unreported loss of `Static`: the entity is dynamic now, and not
    // reported twice (once as dynamic, once from the stale index).
    world.remove_one::<Static>(far).unwrap();
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), expected_pairs(&world));
    assert_eq!(plugin.pairs(), [(far, ball)]);
    assert!(plugin.stats().static_rebuilt);
}
