//! Regression: a warm `GridTree` frame with the sharded FastUnique merge
//! (`PairMerge::ShardedFastUnique`) allocates nothing, on any thread.
//!
//! Scenario: a game calls `GridTree::pairs` every frame with the same
//! boxes on a job system of 1, 2 or 4 threads. After three warm-up frames,
//! every frame must make zero heap allocations on every thread of the
//! process: the per-box sets and their shared spills, each job's pairs
//! grouped by shard, the merge's sorted spill and partner lists all keep
//! their memory. Covered: a uniform scene, clusters, a pile whose boxes
//! have hundreds of partners each (their sets spill), one box over a whole
//! scene (thousands of partners, found in every leaf), and a small
//! threshold.
//!
//! The counter sees every thread; the allocations binary runs its checks in turn.

use broadphase::glam::Vec3;
use broadphase::{
    Aabb, GridTree, JobSystem,
    tree::{GridTreeConfig, PairMerge},
};
use broadphase_scenes::SplitMix64;

use broadphase_testkit::allocations_on_every_thread_during;

const WARM_UP: usize = 3;
const COUNTED: usize = 6;

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

/// Allocations in each counted frame of `boxes` on `tree`.
fn warm_frames(tree: &mut GridTree, jobs: &JobSystem, boxes: &[Aabb]) -> Vec<usize> {
    let mut pairs = Vec::new();
    let mut per_frame = Vec::with_capacity(COUNTED);
    for frame in 0..WARM_UP + COUNTED {
        let (result, allocations) = allocations_on_every_thread_during(frame >= WARM_UP, || {
            tree.pairs(jobs, boxes, &mut pairs)
        });
        result.expect("valid boxes");
        if frame >= WARM_UP {
            per_frame.push(allocations);
        }
    }
    // Above the threshold: the subtree jobs and the sharded sets ran (a
    // pile is one subtree, but still goes through the sets).
    assert!(boxes.len() > tree.config().split_threshold, "{:?}", tree.stats());
    assert!(pairs.is_sorted(), "the sharded merge's order");
    per_frame
}

pub(crate) fn warm_sharded_merge_frames_allocate_nothing() {
    let sharded = GridTreeConfig { merge: PairMerge::ShardedFastUnique, ..Default::default() };
    let small_threshold = GridTreeConfig { split_threshold: 500, ..sharded };
    let pile = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 700];
    let mut one_over_all = uniform(20_000, 7);
    one_over_all.insert(3, Aabb::new(Vec3::splat(-1e4), Vec3::splat(1e4)));
    let scenes: [(&str, Vec<Aabb>, GridTreeConfig); 5] = [
        ("uniform", uniform(60_000, 1), sharded),
        ("clusters", clusters(60_000, 2), sharded),
        ("pile", pile, small_threshold),
        ("one box over all", one_over_all, sharded),
        ("uniform, small threshold", uniform(30_000, 4), small_threshold),
    ];
    for threads in [1, 2, 4] {
        let jobs = JobSystem::new(threads);
        for (name, boxes, config) in &scenes {
            let mut tree = GridTree::with_config(*config);
            let per_frame = warm_frames(&mut tree, &jobs, boxes);
            assert!(
                per_frame.iter().all(|&a| a == 0),
                "{name} on {threads} threads: allocations per warm frame: {per_frame:?} ({:?})",
                tree.stats()
            );
        }
    }
}
