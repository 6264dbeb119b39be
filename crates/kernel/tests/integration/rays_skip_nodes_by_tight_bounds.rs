//! Rays enter a node of the grid only where they meet the tight box of
//! the boxes under it, computed by the first ray after a build. With
//! small leaves (many nodes, boxes in several leaves) on every kernel and
//! both ways of dropping copies, first and all hits are brute force's on
//! hostile scenes: rays along shared faces and through shared corners,
//! boxes of no size, origins inside boxes, a huge box over small ones,
//! coordinates near the ends of `f32`. A new build, a copy and a copy
//! back never answer from another build's bounds, and many threads may
//! cast the first ray of a build at once.

use broadphase_kernel::{
    Aabb, AdaptiveGrid, GridConfig, PairKernel, RayDedup, brute_force_ray_hits,
};
use broadphase_scenes::SplitMix64;
use broadphase_storage::Ray;
use glam::Vec3;
use proptest::prelude::*;

/// Every tuning that changes which nodes a ray walks through.
fn grids(boxes: &[Aabb]) -> Vec<AdaptiveGrid> {
    let mut grids = Vec::new();
    for kernel in PairKernel::available() {
        for ray_dedup in [RayDedup::Sort, RayDedup::FastUnique] {
            for leaf_capacity in [1, 4, 128] {
                let config =
                    GridConfig { kernel, ray_dedup, leaf_capacity, ..GridConfig::default() };
                let mut grid = AdaptiveGrid::with_config(config);
                grid.build(boxes).unwrap();
                grids.push(grid);
            }
        }
    }
    grids
}

fn check_ray(grid: &AdaptiveGrid, boxes: &[Aabb], ray: &Ray) {
    let want = brute_force_ray_hits(boxes, ray);
    let first = grid.cast_ray(ray).unwrap();
    assert_eq!(first, want.first().copied(), "first hit of {ray:?} with {:?}", grid.config());
    // Same `t` bits, not only equal values.
    if let (Some((_, got)), Some((_, wanted))) = (first, want.first()) {
        assert_eq!(got.to_bits(), wanted.to_bits());
    }
    let mut hits = Vec::new();
    grid.ray_hits(ray, &mut hits).unwrap();
    assert_eq!(hits, want, "all hits of {ray:?} with {:?}", grid.config());
}

fn check_rays(boxes: &[Aabb], rays: &[Ray]) {
    for grid in grids(boxes) {
        for ray in rays {
            check_ray(&grid, boxes, ray);
        }
        // The tight boxes the rays computed are this build's.
        grid.validate(boxes).unwrap();
    }
}

/// Unit cubes touching face to face in a `side`³ block with every third
/// row left out, so leaves hold cubes with gaps beside them.
fn lattice(side: usize) -> Vec<Aabb> {
    let mut boxes = Vec::new();
    for x in 0..side {
        for y in 0..side {
            for z in 0..side {
                if (x + 2 * y + z) % 3 != 0 {
                    let min = Vec3::new(x as f32, y as f32, z as f32);
                    boxes.push(Aabb::new(min, min + Vec3::ONE));
                }
            }
        }
    }
    boxes
}

#[test]
fn rays_along_shared_faces_and_through_shared_corners() {
    let boxes = lattice(8);
    let mut rays = Vec::new();
    for a in 0..=8 {
        for b in 0..=8 {
            let (a, b) = (a as f32, b as f32);
            // Along the planes and lines where faces and edges meet.
            rays.push(Ray::new(Vec3::new(-2.0, a, b), Vec3::X, f32::INFINITY));
            rays.push(Ray::new(Vec3::new(a, 10.0, b), -Vec3::Y, f32::INFINITY));
            rays.push(Ray::new(Vec3::new(a, b, -1.0), Vec3::Z, 4.0));
            rays.push(Ray::new(Vec3::new(a + 0.5, b, -1.0), Vec3::Z, f32::INFINITY));
            // Through lattice points, where eight cubes share a corner.
            rays.push(Ray::new(Vec3::new(a, b, 0.0) - Vec3::ONE, Vec3::ONE, f32::INFINITY));
            rays.push(Ray::new(Vec3::new(a, 9.0, b), Vec3::new(1.0, -1.0, 1.0), f32::INFINITY));
        }
    }
    check_rays(&boxes, &rays);
}

#[test]
fn boxes_of_no_size_and_rays_aimed_at_them() {
    let mut rng = SplitMix64::new(11);
    let points: Vec<Vec3> = (0..300)
        .map(|_| {
            Vec3::new(rng.range_f32(0.0, 50.0), rng.range_f32(0.0, 50.0), rng.range_f32(0.0, 50.0))
        })
        .collect();
    let mut boxes: Vec<Aabb> = points.iter().map(|&p| Aabb::new(p, p)).collect();
    // Flat boxes too: no size on one axis.
    boxes.extend(points.iter().take(100).map(|&p| Aabb::new(p, p + Vec3::new(1.0, 0.0, 1.0))));
    let mut rays = Vec::new();
    for (k, &p) in points.iter().enumerate().take(150) {
        let from = Vec3::new(-5.0, (k % 7) as f32 * 8.0, 25.0);
        rays.push(Ray::new(from, p - from, f32::INFINITY));
        rays.push(Ray::new(from, p - from, 1.0));
        rays.push(Ray::new(Vec3::new(p.x - 3.0, p.y, p.z), Vec3::X, f32::INFINITY));
        rays.push(Ray::new(p, Vec3::Y, 0.0));
    }
    check_rays(&boxes, &rays);
}

#[test]
fn origins_inside_boxes_and_a_huge_box_over_small_ones() {
    let mut rng = SplitMix64::new(3);
    let mut boxes: Vec<Aabb> = (0..500)
        .map(|_| {
            let min = Vec3::new(
                rng.range_f32(0.0, 80.0),
                rng.range_f32(0.0, 80.0),
                rng.range_f32(0.0, 80.0),
            );
            Aabb::new(min, min + Vec3::splat(rng.range_f32(0.0, 2.0)))
        })
        .collect();
    let small = boxes.len();
    boxes.push(Aabb::new(Vec3::splat(-1e30), Vec3::splat(1e30)));
    boxes.push(Aabb::new(Vec3::new(-1e30, 30.0, 30.0), Vec3::new(1e30, 31.0, 31.0)));
    let mut rays = Vec::new();
    for b in boxes[..200].iter().copied() {
        let inside = (b.min + b.max) * 0.5;
        let dir =
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0));
        rays.push(Ray::new(inside, dir, f32::INFINITY));
        rays.push(Ray::new(b.min, dir, 5.0));
        rays.push(Ray::new(Vec3::splat(2e30), -Vec3::ONE, f32::INFINITY));
    }
    check_rays(&boxes, &rays);
    // Without the huge box, rays from far outside the scene.
    boxes.truncate(small);
    check_rays(&boxes, &rays);
}

#[test]
fn coordinates_near_the_ends_of_f32() {
    let mut boxes = Vec::new();
    for (k, at) in
        [-3.0e38f32, -1.0e30, -1.0, 0.0, 1.0e-30, 1.0, 1.0e30, 3.0e38].into_iter().enumerate()
    {
        for j in 0..20 {
            let min = Vec3::new(at, j as f32 * 3.0, k as f32);
            boxes.push(Aabb::new(
                min,
                Vec3::new(
                    at.abs().max(1.0) * if at < 0.0 { -0.999 } else { 1.0 },
                    min.y + 1.0,
                    min.z + 0.5,
                ),
            ));
        }
    }
    boxes.push(Aabb::new(Vec3::splat(-f32::MAX), Vec3::new(-f32::MAX, 1.0, 1.0)));
    boxes.push(Aabb::new(Vec3::new(f32::MAX, 0.0, 0.0), Vec3::splat(f32::MAX)));
    let mut rays = Vec::new();
    for j in 0..20 {
        let y = j as f32 * 3.0 + 0.5;
        for from in [-f32::MAX, -1.0e35, 0.0, 1.0e35, f32::MAX] {
            for z in [0.25f32, 3.25, 7.25] {
                rays.push(Ray::new(Vec3::new(from, y, z), Vec3::X, f32::INFINITY));
                rays.push(Ray::new(Vec3::new(from, y, z), -Vec3::X, f32::INFINITY));
                rays.push(Ray::new(Vec3::new(from, y, z), Vec3::new(1.0, 1e-30, -1e-20), 1.0e36));
            }
        }
    }
    check_rays(&boxes, &rays);
}

/// The same count and layout, moved: bounds left from the first build
/// would send the rays where the boxes were.
#[test]
fn a_new_build_a_copy_and_a_copy_back_use_their_own_bounds() {
    let before = lattice(6);
    let after: Vec<Aabb> =
        before.iter().map(|b| Aabb::new(b.min + Vec3::Y * 2.5, b.max + Vec3::Y * 2.5)).collect();
    let rays: Vec<Ray> = (0..60)
        .map(|k| {
            Ray::new(
                Vec3::new(-1.0, k as f32 * 0.15, 2.5),
                Vec3::new(1.0, 0.01, 0.003),
                f32::INFINITY,
            )
        })
        .collect();
    let config = GridConfig { leaf_capacity: 2, ..GridConfig::default() };
    let mut grid = AdaptiveGrid::with_config(config);
    grid.build(&before).unwrap();
    rays.iter().for_each(|r| check_ray(&grid, &before, r));
    let with_bounds = grid.clone();
    grid.build(&after).unwrap();
    rays.iter().for_each(|r| check_ray(&grid, &after, r));
    rays.iter().for_each(|r| check_ray(&with_bounds, &before, r));

    // A copy of a build no ray has walked yet, over a grid with bounds.
    let mut fresh = AdaptiveGrid::with_config(config);
    fresh.build(&before).unwrap();
    grid.clone_from(&fresh);
    rays.iter().for_each(|r| check_ray(&grid, &before, r));
    // And back: bounds copied with the build.
    let mut back = AdaptiveGrid::with_config(config);
    back.build(&after).unwrap();
    rays.iter().for_each(|r| check_ray(&back, &after, r));
    grid.clone_from(&back);
    grid.validate(&after).unwrap();
    rays.iter().for_each(|r| check_ray(&grid, &after, r));
    // Pairs in between keep nothing; the next build computes afresh.
    let mut pairs = Vec::new();
    grid.find_pairs(&before, &mut pairs).unwrap();
    assert_eq!(grid.cast_ray(&rays[0]).unwrap(), None);
    grid.build(&before).unwrap();
    rays.iter().for_each(|r| check_ray(&grid, &before, r));
}

#[test]
fn many_threads_cast_the_first_rays_of_a_build_at_once() {
    let boxes = lattice(10);
    let rays: Vec<Ray> = (0..64)
        .map(|k| {
            Ray::new(
                Vec3::new(-1.0, (k % 8) as f32 + 0.3, (k / 8) as f32 + 0.6),
                Vec3::new(1.0, 0.05, 0.02),
                f32::INFINITY,
            )
        })
        .collect();
    for _ in 0..4 {
        let mut grid =
            AdaptiveGrid::with_config(GridConfig { leaf_capacity: 4, ..GridConfig::default() });
        grid.build(&boxes).unwrap();
        std::thread::scope(|scope| {
            for part in rays.chunks(8) {
                let grid = &grid;
                let boxes = &boxes;
                scope.spawn(move || part.iter().for_each(|r| check_ray(grid, boxes, r)));
            }
        });
    }
}

/// `count` boxes with corners in `[0, side)³` and sizes up to `size`.
fn random_boxes(seed: u64, count: usize, side: f32, size: f32) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    let mut upto = |limit: f32| {
        Vec3::new(rng.range_f32(0.0, limit), rng.range_f32(0.0, limit), rng.range_f32(0.0, limit))
    };
    (0..count)
        .map(|_| {
            let min = upto(side);
            Aabb::new(min, min + upto(size))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random scenes of small or coincident boxes, small leaves, rays from
    /// anywhere or aimed at a box's corner.
    #[test]
    fn random_rays_with_small_leaves_match_brute_force(
        seed in any::<u64>(),
        count in 1usize..600,
        side in prop_oneof![Just(0.01f32), Just(1.0f32), 5.0f32..500.0],
        size in prop_oneof![Just(0.0f32), 0.0f32..10.0],
        leaf_capacity in prop_oneof![Just(1usize), 2usize..40],
        origin in prop::array::uniform3(-50.0f32..550.0),
        dir in prop::array::uniform3(prop_oneof![Just(0.0f32), -1.0f32..1.0]),
        aim_at_corner in any::<bool>(),
        max_t in prop_oneof![Just(0.0f32), Just(f32::INFINITY), 0.0f32..600.0],
    ) {
        let boxes = random_boxes(seed, count, side, size);
        let origin = Vec3::from(origin);
        let dir = if aim_at_corner {
            boxes[seed as usize % count].max - origin
        } else {
            Vec3::from(dir)
        };
        let ray = Ray::new(origin, dir, max_t);
        for kernel in PairKernel::available() {
            let config = GridConfig { leaf_capacity, kernel, ..GridConfig::default() };
            let mut grid = AdaptiveGrid::with_config(config);
            grid.build(&boxes).unwrap();
            check_ray(&grid, &boxes, &ray);
        }
    }
}
