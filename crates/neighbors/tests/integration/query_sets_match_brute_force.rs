//! Neighbors of a query set among a data set, on every structure, against
//! brute force: random sets of any sizes (either empty), queries exactly
//! at the radius from data points, queries outside the data and far away,
//! radius 0 and the build radius, spheres, the parallel fill on 1–4
//! threads, and the typed errors.

use broadphase_jobs::JobSystem;
use broadphase_neighbors::{
    Axis, CountingSortGrid, NeighborLists, NeighborSearch, ParallelNeighborLists, PointError,
    SpatialHash, SpatialIndex, brute_force_neighbors_of, brute_force_spheres_touching,
    neighbors_of,
};
use glam::Vec3;
use proptest::prelude::*;
use support::Rng;

use crate::support;

fn check(search: &impl NeighborSearch, data: &[Vec3], queries: &[Vec3], radius: f32, name: &str) {
    let (mut rows, mut expected) = (NeighborLists::default(), NeighborLists::default());
    neighbors_of(search, queries, radius, &mut rows).unwrap();
    brute_force_neighbors_of(data, queries, radius, &mut expected).unwrap();
    assert_eq!(rows.offsets(), expected.offsets(), "{name}: row lengths, radius {radius}");
    assert_eq!(rows.indices(), expected.indices(), "{name}: entries, radius {radius}");
}

fn check_all(data: &[Vec3], queries: &[Vec3], build: f32, radii: &[f32]) {
    let mut grid = CountingSortGrid::default();
    let mut hash = SpatialHash::default();
    let mut index = SpatialIndex::default();
    grid.build(data, build).unwrap();
    hash.build(data, build).unwrap();
    index.build(data, build).unwrap();
    for &radius in radii {
        check(&grid, data, queries, radius, "grid");
        check(&hash, data, queries, radius, "hash");
        check(&index, data, queries, radius, "index");
    }
}

#[test]
fn random_sets_of_different_sizes() {
    let mut rng = Rng(17);
    for (n, m) in [(1_000, 300), (50, 2_000), (0, 100), (400, 0), (1, 1)] {
        let data: Vec<Vec3> = (0..n).map(|_| rng.point(0.0, 15.0)).collect();
        let queries: Vec<Vec3> = (0..m).map(|_| rng.point(0.0, 17.0) - 1.0).collect();
        check_all(&data, &queries, 1.5, &[0.0, 0.7, 1.5]);
    }
}

#[test]
fn queries_beside_a_crowd() {
    // 3,000 points in one cell: a stencil past the grid's candidate buffer,
    // searched in pieces, and the rows still ascending.
    let mut rng = Rng(23);
    let mut data: Vec<Vec3> = (0..3_000).map(|_| rng.point(0.0, 0.1)).collect();
    data.extend((0..500).map(|_| rng.point(-3.0, 3.0)));
    let queries: Vec<Vec3> = (0..200).map(|_| rng.point(-1.0, 1.0)).collect();
    check_all(&data, &queries, 0.5, &[0.5, 0.25]);
}

#[test]
fn queries_at_exactly_the_radius_and_far_away() {
    // A lattice of spacing 1; queries at lattice points (neighbors exactly
    // 1 away on each axis), half-way between, outside the data, far off.
    let data: Vec<Vec3> = (0..512)
        .map(|i| Vec3::new((i % 8) as f32, ((i / 8) % 8) as f32, (i / 64) as f32))
        .collect();
    let mut queries: Vec<Vec3> = data.iter().step_by(7).copied().collect();
    queries.extend(data.iter().step_by(11).map(|p| *p + 0.5));
    queries.extend([Vec3::splat(-1.0), Vec3::splat(8.0), Vec3::splat(1.0e6), Vec3::splat(-3.0e38)]);
    check_all(&data, &queries, 1.0, &[1.0, 1.0f32.next_down(), 0.0]);
}

#[test]
fn spheres_answer_what_touches_each_probe() {
    let mut rng = Rng(23);
    let centers: Vec<Vec3> = (0..600).map(|_| rng.point(0.0, 20.0)).collect();
    let radii: Vec<f32> = (0..600).map(|_| 0.2 + rng.unit() * 0.8).collect();
    let queries: Vec<Vec3> = (0..200).map(|_| rng.point(0.0, 20.0)).collect();
    let mut grid = CountingSortGrid::default();
    grid.build_spheres(&centers, &radii).unwrap();
    let mut rows = NeighborLists::default();
    let mut hits = Vec::new();
    let largest = radii.iter().fold(0.0f32, |m, &r| m.max(r));
    for radius in [0.0, 0.5, largest] {
        neighbors_of(&grid, &queries, radius, &mut rows).unwrap();
        for (q, &probe) in queries.iter().enumerate() {
            brute_force_spheres_touching(&centers, &radii, probe, radius, &mut hits).unwrap();
            assert_eq!(rows.neighbors(q), hits.as_slice(), "probe {q}, radius {radius}");
        }
    }
}

/// Fewer queries than one chunk, and many chunks (above 4,096 queries the
/// jobs place chunks in order).
#[test]
fn the_parallel_fill_equals_one_thread_on_any_thread_count() {
    for count in [2_500, 20_000] {
        parallel_fill_equals_one_thread(count);
    }
}

fn parallel_fill_equals_one_thread(count: usize) {
    let mut rng = Rng(29);
    let data: Vec<Vec3> = (0..3_000).map(|_| rng.point(0.0, 25.0)).collect();
    let queries: Vec<Vec3> = (0..count).map(|_| rng.point(0.0, 25.0)).collect();
    let mut grid = CountingSortGrid::default();
    grid.build(&data, 1.2).unwrap();
    let mut single = NeighborLists::default();
    neighbors_of(&grid, &queries, 1.2, &mut single).unwrap();
    let mut parallel = ParallelNeighborLists::default();
    for threads in 1..=4 {
        let jobs = JobSystem::new(threads);
        let mut rows = NeighborLists::default();
        for round in 0..2 {
            parallel.fill_queries(&jobs, &grid, &queries, 1.2, &mut rows).unwrap();
            assert_eq!(rows.offsets(), single.offsets(), "{threads} threads, round {round}");
            assert_eq!(rows.indices(), single.indices(), "{threads} threads, round {round}");
        }
        parallel.fill_queries(&jobs, &grid, &[], 1.2, &mut rows).unwrap();
        assert_eq!(rows.len(), 0);
    }
}

#[test]
fn bad_input_is_a_typed_error() {
    let data = [Vec3::ZERO, Vec3::ONE];
    let mut grid = CountingSortGrid::default();
    grid.build(&data, 1.0).unwrap();
    let mut rows = NeighborLists::default();
    let queries = [Vec3::ZERO, Vec3::ONE, Vec3::new(0.0, f32::INFINITY, 0.0)];
    assert!(matches!(
        neighbors_of(&grid, &queries, 0.5, &mut rows),
        Err(PointError::NotFinite { index: 2, axis: Axis::Y, .. })
    ));
    assert_eq!(rows.len(), 0, "a refused call leaves no rows");
    assert_eq!(
        neighbors_of(&grid, &queries[..2], 1.5, &mut rows),
        Err(PointError::QueryRadiusTooLarge { radius: 1.5, max: 1.0 })
    );
    assert!(matches!(
        neighbors_of(&grid, &[], f32::NAN, &mut rows),
        Err(PointError::InvalidRadius { .. })
    ));
    let jobs = JobSystem::new(2);
    let error = ParallelNeighborLists::default()
        .fill_queries(&jobs, &grid, &queries, 0.5, &mut rows)
        .unwrap_err();
    assert!(error.to_string().contains("point 2"), "{error}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn any_sets(
        data in prop::collection::vec((-10.0f32..10.0, -10.0f32..10.0, -10.0f32..10.0), 0..150),
        queries in prop::collection::vec((-12.0f32..12.0, -12.0f32..12.0, -12.0f32..12.0), 0..80),
        build in 0.0f32..3.0,
        share in 0.0f32..=1.0,
    ) {
        let data: Vec<Vec3> = data.iter().map(|&(x, y, z)| Vec3::new(x, y, z)).collect();
        let queries: Vec<Vec3> = queries.iter().map(|&(x, y, z)| Vec3::new(x, y, z)).collect();
        check_all(&data, &queries, build, &[build * share, build]);
    }
}
