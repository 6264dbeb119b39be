//! Regression: a warm ECS frame allocates nothing, on any thread. With the
//! same entities every frame (dynamic bodies moving on a periodic path,
//! layers on some, a static entity that changes every fourth frame, so
//! the statics are read again; and in one case compound bodies of four
//! colliders, some re-parented every frame), after two periods of
//! warm-up, 12 more runs
//! of the plugin (three periods) make zero heap allocations: every buffer (gathered
//! boxes, the proxies and their candidate pairs, pairs, events, the
//! index, the tree's jobs and split buffers, hecs's query caches) is
//! reused.
//!
//! The counting allocator counts every thread of this test binary (the
//! plugin's job system's workers too), and the allocations binary runs its checks in
//! turn.

use broadphase::ecs::hecs::World;
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, Collider, ColliderOf, CollisionLayers, PluginConfig, SleepChanges,
    Sleeping, Static, StaticChanges,
};
use broadphase::glam::Vec3;
use broadphase::persistent::PersistentConfig;
use broadphase_scenes::SplitMix64;

use broadphase_testkit::allocations_on_every_thread_during;

const PERIOD: usize = 4;
const WARM_UP: usize = 2 * PERIOD;
const COUNTED: usize = 12;

/// On one thread, static changes detected and reported; then on 2 and 4
/// threads, with the bulk set and the tree's passes split over the job
/// system. Zero allocations either way; and when the world grows, a
/// bounded number in its first frame, then zero again.
pub(crate) fn warm_ecs_frames_allocate_nothing() {
    for static_changes in [StaticChanges::Detect, StaticChanges::Notify] {
        let config = PluginConfig { threads: 1, static_changes, ..PluginConfig::default() };
        let per_frame = warm_frames(config, 4_000, 60.0, true, false, false);
        let total: usize = per_frame.iter().sum();
        assert_eq!(total, 0, "{config:?}: allocations per warm frame: {per_frame:?}");
    }
    // An eighth of the bodies fall asleep and wake again every period, so
    // the sleeping set is read again, its proxies kept and woken.
    for sleep_changes in [SleepChanges::Detect, SleepChanges::Notify] {
        let config = PluginConfig { threads: 2, sleep_changes, ..PluginConfig::default() };
        let per_frame = warm_frames(config, 16_000, 60.0, true, true, false);
        let total: usize = per_frame.iter().sum();
        assert_eq!(total, 0, "{sleep_changes:?}: allocations per warm frame: {per_frame:?}");
    }
    for threads in [2, 4] {
        let config = PluginConfig { threads, ..PluginConfig::default() };
        let per_frame = warm_frames(config, 16_000, 60.0, true, false, false);
        let total: usize = per_frame.iter().sum();
        assert_eq!(total, 0, "{threads} threads above the threshold: {per_frame:?}");
    }
    // Dense and without layers: hundreds of thousands of pairs, so the
    // full update sorts and merges in parts and the pairs are published
    // in pieces, on every thread.
    // With a margin, the kept candidates are re-tested and merged in parts
    // (the incremental path) when few proxies leave their margins.
    for margin in [0.0, 0.5] {
        let broad_phase = PersistentConfig { margin, ..PersistentConfig::default() };
        let config = PluginConfig { threads: 2, broad_phase, ..PluginConfig::default() };
        let per_frame = warm_frames(config, 20_000, 35.0, false, false, false);
        let total: usize = per_frame.iter().sum();
        assert_eq!(total, 0, "a dense world on 2 threads, margin {margin}: {per_frame:?}");
    }
    // Compound bodies: the groups set again, the body pairs reduced and
    // diffed every frame, with re-parenting.
    for threads in [1, 2] {
        let config = PluginConfig { threads, ..PluginConfig::default() };
        let per_frame = warm_frames(config, 16_000, 40.0, true, false, true);
        let total: usize = per_frame.iter().sum();
        assert_eq!(total, 0, "compound bodies on {threads} threads: {per_frame:?}");
    }
    growth_is_bounded_then_zero();
}

/// A world that doubles from 8,000 to 16,000 moving bodies: the first frame
/// at the new size grows buffers (a bounded number of allocations, per
/// buffer, not per entity), and once warm again frames allocate nothing.
fn growth_is_bounded_then_zero() {
    let mut rng = SplitMix64::new(7);
    let mut world = World::new();
    let mut spawn_bodies = |world: &mut World, count: usize| {
        for _ in 0..count {
            let at = Vec3::new(
                rng.range_f32(0.0, 80.0),
                rng.range_f32(0.0, 80.0),
                rng.range_f32(0.0, 80.0),
            );
            world.spawn((at, Collider::sphere(rng.range_f32(0.5, 1.5))));
        }
    };
    let mut plugin =
        BroadPhasePlugin::with_config(PluginConfig { threads: 2, ..Default::default() });
    let mut run = |world: &mut World, count: bool| {
        let (result, allocations) = allocations_on_every_thread_during(count, || plugin.run(world));
        result.expect("valid world");
        allocations
    };
    spawn_bodies(&mut world, 8_000);
    (0..WARM_UP).for_each(|_| _ = run(&mut world, false));
    assert_eq!(run(&mut world, true), 0, "warm at 8,000 bodies");
    spawn_bodies(&mut world, 8_000);
    let growing = run(&mut world, true);
    assert!(growing > 0, "doubling the world needs room: the counter must see it");
    assert!(growing <= 2_000, "growth is per buffer, not per entity: {growing} allocations");
    (0..WARM_UP).for_each(|_| _ = run(&mut world, false));
    let per_frame: Vec<usize> = (0..10).map(|_| run(&mut world, true)).collect();
    assert!(per_frame.iter().all(|&a| a == 0), "warm again at 16,000 bodies: {per_frame:?}");
}

/// Runs the scene with `dynamic` moving bodies in a cube of side `side`,
/// a quarter with layers if `layers`, an eighth falling asleep in the
/// second half of each period if `sleepers`, every four of them the
/// colliders of one body if `compound`; returns each counted frame's
/// allocations.
fn warm_frames(
    config: PluginConfig,
    dynamic: usize,
    side: f32,
    layers: bool,
    sleepers: bool,
    compound: bool,
) -> Vec<usize> {
    let mut rng = SplitMix64::new(99);
    let mut world = World::new();
    let mut homes = Vec::new();
    let bodies: Vec<_> =
        (0..if compound { dynamic / 4 } else { 0 }).map(|_| world.spawn(())).collect();
    for i in 0..dynamic {
        let home =
            Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side));
        let collider = Collider::sphere(rng.range_f32(0.5, 1.5));
        let e = if layers && i.is_multiple_of(4) {
            world.spawn((home, collider, CollisionLayers::new(1 << (i % 3), 0b101)))
        } else {
            world.spawn((home, collider))
        };
        if compound {
            world.insert_one(e, ColliderOf(bodies[i / 4])).unwrap();
        }
        homes.push((e, home));
    }
    let statics: Vec<_> = (0..2_000)
        .map(|_| {
            let at = Vec3::new(
                rng.range_f32(0.0, side),
                rng.range_f32(0.0, side),
                rng.range_f32(0.0, side),
            );
            world.spawn((Aabb::new(at, at + Vec3::splat(1.0)), Static))
        })
        .collect();

    let mut plugin = BroadPhasePlugin::with_config(config);
    let mut per_frame = Vec::with_capacity(COUNTED);
    let (mut rebuilds, mut started, mut ended, mut asleep_frames) = (0, 0, 0, 0);
    let (mut body_started, mut body_ended) = (0, 0);
    // With a margin, proxies leave it at different frames: the first
    // rebuild of the kept index comes later, so the warm-up is longer.
    let warm_up = if config.broad_phase.margin > 0.0 { 4 * WARM_UP } else { WARM_UP };
    for frame in 0..warm_up + COUNTED {
        // A periodic path: frame f and f + PERIOD see the same world.
        let phase = (frame % PERIOD) as f32;
        for (i, &(e, home)) in homes.iter().enumerate() {
            let sleeper = sleepers && i % 8 == 1;
            if sleeper && frame % PERIOD == PERIOD / 2 {
                world.insert_one(e, Sleeping).unwrap();
            } else if sleeper && frame % PERIOD == 0 && frame > 0 {
                world.remove_one::<Sleeping>(e).unwrap();
            }
            if !world.satisfies::<&Sleeping>(e) {
                *world.get::<&mut Vec3>(e).unwrap() =
                    home + Vec3::new(phase * 0.7, -phase * 0.4, 0.0);
            }
        }
        if sleepers && frame % (PERIOD / 2) == 0 {
            plugin.sleepers_changed();
        }
        world.get::<&mut Aabb>(statics[7]).unwrap().min.x = if phase == 0.0 { 0.5 } else { 0.0 };
        if compound {
            // Every 16th collider moves to the next body and back.
            for (k, &(e, _)) in homes.iter().enumerate().step_by(16) {
                let body = bodies[(k / 4 + frame % 2) % bodies.len()];
                world.get::<&mut ColliderOf>(e).unwrap().0 = body;
            }
        }

        let (result, allocations) =
            allocations_on_every_thread_during(frame >= warm_up, || plugin.run(&mut world));
        result.expect("valid world");
        if frame >= warm_up {
            per_frame.push(allocations);
            let s = plugin.stats();
            rebuilds += usize::from(s.static_rebuilt);
            asleep_frames += usize::from(s.sleeping_boxes > 0);
            started += s.started;
            ended += s.ended;
            body_started += plugin.body_started().len();
            body_ended += plugin.body_ended().len();
        }
    }
    if compound {
        assert!(plugin.body_pairs().len() < plugin.pairs().len(), "bodies reduce the pairs");
        assert!(body_started > 0 && body_ended > 0, "body events happen every frame");
    }
    assert!(plugin.stats().pairs > 1_000, "a busy scene: {}", plugin.stats().pairs);
    if !layers {
        // Past the thresholds of the parallel merge and publish.
        assert!(plugin.stats().pairs > 100_000, "a dense scene: {}", plugin.stats().pairs);
    }
    assert!(started > 0 && ended > 0, "events happen every frame");
    if sleepers {
        assert!(asleep_frames >= COUNTED / 2, "bodies slept in {asleep_frames} frames");
    }
    if plugin.config().static_changes == StaticChanges::Detect {
        assert!(rebuilds >= COUNTED / PERIOD, "the static set was read again while counting");
    }
    per_frame
}
