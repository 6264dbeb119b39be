//! Every SIMD pair kernel the CPU runs finds exactly what its scalar twin
//! finds — the same pair set on both paths (`find_pairs`, and `build` then
//! `pairs`) and the same query hits — on the shared scenes and on random
//! dense scenes, with the default and a small big-leaf sweep threshold; and
//! kernel selection never hands out a kernel the CPU cannot run.
//!
//! Run also with `--features scalar`, where only the scalar kernel is
//! available and every SIMD request must fall back to it.

use crate::support;

use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, PairKernel};
use broadphase_scenes::{SplitMix64, dense20k, mixed100k, object_box, query_boxes};
use glam::Vec3;

/// `GridConfig::sweep_above` values: the default, and one small enough that
/// ordinary leaves are swept too.
const SWEEP_ABOVES: [usize; 2] = [1024, 8];

fn grid(kernel: PairKernel, leaf_capacity: usize, sweep_above: usize) -> AdaptiveGrid {
    AdaptiveGrid::with_config(GridConfig {
        kernel,
        leaf_capacity,
        sweep_above,
        ..GridConfig::default()
    })
}

/// Sorted hits of each query.
fn sorted_hits(grid: &AdaptiveGrid, queries: &[Aabb]) -> Vec<Vec<u32>> {
    queries
        .iter()
        .map(|q| {
            let mut hits = Vec::new();
            grid.query_aabb(q, &mut hits).expect("valid query");
            hits.sort_unstable();
            hits
        })
        .collect()
}

/// Queries for a scene: the shared query boxes, a few scene boxes
/// themselves, a point on a box corner, and one box over everything.
fn queries_for(boxes: &[Aabb]) -> Vec<Aabb> {
    let mut qs = query_boxes(200, 17);
    qs.extend(boxes.iter().step_by(boxes.len() / 50 + 1).copied());
    qs.push(Aabb::new(boxes[0].min, boxes[0].min));
    qs.push(Aabb::new(Vec3::splat(-1e9), Vec3::splat(1e9)));
    qs
}

/// Checks every available kernel against the scalar one on `boxes`.
fn all_kernels_agree(name: &str, boxes: &[Aabb], leaf_capacity: usize) {
    let queries = queries_for(boxes);
    for sweep_above in SWEEP_ABOVES {
        let mut scalar = grid(PairKernel::Scalar, leaf_capacity, sweep_above);
        assert_eq!(scalar.pair_kernel(), PairKernel::Scalar);
        let expected = support::sorted_pairs(&mut scalar, boxes);
        let expected_hits = sorted_hits(&scalar, &queries);
        for kernel in PairKernel::available() {
            let mut simd = grid(kernel, leaf_capacity, sweep_above);
            assert_eq!(simd.pair_kernel(), kernel, "an available kernel is used as asked");
            let got = support::sorted_pairs(&mut simd, boxes);
            assert!(
                got == expected,
                "{name}, {kernel:?}, leaf {leaf_capacity}, sweep above {sweep_above}: {} pairs, scalar {}",
                got.len(),
                expected.len()
            );
            let hits = sorted_hits(&simd, &queries);
            for ((q, got), want) in queries.iter().zip(&hits).zip(&expected_hits) {
                assert_eq!(got, want, "{name}, {kernel:?}, sweep above {sweep_above}: query {q:?}");
            }
        }
    }
}

/// dense20k: many boxes per leaf, so every lane and tile of the kernels runs.
#[test]
fn kernels_agree_on_dense20k() {
    let scene = dense20k();
    all_kernels_agree(scene.name, &scene.boxes, GridConfig::default().leaf_capacity);
}

/// mixed100k: widths over two orders of magnitude, boxes copied into many cells.
#[test]
fn kernels_agree_on_mixed100k() {
    let scene = mixed100k();
    all_kernels_agree(scene.name, &scene.boxes, GridConfig::default().leaf_capacity);
}

/// Random dense scenes of every size up to a few leaves, including sizes
/// that leave partly filled SIMD rows (padding lanes), with small and large
/// leaves.
#[test]
fn kernels_agree_on_random_dense_scenes() {
    let mut rng = SplitMix64::new(0xD15E_A5E5);
    for round in 0..60 {
        let count = match round {
            0..20 => round + 1,
            _ => 1 + rng.below(3_000),
        };
        let side = 2.0 * (count as f32).cbrt() + 1.0;
        let boxes: Vec<Aabb> = (0..count)
            .map(|_| {
                let c = Vec3::new(
                    rng.range_f32(0.0, side),
                    rng.range_f32(0.0, side),
                    rng.range_f32(0.0, side),
                );
                if rng.below(4) == 0 {
                    object_box(c)
                } else {
                    Aabb::from_center_half_extent(c, Vec3::splat(rng.range_f32(0.0, 1.5)))
                }
            })
            .collect();
        for leaf_capacity in [1, 7, 64, 512] {
            all_kernels_agree(&format!("random dense {count}"), &boxes, leaf_capacity);
        }
    }
}

/// `Auto` resolves to the best kernel this CPU runs; an available kernel
/// resolves to itself; an unavailable one falls back to `Scalar` (and the
/// grid reports the kernel it really runs).
#[test]
fn kernel_selection_only_picks_available_kernels() {
    let available = PairKernel::available();
    assert_eq!(available[0], PairKernel::Scalar, "scalar is always available, first");
    assert!(available.contains(&PairKernel::Auto.resolve()));
    assert_ne!(PairKernel::Auto.resolve(), PairKernel::Auto);
    assert_eq!(AdaptiveGrid::default().pair_kernel(), PairKernel::Auto.resolve());

    let mut supported = vec![PairKernel::Scalar];
    if PairKernel::Avx2.is_supported() {
        supported.push(PairKernel::Avx2);
    }
    assert_eq!(available, supported, "Scalar, then AVX2 where the CPU runs it");
    for requested in [PairKernel::Auto, PairKernel::Scalar, PairKernel::Avx2] {
        let resolved = requested.resolve();
        assert!(available.contains(&resolved), "{requested:?} resolved to {resolved:?}");
        assert!(resolved.is_supported());
        if requested != PairKernel::Auto {
            assert_eq!(requested.is_supported(), available.contains(&requested));
            if requested.is_supported() {
                assert_eq!(resolved, requested);
            } else {
                assert_ne!(resolved, requested, "an unsupported kernel must not run");
                assert_eq!(
                    resolved,
                    PairKernel::Scalar,
                    "an unsupported kernel falls back to Scalar"
                );
            }
        } else {
            // Auto is the best supported kernel: AVX2 wherever it runs.
            let best =
                if PairKernel::Avx2.is_supported() { PairKernel::Avx2 } else { PairKernel::Scalar };
            assert_eq!(resolved, best);
        }
        let grid = grid(requested, 64, GridConfig::default().sweep_above);
        assert_eq!(grid.pair_kernel(), resolved);
    }
}

/// A grid asked for every kernel, supported or not, still gives the scalar
/// pairs: a fallback kernel is a working kernel.
#[test]
fn unavailable_kernel_request_still_gives_correct_pairs() {
    let scene = dense20k();
    let boxes = &scene.boxes[..5_000];
    let sweep_above = GridConfig::default().sweep_above;
    let expected = support::sorted_pairs(&mut grid(PairKernel::Scalar, 64, sweep_above), boxes);
    for requested in [PairKernel::Auto, PairKernel::Scalar, PairKernel::Avx2] {
        let got = support::sorted_pairs(&mut grid(requested, 64, sweep_above), boxes);
        assert!(got == expected, "{requested:?}: {} pairs, scalar {}", got.len(), expected.len());
    }
}

/// The kernels the tests above compare are the ones this machine must
/// exercise: `BROADPHASE_REQUIRE_SIMD` (comma-separated `avx2`, `avx512`;
/// CI sets it from the CPU's flags) names the SIMD paths that must be among
/// them, so a build or a machine that silently compares the scalar kernel
/// with itself fails here instead of passing.
#[test]
fn the_required_simd_kernels_are_tested() {
    let tested = PairKernel::available();
    eprintln!("pair kernels tested: {tested:?}");
    assert!(tested.contains(&PairKernel::Scalar));
    for required in broadphase_testkit::required_simd() {
        match required.as_str() {
            "avx2" => {
                assert!(tested.contains(&PairKernel::Avx2), "AVX2 required, tested {tested:?}")
            }
            // The box kernel's widest path is AVX2: 16-lane tiles measured no faster.
            "avx512" => {}
            other => panic!("BROADPHASE_REQUIRE_SIMD: unknown path {other:?}"),
        }
    }
}
