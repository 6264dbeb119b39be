//! The neighbor-search input contract: NaN and infinite coordinates, bad
//! radii and mismatched slices are typed errors naming the first problem,
//! never a panic; a failed build leaves an empty, reusable structure; a bad
//! query leaves its output untouched; awkward valid inputs (-0.0,
//! subnormals, ±f32::MAX, radius 0) give exact answers.

use crate::support;

use broadphase_neighbors::{Axis, MAX_RADIUS, NeighborLists, PointError};
use glam::Vec3;
use support::{Any, all_structures, check_points};

fn good_points() -> Vec<Vec3> {
    (0..12).map(|i| Vec3::splat(i as f32 * 0.4)).collect()
}

/// After a failed build: nothing indexed, and a good build works again.
fn assert_empty_then_reusable(name: &str, s: &mut Any) {
    assert_eq!(s.len(), 0, "{name}");
    let mut pairs = vec![[7, 7]];
    s.pairs(&mut pairs);
    assert!(pairs.is_empty(), "{name}: a failed build left pairs");
    let mut lists = NeighborLists::default();
    s.lists(&mut lists);
    assert_eq!((lists.len(), lists.total()), (0, 0), "{name}");
    let mut hits = vec![7];
    s.query(Vec3::ZERO, 0.0, &mut hits).unwrap();
    assert!(hits.is_empty(), "{name}: a failed build left points");
    s.build(&good_points(), 0.7).unwrap(); // consecutive points are 0.4·√3 apart
    s.pairs(&mut pairs);
    assert_eq!(pairs.len(), 11, "{name}: rebuilt");
}

#[test]
fn non_finite_coordinates_name_the_first_bad_point() {
    for axis in [Axis::X, Axis::Y, Axis::Z] {
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut points = good_points();
            points[9][axis as usize] = f32::NAN;
            points[5][axis as usize] = bad;
            let radii = vec![1.0; points.len()];
            for (name, mut s) in all_structures() {
                s.build(&good_points(), 1.0).unwrap();
                let err = s.build(&points, 1.0).unwrap_err();
                match err {
                    PointError::NotFinite { index: 5, axis: a, value } => {
                        assert_eq!(a, axis, "{name}");
                        assert_eq!(value.to_bits(), bad.to_bits(), "{name}");
                    }
                    other => panic!("{name}: {other:?}"),
                }
                assert_empty_then_reusable(&name, &mut s);
                let err = s.build_spheres(&points, &radii).unwrap_err();
                assert!(matches!(err, PointError::NotFinite { index: 5, .. }), "{name}: {err:?}");
                assert_empty_then_reusable(&name, &mut s);
            }
        }
    }
}

#[test]
fn bad_radii_are_typed_errors() {
    let points = good_points();
    for (name, mut s) in all_structures() {
        for bad in [f32::NAN, f32::INFINITY, -1.0, -f32::MIN_POSITIVE] {
            let err = s.build(&points, bad).unwrap_err();
            assert!(matches!(err, PointError::InvalidRadius { .. }), "{name}: {err:?}");
            assert_empty_then_reusable(&name, &mut s);

            let mut radii = vec![0.5; points.len()];
            radii[8] = 0.1;
            radii[3] = bad;
            let err = s.build_spheres(&points, &radii).unwrap_err();
            assert!(
                matches!(err, PointError::InvalidSphereRadius { index: 3, .. }),
                "{name}: {err:?}"
            );
            assert_empty_then_reusable(&name, &mut s);
        }
        let err = s.build_spheres(&points, &[1.0; 3]).unwrap_err();
        assert_eq!(err, PointError::LengthMismatch { centers: 12, radii: 3 }, "{name}");
        assert_empty_then_reusable(&name, &mut s);
    }
}

#[test]
fn bad_queries_leave_the_output_untouched() {
    for (name, mut s) in all_structures() {
        s.build(&good_points(), 1.0).unwrap();
        let mut hits = vec![42];
        let err = s.query(Vec3::new(0.0, f32::NAN, 0.0), 1.0, &mut hits).unwrap_err();
        assert!(matches!(err, PointError::NotFinite { index: 0, axis: Axis::Y, .. }), "{name}");
        let err = s.query(Vec3::ZERO, -0.5, &mut hits).unwrap_err();
        assert!(matches!(err, PointError::InvalidRadius { .. }), "{name}");
        let err = s.query(Vec3::ZERO, f32::INFINITY, &mut hits).unwrap_err();
        assert!(matches!(err, PointError::InvalidRadius { .. }), "{name}");
        let err = s.query(Vec3::ZERO, 1.0f32.next_up(), &mut hits).unwrap_err();
        assert_eq!(
            err,
            PointError::QueryRadiusTooLarge { radius: 1.0f32.next_up(), max: 1.0 },
            "{name}"
        );
        assert_eq!(hits, [42], "{name}: output touched by a failed query");

        // Spheres: a query may reach the largest radius, not beyond.
        s.build_spheres(&good_points(), &[0.25; 12]).unwrap();
        assert!(s.query(Vec3::ZERO, 0.25, &mut hits).is_ok(), "{name}");
        let err = s.query(Vec3::ZERO, 0.5, &mut hits).unwrap_err();
        assert!(matches!(err, PointError::QueryRadiusTooLarge { max: 0.25, .. }), "{name}");
    }
}

#[test]
fn awkward_valid_inputs_are_exact() {
    let points = vec![
        Vec3::ZERO,
        Vec3::new(-0.0, -0.0, -0.0),
        Vec3::splat(f32::MIN_POSITIVE / 4.0), // subnormal
        Vec3::splat(-f32::MIN_POSITIVE),
        Vec3::splat(f32::MAX),
        Vec3::splat(f32::MAX),
        Vec3::splat(f32::MIN),
        Vec3::new(f32::MAX, 0.0, f32::MIN),
        Vec3::new(1e-30, -1e-30, 0.0),
    ];
    check_points(&points, 0.0, &points, &[0.0]);
    check_points(&points, 1e-20, &points, &[0.0, 1e-20]);
    check_points(&points, 1.0, &points, &[0.0, 1.0]);
    // The largest radius accepted (its square is still finite); above it
    // is an error, see `radius_whose_square_overflows.rs`.
    check_points(&points[..4], MAX_RADIUS, &points[..4], &[MAX_RADIUS]);
}
