//! Single-thread kernel benchmarks: the adaptive grid against the reference
//! broad phases on the shared scenes (see `crates/scenes`).
//!
//! Every timed loop reuses its output `Vec`s and its grid or sweep across
//! iterations, as a game does from one frame to the next, so after the first
//! iteration nothing is timed but the work itself (warm frames). Scenes are
//! generated once, outside the timing, and before anything is timed its
//! answer is checked: the grid's pairs must equal [`SortAndSweep`]'s (same
//! count, same set), and every grid query must equal
//! [`brute_force_query`]'s, so a fast wrong answer is never recorded.
//!
//! Groups (criterion ids are `group/function`):
//!
//! - one per scene (`sparse20k`, `dense20k`, `stretched40k`,
//!   `clusters16_40k`, `mixed100k`, `pile`, `query10k`):
//!   - `grid/find_pairs`: [`AdaptiveGrid::find_pairs`], one frame (the
//!     build with each leaf's pairs found as it is reached);
//!   - `grid/build`: [`AdaptiveGrid::build`] alone (the kept tree);
//!   - `grid/pairs`: [`AdaptiveGrid::pairs`] on a grid built once;
//!   - `grid/total`: build then pairs, one frame on the kept tree;
//!   - `sort_and_sweep/total`: [`SortAndSweep::find_pairs`], one frame;
//!   - `brute_force/total`: [`brute_force_pairs`], only on the scenes of at
//!     most ~20k boxes (not `pile`), with 10 samples, last in its group;
//! - `query10k`, also `grid/query` and `brute_force/query`: latency of one
//!   query, cycling through the 1,000 boxes of `query_boxes(1000, 7)`,
//!   against the grid built once on `query10k` and against a plain linear
//!   scan of its boxes (no input validation, unlike [`brute_force_query`],
//!   so the baseline pays only for the overlap tests);
//!   `grid/1000_queries_after_other_work` and
//!   `grid/find_pairs_after_other_work`: all 1,000 queries, and one
//!   `find_pairs` frame, each timed right after an untimed sort of 200,000
//!   scrambled integers, which stands for the game code that runs between
//!   two broad-phase calls and leaves the caches and branch predictors
//!   trained on other work (divide the first by 1,000 for ns per query);
//! - `leaf_capacity`: `find_pairs` on `sparse20k`, `dense20k` and
//!   `mixed100k` for [`GridConfig::leaf_capacity`] in 32, 64, 128, 256 and
//!   512 (id `scene/capacity`);
//! - `pair_kernel`: `find_pairs` on `dense20k`, `mixed100k` and `pile` for
//!   every kernel of [`PairKernel::available`] on this CPU (id
//!   `scene/kernel`).
//!
//! Apart from the field a group varies, grids use [`GridConfig::default`].
//! The whole run takes about five minutes on a 2-core machine.
//!
//! # Running
//!
//! ```text
//! cargo bench --bench kernel                 # everything
//! cargo bench --bench kernel -- dense20k/    # one scene group
//! cargo bench --bench kernel -- pair_kernel  # one comparison group
//! cargo bench --bench kernel -- --list       # the ids, without running
//! ```
//!
//! Criterion prints each estimate as `[low median high]`; the middle value is
//! the one to record. Built with criterion's default features off (no
//! plots, no HTML report); results and baselines still go to
//! `target/criterion/` for `--save-baseline` / `--baseline` comparisons.

use std::hint::black_box;
use std::time::Duration;

use broadphase::{
    Aabb, AdaptiveGrid,
    grid::{GridConfig, PairKernel},
    oracle::{SortAndSweep, brute_force_pairs, brute_force_query},
};
use broadphase_scenes::{
    Scene, clusters16_40k, dense20k, mixed100k, pile, query_boxes, query10k, sparse20k,
    stretched40k,
};
use criterion::{
    BatchSize, BenchmarkGroup, BenchmarkId, Criterion, SamplingMode, criterion_main,
    measurement::WallTime,
};

/// Scenes up to this many boxes also get a brute-force baseline: the 20k
/// scenes hold 20,004 boxes (20,001 objects and 3 teapots), ~200M tests a
/// frame; the 40k and 100k scenes would take seconds per frame.
const BRUTE_FORCE_MAX_BOXES: usize = 20_004;

/// How many precomputed query boxes the query benchmarks cycle through.
const QUERY_COUNT: usize = 1_000;

/// Seed of the query boxes (`query_boxes(QUERY_COUNT, QUERY_SEED)`).
const QUERY_SEED: u64 = 7;

/// Leaf capacities compared in the `leaf_capacity` group.
const LEAF_CAPACITIES: [usize; 5] = [32, 64, 128, 256, 512];

/// Timing settings shared by every group: short enough that the whole bench
/// stays within a few minutes, long enough for a stable median.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
}

/// Every pair of `boxes` from [`SortAndSweep`], sorted: the expected answer.
fn expected_pairs(boxes: &[Aabb]) -> Vec<[u32; 2]> {
    let mut expected = Vec::new();
    SortAndSweep::default().find_pairs(boxes, &mut expected).expect("scene boxes are valid");
    expected.sort_unstable();
    expected
}

/// A grid with `config`, built on `scene`, after checking that its pairs are
/// exactly `expected` (sorted); panics otherwise, before anything is timed.
fn checked_grid(scene: &Scene, config: GridConfig, expected: &[[u32; 2]]) -> AdaptiveGrid {
    let mut grid = AdaptiveGrid::with_config(config);
    let mut found = Vec::new();
    grid.find_pairs(&scene.boxes, &mut found).expect("scene boxes are valid");
    found.sort_unstable();
    assert!(
        found == expected,
        "{}: find_pairs ({config:?}) differs from sort-and-sweep",
        scene.name
    );
    grid.build(&scene.boxes).expect("scene boxes are valid");
    let mut pairs = Vec::new();
    grid.pairs(&mut pairs);
    assert_eq!(
        pairs.len(),
        expected.len(),
        "{}: grid ({config:?}) finds {} pairs, sort-and-sweep {}",
        scene.name,
        pairs.len(),
        expected.len()
    );
    pairs.sort_unstable();
    assert!(
        pairs == expected,
        "{}: grid ({config:?}) pairs differ from sort-and-sweep",
        scene.name
    );
    grid
}

/// One frame of the grid: `find_pairs` into the reused `out`.
fn grid_find_pairs(grid: &mut AdaptiveGrid, boxes: &[Aabb], out: &mut Vec<[u32; 2]>) -> usize {
    grid.find_pairs(black_box(boxes), out).expect("scene boxes are valid");
    black_box(out.len())
}

/// One frame on the kept tree: build, then all pairs into the reused `out`.
fn grid_frame(grid: &mut AdaptiveGrid, boxes: &[Aabb], out: &mut Vec<[u32; 2]>) -> usize {
    grid.build(black_box(boxes)).expect("scene boxes are valid");
    grid.pairs(out);
    black_box(out.len())
}

/// Times `grid_find_pairs` under `id` in `group`, with a grid of `config`
/// that was checked against `expected` first.
fn bench_find_pairs(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: BenchmarkId,
    scene: &Scene,
    config: GridConfig,
    expected: &[[u32; 2]],
) {
    let mut grid = checked_grid(scene, config, expected);
    let mut out = Vec::with_capacity(expected.len());
    group.bench_function(id, |b| b.iter(|| grid_find_pairs(&mut grid, &scene.boxes, &mut out)));
}

/// The group of one scene: grid build, pairs and total, sort-and-sweep, and
/// brute force on the small scenes.
fn bench_scene(c: &mut Criterion, scene: &Scene) {
    let boxes = scene.boxes.as_slice();
    let expected = expected_pairs(boxes);
    let mut grid = checked_grid(scene, GridConfig::default(), &expected);
    let mut out = Vec::with_capacity(expected.len());

    let mut group = c.benchmark_group(scene.name);
    configure(&mut group);

    group.bench_function("grid/find_pairs", |b| {
        b.iter(|| grid_find_pairs(&mut grid, boxes, &mut out));
    });
    group.bench_function("grid/build", |b| {
        b.iter(|| grid.build(black_box(boxes)).expect("scene boxes are valid"));
    });
    // The last build left the grid indexing `boxes`: pairs alone from here.
    group.bench_function("grid/pairs", |b| {
        b.iter(|| {
            grid.pairs(&mut out);
            black_box(out.len())
        });
    });
    group.bench_function("grid/total", |b| b.iter(|| grid_frame(&mut grid, boxes, &mut out)));

    let mut sweep = SortAndSweep::default();
    group.bench_function("sort_and_sweep/total", |b| {
        b.iter(|| {
            sweep.find_pairs(black_box(boxes), &mut out).expect("scene boxes are valid");
            black_box(out.len())
        });
    });

    if boxes.len() <= BRUTE_FORCE_MAX_BOXES && scene.name != "pile" {
        // ~0.1 s and more a frame: few samples, one frame each.
        group.sample_size(10).sampling_mode(SamplingMode::Flat);
        group.bench_function("brute_force/total", |b| {
            b.iter(|| {
                brute_force_pairs(black_box(boxes), &mut out).expect("scene boxes are valid");
                black_box(out.len())
            });
        });
    }
    group.finish();
}

/// One group per scene, in the order of the design's scene list.
fn scenes(c: &mut Criterion) {
    for make in [sparse20k, dense20k, stretched40k, clusters16_40k, mixed100k, pile, query10k] {
        bench_scene(c, &make());
    }
}

/// Per-query latency on query10k: the grid against a linear scan.
fn queries(c: &mut Criterion) {
    let scene = query10k();
    let boxes = scene.boxes.as_slice();
    let queries = query_boxes(QUERY_COUNT, QUERY_SEED);

    let mut grid = AdaptiveGrid::default();
    grid.build(boxes).expect("scene boxes are valid");
    let (mut hits, mut expected) = (Vec::new(), Vec::new());
    for (n, q) in queries.iter().enumerate() {
        grid.query_aabb(q, &mut hits).expect("query boxes are valid");
        brute_force_query(boxes, q, &mut expected).expect("query boxes are valid");
        hits.sort_unstable();
        assert_eq!(hits, expected, "query10k: grid query {n} differs from brute force");
    }

    let mut group = c.benchmark_group(scene.name);
    configure(&mut group);
    group.sample_size(50);

    let mut next = 0usize;
    group.bench_function("grid/query", |b| {
        b.iter(|| {
            let q = &queries[next % QUERY_COUNT];
            next += 1;
            grid.query_aabb(black_box(q), &mut hits).expect("query boxes are valid");
            black_box(hits.len())
        });
    });

    // Untimed before each sample: what a game does between two calls.
    let other_work = || {
        let mut scrambled: Vec<u64> =
            (0..200_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 17).collect();
        scrambled.sort_unstable();
        black_box(scrambled);
    };
    group.bench_function("grid/1000_queries_after_other_work", |b| {
        b.iter_batched(
            other_work,
            |()| {
                for q in &queries {
                    grid.query_aabb(black_box(q), &mut hits).expect("query boxes are valid");
                    black_box(hits.len());
                }
            },
            BatchSize::PerIteration,
        );
    });
    let mut pairs = Vec::new();
    let mut fused = AdaptiveGrid::default();
    fused.find_pairs(boxes, &mut pairs).expect("scene boxes are valid");
    pairs.sort_unstable();
    assert_eq!(pairs, expected_pairs(boxes), "query10k: find_pairs differs from SortAndSweep");
    group.bench_function("grid/find_pairs_after_other_work", |b| {
        b.iter_batched(
            other_work,
            |()| fused.find_pairs(black_box(boxes), &mut pairs).expect("scene boxes are valid"),
            BatchSize::PerIteration,
        );
    });

    let mut next = 0usize;
    group.bench_function("brute_force/query", |b| {
        b.iter(|| {
            let q = black_box(&queries[next % QUERY_COUNT]);
            next += 1;
            hits.clear();
            for (id, candidate) in boxes.iter().enumerate() {
                if candidate.overlaps(q) {
                    hits.push(id as u32);
                }
            }
            black_box(hits.len())
        });
    });
    group.finish();
}

/// Grid total for each leaf capacity on sparse20k and dense20k.
fn leaf_capacity(c: &mut Criterion) {
    let mut group = c.benchmark_group("leaf_capacity");
    configure(&mut group);
    for scene in [sparse20k(), dense20k(), mixed100k()] {
        let expected = expected_pairs(&scene.boxes);
        for leaf_capacity in LEAF_CAPACITIES {
            let config = GridConfig { leaf_capacity, ..GridConfig::default() };
            let id = BenchmarkId::new(scene.name, leaf_capacity);
            bench_find_pairs(&mut group, id, &scene, config, &expected);
        }
    }
    group.finish();
}

/// `find_pairs` with each pair kernel this CPU runs, on dense20k, mixed100k
/// and the pile.
fn pair_kernel(c: &mut Criterion) {
    let mut group = c.benchmark_group("pair_kernel");
    configure(&mut group);
    for scene in [dense20k(), mixed100k(), pile()] {
        let expected = expected_pairs(&scene.boxes);
        for kernel in PairKernel::available() {
            let config = GridConfig { kernel, ..GridConfig::default() };
            let id = BenchmarkId::new(scene.name, format!("{kernel:?}"));
            bench_find_pairs(&mut group, id, &scene, config, &expected);
        }
    }
    group.finish();
}

/// The benchmark groups, in run order. Kept in a private module: the `pub
/// fn` that `criterion_group!` generates cannot carry a doc comment, and here
/// it is not part of any public surface that `missing_docs` checks.
mod groups {
    use super::{leaf_capacity, pair_kernel, queries, scenes};
    use criterion::criterion_group;

    criterion_group!(benches, scenes, queries, leaf_capacity, pair_kernel);
}

criterion_main!(groups::benches);
