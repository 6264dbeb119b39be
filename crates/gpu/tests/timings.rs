//! `GpuTimings`: every call that reaches the device says where its time
//! went, in parts that add up to no more than the whole call; refused and
//! empty calls leave the last call's figures. Skips without an adapter
//! unless `BROADPHASE_GPU_REQUIRED=1`.

mod support;

use broadphase_gpu::{GpuBoxPairs, GpuContext, GpuNeighborSearch, GpuTimings, PassClock, Stage};
use broadphase_neighbors::{NeighborListSearch, NeighborLists};
use broadphase_scenes::SplitMix64;
use glam::Vec3;
use std::time::Duration;

fn points(n: usize, seed: u64) -> Vec<Vec3> {
    let mut rng = SplitMix64::new(seed);
    (0..n)
        .map(|_| {
            Vec3::new(rng.range_f32(0.0, 15.0), rng.range_f32(0.0, 15.0), rng.range_f32(0.0, 15.0))
        })
        .collect()
}

/// Every part measured, none beyond the whole call, by the clock the
/// adapter allows; with the device's clock, each stage the call `ran`
/// timed within the passes, and no other.
fn assert_consistent(what: &str, context: &GpuContext, t: GpuTimings, ran: &[Stage]) {
    for stage in Stage::ALL {
        match t.stage(stage) {
            Some(time) => {
                assert!(
                    context.has_timestamps() && ran.contains(&stage),
                    "{what}: {stage:?} timed"
                );
                assert!(time <= t.passes, "{what}: {stage:?} beyond the passes: {t:?}");
            }
            None => assert!(
                !context.has_timestamps() || !ran.contains(&stage),
                "{what}: {stage:?} not timed: {t:?}"
            ),
        }
    }
    assert!(t.upload > Duration::ZERO, "{what}: upload not timed: {t:?}");
    assert!(t.passes > Duration::ZERO, "{what}: passes not timed: {t:?}");
    assert!(t.readback > Duration::ZERO, "{what}: read-back not timed: {t:?}");
    let clock =
        if context.has_timestamps() { PassClock::DeviceTimestamps } else { PassClock::HostWait };
    assert_eq!(t.passes_clock, clock, "{what}");
    // The host-timed parts never overlap; the device's pass time lies
    // inside the host's wait for the passes, which lies inside the call.
    assert!(t.upload + t.readback < t.total, "{what}: parts beyond the call: {t:?}");
    assert!(t.upload + t.passes + t.readback <= t.total, "{what}: parts beyond the call: {t:?}");
}

#[test]
fn neighbor_calls_fill_their_timings() {
    let Some(context) = support::context() else { return };
    let mut gpu = GpuNeighborSearch::new(&context);
    assert_eq!(gpu.timings(), GpuTimings::default(), "no call yet");
    let cloud = points(4000, 1);
    let mut lists = NeighborLists::default();
    gpu.find_neighbor_lists(&cloud, 1.0, &mut lists).unwrap();
    assert!(lists.total() > 0);
    let listed = gpu.timings();
    assert_consistent("find_neighbor_lists", &context, listed, &Stage::ALL);

    let mut counts = Vec::new();
    gpu.neighbor_counts(&cloud, 1.0, &mut counts).unwrap();
    let counted = gpu.timings();
    assert_consistent("neighbor_counts", &context, counted, &Stage::ALL[..4]);
    assert_ne!(counted, listed, "the second call replaced the first's figures");

    // Refused and empty calls never reach the device: the figures stay.
    let mut bad = cloud.clone();
    bad[7].y = f32::NAN;
    assert!(gpu.find_neighbor_lists(&bad, 1.0, &mut lists).is_err());
    assert!(gpu.neighbor_counts(&cloud, -1.0, &mut counts).is_err());
    gpu.find_neighbor_lists(&[], 1.0, &mut lists).unwrap();
    assert_eq!(gpu.timings(), counted);
}

#[test]
fn box_pairs_fill_their_timings() {
    let Some(context) = support::context() else { return };
    let mut gpu = GpuBoxPairs::new(&context);
    assert_eq!(gpu.timings(), GpuTimings::default(), "no call yet");
    let boxes = broadphase_scenes::uniform(5_000, 3).boxes;
    let mut pairs = Vec::new();
    gpu.find_pairs(&boxes, &mut pairs).unwrap();
    assert!(!pairs.is_empty());
    assert_consistent("find_pairs", &context, gpu.timings(), &Stage::ALL);
    // Warm: timing the parts apart creates no buffer.
    let allocations = gpu.buffer_allocations();
    gpu.find_pairs(&boxes, &mut pairs).unwrap();
    assert_consistent("find_pairs, warm", &context, gpu.timings(), &Stage::ALL);
    assert_eq!(gpu.buffer_allocations(), allocations);
}
