//! A ray-cast picture of a built-in scene: one ray per pixel from a camera
//! outside the scene, the first hit shaded by its distance (near is light,
//! far is dark, a miss is the background), cast as one batch on all
//! threads. Prints the rays per second and checks a sample of pixels
//! against brute force; `--png FILE` writes the picture.
//!
//! ```text
//! cargo run --release --example raycast -- --png /tmp/mixed100k.png
//! cargo run --release --example raycast -- --scene clusters16_40k --size 1024 --threads 2 --png /tmp/c.png
//! cargo run --release --example raycast -- --list
//! ```
//!
//! Flags: `--scene NAME` (default mixed100k), `--size N` pixels a side
//! (default 512), `--threads N` (0, the default, one per core), `--png FILE`.

use broadphase::oracle::brute_force_ray_hits;
use broadphase::query::{Ray, cast_rays};
use broadphase::{Aabb, AdaptiveGrid, JobSystem, glam::Vec3};
use broadphase_scenes::all_box_scenes_up_to_100k;
use std::process::ExitCode;
use std::time::Instant;

struct Args {
    scene: String,
    size: usize,
    threads: usize,
    png: Option<String>,
}

const USAGE: &str = "flags: --scene NAME, --size N, --threads N, --png FILE, --list";

fn parse_args() -> Result<Args, String> {
    let mut args = Args { scene: "mixed100k".into(), size: 512, threads: 0, png: None };
    let mut it = std::env::args().skip(1);
    let number = |flag: &str, value: Option<String>| -> Result<usize, String> {
        let value = value.ok_or(format!("{flag} needs a number"))?;
        value.parse().map_err(|_| format!("{flag}: '{value}' is not a number"))
    };
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--scene" => args.scene = it.next().ok_or("--scene needs a name")?,
            "--size" => args.size = number("--size", it.next())?.clamp(8, 4096),
            "--threads" => args.threads = number("--threads", it.next())?,
            "--png" => args.png = Some(it.next().ok_or("--png needs a file name")?),
            "--list" => {
                for scene in all_box_scenes_up_to_100k() {
                    println!("{:16} {:>7} boxes", scene.name, scene.boxes.len());
                }
                std::process::exit(0);
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown flag '{other}' ({USAGE})")),
        }
    }
    Ok(args)
}

/// One ray per pixel: a pinhole camera at the front corner of the scene's
/// bounds looking at their center, a 60-degree field of view.
fn camera_rays(bounds: &Aabb, size: usize) -> Vec<Ray> {
    let center = (bounds.min + bounds.max) * 0.5;
    let extent = (bounds.max - bounds.min).max_element();
    let eye = center + Vec3::new(-0.9, -1.3, 0.7) * extent;
    let forward = (center - eye).normalize();
    let right = forward.cross(Vec3::Z).normalize();
    let up = right.cross(forward);
    let half = (30.0f32).to_radians().tan();
    let mut rays = Vec::with_capacity(size * size);
    for row in 0..size {
        for column in 0..size {
            let x = ((column as f32 + 0.5) / size as f32 * 2.0 - 1.0) * half;
            let y = (1.0 - (row as f32 + 0.5) / size as f32 * 2.0) * half;
            rays.push(Ray::new(eye, (forward + right * x + up * y).normalize(), f32::INFINITY));
        }
    }
    rays
}

fn write_png(path: &str, size: usize, hits: &[Option<(u32, f32)>]) -> Result<(), String> {
    let (near, far) = hits
        .iter()
        .flatten()
        .fold((f32::INFINITY, 0.0f32), |(lo, hi), &(_, t)| (lo.min(t), hi.max(t)));
    let span = (far - near).max(f32::MIN_POSITIVE);
    let mut image = Vec::with_capacity(size * size * 3);
    for hit in hits {
        let pixel = match hit {
            // Light when near, dark when far; the box's index tints it, so
            // neighbours that touch stay apart.
            Some((id, t)) => {
                let shade = 1.0 - 0.8 * (t - near) / span;
                let tint = [
                    1.0,
                    0.85 + 0.15 * ((id % 7) as f32 / 6.0),
                    0.7 + 0.3 * ((id % 3) as f32 / 2.0),
                ];
                tint.map(|c| (255.0 * shade * c) as u8)
            }
            None => [24, 28, 40],
        };
        image.extend_from_slice(&pixel);
    }
    let file = std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), size as u32, size as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| format!("{path}: {e}"))?;
    writer.write_image_data(&image).map_err(|e| format!("{path}: {e}"))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let Some(scene) = all_box_scenes_up_to_100k().into_iter().find(|s| s.name == args.scene) else {
        eprintln!("error: no scene '{}' (--list shows them)", args.scene);
        return ExitCode::FAILURE;
    };
    let boxes = &scene.boxes;
    let bounds = boxes.iter().fold(Aabb::new(Vec3::MAX, Vec3::MIN), |b, x| {
        Aabb::new(b.min.min(x.min), b.max.max(x.max))
    });
    let jobs = JobSystem::new(args.threads);
    let mut grid = AdaptiveGrid::default();
    let start = Instant::now();
    if let Err(e) = grid.build(boxes) {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    let built = start.elapsed();
    let rays = camera_rays(&bounds, args.size);
    let mut hits = Vec::new();
    // Once to warm up, then timed.
    let mut times = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        if let Err(e) = cast_rays(&jobs, &grid, &rays, &mut hits) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let cast = times[times.len() / 2];
    let hit_count = hits.iter().filter(|h| h.is_some()).count();

    // Every 97th pixel against brute force.
    let mut checked = 0;
    for (ray, hit) in rays.iter().zip(&hits).step_by(97) {
        let expected = brute_force_ray_hits(boxes, ray).first().copied();
        if *hit != expected {
            eprintln!("error: ray {ray:?} hit {hit:?}, brute force {expected:?}");
            return ExitCode::FAILURE;
        }
        checked += 1;
    }

    println!(
        "scene        {} ({} boxes), grid built in {:.2} ms",
        scene.name,
        boxes.len(),
        built.as_secs_f64() * 1e3
    );
    println!("image        {0} x {0} pixels, one ray each, {1} threads", args.size, jobs.threads());
    println!(
        "rays         {} cast in {:.2} ms (median of 5): {:.2}M rays/s",
        rays.len(),
        cast * 1e3,
        rays.len() as f64 / cast / 1e6
    );
    println!(
        "hits         {:.1}% of the rays hit a box",
        100.0 * hit_count as f64 / rays.len() as f64
    );
    println!("checked      {checked} rays against brute force: identical");
    if let Some(path) = &args.png {
        if let Err(e) = write_png(path, args.size, &hits) {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        println!("png          {path}");
    }
    ExitCode::SUCCESS
}
