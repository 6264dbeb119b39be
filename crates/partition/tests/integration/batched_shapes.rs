//! Box, point, sphere and region queries in one batch on 1 to 4 threads
//! give, in input order, what asking each alone gives; a bad query refuses
//! the batch and names itself.

use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, AdaptiveGrid};
use broadphase_partition::{BatchError, BatchHits};
use broadphase_scenes::{SplitMix64, mixed100k};
use broadphase_storage::{Capsule, Frustum, QueryError, QueryPart, RegionTest, Sphere};
use glam::{Mat4, Vec3};

fn points(count: usize, seed: u64) -> Vec<Vec3> {
    let mut rng = SplitMix64::new(seed);
    (0..count)
        .map(|_| {
            Vec3::new(
                rng.range_f32(0.0, 2000.0),
                rng.range_f32(0.0, 2000.0),
                rng.range_f32(0.0, 2000.0),
            )
        })
        .collect()
}

fn each(grid: &AdaptiveGrid, ask: impl Fn(&AdaptiveGrid, &mut Vec<u32>), out: &mut Vec<Vec<u32>>) {
    let mut hits = Vec::new();
    ask(grid, &mut hits);
    out.push(hits);
}

fn rows(batch: &BatchHits) -> Vec<Vec<u32>> {
    (0..batch.len()).map(|i| batch.hits(i).to_vec()).collect()
}

#[test]
fn batches_on_any_thread_count_equal_one_query_at_a_time() {
    let boxes = mixed100k().boxes;
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let centers = points(2_000, 8);
    let spheres: Vec<Sphere> =
        centers.iter().enumerate().map(|(i, &c)| Sphere::new(c, (i % 40) as f32)).collect();
    let query_boxes: Vec<Aabb> = spheres.iter().map(Sphere::bounds).collect();
    let (mut by_box, mut by_point, mut by_sphere) = (Vec::new(), Vec::new(), Vec::new());
    for ((b, p), s) in query_boxes.iter().zip(&centers).zip(&spheres) {
        each(&grid, |g, out| g.query_aabb(b, out).unwrap(), &mut by_box);
        each(&grid, |g, out| g.query_point(*p, out).unwrap(), &mut by_point);
        each(&grid, |g, out| g.query_sphere(s, out).unwrap(), &mut by_sphere);
    }
    assert!(by_sphere.iter().filter(|h| !h.is_empty()).count() > 500, "spheres hit boxes");
    let mut batch = BatchHits::default();
    for threads in [1, 2, 3, 4] {
        let jobs = JobSystem::new(threads);
        for len in [0, 1, 257, 2_000] {
            batch.query_aabbs(&jobs, &grid, &query_boxes[..len]).unwrap();
            assert_eq!(rows(&batch), by_box[..len], "boxes, {threads} threads, {len}");
            assert_eq!(batch.offsets().len(), len + 1);
            batch.query_points(&jobs, &grid, &centers[..len]).unwrap();
            assert_eq!(rows(&batch), by_point[..len], "points, {threads} threads, {len}");
            batch.query_spheres(&jobs, &grid, &spheres[..len]).unwrap();
            assert_eq!(rows(&batch), by_sphere[..len], "spheres, {threads} threads, {len}");
            assert_eq!(batch.ids().len(), *batch.offsets().last().unwrap());
        }
    }
}

#[test]
fn a_bad_query_refuses_the_batch_and_names_itself() {
    let mut grid = AdaptiveGrid::default();
    grid.build(&[Aabb::new(Vec3::ZERO, Vec3::ONE)]).unwrap();
    let jobs = JobSystem::new(2);
    let mut batch = BatchHits::default();
    let mut centers = points(600, 9);
    batch.query_points(&jobs, &grid, &centers).unwrap();
    centers[400].z = f32::NAN;
    let err = batch.query_points(&jobs, &grid, &centers).unwrap_err();
    assert!(
        matches!(
            err,
            BatchError::Query {
                index: 400,
                error: QueryError::NotFinite { part: QueryPart::Point, .. }
            }
        ),
        "{err:?}"
    );
    assert!(batch.is_empty() && batch.ids().is_empty(), "a refused batch answers nothing");
    let mut boxes = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 300];
    boxes[299] = Aabb::new(Vec3::ONE, Vec3::ZERO);
    let err = batch.query_aabbs(&jobs, &grid, &boxes).unwrap_err();
    assert!(matches!(err, BatchError::Input { index: 299, .. }), "{err:?}");
    assert!(err.to_string().starts_with("query box 299:"), "{err}");
    let spheres = [Sphere::new(Vec3::ZERO, 1.0), Sphere::new(Vec3::ZERO, -1.0)];
    let err = batch.query_spheres(&jobs, &grid, &spheres).unwrap_err();
    assert!(matches!(err, BatchError::Query { index: 1, .. }), "{err:?}");
}

/// Sorted, and checked against brute force over the region's own test.
fn sorted_and_exact(boxes: &[Aabb], region: &impl RegionTest, hits: &[u32]) -> Vec<u32> {
    let mut hits = hits.to_vec();
    hits.sort_unstable();
    let expected: Vec<u32> =
        (0..boxes.len() as u32).filter(|&i| region.meets(&boxes[i as usize])).collect();
    assert_eq!(hits, expected);
    hits
}

#[test]
fn batches_of_regions_equal_one_query_at_a_time() {
    let boxes = mixed100k().boxes;
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let ends = points(801, 12);
    let capsules: Vec<Capsule> = ends
        .windows(2)
        .enumerate()
        .map(|(i, w)| Capsule::new(w[0], w[0] + (w[1] - w[0]) * 0.05, (i % 30) as f32))
        .collect();
    let frustums: Vec<Frustum> = ends
        .windows(2)
        .map(|w| {
            let view = Mat4::look_at_rh(w[0], w[1], Vec3::Y);
            Frustum::from_view_projection(Mat4::perspective_rh(0.8, 1.5, 1.0, 150.0) * view)
                .unwrap()
        })
        .collect();
    let (mut by_capsule, mut by_frustum) = (Vec::new(), Vec::new());
    for (k, (c, f)) in capsules.iter().zip(&frustums).enumerate() {
        each(&grid, |g, out| g.query_with(c, out).unwrap(), &mut by_capsule);
        each(&grid, |g, out| g.query_with(f, out).unwrap(), &mut by_frustum);
        if k < 20 {
            sorted_and_exact(&boxes, c, &by_capsule[k]);
            sorted_and_exact(&boxes, f, &by_frustum[k]);
        }
    }
    assert!(by_frustum.iter().filter(|h| !h.is_empty()).count() > 200, "frustums see boxes");
    let mut batch = BatchHits::default();
    for threads in [1, 2, 4] {
        let jobs = JobSystem::new(threads);
        for len in [0, 1, 257, 800] {
            batch.query_regions(&jobs, &grid, &capsules[..len]).unwrap();
            assert_eq!(rows(&batch), by_capsule[..len], "capsules, {threads} threads, {len}");
            batch.query_regions(&jobs, &grid, &frustums[..len]).unwrap();
            assert_eq!(rows(&batch), by_frustum[..len], "frustums, {threads} threads, {len}");
        }
    }
    let mut bad = capsules.clone();
    bad[300].radius = f32::NAN;
    let err = batch.query_regions(&JobSystem::new(2), &grid, &bad).unwrap_err();
    assert!(
        matches!(
            err,
            BatchError::Query {
                index: 300,
                error: QueryError::BadLength { part: QueryPart::Radius, .. }
            }
        ),
        "{err:?}"
    );
    assert!(batch.is_empty() && batch.ids().is_empty(), "a refused batch answers nothing");
}
