//! Neighbor lists filled by the job system equal the single-thread fill,
//! row for row and entry for entry, for any thread count and structure.

use broadphase_jobs::JobSystem;
use broadphase_neighbors::{
    CountingSortGrid, NeighborLists, NeighborSearch, ParallelNeighborLists, SpatialHash,
    SpatialIndex,
};
use broadphase_scenes::{SplitMix64, sph};
use glam::Vec3;

fn clustered(count: usize, seed: u64) -> Vec<Vec3> {
    let mut rng = SplitMix64::new(seed);
    let centers: Vec<Vec3> = (0..5)
        .map(|_| Vec3::new(rng.range_f32(-50.0, 50.0), rng.range_f32(-50.0, 50.0), 0.0))
        .collect();
    (0..count)
        .map(|i| {
            let c = centers[i % centers.len()];
            c + Vec3::new(
                rng.range_f32(-3.0, 3.0),
                rng.range_f32(-3.0, 3.0),
                rng.range_f32(-3.0, 3.0),
            )
        })
        .collect()
}

fn check<S: NeighborSearch + Sync>(mut structure: S, points: &[Vec3], radius: f32) {
    structure.build(points, radius).unwrap();
    let mut single = NeighborLists::default();
    structure.sorted_neighbor_lists(0..structure.len(), &mut single);
    let mut parallel = ParallelNeighborLists::default();
    let mut lists = NeighborLists::default();
    for threads in [1, 2, 4] {
        let jobs = JobSystem::new(threads);
        for _frame in 0..2 {
            parallel.fill(&jobs, &structure, &mut lists).unwrap();
            assert_eq!(lists.offsets(), single.offsets(), "{threads} threads: row offsets differ");
            assert_eq!(lists.indices(), single.indices(), "{threads} threads: entries differ");
        }
    }
}

#[test]
fn parallel_lists_equal_single_thread_lists() {
    let scenes: Vec<(Vec<Vec3>, f32)> = vec![
        (sph(15), 2.0),
        (clustered(3_000, 11), 1.0),
        (vec![Vec3::ZERO], 1.0),
        (Vec::new(), 1.0),
        (vec![Vec3::splat(7.0); 40], 0.0), // coincident points, radius 0: all neighbors
    ];
    for (points, radius) in &scenes {
        check(CountingSortGrid::default(), points, *radius);
        check(SpatialHash::default(), points, *radius);
        check(SpatialIndex::default(), points, *radius);
    }
}

/// With more than 16 threads there are more than 64 ranges: the parts are
/// then joined on the calling thread instead of by jobs. Both joins give
/// the one-thread lists, including after a frame with fewer ranges left
/// the kept parts longer than needed.
#[test]
fn many_ranges_are_joined_on_the_calling_thread() {
    let points = sph(15);
    let mut grid = CountingSortGrid::default();
    grid.build(&points, 2.0).unwrap();
    let mut single = NeighborLists::default();
    grid.sorted_neighbor_lists(0..grid.len(), &mut single);
    let mut parallel = ParallelNeighborLists::default();
    let mut lists = NeighborLists::default();
    for threads in [17, 2, 17] {
        let jobs = JobSystem::new(threads);
        parallel.fill(&jobs, &grid, &mut lists).unwrap();
        assert_eq!(lists.offsets(), single.offsets(), "{threads} threads: row offsets differ");
        assert_eq!(lists.indices(), single.indices(), "{threads} threads: entries differ");
    }
}

/// The output and the per-range buffers are reused from frame to frame:
/// answers that grow past what they hold, shrink, and grow again each
/// equal the one-thread lists, with nothing left over from a longer frame.
#[test]
fn reused_lists_give_each_frame_its_own_answer_as_answers_grow_and_shrink() {
    let points = clustered(4_000, 23);
    let mut grid = CountingSortGrid::default();
    let (mut parallel, mut lists, mut single) =
        (ParallelNeighborLists::default(), NeighborLists::default(), NeighborLists::default());
    for threads in [2, 4] {
        let jobs = JobSystem::new(threads);
        for radius in [0.5, 0.5, 1.5, 1.0, 0.2, 1.6, 1.6, 0.0] {
            grid.build(&points, radius).unwrap();
            grid.sorted_neighbor_lists(0..grid.len(), &mut single);
            parallel.fill(&jobs, &grid, &mut lists).unwrap();
            assert_eq!(lists.offsets(), single.offsets(), "radius {radius}: row offsets differ");
            assert_eq!(lists.indices(), single.indices(), "radius {radius}: entries differ");
        }
    }
}
