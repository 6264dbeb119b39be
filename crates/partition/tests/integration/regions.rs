//! Regions: every pair comes out of exactly one region, whatever the cuts,
//! against brute force over the whole input.

use broadphase_kernel::{Aabb, InputError, brute_force_pairs};
use broadphase_neighbors::{
    PeriodicDomain, PeriodicError, PointError, brute_force_neighbor_pairs,
    brute_force_periodic_pairs,
};
use broadphase_partition::{Assignment, RegionError, Regions};
use broadphase_storage::Axis;
use glam::Vec3;
use proptest::prelude::*;

/// The members of each region, by region id.
fn members(assignment: &Assignment, count: u32) -> Vec<Vec<u32>> {
    let mut members = vec![Vec::new(); count as usize];
    for i in 0..assignment.len() {
        for &region in assignment.regions_of(i) {
            members[region as usize].push(i as u32);
        }
    }
    members
}

/// Every pair the regions own, as each region's own search finds it
/// (`search` over the region's members), with duplicates kept.
fn owned_pairs(
    count: u32,
    members: &[Vec<u32>],
    mut search: impl FnMut(&[u32], &mut Vec<[u32; 2]>),
    owner: impl Fn(u32, u32) -> u32,
) -> Vec<[u32; 2]> {
    let mut found = Vec::new();
    let mut local = Vec::new();
    for region in 0..count {
        let ids = &members[region as usize];
        search(ids, &mut local);
        for &[a, b] in &local {
            let (i, j) = (ids[a as usize], ids[b as usize]);
            if owner(i, j) == region {
                found.push([i.min(j), i.max(j)]);
            }
        }
    }
    // Sorted with duplicates kept: a pair found twice fails the match.
    found.sort_unstable();
    found
}

fn point_pairs_by_region(regions: &Regions, points: &[Vec3], r: f32) -> Vec<[u32; 2]> {
    let mut assignment = Assignment::default();
    regions.assign_points(points, r, None, &mut assignment).unwrap();
    check_homes(regions, points, &assignment);
    owned_pairs(
        regions.count(),
        &members(&assignment, regions.count()),
        |ids, out| {
            let local: Vec<Vec3> = ids.iter().map(|&i| points[i as usize]).collect();
            brute_force_neighbor_pairs(&local, r, out).unwrap();
        },
        |i, j| assignment.point_pair_owner(i as usize, j as usize),
    )
}

fn periodic_pairs_by_region(
    regions: &Regions,
    domain: &PeriodicDomain,
    points: &[Vec3],
    r: f32,
) -> Vec<[u32; 2]> {
    let mut assignment = Assignment::default();
    regions.assign_points(points, r, Some(domain), &mut assignment).unwrap();
    owned_pairs(
        regions.count(),
        &members(&assignment, regions.count()),
        |ids, out| {
            let local: Vec<Vec3> = ids.iter().map(|&i| points[i as usize]).collect();
            brute_force_periodic_pairs(domain, &local, r, out).unwrap();
        },
        |i, j| assignment.point_pair_owner(i as usize, j as usize),
    )
}

fn box_pairs_by_region(regions: &Regions, boxes: &[Aabb]) -> Vec<[u32; 2]> {
    let mut assignment = Assignment::default();
    regions.assign_boxes(boxes, &mut assignment).unwrap();
    owned_pairs(
        regions.count(),
        &members(&assignment, regions.count()),
        |ids, out| {
            let local: Vec<Aabb> = ids.iter().map(|&i| boxes[i as usize]).collect();
            brute_force_pairs(&local, out).unwrap();
        },
        |i, j| regions.box_pair_owner(&boxes[i as usize], &boxes[j as usize]).unwrap(),
    )
}

/// Each point's home is the one region whose half-open box holds it, and
/// is among the regions it was sent to.
fn check_homes(regions: &Regions, points: &[Vec3], assignment: &Assignment) {
    for (i, &p) in points.iter().enumerate() {
        let holding: Vec<u32> = (0..regions.count())
            .filter(|&id| {
                let (lo, hi) = regions.bounds(id).unwrap();
                (0..3).all(|a| lo[a] <= p[a] && p[a] < hi[a])
            })
            .collect();
        assert_eq!(holding, [assignment.home(i)], "point {i} at {p}");
        assert_eq!(regions.home(p).unwrap(), assignment.home(i));
        assert!(assignment.regions_of(i).contains(&assignment.home(i)));
    }
}

fn expected_point_pairs(points: &[Vec3], r: f32) -> Vec<[u32; 2]> {
    let mut expected = Vec::new();
    brute_force_neighbor_pairs(points, r, &mut expected).unwrap();
    expected.sort_unstable();
    expected
}

/// Cuts per axis from a few small integers (some repeated: empty regions).
fn cuts_strategy() -> impl Strategy<Value = [Vec<f32>; 3]> {
    let axis = || prop::collection::vec(-3i8..=13, 0..5);
    (axis(), axis(), axis()).prop_map(|(x, y, z)| {
        [x, y, z].map(|mut c| {
            c.sort_unstable();
            c.into_iter().map(f32::from).collect()
        })
    })
}

/// Points on a grid of quarters in [0, 10]: many lie exactly on cuts.
fn points_strategy(max: usize) -> impl Strategy<Value = Vec<Vec3>> {
    prop::collection::vec((0u8..=40, 0u8..=40, 0u8..=40), 0..max).prop_map(|v| {
        v.into_iter()
            .map(|(x, y, z)| Vec3::new(f32::from(x), f32::from(y), f32::from(z)) * 0.25)
            .collect()
    })
}

proptest! {
    #[test]
    fn every_point_pair_comes_from_exactly_one_region(
        cuts in cuts_strategy(),
        points in points_strategy(120),
        r in prop_oneof![Just(0.0f32), Just(0.25), Just(1.0), 0.0f32..4.0],
    ) {
        let regions = Regions::new(cuts).unwrap();
        prop_assert_eq!(point_pairs_by_region(&regions, &points, r), expected_point_pairs(&points, r));
    }

    #[test]
    fn every_box_pair_comes_from_exactly_one_region(
        cuts in cuts_strategy(),
        corners in prop::collection::vec(((0u8..=40, 0u8..=40, 0u8..=40), (0u8..=20, 0u8..=20, 0u8..=20)), 0..80),
    ) {
        let regions = Regions::new(cuts).unwrap();
        let boxes: Vec<Aabb> = corners
            .into_iter()
            .map(|((x, y, z), (w, h, d))| {
                let min = Vec3::new(f32::from(x), f32::from(y), f32::from(z)) * 0.25;
                Aabb::new(min, min + Vec3::new(f32::from(w), f32::from(h), f32::from(d)) * 0.25)
            })
            .collect();
        let mut expected = Vec::new();
        brute_force_pairs(&boxes, &mut expected).unwrap();
        expected.sort_unstable();
        prop_assert_eq!(box_pairs_by_region(&regions, &boxes), expected);
    }

    #[test]
    fn every_periodic_pair_comes_from_exactly_one_region(
        cuts in cuts_strategy(),
        points in points_strategy(100),
        wrap in prop::array::uniform3(any::<bool>()),
        r in prop_oneof![Just(5.0f32), Just(0.25), 0.0f32..5.0],
    ) {
        let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(10.0), wrap).unwrap();
        let regions = Regions::new(cuts).unwrap();
        let mut expected = Vec::new();
        brute_force_periodic_pairs(&domain, &points, r, &mut expected).unwrap();
        expected.sort_unstable();
        prop_assert_eq!(periodic_pairs_by_region(&regions, &domain, &points, r), expected);
    }

    #[test]
    fn sampled_regions_split_any_points_exactly(
        points in points_strategy(150),
        count in 1usize..12,
        r in 0.0f32..3.0,
    ) {
        let regions = Regions::from_sample(&points, count).unwrap();
        prop_assert_eq!(regions.count() as usize, count);
        prop_assert_eq!(point_pairs_by_region(&regions, &points, r), expected_point_pairs(&points, r));
    }
}

#[test]
fn points_in_one_region_and_the_rest_empty() {
    let points: Vec<Vec3> = (0..60).map(|i| Vec3::new(5.0, 5.0, (i % 7) as f32 * 0.1)).collect();
    let regions = Regions::new([vec![-10.0, -10.0, 0.0, 100.0], vec![], vec![]]).unwrap();
    let mut assignment = Assignment::default();
    regions.assign_points(&points, 0.3, None, &mut assignment).unwrap();
    assert!(assignment.homes().iter().all(|&h| h == 3));
    assert_eq!(point_pairs_by_region(&regions, &points, 0.3), expected_point_pairs(&points, 0.3));
}

#[test]
fn a_box_spanning_every_region_is_sent_to_each() {
    let regions = Regions::new([vec![0.0, 1.0], vec![0.0], vec![5.0]]).unwrap();
    let mut boxes = vec![Aabb::new(Vec3::splat(-100.0), Vec3::splat(100.0))];
    boxes.extend(
        (0..20).map(|i| {
            Aabb::new(Vec3::splat(i as f32 * 0.5 - 3.0), Vec3::splat(i as f32 * 0.5 - 2.5))
        }),
    );
    let mut assignment = Assignment::default();
    regions.assign_boxes(&boxes, &mut assignment).unwrap();
    assert_eq!(assignment.regions_of(0), (0..regions.count()).collect::<Vec<_>>());
    let mut expected = Vec::new();
    brute_force_pairs(&boxes, &mut expected).unwrap();
    expected.sort_unstable();
    assert_eq!(box_pairs_by_region(&regions, &boxes), expected);
}

#[test]
fn a_point_on_a_face_has_the_region_above_it_as_home() {
    let regions = Regions::new([vec![1.0, 2.0], vec![], vec![]]).unwrap();
    assert_eq!(regions.home(Vec3::new(1.0, 0.0, 0.0)).unwrap(), 1);
    assert_eq!(regions.home(Vec3::new(2.0, 0.0, 0.0)).unwrap(), 2);
    assert_eq!(regions.home(Vec3::new(1.0f32.next_down(), 0.0, 0.0)).unwrap(), 0);
    // A face with a repeated cut: the region between is empty.
    let repeated = Regions::new([vec![1.0, 1.0], vec![], vec![]]).unwrap();
    assert_eq!(repeated.home(Vec3::new(1.0, 0.0, 0.0)).unwrap(), 2);
}

#[test]
fn halos_reach_across_float32_rounding() {
    // Coordinates far from the origin, where float32 steps are coarse; a
    // radius of exactly their distance.
    let base = 3.0e6f32;
    let step = base.next_up() - base;
    let points: Vec<Vec3> = (0..40).map(|i| Vec3::new(base + step * i as f32, 0.0, 0.0)).collect();
    let cuts: Vec<f32> = (1..8).map(|k| base + step * (5 * k) as f32).collect();
    let regions = Regions::new([cuts, vec![], vec![]]).unwrap();
    for r in [step, step * 3.0, step * 7.5] {
        assert_eq!(point_pairs_by_region(&regions, &points, r), expected_point_pairs(&points, r));
    }
}

#[test]
fn sampled_cuts_follow_the_widest_axis_and_the_quantiles() {
    let sample: Vec<Vec3> = (0..10).map(|i| Vec3::new(0.0, 0.0, i as f32)).collect();
    let regions = Regions::from_sample(&sample, 5).unwrap();
    assert_eq!(regions.cuts(Axis::Z), &[2.0, 4.0, 6.0, 8.0]);
    assert!(regions.cuts(Axis::X).is_empty() && regions.cuts(Axis::Y).is_empty());
    // An empty sample and a sample of one place still make `count` regions.
    assert_eq!(Regions::from_sample(&[], 3).unwrap().count(), 3);
    assert_eq!(Regions::from_sample(&[Vec3::ONE; 9], 4).unwrap().cuts(Axis::X), &[1.0; 3]);
    assert_eq!(Regions::from_sample(&sample, 1).unwrap(), Regions::default());
}

#[test]
fn bad_input_is_a_typed_error() {
    let regions = Regions::new([vec![0.0], vec![], vec![]]).unwrap();
    let mut out = Assignment::default();
    let nan = Vec3::new(0.0, f32::NAN, 0.0);
    assert!(matches!(
        regions.assign_points(&[Vec3::ZERO, nan], 1.0, None, &mut out),
        Err(RegionError::Point(PointError::NotFinite { index: 1, axis: Axis::Y, .. }))
    ));
    assert!(out.is_empty());
    for r in [-1.0, f32::NAN, f32::INFINITY] {
        assert!(matches!(
            regions.assign_points(&[Vec3::ZERO], r, None, &mut out),
            Err(RegionError::Point(PointError::InvalidRadius { .. }))
        ));
    }
    let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(4.0), [true, false, true]).unwrap();
    assert!(matches!(
        regions.assign_points(&[Vec3::ONE, Vec3::new(1.0, 4.5, 1.0)], 1.0, Some(&domain), &mut out),
        Err(RegionError::Periodic(PeriodicError::OutsideDomain { index: 1, axis: Axis::Y, .. }))
    ));
    assert!(matches!(
        regions.assign_points(&[Vec3::ONE], 2.5, Some(&domain), &mut out),
        Err(RegionError::Periodic(PeriodicError::RadiusAboveHalfBox { axis: Axis::X, .. }))
    ));
    let inverted = Aabb::new(Vec3::ONE, Vec3::ZERO);
    assert!(matches!(
        regions.assign_boxes(&[Aabb::new(Vec3::ZERO, Vec3::ONE), inverted], &mut out),
        Err(RegionError::Input(InputError::Inverted { index: 1, .. }))
    ));
    assert!(matches!(
        regions.box_pair_owner(&inverted, &inverted),
        Err(RegionError::Input(InputError::Inverted { index: 0, .. }))
    ));
    assert!(matches!(regions.home(Vec3::splat(f32::INFINITY)), Err(RegionError::Point(_))));
    assert!(matches!(
        Regions::new([vec![], vec![0.0, f32::NAN], vec![]]),
        Err(RegionError::BadCut { axis: Axis::Y, index: 1, .. })
    ));
    assert!(matches!(Regions::from_sample(&[], 0), Err(RegionError::RegionCount { count: 0 })));
    assert!(matches!(
        Regions::from_sample(&[Vec3::ZERO, nan], 2),
        Err(RegionError::Point(PointError::NotFinite { index: 1, .. }))
    ));
    let too_many = vec![0.0f32; 1 << 11];
    assert!(matches!(
        Regions::new([too_many.clone(), too_many.clone(), too_many]),
        Err(RegionError::RegionCount { .. })
    ));
    assert_eq!(regions.bounds(2), None);
}
