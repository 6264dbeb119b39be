//! A particle loop with Verlet lists: neighbor lists built with a skin,
//! reused while every particle stays within half the skin of where it was,
//! filtered to the exact radius each step — against rebuilding the lists
//! every step.
//!
//! Particles start on a jittered lattice (`--sph N`, N³ points, default 46,
//! about 97,000) and drift with small random velocities (up to `--speed`
//! per step, default 0.02 on a lattice of spacing 1; radius 2). Each step
//! both loops produce every particle's neighbors within the radius; they
//! are checked equal on every step, and the median time per step, the
//! number of rebuilds and the time saved are printed.
//!
//! ```text
//! cargo run --release --example verlet
//! cargo run --release --example verlet -- --skin 0.6 --steps 200
//! ```

use broadphase::glam::Vec3;
use broadphase::neighbors::{CountingSortGrid, NeighborLists, NeighborSearch, VerletLists};
use broadphase_scenes::{SPH1M_RADIUS, SplitMix64, sph};
use std::process::ExitCode;
use std::time::{Duration, Instant};

struct Args {
    sph: usize,
    steps: usize,
    skin: f32,
    speed: f32,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { sph: 46, steps: 100, skin: 0.4, speed: 0.02 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let bad = |e: String| format!("{flag} {value}: {e}");
        match flag.as_str() {
            "--sph" => args.sph = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--steps" => args.steps = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--skin" => args.skin = value.parse().map_err(|e| bad(format!("{e}")))?,
            "--speed" => args.speed = value.parse().map_err(|e| bad(format!("{e}")))?,
            other => {
                return Err(format!(
                    "unknown flag {other}; use --sph N --steps N --skin X --speed X"
                ));
            }
        }
    }
    Ok(args)
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// Each row's entries as a sorted set, to compare two lists' rows.
fn same_rows(a: &NeighborLists, b: &NeighborLists) -> bool {
    a.len() == b.len()
        && (0..a.len()).all(|row| {
            let (mut x, mut y) = (a.neighbors(row).to_vec(), b.neighbors(row).to_vec());
            x.sort_unstable();
            y.sort_unstable();
            x == y
        })
}

fn run(args: &Args) -> Result<(), String> {
    let mut points = sph(args.sph);
    let mut rng = SplitMix64::new(5);
    let velocity: Vec<Vec3> = points
        .iter()
        .map(|_| {
            let v = Vec3::new(
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
            );
            v * args.speed
        })
        .collect();
    let radius = SPH1M_RADIUS;
    let mut verlet = VerletLists::new(radius, args.skin).map_err(|e| e.to_string())?;
    let (mut reuse_grid, mut every_grid) =
        (CountingSortGrid::default(), CountingSortGrid::default());
    let (mut reused, mut rebuilt) = (NeighborLists::default(), NeighborLists::default());
    let (mut reuse_times, mut every_times) = (Vec::new(), Vec::new());
    let mut rebuilds = 0;
    for step in 0..args.steps {
        let t = Instant::now();
        rebuilds +=
            usize::from(verlet.update(&mut reuse_grid, &points).map_err(|e| e.to_string())?);
        verlet.neighbors_within(&points, &mut reused).map_err(|e| e.to_string())?;
        reuse_times.push(t.elapsed());

        let t = Instant::now();
        every_grid.build(&points, radius).map_err(|e| e.to_string())?;
        every_grid.neighbor_lists(&mut rebuilt);
        every_times.push(t.elapsed());

        if !same_rows(&reused, &rebuilt) {
            return Err(format!("step {step}: the reused lists differ from a rebuild"));
        }
        for (p, v) in points.iter_mut().zip(&velocity) {
            *p += *v;
        }
    }
    let (total_reuse, total_every): (Duration, Duration) =
        (reuse_times.iter().sum(), every_times.iter().sum());
    println!(
        "particles    {} (lattice {}³), radius {radius}, skin {}, speed up to {} a step",
        points.len(),
        args.sph,
        args.skin,
        args.speed
    );
    println!(
        "neighbors    {} entries on the last step, equal in both loops on every step",
        rebuilt.total()
    );
    println!(
        "rebuilds     {rebuilds} in {} steps (one every {:.1})",
        args.steps,
        args.steps as f64 / rebuilds.max(1) as f64
    );
    println!(
        "reuse        median {:.2} ms a step, {:.1} ms in all",
        median(&mut reuse_times).as_secs_f64() * 1e3,
        total_reuse.as_secs_f64() * 1e3
    );
    println!(
        "rebuild      median {:.2} ms a step, {:.1} ms in all",
        median(&mut every_times).as_secs_f64() * 1e3,
        total_every.as_secs_f64() * 1e3
    );
    println!(
        "saved        {:.0}% of the neighbor time",
        100.0 * (1.0 - total_reuse.as_secs_f64() / total_every.as_secs_f64())
    );
    Ok(())
}

fn main() -> ExitCode {
    match parse_args().and_then(|args| run(&args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
