//! A radius whose square overflows `f32` is a typed error.
//!
//! Found by the fuzz corpus replay: with radius 1e24 the brute-force oracle
//! called every pair of 41 points neighbors (r² = inf, so d² <= r² for any
//! distance), while the grid, searching cells of that size, correctly left
//! out points more than 1e24 apart. Distances are compared squared in f32,
//! so a radius above `MAX_RADIUS` (1e19, below sqrt(f32::MAX)) cannot mean
//! what it says; every structure and oracle now rejects it, and sphere
//! radii above half of it, with the same error.

use broadphase_neighbors::{
    CountingSortGrid, MAX_RADIUS, NeighborSearch, PointError, SpatialHash, SpatialIndex,
    brute_force_neighbor_pairs, brute_force_sphere_contacts,
};
use glam::Vec3;

#[test]
fn radius_past_the_largest_squarable_is_rejected_everywhere() {
    let points = [Vec3::ZERO, Vec3::new(3.0e24, 0.0, 0.0), Vec3::new(-3.0e38, 0.0, 0.0)];
    let mut out = Vec::new();
    for radius in [1.0e24, 1.9e19, f32::MAX] {
        let wanted = Err(PointError::InvalidRadius { value: radius });
        assert_eq!(brute_force_neighbor_pairs(&points, radius, &mut out), wanted);
        assert_eq!(CountingSortGrid::default().build(&points, radius), wanted);
        assert_eq!(SpatialHash::default().build(&points, radius), wanted);
        assert_eq!(SpatialIndex::default().build(&points, radius), wanted);
    }
    let radii = [1.0, MAX_RADIUS, 1.0];
    let wanted = Err(PointError::InvalidSphereRadius { index: 1, value: MAX_RADIUS });
    assert_eq!(brute_force_sphere_contacts(&points, &radii, &mut out), wanted);
    assert_eq!(CountingSortGrid::default().build_spheres(&points, &radii), wanted);
}

#[test]
fn the_largest_radius_still_matches_brute_force() {
    let points = [
        Vec3::ZERO,
        Vec3::new(MAX_RADIUS, 0.0, 0.0), // exactly at the radius: a neighbor
        Vec3::new(0.0, MAX_RADIUS * 1.5, 0.0), // beyond it
        Vec3::new(-3.0e38, 3.0e38, 0.0), // so far that d² overflows: not a neighbor
        Vec3::new(1.0, 1.0, 1.0),
    ];
    let mut expected = Vec::new();
    brute_force_neighbor_pairs(&points, MAX_RADIUS, &mut expected).unwrap();
    assert!(expected.contains(&[0, 1]) && !expected.contains(&[0, 3]));
    fn pairs_of(mut structure: impl NeighborSearch, points: &[Vec3]) -> Vec<[u32; 2]> {
        structure.build(points, MAX_RADIUS).unwrap();
        let mut pairs = Vec::new();
        structure.neighbor_pairs(&mut pairs);
        pairs.sort_unstable();
        pairs
    }
    assert_eq!(pairs_of(CountingSortGrid::default(), &points), expected);
    assert_eq!(pairs_of(SpatialHash::default(), &points), expected);
    assert_eq!(pairs_of(SpatialIndex::default(), &points), expected);
}
