//! The periodic grid against brute force by the nearest image: random
//! boxes with every subset of wrapping axes, points on the faces, radii up
//! to exactly half the box, boxes one and two cells wide (where the cells
//! around a cell wrap onto each other), lattices at exactly the radius
//! across a face, and the typed errors.

use broadphase_neighbors::{
    Axis, NeighborLists, PeriodicDomain, PeriodicError, PeriodicGrid, PointError,
    brute_force_periodic_pairs,
};
use glam::Vec3;
use proptest::prelude::*;
use support::Rng;

use crate::support;

fn check(domain: &PeriodicDomain, points: &[Vec3], radius: f32) {
    let mut expected = Vec::new();
    brute_force_periodic_pairs(domain, points, radius, &mut expected).unwrap();
    let mut grid = PeriodicGrid::default();
    grid.build(domain, points, radius).unwrap();
    let mut pairs = Vec::new();
    grid.neighbor_pairs(&mut pairs);
    pairs.sort_unstable();
    assert_eq!(pairs, expected, "pairs of {} points, radius {radius}, {domain:?}", points.len());
    let mut lists = NeighborLists::default();
    grid.neighbor_lists(&mut lists);
    let mut rows = vec![Vec::new(); points.len()];
    for &[a, b] in &expected {
        rows[a as usize].push(b);
        rows[b as usize].push(a);
    }
    for (row, want) in rows.iter_mut().enumerate() {
        want.sort_unstable();
        assert_eq!(lists.neighbors(row), want.as_slice(), "row {row}, radius {radius}");
    }
}

/// A point of the domain; one coordinate in eight exactly on a face.
fn point_in(rng: &mut Rng, domain: &PeriodicDomain) -> Vec3 {
    let (min, max) = (domain.min(), domain.max());
    let mut p = Vec3::ZERO;
    for axis in 0..3 {
        p[axis] = match (rng.unit() * 16.0) as u32 {
            0 => min[axis],
            1 => max[axis],
            _ => (min[axis] + (max[axis] - min[axis]) * rng.unit()).min(max[axis]),
        };
    }
    p
}

#[test]
fn random_boxes_every_wrapping_subset() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for mask in 0..8u32 {
        let periodic = [mask & 1 != 0, mask & 2 != 0, mask & 4 != 0];
        for (min, max) in [
            (Vec3::ZERO, Vec3::splat(10.0)),
            (Vec3::new(-7.5, 3.0, -100.0), Vec3::new(12.5, 9.0, -60.0)),
            (Vec3::splat(1000.0), Vec3::new(1004.0, 1030.0, 1002.0)),
        ] {
            let domain = PeriodicDomain::new(min, max, periodic).unwrap();
            let half = (max - min).min_element() * 0.5;
            let points: Vec<Vec3> = (0..600).map(|_| point_in(&mut rng, &domain)).collect();
            for radius in [0.0, 0.3, 1.0, half * 0.9, half] {
                check(&domain, &points, radius);
            }
        }
    }
}

#[test]
fn boxes_one_and_two_cells_wide_list_each_neighbor_cell_once() {
    let mut rng = Rng(7);
    // Radius 2.5 in a box 5 wide on x (one or two cells) and 6 on y.
    let domain =
        PeriodicDomain::new(Vec3::ZERO, Vec3::new(5.0, 6.0, 30.0), [true, true, false]).unwrap();
    let points: Vec<Vec3> = (0..400).map(|_| point_in(&mut rng, &domain)).collect();
    for radius in [2.5, 2.4, 1.7, 1.2] {
        check(&domain, &points, radius);
    }
}

#[test]
fn lattice_at_exactly_the_radius_across_the_faces() {
    // Spacing 1 in a box 8 wide: the points on x = 0.5 and x = 7.5 are 1
    // apart through the wrapping face, as are neighbors inside.
    let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(8.0), [true; 3]).unwrap();
    let points: Vec<Vec3> = (0..512)
        .map(|i| Vec3::new((i % 8) as f32, ((i / 8) % 8) as f32, (i / 64) as f32) + 0.5)
        .collect();
    check(&domain, &points, 1.0);
    check(&domain, &points, 1.0f32.next_down());
    let mut pairs = Vec::new();
    brute_force_periodic_pairs(&domain, &points, 1.0, &mut pairs).unwrap();
    // Six neighbors each on a fully wrapped lattice: 512 · 6 / 2.
    assert_eq!(pairs.len(), 1536);
}

#[test]
fn a_point_on_both_faces_is_one_point() {
    let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(4.0), [true, false, false]).unwrap();
    let points = [Vec3::new(0.0, 1.0, 1.0), Vec3::new(4.0, 1.0, 1.0), Vec3::new(0.0, 1.0, 3.9)];
    // x = 0 and x = 4 coincide through the wrap; z does not wrap.
    check(&domain, &points, 0.0);
    let mut pairs = Vec::new();
    brute_force_periodic_pairs(&domain, &points, 0.0, &mut pairs).unwrap();
    assert_eq!(pairs, [[0, 1]]);
}

#[test]
fn a_tiny_radius_in_a_huge_box_stays_exact() {
    // Far from the origin the wrap rounds at f32's spacing there; the
    // cells must allow for it.
    let domain = PeriodicDomain::new(Vec3::splat(-1.0e6), Vec3::splat(1.0e6), [true; 3]).unwrap();
    let mut rng = Rng(3);
    let mut points: Vec<Vec3> = (0..300).map(|_| point_in(&mut rng, &domain)).collect();
    points.push(Vec3::splat(-1.0e6));
    points.push(Vec3::splat(1.0e6 - 0.0625));
    points.push(Vec3::new(-1.0e6 + 0.05, 0.0, 0.0));
    points.push(Vec3::new(1.0e6 - 0.05, 0.0, 0.0));
    for radius in [0.0, 0.05, 0.1, 0.125, 1.0] {
        check(&domain, &points, radius);
    }
}

#[test]
fn wrapping_rounds_points_across_a_cell() {
    // Cells as narrow as the radius allows (1000 / 0.05 of them), and
    // pairs across the wrapping face whose difference rounds at the
    // spacing of f32 near 1000 (6e-5): a pair computed in reach may lie a
    // hair more than a cell apart. The cells must be wider by that much.
    let domain =
        PeriodicDomain::new(Vec3::ZERO, Vec3::new(1000.0, 0.01, 0.01), [true, false, false])
            .unwrap();
    let mut rng = Rng(5);
    let mut points: Vec<Vec3> = (0..8_000).map(|_| point_in(&mut rng, &domain)).collect();
    for _ in 0..1_500 {
        points.push(Vec3::new(rng.unit() * 0.06, 0.005, 0.005));
        points.push(Vec3::new(1000.0 - rng.unit() * 0.06, 0.005, 0.005));
    }
    check(&domain, &points, 0.05);
}

/// Two points 1.5e-36 apart are at distance 0 for the rule (the square
/// underflows), so at radius 0 they are neighbors; the cells must hold
/// them within reach of each other however narrow the box (the fuzz
/// target found a box 1.5e-36 tall cut into many cells).
#[test]
fn squares_that_underflow_make_neighbors_at_radius_zero() {
    let domain = PeriodicDomain::new(
        Vec3::new(-20.5, 0.0, 0.0),
        Vec3::new(0.0, 1.5e-36, 0.75),
        [true, false, false],
    )
    .unwrap();
    let mut points = vec![Vec3::ZERO; 16];
    points.push(Vec3::new(0.0, 1.5e-36, 0.0));
    points.push(Vec3::new(-20.5, 0.0, 0.0));
    points.push(Vec3::new(0.0, 1.5e-36, 0.75));
    check(&domain, &points, 0.0);
    let mut pairs = Vec::new();
    brute_force_periodic_pairs(&domain, &points, 0.0, &mut pairs).unwrap();
    assert!(pairs.contains(&[0, 16]), "1.5e-36 apart is distance 0 in f32");
}

#[test]
fn empty_and_single_point_sets() {
    let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::ONE, [true; 3]).unwrap();
    check(&domain, &[], 0.5);
    check(&domain, &[Vec3::splat(0.5)], 0.5);
    let mut grid = PeriodicGrid::default();
    grid.build(&domain, &[], 0.5).unwrap();
    assert!(grid.is_empty());
}

#[test]
fn bad_input_is_a_typed_error() {
    let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(10.0), [true, false, true]).unwrap();
    let mut grid = PeriodicGrid::default();
    let inside = [Vec3::splat(5.0), Vec3::splat(1.0)];
    assert_eq!(
        grid.build(&domain, &inside, 5.5),
        Err(PeriodicError::RadiusAboveHalfBox { radius: 5.5, axis: Axis::X, half: 5.0 })
    );
    let outside = [Vec3::splat(5.0), Vec3::new(1.0, 10.5, 1.0)];
    assert_eq!(
        grid.build(&domain, &outside, 1.0),
        Err(PeriodicError::OutsideDomain { index: 1, axis: Axis::Y, value: 10.5 })
    );
    let nan = [Vec3::splat(5.0), Vec3::new(1.0, 1.0, f32::NAN)];
    assert!(matches!(
        grid.build(&domain, &nan, 1.0),
        Err(PeriodicError::Point(PointError::NotFinite { index: 1, axis: Axis::Z, .. }))
    ));
    assert!(matches!(
        grid.build(&domain, &inside, -1.0),
        Err(PeriodicError::Point(PointError::InvalidRadius { .. }))
    ));
    assert!(grid.is_empty(), "a refused build holds nothing");
    let mut pairs = vec![[9, 9]];
    grid.neighbor_pairs(&mut pairs);
    assert!(pairs.is_empty());
    for (min, max) in [
        (Vec3::ZERO, Vec3::new(1.0, 0.0, 1.0)),
        (Vec3::ZERO, Vec3::new(1.0, f32::INFINITY, 1.0)),
        (Vec3::new(f32::NAN, 0.0, 0.0), Vec3::ONE),
        (Vec3::splat(-3.0e38), Vec3::splat(3.0e38)),
    ] {
        assert!(
            matches!(
                PeriodicDomain::new(min, max, [true; 3]),
                Err(PeriodicError::BadDomain { .. })
            ),
            "{min:?}..{max:?}"
        );
    }
    // Every error says what was wrong.
    let message = PeriodicError::OutsideDomain { index: 3, axis: Axis::X, value: -1.0 }.to_string();
    assert!(message.contains("point 3") && message.contains("outside"), "{message}");
}

#[test]
fn warm_rebuilds_give_the_same_answer() {
    let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(6.0), [true; 3]).unwrap();
    let mut rng = Rng(11);
    let mut grid = PeriodicGrid::default();
    let (mut pairs, mut expected) = (Vec::new(), Vec::new());
    for round in 0..5 {
        let count = [500, 20, 0, 700, 300][round];
        let points: Vec<Vec3> = (0..count).map(|_| point_in(&mut rng, &domain)).collect();
        grid.build(&domain, &points, 1.1).unwrap();
        grid.neighbor_pairs(&mut pairs);
        pairs.sort_unstable();
        brute_force_periodic_pairs(&domain, &points, 1.1, &mut expected).unwrap();
        assert_eq!(pairs, expected, "round {round}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_box_any_points(
        size in (0.5f32..40.0, 0.5f32..40.0, 0.5f32..40.0),
        corner in (-50.0f32..50.0, -50.0f32..50.0, -50.0f32..50.0),
        mask in 0u32..8,
        fractions in prop::collection::vec((0.0f32..=1.0, 0.0f32..=1.0, 0.0f32..=1.0), 0..150),
        share in 0.0f32..=1.0,
    ) {
        let min = Vec3::new(corner.0, corner.1, corner.2);
        let max = min + Vec3::new(size.0, size.1, size.2);
        let periodic = [mask & 1 != 0, mask & 2 != 0, mask & 4 != 0];
        let domain = PeriodicDomain::new(min, max, periodic).unwrap();
        let points: Vec<Vec3> = fractions
            .iter()
            .map(|&(x, y, z)| (min + (max - min) * Vec3::new(x, y, z)).clamp(min, max))
            .collect();
        let half = (0..3)
            .filter(|&a| periodic[a])
            .map(|a| (max - min)[a] * 0.5)
            .fold(f32::MAX, f32::min)
            .min(20.0);
        check(&domain, &points, half * share);
    }
}
