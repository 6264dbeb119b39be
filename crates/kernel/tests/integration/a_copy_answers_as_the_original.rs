//! A copy of a kept build (`clone`, `clone_from`) answers as the original:
//! the same pairs, box, point and sphere queries and ray hits, a build
//! that validates against the same boxes, and the original's tuning, also
//! when copied into a grid that held another build under another tuning.
//! The copy is a build of its own: rebuilding the original leaves it as it
//! was.

use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig};
use broadphase_scenes::{SplitMix64, dense20k, sparse20k};
use broadphase_storage::{Ray, Sphere};
use glam::Vec3;

/// Every answer of `grid` over `boxes`' world, each list sorted.
fn answers(grid: &mut AdaptiveGrid, rng: &mut SplitMix64, side: f32) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let mut pairs = Vec::new();
    grid.pairs(&mut pairs);
    pairs.sort_unstable();
    out.push(pairs.into_iter().flatten().collect());
    for _ in 0..40 {
        let at =
            Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side));
        let mut hits = Vec::new();
        grid.query_aabb(&Aabb::new(at, at + Vec3::splat(side / 20.0)), &mut hits).unwrap();
        hits.sort_unstable();
        out.push(hits);
        let mut hits = Vec::new();
        grid.query_point(at, &mut hits).unwrap();
        hits.sort_unstable();
        out.push(hits);
        let mut hits = Vec::new();
        grid.query_sphere(&Sphere::new(at, side / 30.0), &mut hits).unwrap();
        hits.sort_unstable();
        out.push(hits);
        let ray = Ray::new(Vec3::new(-1.0, at.y, at.z), Vec3::new(1.0, 0.01, -0.02), f32::INFINITY);
        let mut hits = Vec::new();
        grid.ray_hits(&ray, &mut hits).unwrap();
        out.push(hits.into_iter().flat_map(|(id, t)| [id, t.to_bits()]).collect());
    }
    out
}

#[test]
fn a_copy_answers_as_the_original_and_outlives_its_rebuild() {
    for (scene, side) in [(sparse20k(), 900.0), (dense20k(), 150.0)] {
        let boxes = &scene.boxes;
        let mut original = AdaptiveGrid::default();
        original.build(boxes).unwrap();
        let want = answers(&mut original, &mut SplitMix64::new(7), side);

        let mut copy = original.clone();
        copy.validate(boxes).unwrap();
        assert_eq!((copy.len(), copy.shape()), (original.len(), original.shape()));
        assert_eq!(answers(&mut copy, &mut SplitMix64::new(7), side), want, "{}", scene.name);

        // Into a grid of another tuning that held another build.
        let other = GridConfig { leaf_capacity: 3, ..GridConfig::default() };
        let mut into = AdaptiveGrid::with_config(other);
        into.build(&boxes[..boxes.len() / 3]).unwrap();
        into.clone_from(&original);
        assert_eq!(into.config(), original.config());
        into.validate(boxes).unwrap();
        assert_eq!(answers(&mut into, &mut SplitMix64::new(7), side), want, "{}", scene.name);

        // The original goes on; the copies keep the build they copied.
        original.build(&boxes[..10]).unwrap();
        assert_eq!(answers(&mut copy, &mut SplitMix64::new(7), side), want, "{}", scene.name);
        original.clone_from(&into);
        original.validate(boxes).unwrap();
        assert_eq!(answers(&mut original, &mut SplitMix64::new(7), side), want, "{}", scene.name);
    }
}

#[test]
fn a_copy_of_a_grid_that_keeps_nothing_is_empty() {
    let boxes = sparse20k().boxes;
    let mut grid = AdaptiveGrid::default();
    let mut pairs = Vec::new();
    grid.find_pairs(&boxes, &mut pairs).unwrap();
    let mut copy = AdaptiveGrid::default();
    copy.build(&boxes).unwrap();
    copy.clone_from(&grid);
    assert!(copy.is_empty());
    let mut hits = Vec::new();
    copy.query_aabb(&Aabb::new(Vec3::ZERO, Vec3::splat(900.0)), &mut hits).unwrap();
    assert!(hits.is_empty());
    copy.validate(&[]).unwrap();
}
