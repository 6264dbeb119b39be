//! Every entity's `touching` list is byte-identical for 1, 2 and 4
//! threads and across repeated runs, frame after frame.
//!
//! The shard count follows the thread count and the merge's pieces lock
//! the shards in whatever order the threads get to them, so the sets fill
//! in a different order each time: the lists must not show it. The world
//! is dense enough for the merge to run in pieces on every thread (tens
//! of thousands of pairs), has entities past the sets' inline slots and
//! one over everything, and changes every frame: moves, despawns, spawns
//! into freed ids.

use broadphase::ecs::hecs::{Entity, World};
use broadphase::ecs::{Aabb, BroadPhasePlugin, PluginConfig, Static};
use broadphase::glam::Vec3;
use broadphase_scenes::SplitMix64;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Runs `frames` frames of a seeded changing world on `threads` threads;
/// hashes every frame's lists of every entity ever spawned, in spawn
/// order.
fn run_world(threads: usize, frames: usize) -> u64 {
    let mut rng = SplitMix64::new(777);
    let mut world = World::new();
    let spawn = |world: &mut World, rng: &mut SplitMix64| {
        let at =
            Vec3::new(rng.range_f32(0.0, 30.0), rng.range_f32(0.0, 30.0), rng.range_f32(0.0, 8.0));
        world.spawn((Aabb::new(at, at + Vec3::splat(rng.range_f32(0.5, 2.0))),))
    };
    let mut movers: Vec<Entity> = (0..6_000).map(|_| spawn(&mut world, &mut rng)).collect();
    let mut ever = movers.clone();
    for k in 0..40 {
        let at = Vec3::new((k % 8) as f32 * 4.0, (k / 8) as f32 * 6.0, 0.0);
        ever.push(world.spawn((Aabb::new(at, at + Vec3::new(1.0, 1.0, 8.0)), Static)));
    }
    ever.push(world.spawn((Aabb::new(Vec3::new(10.0, 10.0, -1.0), Vec3::new(20.0, 20.0, 9.0)),))); // over a pile
    let mut plugin = BroadPhasePlugin::with_config(PluginConfig { threads, ..Default::default() });
    let mut hasher = DefaultHasher::new();
    let mut longest = 0;
    for frame in 0..frames {
        for &e in movers.iter().step_by(2) {
            let mut b = world.get::<&mut Aabb>(e).unwrap();
            let step = Vec3::new(rng.range_f32(-0.5, 0.5), rng.range_f32(-0.5, 0.5), 0.0);
            b.min += step;
            b.max += step;
        }
        if frame % 2 == 1 {
            for _ in 0..100 {
                let victim = movers.swap_remove(rng.below(movers.len()));
                world.despawn(victim).unwrap();
                let e = spawn(&mut world, &mut rng);
                movers.push(e);
                ever.push(e);
            }
        }
        plugin.run(&mut world).unwrap();
        assert!(plugin.pairs().len() > 10_000, "too few pairs: {}", plugin.pairs().len());
        for &e in &ever {
            let list = plugin.touching(e);
            longest = longest.max(list.len());
            list.len().hash(&mut hasher);
            list.iter().for_each(|p| p.to_bits().hash(&mut hasher));
        }
    }
    assert!(longest > 100, "some entity touches many: {longest}");
    hasher.finish()
}

#[test]
fn touching_lists_are_identical_for_1_2_and_4_threads() {
    let reference = run_world(1, 5);
    for threads in [2, 4] {
        assert_eq!(run_world(threads, 5), reference, "{threads} threads");
    }
    assert_eq!(run_world(4, 5), reference, "a repeated run differs");
}
