//! Bad input to the grid tree is the kernel's `InputError`, naming the
//! first bad box, on the small path (calling thread) and the parallel one
//! (chunk jobs) alike; the output is empty and the tree stays usable.

use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, AdaptiveGrid, InputError};
use broadphase_partition::{GridTree, GridTreeConfig, PartitionError};
use broadphase_scenes::uniform;
use glam::Vec3;

fn kernel_error(boxes: &[Aabb]) -> InputError {
    AdaptiveGrid::default().build(boxes).unwrap_err()
}

#[test]
fn first_bad_box_is_named_whatever_the_path() {
    let jobs = JobSystem::new(2);
    let good = uniform(40_000, 4).boxes;
    let bads = [
        (39_999, Aabb::new(Vec3::new(0.0, f32::NAN, 0.0), Vec3::ONE)),
        (17, Aabb::new(Vec3::ONE, Vec3::ZERO)),
        (20_000, Aabb::new(Vec3::ZERO, Vec3::new(1.0, 1.0, f32::INFINITY))),
        (0, Aabb::new(Vec3::splat(f32::NEG_INFINITY), Vec3::ZERO)),
    ];
    for split_threshold in [100, 10_000, 100_000] {
        let config = GridTreeConfig { split_threshold, ..Default::default() };
        let mut tree = GridTree::with_config(config);
        for (index, bad) in bads {
            let mut boxes = good.clone();
            boxes[index] = bad;
            // A second bad box later must not be the one reported.
            boxes[39_998] = Aabb::new(Vec3::splat(f32::NAN), Vec3::ONE);
            let expected = kernel_error(&boxes);
            let mut pairs = vec![[0, 1]];
            let err = tree.find_pairs(&jobs, &boxes, &mut pairs).unwrap_err();
            // Compared as Debug strings: a NaN coordinate is carried in
            // the error, and NaN != NaN.
            let what = format!("threshold {split_threshold}, bad box {index}");
            assert_eq!(format!("{err:?}"), format!("{expected:?}"), "{what}");
            assert!(pairs.is_empty());

            let err = tree.try_find_pairs(&jobs, &boxes, &mut pairs).unwrap_err();
            let err = match err {
                PartitionError::Input(e) => e,
                other => panic!("{what}: {other:?}"),
            };
            assert_eq!(format!("{err:?}"), format!("{expected:?}"), "{what}");
            assert!(pairs.is_empty());
        }
        // Still usable after errors.
        let mut pairs = Vec::new();
        tree.find_pairs(&jobs, &good, &mut pairs).unwrap();
        let mut grid = AdaptiveGrid::default();
        grid.build(&good).unwrap();
        let mut expected = Vec::new();
        grid.pairs(&mut expected);
        pairs.sort_unstable();
        expected.sort_unstable();
        assert_eq!(pairs, expected);
    }
}

/// A pile that cannot be split, with a bad box at its end: the root stays
/// one region, and validation must still see every box.
#[test]
fn unsplittable_input_is_validated_too() {
    let jobs = JobSystem::new(2);
    let mut boxes = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 3_000];
    boxes[2_999].max.x = f32::NAN;
    let config = GridTreeConfig { split_threshold: 10, ..Default::default() };
    let err = GridTree::with_config(config).find_pairs(&jobs, &boxes, &mut Vec::new()).unwrap_err();
    // Debug strings: the error carries the NaN, and NaN != NaN.
    assert_eq!(format!("{err:?}"), format!("{:?}", kernel_error(&boxes)));
}
