//! The frustum query decides most boxes from their quantized boxes: a
//! plane is dropped below a cell inside it (a cell inside every plane
//! reports its boxes by the bounds test alone), and a box is called
//! outside or inside a plane from its 16-bit corners unless the plane
//! passes within a few steps of them. Each answer must still be the
//! brute-force pass over [`Frustum::overlaps`], on every kernel the CPU
//! runs (the vector chunk kernel and its scalar twin): frustums that hold
//! whole cells, planes on the boxes' faces and on cell borders, flat and
//! empty frustums, planes of zero normal, and boxes far away or clamped to
//! the border of the coordinates.

use super::rays_and_shapes_match_brute_force::scene;
use broadphase_kernel::{Aabb, AdaptiveGrid, Frustum, GridConfig, PairKernel, RegionTest};
use broadphase_scenes::SplitMix64;
use glam::{Mat4, Vec3, Vec4};
use proptest::prelude::*;

/// A grid of `boxes` for every kernel this CPU runs, with small and large
/// leaves.
fn grids(boxes: &[Aabb]) -> Vec<AdaptiveGrid> {
    let mut grids = Vec::new();
    for kernel in PairKernel::available() {
        for leaf_capacity in [4, GridConfig::default().leaf_capacity, 300] {
            let mut grid = AdaptiveGrid::with_config(GridConfig {
                kernel,
                leaf_capacity,
                ..GridConfig::default()
            });
            grid.build(boxes).unwrap();
            grids.push(grid);
        }
    }
    grids
}

/// Every grid answers `frustum` as brute force does, each box once.
fn check(grids: &[AdaptiveGrid], boxes: &[Aabb], frustum: &Frustum) {
    let expected: Vec<u32> =
        (0..boxes.len() as u32).filter(|&i| frustum.overlaps(&boxes[i as usize])).collect();
    let mut hits = Vec::new();
    for grid in grids {
        grid.query_with(frustum, &mut hits).unwrap();
        let found = hits.len();
        hits.sort_unstable();
        hits.dedup();
        assert_eq!(found, hits.len(), "a box reported twice for {frustum:?}");
        assert_eq!(hits, expected, "{:?}, {frustum:?}", grid.pair_kernel());
    }
}

/// The axis-aligned box `lo..=hi` as six planes.
fn box_planes(lo: Vec3, hi: Vec3) -> Frustum {
    Frustum::from_planes([
        Vec4::new(1.0, 0.0, 0.0, -lo.x),
        Vec4::new(-1.0, 0.0, 0.0, hi.x),
        Vec4::new(0.0, 1.0, 0.0, -lo.y),
        Vec4::new(0.0, -1.0, 0.0, hi.y),
        Vec4::new(0.0, 0.0, 1.0, -lo.z),
        Vec4::new(0.0, 0.0, -1.0, hi.z),
    ])
    .unwrap()
}

fn random_point(rng: &mut SplitMix64, lo: f32, hi: f32) -> Vec3 {
    Vec3::new(rng.range_f32(lo, hi), rng.range_f32(lo, hi), rng.range_f32(lo, hi))
}

/// Wide cameras over small boxes: many cells lie inside every plane, and
/// their boxes are reported by the bounds test alone.
#[test]
fn frustums_that_hold_whole_cells() {
    let boxes = scene(31, 4_000, 100.0, 1.5);
    let grids = grids(&boxes);
    let mut rng = SplitMix64::new(2);
    for round in 0..40 {
        let eye = random_point(&mut rng, -60.0, 160.0);
        let target = random_point(&mut rng, 30.0, 70.0);
        let view = Mat4::look_at_rh(eye, target, Vec3::Y);
        let projection = if round % 2 == 0 {
            Mat4::perspective_rh(2.5, 1.0, 0.5, 400.0)
        } else {
            Mat4::orthographic_rh(-70.0, 70.0, -60.0, 60.0, 0.0, 400.0)
        };
        check(&grids, &boxes, &Frustum::from_view_projection(projection * view).unwrap());
    }
    // A frustum around the whole scene, and one just inside it.
    check(&grids, &boxes, &box_planes(Vec3::splat(-1.0), Vec3::splat(103.0)));
    check(&grids, &boxes, &box_planes(Vec3::splat(0.5), Vec3::splat(99.5)));
}

/// Boxes on an integer lattice and planes through their faces and through
/// the cells' borders: touching counts, so the planes pass exactly at
/// corners the quantized test cannot call.
#[test]
fn planes_on_box_faces_and_cell_borders() {
    let mut boxes = Vec::new();
    for x in 0..16 {
        for y in 0..16 {
            for z in 0..8 {
                let lo = Vec3::new(x as f32, y as f32, z as f32) * 4.0;
                boxes.push(Aabb::new(lo, lo + Vec3::new(2.0, 3.0, 4.0)));
            }
        }
    }
    // The scene spans 0..=64 on x, so cells split at multiples of 4, 16, 64.
    let grids = grids(&boxes);
    for (lo, hi) in [
        (Vec3::splat(16.0), Vec3::splat(32.0)),
        (Vec3::splat(2.0), Vec3::new(6.0, 7.0, 8.0)),
        (Vec3::new(0.0, 0.0, 0.0), Vec3::new(64.0, 64.0, 32.0)),
        (Vec3::new(18.0, 4.0, 4.0), Vec3::new(18.0, 60.0, 8.0)),
        (Vec3::splat(8.0), Vec3::splat(8.0)),
    ] {
        check(&grids, &boxes, &box_planes(lo, hi));
    }
    // Diagonal planes through lattice corners: x + y >= 32 and x + y <= 40
    // (with z in 0..=16), corners on both.
    let diagonal = Frustum::from_planes([
        Vec4::new(1.0, 1.0, 0.0, -32.0),
        Vec4::new(-1.0, -1.0, 0.0, 40.0),
        Vec4::new(0.0, 1.0, 0.0, 0.0),
        Vec4::new(0.0, -1.0, 0.0, 64.0),
        Vec4::new(0.0, 0.0, 1.0, 0.0),
        Vec4::new(0.0, 0.0, -1.0, 16.0),
    ])
    .unwrap();
    check(&grids, &boxes, &diagonal);
}

/// Flat, empty and open frustums, and planes of zero normal.
#[test]
fn degenerate_frustums() {
    let boxes = scene(7, 2_000, 50.0, 3.0);
    let grids = grids(&boxes);
    let x = |n: f32, w: f32| Vec4::new(n, 0.0, 0.0, w);
    let y = |n: f32, w: f32| Vec4::new(0.0, n, 0.0, w);
    let z = |n: f32, w: f32| Vec4::new(0.0, 0.0, n, w);
    // A plane of zero normal that holds everywhere, and one that holds
    // nowhere (the planes then bound no point).
    let always =
        [x(1.0, -10.0), x(-1.0, 30.0), y(1.0, -10.0), y(-1.0, 30.0), Vec4::ZERO, z(-1.0, 20.0)];
    check(&grids, &boxes, &Frustum::from_planes(always).unwrap());
    let never = [
        Vec4::new(0.0, 0.0, 0.0, -1.0),
        x(-1.0, 30.0),
        y(1.0, -10.0),
        y(-1.0, 30.0),
        z(1.0, 0.0),
        z(-1.0, 20.0),
    ];
    check(&grids, &boxes, &Frustum::from_planes(never).unwrap());
    // Flat: x = 25 exactly; and x >= 26 with x <= 25, empty.
    check(&grids, &boxes, &box_planes(Vec3::new(25.0, 0.0, 0.0), Vec3::new(25.0, 50.0, 50.0)));
    let empty =
        [x(1.0, -26.0), x(-1.0, 25.0), y(1.0, 0.0), y(-1.0, 50.0), z(1.0, 0.0), z(-1.0, 50.0)];
    check(&grids, &boxes, &Frustum::from_planes(empty).unwrap());
    // A thin slab (near almost at far), and an infinite far plane.
    let view = Mat4::look_at_rh(Vec3::new(-5.0, 25.0, 25.0), Vec3::new(50.0, 25.0, 25.0), Vec3::Y);
    check(
        &grids,
        &boxes,
        &Frustum::from_view_projection(Mat4::perspective_rh(1.0, 1.0, 30.0, 30.001) * view)
            .unwrap(),
    );
    let infinite = Mat4::perspective_infinite_rh(0.8, 1.0, 1.0) * view;
    check(&grids, &boxes, &Frustum::from_view_projection(infinite).unwrap());
    // Planes of tiny and huge scale describe the same box.
    for scale in [1.0e-30f32, 1.0e30] {
        let planes = [
            x(1.0, -10.0),
            x(-1.0, 30.0),
            y(1.0, -10.0),
            y(-1.0, 30.0),
            z(1.0, -5.0),
            z(-1.0, 45.0),
        ];
        check(&grids, &boxes, &Frustum::from_planes(planes.map(|p| p * scale)).unwrap());
    }
}

/// Boxes at the border of the coordinates (clamped outliers) and far
/// away: their quantized corners say nothing of how far they reach.
#[test]
fn huge_and_far_boxes() {
    let mut boxes = scene(17, 1_500, 100.0, 4.0);
    boxes.push(Aabb::new(Vec3::splat(-1.0e30), Vec3::new(50.0, 50.0, 50.0)));
    boxes.push(Aabb::new(Vec3::new(60.0, -1.0e6, 40.0), Vec3::new(61.0, 1.0e6, 41.0)));
    boxes.push(Aabb::new(Vec3::splat(3.0e38), Vec3::splat(f32::MAX)));
    boxes.push(Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(-3.0e38)));
    boxes.push(Aabb::new(Vec3::new(9_000.0, 50.0, 50.0), Vec3::new(9_001.0, 51.0, 51.0)));
    boxes.push(Aabb::new(Vec3::new(-5.0, -5.0, -5.0), Vec3::new(105.0, 105.0, 105.0)));
    let grids = grids(&boxes);
    let mut rng = SplitMix64::new(23);
    for round in 0..60 {
        let eye = random_point(&mut rng, -50.0, 150.0);
        let target = random_point(&mut rng, -50.0, 150.0);
        if eye == target {
            continue;
        }
        let view = Mat4::look_at_rh(eye, target, Vec3::Y);
        let far = [30.0, 300.0, 1.0e5][round % 3];
        let projection = Mat4::perspective_rh(1.2, 1.4, 0.5, far);
        check(&grids, &boxes, &Frustum::from_view_projection(projection * view).unwrap());
    }
    let view = Mat4::look_at_rh(Vec3::splat(1.0e15), Vec3::ZERO, Vec3::Y);
    check(
        &grids,
        &boxes,
        &Frustum::from_view_projection(Mat4::perspective_rh(0.5, 1.0, 1.0, 1.0e16) * view).unwrap(),
    );
    check(&grids, &boxes, &box_planes(Vec3::splat(-1.0e31), Vec3::splat(1.0e31)));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random scenes and random cameras of every width and depth, on every
    /// kernel: brute force's answers.
    #[test]
    fn random_frustums_match_brute_force(
        seed in any::<u64>(),
        count in 1usize..1_500,
        side in prop_oneof![Just(1.0f32), 5.0f32..300.0],
        size in prop_oneof![0.0f32..4.0, 10.0f32..80.0],
        eye in prop::array::uniform3(-50.0f32..350.0),
        target in prop::array::uniform3(-50.0f32..350.0),
        fov in 0.1f32..3.0,
        far in 1.0f32..1_000.0,
    ) {
        let boxes = scene(seed, count, side, size);
        let grids = grids(&boxes);
        let (eye, target) = (Vec3::from(eye), Vec3::from(target));
        prop_assume!(eye != target);
        let view = Mat4::look_at_rh(eye, target, Vec3::Y);
        let frustum = Frustum::from_view_projection(Mat4::perspective_rh(fov, 1.5, 0.5, far) * view).unwrap();
        check(&grids, &boxes, &frustum);
    }
}

/// A frustum is a plane test; a region of more planes than the quantized
/// test takes is tested box by box, still exactly.
#[derive(Debug)]
struct ManyPlanes {
    planes: Vec<glam::DVec4>,
    inner: Frustum,
}

impl RegionTest for ManyPlanes {
    fn bounds(&self) -> Aabb {
        self.inner.bounds()
    }
    fn meets(&self, aabb: &Aabb) -> bool {
        self.inner.overlaps(aabb)
    }
    fn plane_test(&self) -> Option<&[glam::DVec4]> {
        Some(&self.planes)
    }
}

#[test]
fn frustum_gives_its_planes_and_more_planes_fall_back() {
    let frustum = box_planes(Vec3::splat(10.0), Vec3::splat(40.0));
    assert_eq!(frustum.plane_test(), Some(&frustum.planes()[..]));
    let empty = box_planes(Vec3::splat(10.0), Vec3::splat(9.0));
    assert_eq!(empty.plane_test(), None);
    // Twelve planes: the frustum's six, twice.
    let mut planes = frustum.planes().to_vec();
    planes.extend_from_slice(frustum.planes());
    let region = ManyPlanes { planes, inner: frustum };
    let boxes = scene(3, 1_000, 50.0, 3.0);
    for grid in grids(&boxes) {
        let (mut many, mut six) = (Vec::new(), Vec::new());
        grid.query_with(&region, &mut many).unwrap();
        grid.query_with(&frustum, &mut six).unwrap();
        many.sort_unstable();
        six.sort_unstable();
        assert_eq!(many, six);
    }
}
