//! The GPU's neighbor lists against the CPU's: brute force (every pair
//! tested) and the counting-sort grid, through the one interface
//! (`NeighborListSearch`), on random and adversarial scenes.
//!
//! Tests that need an adapter skip, saying so, when none exists, unless
//! `BROADPHASE_GPU_REQUIRED=1` (as CI sets it): then they fail.

mod support;

use broadphase_gpu::{GpuContext, GpuContextConfig, GpuError, GpuNeighborSearch, GpuSearchConfig};
use broadphase_gpu::{MIN_RADIUS, wgpu};
use broadphase_neighbors::{
    Axis, CountingSortGrid, NeighborListSearch, NeighborLists, PeriodicDomain, PeriodicError,
    PeriodicGrid, PointError, brute_force_neighbor_pairs, brute_force_neighbor_rows,
    brute_force_periodic_pairs,
};
use broadphase_scenes::SplitMix64;
use glam::Vec3;
use std::sync::{Mutex, MutexGuard, OnceLock};

/// One search for the whole binary (shaders compile once), behind a lock:
/// tests run on several threads.
fn gpu() -> Option<MutexGuard<'static, GpuNeighborSearch>> {
    static GPU: OnceLock<Option<Mutex<GpuNeighborSearch>>> = OnceLock::new();
    let search = GPU.get_or_init(|| {
        support::context().map(|context| {
            eprintln!("GPU tests run on {}", context.adapter_name());
            Mutex::new(GpuNeighborSearch::new(&context))
        })
    });
    search.as_ref().map(|m| m.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The brute-force rows as a `NeighborLists` (rows ascending).
fn brute_force_lists(points: &[Vec3], radius: f32) -> NeighborLists {
    let mut pairs = Vec::new();
    brute_force_neighbor_pairs(points, radius, &mut pairs).unwrap();
    lists_of_pairs(points.len(), &pairs)
}

fn lists_of_pairs(count: usize, pairs: &[[u32; 2]]) -> NeighborLists {
    let rows = brute_force_neighbor_rows(count, pairs);
    let mut offsets = vec![0u32];
    let mut entries = Vec::new();
    for row in rows {
        entries.extend(row);
        offsets.push(entries.len() as u32);
    }
    let mut lists = NeighborLists::default();
    lists.copy_from_csr(&offsets, &entries);
    lists
}

fn assert_same(what: &str, got: &NeighborLists, expected: &NeighborLists) {
    assert_eq!(got.offsets(), expected.offsets(), "{what}: offsets");
    assert_eq!(got.indices(), expected.indices(), "{what}: entries");
}

/// GPU == brute force == CPU grid, and the counts-only path agrees.
fn check(gpu: &mut GpuNeighborSearch, what: &str, points: &[Vec3], radius: f32) {
    let mut lists = NeighborLists::default();
    gpu.find_neighbor_lists(points, radius, &mut lists).unwrap();
    let mut grid = NeighborLists::default();
    CountingSortGrid::default().find_neighbor_lists(points, radius, &mut grid).unwrap();
    assert_same(what, &grid, &brute_force_lists(points, radius));
    assert_same(what, &lists, &grid);
    let mut counts = Vec::new();
    gpu.neighbor_counts(points, radius, &mut counts).unwrap();
    let lengths: Vec<u32> = lists.rows().map(|r| r.len() as u32).collect();
    assert_eq!(counts, lengths, "{what}: counts");
}

fn uniform(rng: &mut SplitMix64, n: usize, side: f32) -> Vec<Vec3> {
    (0..n)
        .map(|_| {
            Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side))
        })
        .collect()
}

#[test]
fn random_scenes_match_brute_force() {
    let Some(mut gpu) = gpu() else { return };
    let mut rng = SplitMix64::new(7);
    for (n, side, radius) in [(10, 2.0, 0.5), (500, 10.0, 1.0), (3000, 20.0, 1.5), (5000, 8.0, 0.3)]
    {
        let points = uniform(&mut rng, n, side);
        check(&mut gpu, &format!("uniform {n} in {side}, r {radius}"), &points, radius);
    }
    // Far from the origin, where f32 spacing is coarse, and negative.
    let points: Vec<Vec3> =
        uniform(&mut rng, 2000, 30.0).into_iter().map(|p| p + Vec3::new(-1e5, 3e4, 7e3)).collect();
    check(&mut gpu, "offset far from the origin", &points, 1.0);
}

#[test]
fn empty_and_one_point() {
    let Some(mut gpu) = gpu() else { return };
    let mut lists = NeighborLists::default();
    gpu.find_neighbor_lists(&[], 1.0, &mut lists).unwrap();
    assert_eq!(lists.offsets(), [0]);
    let mut counts = vec![9];
    gpu.neighbor_counts(&[], 1.0, &mut counts).unwrap();
    assert!(counts.is_empty());
    check(&mut gpu, "one point", &[Vec3::new(3.0, -2.0, 1.0)], 1.0);
}

#[test]
fn duplicates_pile_up_in_one_cell() {
    let Some(mut gpu) = gpu() else { return };
    // Every point coincides with 499 others: rows of 1,499 entries to sort.
    let points: Vec<Vec3> =
        (0..1500).map(|i| [Vec3::ONE, Vec3::splat(1.5), Vec3::splat(9.0)][i % 3]).collect();
    check(&mut gpu, "three piles of 500", &points, 0.5);
    check(&mut gpu, "three piles, tiny radius", &points, MIN_RADIUS);
}

#[test]
fn rows_either_side_of_the_in_memory_sort() {
    let Some(mut gpu) = gpu() else { return };
    // A fill sorts rows of up to 64 entries in the invocation's own memory
    // and longer ones in the list buffer. Piles of 64..=67 coincident
    // points give rows of 63..=66 entries; the piles' ids interleave, so
    // every row arrives out of order and must be sorted.
    let piles = [64usize, 65, 66, 67];
    let at = |pile: usize| Vec3::new(10.0 * pile as f32, 1.0, 1.0);
    let mut left = piles;
    let mut points = Vec::new();
    while left.iter().any(|&k| k > 0) {
        for (pile, k) in left.iter_mut().enumerate().rev() {
            if *k > 0 {
                points.push(at(pile));
                *k -= 1;
            }
        }
    }
    check(&mut gpu, "piles of 64 to 67", &points, 1.0);
}

#[test]
fn pairs_exactly_at_the_radius() {
    let Some(mut gpu) = gpu() else { return };
    // Lattice neighbors exactly r apart (inclusive), and twins a hair inside
    // and outside the radius: the distance must round as the CPU's does.
    let lattice: Vec<Vec3> = (0..1000)
        .map(|i| Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32) * 0.75)
        .collect();
    check(&mut gpu, "lattice at r", &lattice, 0.75);
    let mut rng = SplitMix64::new(11);
    let mut twins = Vec::new();
    for p in uniform(&mut rng, 3000, 40.0) {
        let dir =
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0))
                .normalize_or(Vec3::X);
        let scale = 1.0 + rng.range_f32(-2e-6, 2e-6);
        twins.push(p);
        twins.push(p + dir * scale);
    }
    check(&mut gpu, "twins near r", &twins, 1.0);
}

#[test]
fn far_outliers_and_huge_coordinates() {
    let Some(mut gpu) = gpu() else { return };
    let mut rng = SplitMix64::new(3);
    let mut points = uniform(&mut rng, 2000, 12.0);
    points.extend([
        Vec3::splat(1e30),
        Vec3::splat(1e30 + 1e24),
        Vec3::splat(-3e38),
        Vec3::new(3e38, 0.0, 0.0),
    ]);
    check(&mut gpu, "outliers", &points, 1.0);
    check(&mut gpu, "outliers, huge radius", &points, 1e19);
    let spread = [Vec3::splat(-3e38), Vec3::splat(3e38), Vec3::ZERO, Vec3::splat(3e38)];
    check(&mut gpu, "extremes", &spread, 1.0);
}

#[test]
fn bad_input_is_a_typed_error_and_leaves_the_lists() {
    let Some(mut gpu) = gpu() else { return };
    let good = [Vec3::ZERO, Vec3::X];
    let mut lists = NeighborLists::default();
    gpu.find_neighbor_lists(&good, 1.0, &mut lists).unwrap();
    let bad = [Vec3::ZERO, Vec3::new(0.0, f32::NAN, 0.0), Vec3::splat(f32::INFINITY)];
    let e = gpu.find_neighbor_lists(&bad, 1.0, &mut lists).unwrap_err();
    assert!(
        matches!(e, GpuError::Point(PointError::NotFinite { index: 1, axis: Axis::Y, .. })),
        "{e}"
    );
    for radius in [0.0, -1.0, MIN_RADIUS / 2.0, f32::NAN, f32::INFINITY, 2e19] {
        let e = gpu.find_neighbor_lists(&good, radius, &mut lists).unwrap_err();
        assert!(matches!(e, GpuError::Point(PointError::InvalidRadius { .. })), "{radius}: {e}");
        let mut counts = Vec::new();
        assert!(gpu.neighbor_counts(&good, radius, &mut counts).is_err());
    }
    assert_eq!(lists.offsets(), [0, 1, 2], "a refused call keeps the last lists");
    // The same search works again after refusing.
    check(&mut gpu, "after errors", &good, 1.0);
}

#[test]
fn too_many_points_is_refused() {
    let Some(gpu) = gpu() else { return };
    drop(gpu);
    let context = GpuContext::new().unwrap();
    let mut small = GpuNeighborSearch::with_config(&context, GpuSearchConfig { max_points: 4 });
    assert_eq!(small.max_points(), 4);
    let points = [Vec3::ZERO; 5];
    let mut lists = NeighborLists::default();
    let e = small.find_neighbor_lists(&points, 1.0, &mut lists).unwrap_err();
    assert!(matches!(e, GpuError::Point(PointError::TooManyPoints { count: 5 })), "{e}");
    small.find_neighbor_lists(&points[..4], 1.0, &mut lists).unwrap();
    assert_eq!(lists.total(), 12);
}

#[test]
fn no_adapter_is_an_error_not_a_panic() {
    let none = GpuContext::with_config(GpuContextConfig { backends: wgpu::Backends::empty() });
    let e = none.unwrap_err();
    assert!(matches!(e, GpuError::NoAdapter { .. }), "{e}");
    assert!(e.to_string().contains("mesa-vulkan-drivers"), "{e}");
}

#[test]
fn warm_calls_create_no_buffers() {
    let Some(mut gpu) = gpu() else { return };
    let mut rng = SplitMix64::new(5);
    let big = uniform(&mut rng, 4000, 15.0);
    let mut lists = NeighborLists::default();
    let mut counts = Vec::new();
    gpu.find_neighbor_lists(&big, 1.0, &mut lists).unwrap();
    gpu.neighbor_counts(&big, 1.0, &mut counts).unwrap();
    let (allocations, bytes) = (gpu.buffer_allocations(), gpu.device_bytes());
    let (offsets_cap, counts_cap) = (lists.offsets().as_ptr(), counts.capacity());
    for (n, seed) in [(4000, 9), (1000, 10), (4000, 11)] {
        let points = uniform(&mut SplitMix64::new(seed), n, 15.0);
        gpu.find_neighbor_lists(&points, 1.0, &mut lists).unwrap();
        gpu.neighbor_counts(&points, 1.0, &mut counts).unwrap();
        assert_eq!(gpu.buffer_allocations(), allocations, "{n} points created a buffer");
        assert_eq!(gpu.device_bytes(), bytes);
    }
    assert_eq!(counts.capacity(), counts_cap);
    // Same row count as the first call: the host offsets kept their buffer.
    gpu.find_neighbor_lists(&big, 1.0, &mut lists).unwrap();
    assert_eq!(lists.offsets().as_ptr(), offsets_cap);
    // More points than ever: buffers grow.
    let more = uniform(&mut rng, 9000, 15.0);
    gpu.find_neighbor_lists(&more, 1.0, &mut lists).unwrap();
    assert!(gpu.buffer_allocations() > allocations);
}

/// GPU == periodic brute force == the CPU's `PeriodicGrid`.
fn check_periodic(
    gpu: &mut GpuNeighborSearch,
    what: &str,
    domain: &PeriodicDomain,
    points: &[Vec3],
    radius: f32,
) {
    let mut lists = NeighborLists::default();
    gpu.find_periodic_neighbor_lists(domain, points, radius, &mut lists).unwrap();
    let mut pairs = Vec::new();
    brute_force_periodic_pairs(domain, points, radius, &mut pairs).unwrap();
    let expected = lists_of_pairs(points.len(), &pairs);
    let mut grid = PeriodicGrid::default();
    grid.build(domain, points, radius).unwrap();
    let mut cpu = NeighborLists::default();
    grid.neighbor_lists(&mut cpu);
    cpu.sort_rows();
    assert_same(what, &cpu, &expected);
    assert_same(what, &lists, &expected);
}

fn inside(rng: &mut SplitMix64, n: usize, min: Vec3, max: Vec3) -> Vec<Vec3> {
    (0..n)
        .map(|_| {
            Vec3::new(
                rng.range_f32(min.x, max.x),
                rng.range_f32(min.y, max.y),
                rng.range_f32(min.z, max.z),
            )
        })
        .collect()
}

#[test]
fn periodic_domains_match_brute_force() {
    let Some(mut gpu) = gpu() else { return };
    let mut rng = SplitMix64::new(21);
    for (periodic, min, max, radius) in [
        ([true; 3], Vec3::ZERO, Vec3::splat(10.0), 1.0),
        ([true, false, true], Vec3::splat(-4.0), Vec3::new(6.0, 3.0, 8.0), 0.7),
        ([false, true, false], Vec3::ZERO, Vec3::splat(12.0), 1.3),
        ([true; 3], Vec3::splat(1000.0), Vec3::splat(1010.0), 1.0),
        // Radii that leave 1, 2 and 3 cells along the periodic axes.
        ([true; 3], Vec3::ZERO, Vec3::splat(10.0), 5.0),
        ([true; 3], Vec3::ZERO, Vec3::splat(10.0), 4.0),
        ([true; 3], Vec3::ZERO, Vec3::splat(10.0), 3.0),
        ([true, true, false], Vec3::ZERO, Vec3::new(10.0, 7.0, 30.0), 2.5),
    ] {
        let domain = PeriodicDomain::new(min, max, periodic).unwrap();
        let mut points = inside(&mut rng, 1500, min, max);
        // On the faces, and at the corners: min and max are one place.
        points.extend([min, max, Vec3::new(min.x, max.y, min.z), Vec3::new(max.x, min.y, max.z)]);
        let what = format!("{periodic:?} {min}..{max}, r {radius}");
        check_periodic(&mut gpu, &what, &domain, &points, radius);
    }
}

#[test]
fn periodic_pairs_at_the_radius_through_the_faces() {
    let Some(mut gpu) = gpu() else { return };
    let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(8.0), [true; 3]).unwrap();
    // A lattice of spacing 0.5 tiles the box: neighbors exactly r apart,
    // across every face too.
    let points: Vec<Vec3> = (0..4096)
        .map(|i| Vec3::new((i % 16) as f32, ((i / 16) % 16) as f32, (i / 256) as f32) * 0.5)
        .collect();
    check_periodic(&mut gpu, "lattice at r", &domain, &points, 0.5);
    check_periodic(&mut gpu, "lattice, diagonal r", &domain, &points, 0.5 * 2f32.sqrt());
}

#[test]
fn periodic_input_errors_match_the_cpu() {
    let Some(mut gpu) = gpu() else { return };
    let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(10.0), [true, false, false]).unwrap();
    let mut lists = NeighborLists::default();
    let outside = [Vec3::ONE, Vec3::new(1.0, 10.5, 1.0)];
    let e = gpu.find_periodic_neighbor_lists(&domain, &outside, 1.0, &mut lists).unwrap_err();
    assert!(
        matches!(
            e,
            GpuError::Periodic(PeriodicError::OutsideDomain { index: 1, axis: Axis::Y, .. })
        ),
        "{e}"
    );
    let e = gpu.find_periodic_neighbor_lists(&domain, &[Vec3::ONE], 5.5, &mut lists).unwrap_err();
    assert!(matches!(e, GpuError::Periodic(PeriodicError::RadiusAboveHalfBox { .. })), "{e}");
    let e = gpu.find_periodic_neighbor_lists(&domain, &[Vec3::NAN], 1.0, &mut lists).unwrap_err();
    assert!(
        matches!(e, GpuError::Periodic(PeriodicError::Point(PointError::NotFinite { .. }))),
        "{e}"
    );
    let e = gpu.find_periodic_neighbor_lists(&domain, &[Vec3::ONE], 0.0, &mut lists).unwrap_err();
    assert!(matches!(
        e,
        GpuError::Periodic(PeriodicError::Point(PointError::InvalidRadius { .. }))
    ));
    gpu.find_periodic_neighbor_lists(&domain, &[], 1.0, &mut lists).unwrap();
    assert_eq!(lists.offsets(), [0]);
}
