//! A long game loop stays flat in memory.
//!
//! Broad phases that grow a little every frame (a cache never trimmed, a
//! pair set that keeps despawned entities) only show it after minutes. This
//! runs the ECS plugin over a world of particles that move, bounce, and are
//! despawned and respawned at a steady count, samples the process's
//! live heap (the counting allocator's
//! figure, so it needs no `/proc`) every 500 frames after warm-up, and asserts it does not
//! grow. CI runs 5,000 frames; the 100,000-frame run is
//! `cargo test --release --test allocations -- --ignored soak`.

use broadphase::ecs::hecs::{Entity, World};
use broadphase::ecs::{BroadPhasePlugin, Collider, PluginConfig};
use broadphase::glam::Vec3;
use broadphase_scenes::SplitMix64;
use broadphase_testkit::live_heap_bytes;

struct Particle {
    entity: Entity,
    velocity: Vec3,
}

fn soak(frames: usize) {
    const SIDE: f32 = 150.0;
    let mut rng = SplitMix64::new(2024);
    let mut world = World::new();
    let spawn = |world: &mut World, rng: &mut SplitMix64| {
        let position =
            Vec3::new(rng.range_f32(0.0, SIDE), rng.range_f32(0.0, SIDE), rng.range_f32(0.0, SIDE));
        let velocity =
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0));
        let entity = world.spawn((position, Collider::sphere(rng.range_f32(1.0, 4.0))));
        Particle { entity, velocity }
    };
    let mut particles: Vec<Particle> = (0..3_000).map(|_| spawn(&mut world, &mut rng)).collect();
    let mut plugin =
        BroadPhasePlugin::with_config(PluginConfig { threads: 2, ..PluginConfig::default() });

    let warm_up = 500.min(frames / 2);
    let mut baseline = None;
    let mut samples = Vec::new();
    for frame in 0..frames {
        for p in &mut particles {
            let mut position = world.get::<&mut Vec3>(p.entity).unwrap();
            *position += p.velocity;
            for axis in 0..3 {
                if !(0.0..=SIDE).contains(&position[axis]) {
                    p.velocity[axis] = -p.velocity[axis];
                }
            }
        }
        // Churn: 1% of the particles die and are replaced every frame.
        for _ in 0..30 {
            let dead = particles.swap_remove(rng.below(particles.len()));
            world.despawn(dead.entity).unwrap();
            particles.push(spawn(&mut world, &mut rng));
        }
        plugin.run(&mut world).unwrap();
        assert!(plugin.pairs().iter().all(|&(a, b)| world.contains(a) && world.contains(b)));
        if frame + 1 == warm_up {
            baseline = Some(live_heap_bytes());
        } else if frame >= warm_up && (frame + 1) % 500 == 0 {
            samples.push(live_heap_bytes());
        }
    }
    let baseline = baseline.expect("the warm-up ends inside the run");
    assert!(baseline > 0, "the counting allocator is not installed: nothing was measured");
    assert!(!samples.is_empty(), "no sample after the warm-up");
    let peak = samples.iter().copied().max().unwrap_or(baseline);
    let growth = peak.saturating_sub(baseline);
    assert!(
        growth < 1 << 20,
        "live heap grew {} KiB over {} frames after warm-up (baseline {} KiB, samples {:?})",
        growth >> 10,
        frames - warm_up,
        baseline >> 10,
        samples.iter().map(|s| s >> 10).collect::<Vec<_>>()
    );
}

pub(crate) fn five_thousand_frames_stay_flat_in_memory() {
    soak(5_000);
}

#[test]
#[ignore = "the long soak: about a minute in release; run with --ignored"]
fn hundred_thousand_frames_stay_flat_in_memory() {
    let _serial = broadphase_testkit::serial();
    soak(100_000);
}

/// The figure the soak reads moves with the heap, so a leak cannot pass
/// unseen.
pub(crate) fn the_live_heap_figure_sees_a_kept_allocation() {
    let before = live_heap_bytes();
    let kept: Vec<u8> = Vec::with_capacity(1 << 20);
    assert!(live_heap_bytes() >= before + (1 << 20), "{} -> {}", before, live_heap_bytes());
    drop(kept);
    assert!(live_heap_bytes() < before + (1 << 20));
}
