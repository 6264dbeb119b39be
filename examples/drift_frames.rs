//! A fixed sequence of frames of a drifting scene: the persistent broad
//! phase's update against the grid tree's rebuild of the same boxes, in
//! one run.
//!
//! Criterion's few samples of `drift1m` catch different shares of cheap
//! frames and frames that rebuild the index; a fixed sequence of frames
//! (the same in every build) sums them all. Each frame steps the scene
//! (untimed), sets every box and updates (the update timed alone and with
//! the set), then rebuilds the grid tree over the same boxes (timed).
//!
//! ```text
//! cargo run --release --example drift_frames
//! cargo run --release --example drift_frames -- --scene drift100k --warmup 60 --frames 400 --threads 2
//! ```
//!
//! Flags: `--scene drift1m|drift100k` (default drift1m), `--warmup N`
//! (frames before timing, default 60), `--frames N` (timed frames, default
//! 400), `--threads N` (the job system, the main thread included; default
//! 2). It prints the sums in ms, the update's share of the rebuild, and
//! how many timed updates rebuilt the index. On Linux it also sums the CPU
//! time the process's threads ran during each update and rebuild (from
//! `/proc/self/task/*/schedstat`): on a machine shared with other work,
//! wall time counts the waits for a core, CPU time does not.

use std::time::{Duration, Instant};

use broadphase::persistent::{PersistentBroadPhase, ProxyKind};
use broadphase::{GridTree, JobSystem};
use broadphase_scenes::{MovingScene, drift1m, drift100k};

fn main() {
    let mut scene_name = String::from("drift1m");
    let (mut warmup, mut frames, mut threads) = (60usize, 400usize, 2usize);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let number = || value.parse::<usize>().unwrap_or_else(|_| panic!("{flag}: {value}"));
        match flag.as_str() {
            "--scene" => scene_name = value.clone(),
            "--warmup" => warmup = number(),
            "--frames" => frames = number(),
            "--threads" => threads = number().max(1),
            _ => panic!("unknown flag {flag}"),
        }
    }
    let mut scene: MovingScene = match scene_name.as_str() {
        "drift1m" => drift1m(),
        "drift100k" => drift100k(),
        other => panic!("unknown scene {other}"),
    };
    let jobs = JobSystem::new(threads);
    let mut world = PersistentBroadPhase::default();
    let mut handles = Vec::new();
    world.insert_many(&scene.boxes, ProxyKind::Dynamic, &mut handles).expect("valid scene");
    world.update(&jobs).expect("update");
    let mut tree = GridTree::default();
    let mut tree_pairs = Vec::new();

    let (mut update, mut frame, mut rebuild) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let (mut index_rebuilds, mut pairs) = (0usize, 0usize);
    let (mut update_cpu, mut rebuild_cpu) = (0u64, 0u64);
    for n in 0..warmup + frames {
        scene.step();
        let start = Instant::now();
        world.set_aabbs(&jobs, &handles, &scene.boxes).expect("valid boxes");
        let set = start.elapsed();
        let cpu = cpu_ns();
        let start = Instant::now();
        world.update(&jobs).expect("update");
        let updated = start.elapsed();
        let update_ran = cpu_ns() - cpu;
        if n < warmup {
            continue;
        }
        update += updated;
        update_cpu += update_ran;
        frame += set + updated;
        index_rebuilds += usize::from(world.stats().index_rebuilt);
        pairs += world.pairs().len();
        let cpu = cpu_ns();
        let start = Instant::now();
        tree.find_pairs(&jobs, &scene.boxes, &mut tree_pairs).expect("valid boxes");
        rebuild += start.elapsed();
        rebuild_cpu += cpu_ns() - cpu;
        assert_eq!(tree_pairs.len(), world.pairs().len(), "frame {n}: the pair counts differ");
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{scene_name}, {threads} threads, {warmup} warm-up + {frames} frames: \
         update {:.1} ms, frame (set + update) {:.1} ms, rebuild {:.1} ms, \
         update / rebuild {:.3}, frame / rebuild {:.3}, index rebuilt {index_rebuilds}×, \
         {:.0} pairs a frame",
        ms(update),
        ms(frame),
        ms(rebuild),
        ms(update) / ms(rebuild),
        ms(frame) / ms(rebuild),
        pairs as f64 / frames.max(1) as f64,
    );
    if rebuild_cpu > 0 {
        let cpu_ms = |ns: u64| ns as f64 / 1e6;
        println!(
            "CPU time: update {:.1} ms, rebuild {:.1} ms, update / rebuild {:.3}",
            cpu_ms(update_cpu),
            cpu_ms(rebuild_cpu),
            update_cpu as f64 / rebuild_cpu as f64,
        );
    }
}

/// Nanoseconds the process's threads have run, summed (0 where
/// `/proc/self/task/*/schedstat` cannot be read).
fn cpu_ns() -> u64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else { return 0 };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|stat| stat.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}
