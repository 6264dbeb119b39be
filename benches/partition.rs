//! All-cores benchmarks: the grid tree on 1 thread and on every thread,
//! against the single-thread kernel, on the shared scenes.
//!
//! Every timed loop reuses its tree, job system and output `Vec` across
//! iterations, as a game does from one frame to the next (warm frames).
//! Before anything is timed, the tree's pairs (on 1 and on all threads)
//! must equal the kernel's as a set, so a fast wrong answer is never
//! recorded.
//!
//! Groups (criterion ids are `group/function`):
//!
//! - one per scene (`uniform1m`, `clusters16_40k`, `stretched40k`):
//!   - `kernel/total`: [`AdaptiveGrid::find_pairs`], one thread;
//!   - `tree/1`: [`GridTree::find_pairs`] on a 1-thread [`JobSystem`] (no
//!     worker: the calling thread runs every job);
//!   - `tree/N` for every N in 2.. up to the available cores;
//! - `split_threshold`: the tree on all cores on query10k (10,003 boxes)
//!   and uniform12k (12,000 boxes at sparse20k's density): both between
//!   the two defaults below, so they run on the calling thread at 16,384
//!   and on all threads at 10,000; then dense20k and the two 40k scenes;
//!   for [`GridTreeConfig::split_threshold`] in 4,096, 8,192, 10,000 (the
//!   default), 16,384 (the default before 2026-11-27) and 32,768 (id
//!   `scene/threshold`);
//! - `merge`: [`PairMerge::ReferencePoint`] (the default) against
//!   [`PairMerge::ShardedFastUnique`] on sparse20k, dense20k,
//!   clusters16_40k and uniform1m, on 1 and 2 threads (id
//!   `scene/reference/threads`, `scene/sharded/threads`).
//!
//! Before each scene group, a plain loop times 15 frames of each variant
//! and prints the medians and the speedup of all threads over 1 (the
//! criterion figures are the ones to record; the printout is the quick
//! read, and what CI logs show).
//!
//! ```text
//! cargo bench --bench partition                # everything, ~5 minutes on 2 cores
//! cargo bench --bench partition -- uniform1m/  # one scene
//! cargo bench --bench partition -- merge/      # the two merges side by side
//! ```
//!
//! For instruction counts, `PARTITION_FRAMES=scene,merge,threshold,threads`
//! (merge `reference` or `sharded`) runs no criterion at all: two warm-up
//! frames of that tree, then five in `counted_frame`, for callgrind's
//! `--toggle-collect`:
//!
//! ```text
//! cargo bench --bench partition --no-run
//! PARTITION_FRAMES=dense20k,sharded,10000,1 valgrind --tool=callgrind \
//!     --toggle-collect='*counted_frame*' target/release/deps/partition-<hash>
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase::tree::{GridTreeConfig, PairMerge};
use broadphase::{Aabb, AdaptiveGrid, GridTree, JobSystem};
use broadphase_scenes::{
    Scene, clusters16_40k, dense20k, query10k, sparse20k, stretched40k, uniform, uniform1m,
};
use criterion::Criterion;
use criterion::SamplingMode;

/// Thread counts timed: 1, then every count up to the available cores.
fn thread_counts() -> Vec<usize> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (1..=cores.max(2)).collect()
}

fn kernel_frame(grid: &mut AdaptiveGrid, boxes: &[Aabb], out: &mut Vec<[u32; 2]>) {
    grid.find_pairs(boxes, out).expect("scenes are valid");
}

/// Panics unless the tree on `jobs` gives the kernel's pairs.
fn check(scene: &Scene, jobs: &JobSystem, config: GridTreeConfig) {
    let mut expected = Vec::new();
    kernel_frame(&mut AdaptiveGrid::default(), &scene.boxes, &mut expected);
    let mut pairs = Vec::new();
    GridTree::with_config(config).find_pairs(jobs, &scene.boxes, &mut pairs).expect("valid");
    pairs.sort_unstable();
    expected.sort_unstable();
    assert!(
        pairs == expected,
        "{}: tree on {} threads ({config:?}) differs from the kernel",
        scene.name,
        jobs.threads()
    );
}

/// Median wall time of `frames` runs of `f`, in ms, after two warm-ups.
fn median_ms(frames: usize, mut f: impl FnMut()) -> f64 {
    f();
    f();
    let mut times: Vec<f64> = (0..frames)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[frames / 2]
}

/// The quick printout: medians of plain loops and the speedup.
fn print_summary(scene: &Scene, systems: &[JobSystem]) {
    let boxes = &scene.boxes;
    let mut out = Vec::new();
    let mut grid = AdaptiveGrid::default();
    let kernel = median_ms(15, || kernel_frame(&mut grid, boxes, &mut out));
    let mut line = format!("{:>15}: kernel {kernel:.3} ms", scene.name);
    let mut one = 0.0;
    for jobs in systems {
        let mut tree = GridTree::default();
        let t = median_ms(15, || tree.find_pairs(jobs, boxes, &mut out).expect("valid"));
        if jobs.threads() == 1 {
            one = t;
        }
        line += &format!(" | tree {} thr {t:.3} ms ({:.2}x)", jobs.threads(), one / t);
    }
    println!("{line}   [speedup vs tree on 1 thread; {} pairs]", out.len());
}

fn scene_group(c: &mut Criterion, scene: &Scene, systems: &[JobSystem]) {
    for jobs in systems {
        check(scene, jobs, GridTreeConfig::default());
    }
    print_summary(scene, systems);
    let big = scene.boxes.len() > 100_000;
    let mut group = c.benchmark_group(scene.name);
    group.sampling_mode(SamplingMode::Flat);
    if big {
        group.sample_size(10).measurement_time(Duration::from_secs(8));
    } else {
        group.sample_size(30).measurement_time(Duration::from_secs(3));
    }
    let boxes = &scene.boxes;
    let mut out = Vec::new();
    let mut grid = AdaptiveGrid::default();
    group.bench_function("kernel/total", |b| {
        b.iter(|| kernel_frame(&mut grid, black_box(boxes), &mut out))
    });
    for jobs in systems {
        let mut tree = GridTree::default();
        group.bench_function(format!("tree/{}", jobs.threads()), |b| {
            b.iter(|| tree.find_pairs(jobs, black_box(boxes), &mut out).expect("valid"))
        });
    }
    group.finish();
}

/// 12,000 boxes at sparse20k's density: between the old and the new
/// default threshold.
fn uniform12k() -> Scene {
    Scene { name: "uniform12k", ..uniform(12_000, 12) }
}

fn threshold_group(c: &mut Criterion, scenes: &[Scene], jobs: &JobSystem) {
    let mut group = c.benchmark_group("split_threshold");
    group.sampling_mode(SamplingMode::Flat).sample_size(20);
    group.measurement_time(Duration::from_secs(3));
    for scene in scenes.iter().filter(|s| s.boxes.len() < 100_000) {
        for split_threshold in [4_096, 8_192, 10_000, 16_384, 32_768] {
            let config = GridTreeConfig { split_threshold, ..GridTreeConfig::default() };
            check(scene, jobs, config);
            let mut tree = GridTree::with_config(config);
            let mut out = Vec::new();
            group.bench_function(format!("{}/{split_threshold}", scene.name), |b| {
                b.iter(|| tree.find_pairs(jobs, black_box(&scene.boxes), &mut out).expect("valid"))
            });
        }
    }
    group.finish();
}

/// The bench id's name of a merge.
fn merge_name(merge: PairMerge) -> &'static str {
    match merge {
        PairMerge::ReferencePoint => "reference",
        PairMerge::ShardedFastUnique => "sharded",
    }
}

const MERGES: [PairMerge; 2] = [PairMerge::ReferencePoint, PairMerge::ShardedFastUnique];

/// The two merges side by side, on 1 and 2 threads, default threshold.
fn merge_group(c: &mut Criterion, scenes: &[&Scene], systems: &[JobSystem]) {
    let mut group = c.benchmark_group("merge");
    group.sampling_mode(SamplingMode::Flat);
    for scene in scenes {
        if scene.boxes.len() > 100_000 {
            group.sample_size(10).measurement_time(Duration::from_secs(8));
        } else {
            group.sample_size(30).measurement_time(Duration::from_secs(3));
        }
        for jobs in systems.iter().filter(|jobs| jobs.threads() <= 2) {
            for merge in MERGES {
                let config = GridTreeConfig { merge, ..GridTreeConfig::default() };
                check(scene, jobs, config);
                let mut tree = GridTree::with_config(config);
                let mut out = Vec::new();
                let id = format!("{}/{}/{}", scene.name, merge_name(merge), jobs.threads());
                group.bench_function(id, |b| {
                    b.iter(|| {
                        tree.find_pairs(jobs, black_box(&scene.boxes), &mut out).expect("valid")
                    })
                });
            }
        }
    }
    group.finish();
}

fn benches() {
    let mut c = Criterion::default().configure_from_args();
    let systems: Vec<JobSystem> = thread_counts().into_iter().map(JobSystem::new).collect();
    let scenes = [uniform1m(), clusters16_40k(), stretched40k()];
    for scene in &scenes {
        scene_group(&mut c, scene, &systems);
    }
    let all = systems.last().expect("at least one system");
    let (uniform12k, sparse20k, dense20k) = (uniform12k(), sparse20k(), dense20k());
    let threshold_scenes =
        [query10k(), uniform12k, dense20k.clone(), scenes[1].clone(), scenes[2].clone()];
    threshold_group(&mut c, &threshold_scenes, all);
    merge_group(&mut c, &[&sparse20k, &dense20k, &scenes[1], &scenes[0]], &systems);
    c.final_summary();
}

/// One frame of the instruction-count mode, kept out of line so that
/// callgrind can count it alone.
#[inline(never)]
fn counted_frame(tree: &mut GridTree, jobs: &JobSystem, boxes: &[Aabb], out: &mut Vec<[u32; 2]>) {
    tree.find_pairs(jobs, boxes, out).expect("valid");
}

/// The instruction-count mode: `scene,merge,threshold,threads`.
fn count_frames(spec: &str) {
    let fields: Vec<&str> = spec.split(',').collect();
    let [scene, merge, threshold, threads] = fields[..] else {
        panic!("PARTITION_FRAMES={spec}: want scene,merge,threshold,threads");
    };
    let scene = match scene {
        "query10k" => query10k(),
        "uniform12k" => uniform12k(),
        "sparse20k" => sparse20k(),
        "dense20k" => dense20k(),
        "clusters16_40k" => clusters16_40k(),
        "stretched40k" => stretched40k(),
        "uniform1m" => uniform1m(),
        other => panic!("unknown scene {other}"),
    };
    let merge = MERGES
        .into_iter()
        .find(|&m| merge_name(m) == merge)
        .unwrap_or_else(|| panic!("merge {merge}: want reference or sharded"));
    let split_threshold = threshold.parse().expect("threshold: a box count");
    let jobs = JobSystem::new(threads.parse().expect("threads: a count"));
    let mut tree =
        GridTree::with_config(GridTreeConfig { split_threshold, merge, ..Default::default() });
    let mut out = Vec::new();
    for _ in 0..2 {
        tree.find_pairs(&jobs, &scene.boxes, &mut out).expect("valid");
    }
    for _ in 0..5 {
        counted_frame(&mut tree, &jobs, black_box(&scene.boxes), &mut out);
    }
    println!("{}: {} pairs, {:?}", scene.name, out.len(), tree.stats());
}

fn main() {
    match std::env::var("PARTITION_FRAMES") {
        Ok(spec) => count_frames(&spec),
        Err(_) => benches(),
    }
}
