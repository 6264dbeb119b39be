//! Sleeping entities: kept with their pairs, not read while asleep, woken
//! by one read; spawned and despawned asleep seen by `Detect` by itself
//! and by `Notify` when reported. Random worlds with sleeping entities
//! against brute force are in `fuzz_corpus_replays.rs` (the world fuzzer).

use crate::ecs_support::{cube, expected_pairs};
use broadphase::ecs::hecs::World;
use broadphase::ecs::{BroadPhasePlugin, PluginConfig, SleepChanges, Sleeping, Static};
use broadphase::glam::Vec3;

fn plugin(sleep_changes: SleepChanges) -> BroadPhasePlugin {
    BroadPhasePlugin::with_config(PluginConfig { threads: 2, sleep_changes, ..Default::default() })
}

const MODES: [SleepChanges; 2] = [SleepChanges::Detect, SleepChanges::Notify];

#[test]
fn a_pile_that_falls_asleep_keeps_its_pairs_and_ends_none() {
    for mode in MODES {
        let mut world = World::new();
        let pile: Vec<_> = (0..6)
            .map(|i| world.spawn((cube(Vec3::new(0.0, i as f32 * 0.9, 0.0), 1.0),)))
            .collect();
        let mut plugin = plugin(mode);
        plugin.run(&mut world).unwrap();
        let awake = plugin.pairs().to_vec();
        assert_eq!(awake.len(), 5, "a column of touching boxes");
        for &e in &pile {
            world.insert_one(e, Sleeping).unwrap();
        }
        plugin.sleepers_changed();
        for _ in 0..3 {
            plugin.run(&mut world).unwrap();
            assert_eq!(plugin.pairs(), awake, "{mode:?}");
            assert!(plugin.started().is_empty() && plugin.ended().is_empty(), "{mode:?}");
            let stats = plugin.stats();
            assert_eq!((stats.dynamic_boxes, stats.sleeping_boxes), (0, 6), "{mode:?}");
        }
        assert!(!plugin.stats().sleeping_rebuilt, "{mode:?}: nothing changed, nothing read");
        assert_eq!(plugin.touching(pile[2]), [pile[1], pile[3]]);
    }
}

#[test]
fn a_sleeping_entity_moved_without_a_report_is_not_read_until_it_wakes() {
    for mode in MODES {
        let mut world = World::new();
        let a = world.spawn((cube(Vec3::ZERO, 1.0), Sleeping));
        let b = world.spawn((cube(Vec3::splat(0.5), 1.0),));
        let mut plugin = plugin(mode);
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.pairs(), [(a, b)]);
        *world.get::<&mut broadphase::ecs::Aabb>(a).unwrap() = cube(Vec3::splat(10.0), 1.0);
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.pairs(), [(a, b)], "{mode:?}: asleep, not read");
        world.remove_one::<Sleeping>(a).unwrap();
        if mode == SleepChanges::Notify {
            plugin.sleepers_changed();
        }
        plugin.run(&mut world).unwrap();
        assert!(plugin.pairs().is_empty(), "{mode:?}: waking reads it");
        assert_eq!(plugin.ended(), [(a, b)]);
    }
}

#[test]
fn the_other_side_moving_away_ends_a_pair_with_a_sleeper() {
    for mode in MODES {
        let mut world = World::new();
        let sleeper = world.spawn((cube(Vec3::ZERO, 1.0), Sleeping));
        let mover = world.spawn((cube(Vec3::splat(0.5), 1.0),));
        let mut plugin = plugin(mode);
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.started(), [(sleeper, mover)]);
        *world.get::<&mut broadphase::ecs::Aabb>(mover).unwrap() = cube(Vec3::splat(5.0), 1.0);
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.ended(), [(sleeper, mover)], "{mode:?}");
        assert!(plugin.pairs().is_empty());
    }
}

#[test]
fn sleeping_entities_spawned_and_despawned_are_seen_by_detect_and_by_notify_when_told() {
    for mode in MODES {
        let mut world = World::new();
        let ground = world.spawn((cube(Vec3::new(-10.0, -1.0, -10.0), 20.0), Static));
        let mut plugin = plugin(mode);
        plugin.run(&mut world).unwrap();
        let crate_box = world.spawn((cube(Vec3::ZERO, 1.0), Sleeping));
        if mode == SleepChanges::Notify {
            plugin.sleepers_changed();
        }
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.started(), [(ground, crate_box)], "{mode:?}");
        world.despawn(crate_box).unwrap();
        if mode == SleepChanges::Notify {
            plugin.sleepers_changed();
        }
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.ended(), [(ground, crate_box)], "{mode:?}");
        assert!(plugin.pairs().is_empty());
        assert_eq!(plugin.stats().sleeping_boxes, 0);
    }
}

#[test]
fn notify_without_a_report_still_sees_a_change_in_the_sleeping_count() {
    let mut world = World::new();
    let a = world.spawn((cube(Vec3::ZERO, 1.0),));
    let mut plugin = plugin(SleepChanges::Notify);
    plugin.run(&mut world).unwrap();
    // Not reported: the count of sleeping entities went from 0 to 1.
    let b = world.spawn((cube(Vec3::splat(0.5), 1.0), Sleeping));
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(a, b)]);
}

#[test]
fn two_sleepers_pair_two_statics_do_not_and_both_markers_mean_static() {
    let mut world = World::new();
    let s1 = world.spawn((cube(Vec3::ZERO, 1.0), Sleeping));
    let s2 = world.spawn((cube(Vec3::splat(0.5), 1.0), Sleeping));
    let t1 = world.spawn((cube(Vec3::splat(0.25), 1.0), Static, Sleeping));
    let t2 = world.spawn((cube(Vec3::splat(0.75), 1.0), Static));
    let mut plugin = plugin(SleepChanges::Detect);
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), expected_pairs(&world));
    assert!(plugin.is_touching(s1, s2));
    assert!(!plugin.is_touching(t1, t2), "both static");
    assert!(plugin.is_touching(s1, t1) && plugin.is_touching(s2, t2));
    let stats = plugin.stats();
    assert_eq!((stats.sleeping_boxes, stats.static_boxes), (2, 2));
}

#[test]
fn falling_asleep_and_waking_keep_the_pairs_exact() {
    for mode in MODES {
        let mut world = World::new();
        let bodies: Vec<_> = (0..40)
            .map(|i| world.spawn((cube(Vec3::new(i as f32 * 0.8, 0.0, 0.0), 1.0),)))
            .collect();
        let mut plugin = plugin(mode);
        for frame in 0..12 {
            for (i, &e) in bodies.iter().enumerate() {
                let asleep = world.satisfies::<&Sleeping>(e);
                if (i + frame) % 5 == 0 && !asleep {
                    world.insert_one(e, Sleeping).unwrap();
                } else if (i + frame) % 7 == 0 && asleep {
                    world.remove_one::<Sleeping>(e).unwrap();
                } else if !asleep {
                    let at = Vec3::new(i as f32 * 0.8, (frame % 3) as f32 * 0.6, 0.0);
                    *world.get::<&mut broadphase::ecs::Aabb>(e).unwrap() = cube(at, 1.0);
                }
            }
            if mode == SleepChanges::Notify {
                plugin.sleepers_changed();
            }
            plugin.run(&mut world).unwrap();
            assert_eq!(plugin.pairs(), expected_pairs(&world), "{mode:?}, frame {frame}");
        }
    }
}

#[test]
fn a_resting_row_is_kept_aside_and_read_again_only_when_disturbed() {
    for mode in MODES {
        let mut world = World::new();
        // 30 sleeping cubes in a row, each touching the next, and 6 awake
        // movers far away, overlapping in pairs.
        let row: Vec<_> = (0..30)
            .map(|i| world.spawn((cube(Vec3::new(i as f32 * 0.8, 0.0, 0.0), 1.0), Sleeping)))
            .collect();
        let movers: Vec<_> = (0..6)
            .map(|i| world.spawn((cube(Vec3::new(100.0 + (i / 2) as f32 * 5.0, 0.0, 0.0), 1.0),)))
            .collect();
        let mut plugin = plugin(mode);
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.stats().broad_phase.resting, 29, "{mode:?}");
        assert_eq!(
            plugin.awake_pairs(),
            [(movers[0], movers[1]), (movers[2], movers[3]), (movers[4], movers[5])]
        );
        // Read, so that the next frame's lists patch these.
        assert_eq!(plugin.touching(row[5]), [row[4], row[6]]);
        for frame in 1..8 {
            for (k, &m) in movers.iter().enumerate() {
                let y = if (frame + k) % 2 == 0 { 0.0 } else { 0.5 };
                let at = Vec3::new(100.0 + (k / 2) as f32 * 5.0, y, 0.0);
                *world.get::<&mut broadphase::ecs::Aabb>(m).unwrap() = cube(at, 1.0);
            }
            plugin.run(&mut world).unwrap();
            let stats = plugin.stats();
            assert!(!stats.broad_phase.resting_changed, "{mode:?}, frame {frame}");
            assert_eq!(plugin.pairs(), expected_pairs(&world), "{mode:?}, frame {frame}");
            assert_eq!(plugin.touching(row[5]), [row[4], row[6]]);
            let lists = plugin.contact_list_stats().expect("made by the read");
            assert!(lists.patched, "{mode:?}, frame {frame}");
        }
        // Wake one of the row and move it away: its two pairs end, the
        // others stay at rest.
        world.remove_one::<Sleeping>(row[5]).unwrap();
        *world.get::<&mut broadphase::ecs::Aabb>(row[5]).unwrap() =
            cube(Vec3::new(-50.0, 0.0, 0.0), 1.0);
        if mode == SleepChanges::Notify {
            plugin.sleepers_changed();
        }
        plugin.run(&mut world).unwrap();
        assert!(plugin.stats().broad_phase.resting_changed, "{mode:?}");
        assert_eq!(plugin.stats().broad_phase.resting, 27, "{mode:?}");
        assert_eq!(plugin.ended(), [(row[4], row[5]), (row[5], row[6])], "{mode:?}");
        assert_eq!(plugin.pairs(), expected_pairs(&world), "{mode:?}");
        assert!(plugin.touching(row[5]).is_empty() && plugin.touching(row[4]) == [row[3]]);
    }
}
