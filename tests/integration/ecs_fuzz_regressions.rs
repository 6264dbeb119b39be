//! Runs the ECS world fuzzer found wrong, each as the smallest sequence
//! of frames that showed it (see `tests/support/fuzz_world.rs`).

use broadphase::ecs::hecs::World;
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, Collider, CollisionLayers, PluginConfig, PluginError, Static,
};
use broadphase::glam::Vec3;

fn two_threads() -> BroadPhasePlugin {
    BroadPhasePlugin::with_config(PluginConfig { threads: 2, ..PluginConfig::default() })
}

/// `min.z > max.z`.
fn bad_box() -> Aabb {
    Aabb::new(Vec3::new(-3.5, -10.5, 15.0), Vec3::new(2.5, 12.5, 2.5))
}

#[test]
fn a_static_entity_turned_dynamic_drops_the_layers_it_had() {
    let mut world = World::new();
    let mut plugin = two_threads();
    let a = world.spawn((
        Vec3::new(11.0, -12.0, -15.5),
        Collider::cuboid(Vec3::new(1.75, 3.375, 3.125)),
        Static,
        CollisionLayers::new(0, 5),
    ));
    plugin.run(&mut world).unwrap();
    // No dynamic entity has layers, so the dynamic set's layers are not
    // read: `a` must still lose its static layers (which match nothing).
    world.remove::<(Vec3, Collider, CollisionLayers, Static)>(a).unwrap();
    world
        .insert_one(a, Aabb::new(Vec3::new(-11.0, -14.0, -14.5), Vec3::new(13.0, 15.0, 6.5)))
        .unwrap();
    let b = world.spawn((Aabb::new(Vec3::splat(-16.0), Vec3::new(12.0, -4.5, -9.5)), Static));
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(a, b)]);
    assert_eq!(plugin.started(), [(a, b)]);
}

#[test]
fn a_bad_box_at_a_reused_id_fails_the_same_way_until_fixed() {
    let mut world = World::new();
    let mut plugin = two_threads();
    let a = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
    let b = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(a, b)]);
    world.despawn(b).unwrap();
    // The new static entity takes `b`'s id: its slot's old proxy is
    // removed before the bad box is found.
    let c = world.spawn((bad_box(), Static));
    assert_eq!(c.id(), b.id());
    for _ in 0..2 {
        let error = plugin.run(&mut world).unwrap_err();
        assert!(
            matches!(error, PluginError::InvalidBox { entity, .. } if entity == c),
            "{error:?}"
        );
        assert_eq!(plugin.pairs(), [(a, b)], "a failed run publishes nothing new");
    }
    *world.get::<&mut Aabb>(c).unwrap() = Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0));
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty());
    assert_eq!(plugin.ended(), [(a, b)]);
    assert!(plugin.started().is_empty());
}

#[test]
fn a_dynamic_set_that_failed_half_assigned_is_assigned_again() {
    let mut world = World::new();
    let mut plugin = two_threads();
    let placed = world.spawn((Vec3::ZERO, Collider::sphere(1.0)));
    plugin.run(&mut world).unwrap();
    // Boxed entities are gathered before placed ones: the bad box stops
    // the assignment before `placed` gets its handle.
    let bad = world.spawn((bad_box(),));
    assert!(plugin.run(&mut world).is_err());
    world.despawn(bad).unwrap();
    // The dynamic set is again the one of the last good run.
    let other = world.spawn((Vec3::new(0.5, 0.0, 0.0), Collider::sphere(1.0), Static));
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(placed, other)]);
    *world.get::<&mut Vec3>(placed).unwrap() = Vec3::splat(10.0);
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty());
    assert_eq!(plugin.ended(), [(placed, other)]);
}

#[test]
fn layers_given_in_a_failed_run_are_read_again_when_removed() {
    let mut world = World::new();
    let mut plugin = two_threads();
    // Boxed entities are gathered first: `a` gets its proxy, with layers
    // that match nothing, before the bad collider stops the run.
    let a = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE), CollisionLayers::NONE));
    let bad = world.spawn((Vec3::ZERO, Collider::cuboid(Vec3::splat(-1.0))));
    assert!(plugin.run(&mut world).is_err());
    world.remove_one::<CollisionLayers>(a).unwrap();
    *world.get::<&mut Collider>(bad).unwrap() = Collider::sphere(1.0);
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(a, bad)]);
}

#[test]
fn a_run_failed_on_a_bad_link_still_reads_the_kept_sets_next_time() {
    use broadphase::ecs::{ColliderOf, Sleeping};
    let mut world = World::new();
    let mut plugin = two_threads();
    let sleeper = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE), Sleeping));
    let wall = world.spawn((Aabb::new(Vec3::splat(0.5), Vec3::splat(2.0)), Static));
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(sleeper, wall)]);
    // Made static and moved away (no report needed: it is static), while
    // a link to a despawned body fails the run before anything is read.
    world.insert_one(sleeper, Static).unwrap();
    *world.get::<&mut Aabb>(sleeper).unwrap() = Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0));
    let gone = world.spawn(());
    world.despawn(gone).unwrap();
    let collider = world.spawn((Aabb::new(Vec3::splat(-9.0), Vec3::splat(-8.0)), ColliderOf(gone)));
    let error = plugin.run(&mut world).unwrap_err();
    assert!(matches!(error, PluginError::DeadBody { .. }), "{error:?}");
    // Asleep again, and the link fixed: its box is the moved one.
    world.remove_one::<Static>(sleeper).unwrap();
    world.remove_one::<ColliderOf>(collider).unwrap();
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty());
    assert_eq!(plugin.ended(), [(sleeper, wall)]);
}
