//! `CountingSortGrid::build_parallel` builds the single-thread grid, slot
//! for slot, on any thread count, and refuses what `build` refuses.

use crate::support;

use broadphase_jobs::{JobError, JobSystem};
use broadphase_neighbors::{
    BuildError, CountingSortGrid, NeighborLists, NeighborSearch, PointError,
};
use glam::Vec3;
use support::Rng;

/// Enough particles for several parts (a part is at least 32,768).
const COUNT: usize = 100_000;

fn scenes() -> Vec<(&'static str, Vec<Vec3>, f32)> {
    let mut rng = Rng(0x5eed_b11d);
    let uniform: Vec<Vec3> =
        (0..COUNT).map(|_| Vec3::new(rng.unit(), rng.unit(), rng.unit()) * 60.0).collect();
    // Clusters with duplicates and points snapped to cell-sized steps.
    let clustered: Vec<Vec3> = (0..COUNT)
        .map(|i| {
            let centre = Vec3::splat((i % 7) as f32 * 9.0);
            let p = centre + Vec3::new(rng.unit(), rng.unit(), rng.unit()) * 3.0;
            if i % 3 == 0 { (p * 2.0).round() * 0.5 } else { p }
        })
        .collect();
    // A flat sheet: one row of cells along y and z, all the spread along x.
    let sheet: Vec<Vec3> = (0..COUNT).map(|_| Vec3::new(rng.unit() * 5000.0, 0.0, 0.0)).collect();
    vec![("uniform", uniform, 1.5), ("clustered", clustered, 0.1), ("sheet", sheet, 0.01)]
}

fn assert_same(name: &str, parallel: &CountingSortGrid, serial: &CountingSortGrid) {
    assert_eq!(parallel.len(), serial.len(), "{name}: len");
    assert_eq!(parallel.dims(), serial.dims(), "{name}: dims");
    assert!(parallel.sorted_order() == serial.sorted_order(), "{name}: slots differ");
    let (mut a, mut b) = (NeighborLists::default(), NeighborLists::default());
    parallel.sorted_neighbor_lists(0..parallel.len(), &mut a);
    serial.sorted_neighbor_lists(0..serial.len(), &mut b);
    assert!(a.offsets() == b.offsets() && a.indices() == b.indices(), "{name}: lists differ");
}

#[test]
fn parallel_builds_are_the_serial_build() {
    let scenes = scenes();
    let mut rng = Rng(7);
    let unit_radii: Vec<f32> = (0..COUNT).map(|_| rng.unit()).collect();
    let mut serial = CountingSortGrid::default();
    // One grid through every thread count and scene: warm rebuilds too.
    let mut parallel = CountingSortGrid::default();
    for threads in [1, 2, 3, 4] {
        let jobs = JobSystem::new(threads);
        for (name, points, radius) in &scenes {
            let name = format!("{name} on {threads} threads");
            serial.build(points, *radius).expect("valid points");
            parallel.build_parallel(&jobs, points, *radius).expect("valid points");
            assert_same(&name, &parallel, &serial);

            let radii: Vec<f32> = unit_radii.iter().map(|r| r * radius * 0.5).collect();
            serial.build_spheres(points, &radii).expect("valid spheres");
            parallel.build_spheres_parallel(&jobs, points, &radii).expect("valid spheres");
            assert_same(&format!("{name}, spheres"), &parallel, &serial);
        }
        // Small sets build on the calling thread, the same grid.
        let few = &scenes[0].1[..1000];
        serial.build(few, 2.0).expect("valid points");
        parallel.build_parallel(&jobs, few, 2.0).expect("valid points");
        assert_same("a small set", &parallel, &serial);
        parallel.build_parallel(&jobs, &[], 2.0).expect("no points");
        assert!(parallel.is_empty());
    }
}

#[test]
fn parallel_builds_refuse_what_the_serial_build_refuses() {
    let jobs = JobSystem::new(2);
    let mut points = scenes().swap_remove(0).1;
    let mut grid = CountingSortGrid::default();
    let mut serial = CountingSortGrid::default();
    points[COUNT - 5] = Vec3::new(1.0, f32::INFINITY, 0.0);
    let refused = [
        (points.as_slice(), 1.0),
        (&points[..COUNT - 10], -1.0),
        (&points[..COUNT - 10], broadphase_neighbors::MAX_RADIUS * 2.0),
    ];
    for (points, radius) in refused {
        grid.build_parallel(&jobs, &points[..1000], 1.0).expect("valid points");
        let want = serial.build(points, radius).expect_err("refused");
        assert_eq!(grid.build_parallel(&jobs, points, radius), Err(BuildError::Point(want)));
        assert!(grid.is_empty(), "a refused build leaves the grid empty");
    }
    let radii = vec![0.5; 3];
    assert_eq!(
        grid.build_spheres_parallel(&jobs, &points[..4], &radii),
        Err(BuildError::Point(PointError::LengthMismatch { centers: 4, radii: 3 }))
    );
}

#[test]
fn a_parallel_build_inside_a_job_is_refused() {
    let jobs = JobSystem::new(2);
    let points = scenes().swap_remove(0).1;
    let mut grid = CountingSortGrid::default();
    let mut outcome = None;
    jobs.scope(|s| {
        s.spawn(|_| outcome = Some(grid.build_parallel(&jobs, &points, 1.0)));
    })
    .expect("the outer job does not panic");
    assert_eq!(outcome, Some(Err(BuildError::Job(JobError::WaitInsideJob))));
    assert!(grid.is_empty());
}

/// The input is checked in parts on the jobs: wherever the bad points
/// and radii sit (one part, several, a bad radius before or after the
/// first bad center), the error is the serial build's, and inputs that
/// pass give the serial bounds (the same grid).
#[test]
fn checks_in_parts_report_the_serial_builds_first_error() {
    let base = scenes().swap_remove(0).1;
    let n = base.len();
    let mut serial = CountingSortGrid::default();
    let mut grid = CountingSortGrid::default();
    let cases: [(&[usize], &[usize]); 7] = [
        (&[n - 3], &[]),
        (&[5, n - 3], &[]),
        (&[n / 2 + 1], &[n / 2]),
        (&[n / 2], &[n - 1]),
        (&[], &[n - 2]),
        (&[], &[7, n - 2]),
        (&[], &[]),
    ];
    for threads in [2, 3] {
        let jobs = JobSystem::new(threads);
        for (bad_centers, bad_radii) in cases {
            let mut points = base.clone();
            bad_centers.iter().for_each(|&i| points[i].y = f32::INFINITY);
            let mut radii = vec![0.5; n];
            bad_radii.iter().for_each(|&i| radii[i] = -1.0);
            let what = format!("{threads} threads, centers {bad_centers:?}, radii {bad_radii:?}");
            let want = serial.build_spheres(&points, &radii).map_err(BuildError::Point);
            let got = grid.build_spheres_parallel(&jobs, &points, &radii);
            assert_eq!(got, want, "{what}");
            if want.is_ok() {
                assert_same(&what, &grid, &serial);
            }
            let want = serial.build(&points, 1.0).map_err(BuildError::Point);
            assert_eq!(grid.build_parallel(&jobs, &points, 1.0), want, "{what}");
            if want.is_ok() {
                assert_same(&what, &grid, &serial);
            }
        }
    }
}
