//! The same world gives byte-identical pairs and events, in order, for 1,
//! 2, 4 and 8 threads and across repeated runs.
//!
//! Users replay frames (networked lockstep, recorded bug reports); a pair
//! order that changed with the thread count would desynchronize them. The
//! world here is above the partition's split threshold (small thresholds
//! too), so the multithreaded path really runs, and it changes every frame:
//! moves, spawns, despawns.

use broadphase::ecs::hecs::{Entity, World};
use broadphase::ecs::{Aabb, BroadPhasePlugin, PluginConfig, Static};
use broadphase::glam::Vec3;
use broadphase::persistent::PersistentConfig;
use broadphase::tree::GridTreeConfig;
use broadphase_scenes::SplitMix64;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Runs `frames` frames of a seeded changing world; hashes every frame's
/// pairs, started and ended lists, in order.
fn run_world(threads: usize, split_threshold: usize, frames: usize) -> u64 {
    let mut events = 0usize;
    let mut rng = SplitMix64::new(4242);
    let mut world = World::new();
    let mut movers: Vec<Entity> = Vec::new();
    let spawn = |world: &mut World, rng: &mut SplitMix64| {
        let c = Vec3::new(
            rng.range_f32(0.0, 120.0),
            rng.range_f32(0.0, 120.0),
            rng.range_f32(0.0, 60.0),
        );
        let half = Vec3::splat(rng.range_f32(0.5, 3.0));
        world.spawn((Aabb::new(c - half, c + half),))
    };
    for _ in 0..6_000 {
        movers.push(spawn(&mut world, &mut rng));
    }
    for k in 0..300 {
        let c = Vec3::new((k % 20) as f32 * 6.0, (k / 20) as f32 * 8.0, 30.0);
        world.spawn((Aabb::new(c, c + Vec3::new(2.0, 2.0, 40.0)), Static));
    }
    let config = PluginConfig {
        threads,
        broad_phase: PersistentConfig {
            tree: GridTreeConfig { split_threshold, ..GridTreeConfig::default() },
            ..PersistentConfig::default()
        },
        ..PluginConfig::default()
    };
    let mut plugin = BroadPhasePlugin::with_config(config);
    let mut hasher = DefaultHasher::new();
    for frame in 0..frames {
        for &e in movers.iter().step_by(3) {
            let mut b = world.get::<&mut Aabb>(e).unwrap();
            let step = Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), 0.0);
            b.min += step;
            b.max += step;
        }
        if frame % 2 == 1 {
            for _ in 0..50 {
                let victim = movers.swap_remove(rng.below(movers.len()));
                world.despawn(victim).unwrap();
                movers.push(spawn(&mut world, &mut rng));
            }
        }
        plugin.run(&mut world).unwrap();
        events += plugin.started().len() + plugin.ended().len();
        assert!(plugin.pairs().len() > 500, "too few pairs for the hash to mean anything");
        for list in [plugin.pairs(), plugin.started(), plugin.ended()] {
            list.len().hash(&mut hasher);
            for (a, b) in list {
                (a.to_bits(), b.to_bits()).hash(&mut hasher);
            }
        }
    }
    assert!(events > 100, "the world must change for events to be compared");
    hasher.finish()
}

#[test]
fn pairs_and_events_are_identical_for_1_2_4_and_8_threads() {
    for split_threshold in [500, 5_000] {
        let reference = run_world(1, split_threshold, 6);
        for threads in [2, 4, 8] {
            assert_eq!(
                run_world(threads, split_threshold, 6),
                reference,
                "{threads} threads, split threshold {split_threshold}"
            );
        }
        assert_eq!(run_world(2, split_threshold, 6), reference, "a repeated run differs");
    }
}
