//! Queries with regions ([`AdaptiveGrid::query_with`]) against brute force:
//! capsules, frustums, and boxes and spheres as regions, each answer the
//! boxes the region's own [`RegionTest::meets`] accepts, each once, on
//! random and hostile scenes: boxes that span many cells (a skipped cell
//! may hold a box's reference point), piles of identical boxes, outliers
//! clamped to the border, boxes near `f32::MAX`.

use super::rays_and_shapes_match_brute_force::scene;
use broadphase_kernel::{Aabb, AdaptiveGrid, Capsule, Frustum, QueryError, QueryPart, RegionTest};
use broadphase_scenes::SplitMix64;
use broadphase_storage::Sphere;
use glam::{Mat4, Vec3};
use proptest::prelude::*;

/// The grid's answer, sorted, is brute force's; `out` never holds a repeat.
fn check(grid: &AdaptiveGrid, boxes: &[Aabb], region: &(impl RegionTest + std::fmt::Debug)) {
    let mut hits = Vec::new();
    grid.query_with(region, &mut hits).unwrap();
    let found = hits.len();
    hits.sort_unstable();
    hits.dedup();
    assert_eq!(found, hits.len(), "a box reported twice for {region:?}");
    let expected: Vec<u32> =
        (0..boxes.len() as u32).filter(|&i| region.meets(&boxes[i as usize])).collect();
    assert_eq!(hits, expected, "{region:?}");
}

fn random_point(rng: &mut SplitMix64, lo: f32, hi: f32) -> Vec3 {
    Vec3::new(rng.range_f32(lo, hi), rng.range_f32(lo, hi), rng.range_f32(lo, hi))
}

/// A camera at `eye` looking at `target`: perspective (0..1 or GL depth) or
/// orthographic, by `kind`.
fn camera(eye: Vec3, target: Vec3, kind: u32, far: f32) -> Frustum {
    let up = if (target - eye).normalize_or_zero().y.abs() > 0.99 { Vec3::X } else { Vec3::Y };
    let view = Mat4::look_at_rh(eye, target, up);
    match kind % 3 {
        0 => Frustum::from_view_projection(Mat4::perspective_rh(1.0, 1.3, 0.5, far) * view),
        1 => Frustum::from_view_projection_gl(Mat4::perspective_rh_gl(0.7, 0.8, 2.0, far) * view),
        _ => Frustum::from_view_projection(
            Mat4::orthographic_rh(-20.0, 15.0, -10.0, 10.0, 0.0, far) * view,
        ),
    }
    .unwrap()
}

fn check_all(grid: &AdaptiveGrid, boxes: &[Aabb], rng: &mut SplitMix64, side: f32) {
    let (a, b) = (random_point(rng, -10.0, side + 10.0), random_point(rng, -10.0, side + 10.0));
    let radius = [0.0, rng.range_f32(0.0, side / 10.0), rng.range_f32(0.0, side)][rng.below(3)];
    check(grid, boxes, &Capsule::new(a, b, radius));
    check(grid, boxes, &Capsule::new(a, a, radius));
    check(grid, boxes, &Capsule::new(a, Vec3::new(b.x, a.y, a.z), radius));
    check(grid, boxes, &Sphere::new(a, radius));
    check(grid, boxes, &Aabb::new(a.min(b), a.max(b)));
    let far = [side / 4.0, side, 4.0 * side][rng.below(3)];
    check(grid, boxes, &camera(a, b, rng.below(3) as u32, far));
}

#[test]
fn capsules_and_frustums_on_random_scenes() {
    let mut rng = SplitMix64::new(5);
    for (seed, count, side, size) in
        [(1, 2_000, 100.0, 3.0), (2, 500, 10.0, 6.0), (3, 3_000, 400.0, 40.0), (4, 50, 1.0, 0.0)]
    {
        let boxes = scene(seed, count, side, size);
        let mut grid = AdaptiveGrid::default();
        grid.build(&boxes).unwrap();
        for _ in 0..60 {
            check_all(&grid, &boxes, &mut rng, side);
        }
    }
}

/// Long boxes cross many cells, so a skipped cell often holds the
/// reference point of a box a capsule meets in another: each must still be
/// found, once.
#[test]
fn long_boxes_across_skipped_cells() {
    let mut rng = SplitMix64::new(11);
    let mut boxes = scene(12, 2_000, 100.0, 1.0);
    for k in 0..200 {
        let at = random_point(&mut rng, 0.0, 100.0);
        let mut reach = Vec3::splat(0.5);
        reach[k % 3] = 60.0;
        boxes.push(Aabb::new(at - reach, at + reach));
    }
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    for _ in 0..100 {
        check_all(&grid, &boxes, &mut rng, 100.0);
        // Thin diagonal capsules skip the most cells.
        let (a, b) = (random_point(&mut rng, 0.0, 100.0), random_point(&mut rng, 0.0, 100.0));
        check(&grid, &boxes, &Capsule::new(a, b, 0.25));
    }
}

#[test]
fn piles_outliers_and_huge_coordinates() {
    let mut boxes = vec![Aabb::new(Vec3::splat(2.0), Vec3::splat(3.0)); 300];
    boxes.extend(scene(9, 1_000, 100.0, 2.0));
    boxes.push(Aabb::new(Vec3::splat(1.0e30), Vec3::splat(2.0e30)));
    boxes.push(Aabb::new(Vec3::splat(-2.0e30), Vec3::splat(-1.0e30)));
    boxes.push(Aabb::new(Vec3::new(9_000.0, 50.0, 50.0), Vec3::new(9_001.0, 51.0, 51.0)));
    boxes.push(Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(-3.0e38)));
    boxes.push(Aabb::new(Vec3::splat(3.0e38), Vec3::splat(f32::MAX)));
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let mut rng = SplitMix64::new(3);
    for _ in 0..40 {
        check_all(&grid, &boxes, &mut rng, 100.0);
    }
    let max = f32::MAX;
    for (a, b, radius) in [
        (Vec3::splat(2.5), Vec3::splat(2.5), 0.0),
        (Vec3::splat(1.5e30), Vec3::splat(-1.5e30), 1.0),
        (Vec3::splat(-max), Vec3::splat(max), 0.0),
        (Vec3::new(0.0, 50.0, 50.0), Vec3::new(9_000.5, 50.5, 50.5), 0.5),
        (Vec3::splat(3.2e38), Vec3::splat(3.3e38), 1.0e37),
        (Vec3::ZERO, Vec3::ONE, 1.0e31),
    ] {
        check(&grid, &boxes, &Capsule::new(a, b, radius));
    }
    check(&grid, &boxes, &camera(Vec3::splat(-50.0), Vec3::splat(50.0), 0, 1.0e4));
    check(&grid, &boxes, &camera(Vec3::splat(1.0e15), Vec3::ZERO, 0, 1.0e16));
    check(&grid, &boxes, &camera(Vec3::splat(1.0e15), Vec3::ZERO, 2, 1.0e16));
    let infinite = Mat4::perspective_infinite_rh(1.2, 1.0, 0.1)
        * Mat4::look_at_rh(Vec3::ZERO, Vec3::splat(1.0), Vec3::Y);
    check(&grid, &boxes, &Frustum::from_view_projection(infinite).unwrap());
}

/// The box and sphere regions answer as the built-in queries do.
#[test]
fn boxes_and_spheres_as_regions_answer_as_their_own_queries() {
    let boxes = scene(21, 2_000, 100.0, 4.0);
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let mut rng = SplitMix64::new(8);
    let (mut own, mut with) = (Vec::new(), Vec::new());
    for _ in 0..200 {
        let (a, b) = (random_point(&mut rng, -5.0, 105.0), random_point(&mut rng, -5.0, 105.0));
        let query = Aabb::new(a.min(b), a.max(b));
        grid.query_aabb(&query, &mut own).unwrap();
        grid.query_with(&query, &mut with).unwrap();
        own.sort_unstable();
        with.sort_unstable();
        assert_eq!(own, with);
        let sphere = Sphere::new(a, rng.range_f32(0.0, 30.0));
        grid.query_sphere(&sphere, &mut own).unwrap();
        grid.query_with(&sphere, &mut with).unwrap();
        own.sort_unstable();
        with.sort_unstable();
        assert_eq!(own, with);
    }
}

/// Bounds that break the box contract.
#[derive(Debug)]
struct Inverted;

impl RegionTest for Inverted {
    fn bounds(&self) -> Aabb {
        Aabb::new(Vec3::ONE, Vec3::ZERO)
    }
    fn meets(&self, _: &Aabb) -> bool {
        true
    }
}

#[test]
fn bad_regions_are_typed_errors_and_leave_nothing() {
    let boxes = scene(2, 100, 10.0, 2.0);
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let mut hits = vec![7];
    let nan = Capsule::new(Vec3::ZERO, Vec3::ONE, f32::NAN);
    assert!(matches!(
        grid.query_with(&nan, &mut hits),
        Err(QueryError::BadLength { part: QueryPart::Radius, .. })
    ));
    assert!(hits.is_empty());
    let negative = Capsule::new(Vec3::ZERO, Vec3::ONE, -1.0);
    assert!(grid.query_with(&negative, &mut hits).is_err());
    let open = Capsule::new(Vec3::new(f32::INFINITY, 0.0, 0.0), Vec3::ONE, 1.0);
    assert!(matches!(
        grid.query_with(&open, &mut hits),
        Err(QueryError::NotFinite { part: QueryPart::Start, .. })
    ));
    hits.push(3);
    assert!(matches!(grid.query_with(&Inverted, &mut hits), Err(QueryError::Input(_))));
    assert!(hits.is_empty());
    let mut empty = AdaptiveGrid::default();
    empty.build(&[]).unwrap();
    empty.query_with(&Capsule::new(Vec3::ZERO, Vec3::ONE, 1.0), &mut hits).unwrap();
    assert!(hits.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any scene, any capsule, any camera: the grid's answers are brute force's.
    #[test]
    fn random_regions_match_brute_force(
        seed in any::<u64>(),
        count in 1usize..600,
        side in prop_oneof![Just(1.0f32), 5.0f32..200.0],
        size in prop_oneof![0.0f32..8.0, 20.0f32..100.0],
        a in prop::array::uniform3(-20.0f32..220.0),
        b in prop::array::uniform3(-20.0f32..220.0),
        radius in prop_oneof![Just(0.0f32), 0.0f32..2.0, 0.0f32..60.0],
        kind in 0u32..3,
        far in 1.0f32..500.0,
    ) {
        let boxes = scene(seed, count, side, size);
        let mut grid = AdaptiveGrid::default();
        grid.build(&boxes).unwrap();
        let (a, b) = (Vec3::from(a), Vec3::from(b));
        check(&grid, &boxes, &Capsule::new(a, b, radius));
        if a != b {
            check(&grid, &boxes, &camera(a, b, kind, far));
        }
    }
}
