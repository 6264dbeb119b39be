//! Regression: a warm `ParallelNeighborLists::fill` (and its caller-order
//! fill, `fill_caller_order`) allocates nothing, on any thread. Each structure rebuilt on the same particles every frame,
//! its lists filled on a job system of 1, 2 or 4 threads into a reused
//! output: after warm-up frames, zero heap allocations on every thread of
//! the process (the jobs are indexed jobs, the per-range buffers and the
//! job queue keep their memory). The grid is also rebuilt with
//! `build_parallel`, on enough particles to be cut into parts.
//!
//! The counter sees every thread, and the allocations binary runs its checks in
//! turn.

use broadphase::JobSystem;
use broadphase::glam::Vec3;
use broadphase::neighbors::{
    CountingSortGrid, NeighborLists, NeighborSearch, ParallelNeighborLists, SpatialHash,
    SpatialIndex,
};
use broadphase_scenes::{SPH1M_RADIUS, sph};

use broadphase_testkit::allocations_on_every_thread_during;

const WARM_UP: usize = 3;
const COUNTED: usize = 10;

/// Allocations in each counted frame (build, then the parallel fills).
fn warm_frames<S: NeighborSearch + Sync>(
    s: &mut S,
    jobs: &JobSystem,
    points: &[Vec3],
) -> Vec<usize> {
    warm_frames_with(s, jobs, points, |s, points| s.build(points, SPH1M_RADIUS).is_ok())
}

/// Allocations in each counted frame of `build` (true when it succeeded),
/// then the parallel fills, in sorted order and in caller order.
fn warm_frames_with<S: NeighborSearch + Sync>(
    s: &mut S,
    jobs: &JobSystem,
    points: &[Vec3],
    build: impl Fn(&mut S, &[Vec3]) -> bool,
) -> Vec<usize> {
    let mut parallel = ParallelNeighborLists::default();
    let (mut lists, mut caller) = (NeighborLists::default(), NeighborLists::default());
    let mut per_frame = Vec::with_capacity(COUNTED);
    let mut first = None;
    for frame in 0..WARM_UP + COUNTED {
        let (result, allocations) = allocations_on_every_thread_during(frame >= WARM_UP, || {
            assert!(build(s, points), "valid scene");
            parallel.fill(jobs, s, &mut lists).expect("no job panics");
            parallel.fill_caller_order(jobs, s, &mut caller).expect("no job panics");
            (lists.total(), caller.total())
        });
        assert_eq!(*first.get_or_insert(result), result, "frame {frame}");
        if frame >= WARM_UP {
            per_frame.push(allocations);
        }
    }
    assert!(first.is_some_and(|(sorted, caller)| sorted > 0 && sorted == caller));
    per_frame
}

pub(crate) fn warm_parallel_fills_allocate_nothing() {
    let points = sph(20);
    // 42³ = 74,088: two parts of the parallel build.
    let many = sph(42);
    let mut failures = Vec::new();
    for threads in [1, 2, 4] {
        let jobs = JobSystem::new(threads);
        let mut check = |name: &str, per_frame: Vec<usize>| {
            if per_frame.iter().any(|&a| a != 0) {
                failures.push(format!("{name} on {threads} threads: {per_frame:?}"));
            }
        };
        check("grid", warm_frames(&mut CountingSortGrid::default(), &jobs, &points));
        check("hash", warm_frames(&mut SpatialHash::default(), &jobs, &points));
        check("index", warm_frames(&mut SpatialIndex::default(), &jobs, &points));
        let parallel_build = |grid: &mut CountingSortGrid, points: &[Vec3]| {
            grid.build_parallel(&jobs, points, SPH1M_RADIUS).is_ok()
        };
        let grid = &mut CountingSortGrid::default();
        check("grid built in parts", warm_frames_with(grid, &jobs, &many, parallel_build));
    }
    assert!(failures.is_empty(), "allocations per warm frame:\n{}", failures.join("\n"));
}
