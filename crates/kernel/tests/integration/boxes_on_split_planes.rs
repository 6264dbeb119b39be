//! Boxes whose faces lie exactly on the grid's split planes.
//!
//! A pair is reported only by the leaf whose half-open region holds the min
//! corner of the two boxes' intersection. When that corner lies exactly on a
//! split plane, an off-by-one in the region test (`<=` instead of `<` on the
//! max side, or the reverse on the min side) reports the pair twice or not
//! at all. Random scenes almost never put a coordinate exactly on a plane;
//! these do: a lattice over `[0, 2^k]` makes every plane (extent / 2 or / 4,
//! recursively) an integer, and every box face sits on integers.

use broadphase_kernel::{
    Aabb, AdaptiveGrid, GridConfig, PairKernel, brute_force_pairs, brute_force_query,
};
use glam::Vec3;

/// `side³` unit boxes on the integer lattice, each touching its neighbours,
/// plus zero-size boxes at every `step`-th lattice point.
fn lattice(side: u32, step: u32) -> Vec<Aabb> {
    let mut boxes = Vec::new();
    for z in 0..side {
        for y in 0..side {
            for x in 0..side {
                let min = Vec3::new(x as f32, y as f32, z as f32);
                boxes.push(Aabb::new(min, min + Vec3::ONE));
                if x % step == 0 && y % step == 0 && z % step == 0 {
                    boxes.push(Aabb::new(min, min));
                }
            }
        }
    }
    boxes
}

#[test]
fn lattice_pairs_are_reported_exactly_once() {
    let boxes = lattice(16, 4);
    let mut expected = Vec::new();
    brute_force_pairs(&boxes, &mut expected).unwrap();
    for leaf_capacity in [1, 2, 8, 64] {
        for kernel in PairKernel::available() {
            let config = GridConfig { leaf_capacity, kernel, ..GridConfig::default() };
            let mut grid = AdaptiveGrid::with_config(config);
            let mut pairs = Vec::new();
            grid.find_pairs(&boxes, &mut pairs).unwrap();
            assert!(grid.shape().1 > 1, "the lattice must be split for the test to mean anything");
            pairs.sort_unstable();
            assert_eq!(pairs, expected, "find_pairs, {config:?}");

            grid.build(&boxes).unwrap();
            grid.validate(&boxes).unwrap();
            assert!(grid.shape().1 > 1, "the lattice must be split for the test to mean anything");
            grid.pairs(&mut pairs);
            pairs.sort_unstable();
            assert_eq!(pairs, expected, "build + pairs, {config:?}");
        }
    }
}

#[test]
fn queries_on_split_planes_report_each_box_once() {
    let boxes = lattice(16, 4);
    let mut grid =
        AdaptiveGrid::with_config(GridConfig { leaf_capacity: 4, ..GridConfig::default() });
    grid.build(&boxes).unwrap();
    let (mut hits, mut expected) = (Vec::new(), Vec::new());
    for corner in [0.0f32, 4.0, 8.0, 12.0, 16.0] {
        for size in [0.0f32, 1.0, 4.0] {
            let query = Aabb::new(Vec3::splat(corner), Vec3::splat(corner + size));
            grid.query_aabb(&query, &mut hits).unwrap();
            brute_force_query(&boxes, &query, &mut expected).unwrap();
            hits.sort_unstable();
            assert_eq!(hits, expected, "query {query:?}");
        }
    }
}
