//! The main job: a game loop on a `hecs` world with the broad-phase plugin.
//!
//! N particles of radii 1–4 fly in a slab `[0, L)² × [0, 8)` sized for about
//! one contact each, bouncing off its walls, past static pillars. With
//! `--bodies K` they fly in rigid clusters of K: each cluster is a body
//! entity (a position and a velocity, no box) and its K particles are its
//! colliders (`ColliderOf`), placed at offsets from it, overlapping each
//! other but never reported as a pair. Each frame moves them, runs
//! `BroadPhasePlugin`, and counts the pairs and events (and the body
//! pairs);
//! at the end it prints a summary (boxes, pairs per frame, per-stage median
//! ms, the contact lists' making, the grid tree's rebuild of the same
//! boxes every tenth frame as a reference measured in the same run,
//! memory, a count from every particle's `touching` list) and can draw the
//! last frame from above, colliding particles in red.
//!
//! ```text
//! cargo run --release --example game_loop
//! cargo run --release --example game_loop -- --particles 100000 --threads 2 --png /tmp/frame.png
//! cargo run --release --features profile --example game_loop -- --frames 100000   # then connect Tracy
//! ```
//!
//! Flags: `--particles N` (default 20,000), `--statics N` (pillars, default
//! particles / 20), `--frames N` (default 300), `--threads N` (the plugin's
//! job system, the main thread included; default 0: one per core),
//! `--png FILE`, `--seed N`, `--margin X` (the broad phase's margin, a
//! fraction of each box's largest extent; default: the plugin's, 0),
//! `--bodies K` (colliders per body, default 1: every particle its own
//! body, no `ColliderOf`), `--sleep F` (the fraction of bodies, 0 to 1,
//! that rest where they were spawned, marked `Sleeping`: the plugin keeps
//! their pairs without reading them; default 0), `--touching` (read every
//! particle's `touching` list every frame, as a game that uses them does:
//! the first read of a frame makes the lists, timed as the `lists` stage;
//! without it only the last frame's are read).
//!
//! ```text
//! cargo run --release --example game_loop -- --particles 80000 --bodies 4
//! cargo run --release --example game_loop -- --particles 100000 --sleep 0.9
//! ```

use broadphase::ecs::hecs::{Entity, Without, World};
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, Collider, ColliderOf, FrameStats, PluginConfig, Sleeping, Static,
    frame_mark,
};
use broadphase::glam::Vec3;
use broadphase::jobs::JobError;
use broadphase::persistent::UpdatePath;
use broadphase::{GridTree, JobSystem};
use broadphase_scenes::SplitMix64;
use std::process::ExitCode;
use std::time::Instant;

/// Slab height: the largest particle diameter, so the world is nearly 2D
/// and the picture from above shows what collides.
const HEIGHT: f32 = 8.0;
/// Particle radii, uniform in this range (as the shared particles5k scene).
const RADII: (f32, f32) = (1.0, 4.0);
/// Seconds per frame.
const DT: f32 = 1.0 / 60.0;

struct Args {
    particles: usize,
    statics: Option<usize>,
    frames: usize,
    threads: usize,
    png: Option<String>,
    seed: u64,
    margin: Option<f32>,
    bodies: usize,
    sleep: f32,
    touching: bool,
}

const USAGE: &str = "flags: --particles N, --statics N, --frames N, --threads N, --png FILE, \
                     --seed N, --margin X, --bodies K, --sleep F, --touching (see the file's docs)";

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        particles: 20_000,
        statics: None,
        frames: 300,
        threads: 0,
        png: None,
        seed: 1,
        margin: None,
        bodies: 1,
        sleep: 0.0,
        touching: false,
    };
    let mut it = std::env::args().skip(1);
    let number = |flag: &str, value: Option<String>| -> Result<usize, String> {
        let value = value.ok_or(format!("{flag} needs a number"))?;
        value.parse().map_err(|_| format!("{flag}: '{value}' is not a number"))
    };
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--particles" => args.particles = number("--particles", it.next())?,
            "--statics" => args.statics = Some(number("--statics", it.next())?),
            "--frames" => args.frames = number("--frames", it.next())?.max(1),
            "--threads" => args.threads = number("--threads", it.next())?,
            "--seed" => args.seed = number("--seed", it.next())? as u64,
            "--bodies" => args.bodies = number("--bodies", it.next())?.max(1),
            "--margin" => {
                let value = it.next().ok_or("--margin needs a number")?;
                let margin = value.parse::<f32>().ok().filter(|m| m.is_finite() && *m >= 0.0);
                args.margin =
                    Some(margin.ok_or(format!("--margin: '{value}' is not a number >= 0"))?);
            }
            "--sleep" => {
                let value = it.next().ok_or("--sleep needs a number")?;
                let sleep = value.parse::<f32>().ok().filter(|f| (0.0..=1.0).contains(f));
                args.sleep =
                    sleep.ok_or(format!("--sleep: '{value}' is not a fraction from 0 to 1"))?;
            }
            "--png" => args.png = Some(it.next().ok_or("--png needs a file name")?),
            "--touching" => args.touching = true,
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown flag '{other}' ({USAGE})")),
        }
    }
    Ok(args)
}

/// A particle's velocity (units per second).
#[derive(Clone, Copy, Debug)]
struct Velocity(Vec3);

/// The slab's side for about one box contact per particle. The slab is as
/// thin as a particle is wide, so nearly every pair overlaps in z and the
/// count is set by x and y: two boxes overlap there when both center
/// offsets are below `s = r_i + r_j`, an area of `4s²`; with radii uniform
/// in [1, 4), `E[s²] = 5² + 1.5 = 26.5`, so the mean contact count is about
/// `(N - 1) · 106 / L²`.
fn side_for(particles: usize) -> f32 {
    ((particles.max(2) - 1) as f64 * 106.0).sqrt() as f32
}

/// A collider of a cluster: which body (its place in [`Clusters`]) and
/// where it sits relative to the body's position.
#[derive(Clone, Copy, Debug)]
struct Part {
    body: usize,
    offset: Vec3,
}

/// How far a cluster reaches from its position on each axis: it bounces
/// off the walls as one.
#[derive(Clone, Copy, Debug)]
struct Reach(Vec3);

/// The clusters' body entities, and their positions each frame (reused).
#[derive(Debug, Default)]
struct Clusters {
    bodies: Vec<Entity>,
    positions: Vec<Vec3>,
}

/// Spawns the particles and the static pillars (and, with `--bodies K`
/// above 1, the clusters: the particles are then their colliders).
fn spawn_world(args: &Args, side: f32) -> (World, Clusters) {
    let mut rng = SplitMix64::new(args.seed);
    let mut world = World::new();
    let mut clusters = Clusters::default();
    if args.bodies > 1 {
        spawn_clusters(args, side, &mut rng, &mut world, &mut clusters);
    } else {
        spawn_particles(args, side, &mut rng, &mut world);
    }
    let pillars = args.statics.unwrap_or(args.particles / 20);
    world.spawn_batch((0..pillars).map(|_| {
        let size = Vec3::new(rng.range_f32(2.0, 12.0), rng.range_f32(2.0, 12.0), HEIGHT);
        let at =
            Vec3::new(rng.range_f32(0.0, side - size.x), rng.range_f32(0.0, side - size.y), 0.0);
        (Aabb::new(at, at + size), Static)
    }));
    (world, clusters)
}

/// Every particle its own body, flying alone.
fn spawn_particles(args: &Args, side: f32, rng: &mut SplitMix64, world: &mut World) {
    world.spawn_batch((0..args.particles).map(|_| {
        let r = rng.range_f32(RADII.0, RADII.1);
        let p = Vec3::new(
            rng.range_f32(r, side - r),
            rng.range_f32(r, side - r),
            rng.range_f32(r, HEIGHT - r),
        );
        let dir =
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-0.3, 0.3));
        let speed = rng.range_f32(5.0, 30.0);
        (p, Collider::sphere(r), Velocity(dir.normalize_or(Vec3::X) * speed))
    }));
}

/// `particles / K` clusters of K particles in a row along x, each touching
/// the next, around a body entity that carries the velocity.
fn spawn_clusters(
    args: &Args,
    side: f32,
    rng: &mut SplitMix64,
    world: &mut World,
    clusters: &mut Clusters,
) {
    let k = args.bodies;
    for body in 0..args.particles / k {
        let radii: Vec<f32> = (0..k).map(|_| rng.range_f32(RADII.0, RADII.1)).collect();
        // Centers a little closer than the radii's sum: neighbours overlap.
        let mut offsets = Vec::with_capacity(k);
        let mut x = 0.0;
        for (i, &r) in radii.iter().enumerate() {
            if i > 0 {
                x += 0.8 * (radii[i - 1] + r);
            }
            offsets.push(Vec3::new(x, 0.0, 0.0));
        }
        let middle = Vec3::new(x / 2.0, 0.0, 0.0);
        let reach = offsets
            .iter()
            .zip(&radii)
            .fold(Vec3::ZERO, |m, (o, &r)| m.max((*o - middle).abs() + Vec3::splat(r)));
        let reach = reach.min(Vec3::new(side, side, HEIGHT) / 2.0);
        let p = Vec3::new(
            rng.range_f32(reach.x, side - reach.x),
            rng.range_f32(reach.y, side - reach.y),
            rng.range_f32(reach.z, HEIGHT - reach.z),
        );
        let dir =
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-0.3, 0.3));
        let speed = rng.range_f32(5.0, 30.0);
        let entity = world.spawn((p, Reach(reach), Velocity(dir.normalize_or(Vec3::X) * speed)));
        clusters.bodies.push(entity);
        for (offset, r) in offsets.into_iter().zip(radii) {
            let part = Part { body, offset: offset - middle };
            world.spawn((p + part.offset, Collider::sphere(r), part, ColliderOf(entity)));
        }
    }
}

/// Puts the first `fraction` of the bodies (particles, or clusters with
/// their colliders) to sleep where they are; returns how many colliders
/// sleep.
fn put_to_sleep(world: &mut World, fraction: f32, clusters: &Clusters) -> usize {
    let mut sleepers: Vec<Entity> = if clusters.bodies.is_empty() {
        let particles: Vec<Entity> =
            world.query_mut::<(Entity, &Velocity)>().into_iter().map(|(e, _)| e).collect();
        let count = (particles.len() as f32 * fraction).round() as usize;
        particles[..count].to_vec()
    } else {
        let count = (clusters.bodies.len() as f32 * fraction).round() as usize;
        let parts = world.query_mut::<(Entity, &Part)>().into_iter();
        parts.filter(|(_, part)| part.body < count).map(|(e, _)| e).collect()
    };
    let colliders = sleepers.len();
    let bodies = (clusters.bodies.len() as f32 * fraction).round() as usize;
    sleepers.extend_from_slice(&clusters.bodies[..bodies]);
    for entity in sleepers {
        world.insert_one(entity, Sleeping).expect("just spawned");
    }
    colliders
}

/// Rows of the particles' query one job moves at a time.
const MOVE_BATCH: u32 = 16 * 1024;

/// One particle's step: moves it, and bounces it off the slab's walls
/// `[r, hi - r]`. Branch-free (clamp and select), so the batch loop
/// vectorizes; the same result as testing each wall in turn, since
/// `r <= hi - r` on every axis.
#[inline(always)]
fn step(p: &mut Vec3, v: &mut Velocity, r: Vec3, hi: Vec3) {
    let moved = *p + v.0 * DT;
    let (lo, top) = (r, hi - r);
    let below = moved.cmplt(lo);
    let above = moved.cmpgt(top);
    *p = moved.max(lo).min(top);
    let speed = v.0.abs();
    v.0 = Vec3::select(below, speed, Vec3::select(above, -speed, v.0));
}

/// Moves every particle and cluster that is awake, bouncing them off the
/// slab's walls, and places each cluster's colliders around it. The
/// particles move on all of `jobs`' threads, a batch of the query's rows
/// per job, as a game would spread its integration.
fn integrate(
    world: &mut World,
    jobs: &JobSystem,
    side: f32,
    clusters: &mut Clusters,
) -> Result<(), JobError> {
    let hi = Vec3::new(side, side, HEIGHT);
    let awake = world.query_mut::<Without<(&mut Vec3, &Collider, &mut Velocity), &Sleeping>>();
    let mut batches: Vec<_> = awake.into_iter_batched(MOVE_BATCH).map(Some).collect();
    jobs.for_each_mut(&mut batches, |_, batch| {
        if let Some(batch) = batch.take() {
            batch.for_each(|(p, c, v)| step(p, v, c.half_extents, hi));
        }
    })?;
    if clusters.bodies.is_empty() {
        return Ok(());
    }
    for (p, reach, v) in world.query_mut::<Without<(&mut Vec3, &Reach, &mut Velocity), &Sleeping>>()
    {
        step(p, v, reach.0, hi);
    }
    clusters.positions.clear();
    for &body in &clusters.bodies {
        clusters.positions.push(*world.get::<&Vec3>(body).expect("a cluster's body"));
    }
    for (p, part) in world.query_mut::<(&mut Vec3, &Part)>() {
        *p = clusters.positions[part.body] + part.offset;
    }
    Ok(())
}

/// Columns of a frame's row of times: the move, the plugin's stages
/// (`StageTimes::as_ms`, the total last), the update's two parts, then
/// the contact lists' making (0 in a frame that reads no list).
const COLUMNS: usize = 10;
/// The row's column of the plugin's run.
const TOTAL: usize = 6;
/// The row's column of the update's candidates.
const CANDIDATES: usize = 7;
/// The row's column of the update's merge.
const MERGE: usize = 8;
/// The row's column of the contact lists' making.
const LISTS: usize = 9;

/// How many recent frames the medians are taken over.
const WINDOW: usize = 1_000;

/// Running totals over every frame.
#[derive(Debug)]
struct Totals {
    pairs: usize,
    started: usize,
    ended: usize,
    min_pairs: usize,
    max_pairs: usize,
    /// Proxies re-indexed (left their enlarged boxes, or new).
    reindexed: usize,
    /// Updates that recomputed every candidate pair.
    full: usize,
    /// Updates that rebuilt the index of enlarged boxes.
    index_rebuilds: usize,
    /// Body pairs, started and ended (the collider lists' with no cluster).
    body_pairs: usize,
    body_started: usize,
    body_ended: usize,
}

impl Default for Totals {
    fn default() -> Self {
        Totals {
            pairs: 0,
            started: 0,
            ended: 0,
            min_pairs: usize::MAX,
            max_pairs: 0,
            reindexed: 0,
            full: 0,
            index_rebuilds: 0,
            body_pairs: 0,
            body_started: 0,
            body_ended: 0,
        }
    }
}

impl Totals {
    fn add(&mut self, s: &FrameStats) {
        self.pairs += s.pairs;
        self.started += s.started;
        self.ended += s.ended;
        self.min_pairs = self.min_pairs.min(s.pairs);
        self.max_pairs = self.max_pairs.max(s.pairs);
        self.reindexed += s.broad_phase.reindexed;
        self.full += usize::from(s.broad_phase.path == UpdatePath::Full);
        self.index_rebuilds += usize::from(s.broad_phase.index_rebuilt);
    }
}

/// Resident memory of this process in KiB (Linux), for the flatness check.
fn rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Every box in the world, as the plugin reads them: a collider at its
/// position, or an `Aabb`.
fn all_boxes(world: &mut World, out: &mut Vec<Aabb>) {
    out.clear();
    out.extend(world.query_mut::<(&Vec3, &Collider)>().into_iter().map(|(p, c)| c.aabb_at(*p)));
    out.extend(world.query_mut::<&Aabb>().into_iter().copied());
}

/// Every this many frames, the grid tree rebuilds the frame's boxes from
/// scratch beside the plugin: the reference a frame is measured against
/// in the same run (the machine's speed moves from hour to hour).
const TREE_EVERY: usize = 10;

fn median(values: &mut [f64]) -> f64 {
    values.sort_unstable_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Draws the world from above (x right, y up): pillars grey, particles
/// blue, particles in at least one pair red.
fn write_png(
    path: &str,
    world: &World,
    pairs: &[(Entity, Entity)],
    side: f32,
) -> Result<(), String> {
    // About 1.5 pixels per unit: the smallest particle is 3 pixels wide.
    let size = ((side * 1.5) as usize).clamp(256, 4096);
    let scale = size as f32 / side;
    let mut image = vec![[250u8, 250, 247]; size * size];
    let mut fill = |b: &Aabb, color: [u8; 3], round: bool| {
        let (x0, x1) = ((b.min.x * scale).floor() as i64, (b.max.x * scale).ceil() as i64);
        let (y0, y1) = ((b.min.y * scale).floor() as i64, (b.max.y * scale).ceil() as i64);
        let (cx, cy) = ((x0 + x1) as f32 / 2.0, (y0 + y1) as f32 / 2.0);
        let r2 = ((x1 - x0) as f32 / 2.0).powi(2);
        for y in y0.max(0)..y1.min(size as i64) {
            for x in x0.max(0)..x1.min(size as i64) {
                let d2 = (x as f32 + 0.5 - cx).powi(2) + (y as f32 + 0.5 - cy).powi(2);
                if !round || d2 <= r2 {
                    // Row 0 of the PNG is the top: flip y so +y points up.
                    image[(size - 1 - y as usize) * size + x as usize] = color;
                }
            }
        }
    };
    for b in world.query::<&Aabb>().with::<&Static>().iter() {
        fill(b, [120, 120, 120], false);
    }
    let mut colliding: Vec<Entity> = pairs.iter().flat_map(|&(a, b)| [a, b]).collect();
    colliding.sort_unstable();
    colliding.dedup();
    let mut particles = world.query::<(Entity, &Vec3, &Collider)>();
    let mut red = Vec::new();
    for (e, p, c) in particles.iter() {
        if colliding.binary_search(&e).is_ok() {
            red.push(c.aabb_at(*p));
        } else {
            fill(&c.aabb_at(*p), [70, 120, 200], true);
        }
    }
    for b in &red {
        fill(b, [220, 30, 30], true);
    }

    let file = std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?;
    let mut encoder = png::Encoder::new(std::io::BufWriter::new(file), size as u32, size as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| format!("{path}: {e}"))?;
    writer.write_image_data(image.as_flattened()).map_err(|e| format!("{path}: {e}"))?;
    writer.finish().map_err(|e| format!("{path}: {e}"))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::FAILURE;
        }
    };
    let side = side_for(args.particles);
    let (mut world, mut clusters) = spawn_world(&args, side);
    let asleep = put_to_sleep(&mut world, args.sleep, &clusters);
    let defaults = PluginConfig::default();
    let broad_phase = broadphase::persistent::PersistentConfig {
        margin: args.margin.unwrap_or(defaults.broad_phase.margin),
        ..defaults.broad_phase
    };
    let mut plugin = BroadPhasePlugin::with_config(PluginConfig {
        threads: args.threads,
        broad_phase,
        ..defaults
    });

    // Fixed memory however long the run: running totals, and the stage
    // times of the last `WINDOW` frames in a ring for the medians.
    let mut totals = Totals::default();
    let mut recent: Vec<[f64; COLUMNS]> = Vec::with_capacity(WINDOW.min(args.frames));
    let warm_frame = (args.frames / 10).clamp(1, 100);
    // The game's own threads (the move), as many as the plugin's; the
    // reference, the grid tree on the same boxes, runs on them too.
    let jobs = JobSystem::new(plugin.stats().threads);
    let mut tree = GridTree::default();
    let (mut tree_boxes, mut tree_pairs) = (Vec::new(), Vec::new());
    let mut tree_ms: Vec<f64> = Vec::with_capacity(args.frames / TREE_EVERY + 1);
    let mut rss_warm = None;
    let particles: Vec<Entity> =
        world.query_mut::<(Entity, &Collider)>().into_iter().map(|(e, _)| e).collect();
    let (mut lists_patched, mut crowded_total) = (0, 0);
    let started_at = Instant::now();
    for frame in 0..args.frames {
        let t = Instant::now();
        if let Err(error) = integrate(&mut world, &jobs, side, &mut clusters) {
            eprintln!("error in the move of frame {frame}: {error}");
            return ExitCode::FAILURE;
        }
        let move_ms = t.elapsed().as_secs_f64() * 1e3;
        if let Err(error) = plugin.run(&mut world) {
            eprintln!("error in frame {frame}: {error}");
            return ExitCode::FAILURE;
        }
        // Game logic reacts to plugin.started() / ended() here, or reads
        // each entity's contacts with plugin.touching(entity): the first
        // read of a frame makes the lists.
        if args.touching {
            crowded_total += particles.iter().filter(|&&e| plugin.touching_count(e) >= 3).count();
        }
        let lists = plugin.contact_list_stats();
        lists_patched += usize::from(lists.is_some_and(|lists| lists.patched));
        let stats = plugin.stats();
        totals.add(stats);
        totals.body_pairs += plugin.body_pairs().len();
        totals.body_started += plugin.body_started().len();
        totals.body_ended += plugin.body_ended().len();
        let mut row = [move_ms; COLUMNS];
        for (slot, (_, ms)) in row[1..].iter_mut().zip(stats.times.as_ms()) {
            *slot = ms;
        }
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        row[CANDIDATES] = ms(stats.update_times.candidates);
        row[MERGE] = ms(stats.update_times.merge);
        row[LISTS] = lists.map_or(0.0, |lists| ms(lists.time));
        if recent.len() < WINDOW {
            recent.push(row);
        } else {
            recent[frame % WINDOW] = row;
        }
        frame_mark();
        if frame % TREE_EVERY == TREE_EVERY - 1 {
            all_boxes(&mut world, &mut tree_boxes);
            let t = Instant::now();
            if let Err(error) = tree.try_find_pairs(&jobs, &tree_boxes, &mut tree_pairs) {
                eprintln!("error in the reference rebuild of frame {frame}: {error}");
                return ExitCode::FAILURE;
            }
            tree_ms.push(t.elapsed().as_secs_f64() * 1e3);
        }
        if frame + 1 == warm_frame {
            rss_warm = rss_kib();
        }
    }
    let wall = started_at.elapsed();
    let rss_end = rss_kib();

    let last = *plugin.stats();
    let n = args.frames as f64;
    println!(
        "world        {} particles (radii {}-{}) + {} static pillars in a {:.0} x {:.0} x {:.0} slab",
        last.dynamic_boxes + last.sleeping_boxes,
        RADII.0,
        RADII.1,
        last.static_boxes,
        side,
        side,
        HEIGHT
    );
    if asleep > 0 {
        println!(
            "sleeping     {} particles at rest (Sleeping: kept, not read); {} moving",
            last.sleeping_boxes, last.dynamic_boxes
        );
    }
    println!(
        "frames       {} in {:.2} s ({} thread{}, profile: {})",
        args.frames,
        wall.as_secs_f64(),
        last.threads,
        if last.threads == 1 { "" } else { "s" },
        broadphase::ecs::profiling_enabled()
    );
    println!(
        "pairs/frame  {:.0} mean ({}..{}); started {:.0}, ended {:.0} per frame",
        totals.pairs as f64 / n,
        totals.min_pairs,
        totals.max_pairs,
        totals.started as f64 / n,
        totals.ended as f64 / n
    );
    if !clusters.bodies.is_empty() {
        println!(
            "body pairs   {:.0} mean per frame among {} bodies of {} colliders; started {:.0}, ended {:.0} per frame",
            totals.body_pairs as f64 / n,
            clusters.bodies.len(),
            args.bodies,
            totals.body_started as f64 / n,
            totals.body_ended as f64 / n
        );
    }
    println!(
        "broad phase  {:.0} proxies re-indexed per frame (mean); {} full update(s), {} index rebuild(s); {} candidate pairs kept (last frame)",
        totals.reindexed as f64 / n,
        totals.full,
        totals.index_rebuilds,
        last.broad_phase.candidates
    );
    println!("static set   read {} time(s)", last.static_rebuilds);
    let names = last.times.as_ms().map(|(name, _)| name);
    println!("median ms    (last {} frames)", recent.len());
    let mut medians = [0.0; COLUMNS];
    for (column, median_ms) in medians.iter_mut().enumerate() {
        let mut ms: Vec<f64> = recent.iter().map(|row| row[column]).collect();
        *median_ms = median(&mut ms);
    }
    let columns = std::iter::once("move").chain(names).enumerate();
    let columns = columns.chain(args.touching.then_some((LISTS, "lists")));
    for (column, name) in columns {
        print!("             {name:9} {:8.3}", medians[column]);
        if name == "update" {
            // Where the update went: the candidates (on a full update, the
            // grid tree's pairs over every box) and the merge that keeps
            // pairs across frames and finds the events.
            print!("  (candidates {:.3}, merge {:.3})", medians[CANDIDATES], medians[MERGE]);
        }
        println!();
    }
    // The broad phase's frame: the run, and the lists' making where the
    // game reads them every frame.
    let (lists, moved) = (medians[LISTS], medians[0]);
    let total = medians[TOTAL] + lists;
    if args.touching {
        println!(
            "lists        made by each frame's first read: {:.1}% of the frame (move + broad phase + lists), {lists_patched} of {} frames patched; {:.0} particles a frame touch 3 or more others (mean)",
            100.0 * lists / (moved + total),
            args.frames,
            crowded_total as f64 / n
        );
    }
    if !tree_ms.is_empty() {
        let tree = median(&mut tree_ms);
        println!(
            "reference    the grid tree rebuilding the same {} boxes from scratch ({} thread{}): {tree:.3} ms median of {} frames; the broad phase's frame is {:.2}x that",
            tree_boxes.len(),
            jobs.threads(),
            if jobs.threads() == 1 { "" } else { "s" },
            tree_ms.len(),
            total / tree
        );
    }
    // What the per-entity lists are for: each particle's contacts, O(1).
    let crowded = particles.iter().filter(|&&e| plugin.touching_count(e) >= 3).count();
    let most = particles.iter().map(|&e| plugin.touching(e).len()).max().unwrap_or(0);
    let made = plugin.contact_list_stats().map_or(String::new(), |lists| {
        let how = if lists.patched { "patched" } else { "built" };
        format!(" (lists {how} by the first read in {:.3} ms)", lists.time.as_secs_f64() * 1e3)
    });
    println!(
        "touching     {crowded} particles touch 3 or more others (last frame); the most touched touches {most}{made}"
    );
    if let (Some(warm), Some(end)) = (rss_warm, rss_end) {
        println!(
            "memory       RSS {:.1} MiB after frame {warm_frame}, {:.1} MiB after frame {} ({:+.1} MiB)",
            warm as f64 / 1024.0,
            end as f64 / 1024.0,
            args.frames,
            (end as f64 - warm as f64) / 1024.0
        );
    }
    if let Some(path) = &args.png {
        if let Err(error) = write_png(path, &world, plugin.pairs(), side) {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
        println!("picture      {path} (from above; red: in a pair this frame)");
    }
    ExitCode::SUCCESS
}
