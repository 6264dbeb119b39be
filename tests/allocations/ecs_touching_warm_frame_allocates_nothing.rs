//! Regression: a warm ECS frame whose contact lists are made by the
//! first `touching` after the run still allocates nothing, on any thread,
//! on 1, 2 and 4 threads, the read of every entity's list included.
//!
//! The world repeats with a period of 4 frames: dense clusters (most
//! entities past the sets' 8 inline slots, so the shared spill is used),
//! one box over a cluster (hundreds of partners), layers on some
//! entities, a static entity that moves every fourth frame. After two
//! periods of warm-up, 12 counted runs (three periods) must make zero
//! heap allocations.
//!
//! The counting allocator counts every thread of this test binary (the
//! plugin's job system's workers too), and the allocations binary runs its
//! checks in turn.

use broadphase::ecs::hecs::{Entity, World};
use broadphase::ecs::{Aabb, BroadPhasePlugin, CollisionLayers, PluginConfig, Static};
use broadphase::glam::Vec3;
use broadphase_scenes::SplitMix64;
use broadphase_testkit::allocations_on_every_thread_during;

const PERIOD: usize = 4;
const WARM_UP: usize = 2 * PERIOD;
const COUNTED: usize = 12;

pub(crate) fn warm_frames_with_contact_lists_allocate_nothing() {
    for threads in [1, 2, 4] {
        let per_frame = warm_frames(threads);
        assert!(per_frame.iter().all(|&a| a == 0), "{threads} threads: {per_frame:?}");
    }
}

/// Runs the periodic world on `threads` threads; returns each counted
/// frame's allocations (the run and a read of every entity's list).
fn warm_frames(threads: usize) -> Vec<usize> {
    let mut rng = SplitMix64::new(5);
    let mut world = World::new();
    let mut bodies: Vec<(Entity, Aabb)> = Vec::new();
    for i in 0..12_000 {
        let at =
            Vec3::new(rng.range_f32(0.0, 28.0), rng.range_f32(0.0, 28.0), rng.range_f32(0.0, 6.0));
        let b = Aabb::new(at, at + Vec3::splat(rng.range_f32(0.8, 2.0)));
        let e = if i % 5 == 0 {
            world.spawn((b, CollisionLayers::new(1 << (i % 3), 0b011)))
        } else {
            world.spawn((b,))
        };
        bodies.push((e, b));
    }
    let cover = Aabb::new(Vec3::new(5.0, 5.0, -1.0), Vec3::new(12.0, 12.0, 8.0));
    bodies.push((world.spawn((cover,)), cover));
    let door = world.spawn((Aabb::new(Vec3::ZERO, Vec3::splat(3.0)), Static));
    let entities: Vec<Entity> = bodies.iter().map(|(e, _)| *e).chain([door]).collect();

    let mut plugin =
        BroadPhasePlugin::with_config(PluginConfig { threads, ..PluginConfig::default() });
    let mut per_frame = Vec::with_capacity(COUNTED);
    let (mut listed, mut longest, mut past_inline) = (0, 0, 0);
    for frame in 0..WARM_UP + COUNTED {
        let phase = (frame % PERIOD) as f32;
        for &(e, home) in &bodies {
            let step = Vec3::new(phase * 0.4, -phase * 0.3, 0.0);
            *world.get::<&mut Aabb>(e).unwrap() = Aabb::new(home.min + step, home.max + step);
        }
        world.get::<&mut Aabb>(door).unwrap().min.x = if phase == 0.0 { 0.5 } else { 0.0 };

        let counted = frame >= WARM_UP;
        let (sums, allocations) = allocations_on_every_thread_during(counted, || {
            plugin.run(&mut world).expect("valid world");
            let mut sums = (0, 0, 0);
            for &e in &entities {
                let n = plugin.touching(e).len();
                sums = (sums.0 + n, sums.1.max(n), sums.2 + usize::from(n > 8));
            }
            sums
        });
        if counted {
            per_frame.push(allocations);
            assert_eq!(sums.0, 2 * plugin.pairs().len(), "every pair listed twice");
            (listed, longest, past_inline) = (sums.0, longest.max(sums.1), past_inline.max(sums.2));
        }
    }
    assert!(listed > 2 * 10_000, "{threads} threads: long enough to merge in pieces: {listed}");
    assert!(longest > 300, "{threads} threads: an entity touching hundreds: {longest}");
    assert!(past_inline > 2_000, "{threads} threads: sets spill: {past_inline}");
    per_frame
}
