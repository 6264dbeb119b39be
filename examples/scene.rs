//! The main job until the game loop lands: index one built-in scene with the
//! single-thread adaptive grid, frame after frame, check the pairs against
//! sort-and-sweep, and print what was found and how long each stage took.
//!
//! ```text
//! cargo run --release --example scene                       # sparse20k, 200 frames
//! cargo run --release --example scene -- --scene dense20k --frames 500
//! cargo run --release --example scene -- --list
//! ```

use broadphase::{AdaptiveGrid, oracle::SortAndSweep};
use broadphase_scenes::{Scene, all_box_scenes_up_to_100k};
use std::process::ExitCode;
use std::time::{Duration, Instant};

struct Args {
    scene: String,
    frames: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { scene: "sparse20k".to_string(), frames: 200 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--scene" => args.scene = it.next().ok_or("--scene needs a name")?,
            "--frames" => {
                let n = it.next().ok_or("--frames needs a number")?;
                args.frames = n.parse().map_err(|_| format!("--frames: '{n}' is not a number"))?;
                if args.frames == 0 {
                    return Err("--frames must be at least 1".into());
                }
            }
            "--list" => {
                for scene in all_box_scenes_up_to_100k() {
                    println!("{:16} {:>7} boxes", scene.name, scene.boxes.len());
                }
                std::process::exit(0);
            }
            other => {
                return Err(format!(
                    "unknown flag '{other}' (flags: --scene NAME, --frames N, --list)"
                ));
            }
        }
    }
    Ok(args)
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let Some(Scene { name, boxes }) =
        all_box_scenes_up_to_100k().into_iter().find(|s| s.name == args.scene)
    else {
        eprintln!("error: no scene '{}' (try --list)", args.scene);
        return ExitCode::FAILURE;
    };

    let mut grid = AdaptiveGrid::default();
    let mut pairs = Vec::new();
    // The frame path: the build with each leaf's pairs found as it goes.
    let mut frame_times = Vec::new();
    for _ in 0..args.frames {
        let start = Instant::now();
        if let Err(error) = grid.find_pairs(&boxes, &mut pairs) {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
        frame_times.push(start.elapsed());
    }
    let frame_pairs = pairs.clone();
    // The kept path: build once, then pairs (and queries) from the tree.
    let (mut build_times, mut pair_times) = (Vec::new(), Vec::new());
    for _ in 0..args.frames {
        let start = Instant::now();
        if let Err(error) = grid.build(&boxes) {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
        let built = Instant::now();
        grid.pairs(&mut pairs);
        build_times.push(built - start);
        pair_times.push(built.elapsed());
    }

    // The answer is checked, not assumed: sort-and-sweep must agree.
    let mut expected = Vec::new();
    let sweep_start = Instant::now();
    SortAndSweep::default().find_pairs(&boxes, &mut expected).expect("scene boxes are valid");
    let sweep_time = sweep_start.elapsed();
    let mut found = pairs.clone();
    found.sort_unstable();
    let mut found_in_frames = frame_pairs;
    found_in_frames.sort_unstable();
    expected.sort_unstable();
    let agrees = found == expected && found_in_frames == expected;

    let (nodes, leaves, slots) = grid.shape();
    println!("scene        {name}: {} boxes, {} frames", boxes.len(), args.frames);
    println!("pairs        {} (sort-and-sweep agrees: {agrees})", pairs.len());
    println!("tree         {nodes} nodes, {leaves} leaves, {slots} box slots");
    println!("kernel       {:?}", grid.pair_kernel());
    println!(
        "find_pairs   {:8.3} ms median (one frame: build and pairs fused)",
        ms(median(&mut frame_times))
    );
    println!(
        "build        {:8.3} ms median (kept tree, for queries)",
        ms(median(&mut build_times))
    );
    println!("pairs        {:8.3} ms median (from the kept tree)", ms(median(&mut pair_times)));
    let mut totals: Vec<Duration> =
        build_times.iter().zip(&pair_times).map(|(b, p)| *b + *p).collect();
    println!("total        {:8.3} ms median (build + pairs)", ms(median(&mut totals)));
    println!("sort&sweep   {:8.3} ms (one cold run, for scale)", ms(sweep_time));
    if agrees { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
