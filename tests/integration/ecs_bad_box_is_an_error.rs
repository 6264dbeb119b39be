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

/// A dynamic entity that was there last frame going bad (its box, its
/// position, its collider), alone or with others: the dynamic set is the
/// same, so its boxes go to the broad phase straight from the world, and
/// the first bad one in the world's order is the error. Among 20,000
/// entities on 2 threads the bad ones sit in both threads' ranges. The
/// frame is skipped; fixed, the next one runs against the last good one.
#[test]
fn a_known_entity_going_bad_names_it() {
    type Spoil = fn(&mut World, &[broadphase::ecs::hecs::Entity]);
    let cases: [(&str, Spoil); 4] = [
        ("NaN box", |w, e| {
            *w.get::<&mut Aabb>(e[0]).unwrap() = Aabb::new(Vec3::ZERO, Vec3::splat(f32::NAN));
        }),
        ("NaN position", |w, e| *w.get::<&mut Vec3>(e[1]).unwrap() = Vec3::splat(f32::NAN)),
        ("inverted collider", |w, e| {
            *w.get::<&mut Collider>(e[1]).unwrap() = Collider::sphere(-1.0);
        }),
        ("infinite position, then a NaN box", |w, e| {
            *w.get::<&mut Vec3>(e[2]).unwrap() = Vec3::new(0.0, f32::INFINITY, 0.0);
            *w.get::<&mut Aabb>(e[3]).unwrap() = Aabb::new(Vec3::ONE, Vec3::ZERO);
        }),
    ];
    for (threads, count) in [(1, 4), (2, 20_000)] {
        for (what, spoil) in cases {
            let what = format!("{what}, {threads} threads");
            let mut world = World::new();
            let at = |i: usize| Vec3::new(i as f32 * 1.5, 0.0, 0.0);
            // Boxed entities come first in the world's order, then placed
            // ones; each half is spoiled near its end.
            let boxed: Vec<_> = (0..count / 2).map(|i| world.spawn((cube(at(i), 2.0),))).collect();
            let placed: Vec<_> =
                (count / 2..count).map(|i| world.spawn((at(i), Collider::sphere(1.0)))).collect();
            let marked = [boxed[count / 2 - 1], placed[count / 2 - 1], placed[0], boxed[1]];
            let config = PluginConfig { threads, ..PluginConfig::default() };
            let mut plugin = BroadPhasePlugin::with_config(config);
            plugin.run(&mut world).unwrap();
            plugin.run(&mut world).unwrap();
            let published = plugin.pairs().to_vec();
            let stats = *plugin.stats();

            spoil(&mut world, &marked);
            // The first bad entity in the world's order: boxed before
            // placed, rows in spawn order.
            let first_bad = |world: &World| {
                boxed.iter().chain(&placed).copied().find(|&e| {
                    let aabb = match world.get::<&Aabb>(e) {
                        Ok(aabb) => *aabb,
                        Err(_) => {
                            let p = *world.get::<&Vec3>(e).unwrap();
                            world.get::<&Collider>(e).unwrap().aabb_at(p)
                        }
                    };
                    !aabb.is_valid()
                })
            };
            let bad = first_bad(&world).expect("spoiled");
            for round in 0..2 {
                match plugin.run(&mut world) {
                    Err(PluginError::InvalidBox { entity, .. }) => {
                        assert_eq!(entity, bad, "{what}, round {round}");
                    }
                    other => panic!("{what}, round {round}: {other:?}"),
                }
                assert_eq!(plugin.pairs(), published, "{what}");
                assert_eq!(plugin.stats(), &stats, "{what}");
            }

            // Fixed by moving every spoiled entity far away: their pairs end.
            let far = Aabb::new(Vec3::splat(-1e6), Vec3::splat(-1e6 + 1.0));
            for (k, &e) in marked.iter().enumerate() {
                if let Ok(mut aabb) = world.get::<&mut Aabb>(e) {
                    *aabb = Aabb::new(
                        far.min - Vec3::X * 10.0 * k as f32,
                        far.max - Vec3::X * 10.0 * k as f32,
                    );
                } else {
                    *world.get::<&mut Vec3>(e).unwrap() = far.min - Vec3::X * 10.0 * k as f32;
                    *world.get::<&mut Collider>(e).unwrap() = Collider::sphere(1.0);
                }
            }
            plugin.run(&mut world).unwrap();
            let now = expected_pairs(&world);
            assert_eq!(plugin.pairs(), now, "{what}");
            let ended: Vec<_> =
                published.iter().filter(|p| now.binary_search(p).is_err()).copied().collect();
            assert_eq!(plugin.ended(), ended, "{what}");
            assert!(!ended.is_empty(), "{what}");
        }
    }
}

/// A game's position type whose read panics for one value.
#[derive(Clone, Copy)]
struct Fragile(Vec3);

impl broadphase::ecs::Position for Fragile {
    fn position(&self) -> Vec3 {
        assert!(self.0.x != -13.25, "a position the game cannot read");
        self.0
    }
}

/// A position read that panics, on the single-thread path and among
/// 40,000 entities read on 2 threads, is a `PluginError::Job`, not a
/// panic through the frame; nothing published changes, and once the
/// position reads again the frame runs as if the failed one never was.
#[test]
fn a_panicking_position_read_is_an_error() {
    for (threads, count) in [(1, 3), (2, 40_000)] {
        let mut world = World::new();
        let collider = Collider::cuboid(Vec3::splat(0.75));
        let at = |i: usize| Vec3::new(i as f32 * 1.0, 0.0, 0.0);
        let entities: Vec<_> =
            (0..count).map(|i| world.spawn((Fragile(at(i)), collider))).collect();
        let config = PluginConfig { threads, ..PluginConfig::default() };
        let mut plugin = BroadPhasePlugin::<Fragile>::with_position(config);
        plugin.run(&mut world).unwrap();
        let published = plugin.pairs().to_vec();
        assert_eq!(published.len(), count - 1, "{threads} threads");

        let last = *entities.last().unwrap();
        world.get::<&mut Fragile>(last).unwrap().0 = Vec3::new(-13.25, 5.0, 0.0);
        let error = plugin.run(&mut world).expect_err("the read panicked");
        assert!(matches!(error, PluginError::Job(_)), "{threads} threads: {error:?}");
        assert_eq!(plugin.pairs(), published, "{threads} threads");

        world.get::<&mut Fragile>(last).unwrap().0 = Vec3::new(-14.0, 5.0, 0.0);
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.pairs(), &published[..count - 2], "{threads} threads");
        assert_eq!(plugin.ended(), &published[count - 2..], "{threads} threads");
    }
}

/// An entity id past `MAX_ENTITY_ID` fails the run with an error naming
/// it, whether it comes with the first frame or joins a dynamic set that
/// was checked before; once it is gone the frame runs.
#[test]
fn an_entity_id_past_the_table_is_an_error() {
    use broadphase::ecs::MAX_ENTITY_ID;
    use broadphase::ecs::hecs::Entity;
    let far = Entity::from_bits((1u64 << 32) | u64::from(MAX_ENTITY_ID + 1)).unwrap();
    for first_frame in [true, false] {
        let mut world = World::new();
        let a = world.spawn((cube(Vec3::ZERO, 2.0),));
        let b = world.spawn((cube(Vec3::ONE, 2.0),));
        let mut plugin = BroadPhasePlugin::new();
        if !first_frame {
            plugin.run(&mut world).unwrap();
            plugin.run(&mut world).unwrap(); // the same dynamic set again
        }
        world.spawn_at(far, (cube(Vec3::ONE, 2.0),));
        match plugin.run(&mut world) {
            Err(PluginError::EntityIdTooLarge { entity }) => assert_eq!(entity, far),
            other => panic!("first frame {first_frame}: {other:?}"),
        }
        world.despawn(far).unwrap();
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.pairs(), [(a, b)], "first frame {first_frame}");
    }
}
