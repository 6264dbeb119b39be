//! Every neighbor structure, in every configuration and scan kernel, equals
//! brute force: pairs (also split by slot ranges), caller-order and
//! sorted-order neighbor lists, and queries at radii from 0 to the build
//! radius, on random, clustered, lattice, far-apart and negative sets, and
//! for spheres of mixed radii; plus property tests on random small sets,
//! built fresh and rebuilt warm.

use crate::support;

use broadphase_neighbors::{CheckedPoints, brute_force_neighbor_pairs};
use glam::Vec3;
use proptest::prelude::*;
use support::{Rng, all_structures, check_built, check_points, check_spheres};

/// Query points: some particles themselves, some between, one far away.
fn probes(points: &[Vec3], rng: &mut Rng) -> Vec<Vec3> {
    let mut probes: Vec<Vec3> = points.iter().step_by(points.len() / 7 + 1).copied().collect();
    if let Some(&p) = points.first() {
        probes.push(p + Vec3::new(0.31, -0.17, 0.05));
    }
    probes.push(rng.point(-50.0, 50.0));
    probes.push(Vec3::splat(1e6));
    probes
}

fn radii_up_to(r: f32) -> [f32; 4] {
    [0.0, r * 0.5, r, r * 1.5]
}

#[test]
fn uniform_random_points() {
    let mut rng = Rng(1);
    let points: Vec<Vec3> = (0..800).map(|_| rng.point(0.0, 12.0)).collect();
    let probes = probes(&points, &mut rng);
    for radius in [0.4, 1.0, 2.5] {
        check_points(&points, radius, &probes, &radii_up_to(radius));
    }
}

#[test]
fn clustered_points() {
    // Dense clumps (hundreds of points per cell) and sparse outskirts.
    let mut rng = Rng(2);
    let centers = [Vec3::ZERO, Vec3::new(30.0, 0.0, 0.0), Vec3::new(5.0, -40.0, 9.0)];
    let mut points = Vec::new();
    for (k, &c) in centers.iter().enumerate() {
        let spread = [0.3, 2.0, 8.0][k];
        points.extend((0..300).map(|_| c + rng.point(-spread, spread)));
    }
    points.extend((0..100).map(|_| rng.point(-60.0, 60.0)));
    let probes = probes(&points, &mut rng);
    check_points(&points, 1.0, &probes, &radii_up_to(1.0));
}

#[test]
fn many_copies_of_one_point() {
    let points = vec![Vec3::new(3.0, -2.0, 7.5); 150];
    check_points(&points, 0.5, &points[..1], &[0.0, 0.5]);
    check_points(&points, 0.0, &points[..1], &[0.0]);
}

#[test]
fn far_apart_groups() {
    // Groups 1e6 and 1e30 apart, and one point at the largest magnitudes:
    // bounds that would need billions of cells, coordinates beyond 2^21 cells.
    let mut rng = Rng(3);
    let mut points = Vec::new();
    for offset in [Vec3::ZERO, Vec3::splat(1e6), Vec3::new(-1e30, 1e30, 0.0)] {
        points.extend((0..120).map(|_| offset + rng.point(0.0, 4.0)));
    }
    points.push(Vec3::splat(f32::MAX));
    points.push(Vec3::splat(f32::MIN));
    points.push(Vec3::new(f32::MAX, f32::MIN, 0.0));
    let probes = probes(&points, &mut rng);
    check_points(&points, 0.75, &probes, &radii_up_to(0.75));
}

#[test]
fn negative_coordinates_and_cell_boundaries() {
    // Points on both sides of zero and on multiples of the radius, where
    // floor() and truncation differ.
    let mut points = Vec::new();
    for i in -6..6 {
        for j in -3..3 {
            points.push(Vec3::new(i as f32 * 0.5, j as f32 * 0.5, -(i * j) as f32 * 0.25));
            points.push(Vec3::new(i as f32 * 0.5 - 1e-4, j as f32 * 0.5, 0.0));
        }
    }
    let mut rng = Rng(4);
    let probes = probes(&points, &mut rng);
    check_points(&points, 0.5, &probes, &radii_up_to(0.5));
    check_points(&points, 1.0, &probes, &radii_up_to(1.0));
}

#[test]
fn empty_and_single_point_sets() {
    check_points(&[], 1.0, &[Vec3::ZERO], &[0.0, 1.0, 2.0]);
    check_points(
        &[Vec3::new(-1.0, 2.0, 3.0)],
        1.0,
        &[Vec3::new(-1.0, 2.0, 3.0), Vec3::ZERO],
        &[0.0, 1.0],
    );
    check_spheres(&[], &[], &[Vec3::ZERO]);
    check_spheres(&[Vec3::ONE], &[0.5], &[Vec3::ONE, Vec3::ZERO]);
}

#[test]
fn spheres_of_mixed_radii() {
    let mut rng = Rng(5);
    let centers: Vec<Vec3> = (0..700).map(|_| rng.point(-20.0, 20.0)).collect();
    let radii: Vec<f32> = (0..700).map(|_| rng.range(0.2, 2.0)).collect();
    let probes = probes(&centers, &mut rng);
    check_spheres(&centers, &radii, &probes);
    // Radius 0 spheres are points in contact only when coincident.
    let zero = vec![0.0; 700];
    check_spheres(&centers, &zero, &probes[..2]);
}

#[test]
fn spheres_that_touch_exactly() {
    // Radii 0.5 and 1.5 on a lattice of spacing 2: neighbors touch exactly.
    let mut centers = Vec::new();
    let mut radii = Vec::new();
    for i in 0..8 {
        for j in 0..8 {
            centers.push(Vec3::new(i as f32 * 2.0, j as f32 * 2.0, 0.0));
            radii.push(if (i + j) % 2 == 0 { 0.5 } else { 1.5 });
        }
    }
    check_spheres(&centers, &radii, &centers[..3]);
}

fn point_strategy(scale: f32) -> impl Strategy<Value = Vec3> {
    (-scale..scale, -scale..scale, -scale..scale).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random small sets at random scales and radii.
    #[test]
    fn random_sets_match_brute_force(
        scale in prop_oneof![Just(1.0f32), Just(10.0), Just(1000.0)],
        raw in prop::collection::vec(point_strategy(1.0), 0..120),
        radius_fraction in 0.0f32..0.6,
        offset in point_strategy(1e5),
    ) {
        let points: Vec<Vec3> = raw.iter().map(|p| *p * scale + offset).collect();
        let radius = radius_fraction * scale;
        let probes: Vec<Vec3> = points.iter().take(3).copied().chain([offset]).collect();
        check_points(&points, radius, &probes, &[0.0, radius]);
    }

    /// One structure of each kind rebuilt over sets that grow and shrink: a
    /// warm build reuses its buffers without clearing them first, so what
    /// a bigger set left behind must never reach a smaller one's answer.
    #[test]
    fn warm_rebuilds_match_brute_force(
        sets in prop::collection::vec(prop::collection::vec(point_strategy(4.0), 0..150), 2..6),
        radius in 0.05f32..1.5,
    ) {
        let mut structures = all_structures();
        for points in &sets {
            let mut expected = Vec::new();
            brute_force_neighbor_pairs(points, radius, &mut expected).expect("valid points");
            for (name, s) in &mut structures {
                s.build(points, radius).unwrap_or_else(|e| panic!("{name}: {e}"));
                check_built(name, s, points.len(), &expected);
            }
        }
    }

    /// Points copied and checked in one pass build the structure the same
    /// points build when given raw: the same slots, the brute force's
    /// pairs; and a bad coordinate is refused as `build` refuses it.
    #[test]
    fn checked_points_build_what_raw_points_build(
        raw in prop::collection::vec(point_strategy(4.0), 0..400),
        radius in 0.05f32..1.5,
        bad in prop::option::of((any::<prop::sample::Index>(), 0usize..3)),
    ) {
        let mut xyz: Vec<[f32; 3]> = raw.iter().map(|p| p.to_array()).collect();
        if let (Some((at, axis)), false) = (bad, xyz.is_empty()) {
            xyz[at.index(raw.len())][axis] = f32::NAN;
        }
        let points: Vec<Vec3> = xyz.iter().map(|&p| Vec3::from_array(p)).collect();
        let mut checked = CheckedPoints::default();
        let copied = checked.copy_from_xyz(&xyz);
        for ((name, raw_built), (_, checked_built)) in all_structures().into_iter().zip(all_structures()) {
            let (mut raw_built, mut checked_built) = (raw_built, checked_built);
            let built = raw_built.build(&points, radius);
            match (&copied, &built) {
                // Compared as text: the errors carry the NaN itself.
                (Err(copy_error), Err(build_error)) => {
                    prop_assert_eq!(format!("{copy_error:?}"), format!("{build_error:?}"), "{}", name);
                }
                (Ok(()), Ok(())) => {
                    checked_built.build_checked(&checked, radius).unwrap_or_else(|e| panic!("{name}: {e}"));
                    prop_assert_eq!(checked_built.sorted_order(), raw_built.sorted_order(), "{}", name);
                    let mut expected = Vec::new();
                    brute_force_neighbor_pairs(&points, radius, &mut expected).expect("valid points");
                    check_built(&name, &checked_built, points.len(), &expected);
                }
                _ => prop_assert!(false, "{}: the copy says {:?}, the build {:?}", name, copied, built),
            }
        }
    }

    /// Points snapped to a coarse lattice: many exact ties at the radius.
    #[test]
    fn snapped_sets_match_brute_force(
        raw in prop::collection::vec((-6i32..6, -6i32..6, -6i32..6), 1..150),
        radius_steps in 0u32..4,
    ) {
        let points: Vec<Vec3> =
            raw.iter().map(|&(x, y, z)| Vec3::new(x as f32, y as f32, z as f32) * 0.25).collect();
        let radius = radius_steps as f32 * 0.25;
        check_points(&points, radius, &points[..1], &[0.0, radius]);
    }

    /// Dense sets (dozens of points per cell, coincident points, points on
    /// cell borders): the grid's rows of cells are long enough for its
    /// block walk, eight or sixteen particles at a time.
    #[test]
    fn dense_sets_match_brute_force(
        raw in prop::collection::vec((point_strategy(2.0), 0u8..4), 150..700),
        radius in 0.3f32..1.7,
        spheres in any::<bool>(),
    ) {
        // Some points snapped to a grid of quarter steps: exact ties and
        // duplicates.
        let points: Vec<Vec3> = raw
            .iter()
            .map(|&(p, snap)| if snap == 0 { (p * 4.0).round() * 0.25 } else { p })
            .collect();
        if spheres {
            let radii: Vec<f32> = raw.iter().map(|&(_, snap)| radius * 0.25 * f32::from(snap)).collect();
            check_spheres(&points, &radii, &points[..2]);
        } else {
            check_points(&points, radius, &points[..2], &[radius]);
        }
    }

    /// Random spheres.
    #[test]
    fn random_spheres_match_brute_force(
        spheres in prop::collection::vec((point_strategy(8.0), 0.0f32..1.5), 0..100),
    ) {
        let centers: Vec<Vec3> = spheres.iter().map(|s| s.0).collect();
        let radii: Vec<f32> = spheres.iter().map(|s| s.1).collect();
        check_spheres(&centers, &radii, &centers[..centers.len().min(2)]);
    }
}
