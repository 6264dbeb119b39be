//! Verlet lists against brute force over moving points: whenever the lists
//! say they still hold, the filtered rows are brute force's rows within the
//! radius; when points move too far, `update` rebuilds and they are exact
//! again. Lattices at exactly the radius, a zero skin, moves of exactly and
//! about half the skin, every structure, and the typed errors.

use broadphase_neighbors::{
    CountingSortGrid, NeighborLists, NeighborSearch, PointError, SpatialHash, SpatialIndex,
    VerletError, VerletLists, brute_force_neighbor_pairs, brute_force_neighbor_rows,
};
use glam::Vec3;
use proptest::prelude::*;
use support::Rng;

use crate::support;

/// The filtered rows (sorted) against brute force's.
fn check_rows(verlet: &mut VerletLists, points: &[Vec3], what: &str) {
    let mut lists = NeighborLists::default();
    verlet.neighbors_within(points, &mut lists).unwrap();
    let mut pairs = Vec::new();
    brute_force_neighbor_pairs(points, verlet.radius(), &mut pairs).unwrap();
    let expected = brute_force_neighbor_rows(points.len(), &pairs);
    assert_eq!(lists.len(), points.len(), "{what}");
    for (row, want) in expected.iter().enumerate() {
        let mut got = lists.neighbors(row).to_vec();
        got.sort_unstable();
        let mut want = want.clone();
        want.sort_unstable();
        assert_eq!(got, want, "{what}: row {row}");
    }
}

/// Points drifting by up to `speed` per step, over `steps` steps, through
/// `update`; every step exact. Returns how many steps rebuilt.
fn drift(
    search: &mut impl NeighborSearch,
    points: &mut [Vec3],
    radius: f32,
    skin: f32,
    speed: f32,
    steps: usize,
) -> usize {
    let mut rng = Rng(points.len() as u64 * 31 + 7);
    let mut verlet = VerletLists::new(radius, skin).unwrap();
    let mut rebuilds = 0;
    for step in 0..steps {
        rebuilds += usize::from(verlet.update(search, points).unwrap());
        assert!(verlet.is_valid(points).unwrap(), "step {step}: valid right after update");
        check_rows(&mut verlet, points, &format!("step {step}"));
        for p in points.iter_mut() {
            *p += rng.point(-speed, speed);
        }
    }
    rebuilds
}

#[test]
fn drifting_points_stay_exact_on_every_structure() {
    let mut rng = Rng(3);
    let start: Vec<Vec3> = (0..700).map(|_| rng.point(-10.0, 10.0)).collect();
    for (name, rebuilds) in [
        ("grid", drift(&mut CountingSortGrid::default(), &mut start.clone(), 1.0, 0.3, 0.02, 40)),
        ("hash", drift(&mut SpatialHash::default(), &mut start.clone(), 1.0, 0.3, 0.02, 40)),
        ("index", drift(&mut SpatialIndex::default(), &mut start.clone(), 1.0, 0.3, 0.02, 40)),
    ] {
        // Up to 0.035 a step per point: the skin lasts a few steps.
        assert!(rebuilds > 1 && rebuilds < 40, "{name}: {rebuilds} rebuilds in 40 steps");
    }
    // No skin: every step that moves rebuilds.
    let rebuilds = drift(&mut CountingSortGrid::default(), &mut start.clone(), 1.0, 0.0, 0.02, 10);
    assert_eq!(rebuilds, 10);
}

#[test]
fn a_lattice_moving_onto_exactly_the_radius() {
    // Spacing 1.1 shrinking to exactly 1.0 (the radius) in small steps:
    // pairs enter the radius from the skin, and at the end sit on it.
    let lattice = |spacing: f32| -> Vec<Vec3> {
        (0..343)
            .map(|i| Vec3::new((i % 7) as f32, ((i / 7) % 7) as f32, (i / 49) as f32) * spacing)
            .collect()
    };
    let mut verlet = VerletLists::new(1.0, 0.8).unwrap();
    let mut grid = CountingSortGrid::default();
    for k in 0..=10 {
        let points = lattice(1.1 - 0.01 * k as f32);
        verlet.update(&mut grid, &points).unwrap();
        check_rows(&mut verlet, &points, &format!("spacing step {k}"));
    }
    let points = lattice(1.0);
    verlet.update(&mut grid, &points).unwrap();
    check_rows(&mut verlet, &points, "spacing 1.0");
}

#[test]
fn moves_of_about_half_the_skin() {
    let mut rng = Rng(11);
    let start: Vec<Vec3> = (0..400).map(|_| rng.point(-6.0, 6.0)).collect();
    let mut grid = CountingSortGrid::default();
    let mut verlet = VerletLists::new(1.0, 0.4).unwrap();
    verlet.rebuild(&mut grid, &start).unwrap();
    // A quarter of the skin along x: still valid, and exact.
    let quarter: Vec<Vec3> = start.iter().map(|p| *p + Vec3::new(0.1, 0.0, 0.0)).collect();
    assert!(verlet.is_valid(&quarter).unwrap());
    check_rows(&mut verlet, &quarter, "a quarter of the skin");
    // Exactly half the skin: the margin for rounding refuses it.
    let half: Vec<Vec3> = start.iter().map(|p| *p + Vec3::new(0.2, 0.0, 0.0)).collect();
    assert!(!verlet.is_valid(&half).unwrap());
    // Just under half (by more than the margin): valid, exact.
    let under: Vec<Vec3> = start.iter().map(|p| *p + Vec3::new(0.199, 0.0, 0.0)).collect();
    assert!(verlet.is_valid(&under).unwrap());
    check_rows(&mut verlet, &under, "just under half the skin");
    // Opposite moves of half the skin each bring pairs a whole skin
    // nearer: the worst case the lists must still hold.
    let opposite: Vec<Vec3> = start
        .iter()
        .enumerate()
        .map(|(i, p)| *p + Vec3::new(if i % 2 == 0 { 0.199 } else { -0.199 }, 0.0, 0.0))
        .collect();
    assert!(verlet.is_valid(&opposite).unwrap());
    check_rows(&mut verlet, &opposite, "opposite moves");
}

#[test]
fn unmoved_points_keep_the_lists_even_without_a_skin() {
    let mut rng = Rng(5);
    let points: Vec<Vec3> = (0..300).map(|_| rng.point(-5.0, 5.0)).collect();
    let mut grid = CountingSortGrid::default();
    let mut verlet = VerletLists::new(0.9, 0.0).unwrap();
    assert!(verlet.update(&mut grid, &points).unwrap());
    assert!(!verlet.update(&mut grid, &points).unwrap(), "nothing moved: no rebuild");
    check_rows(&mut verlet, &points, "unmoved");
}

#[test]
fn empty_and_single_point_sets() {
    let mut grid = CountingSortGrid::default();
    let mut verlet = VerletLists::new(1.0, 0.2).unwrap();
    assert!(verlet.update(&mut grid, &[]).unwrap());
    check_rows(&mut verlet, &[], "empty");
    assert!(verlet.update(&mut grid, &[Vec3::ONE]).unwrap(), "the count changed: rebuilt");
    check_rows(&mut verlet, &[Vec3::ONE], "one point");
}

#[test]
fn bad_input_is_a_typed_error() {
    assert!(matches!(
        VerletLists::new(-1.0, 0.1),
        Err(VerletError::Point(PointError::InvalidRadius { .. }))
    ));
    for skin in [-0.1, f32::NAN, f32::INFINITY, 2.0e19] {
        assert!(matches!(VerletLists::new(1.0, skin), Err(VerletError::BadSkin { .. })), "{skin}");
    }
    let mut verlet = VerletLists::new(1.0, 0.1).unwrap();
    let points = [Vec3::ZERO, Vec3::X];
    let mut lists = NeighborLists::default();
    assert_eq!(verlet.is_valid(&points), Err(VerletError::NotBuilt));
    assert_eq!(verlet.neighbors_within(&points, &mut lists), Err(VerletError::NotBuilt));
    let mut grid = CountingSortGrid::default();
    verlet.rebuild(&mut grid, &points).unwrap();
    assert_eq!(verlet.is_valid(&points[..1]), Err(VerletError::CountChanged { built: 2, now: 1 }));
    assert_eq!(
        verlet.neighbors_within(&points[..1], &mut lists),
        Err(VerletError::CountChanged { built: 2, now: 1 })
    );
    let nan = [Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0)];
    assert!(matches!(
        verlet.is_valid(&nan),
        Err(VerletError::Point(PointError::NotFinite { index: 1, .. }))
    ));
    assert!(matches!(
        verlet.update(&mut grid, &nan),
        Err(VerletError::Point(PointError::NotFinite { index: 1, .. }))
    ));
    let message = VerletError::CountChanged { built: 2, now: 1 }.to_string();
    assert!(message.contains('2') && message.contains('1'), "{message}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn any_points_any_small_moves(
        start in prop::collection::vec((-8.0f32..8.0, -8.0f32..8.0, -8.0f32..8.0), 0..120),
        radius in 0.0f32..2.0,
        skin in 0.0f32..1.0,
        moves in prop::collection::vec((-0.3f32..0.3, -0.3f32..0.3, -0.3f32..0.3), 1..6),
    ) {
        let mut points: Vec<Vec3> = start.iter().map(|&(x, y, z)| Vec3::new(x, y, z)).collect();
        let mut grid = CountingSortGrid::default();
        let mut verlet = VerletLists::new(radius, skin).unwrap();
        for (step, &(dx, dy, dz)) in moves.iter().enumerate() {
            verlet.update(&mut grid, &points).unwrap();
            check_rows(&mut verlet, &points, &format!("step {step}"));
            // Each point moves by a share of this step's move.
            for (i, p) in points.iter_mut().enumerate() {
                *p += Vec3::new(dx, dy, dz) * ((i % 5) as f32 / 4.0 - 0.5);
            }
            // Between updates, trust the lists only if they say so.
            if verlet.is_valid(&points).unwrap() {
                check_rows(&mut verlet, &points, &format!("after move {step}"));
            }
        }
    }
}
