//! A radius tiny against the points' spread still matches brute force.
//!
//! Duplicates within 10⁻¹² among points spread over a unit cube (or far
//! from the origin) ask for more cells per axis than cell coordinates can
//! count; the spatial hash then widens its cells to the spread's share of
//! its key range. These sets mix exact duplicates, points a few ulps apart
//! and points far apart, so a cell choice that lost a pair or kept a far
//! one would show.

use crate::support::{Rng, check_points};
use glam::Vec3;
use proptest::prelude::*;

/// `count` points over `[offset, offset + spread)³`, every third one a copy
/// of an earlier point, every fifth one an earlier point nudged by one ulp
/// along x.
fn duplicates(rng: &mut Rng, count: usize, spread: f32, offset: Vec3) -> Vec<Vec3> {
    let mut points: Vec<Vec3> = Vec::with_capacity(count);
    for i in 0..count {
        let p = match i {
            0 => offset + rng.point(0.0, spread),
            _ if i % 3 == 0 => points[rng.next_u64() as usize % points.len()],
            _ if i % 5 == 0 => {
                let q = points[rng.next_u64() as usize % points.len()];
                Vec3::new(q.x.next_up(), q.y, q.z)
            }
            _ => offset + rng.point(0.0, spread),
        };
        points.push(p);
    }
    points
}

#[test]
fn duplicates_in_a_unit_cube_at_radius_1e_minus_12() {
    let mut rng = Rng(7);
    let points = duplicates(&mut rng, 300, 1.0, Vec3::ZERO);
    let probes = [points[3], points[5], Vec3::splat(0.5)];
    check_points(&points, 1e-12, &probes, &[0.0, 1e-12]);
}

#[test]
fn duplicates_far_from_the_origin() {
    let mut rng = Rng(11);
    let points = duplicates(&mut rng, 300, 1e4, Vec3::new(-3e7, 5e6, 1e3));
    check_points(&points, 1e-9, &[points[6]], &[1e-9]);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 24,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Random spreads and offsets, radii from zero to a few ulps of the
    /// spread.
    #[test]
    fn tiny_radius_matches_brute_force(
        seed in 1u64..u64::MAX,
        count in 2usize..160,
        spread in prop_oneof![Just(1.0f32), Just(1e3), Just(1e9), Just(3e30)],
        offset in prop_oneof![Just(0.0f32), Just(-1e6), Just(2.5e12)],
        radius in prop_oneof![Just(0.0f32), Just(1e-30), Just(1e-12), Just(1e-6)],
    ) {
        let mut rng = Rng(seed);
        let points = duplicates(&mut rng, count, spread, Vec3::splat(offset));
        check_points(&points, radius, &[points[0]], &[0.0, radius]);
    }
}
