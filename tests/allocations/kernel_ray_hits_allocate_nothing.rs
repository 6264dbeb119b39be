//! Regression: warm all-hits rays allocate nothing, with either way of
//! dropping the copies of a box that lies in several leaves
//! (`RayDedup::Sort`, `RayDedup::FastUnique`), on every kernel and with
//! small leaves (boxes in many leaves): a lattice of touching cubes, a pile
//! of identical boxes, and small cubes under one huge box. Warm queries
//! with regions of the caller's own (`query_with`: capsules, which skip
//! cells, and frustums) allocate nothing either.

use broadphase::glam::Mat4;
use broadphase::glam::Vec3;
use broadphase::grid::{GridConfig, PairKernel, RayDedup};
use broadphase::query::{Capsule, Frustum, Ray};
use broadphase::{Aabb, AdaptiveGrid};
use broadphase_scenes::{cubes_under_one_box, pile, touching_cubes};
use broadphase_testkit::allocations_during;

pub(crate) fn warm_all_hits_rays_allocate_nothing() {
    let scenes = [touching_cubes(16), pile().boxes, cubes_under_one_box(7)];
    for boxes in &scenes {
        for ray_dedup in [RayDedup::Sort, RayDedup::FastUnique] {
            for kernel in PairKernel::available() {
                for leaf_capacity in [128, 4] {
                    let config =
                        GridConfig { ray_dedup, kernel, leaf_capacity, ..GridConfig::default() };
                    let mut grid = AdaptiveGrid::with_config(config);
                    grid.build(boxes).expect("valid scene");
                    check_warm_rays(&grid, boxes);
                    check_warm_regions(&grid, boxes);
                }
            }
        }
    }
}

fn check_warm_rays(grid: &AdaptiveGrid, boxes: &[Aabb]) {
    let rays: Vec<Ray> = (0..50)
        .map(|i| {
            let t = i as f32 * 0.37;
            Ray::new(
                Vec3::new(-1.0, 8.0 + t.sin(), 8.0 + t.cos()),
                Vec3::new(1.0, t.sin() * 0.1, 0.02),
                f32::INFINITY,
            )
        })
        .chain([Ray::new(boxes[0].min - Vec3::ONE, Vec3::ONE, f32::INFINITY)])
        .collect();
    let mut hits = Vec::new();
    let mut frame = |count: bool| {
        allocations_during(count, || {
            rays.iter().fold(0, |n, ray| {
                grid.ray_hits(ray, &mut hits).unwrap();
                n + hits.len()
            })
        })
    };
    let (found, _) = frame(false);
    assert!(found > 50, "{:?}: {found} hits", grid.config());
    assert_eq!(frame(true), (found, 0), "{:?}", grid.config());
}

/// Capsules through the scene's middle, and a frustum looking at it.
fn check_warm_regions(grid: &AdaptiveGrid, boxes: &[Aabb]) {
    let (low, high) =
        boxes.iter().fold((Vec3::MAX, Vec3::MIN), |(lo, hi), b| (lo.min(b.min), hi.max(b.max)));
    let (middle, size) = ((low + high) * 0.5, (high - low).max_element().max(1.0));
    let eye = middle - Vec3::new(size, 0.1 * size, 0.0);
    let view = Mat4::look_at_rh(eye, middle, Vec3::Z);
    let projection = Mat4::perspective_rh(0.8, 1.0, 0.01 * size, 4.0 * size);
    let frustum = Frustum::from_view_projection(projection * view).expect("a finite frustum");
    let capsules: Vec<Capsule> = (0..20)
        .map(|i| {
            let wobble =
                Vec3::new(0.0, (i as f32 * 0.37).sin(), (i as f32 * 0.37).cos()) * 0.1 * size;
            Capsule::new(low - wobble, high + wobble, 0.05 * size)
        })
        .collect();
    let mut hits = Vec::new();
    let mut frame = |count: bool| {
        allocations_during(count, || {
            let found = capsules.iter().fold(0, |n, capsule| {
                grid.query_with(capsule, &mut hits).unwrap();
                n + hits.len()
            });
            grid.query_with(&frustum, &mut hits).unwrap();
            found + hits.len()
        })
    };
    let (found, _) = frame(false);
    assert!(found > 20, "{:?}: {found} boxes met", grid.config());
    assert_eq!(frame(true), (found, 0), "{:?}", grid.config());
}
