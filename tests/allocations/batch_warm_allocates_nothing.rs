//! Regression: a batch of queries of the same size as one before it
//! allocates nothing, on any thread (ray batches write into the caller's
//! vector, shape batches into `BatchHits`'s kept lists). The counter sees
//! every thread, and the allocations binary runs its checks in
//! turn.

use broadphase_jobs::JobSystem;
use broadphase_kernel::AdaptiveGrid;
use broadphase_partition::{BatchHits, cast_rays};
use broadphase_scenes::{SplitMix64, mixed100k};
use broadphase_storage::{Ray, Sphere};
use broadphase_testkit::allocations_on_every_thread_during;
use glam::Vec3;

pub(crate) fn warm_batches_allocate_nothing() {
    let boxes = mixed100k().boxes;
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let mut rng = SplitMix64::new(2);
    let mut point = || {
        Vec3::new(
            rng.range_f32(0.0, 2000.0),
            rng.range_f32(0.0, 2000.0),
            rng.range_f32(0.0, 2000.0),
        )
    };
    let spheres: Vec<Sphere> = (0..2_000).map(|_| Sphere::new(point(), 15.0)).collect();
    let rays: Vec<Ray> =
        (0..2_000).map(|_| Ray::new(point(), Vec3::new(1.0, 0.5, -0.25), 500.0)).collect();
    for threads in [1, 2, 4] {
        let jobs = JobSystem::new(threads);
        let (mut batch, mut hits) = (BatchHits::default(), Vec::new());
        let mut frame = |count: bool| {
            allocations_on_every_thread_during(count, || {
                batch.query_spheres(&jobs, &grid, &spheres).unwrap();
                cast_rays(&jobs, &grid, &rays, &mut hits).unwrap();
            })
            .1
        };
        frame(false);
        frame(false);
        let counted: Vec<usize> = (0..5).map(|_| frame(true)).collect();
        assert!(counted.iter().all(|&a| a == 0), "{threads} threads: {counted:?}");
    }
}
