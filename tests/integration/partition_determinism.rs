//! Same output from 1, 2, 4 and 8 threads: the grid tree's pairs, in
//! order, hash the same whatever the thread count, frame after frame, for
//! several thresholds.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use broadphase::glam::Vec3;
use broadphase::{Aabb, GridTree, JobSystem, tree::GridTreeConfig};
use broadphase_scenes::{cluster88k, clusters16_40k, dense20k, pile, uniform};
use broadphase_testkit::within;

/// Hash of the pairs in output order (not sorted: the order is part of
/// the contract), and their count.
fn fingerprint(pairs: &[[u32; 2]]) -> (u64, usize) {
    let mut hasher = DefaultHasher::new();
    pairs.hash(&mut hasher);
    (hasher.finish(), pairs.len())
}

fn scenes() -> Vec<(&'static str, Vec<Aabb>)> {
    let mut huge = uniform(8_000, 21).boxes;
    huge.push(Aabb::new(Vec3::splat(-1e9), Vec3::splat(1e9)));
    // A cluster in one root cell holding most boxes: split again in
    // parallel passes.
    let cluster = cluster88k().boxes;
    vec![
        ("cluster beside a sparse world", cluster),
        ("clusters16_40k", clusters16_40k().boxes),
        ("dense20k", dense20k().boxes),
        ("pile", pile().boxes),
        ("uniform 8k + huge box", huge),
    ]
}

#[test]
fn output_hash_is_the_same_for_1_2_4_and_8_threads() {
    within(120, || {
        let systems: Vec<JobSystem> = [1, 2, 4, 8].into_iter().map(JobSystem::new).collect();
        for (name, boxes) in scenes() {
            for split_threshold in [64, 2_000] {
                let config = GridTreeConfig { split_threshold, ..Default::default() };
                let mut reference = None;
                for jobs in &systems {
                    let mut tree = GridTree::with_config(config);
                    let mut pairs = Vec::new();
                    for frame in 0..3 {
                        tree.find_pairs(jobs, &boxes, &mut pairs).unwrap();
                        let print = fingerprint(&pairs);
                        let what = format!(
                            "{name}, {config:?}, {} threads, frame {frame}",
                            jobs.threads()
                        );
                        match reference {
                            None => reference = Some((print, what)),
                            Some((expected, ref first)) => {
                                assert_eq!(print, expected, "{what} differs from {first}")
                            }
                        }
                    }
                }
            }
        }
    });
}

/// Below the split threshold the tree runs the kernel on the calling
/// thread: its output is the kernel's, in the kernel's order.
#[test]
fn small_inputs_give_the_kernels_exact_output() {
    within(60, || {
        let boxes = uniform(4_000, 8).boxes;
        assert!(boxes.len() <= GridTreeConfig::default().split_threshold);
        let mut expected = Vec::new();
        broadphase::AdaptiveGrid::default().find_pairs(&boxes, &mut expected).unwrap();
        for threads in [1, 2, 4, 8] {
            let mut pairs = Vec::new();
            GridTree::default().find_pairs(&JobSystem::new(threads), &boxes, &mut pairs).unwrap();
            assert_eq!(pairs, expected, "{threads} threads");
        }
    });
}
