//! All-hits rays with both ways of dropping the copies of a box that lies
//! in several leaves ([`RayDedup::Sort`], [`RayDedup::FastUnique`]),
//! against brute force, exactly (same hits, same `t`, same order): random
//! scenes with small and large boxes, and hostile ones — a ray along a
//! plane of cell borders, a ray through a pile of identical boxes, one
//! huge box in every cell, rows of far more than 16 distinct boxes (the
//! `FastUnique` set fills up and the sort takes over). That warm calls
//! allocate nothing with either is checked in the root's allocations binary.

use broadphase_kernel::{
    Aabb, AdaptiveGrid, GridConfig, PairKernel, RayDedup, brute_force_ray_hits,
};
use broadphase_scenes::{SplitMix64, cubes_under_one_box, pile, touching_cubes};
use broadphase_storage::Ray;
use glam::Vec3;
use proptest::prelude::*;
use std::collections::HashMap;

const STRATEGIES: [RayDedup; 2] = [RayDedup::Sort, RayDedup::FastUnique];

/// Every strategy with every kernel this CPU runs, with the default leaf
/// and with small leaves (many cells, so boxes lie in many leaves).
fn grids(boxes: &[Aabb]) -> Vec<AdaptiveGrid> {
    let mut grids = Vec::new();
    for ray_dedup in STRATEGIES {
        for kernel in PairKernel::available() {
            for leaf_capacity in [128, 4] {
                let config =
                    GridConfig { ray_dedup, kernel, leaf_capacity, ..GridConfig::default() };
                let mut grid = AdaptiveGrid::with_config(config);
                grid.build(boxes).expect("valid scene");
                grids.push(grid);
            }
        }
    }
    grids
}

/// `ray_hits` on every grid equals brute force; returns the hit count.
fn check(grids: &[AdaptiveGrid], boxes: &[Aabb], ray: &Ray) -> usize {
    let expected = brute_force_ray_hits(boxes, ray);
    let mut hits = Vec::new();
    for grid in grids {
        grid.ray_hits(ray, &mut hits).expect("valid ray");
        assert_eq!(hits, expected, "{:?}, {ray:?}", grid.config());
    }
    expected.len()
}

#[test]
fn rays_along_planes_of_cell_borders() {
    // The build's span is 0..16 on every axis: cells split it in halves,
    // quarters, ..., so y = 8 and z = 8 are cell borders at every level,
    // and a ray along them touches four rows of cubes, 64 boxes.
    let boxes = touching_cubes(16);
    let grids = grids(&boxes);
    for (y, z) in [(8.0, 8.0), (8.0, 4.0), (4.0, 12.0), (8.0, 8.5), (0.0, 16.0)] {
        for (origin, dir) in [
            (Vec3::new(-1.0, y, z), Vec3::X),
            (Vec3::new(17.0, y, z), -Vec3::X),
            (Vec3::new(y, -1.0, z), Vec3::Y),
            (Vec3::new(y, z, 3.0), Vec3::Z),
        ] {
            for max_t in [f32::INFINITY, 6.0, 0.0] {
                check(&grids, &boxes, &Ray::new(origin, dir, max_t));
            }
        }
    }
    let on_border = Ray::new(Vec3::new(-1.0, 8.0, 8.0), Vec3::X, f32::INFINITY);
    assert_eq!(check(&grids, &boxes, &on_border), 64);
    // Diagonals through corners that eight cubes share.
    check(&grids, &boxes, &Ray::new(Vec3::splat(-1.0), Vec3::ONE, f32::INFINITY));
    check(&grids, &boxes, &Ray::new(Vec3::new(-1.0, 8.0, -1.0), Vec3::new(1.0, 0.0, 1.0), 30.0));
}

#[test]
fn rays_through_a_pile_of_identical_boxes() {
    // 2,000 copies of one box: every ray that hits one hits all of them at
    // the same t, ties by index, far more than the set holds.
    let boxes = pile().boxes;
    let grids = grids(&boxes);
    let b = boxes[0];
    let center = (b.min + b.max) * 0.5;
    for ray in [
        Ray::new(center - Vec3::X * 10.0, Vec3::X, f32::INFINITY),
        Ray::new(center, Vec3::new(0.3, -1.0, 0.2), 0.5),
        Ray::new(b.min - Vec3::ONE, Vec3::ONE, f32::INFINITY),
        Ray::new(b.max + Vec3::Y, Vec3::X, f32::INFINITY),
    ] {
        check(&grids, &boxes, &ray);
    }
    assert_eq!(check(&grids, &boxes, &Ray::new(center, Vec3::Z, 0.0)), boxes.len());
}

#[test]
fn huge_box_in_every_cell() {
    for at in [0, 2_000, 4_096] {
        let boxes = cubes_under_one_box(at);
        let grids = grids(&boxes);
        let mut rng = SplitMix64::new(at as u64 + 1);
        for _ in 0..200 {
            let origin = Vec3::new(
                rng.range_f32(-5.0, 70.0),
                rng.range_f32(-5.0, 70.0),
                rng.range_f32(-5.0, 70.0),
            );
            let dir = Vec3::new(
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
            );
            let max_t = [f32::INFINITY, 20.0, 3.0][rng.below(3)];
            check(&grids, &boxes, &Ray::new(origin, dir, max_t));
        }
        // Along a row of cubes, inside the huge box: 17 distinct hits.
        let row = Ray::new(Vec3::new(-0.5, 0.5, 0.5), Vec3::X, f32::INFINITY);
        assert_eq!(check(&grids, &boxes, &row), 17);
    }
}

#[test]
fn fast_unique_tests_each_box_once_until_the_set_is_full() {
    // The huge box lies in every leaf the ray crosses; with `Sort` each
    // copy is tested, with `FastUnique` only the first (fewer than 16
    // distinct boxes met), and past 16 distinct boxes the copies of later
    // ones are tested again but still dropped.
    let boxes = cubes_under_one_box(0);
    let config = GridConfig { leaf_capacity: 4, ..GridConfig::default() };
    let short = Ray::new(Vec3::new(-0.5, 2.5, 2.5), Vec3::X, 60.0);
    let tests = |ray_dedup: RayDedup| {
        let mut grid = AdaptiveGrid::with_config(GridConfig { ray_dedup, ..config });
        grid.build(&boxes).unwrap();
        let mut calls: HashMap<u32, usize> = HashMap::new();
        let mut hits = Vec::new();
        grid.ray_hits_where(
            &short,
            |id| {
                *calls.entry(id).or_default() += 1;
                short.entry(&boxes[id as usize])
            },
            &mut hits,
        )
        .unwrap();
        assert_eq!(hits, brute_force_ray_hits(&boxes, &short), "{ray_dedup:?}");
        calls
    };
    let sorted = tests(RayDedup::Sort);
    let fast = tests(RayDedup::FastUnique);
    assert!(sorted[&0] > 4, "the huge box should lie in many leaves: {}", sorted[&0]);
    assert!(fast.len() < 16, "{} distinct boxes met", fast.len());
    assert!(fast.values().all(|&n| n == 1), "{fast:?}");
    assert_eq!(fast.keys().collect::<std::collections::BTreeSet<_>>(), sorted.keys().collect());
}

#[test]
fn rows_of_more_than_16_distinct_boxes() {
    // 200 boxes of width 0.75 every unit along x, each spanning a cell
    // border somewhere, plus 200 long thin boxes across the row.
    let mut boxes: Vec<Aabb> = (0..200)
        .map(|i| {
            Aabb::new(
                Vec3::new(i as f32 * 1.0 + 0.5, 0.0, 0.0),
                Vec3::new(i as f32 + 1.25, 1.0, 1.0),
            )
        })
        .collect();
    boxes.extend((0..200).map(|i| {
        Aabb::new(
            Vec3::new(i as f32 * 0.9, -0.5, 0.25),
            Vec3::new(i as f32 * 0.9 + 30.0, 1.5, 0.75),
        )
    }));
    let grids = grids(&boxes);
    let along = Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X, f32::INFINITY);
    assert_eq!(check(&grids, &boxes, &along), 400);
    check(&grids, &boxes, &Ray::new(Vec3::new(201.0, 0.5, 0.5), -Vec3::X, 100.0));
    check(
        &grids,
        &boxes,
        &Ray::new(Vec3::new(-1.0, 0.0, 0.0), Vec3::new(1.0, 0.004, 0.004), 250.0),
    );
}

/// Random boxes in a cube of side 40: mostly small, some large (spanning
/// many cells), some flat or points, some repeated.
fn random_scene(rng: &mut SplitMix64, count: usize) -> Vec<Aabb> {
    let mut boxes: Vec<Aabb> = (0..count)
        .map(|i| {
            let min = Vec3::new(
                rng.range_f32(0.0, 40.0),
                rng.range_f32(0.0, 40.0),
                rng.range_f32(0.0, 40.0),
            );
            let size = if i % 9 == 0 { 25.0 } else { 2.0 };
            let mut extent = Vec3::new(
                rng.range_f32(0.0, size),
                rng.range_f32(0.0, size),
                rng.range_f32(0.0, size),
            );
            match i % 13 {
                0 => extent = Vec3::ZERO,
                1 => extent.z = 0.0,
                _ => {}
            }
            Aabb::new(min, min + extent)
        })
        .collect();
    for k in 0..count / 10 {
        boxes.push(boxes[k * 3 % count]);
    }
    boxes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random scenes and rays: from inside boxes, from outside, aimed at
    /// corners, axis-aligned, short and endless.
    #[test]
    fn both_strategies_match_brute_force(seed in any::<u64>(), count in 1usize..400) {
        let mut rng = SplitMix64::new(seed);
        let boxes = random_scene(&mut rng, count);
        let grids = grids(&boxes);
        for _ in 0..24 {
            let origin = match rng.below(3) {
                0 => {
                    let b = boxes[rng.below(boxes.len())];
                    (b.min + b.max) * 0.5
                }
                1 => Vec3::new(-5.0, rng.range_f32(0.0, 40.0), rng.range_f32(0.0, 40.0)),
                _ => Vec3::new(rng.range_f32(0.0, 40.0), rng.range_f32(0.0, 40.0), rng.range_f32(0.0, 40.0)),
            };
            let target = boxes[rng.below(boxes.len())];
            let mut dir = match rng.below(3) {
                0 => target.min - origin,
                1 => target.max - origin,
                _ => Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0)),
            };
            if rng.below(4) == 0 {
                dir.y = 0.0;
                dir.z = 0.0;
            }
            let max_t = [f32::INFINITY, 1.0, 0.0, 0.3][rng.below(4)];
            let ray = Ray::new(origin, dir, max_t);
            let expected = brute_force_ray_hits(&boxes, &ray);
            let mut hits = Vec::new();
            for grid in &grids {
                grid.ray_hits(&ray, &mut hits).unwrap();
                prop_assert_eq!(&hits, &expected, "{:?}, {:?}", grid.config(), ray);
            }
        }
    }
}
