//! The sharded FastUnique merge (`PairMerge::ShardedFastUnique`) against
//! brute force: every pair once, `a < b`, sorted, the same list on 1, 2
//! and 4 threads and for every split depth, equal as a set to the
//! reference-point merge's. Scenes: random (proptest), a pile of 2,000
//! identical boxes, one box over all the others, boxes whose faces lie on
//! the cell borders, far outliers, long thin boxes. Small split
//! thresholds and leaf capacities force deep trees and many leaves, so
//! pairs are found in several leaves and the merge must drop the repeats;
//! boxes with thousands of partners overflow their set's inline slots.

use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, GridConfig, brute_force_pairs};
use broadphase_partition::{GridTree, GridTreeConfig, PairMerge};
use broadphase_scenes::{SplitMix64, clusters16_40k, uniform};
use broadphase_testkit::within;
use glam::Vec3;
use proptest::prelude::*;

fn brute(boxes: &[Aabb]) -> Vec<[u32; 2]> {
    let mut pairs = Vec::new();
    brute_force_pairs(boxes, &mut pairs).unwrap();
    pairs.sort_unstable();
    pairs
}

fn config(merge: PairMerge, split_threshold: usize, leaf_capacity: usize) -> GridTreeConfig {
    let grid = GridConfig { leaf_capacity, ..GridConfig::default() };
    GridTreeConfig { split_threshold, merge, grid }
}

/// What one scene's checks saw.
#[derive(Debug, Default)]
struct Seen {
    /// The most pairs the leaves reported over the pairs kept, in one frame.
    repeats: u64,
    deepest: u32,
}

/// Checks the sharded merge on `boxes` against `expected` (sorted) for
/// threads 1, 2, 4, every threshold and leaf capacity, two frames each;
/// and that the reference-point merge gives the same set.
fn check(what: &str, boxes: &[Aabb], expected: &[[u32; 2]], thresholds: &[usize]) -> Seen {
    let mut seen = Seen::default();
    let systems: Vec<JobSystem> = [1, 2, 4].into_iter().map(JobSystem::new).collect();
    for &split_threshold in thresholds {
        for leaf_capacity in [4, 128] {
            let mut first: Option<Vec<[u32; 2]>> = None;
            for jobs in &systems {
                let config = config(PairMerge::ShardedFastUnique, split_threshold, leaf_capacity);
                let mut tree = GridTree::with_config(config);
                let mut pairs = vec![[7, 7]];
                for frame in 0..2 {
                    tree.find_pairs(jobs, boxes, &mut pairs).unwrap();
                    let ctx =
                        format!("{what}: {} threads, {config:?}, frame {frame}", jobs.threads());
                    assert!(pairs.iter().all(|&[a, b]| a < b), "{ctx}: a < b");
                    assert!(pairs.is_sorted(), "{ctx}: the output is sorted");
                    let repeats = pairs.windows(2).filter(|w| w[0] == w[1]).count();
                    assert_eq!(repeats, 0, "{ctx}: a pair kept twice");
                    assert_eq!(pairs.len(), expected.len(), "{ctx}: pair count");
                    assert!(pairs == expected, "{ctx}: pairs differ from brute force");
                    let stats = tree.stats();
                    assert_eq!(stats.boxes, boxes.len(), "{ctx}");
                    assert!(stats.reported >= pairs.len() as u64, "{ctx}: {stats:?}");
                    seen.repeats = seen.repeats.max(stats.reported - pairs.len() as u64);
                    seen.deepest = seen.deepest.max(stats.depth);
                }
                match &first {
                    None => first = Some(pairs),
                    Some(first) => {
                        assert!(*first == pairs, "{what}: output differs between thread counts")
                    }
                }
            }
            // The default merge on the same tree: the same set.
            let jobs = &systems[1];
            let config = config(PairMerge::ReferencePoint, split_threshold, leaf_capacity);
            let mut reference = Vec::new();
            GridTree::with_config(config).find_pairs(jobs, boxes, &mut reference).unwrap();
            reference.sort_unstable();
            assert!(reference == expected, "{what}: {config:?}: the reference-point merge");
        }
    }
    seen
}

/// `count` random boxes of mixed sizes packed densely (about 5 partners
/// each), corners on a lattice so that faces touch.
fn dense(count: usize, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    let side = (count as f32).cbrt() * 2.5;
    (0..count)
        .map(|_| {
            let c = Vec3::new(
                rng.range_f32(0.0, side),
                rng.range_f32(0.0, side),
                rng.range_f32(0.0, side),
            );
            let size = Vec3::new(
                rng.range_f32(0.5, 6.0),
                rng.range_f32(0.5, 4.0),
                rng.range_f32(0.5, 4.0),
            );
            Aabb::new(c.round(), (c + size).round())
        })
        .collect()
}

#[test]
fn random_boxes_at_every_split_depth() {
    within(120, || {
        let boxes = dense(3_000, 21);
        let expected = brute(&boxes);
        assert!(expected.len() > 3 * boxes.len(), "dense: {} pairs", expected.len());
        let seen = check("dense 3k", &boxes, &expected, &[1, 8, 64, 1_000, 10_000]);
        assert!(seen.deepest >= 1, "tiny thresholds split below the root: {seen:?}");
        assert!(seen.repeats > 0, "pairs must be found in several leaves: {seen:?}");
    });
}

#[test]
fn clustered_scene_matches_brute_force() {
    within(180, || {
        let boxes = clusters16_40k().boxes;
        let expected = brute(&boxes);
        let seen = check("clusters16_40k", &boxes, &expected, &[50, 10_000]);
        assert!(seen.repeats > 0, "{seen:?}");
    });
}

#[test]
fn pile_of_a_thousand_identical_boxes() {
    within(180, || {
        let boxes = vec![Aabb::new(Vec3::splat(3.0), Vec3::splat(4.0)); 1_000];
        let n = boxes.len() as u32;
        let expected: Vec<[u32; 2]> =
            (0..n).flat_map(|a| (a + 1..n).map(move |b| [a, b])).collect();
        // Box 0 has 999 partners: its set spills far past its 8 slots.
        check("pile", &boxes, &expected, &[1, 64, 10_000]);

        // The pile inside a scene that splits around it.
        let mut mixed = uniform(4_000, 5).boxes;
        mixed.extend(std::iter::repeat_n(mixed[17], 600));
        check("pile in a scene", &mixed, &brute(&mixed), &[16, 500]);
    });
}

#[test]
fn one_box_over_every_other() {
    within(120, || {
        let mut boxes = uniform(6_000, 3).boxes;
        boxes.insert(2_500, Aabb::new(Vec3::splat(-1e6), Vec3::splat(1e6)));
        let expected = brute(&boxes);
        let partners = expected.iter().filter(|p| p.contains(&2_500)).count();
        assert_eq!(partners, 6_000);
        // The big box reaches every leaf: its pairs with the boxes in
        // several leaves are found again and again.
        let seen = check("one box over all", &boxes, &expected, &[4, 100, 1_000]);
        assert!(seen.repeats > 0, "{seen:?}");
    });
}

#[test]
fn boxes_on_the_cell_borders() {
    within(120, || {
        // A lattice over [0, 64]^3: the quantized cube's cell borders at
        // every depth fall on whole numbers here, and every box's faces lie
        // on them, touching its neighbours' faces (touching counts).
        let mut boxes = Vec::new();
        for x in 0..16 {
            for y in 0..16 {
                for z in 0..8 {
                    let lo = Vec3::new(x as f32, y as f32, z as f32) * 4.0;
                    boxes.push(Aabb::new(lo, lo + Vec3::splat(4.0)));
                }
            }
        }
        // Points on the borders, and flat boxes lying in a border plane.
        for i in 0..300 {
            let p = Vec3::new((i % 17) as f32 * 4.0, (i % 13) as f32 * 4.0, 32.0);
            boxes.push(Aabb::new(p, p));
            boxes.push(Aabb::new(Vec3::new(p.x, 0.0, 16.0), Vec3::new(p.x + 2.0, 64.0, 16.0)));
        }
        let expected = brute(&boxes);
        let seen = check("cell borders", &boxes, &expected, &[1, 32, 500]);
        assert!(seen.repeats > 0, "{seen:?}");
    });
}

#[test]
fn far_outliers_and_long_thin_boxes() {
    within(120, || {
        let mut rng = SplitMix64::new(7);
        let mut boxes = uniform(3_000, 9).boxes;
        // Far outliers: the root covers them, the scene is one corner.
        for i in 0..40 {
            let s = if i % 2 == 0 { 1.0 } else { -1.0 };
            let c = Vec3::new(s * 3e30, rng.range_f32(-1e30, 1e30), s * 1e20);
            boxes.push(Aabb::new(c, c + Vec3::splat(1e29)));
        }
        boxes.push(Aabb::new(Vec3::splat(-f32::MAX), Vec3::splat(-f32::MAX)));
        // Long thin boxes crossing the whole scene along each axis.
        for i in 0..200 {
            let t = rng.range_f32(0.0, 25.0);
            let u = rng.range_f32(0.0, 25.0);
            let (lo, hi) = match i % 3 {
                0 => (Vec3::new(-1e4, t, u), Vec3::new(1e4, t + 0.01, u + 0.01)),
                1 => (Vec3::new(t, -1e4, u), Vec3::new(t + 0.01, 1e4, u + 0.01)),
                _ => (Vec3::new(t, u, -1e4), Vec3::new(t + 0.01, u + 0.01, 1e4)),
            };
            boxes.push(Aabb::new(lo, hi));
        }
        let expected = brute(&boxes);
        let seen = check("outliers and thin boxes", &boxes, &expected, &[2, 50, 600]);
        assert!(seen.repeats > 0, "{seen:?}");
    });
}

#[test]
fn empty_and_tiny_inputs() {
    within(60, || {
        let jobs = JobSystem::new(2);
        let mut tree = GridTree::with_config(config(PairMerge::ShardedFastUnique, 1, 4));
        let mut pairs = vec![[1, 2]];
        tree.find_pairs(&jobs, &[], &mut pairs).unwrap();
        assert!(pairs.is_empty());
        let one = [Aabb::new(Vec3::ZERO, Vec3::ONE)];
        tree.find_pairs(&jobs, &one, &mut pairs).unwrap();
        assert!(pairs.is_empty());
        let three = [one[0], Aabb::new(Vec3::ONE, Vec3::splat(2.0)), one[0]];
        tree.find_pairs(&jobs, &three, &mut pairs).unwrap();
        assert_eq!(pairs, [[0, 1], [0, 2], [1, 2]]);
        // Below the threshold (one walk, no merge) the order is sorted too.
        let mut small = GridTree::with_config(config(PairMerge::ShardedFastUnique, 10_000, 128));
        let boxes = uniform(2_000, 4).boxes;
        small.find_pairs(&jobs, &boxes, &mut pairs).unwrap();
        assert_eq!(small.stats().regions, 1);
        assert!(pairs == brute(&boxes));
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random small scenes (mixed sizes, some identical, faces touching on
    /// a lattice) with tiny thresholds and leaves: the sharded merge is
    /// brute force, in sorted order, the same on 1, 2 and 4 threads.
    #[test]
    fn random_small_scenes_match_brute_force(
        seed in any::<u64>(),
        count in 0usize..700,
        threshold in 1usize..40,
        leaf_capacity in 1usize..24,
    ) {
        let mut rng = SplitMix64::new(seed);
        let mut boxes: Vec<Aabb> = (0..count)
            .map(|_| {
                let c = Vec3::new(rng.range_f32(0.0, 60.0), rng.range_f32(0.0, 60.0), rng.range_f32(0.0, 20.0));
                let size = Vec3::new(rng.range_f32(0.0, 9.0), rng.range_f32(0.0, 6.0), rng.range_f32(0.0, 6.0));
                let c = (c * 0.5).round() * 2.0;
                Aabb::new(c, c + size.round())
            })
            .collect();
        if count > 10 {
            boxes[count / 2] = boxes[count / 3];
        }
        let result = within(60, move || {
            let expected = brute(&boxes);
            let outputs: Vec<Vec<[u32; 2]>> = [1, 2, 4]
                .into_iter()
                .map(|threads| {
                    let jobs = JobSystem::new(threads);
                    let config = config(PairMerge::ShardedFastUnique, threshold, leaf_capacity);
                    let mut pairs = Vec::new();
                    GridTree::with_config(config).find_pairs(&jobs, &boxes, &mut pairs).unwrap();
                    pairs
                })
                .collect();
            (outputs, expected)
        });
        let (outputs, expected) = result;
        for pairs in &outputs {
            prop_assert_eq!(pairs, &expected);
        }
    }
}
