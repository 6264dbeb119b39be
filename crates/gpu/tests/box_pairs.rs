//! The GPU's box pairs against the CPU's: brute force and the adaptive
//! grid (`AdaptiveGrid::find_pairs`), on the shared scenes and on
//! adversarial ones. Skips without an adapter unless
//! `BROADPHASE_GPU_REQUIRED=1`.

mod support;

use broadphase_gpu::{GpuBoxPairs, GpuContext, GpuError, GpuSearchConfig};
use broadphase_kernel::{AdaptiveGrid, brute_force_pairs};
use broadphase_scenes::SplitMix64;
use broadphase_storage::{Aabb, Axis, InputError};
use glam::Vec3;
use std::sync::{Mutex, MutexGuard, OnceLock};

fn gpu() -> Option<MutexGuard<'static, GpuBoxPairs>> {
    static GPU: OnceLock<Option<Mutex<GpuBoxPairs>>> = OnceLock::new();
    let search = GPU
        .get_or_init(|| support::context().map(|context| Mutex::new(GpuBoxPairs::new(&context))));
    search.as_ref().map(|m| m.lock().unwrap_or_else(|p| p.into_inner()))
}

/// GPU == CPU grid (sorted), and == brute force where that is affordable.
fn check(gpu: &mut GpuBoxPairs, what: &str, boxes: &[Aabb]) {
    let mut pairs = Vec::new();
    gpu.find_pairs(boxes, &mut pairs).unwrap();
    let mut grid = Vec::new();
    AdaptiveGrid::default().find_pairs(boxes, &mut grid).unwrap();
    grid.sort_unstable();
    if boxes.len() <= 20_000 {
        let mut brute = Vec::new();
        brute_force_pairs(boxes, &mut brute).unwrap();
        assert_eq!(grid, brute, "{what}: the CPU grid against brute force");
    }
    assert_eq!(pairs.len(), grid.len(), "{what}: pair count");
    assert_eq!(pairs, grid, "{what}: pairs");
}

fn cube(c: Vec3, half: f32) -> Aabb {
    Aabb { min: c - Vec3::splat(half), max: c + Vec3::splat(half) }
}

#[test]
fn shared_scenes_match_the_cpu_grid() {
    let Some(mut gpu) = gpu() else { return };
    for scene in
        [broadphase_scenes::sparse20k(), broadphase_scenes::dense20k(), broadphase_scenes::pile()]
    {
        check(&mut gpu, scene.name, &scene.boxes);
    }
}

#[test]
fn random_sizes_touching_faces_and_outliers() {
    let Some(mut gpu) = gpu() else { return };
    let mut rng = SplitMix64::new(17);
    let mixed: Vec<Aabb> = (0..5000)
        .map(|_| {
            let c = Vec3::new(
                rng.range_f32(0.0, 60.0),
                rng.range_f32(0.0, 60.0),
                rng.range_f32(0.0, 60.0),
            );
            let h = Vec3::new(
                rng.range_f32(0.0, 1.5),
                rng.range_f32(0.0, 1.5),
                rng.range_f32(0.0, 1.5),
            );
            Aabb { min: c - h, max: c + h }
        })
        .collect();
    check(&mut gpu, "mixed sizes", &mixed);
    check(&mut gpu, "touching cubes", &broadphase_scenes::touching_cubes(12));
    let mut far = mixed[..1000].to_vec();
    far.extend([
        cube(Vec3::splat(1e30), 1.0),
        cube(Vec3::splat(-3e38), 1e37),
        cube(Vec3::splat(9000.0), 0.0),
    ]);
    check(&mut gpu, "outliers", &far);
    // Points (boxes of no extent): only coincident ones overlap.
    let points: Vec<Aabb> =
        (0..3000).map(|i| cube(Vec3::splat((i % 700) as f32 * 0.5), 0.0)).collect();
    check(&mut gpu, "points", &points);
    let same = vec![cube(Vec3::splat(3.0), 0.0); 300];
    check(&mut gpu, "one point repeated", &same);
    // Rows of 69 down to 0 partners: either side of the 64 a fill sorts in
    // the invocation's own memory.
    let stack: Vec<Aabb> =
        (0..70).map(|i| cube(Vec3::splat(1.0 + (i % 2) as f32 * 0.1), 0.5)).collect();
    check(&mut gpu, "70 stacked cubes", &stack);
    // One huge box among small ones: wide cells, still exact.
    let mut huge = mixed[..2000].to_vec();
    huge.push(cube(Vec3::splat(30.0), 25.0));
    check(&mut gpu, "one huge box", &huge);
}

#[test]
fn empty_one_box_and_errors() {
    let Some(mut gpu) = gpu() else { return };
    let mut pairs = vec![[7, 8]];
    gpu.find_pairs(&[], &mut pairs).unwrap();
    assert!(pairs.is_empty());
    check(&mut gpu, "one box", &[cube(Vec3::ONE, 1.0)]);
    pairs.push([1, 2]);
    let nan = [cube(Vec3::ZERO, 1.0), Aabb { min: Vec3::ZERO, max: Vec3::new(1.0, 1.0, f32::NAN) }];
    let e = gpu.find_pairs(&nan, &mut pairs).unwrap_err();
    assert!(
        matches!(e, GpuError::Input(InputError::NotFinite { index: 1, axis: Axis::Z, .. })),
        "{e}"
    );
    let inverted = [Aabb { min: Vec3::ONE, max: Vec3::ZERO }];
    let e = gpu.find_pairs(&inverted, &mut pairs).unwrap_err();
    assert!(matches!(e, GpuError::Input(InputError::Inverted { index: 0, .. })), "{e}");
    assert_eq!(pairs, [[1, 2]], "a refused call leaves the output");
    drop(gpu);
    let context = GpuContext::new().unwrap();
    let mut small = GpuBoxPairs::with_config(&context, GpuSearchConfig { max_points: 2 });
    let e = small.find_pairs(&[cube(Vec3::ZERO, 1.0); 3], &mut pairs).unwrap_err();
    assert!(matches!(e, GpuError::Input(InputError::TooManyBoxes { count: 3 })), "{e}");
}

#[test]
fn warm_calls_create_no_buffers() {
    let Some(mut gpu) = gpu() else { return };
    // No outliers here: they would widen the cells (see the shared scenes'
    // far-off boxes), and this test is about memory, not the grid.
    let boxes = broadphase_scenes::uniform(20_000, 7).boxes;
    let mut pairs = Vec::new();
    gpu.find_pairs(&boxes, &mut pairs).unwrap();
    let (allocations, capacity) = (gpu.buffer_allocations(), pairs.capacity());
    gpu.find_pairs(&boxes[..15_000], &mut pairs).unwrap();
    gpu.find_pairs(&boxes, &mut pairs).unwrap();
    assert_eq!(gpu.buffer_allocations(), allocations);
    assert_eq!(pairs.capacity(), capacity);
}
