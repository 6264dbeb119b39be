//! Rays cast in one batch on 1 to 4 threads give, in input order, what
//! casting each alone gives; a bad ray refuses the batch and names itself.

use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, AdaptiveGrid};
use broadphase_partition::{BatchError, cast_rays};
use broadphase_scenes::{SplitMix64, mixed100k};
use broadphase_storage::{QueryError, QueryPart, Ray};
use glam::Vec3;

fn random_rays(count: usize, seed: u64) -> Vec<Ray> {
    let mut rng = SplitMix64::new(seed);
    (0..count)
        .map(|_| {
            let origin = Vec3::new(
                rng.range_f32(0.0, 2000.0),
                rng.range_f32(0.0, 2000.0),
                rng.range_f32(0.0, 2000.0),
            );
            let dir = Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), 0.0);
            let max_t = if rng.below(2) == 0 { f32::INFINITY } else { rng.range_f32(0.0, 300.0) };
            Ray::new(origin, dir, max_t)
        })
        .collect()
}

#[test]
fn a_batch_on_any_thread_count_equals_one_ray_at_a_time() {
    let boxes = mixed100k().boxes;
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let rays = random_rays(3_000, 4);
    let expected: Vec<Option<(u32, f32)>> =
        rays.iter().map(|r| grid.cast_ray(r).unwrap()).collect();
    assert!(expected.iter().filter(|h| h.is_some()).count() > 1_000, "most rays hit something");
    let mut hits = Vec::new();
    for threads in [1, 2, 3, 4] {
        let jobs = JobSystem::new(threads);
        for len in [0, 1, 255, 257, 3_000] {
            cast_rays(&jobs, &grid, &rays[..len], &mut hits).unwrap();
            assert_eq!(hits, expected[..len], "{threads} threads, {len} rays");
        }
    }
}

#[test]
fn a_bad_ray_refuses_the_batch_and_names_itself() {
    let mut grid = AdaptiveGrid::default();
    grid.build(&[Aabb::new(Vec3::ZERO, Vec3::ONE)]).unwrap();
    let mut rays = random_rays(1_000, 5);
    rays[700].dir.y = f32::NAN;
    rays[900].max_t = -1.0;
    let mut hits = vec![None; 3];
    let err = cast_rays(&JobSystem::new(2), &grid, &rays, &mut hits).unwrap_err();
    assert!(
        matches!(
            err,
            BatchError::Query {
                index: 700,
                error: QueryError::NotFinite { part: QueryPart::Direction, .. }
            }
        ),
        "{err:?}"
    );
    assert!(hits.is_empty(), "a refused batch answers nothing");
    assert!(err.to_string().starts_with("query 700:"), "{err}");
}
