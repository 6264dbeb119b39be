//! Property tests: the adaptive grid finds exactly the pairs and query hits
//! that brute force finds, on every kind of awkward scene, with every leaf
//! capacity, big-leaf sweep threshold and pair kernel, on both paths (one
//! frame of `find_pairs`, and `build` then `pairs` and `query`), and keeps
//! doing so when one grid is rebuilt with another scene.
//!
//! Scenes come from a kind, a size and a seed through [`SplitMix64`], so a
//! failing case is reproduced by its printed `(kind, size, seed, config)`.

use broadphase_kernel::{
    Aabb, AdaptiveGrid, GridConfig, PairKernel, brute_force_pairs, brute_force_query,
};
use broadphase_scenes::SplitMix64;
use glam::Vec3;
use proptest::prelude::*;

/// The kinds of scene the strategy picks from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Boxes of moderate size, centers uniform in a cube.
    Uniform,
    /// A few tight clusters far apart.
    Clustered,
    /// Widths log-uniform over four orders of magnitude, 0.01 to 100.
    MixedSizes,
    /// Many exact copies of a few boxes.
    Coincident,
    /// One box overlapping every other, at a random index.
    OneOverlapsAll,
    /// Integer-lattice boxes as wide as the spacing: faces, edges and corners
    /// touch exactly; some boxes have zero width.
    Touching,
    /// Points (zero-size boxes), some duplicated.
    ZeroSize,
    /// A cluster in `[0, 100)³`, three boxes near 9000 and maybe one at -1e6.
    Teapots,
    /// Centers at ±1e30 and near ±3e38 with widths 1 to 1e29, plus ordinary boxes.
    HugeCoordinates,
    /// Every box has `z` min = max = 0.
    Flat,
    /// Long thin sticks spanning the whole x range, with a few ordinary boxes.
    Sticks,
}

const KINDS: [Kind; 11] = [
    Kind::Uniform,
    Kind::Clustered,
    Kind::MixedSizes,
    Kind::Coincident,
    Kind::OneOverlapsAll,
    Kind::Touching,
    Kind::ZeroSize,
    Kind::Teapots,
    Kind::HugeCoordinates,
    Kind::Flat,
    Kind::Sticks,
];

const LEAF_CAPACITIES: [usize; 6] = [1, 2, 4, 16, 64, 512];

/// `GridConfig::sweep_above` values: tiny ones, so random scenes reach the
/// big-leaf sweep (not only piles), and the default.
const SWEEP_ABOVES: [usize; 3] = [2, 8, 1024];

fn point(rng: &mut SplitMix64, lo: f32, hi: f32) -> Vec3 {
    Vec3::new(rng.range_f32(lo, hi), rng.range_f32(lo, hi), rng.range_f32(lo, hi))
}

fn cube(center: Vec3, width: f32) -> Aabb {
    Aabb::from_center_half_extent(center, Vec3::splat(width * 0.5))
}

/// A width log-uniform in `[lo, hi)`.
fn log_uniform(rng: &mut SplitMix64, lo: f32, hi: f32) -> f32 {
    let (lo, hi) = (f64::from(lo), f64::from(hi));
    (lo * (f64::from(rng.next_f32()) * (hi / lo).ln()).exp()) as f32
}

/// `count` boxes of `kind`, deterministic in `seed`.
fn scene(kind: Kind, count: usize, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    let rng = &mut rng;
    let mut boxes = Vec::with_capacity(count);
    match kind {
        Kind::Uniform => {
            // About the same density whatever the count.
            let side = 3.0 * (count.max(1) as f32).cbrt() + 1.0;
            for _ in 0..count {
                let c = point(rng, 0.0, side);
                let half = Vec3::new(
                    rng.range_f32(0.25, 2.0),
                    rng.range_f32(0.25, 2.0),
                    rng.range_f32(0.25, 2.0),
                );
                boxes.push(Aabb::from_center_half_extent(c, half));
            }
        }
        Kind::Clustered => {
            let centers: Vec<Vec3> =
                (0..1 + rng.below(4)).map(|_| point(rng, -1000.0, 1000.0)).collect();
            for _ in 0..count {
                let c = centers[rng.below(centers.len())] + point(rng, -3.0, 3.0);
                boxes.push(cube(c, rng.range_f32(0.1, 2.0)));
            }
        }
        Kind::MixedSizes => {
            let side = 10.0 * (count.max(1) as f32).cbrt() + 1.0;
            for _ in 0..count {
                let c = point(rng, 0.0, side);
                let half = Vec3::new(
                    log_uniform(rng, 0.01, 100.0),
                    log_uniform(rng, 0.01, 100.0),
                    log_uniform(rng, 0.01, 100.0),
                ) * 0.5;
                boxes.push(Aabb::from_center_half_extent(c, half));
            }
        }
        Kind::Coincident => {
            let originals: Vec<Aabb> = (0..1 + rng.below(4))
                .map(|_| cube(point(rng, 0.0, 8.0), rng.range_f32(0.0, 4.0)))
                .collect();
            for _ in 0..count {
                boxes.push(originals[rng.below(originals.len())]);
            }
        }
        Kind::OneOverlapsAll => {
            for _ in 0..count.saturating_sub(1) {
                boxes.push(cube(point(rng, 0.0, 1000.0), rng.range_f32(0.5, 20.0)));
            }
            if count > 0 {
                let big = Aabb::new(Vec3::splat(-20.0), Vec3::splat(1020.0));
                boxes.insert(rng.below(count), big);
            }
        }
        Kind::Touching => {
            // Spacings and lattice coordinates are exact in f32, so touching
            // boxes share a face, edge or corner exactly.
            let spacing = [0.25_f32, 1.0, 2.0, 8.0][rng.below(4)];
            let side = (count.max(1) as f32).cbrt().ceil() as usize + 1;
            for _ in 0..count {
                let cell = Vec3::new(
                    rng.below(side) as f32,
                    rng.below(side) as f32,
                    rng.below(side) as f32,
                );
                let min = cell * spacing;
                let mut width = Vec3::splat(spacing);
                for axis in 0..3 {
                    if rng.below(5) == 0 {
                        width[axis] = 0.0;
                    }
                }
                boxes.push(Aabb::new(min, min + width));
            }
        }
        Kind::ZeroSize => {
            for i in 0..count {
                if i > 0 && rng.below(4) == 0 {
                    boxes.push(boxes[rng.below(i)]);
                } else {
                    // Mostly on a coarse lattice, so distinct points also coincide.
                    let z = if rng.below(2) == 0 {
                        rng.below(8) as f32
                    } else {
                        rng.range_f32(0.0, 8.0)
                    };
                    let p = Vec3::new(rng.below(8) as f32, rng.below(8) as f32, z);
                    boxes.push(Aabb::new(p, p));
                }
            }
        }
        Kind::Teapots => {
            let outliers = [
                cube(Vec3::splat(9000.0), 4.0),
                cube(Vec3::splat(9001.0), 4.0),
                cube(Vec3::new(9002.0, 8999.0, 9003.5), 4.0),
                cube(Vec3::splat(-1e6), 10.0),
            ];
            let outlier_count = if rng.below(2) == 0 { 3 } else { 4 };
            for _ in 0..count.saturating_sub(outlier_count) {
                boxes.push(cube(point(rng, 0.0, 100.0), rng.range_f32(1.0, 6.0)));
            }
            for outlier in outliers.iter().take(outlier_count.min(count)) {
                boxes.insert(rng.below(boxes.len() + 1), *outlier);
            }
        }
        Kind::HugeCoordinates => {
            for _ in 0..count {
                let pick = |rng: &mut SplitMix64| match rng.below(6) {
                    0 => 1e30,
                    1 => -1e30,
                    2 => 3.0e38 + rng.range_f32(0.0, 2.0e37),
                    3 => -3.0e38 - rng.range_f32(0.0, 2.0e37),
                    _ => rng.range_f32(0.0, 50.0),
                };
                let c = Vec3::new(pick(rng), pick(rng), pick(rng));
                let width = if rng.below(3) == 0 {
                    rng.range_f32(1.0, 8.0)
                } else {
                    log_uniform(rng, 1.0, 1e29)
                };
                boxes.push(cube(c, width));
            }
        }
        Kind::Flat => {
            let side = 4.0 * (count.max(1) as f32).sqrt() + 1.0;
            for _ in 0..count {
                let min = Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), 0.0);
                let size = Vec3::new(rng.range_f32(0.0, 4.0), rng.range_f32(0.0, 4.0), 0.0);
                boxes.push(Aabb::new(min, min + size));
            }
        }
        Kind::Sticks => {
            let side = 1.5 * (count.max(1) as f32).sqrt() + 2.0;
            for _ in 0..count {
                if rng.below(8) == 0 {
                    let c = Vec3::new(
                        rng.range_f32(0.0, 1000.0),
                        rng.range_f32(0.0, side),
                        rng.range_f32(0.0, side),
                    );
                    boxes.push(cube(c, rng.range_f32(1.0, 10.0)));
                } else {
                    let y = rng.range_f32(0.0, side);
                    let z = rng.range_f32(0.0, side);
                    let t = rng.range_f32(0.0, 3.0);
                    boxes.push(Aabb::new(Vec3::new(0.0, y, z), Vec3::new(1000.0, y + t, z + t)));
                }
            }
        }
    }
    debug_assert_eq!(boxes.len(), count);
    boxes
}

/// 8 query boxes for a scene of `kind`: 5 drawn from the same kind and seed
/// (so many coincide with or lie near scene boxes), one scene box grown, a
/// zero-size query on a box's min corner, and one covering all of `f32`
/// space.
fn queries(kind: Kind, boxes: &[Aabb], seed: u64) -> Vec<Aabb> {
    let extended = scene(kind, boxes.len() + 6, seed);
    let mut rng = SplitMix64::new(seed ^ 0x5DEE_CE66_D1CE_F00D);
    let mut qs: Vec<Aabb> = (0..5).map(|_| extended[rng.below(extended.len())]).collect();
    if let Some(b) = boxes.get(rng.below(boxes.len().max(1))) {
        let grow = (b.max - b.min).max(Vec3::ONE) * rng.range_f32(0.0, 2.0);
        qs.push(Aabb::new(b.min - grow, b.max + grow));
    }
    let corner = boxes.get(rng.below(boxes.len().max(1))).map_or(Vec3::ZERO, |b| b.min);
    qs.push(Aabb::new(corner, corner));
    qs.push(Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(f32::MAX)));
    qs
}

fn config(leaf: usize, sweep: usize, kernel: PairKernel) -> GridConfig {
    GridConfig {
        leaf_capacity: LEAF_CAPACITIES[leaf],
        sweep_above: SWEEP_ABOVES[sweep],
        kernel,
        ..GridConfig::default()
    }
}

/// Checks both paths on `boxes` against brute force: first one frame of
/// `find_pairs` (which keeps no tree), then `build` with validate, pairs and
/// queries.
fn check(
    grid: &mut AdaptiveGrid,
    kind: Kind,
    boxes: &[Aabb],
    seed: u64,
) -> Result<(), TestCaseError> {
    let mut expected = Vec::new();
    brute_force_pairs(boxes, &mut expected).unwrap();

    let config = *grid.config();

    let mut got = vec![[7, 7]];
    prop_assert_eq!(grid.find_pairs(boxes, &mut got), Ok(()));
    got.sort_unstable();
    prop_assert_eq!(
        &got,
        &expected,
        "find_pairs differs (sorted; duplicates would show), {:?}",
        config
    );
    // One frame keeps nothing: no boxes, no query hits, only the build of
    // no box validates.
    prop_assert_eq!(grid.len(), 0, "find_pairs keeps no tree");
    let mut hits = vec![7];
    let everything = Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(f32::MAX));
    prop_assert_eq!(grid.query_aabb(&everything, &mut hits), Ok(()));
    prop_assert!(hits.is_empty(), "a query after find_pairs found {:?}", hits);
    prop_assert_eq!(grid.validate(boxes).is_err(), !boxes.is_empty(), "validate after find_pairs");
    prop_assert_eq!(grid.validate(&[]), Ok(()));

    prop_assert_eq!(grid.build(boxes), Ok(()));
    prop_assert_eq!(grid.len(), boxes.len());
    if let Err(e) = grid.validate(boxes) {
        return Err(TestCaseError::fail(format!("{e}; {config:?}; boxes: {boxes:?}")));
    }

    grid.pairs(&mut got);
    got.sort_unstable();
    prop_assert_eq!(&got, &expected, "pairs differ (sorted; duplicates would show), {:?}", config);

    let mut expected_hits = Vec::new();
    for q in queries(kind, boxes, seed) {
        prop_assert_eq!(grid.query_aabb(&q, &mut hits), Ok(()));
        hits.sort_unstable();
        brute_force_query(boxes, &q, &mut expected_hits).unwrap();
        prop_assert_eq!(&hits, &expected_hits, "query {:?}, {:?}", q, config);
    }
    Ok(())
}

fn kind_strategy() -> impl Strategy<Value = Kind> {
    (0..KINDS.len()).prop_map(|i| KINDS[i])
}

/// Cases per property: 512 in `cargo test`; `PROPTEST_CASES` asks for a
/// deeper run (CI runs 8,192).
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|cases| cases.parse().ok()).unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(512),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Every scene kind, size and config: exact pairs and query hits, and a
    /// tree that passes its own invariant checker.
    #[test]
    fn grid_equals_brute_force(
        kind in kind_strategy(),
        size in 0usize..=600,
        seed in any::<u64>(),
        leaf in 0..LEAF_CAPACITIES.len(),
        sweep in 0..SWEEP_ABOVES.len(),
    ) {
        let boxes = scene(kind, size, seed);
        for kernel in PairKernel::available() {
            let mut grid = AdaptiveGrid::with_config(config(leaf, sweep, kernel));
            check(&mut grid, kind, &boxes, seed)?;
        }
    }
}

proptest! {
    // Three builds a case: a quarter of the cases covers as many builds.
    #![proptest_config(ProptestConfig {
        cases: cases(512) / 4,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// One grid object rebuilt with a second (and then the first) scene
    /// gives the same answers as fresh grids: nothing of an earlier build or
    /// frame leaks into a later one, whichever path ran before.
    #[test]
    fn rebuilt_grid_equals_brute_force(
        first in (kind_strategy(), 0usize..=600, any::<u64>()),
        second in (kind_strategy(), 0usize..=600, any::<u64>()),
        leaf in 0..LEAF_CAPACITIES.len(),
        sweep in 0..SWEEP_ABOVES.len(),
    ) {
        let a = scene(first.0, first.1, first.2);
        let b = scene(second.0, second.1, second.2);
        for kernel in PairKernel::available() {
            let mut grid = AdaptiveGrid::with_config(config(leaf, sweep, kernel));
            check(&mut grid, first.0, &a, first.2)?;
            check(&mut grid, second.0, &b, second.2)?;
            check(&mut grid, first.0, &a, first.2)?;
        }
    }
}

/// The smallest scenes of every kind with every config, exhaustively: the
/// edge cases (0, 1, 2 boxes; one more than a leaf) proptest may not draw.
#[test]
fn every_kind_and_config_on_small_sizes() {
    for kind in KINDS {
        for size in [0, 1, 2, 3, 5, 17, 65] {
            for leaf in 0..LEAF_CAPACITIES.len() {
                for sweep in 0..SWEEP_ABOVES.len() {
                    for kernel in PairKernel::available() {
                        let seed = (size * 31 + leaf) as u64;
                        let boxes = scene(kind, size, seed);
                        let mut grid = AdaptiveGrid::with_config(config(leaf, sweep, kernel));
                        if let Err(e) = check(&mut grid, kind, &boxes, seed) {
                            panic!("{kind:?} size {size} config {:?}: {e}", grid.config());
                        }
                    }
                }
            }
        }
    }
}
