//! Regression: a game that snapshots the ECS plugin after every run into a
//! ring, and now and then rolls back a frame and replays it, pays no
//! allocation for it once the ring's snapshots have their size:
//! `snapshot_into` copies into the snapshot's own buffers, and `restore`
//! into the plugin's, its contact lists merged again into buffers they
//! had before. (The runs themselves are the warm frame check's.)
//!
//! Scenario: 4,000 bodies moving on a periodic path, some with layers, and
//! a few static ones, on 1 and 2 threads, and on 2 threads with every four
//! of them the colliders of one compound body; a ring of 4 snapshots; after five
//! laps of the ring, 40 frames are counted, every fifth one restored and
//! replayed.

use broadphase::ecs::hecs::World;
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, ColliderOf, CollisionLayers, PluginConfig, PluginSnapshot, Static,
};
use broadphase::glam::Vec3;
use broadphase_scenes::SplitMix64;
use broadphase_testkit::allocations_on_every_thread_during;

const RING: usize = 4;
const WARM_UP: usize = 5 * RING;
const PERIOD: usize = 8;

pub(crate) fn warm_plugin_snapshots_and_restores_allocate_nothing() {
    for (threads, compound) in [(1, false), (2, false), (2, true)] {
        let mut rng = SplitMix64::new(11);
        let mut world = World::new();
        let mut bodies = Vec::new();
        let owners: Vec<_> =
            (0..if compound { 1_000 } else { 0 }).map(|_| world.spawn(())).collect();
        for k in 0..4_000 {
            let at = Vec3::new(
                rng.range_f32(0.0, 60.0),
                rng.range_f32(0.0, 60.0),
                rng.range_f32(0.0, 60.0),
            );
            let aabb = Aabb::new(at, at + Vec3::splat(1.5));
            let entity = if k % 7 == 0 {
                world.spawn((aabb, CollisionLayers::new(1, 1)))
            } else {
                world.spawn((aabb,))
            };
            if compound {
                world.insert_one(entity, ColliderOf(owners[k / 4])).unwrap();
            }
            bodies.push((entity, at));
        }
        for k in 0..20 {
            let at = Vec3::new(k as f32 * 3.0, 0.0, 0.0);
            world.spawn((Aabb::new(at, at + Vec3::new(2.0, 60.0, 60.0)), Static));
        }
        let place = |world: &mut World, frame: usize| {
            let phase = (frame % PERIOD) as f32 * 0.3;
            for &(entity, at) in &bodies {
                let at = at + Vec3::new(phase, 0.0, 0.0);
                *world.get::<&mut Aabb>(entity).unwrap() = Aabb::new(at, at + Vec3::splat(1.5));
            }
        };
        let mut plugin =
            BroadPhasePlugin::with_config(PluginConfig { threads, ..Default::default() });
        let mut ring = vec![PluginSnapshot::default(); RING];
        let mut replays = 0;
        for frame in 0..WARM_UP + 40 {
            let counted = frame >= WARM_UP;
            place(&mut world, frame);
            plugin.run(&mut world).unwrap();
            let saved = &mut ring[frame % RING];
            let ((), saving) =
                allocations_on_every_thread_during(counted, || plugin.snapshot_into(saved));
            assert_eq!(saving, 0, "{threads} threads, frame {frame}: snapshot_into allocated");
            if frame % 5 == 4 {
                let first = plugin.pairs().to_vec();
                let first_bodies = plugin.body_pairs().to_vec();
                place(&mut world, frame + 1);
                plugin.run(&mut world).unwrap();
                let ((), restoring) =
                    allocations_on_every_thread_during(counted, || plugin.restore(saved));
                assert_eq!(restoring, 0, "{threads} threads, frame {frame}: restore allocated");
                assert_eq!(plugin.pairs(), first);
                assert_eq!(plugin.body_pairs(), first_bodies);
                replays += usize::from(counted);
            }
        }
        assert!(replays > 0 && plugin.stats().pairs > 0);
        if compound {
            assert!(plugin.body_pairs().len() < plugin.pairs().len(), "bodies reduce the pairs");
        }
    }
}
