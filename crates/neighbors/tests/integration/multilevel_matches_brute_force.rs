//! Sphere contacts across levels of radii against brute force: radii
//! spread over one to five orders of magnitude, radii exactly on the
//! level boundaries, zeros among them, one level, contacts exactly at the
//! sum of the radii, and the typed errors.

use broadphase_neighbors::{
    Axis, LEVEL_RATIO, MultiLevelGrid, PointError, brute_force_sphere_contacts,
};
use glam::Vec3;
use proptest::prelude::*;
use support::Rng;

use crate::support;

fn check(centers: &[Vec3], radii: &[f32]) -> usize {
    let mut expected = Vec::new();
    brute_force_sphere_contacts(centers, radii, &mut expected).unwrap();
    let mut grid = MultiLevelGrid::default();
    grid.build_spheres(centers, radii).unwrap();
    let mut contacts = Vec::new();
    grid.contacts(&mut contacts);
    contacts.sort_unstable();
    assert_eq!(contacts, expected, "{} spheres in {} levels", centers.len(), grid.levels());
    grid.levels()
}

/// Log-uniform in `[lo, hi)`.
fn log_uniform(rng: &mut Rng, lo: f32, hi: f32) -> f32 {
    lo * (hi / lo).powf(rng.unit())
}

#[test]
fn radii_over_one_to_five_orders_of_magnitude() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for (lo, hi, side) in
        [(1.0, 10.0, 60.0), (0.1, 10.0, 80.0), (0.01, 10.0, 60.0), (1e-4, 10.0, 50.0)]
    {
        let centers: Vec<Vec3> = (0..1_500).map(|_| rng.point(0.0, side)).collect();
        let radii: Vec<f32> = (0..1_500).map(|_| log_uniform(&mut rng, lo, hi)).collect();
        let levels = check(&centers, &radii);
        let spread = (hi / lo).log(LEVEL_RATIO).ceil() as usize;
        assert!(levels >= spread.min(2) && levels <= spread + 1, "{levels} levels for {lo}..{hi}");
    }
}

#[test]
fn radii_on_the_level_boundaries_and_zeros() {
    let mut rng = Rng(9);
    // 8, 2, 0.5, 0.125 and their neighbors in f32: exactly a factor of 4
    // apart, where a sphere could fall into either of two levels.
    let mut radii = Vec::new();
    for r in [8.0f32, 2.0, 0.5, 0.125] {
        radii.extend([r, r.next_up(), r.next_down()]);
    }
    radii.extend([0.0, 0.0, 0.0]);
    let radii: Vec<f32> = (0..1_200).map(|i| radii[i % radii.len()]).collect();
    let centers: Vec<Vec3> = (0..1_200).map(|_| rng.point(0.0, 40.0)).collect();
    check(&centers, &radii);
}

#[test]
fn contacts_exactly_at_the_sum_of_the_radii() {
    // A big sphere of radius 3 at the origin and small ones of radius 0.25
    // whose centers lie exactly 3.25 away on each axis, and 0.5 apart
    // from each other along a line (touching).
    let mut centers = vec![Vec3::ZERO];
    let mut radii = vec![3.0];
    for axis in [Vec3::X, Vec3::Y, Vec3::Z, -Vec3::X, -Vec3::Y, -Vec3::Z] {
        centers.push(axis * 3.25);
        radii.push(0.25);
    }
    for k in 0..10 {
        centers.push(Vec3::new(10.0 + 0.5 * k as f32, 0.0, 0.0));
        radii.push(0.25);
    }
    assert_eq!(check(&centers, &radii), 2);
}

#[test]
fn one_level_empty_and_single() {
    let mut rng = Rng(4);
    let centers: Vec<Vec3> = (0..800).map(|_| rng.point(0.0, 30.0)).collect();
    let radii: Vec<f32> = (0..800).map(|_| log_uniform(&mut rng, 1.0, 3.9)).collect();
    assert_eq!(check(&centers, &radii), 1);
    assert_eq!(check(&[], &[]), 1);
    assert_eq!(check(&[Vec3::ONE], &[2.0]), 1);
    assert_eq!(check(&[Vec3::ONE, Vec3::ONE], &[0.0, 0.0]), 1);
}

#[test]
fn warm_rebuilds_with_changing_levels() {
    let mut rng = Rng(21);
    let mut grid = MultiLevelGrid::default();
    let (mut contacts, mut expected) = (Vec::new(), Vec::new());
    for (round, (lo, hi)) in
        [(0.01, 5.0), (1.0, 2.0), (1e-3, 9.0), (0.5, 0.6)].into_iter().enumerate()
    {
        let centers: Vec<Vec3> = (0..600).map(|_| rng.point(0.0, 25.0)).collect();
        let radii: Vec<f32> = (0..600).map(|_| log_uniform(&mut rng, lo, hi)).collect();
        grid.build_spheres(&centers, &radii).unwrap();
        grid.contacts(&mut contacts);
        contacts.sort_unstable();
        brute_force_sphere_contacts(&centers, &radii, &mut expected).unwrap();
        assert_eq!(contacts, expected, "round {round}");
    }
}

#[test]
fn bad_input_is_the_same_typed_error_as_one_grid() {
    let mut grid = MultiLevelGrid::default();
    let centers = [Vec3::ZERO, Vec3::new(1.0, f32::NAN, 0.0), Vec3::ONE];
    assert!(matches!(
        grid.build_spheres(&centers, &[1.0, 0.1, 0.01]),
        Err(PointError::NotFinite { index: 1, axis: Axis::Y, .. })
    ));
    assert_eq!(
        grid.build_spheres(&[Vec3::ZERO, Vec3::ONE], &[1.0, -0.5]),
        Err(PointError::InvalidSphereRadius { index: 1, value: -0.5 })
    );
    assert_eq!(
        grid.build_spheres(&[Vec3::ZERO], &[1.0, 2.0]),
        Err(PointError::LengthMismatch { centers: 1, radii: 2 })
    );
    assert_eq!(grid.levels(), 0, "a refused build holds nothing");
    let mut contacts = vec![[7, 7]];
    grid.contacts(&mut contacts);
    assert!(contacts.is_empty());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn any_spheres(
        spheres in prop::collection::vec(
            ((-30.0f32..30.0, -30.0f32..30.0, -30.0f32..30.0), 0u32..6, 0.0f32..1.0),
            0..200,
        ),
    ) {
        // Radii 10^-e scaled: five orders of magnitude, zeros included.
        let centers: Vec<Vec3> = spheres.iter().map(|&((x, y, z), _, _)| Vec3::new(x, y, z)).collect();
        let radii: Vec<f32> = spheres
            .iter()
            .map(|&(_, e, f)| if e == 5 { 0.0 } else { 8.0 * f / 10f32.powi(e as i32) })
            .collect();
        check(&centers, &radii);
    }
}
