//! Regression: boxes near the ends of the `f32` range beside an ordinary
//! scene. Bounds taken from the data then span ~6e38 (an overflow to
//! infinity in a naive extent or cell size computation); no box may be
//! dropped, no pair lost, and nothing may panic.

use crate::support;

use broadphase_kernel::{
    Aabb, AdaptiveGrid, GridConfig, PairKernel, SortAndSweep, brute_force_pairs, brute_force_query,
};
use broadphase_scenes::{sparse20k, uniform};
use glam::Vec3;

/// Two far boxes, each touched by a second far box, plus a box spanning all.
fn far_boxes() -> Vec<Aabb> {
    vec![
        Aabb::new(Vec3::splat(3.0e38), Vec3::splat(3.0e38 + 1e32)),
        Aabb::new(Vec3::splat(-3.0e38 - 1e32), Vec3::splat(-3.0e38)),
        Aabb::new(Vec3::splat(3.0e38 + 1e32), Vec3::splat(f32::MAX)),
        Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(-3.0e38 - 1e32)),
        Aabb::new(Vec3::new(-3.0e38, 0.0, 0.0), Vec3::new(3.0e38, 10.0, 10.0)),
    ]
}

/// A small ordinary scene with far boxes first, last and in between: exact
/// pairs and queries against brute force, tree invariants hold.
#[test]
fn far_boxes_beside_a_small_scene_are_exact() {
    let ordinary = uniform(2_000, 77).boxes;
    let far = far_boxes();
    let mut arrangements = Vec::new();
    arrangements.push([far.clone(), ordinary.clone()].concat());
    arrangements.push([ordinary.clone(), far.clone()].concat());
    let mut mixed = ordinary.clone();
    for (i, b) in far.iter().enumerate() {
        mixed.insert(i * 397, *b);
    }
    arrangements.push(mixed);
    for boxes in &arrangements {
        let mut expected = Vec::new();
        brute_force_pairs(boxes, &mut expected).unwrap();
        for kernel in PairKernel::available() {
            for leaf_capacity in [1, 16, 64] {
                let config = GridConfig { kernel, leaf_capacity, ..GridConfig::default() };
                let mut grid = AdaptiveGrid::with_config(config);
                let got = support::sorted_pairs(&mut grid, boxes);
                grid.validate(boxes).unwrap_or_else(|e| panic!("{config:?}: {e}"));
                assert_eq!(got, expected, "{config:?}");
                for q in far.iter().chain(&ordinary[..20]) {
                    let (mut hits, mut want) = (Vec::new(), Vec::new());
                    grid.query_aabb(q, &mut hits).unwrap();
                    hits.sort_unstable();
                    brute_force_query(boxes, q, &mut want).unwrap();
                    assert_eq!(hits, want, "{config:?}: query {q:?}");
                }
            }
        }
    }
}

/// The two single far boxes the regression is named after, at ±3.0e38,
/// beside sparse20k: exact against sort-and-sweep.
#[test]
fn far_boxes_beside_sparse20k_are_exact() {
    let mut boxes = sparse20k().boxes;
    boxes.push(Aabb::new(Vec3::splat(3.0e38), Vec3::splat(3.0e38)));
    boxes.push(Aabb::new(Vec3::splat(-3.0e38), Vec3::splat(-3.0e38 + 1e31)));
    let mut expected = Vec::new();
    SortAndSweep::default().find_pairs(&boxes, &mut expected).unwrap();
    expected.sort_unstable();
    for kernel in PairKernel::available() {
        let mut grid = AdaptiveGrid::with_config(GridConfig { kernel, ..GridConfig::default() });
        assert_eq!(support::sorted_pairs(&mut grid, &boxes), expected, "{kernel:?}");
    }
}
