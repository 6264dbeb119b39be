//! Ray, point and sphere queries on the kept grid against brute force:
//! every box tested with the same exact rule ([`Ray::entry`],
//! [`Sphere::overlaps`], point-in-box), on random and hostile scenes and
//! queries: rays starting inside boxes, grazing faces and edges, with zero
//! direction components or no direction at all, `max_t` of 0 and `+inf`,
//! boxes at ±1e30, outliers that clamp to the grid's border, piles of
//! identical boxes.

use broadphase_kernel::{Aabb, AdaptiveGrid, brute_force_ray_hits};
use broadphase_scenes::SplitMix64;
use broadphase_storage::{QueryError, QueryPart, Ray, Sphere};
use glam::Vec3;
use proptest::prelude::*;

fn all_hits(boxes: &[Aabb], ray: &Ray) -> Vec<(u32, f32)> {
    brute_force_ray_hits(boxes, ray)
}

/// The first hit by brute force: smallest entry, ties to the smaller index.
fn first_hit(boxes: &[Aabb], ray: &Ray) -> Option<(u32, f32)> {
    all_hits(boxes, ray).first().copied()
}

fn check_ray(grid: &AdaptiveGrid, boxes: &[Aabb], ray: &Ray) {
    assert_eq!(grid.cast_ray(ray).unwrap(), first_hit(boxes, ray), "first hit of {ray:?}");
    let mut hits = Vec::new();
    grid.ray_hits(ray, &mut hits).unwrap();
    assert_eq!(hits, all_hits(boxes, ray), "all hits of {ray:?}");
}

fn check_point(grid: &AdaptiveGrid, boxes: &[Aabb], point: Vec3) {
    let mut hits = Vec::new();
    grid.query_point(point, &mut hits).unwrap();
    hits.sort_unstable();
    let expected: Vec<u32> = (0..boxes.len() as u32)
        .filter(|&i| boxes[i as usize].overlaps(&Aabb::new(point, point)))
        .collect();
    assert_eq!(hits, expected, "point {point:?}");
}

fn check_sphere(grid: &AdaptiveGrid, boxes: &[Aabb], sphere: &Sphere) {
    let mut hits = Vec::new();
    grid.query_sphere(sphere, &mut hits).unwrap();
    hits.sort_unstable();
    let expected: Vec<u32> =
        (0..boxes.len() as u32).filter(|&i| sphere.overlaps(&boxes[i as usize])).collect();
    assert_eq!(hits, expected, "sphere {sphere:?}");
}

/// Random boxes in a cube of side `side`, sizes up to `size`; a few
/// flat, a few degenerate points, a few duplicated.
pub(crate) fn scene(seed: u64, count: usize, side: f32, size: f32) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    let mut boxes: Vec<Aabb> = (0..count)
        .map(|i| {
            let min = Vec3::new(
                rng.range_f32(0.0, side),
                rng.range_f32(0.0, side),
                rng.range_f32(0.0, side),
            );
            let mut extent = Vec3::new(
                rng.range_f32(0.0, size),
                rng.range_f32(0.0, size),
                rng.range_f32(0.0, size),
            );
            match i % 17 {
                0 => extent = Vec3::ZERO,
                1 => extent.y = 0.0,
                _ => {}
            }
            Aabb::new(min, min + extent)
        })
        .collect();
    for k in 0..count / 20 {
        boxes.push(boxes[k * 7 % count]);
    }
    boxes
}

/// A ray aimed from `from` at a random box corner, face point or edge, or
/// in a random direction, with some components zeroed.
fn aimed_ray(rng: &mut SplitMix64, boxes: &[Aabb], from: Vec3) -> Ray {
    let target = boxes[rng.below(boxes.len())];
    let aim = match rng.below(4) {
        0 => target.min,
        1 => target.max,
        2 => Vec3::new(target.min.x, target.max.y, (target.min.z + target.max.z) * 0.5),
        _ => {
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0))
                + from
        }
    };
    let mut dir = aim - from;
    match rng.below(6) {
        0 => dir.x = 0.0,
        1 => {
            dir.y = 0.0;
            dir.z = 0.0;
        }
        2 => dir *= 1e-3,
        _ => {}
    }
    let max_t = match rng.below(5) {
        0 => f32::INFINITY,
        1 => 0.0,
        2 => 1.0,
        _ => rng.range_f32(0.0, 3.0),
    };
    Ray::new(from, dir, max_t)
}

#[test]
fn rays_points_and_spheres_on_random_scenes() {
    let mut rng = SplitMix64::new(77);
    for (seed, count, side, size) in
        [(1, 300, 50.0, 4.0), (2, 2_000, 100.0, 3.0), (3, 5_000, 40.0, 1.0), (4, 1_000, 10.0, 6.0)]
    {
        let boxes = scene(seed, count, side, size);
        let mut grid = AdaptiveGrid::default();
        grid.build(&boxes).unwrap();
        for _ in 0..300 {
            let from = match rng.below(3) {
                // From inside a box.
                0 => {
                    let b = boxes[rng.below(boxes.len())];
                    (b.min + b.max) * 0.5
                }
                // From outside the scene.
                1 => Vec3::new(-20.0, rng.range_f32(0.0, side), rng.range_f32(0.0, side)),
                _ => Vec3::new(
                    rng.range_f32(0.0, side),
                    rng.range_f32(0.0, side),
                    rng.range_f32(0.0, side),
                ),
            };
            let ray = aimed_ray(&mut rng, &boxes, from);
            check_ray(&grid, &boxes, &ray);
            check_point(&grid, &boxes, from);
            let corner = boxes[rng.below(boxes.len())].max;
            check_point(&grid, &boxes, corner);
            check_sphere(&grid, &boxes, &Sphere::new(from, rng.range_f32(0.0, size * 2.0)));
        }
    }
}

#[test]
fn rays_grazing_faces_and_edges_of_a_lattice() {
    // Unit cubes touching face to face: rays along the shared faces and
    // edges hit both neighbours, at the same t.
    let mut boxes = Vec::new();
    for x in 0..8 {
        for y in 0..8 {
            for z in 0..8 {
                let min = Vec3::new(x as f32, y as f32, z as f32);
                boxes.push(Aabb::new(min, min + Vec3::ONE));
            }
        }
    }
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    for y in 0..=8 {
        for z in [0.0, 0.5, 3.0, 8.0, 8.5] {
            let ray = Ray::new(Vec3::new(-1.0, y as f32, z), Vec3::X, f32::INFINITY);
            check_ray(&grid, &boxes, &ray);
            let back = Ray::new(Vec3::new(9.0, y as f32, z), -Vec3::X, 5.0);
            check_ray(&grid, &boxes, &back);
        }
    }
    // The main diagonal passes through corners shared by eight cubes.
    check_ray(&grid, &boxes, &Ray::new(Vec3::splat(-1.0), Vec3::ONE, f32::INFINITY));
    check_ray(&grid, &boxes, &Ray::new(Vec3::splat(4.0), Vec3::ZERO, 0.0));
    check_point(&grid, &boxes, Vec3::splat(4.0));
    check_sphere(&grid, &boxes, &Sphere::new(Vec3::splat(4.0), 0.0));
}

#[test]
fn ties_go_to_the_smaller_index() {
    // 64,000 unit cubes, in many cells. A ray from a corner that eight
    // cubes share, on cell borders, hits all eight at t = 0; one along an
    // edge four cubes share enters them at the same t. The first hit is
    // the smallest index. (Boxes that a ray enters at the same point all
    // lie in the leaf of that point; those that only round to the same
    // `f32` t from points an ulp apart may not, which the walk allows
    // for by skipping a cell only past the next `f32`.)
    let side = 40;
    let mut boxes = Vec::new();
    for x in 0..side {
        for y in 0..side {
            for z in 0..side {
                let min = Vec3::new(x as f32, y as f32, z as f32);
                boxes.push(Aabb::new(min, min + Vec3::ONE));
            }
        }
    }
    // Indices rising with the coordinates, then falling: the walk's order
    // of tied cells cannot happen to match the indices both ways.
    for _ in 0..2 {
        let mut grid = AdaptiveGrid::default();
        grid.build(&boxes).unwrap();
        for corner in [10.0f32, 20.0, 30.0] {
            for dir in [Vec3::ONE, -Vec3::ONE, Vec3::new(1.0, -1.0, 0.5), Vec3::ZERO] {
                check_ray(&grid, &boxes, &Ray::new(Vec3::splat(corner), dir, 3.0));
            }
            let edge = Ray::new(Vec3::new(-2.0, corner, corner), Vec3::X, f32::INFINITY);
            check_ray(&grid, &boxes, &edge);
        }
        boxes.reverse();
    }
}

#[test]
fn far_away_boxes_and_outliers_clamped_to_the_border() {
    let mut boxes = scene(9, 1_000, 100.0, 2.0);
    boxes.push(Aabb::new(Vec3::splat(1.0e30), Vec3::splat(2.0e30)));
    boxes.push(Aabb::new(Vec3::splat(-2.0e30), Vec3::splat(-1.0e30)));
    boxes.push(Aabb::new(Vec3::new(9_000.0, 50.0, 50.0), Vec3::new(9_001.0, 51.0, 51.0)));
    boxes.push(Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(-3.0e38)));
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let rays = [
        Ray::new(Vec3::new(0.0, 50.5, 50.5), Vec3::X, f32::INFINITY),
        Ray::new(Vec3::new(200.0, 50.5, 50.5), Vec3::X, f32::INFINITY),
        Ray::new(Vec3::ZERO, Vec3::ONE, f32::INFINITY),
        Ray::new(Vec3::ZERO, -Vec3::ONE, f32::INFINITY),
        Ray::new(Vec3::splat(1.5e30), Vec3::ZERO, 0.0),
        Ray::new(Vec3::splat(-3.2e38), Vec3::ONE, 1.0e30),
    ];
    for ray in &rays {
        check_ray(&grid, &boxes, ray);
    }
    check_point(&grid, &boxes, Vec3::splat(1.5e30));
    check_sphere(&grid, &boxes, &Sphere::new(Vec3::splat(1.5e30), 1.0e30));
    check_sphere(&grid, &boxes, &Sphere::new(Vec3::ZERO, 1.0e31));
}

/// The grid quantizes `x - origin` in `f32`: past `f32::MAX` that offset is
/// infinite and clamps to the last coordinate. Rays and spheres there must
/// see the boxes the quantizer put at the border, and only those that
/// reach them.
#[test]
fn rays_and_spheres_where_the_quantizers_offset_overflows() {
    let mut boxes = scene(3, 300, 100.0, 2.0);
    let max = f32::MAX;
    boxes.push(Aabb::new(Vec3::new(-max, -max, -30.0), Vec3::new(max, max, 30.0)));
    boxes.push(Aabb::new(Vec3::new(3.0e38, 3.0e38, -25.0), Vec3::new(max, max, 25.0)));
    boxes.push(Aabb::new(Vec3::splat(-1.0e37), Vec3::new(10.0, 10.0, 10.0)));
    boxes.push(Aabb::new(Vec3::splat(-max), Vec3::splat(-3.0e38)));
    // Its high corner is quantized to the last coordinate (its offset from
    // -MAX overflows) although it ends far below the spheres placed there.
    boxes.push(Aabb::new(Vec3::splat(-1.0e38), Vec3::splat(1.0e32)));
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let mut rng = SplitMix64::new(17);
    for _ in 0..300 {
        let z = rng.range_f32(-40.0, 40.0);
        let near_max = max * rng.range_f32(0.9, 1.0);
        for origin in [
            Vec3::new(max, max, z),
            Vec3::new(near_max, max, z),
            Vec3::new(-1.5e7, 28.75, near_max),
            Vec3::new(-near_max, -max, z),
        ] {
            for radius in [0.0, 1.6875, 30.0, 1.0e37] {
                check_sphere(&grid, &boxes, &Sphere::new(origin, radius));
            }
            for dir in [Vec3::new(0.0, 0.0, 22.75), Vec3::new(0.0, 0.0, -3.0), -origin, Vec3::ZERO]
            {
                for max_t in [0.0, 0.5, 1.0, f32::INFINITY] {
                    check_ray(&grid, &boxes, &Ray::new(origin, dir, max_t));
                }
            }
        }
    }
}

#[test]
fn rays_through_the_last_step_of_a_cell() {
    // A world 65,536 wide is one unit per quantized step, and every cell
    // ends on a multiple of 4^k: 16,384 is a cell border at every depth.
    // Small boxes in the last step before it (x in [16383.6, 16383.9])
    // lie in cells that end there, and those in the first step after it
    // in cells that start there; rays along y through those steps must
    // still find them, so a cell's world box must cover its whole first
    // and last steps (and past them, for rounding).
    let mut rng = SplitMix64::new(12);
    let mut boxes: Vec<Aabb> = (0..4_000)
        .map(|_| {
            let min = Vec3::new(
                rng.range_f32(0.0, 65_536.0),
                rng.range_f32(0.0, 65_536.0),
                rng.range_f32(0.0, 65_536.0),
            );
            Aabb::new(min, min + Vec3::splat(0.1))
        })
        .collect();
    // Corners at 0 and 65,536: the grid's origin 0, one unit a step.
    boxes.push(Aabb::new(Vec3::ZERO, Vec3::splat(0.1)));
    boxes.push(Aabb::new(Vec3::splat(65_535.9), Vec3::splat(65_536.0)));
    for border in [16_384.0f32, 32_768.0, 49_152.0, 20_480.0] {
        for k in 0..50 {
            // In the last step below the border, and the first above it.
            for x in [border - 0.4, border + 0.1] {
                let at = Vec3::new(x, 1_000.0 * k as f32 + 7.0, 500.0 + 900.0 * k as f32);
                boxes.push(Aabb::new(at, at + Vec3::new(0.3, 0.5, 0.5)));
            }
        }
    }
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    for border in [16_384.0f32, 32_768.0, 49_152.0, 20_480.0] {
        for k in 0..50 {
            for x in [border - 0.25, border + 0.25] {
                let from = Vec3::new(x, -10.0, 500.25 + 900.0 * k as f32);
                check_ray(&grid, &boxes, &Ray::new(from, Vec3::Y, f32::INFINITY));
            }
            let along_x =
                Vec3::new(border - 5.0, 1_000.0 * k as f32 + 7.25, 500.25 + 900.0 * k as f32);
            check_ray(&grid, &boxes, &Ray::new(along_x, Vec3::X, 10.0));
        }
    }
}

#[test]
fn a_pile_of_identical_boxes_reports_each_once() {
    let boxes = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 500];
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let ray = Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X, f32::INFINITY);
    assert_eq!(grid.cast_ray(&ray).unwrap(), Some((0, 1.0)));
    check_ray(&grid, &boxes, &ray);
}

#[test]
fn bad_queries_are_typed_errors_and_empty_grids_answer_nothing() {
    let boxes = scene(5, 100, 10.0, 1.0);
    let mut grid = AdaptiveGrid::default();
    let ray = Ray::new(Vec3::ZERO, Vec3::X, f32::INFINITY);
    // Not built: nothing is kept to hit.
    assert_eq!(grid.cast_ray(&ray).unwrap(), None);
    grid.build(&boxes).unwrap();
    let mut hits = vec![(7, 7.0)];
    let bad = Ray::new(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::X, 1.0);
    assert!(matches!(
        grid.ray_hits(&bad, &mut hits),
        Err(QueryError::NotFinite { part: QueryPart::Origin, .. })
    ));
    assert!(hits.is_empty(), "a refused query leaves its output empty");
    let bad = Ray::new(Vec3::ZERO, Vec3::X, -0.5);
    assert!(matches!(
        grid.cast_ray(&bad),
        Err(QueryError::BadLength { part: QueryPart::MaxT, .. })
    ));
    let mut ids = vec![3];
    assert!(grid.query_point(Vec3::new(0.0, f32::INFINITY, 0.0), &mut ids).is_err());
    assert!(ids.is_empty());
    assert!(grid.query_sphere(&Sphere::new(Vec3::ZERO, f32::NAN), &mut ids).is_err());
    let mut empty = AdaptiveGrid::default();
    empty.build(&[]).unwrap();
    assert_eq!(empty.cast_ray(&ray).unwrap(), None);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any scene, any ray: the grid's answers are brute force's.
    #[test]
    fn random_rays_match_brute_force(
        seed in any::<u64>(),
        count in 1usize..400,
        side in prop_oneof![Just(1.0f32), 5.0f32..200.0],
        size in 0.0f32..8.0,
        origin in prop::array::uniform3(-20.0f32..220.0),
        dir in prop::array::uniform3(prop_oneof![Just(0.0f32), -1.0f32..1.0]),
        max_t in prop_oneof![Just(0.0f32), Just(f32::INFINITY), 0.0f32..400.0],
        radius in 0.0f32..30.0,
    ) {
        let boxes = scene(seed, count, side, size);
        let mut grid = AdaptiveGrid::default();
        grid.build(&boxes).unwrap();
        let ray = Ray::new(Vec3::from(origin), Vec3::from(dir), max_t);
        check_ray(&grid, &boxes, &ray);
        check_point(&grid, &boxes, Vec3::from(origin));
        check_sphere(&grid, &boxes, &Sphere::new(Vec3::from(origin), radius));
    }
}

/// From 1e30 away, every box near the origin is entered at the same `t` to
/// 16 digits: the exact test calls hit boxes whose entries differ by less
/// than its rounding, and the walk must visit every one of them. (It once
/// computed the swept box at `origin + t * dir` in `f64` and found nothing
/// there: the sum cancels to the last bit.)
#[test]
fn rays_from_far_origins_find_what_the_exact_test_hits() {
    let boxes = scene(9, 1_000, 100.0, 2.0);
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let mut rng = SplitMix64::new(5);
    for _ in 0..500 {
        let b = boxes[(rng.next_u64() % 1000) as usize];
        let target = (b.min + b.max) * 0.5;
        for far in [1.0e30f32, 1.0e20, 1.0e12, 3.0e38] {
            let along_x = Vec3::new(far, target.y, target.z);
            check_ray(&grid, &boxes, &Ray::new(along_x, -Vec3::X, f32::INFINITY));
            let diagonal = Vec3::new(far, far * 0.5, -far);
            check_ray(&grid, &boxes, &Ray::new(diagonal, target - diagonal, f32::INFINITY));
            check_ray(&grid, &boxes, &Ray::new(diagonal, target - diagonal, 1.0));
        }
    }
}
