//! A small particle simulation step with each neighbor structure, timed.
//!
//! Two particle workloads:
//!
//! - **SPH density** on a jittered lattice (`--sph N`, N³ points, default
//!   40): build, neighbor lists in sorted order, then a density sum over each
//!   particle's neighbors with a poly6 kernel, reading positions reordered
//!   by `sorted_order()` (the cache-friendly layout the structures expose).
//! - **Contacts** between spheres (particles5k, 5,000 spheres of radii
//!   1–4): build, every touching pair once, then a push-apart impulse along
//!   each contact normal.
//!
//! Every structure must agree (same density sum, same contact count), and
//! the median time of each stage over the frames is printed.
//!
//! ```text
//! cargo run --release --example particles                 # 40³ SPH lattice, 30 frames
//! cargo run --release --example particles -- --sph 100 --frames 10
//! ```

use broadphase::glam::Vec3;
use broadphase::neighbors::{
    CountingSortGrid, NeighborLists, NeighborSearch, RowLookup, SpatialHash, SpatialIndex,
    SpatialIndexConfig,
};
use broadphase_scenes::{SPH1M_RADIUS, particles5k, sph};
use std::process::ExitCode;
use std::time::{Duration, Instant};

struct Args {
    sph: usize,
    frames: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args { sph: 40, frames: 30 };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut number = |name: &str| -> Result<usize, String> {
            let v = it.next().ok_or(format!("{name} needs a number"))?;
            v.parse().map_err(|_| format!("{name}: '{v}' is not a number"))
        };
        match flag.as_str() {
            "--sph" => args.sph = number("--sph")?.max(1),
            "--frames" => args.frames = number("--frames")?.max(1),
            other => return Err(format!("unknown flag '{other}' (flags: --sph N, --frames N)")),
        }
    }
    Ok(args)
}

/// Median of the recorded durations, in milliseconds.
fn median_ms(times: &mut [Duration]) -> f64 {
    times.sort_unstable();
    times[times.len() / 2].as_secs_f64() * 1e3
}

/// The poly6 smoothing kernel (Müller et al. 2003), unnormalised.
fn poly6(r2: f32, h2: f32) -> f32 {
    let d = (h2 - r2).max(0.0);
    d * d * d
}

/// One SPH density pass over sorted-order lists; `sorted` holds the
/// positions in slot order. Returns the sum of all densities.
fn densities(sorted: &[Vec3], lists: &NeighborLists, h: f32, density: &mut [f32]) -> f64 {
    let h2 = h * h;
    let mut total = 0.0f64;
    for (slot, row) in lists.rows().enumerate() {
        let p = sorted[slot];
        let mut rho = poly6(0.0, h2); // the particle itself
        for &j in row {
            rho += poly6(p.distance_squared(sorted[j as usize]), h2);
        }
        density[slot] = rho;
        total += f64::from(rho);
    }
    total
}

/// SPH frames with one structure; prints stage medians, returns the
/// density sum of the last frame.
fn sph_frames(name: &str, s: &mut impl NeighborSearch, points: &[Vec3], frames: usize) -> f64 {
    let mut lists = NeighborLists::default();
    let mut sorted = Vec::with_capacity(points.len());
    let mut density = vec![0.0f32; points.len()];
    let (mut build, mut search, mut sum) = (Vec::new(), Vec::new(), Vec::new());
    let mut total = 0.0;
    for _ in 0..frames {
        let t = Instant::now();
        s.build(points, SPH1M_RADIUS).expect("scene points are valid");
        build.push(t.elapsed());
        let t = Instant::now();
        s.sorted_neighbor_lists(0..s.len(), &mut lists);
        search.push(t.elapsed());
        let t = Instant::now();
        sorted.clear();
        sorted.extend(s.sorted_order().iter().map(|&i| points[i as usize]));
        total = densities(&sorted, &lists, SPH1M_RADIUS, &mut density);
        sum.push(t.elapsed());
    }
    let entries = lists.total() as f64 / points.len() as f64;
    println!(
        "  {name:10} build {:8.3} ms   lists {:8.3} ms   density {:8.3} ms   ({entries:.1} neighbors each)",
        median_ms(&mut build),
        median_ms(&mut search),
        median_ms(&mut sum),
    );
    total
}

/// Contact frames with one structure: build, contacts, push apart. Returns
/// the contact count of the last frame.
fn contact_frames(name: &str, s: &mut impl NeighborSearch, frames: usize) -> usize {
    let scene = particles5k();
    let mut pairs = Vec::new();
    let mut impulse = vec![Vec3::ZERO; scene.centers.len()];
    let (mut build, mut search, mut solve) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..frames {
        let t = Instant::now();
        s.build_spheres(&scene.centers, &scene.radii).expect("scene spheres are valid");
        build.push(t.elapsed());
        let t = Instant::now();
        s.neighbor_pairs(&mut pairs);
        search.push(t.elapsed());
        let t = Instant::now();
        impulse.fill(Vec3::ZERO);
        for &[a, b] in &pairs {
            let (a, b) = (a as usize, b as usize);
            let d = scene.centers[b] - scene.centers[a];
            let depth = scene.radii[a] + scene.radii[b] - d.length();
            let n = d.try_normalize().unwrap_or(Vec3::X);
            impulse[a] -= n * depth * 0.5;
            impulse[b] += n * depth * 0.5;
        }
        solve.push(t.elapsed());
    }
    println!(
        "  {name:10} build {:8.3} ms   contacts {:8.3} ms   impulses {:8.3} ms   ({} contacts)",
        median_ms(&mut build),
        median_ms(&mut search),
        median_ms(&mut solve),
        pairs.len()
    );
    pairs.len()
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let index_map = || {
        SpatialIndex::with_config(SpatialIndexConfig {
            lookup: RowLookup::HashMap,
            ..Default::default()
        })
    };

    let points = sph(args.sph);
    println!(
        "SPH density: {} points (jittered {}³ lattice), radius {SPH1M_RADIUS}, median of {} frames",
        points.len(),
        args.sph,
        args.frames
    );
    let sums = [
        sph_frames("grid", &mut CountingSortGrid::default(), &points, args.frames),
        sph_frames("hash", &mut SpatialHash::default(), &points, args.frames),
        sph_frames("index", &mut SpatialIndex::default(), &points, args.frames),
        sph_frames("index+map", &mut index_map(), &points, args.frames),
    ];
    // Same neighbors, same sum (up to the order of the additions).
    let agree = sums.iter().all(|s| (s - sums[0]).abs() <= 1e-6 * sums[0].abs().max(1.0));

    println!(
        "\nContacts: particles5k (5,000 spheres, radii 1-4), median of {} frames",
        args.frames
    );
    let contacts = [
        contact_frames("grid", &mut CountingSortGrid::default(), args.frames),
        contact_frames("hash", &mut SpatialHash::default(), args.frames),
        contact_frames("index", &mut SpatialIndex::default(), args.frames),
        contact_frames("index+map", &mut index_map(), args.frames),
    ];
    let agree = agree && contacts.iter().all(|&c| c == contacts[0]);
    if !agree {
        eprintln!("error: the structures disagree: densities {sums:?}, contacts {contacts:?}");
        return ExitCode::FAILURE;
    }
    println!("\nAll structures agree.");
    ExitCode::SUCCESS
}
