//! The grid tree against the kernel and brute force: every pair once,
//! `a < b`, the same set, on random, clustered, teapot, stretched, pile,
//! huge-box and extreme-coordinate scenes, for several thread counts,
//! split thresholds (tiny ones included, so every input runs the parallel
//! passes).

use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, AdaptiveGrid, brute_force_pairs};
use broadphase_partition::{GridTree, GridTreeConfig};
use broadphase_scenes::{
    SplitMix64, cluster88k, clusters16_40k, pile, sparse20k, stretched40k, uniform,
};
use broadphase_testkit::within;
use glam::Vec3;
use proptest::prelude::*;

fn brute(boxes: &[Aabb]) -> Vec<[u32; 2]> {
    let mut pairs = Vec::new();
    brute_force_pairs(boxes, &mut pairs).unwrap();
    pairs.sort_unstable();
    pairs
}

fn kernel_pairs(boxes: &[Aabb]) -> Vec<[u32; 2]> {
    let mut grid = AdaptiveGrid::default();
    grid.build(boxes).unwrap();
    let mut pairs = Vec::new();
    grid.pairs(&mut pairs);
    pairs.sort_unstable();
    pairs
}

/// Checks the tree on `boxes` for every thread count and threshold against
/// `expected` (sorted). Returns the deepest tree seen.
fn check(what: &str, boxes: &[Aabb], expected: &[[u32; 2]], thresholds: &[usize]) -> u32 {
    let mut deepest = 0;
    for threads in [1, 2, 4] {
        let jobs = JobSystem::new(threads);
        for &split_threshold in thresholds {
            let config = GridTreeConfig { split_threshold, ..Default::default() };
            let mut tree = GridTree::with_config(config);
            let mut pairs = Vec::new();
            // Twice: the second frame runs on warm, reused buffers.
            for frame in 0..2 {
                tree.find_pairs(&jobs, boxes, &mut pairs).unwrap();
                let ctx = format!("{what}: {threads} threads, {config:?}, frame {frame}");
                assert!(pairs.iter().all(|&[a, b]| a < b), "{ctx}: a < b");
                let mut sorted = pairs.clone();
                sorted.sort_unstable();
                let repeats = sorted.windows(2).filter(|w| w[0] == w[1]).count();
                assert_eq!(repeats, 0, "{ctx}: pairs reported twice");
                assert_eq!(sorted.len(), expected.len(), "{ctx}: pair count");
                assert!(sorted == expected, "{ctx}: pair set differs from the kernel's");
            }
            let stats = tree.stats();
            assert_eq!(stats.boxes, boxes.len(), "{what}");
            assert!(stats.slots >= boxes.len() as u64, "{what}: a box was dropped");
            deepest = deepest.max(stats.depth);
        }
    }
    deepest
}

#[test]
fn random_boxes_match_kernel_and_brute_force() {
    within(120, || {
        let boxes = uniform(3_000, 11).boxes;
        let expected = kernel_pairs(&boxes);
        assert_eq!(expected, brute(&boxes), "the oracle itself");
        let depth = check("uniform 3k", &boxes, &expected, &[1, 8, 64, 1_000, 10_000]);
        assert!(depth >= 1, "tiny thresholds should split the root in parallel, got depth {depth}");
    });
}

#[test]
fn clustered_scene_with_teapots_matches_kernel() {
    within(120, || {
        let boxes = clusters16_40k().boxes;
        let expected = kernel_pairs(&boxes);
        let depth = check("clusters16_40k", &boxes, &expected, &[50, 2_000, 10_000]);
        assert!(depth >= 1, "the root splits in parallel: depth {depth}");
    });
}

#[test]
fn sparse_scene_with_far_teapots_matches_kernel() {
    within(120, || {
        let boxes = sparse20k().boxes;
        check("sparse20k", &boxes, &kernel_pairs(&boxes), &[100, 5_000]);
    });
}

#[test]
fn stretched_scene_matches_kernel() {
    within(120, || {
        let boxes = stretched40k().boxes;
        check("stretched40k", &boxes, &kernel_pairs(&boxes), &[300, 10_000]);
    });
}

#[test]
fn pile_of_identical_boxes_gives_every_pair_once() {
    within(120, || {
        let boxes = pile().boxes;
        let n = boxes.len() as u32;
        let expected: Vec<[u32; 2]> =
            (0..n).flat_map(|a| (a + 1..n).map(move |b| [a, b])).collect();
        check("pile", &boxes, &expected, &[1, 64, 10_000]);

        // A pile inside a random scene: the pile's cell cannot split, the
        // rest can.
        let mut mixed = uniform(4_000, 5).boxes;
        mixed.extend(std::iter::repeat_n(mixed[17], 300));
        let expected = kernel_pairs(&mixed);
        check("pile in a scene", &mixed, &expected, &[16, 200]);
    });
}

#[test]
fn huge_cluster_beside_a_sparse_world() {
    within(120, || {
        let boxes = cluster88k().boxes;
        let expected = kernel_pairs(&boxes);
        check("cluster beside sparse world", &boxes, &expected, &[500, 5_000]);
    });
}

#[test]
fn one_huge_box_over_a_scene() {
    within(120, || {
        let mut boxes = uniform(6_000, 3).boxes;
        boxes.insert(2_500, Aabb::new(Vec3::splat(-1e6), Vec3::splat(1e6)));
        let expected = kernel_pairs(&boxes);
        let partners = expected.iter().filter(|p| p.contains(&2_500)).count();
        assert_eq!(partners, 6_000);
        check("huge box", &boxes, &expected, &[4, 100, 1_000]);
    });
}

#[test]
fn extreme_coordinates_and_points_at_one_place() {
    within(120, || {
        let mut rng = SplitMix64::new(99);
        let mut boxes = Vec::new();
        for _ in 0..1_500 {
            // Boxes strewn over the whole f32 range, some touching.
            let c = Vec3::new(
                rng.range_f32(-3e38, 3e38),
                rng.range_f32(-1e30, 1e30),
                rng.range_f32(-1.0, 1.0),
            );
            boxes.push(Aabb::new(c, c + Vec3::new(1e37, 1e29, 0.5)));
        }
        let p = Vec3::new(1e-30, -7.0, 3.0);
        boxes.extend(std::iter::repeat_n(Aabb::new(p, p), 400));
        boxes.push(Aabb::new(Vec3::splat(-f32::MAX), Vec3::splat(f32::MAX)));
        // Long thin boxes crossing every cell on one axis.
        for i in 0..300 {
            let y = i as f32 * 0.01;
            boxes.push(Aabb::new(Vec3::new(-1e20, y, 0.0), Vec3::new(1e20, y + 0.005, 0.5)));
        }
        let expected = kernel_pairs(&boxes);
        assert_eq!(expected, brute(&boxes), "the oracle itself");
        check("extremes", &boxes, &expected, &[2, 50, 600]);
    });
}

#[test]
fn empty_and_tiny_inputs() {
    within(60, || {
        let jobs = JobSystem::new(2);
        let mut tree =
            GridTree::with_config(GridTreeConfig { split_threshold: 1, ..Default::default() });
        let mut pairs = vec![[1, 2]];
        tree.find_pairs(&jobs, &[], &mut pairs).unwrap();
        assert!(pairs.is_empty());
        let one = [Aabb::new(Vec3::ZERO, Vec3::ONE)];
        tree.find_pairs(&jobs, &one, &mut pairs).unwrap();
        assert!(pairs.is_empty());
        let two = [one[0], Aabb::new(Vec3::ONE, Vec3::splat(2.0))];
        tree.find_pairs(&jobs, &two, &mut pairs).unwrap();
        assert_eq!(pairs, [[0, 1]]);
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random small scenes (boxes of mixed sizes, some identical, some
    /// touching) with tiny thresholds: the tree equals brute force.
    #[test]
    fn random_small_scenes_match_brute_force(
        seed in any::<u64>(),
        count in 0usize..600,
        threshold in 1usize..40,
        threads in 1usize..4,
    ) {
        let mut rng = SplitMix64::new(seed);
        let mut boxes: Vec<Aabb> = (0..count)
            .map(|_| {
                let c = Vec3::new(rng.range_f32(0.0, 60.0), rng.range_f32(0.0, 60.0), rng.range_f32(0.0, 20.0));
                let size = Vec3::new(rng.range_f32(0.0, 6.0), rng.range_f32(0.0, 6.0), rng.range_f32(0.0, 6.0));
                // Snap to a coarse lattice so faces touch and boxes repeat.
                let c = (c * 0.5).round() * 2.0;
                Aabb::new(c, c + size.round())
            })
            .collect();
        if count > 10 {
            boxes[count / 2] = boxes[count / 3];
        }
        let result = within(60, move || {
            let jobs = JobSystem::new(threads);
            let config = GridTreeConfig { split_threshold: threshold, ..Default::default() };
            let mut pairs = Vec::new();
            GridTree::with_config(config).find_pairs(&jobs, &boxes, &mut pairs).unwrap();
            pairs.sort_unstable();
            (pairs, brute(&boxes))
        });
        prop_assert_eq!(result.0, result.1);
    }
}
