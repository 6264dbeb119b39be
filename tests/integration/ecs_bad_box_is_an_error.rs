//! A NaN, infinite or inverted box in the world is a `PluginError` naming
//! the entity: never a panic, never a silently dropped box; the frame is
//! skipped, what was published stays, and the next good frame's events are
//! computed against the last good one.

use crate::ecs_support;

use broadphase::InputError;
use broadphase::ecs::hecs::World;
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, Collider, PluginConfig, PluginError, Static, StaticChanges,
};
use broadphase::glam::Vec3;
use ecs_support::{cube, expected_pairs};

#[test]
fn every_kind_of_bad_box_names_its_entity() {
    type Spoil = fn(&mut World) -> broadphase::ecs::hecs::Entity;
    let cases: [(&str, Spoil); 6] = [
        ("NaN dynamic box", |w| w.spawn((Aabb::new(Vec3::ZERO, Vec3::new(1.0, f32::NAN, 1.0)),))),
        ("infinite static box", |w| w.spawn((Aabb::new(Vec3::NEG_INFINITY, Vec3::ONE), Static))),
        ("inverted dynamic box", |w| w.spawn((Aabb::new(Vec3::ONE, Vec3::ZERO),))),
        ("negative collider extent", |w| w.spawn((Vec3::ZERO, Collider::sphere(-1.0)))),
        ("NaN position", |w| w.spawn((Vec3::splat(f32::NAN), Collider::sphere(1.0)))),
        ("inverted static collider", |w| w.spawn((Vec3::ZERO, Collider::sphere(-0.5), Static))),
    ];
    // Static changes detected, or reported.
    let configs = [StaticChanges::Detect, StaticChanges::Notify]
        .map(|static_changes| PluginConfig { static_changes, ..PluginConfig::default() });
    for (config, (what, spoil)) in configs.iter().flat_map(|&k| cases.map(|c| (k, c))) {
        let what = format!("{what}, {:?}", config.static_changes);
        let what = what.as_str();
        let mut world = World::new();
        let a = world.spawn((cube(Vec3::ZERO, 2.0),));
        let b = world.spawn((cube(Vec3::ONE, 2.0), Static));
        let mut plugin = BroadPhasePlugin::with_config(config);
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.pairs(), [(a, b)]);
        let stats = *plugin.stats();

        let bad = spoil(&mut world);
        plugin.statics_changed(); // Notify mode sees only what it is told
        let error = plugin.run(&mut world).expect_err(what);
        match error {
            PluginError::InvalidBox { entity, error } => {
                assert_eq!(entity, bad, "{what}");
                assert!(
                    matches!(
                        error,
                        InputError::NotFinite { index: 0, .. }
                            | InputError::Inverted { index: 0, .. }
                    ),
                    "{what}: {error:?}"
                );
            }
            other => panic!("{what}: {other:?}"),
        }
        assert!(error.to_string().contains(&format!("{bad:?}")), "{what}: {error}");
        // Nothing published changed; a second run fails the same way.
        assert_eq!(plugin.pairs(), [(a, b)], "{what}");
        assert_eq!(plugin.stats(), &stats, "{what}");
        // (Compared as text: a NaN in the error is not equal to itself.)
        let again = plugin.run(&mut world).expect_err(what);
        assert_eq!(format!("{again:?}"), format!("{error:?}"), "{what}");

        // Fixed: the frame runs, and events are against the last good frame.
        world.despawn(bad).unwrap();
        world.despawn(a).unwrap();
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.ended(), [(a, b)], "{what}");
        assert_eq!(plugin.pairs(), expected_pairs(&world), "{what}");
        assert_eq!(plugin.stats().frame, 2, "{what}");
    }
}
