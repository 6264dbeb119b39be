//! Times the GPU backend on the shared scenes beside the CPU structures on
//! the same machine: sph1M's neighbor lists (the GPU's counting-sort
//! search against the CPU's `CountingSortGrid`, both giving CSR lists in
//! point order) and uniform1M's box pairs (against `AdaptiveGrid`), each
//! checked equal before it is timed.
//!
//! A GPU call's time here is the whole call as a caller sees it: upload,
//! the passes, and the read-back of the lists or pairs; the line below it
//! splits that call (the median one) into those parts (`GpuTimings`), with
//! the clock that timed the passes: the device's timestamps where the
//! adapter has them, the host's wait otherwise. On lavapipe (Vulkan on the
//! CPU) the figures say what the backend costs where no GPU is present,
//! not what a GPU does.
//!
//! A GPU's clock follows its load: calls that keep it busy only a small
//! part of the time can run well below its top clock. On an H100 the
//! counts-only calls ran at about 350 MHz (nvidia-smi) and the lists calls
//! at 1,980 MHz, which is why the counts' stages read slower there than
//! the same stages of a lists call.
//!
//! ```text
//! cd crates/gpu && XDG_RUNTIME_DIR=$(mktemp -d) cargo run --release --example timing [-- --reps N]
//! ```

use broadphase_gpu::{GpuBoxPairs, GpuContext, GpuNeighborSearch, GpuTimings, Stage};
use broadphase_kernel::AdaptiveGrid;
use broadphase_neighbors::{CountingSortGrid, NeighborListSearch, NeighborLists};
use std::process::ExitCode;
use std::time::Instant;

/// The median of `reps` timed calls of `call`, in milliseconds.
fn median_ms<E>(reps: usize, mut call: impl FnMut() -> Result<(), E>) -> Result<f64, E> {
    Ok(median_call(reps, &mut call)?.0)
}

/// The median of `reps` timed calls of `call` (milliseconds) and what
/// that call returned.
fn median_call<T, E>(reps: usize, mut call: impl FnMut() -> Result<T, E>) -> Result<(f64, T), E> {
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let start = Instant::now();
        let out = call()?;
        times.push((start.elapsed().as_secs_f64() * 1e3, out));
    }
    times.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    Ok(times.swap_remove(times.len() / 2))
}

/// One call's parts, in milliseconds, and on a second line the device's
/// time for each stage where it timed them.
fn parts(t: &GpuTimings) -> String {
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let mut line = format!(
        "upload {:.1} ms, passes {:.2} ms ({:?}), readback {:.1} ms, whole call {:.1} ms",
        ms(t.upload),
        ms(t.passes),
        t.passes_clock,
        ms(t.readback),
        ms(t.total)
    );
    let stages: Vec<String> = Stage::ALL
        .iter()
        .filter_map(|&stage| t.stage(stage).map(|d| format!("{} {:.3}", stage.name(), ms(d))))
        .collect();
    if !stages.is_empty() {
        line += &format!("\n    stages   {} ms", stages.join(", "));
    }
    line
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut reps = 3;
    while let Some(arg) = args.next() {
        match (arg.as_str(), args.next().and_then(|v| v.parse().ok())) {
            ("--reps", Some(n)) if n > 0 => reps = n,
            _ => {
                eprintln!("usage: timing [--reps N] (N > 0)");
                return ExitCode::FAILURE;
            }
        }
    }
    let context = match GpuContext::new() {
        Ok(context) => context,
        Err(error) => {
            eprintln!("no GPU backend here: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "adapter      {} (cpu: {}, device timestamps: {})",
        context.adapter_name(),
        context.is_cpu(),
        context.has_timestamps()
    );
    match run(&context, reps) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(context: &GpuContext, reps: usize) -> Result<(), Box<dyn std::error::Error>> {
    let points = broadphase_scenes::sph1m();
    let radius = broadphase_scenes::SPH1M_RADIUS;
    let (mut gpu_lists, mut cpu_lists) = (NeighborLists::default(), NeighborLists::default());
    let mut gpu = GpuNeighborSearch::new(context);
    let mut cpu = CountingSortGrid::default();
    // Checked equal first; the first GPU call also builds the pipelines.
    gpu.find_neighbor_lists(&points, radius, &mut gpu_lists)?;
    cpu.find_neighbor_lists(&points, radius, &mut cpu_lists)?;
    if gpu_lists.offsets() != cpu_lists.offsets() || gpu_lists.indices() != cpu_lists.indices() {
        return Err("sph1m: the GPU's lists differ from the CPU's".into());
    }
    let (gpu_ms, timings) = median_call(reps, || {
        gpu.find_neighbor_lists(&points, radius, &mut gpu_lists).map(|()| gpu.timings())
    })?;
    let cpu_ms = median_ms(reps, || cpu.find_neighbor_lists(&points, radius, &mut cpu_lists))?;
    println!(
        "sph1m        {} points, {} neighbor entries: GPU {gpu_ms:.1} ms, CPU CountingSortGrid (1 thread) {cpu_ms:.1} ms, median of {reps}",
        points.len(),
        gpu_lists.total()
    );
    println!("  GPU call   {}", parts(&timings));
    // The counts alone (insert, cell scan, scatter, count walk): the rest
    // of the lists' passes is the row scan and the fill walk.
    let mut counts = Vec::new();
    gpu.neighbor_counts(&points, radius, &mut counts)?;
    let (counts_ms, timings) = median_call(reps, || {
        gpu.neighbor_counts(&points, radius, &mut counts).map(|()| gpu.timings())
    })?;
    println!("  counts     GPU {counts_ms:.1} ms: {}", parts(&timings));

    let boxes = broadphase_scenes::uniform1m().boxes;
    let (mut gpu_pairs, mut cpu_pairs) = (Vec::new(), Vec::new());
    let mut gpu = GpuBoxPairs::new(context);
    let mut grid = AdaptiveGrid::default();
    gpu.find_pairs(&boxes, &mut gpu_pairs)?;
    grid.find_pairs(&boxes, &mut cpu_pairs)?;
    cpu_pairs.sort_unstable();
    if gpu_pairs != cpu_pairs {
        return Err("uniform1m: the GPU's pairs differ from the CPU's".into());
    }
    let (gpu_ms, timings) =
        median_call(reps, || gpu.find_pairs(&boxes, &mut gpu_pairs).map(|()| gpu.timings()))?;
    let cpu_ms = median_ms(reps, || grid.find_pairs(&boxes, &mut cpu_pairs))?;
    println!(
        "uniform1m    {} boxes, {} pairs: GPU {gpu_ms:.1} ms, CPU AdaptiveGrid (1 thread, unsorted) {cpu_ms:.1} ms, median of {reps}",
        boxes.len(),
        gpu_pairs.len()
    );
    println!("  GPU call   {}", parts(&timings));
    Ok(())
}
