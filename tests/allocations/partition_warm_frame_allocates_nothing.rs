//! Regression: a warm `GridTree` frame allocates nothing, on any thread.
//!
//! Scenario: a game calls `GridTree::find_pairs` every frame with the same
//! boxes on a job system of 1, 2 or 4 threads. After three warm-up
//! frames, every frame must make zero heap allocations on every thread of
//! the process — whichever thread runs which region, however the scheduler
//! interleaves them. Covered: a uniform scene (root split only), clusters
//! (subtrees that split again inside their jobs), one cluster holding most
//! boxes (parallel split passes below the root), a pile that cannot be
//! split (one subtree over the input), one box over all, and a small
//! threshold; with both merges (the reference-point rule and the
//! sharded-mutex FastUnique sets). When the
//! scene grows, the first frame at the new size allocates, a bounded
//! number of times, and the next ones nothing.
//!
//! The counter sees every thread; the allocations binary runs its checks in
//! turn.

use broadphase::glam::Vec3;
use broadphase::tree::{GridTreeConfig, PairMerge};
use broadphase::{Aabb, GridTree, JobSystem};
use broadphase_scenes::SplitMix64;

use broadphase_testkit::allocations_on_every_thread_during;

const WARM_UP: usize = 3;
const COUNTED: usize = 8;

fn random_box(rng: &mut SplitMix64, lo: f32, hi: f32, size: f32) -> Aabb {
    let at = Vec3::new(rng.range_f32(lo, hi), rng.range_f32(lo, hi), rng.range_f32(lo, hi));
    Aabb::new(at, at + Vec3::splat(rng.range_f32(0.1, size)))
}

fn uniform(count: usize, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    let side = (count as f32).cbrt() * 2.0;
    (0..count).map(|_| random_box(&mut rng, 0.0, side, 1.5)).collect()
}

/// Eight tight clusters: the subtrees holding them split again in jobs.
fn clusters(count: usize, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    (0..count)
        .map(|i| {
            let corner = (i % 8) as f32 * 200.0;
            random_box(&mut rng, corner, corner + 30.0, 0.8)
        })
        .collect()
}

/// One cluster of 80,000 boxes (most of the input) in sparse space.
fn huge_cluster(seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    let mut boxes: Vec<Aabb> = (0..80_000).map(|_| random_box(&mut rng, 0.0, 60.0, 0.6)).collect();
    boxes.extend((0..20_000).map(|_| random_box(&mut rng, -2_000.0, 2_000.0, 1.0)));
    boxes
}

/// Allocations in each counted frame of `boxes` on `tree`.
fn warm_frames(tree: &mut GridTree, jobs: &JobSystem, boxes: &[Aabb]) -> Vec<usize> {
    let mut pairs = Vec::new();
    let mut per_frame = Vec::with_capacity(COUNTED);
    for frame in 0..WARM_UP + COUNTED {
        let (result, allocations) = allocations_on_every_thread_during(frame >= WARM_UP, || {
            tree.find_pairs(jobs, boxes, &mut pairs)
        });
        result.expect("valid boxes");
        if frame >= WARM_UP {
            per_frame.push(allocations);
        }
    }
    assert!(tree.stats().regions > 1 || boxes.len() <= tree.config().split_threshold * 2);
    if tree.config().merge == PairMerge::ShardedFastUnique {
        assert!(pairs.is_sorted(), "the sharded merge's order");
    }
    per_frame
}

/// Both merges (the reference-point rule, and the sharded-mutex
/// FastUnique sets), on 1, 2 and 4 threads.
pub(crate) fn warm_grid_tree_frames_allocate_nothing() {
    let default = GridTreeConfig::default();
    let small_threshold = GridTreeConfig { split_threshold: 500, ..default };
    let pile = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 700];
    let mut one_over_all = uniform(20_000, 7);
    one_over_all.insert(3, Aabb::new(Vec3::splat(-1e4), Vec3::splat(1e4)));
    let scenes: [(&str, Vec<Aabb>, GridTreeConfig); 6] = [
        ("uniform", uniform(60_000, 1), default),
        ("clusters", clusters(60_000, 2), default),
        ("huge cluster", huge_cluster(3), default),
        ("pile", pile, small_threshold),
        ("one box over all", one_over_all, default),
        ("uniform, small threshold", uniform(30_000, 4), small_threshold),
    ];
    for merge in [PairMerge::ReferencePoint, PairMerge::ShardedFastUnique] {
        for threads in [1, 2, 4] {
            let jobs = JobSystem::new(threads);
            for (name, boxes, config) in &scenes {
                let mut tree = GridTree::with_config(GridTreeConfig { merge, ..*config });
                let per_frame = warm_frames(&mut tree, &jobs, boxes);
                assert!(
                    per_frame.iter().all(|&a| a == 0),
                    "{name}, {merge:?} on {threads} threads: allocations per warm frame: \
                     {per_frame:?} ({:?})",
                    tree.stats()
                );
            }
        }
    }

    // Growth: the same tree and job system on a bigger scene allocate in
    // its first frames (buffers grow, never per box), then nothing.
    let jobs = JobSystem::new(2);
    let mut tree = GridTree::default();
    warm_frames(&mut tree, &jobs, &uniform(30_000, 5));
    let bigger = uniform(90_000, 6);
    let mut pairs = Vec::new();
    let (result, growing) =
        allocations_on_every_thread_during(true, || tree.find_pairs(&jobs, &bigger, &mut pairs));
    result.expect("valid boxes");
    assert!(growing > 0, "a bigger scene needs room: the counter must see it");
    // Per buffer, not per box: each chunk of the input (2,048 boxes here)
    // keeps 64 child shares per parallel split; a per-box allocation would
    // be 90,000 or more.
    let chunks = bigger.len().div_ceil(2_048);
    assert!(growing <= chunks * 64 * 3, "growth is per buffer, not per box: {growing} allocations");
    let per_frame = warm_frames(&mut tree, &jobs, &bigger);
    assert!(per_frame.iter().all(|&a| a == 0), "after growth: {per_frame:?}");
}
