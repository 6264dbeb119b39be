//! The GPU's sphere contacts against the CPU's: brute force
//! (`brute_force_sphere_contacts`) and the counting-sort grid built on
//! spheres (`CountingSortGrid::build_spheres`), on particles5k and on
//! adversarial scenes. Skips without an adapter unless
//! `BROADPHASE_GPU_REQUIRED=1`.

mod support;

use broadphase_gpu::{GpuContext, GpuError, GpuNeighborSearch, GpuSearchConfig, MIN_RADIUS};
use broadphase_neighbors::{
    Axis, CountingSortGrid, MAX_RADIUS, NeighborSearch, PointError, brute_force_sphere_contacts,
};
use broadphase_scenes::SplitMix64;
use glam::Vec3;
use std::sync::{Mutex, MutexGuard, OnceLock};

fn gpu() -> Option<MutexGuard<'static, GpuNeighborSearch>> {
    static GPU: OnceLock<Option<Mutex<GpuNeighborSearch>>> = OnceLock::new();
    let search = GPU.get_or_init(|| {
        support::context().map(|context| Mutex::new(GpuNeighborSearch::new(&context)))
    });
    search.as_ref().map(|m| m.lock().unwrap_or_else(|p| p.into_inner()))
}

/// GPU == brute force == the CPU grid's contacts (sorted); returns them.
fn check(gpu: &mut GpuNeighborSearch, what: &str, centers: &[Vec3], radii: &[f32]) -> usize {
    let mut contacts = Vec::new();
    gpu.find_sphere_contacts(centers, radii, &mut contacts).unwrap();
    let mut brute = Vec::new();
    brute_force_sphere_contacts(centers, radii, &mut brute).unwrap();
    let mut grid = CountingSortGrid::default();
    grid.build_spheres(centers, radii).unwrap();
    let mut cpu = Vec::new();
    grid.for_each_neighbor_pair(|a, b| cpu.push([a.min(b), a.max(b)]));
    cpu.sort_unstable();
    assert_eq!(cpu, brute, "{what}: the CPU grid against brute force");
    assert_eq!(contacts.len(), brute.len(), "{what}: contact count");
    assert_eq!(contacts, brute, "{what}: contacts");
    contacts.len()
}

fn random(rng: &mut SplitMix64, n: usize, side: f32, r: (f32, f32)) -> (Vec<Vec3>, Vec<f32>) {
    let centers = (0..n)
        .map(|_| {
            Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side))
        })
        .collect();
    let radii = (0..n).map(|_| rng.range_f32(r.0, r.1)).collect();
    (centers, radii)
}

#[test]
fn particles_and_random_scenes_match_the_cpu() {
    let Some(mut gpu) = gpu() else { return };
    let scene = broadphase_scenes::particles5k();
    assert!(check(&mut gpu, "particles5k", &scene.centers, &scene.radii) > 0);
    let mut rng = SplitMix64::new(41);
    for (n, side, radii) in
        [(10, 5.0, (0.5, 1.0)), (3000, 60.0, (0.5, 2.0)), (4000, 30.0, (0.01, 1.5))]
    {
        let (centers, radii) = random(&mut rng, n, side, radii);
        check(&mut gpu, &format!("{n} random spheres"), &centers, &radii);
    }
}

#[test]
fn touching_exactly_and_piles() {
    let Some(mut gpu) = gpu() else { return };
    // A lattice 3 apart, radii 1 and 2 alternating: neighbors touch
    // exactly (1 + 2 = 3), diagonal ones do not.
    let centers: Vec<Vec3> = (0..1000)
        .map(|i| Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32) * 3.0)
        .collect();
    let radii: Vec<f32> =
        (0..1000).map(|i| if (i + i / 10 + i / 100) % 2 == 0 { 1.0 } else { 2.0 }).collect();
    assert_eq!(check(&mut gpu, "lattice touching exactly", &centers, &radii), 2700);
    // Just apart: the sum one step of f32 short of 3 (2 - 2⁻²², which
    // plus 1 is exact; one step below 2 would round back up to 3).
    let apart: Vec<f32> =
        radii.iter().map(|&r| if r == 2.0 { 2.0f32.next_down().next_down() } else { r }).collect();
    assert_eq!(check(&mut gpu, "lattice just apart", &centers, &apart), 0);
    // Piles of coincident spheres, also of the smallest radius.
    let mut rng = SplitMix64::new(3);
    let mut pile = Vec::new();
    for _ in 0..3 {
        let c =
            Vec3::new(rng.range_f32(0.0, 9.0), rng.range_f32(0.0, 9.0), rng.range_f32(0.0, 9.0));
        pile.extend(std::iter::repeat_n(c, 400));
    }
    check(&mut gpu, "piles", &pile, &vec![0.25; pile.len()]);
    check(&mut gpu, "piles of MIN_RADIUS", &pile, &vec![MIN_RADIUS; pile.len()]);
}

#[test]
fn mixed_sizes_outliers_and_huge_values() {
    let Some(mut gpu) = gpu() else { return };
    let mut rng = SplitMix64::new(9);
    // One huge sphere among small ones widens every cell.
    let (mut centers, mut radii) = random(&mut rng, 2000, 40.0, (0.1, 1.0));
    centers.push(Vec3::splat(20.0));
    radii.push(15.0);
    check(&mut gpu, "one huge sphere", &centers, &radii);
    // Far outliers, and the largest radii there are.
    let (mut centers, mut radii) = random(&mut rng, 2000, 30.0, (0.2, 1.0));
    centers.extend([Vec3::splat(1e30), Vec3::new(-3e38, 0.0, 3e38), Vec3::new(1e30, 1e30, 1e30)]);
    radii.extend([1.0, 1.0, 1.0]);
    check(&mut gpu, "far outliers", &centers, &radii);
    let big = MAX_RADIUS / 2.0;
    let far = [Vec3::ZERO, Vec3::new(2.0 * big, 0.0, 0.0), Vec3::new(4.0 * big, 1e19, 0.0)];
    assert_eq!(check(&mut gpu, "the largest radii", &far, &[big; 3]), 1);
    check(&mut gpu, "one sphere", &[Vec3::ONE], &[1.0]);
    check(&mut gpu, "no spheres", &[], &[]);
}

#[test]
fn bad_input_is_the_cpus_error_and_leaves_the_contacts() {
    let Some(mut gpu) = gpu() else { return };
    let centers = [Vec3::ZERO, Vec3::X, Vec3::new(0.0, f32::NAN, 0.0), Vec3::Y];
    let sentinel = vec![[7, 8]];
    let refused = |gpu: &mut GpuNeighborSearch, centers: &[Vec3], radii: &[f32]| {
        let mut out = sentinel.clone();
        let error = gpu.find_sphere_contacts(centers, radii, &mut out).unwrap_err();
        assert_eq!(out, sentinel, "a refused call left the contacts alone");
        error
    };
    // What the CPU refuses, refused with the CPU's error.
    let cases: [(&[Vec3], &[f32]); 5] = [
        (&centers, &[1.0; 3]),
        (&centers, &[1.0; 4]),
        (&centers, &[1.0, -1.0, 1.0, 1.0]),
        (&centers, &[1.0, 1.0, 1.0, f32::NAN]),
        (&centers[..2], &[1.0, MAX_RADIUS]),
    ];
    for (centers, radii) in cases {
        let mut out = Vec::new();
        let expected = brute_force_sphere_contacts(centers, radii, &mut out).unwrap_err();
        match refused(&mut gpu, centers, radii) {
            // Debug, not ==: the NaN a NotFinite carries is not equal to itself.
            GpuError::Point(e) => assert_eq!(format!("{e:?}"), format!("{expected:?}")),
            other => panic!("{other:?} instead of {expected:?}"),
        }
    }
    assert!(matches!(
        refused(&mut gpu, &centers, &[1.0; 3]),
        GpuError::Point(PointError::LengthMismatch { centers: 4, radii: 3 })
    ));
    assert!(matches!(
        refused(&mut gpu, &centers, &[1.0; 4]),
        GpuError::Point(PointError::NotFinite { index: 2, axis: Axis::Y, .. })
    ));
    // What the CPU takes and the GPU does not: a radius below MIN_RADIUS.
    let ok = [Vec3::ZERO, Vec3::X];
    let mut contacts = Vec::new();
    brute_force_sphere_contacts(&ok, &[1.0, 0.0], &mut contacts).unwrap();
    let error = refused(&mut gpu, &ok, &[1.0, 0.0]);
    assert!(matches!(error, GpuError::SphereRadiusTooSmall { index: 1, value: 0.0 }), "{error:?}");
    assert!(error.to_string().contains("sphere 1"), "{error}");
}

#[test]
fn too_many_spheres_and_warm_calls() {
    let Some(mut gpu) = gpu() else { return };
    let context = GpuContext::new().unwrap();
    let mut small = GpuNeighborSearch::with_config(&context, GpuSearchConfig { max_points: 3 });
    let mut out = Vec::new();
    let error = small.find_sphere_contacts(&[Vec3::ZERO; 4], &[1.0; 4], &mut out).unwrap_err();
    assert!(matches!(error, GpuError::Point(PointError::TooManyPoints { count: 4 })), "{error:?}");
    let scene = broadphase_scenes::particles5k();
    gpu.find_sphere_contacts(&scene.centers, &scene.radii, &mut out).unwrap();
    let (allocations, capacity) = (gpu.buffer_allocations(), out.capacity());
    gpu.find_sphere_contacts(&scene.centers[..4000], &scene.radii[..4000], &mut out).unwrap();
    gpu.find_sphere_contacts(&scene.centers, &scene.radii, &mut out).unwrap();
    assert_eq!(gpu.buffer_allocations(), allocations, "a warm call created a buffer");
    assert_eq!(out.capacity(), capacity);
}
