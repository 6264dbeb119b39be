//! broadphase against its Rust peers, in one process, interleaved
//! round-robin, on the design's scenes. Writes a Markdown page and SVG plots;
//! nothing on the page is typed by hand.
//!
//! ```text
//! cd benches/peers && cargo run --release -- [--quick] [--out ../../docs/PEERS.md]
//! ```

#![forbid(unsafe_code)]

mod coherence;
mod neighbor_sets;
mod peers;
mod report;
mod shapes;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use broadphase::{Aabb, AdaptiveGrid, GridTree, JobSystem, oracle::SortAndSweep};
use broadphase_scenes as scenes;

/// One run of a method must stay under this, or the method is skipped there.
pub const SKIP_OVER: Duration = Duration::from_secs(2);

/// One whole frame of a box method: boxes in, pairs out.
type Frame<'a> = Box<dyn FnMut(&[Aabb], &mut Vec<[u32; 2]>) + 'a>;

/// A pair-finding method: one call is one whole frame (build + all pairs).
struct Method<'a> {
    name: &'static str,
    peer: bool,
    run: Frame<'a>,
}

/// Timings of one method on one scene.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Per-round times, with the checked pair count.
    Timed { times: Vec<Duration>, pairs: usize },
    /// Not timed, with why.
    Skipped(String),
}

impl Outcome {
    /// Median, if timed.
    pub fn median(&self) -> Option<Duration> {
        match self {
            Outcome::Timed { times, .. } => {
                let mut t = times.clone();
                t.sort_unstable();
                Some(t[t.len() / 2])
            }
            Outcome::Skipped(_) => None,
        }
    }

    /// Minimum, if timed.
    pub fn min(&self) -> Option<Duration> {
        match self {
            Outcome::Timed { times, .. } => times.iter().min().copied(),
            Outcome::Skipped(_) => None,
        }
    }
}

/// Results of one scene: `(method, is_peer, outcome)` in method order.
#[derive(Clone, Debug)]
pub struct SceneResult {
    pub name: String,
    pub boxes: usize,
    pub rounds: usize,
    pub rows: Vec<(&'static str, bool, Outcome)>,
}

/// Sorted, de-duplicated copy with `a < b` checked.
fn canonical(pairs: &[[u32; 2]]) -> Vec<[u32; 2]> {
    let mut v = pairs.to_vec();
    assert!(v.iter().all(|p| p[0] < p[1]), "a pair with a >= b");
    v.sort_unstable();
    v.dedup();
    v
}

fn methods<'a>(one: &'a JobSystem, all: &'a JobSystem) -> Vec<Method<'a>> {
    let mut grid = AdaptiveGrid::default();
    let mut tree1 = GridTree::default();
    let mut tree_all = GridTree::default();
    let mut sap = SortAndSweep::default();
    let mut bots = Vec::new();
    let mut leaves = Vec::new();
    let mut leaves2 = Vec::new();
    let mut ws = parry3d::partitioning::BvhWorkspace::default();
    let mut shapes = Vec::new();
    vec![
        Method {
            name: "broadphase AdaptiveGrid (1 thread)",
            peer: false,
            run: Box::new(move |b, o| grid.find_pairs(b, o).expect("valid scene")),
        },
        Method {
            name: "broadphase GridTree (1 thread)",
            peer: false,
            run: Box::new(move |b, o| tree1.find_pairs(one, b, o).expect("valid scene")),
        },
        Method {
            name: "broadphase GridTree (all threads)",
            peer: false,
            run: Box::new(move |b, o| tree_all.find_pairs(all, b, o).expect("valid scene")),
        },
        Method {
            name: "broadphase SortAndSweep (1 thread)",
            peer: false,
            run: Box::new(move |b, o| sap.find_pairs(b, o).expect("valid scene")),
        },
        Method {
            name: "broccoli 6.3 (2D x,y + z filter)",
            peer: true,
            run: Box::new(move |b, o| peers::broccoli::pairs(b, &mut bots, o)),
        },
        Method {
            name: "parry3d Bvh (build + self traversal)",
            peer: true,
            run: Box::new(move |b, o| peers::parry::self_pairs(b, &mut leaves, &mut ws, o)),
        },
        Method {
            name: "parry3d Bvh (build + per-box queries)",
            peer: true,
            run: Box::new(move |b, o| peers::parry::query_pairs(b, &mut leaves2, o)),
        },
        Method {
            name: "rstar (bulk load + self join)",
            peer: true,
            run: Box::new(peers::rstar::pairs),
        },
        Method {
            name: "bvh (build + per-box queries)",
            peer: true,
            run: Box::new(move |b, o| peers::bvh::pairs(b, &mut shapes, o)),
        },
    ]
}

/// Gate, then interleaved rounds. `pre_skip[i]` skips method `i` up front.
fn run_scene(
    name: &str,
    boxes: &[Aabb],
    rounds: usize,
    ms: &mut [Method<'_>],
    pre_skip: &[Option<String>],
) -> SceneResult {
    eprintln!("scene {name}: {} boxes, {rounds} rounds", boxes.len());
    let mut out = Vec::new();
    let mut reference = Vec::new();
    SortAndSweep::default().find_pairs(boxes, &mut reference).expect("valid scene");
    let reference = canonical(&reference);
    let mut skip: Vec<Option<String>> = pre_skip.to_vec();
    // Gate: one run each; the pair set must equal SortAndSweep's.
    for (i, m) in ms.iter_mut().enumerate() {
        if skip[i].is_some() {
            continue;
        }
        let t = Instant::now();
        (m.run)(boxes, &mut out);
        let took = t.elapsed();
        let got = canonical(&out);
        if got.len() != out.len() {
            eprintln!("  note: {} reported {} duplicate pairs", m.name, out.len() - got.len());
        }
        assert!(
            got == reference,
            "pair sets differ on {name}: {} found {} pairs, SortAndSweep {}",
            m.name,
            got.len(),
            reference.len()
        );
        if took > SKIP_OVER {
            skip[i] = Some(format!("skipped: one run took {:.1} s (> 2 s)", took.as_secs_f64()));
        }
        eprintln!("  gate ok {:<40} {:>10.3} ms", m.name, took.as_secs_f64() * 1e3);
    }
    let mut times = vec![Vec::with_capacity(rounds); ms.len()];
    for _ in 0..rounds {
        for (i, m) in ms.iter_mut().enumerate() {
            if skip[i].is_some() {
                continue;
            }
            let t = Instant::now();
            (m.run)(black_box(boxes), &mut out);
            times[i].push(t.elapsed());
            black_box(out.len());
        }
    }
    let rows = ms
        .iter()
        .zip(times)
        .zip(skip)
        .map(|((m, times), s)| {
            let o = match s {
                Some(why) => Outcome::Skipped(why),
                None => Outcome::Timed { times, pairs: reference.len() },
            };
            (m.name, m.peer, o)
        })
        .collect();
    SceneResult { name: name.to_string(), boxes: boxes.len(), rounds, rows }
}

/// Per-query latency on query10k: `(method, ns per query for each round)`.
fn query_latency(rounds: usize) -> Vec<(&'static str, Vec<f64>)> {
    let scene = scenes::query10k();
    let boxes = &scene.boxes;
    let queries = scenes::query_boxes(1_000, 1);
    eprintln!("query10k: {} static boxes, {} queries, {rounds} rounds", boxes.len(), queries.len());
    let mut grid = AdaptiveGrid::default();
    grid.build(boxes).expect("valid scene");
    let mut leaves = Vec::new();
    let pbvh = peers::parry::build(boxes, &mut leaves);
    let rtree = peers::rstar::build(boxes);
    let mut shapes = Vec::new();
    let btree = peers::bvh::build(boxes, &mut shapes);
    let mut bots = Vec::new();
    peers::broccoli::fill(boxes, &mut bots);
    let mut ctree = broccoli::Tree::new(&mut bots);
    type Query<'a> = Box<dyn FnMut(&Aabb, &mut Vec<u32>) + 'a>;
    let mut ms: Vec<(&'static str, Query<'_>)> = vec![
        (
            "broadphase AdaptiveGrid::query_aabb",
            Box::new(|q, o| grid.query_aabb(q, o).expect("valid query")),
        ),
        (
            "broccoli find_all_intersect_rect (z filter)",
            Box::new(|q, o| peers::broccoli::query(&mut ctree, boxes, q, o)),
        ),
        ("parry3d Bvh::intersect_aabb", Box::new(|q, o| peers::parry::query(&pbvh, boxes, q, o))),
        (
            "rstar locate_in_envelope_intersecting",
            Box::new(|q, o| peers::rstar::query(&rtree, boxes, q, o)),
        ),
        ("bvh traverse_iterator", Box::new(|q, o| peers::bvh::query(&btree, &shapes, boxes, q, o))),
    ];
    // Gate: same hits for every query.
    let mut out = Vec::new();
    for q in &queries {
        let mut want = Vec::new();
        broadphase::oracle::brute_force_query(boxes, q, &mut want).expect("valid query");
        want.sort_unstable();
        for (name, f) in ms.iter_mut() {
            f(q, &mut out);
            out.sort_unstable();
            assert!(out == want, "query results differ: {name}");
        }
    }
    let mut per = vec![Vec::new(); ms.len()];
    for _ in 0..rounds {
        for (i, (_, f)) in ms.iter_mut().enumerate() {
            let t = Instant::now();
            for q in &queries {
                f(black_box(q), &mut out);
                black_box(out.len());
            }
            per[i].push(t.elapsed().as_secs_f64() * 1e9 / queries.len() as f64);
        }
    }
    ms.iter().map(|(n, _)| *n).zip(per).collect()
}

/// Prints `problem` (if any) and the flags, and exits: with status 2 after
/// a problem, 0 for `--help`.
fn usage(problem: &str) -> ! {
    let flags = "flags: [--quick] [--rays-only] [--queries-only] [--neighbors-only] [--out PATH]";
    if problem.is_empty() {
        println!("{flags}");
        std::process::exit(0);
    }
    eprintln!("error: {problem}; {flags}");
    std::process::exit(2);
}

fn main() {
    let mut quick = false;
    let mut out = PathBuf::from("../../docs/PEERS.md");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--rays-only" => {
                // The ray sets alone, printed (for development).
                shapes::run(quick, true);
                return;
            }
            "--neighbors-only" => {
                // The neighbor scenes alone, printed (for development).
                neighbor_sets::run_all(quick);
                return;
            }
            "--queries-only" => {
                // Every ray, box and sphere set, printed (for development).
                shapes::run(quick, false);
                return;
            }
            "--out" => match args.next() {
                Some(path) => out = PathBuf::from(path),
                None => usage("--out needs a path"),
            },
            "--help" | "-h" => usage(""),
            other => usage(&format!("unknown argument {other}")),
        }
    }
    let rounds = |n: usize| {
        if quick {
            3
        } else if n <= 40_000 {
            15
        } else if n <= 100_000 {
            9
        } else {
            5
        }
    };
    let one = JobSystem::new(1);
    let all = JobSystem::new(0);
    let mut ms = methods(&one, &all);
    let none = vec![None; ms.len()];

    // Scaling at uniform density; the 1M point is the uniform1m scene.
    let mut scaling = Vec::new();
    let mut pre = none.clone();
    for n in [1_000, 10_000, 100_000, 1_000_000] {
        let scene = if n == 1_000_000 { scenes::uniform1m() } else { scenes::uniform(n, 0x5CA1E) };
        let name = if n == 1_000_000 { "uniform1m".to_string() } else { format!("uniform {n}") };
        let r = run_scene(&name, &scene.boxes, rounds(n), &mut ms, &pre);
        // Skip at the next size (10x) what would exceed the limit there.
        for (i, (_, _, o)) in r.rows.iter().enumerate() {
            pre[i] = match o {
                Outcome::Skipped(_) => Some("skipped: > 2 s at a smaller size".to_string()),
                Outcome::Timed { .. } if o.median().expect("timed") * 10 > SKIP_OVER => {
                    Some(format!(
                        "skipped: 10× its {} ms at 1/10 the size > 2 s",
                        o.median().expect("timed").as_millis()
                    ))
                }
                Outcome::Timed { .. } => None,
            };
        }
        scaling.push(r);
    }
    let mut scenes_out = Vec::new();
    for s in scenes::all_box_scenes_up_to_100k() {
        let n = s.boxes.len();
        scenes_out.push(run_scene(s.name, &s.boxes, rounds(n), &mut ms, &none));
    }
    scenes_out.push(scaling.last().expect("uniform1m").clone());
    drop(ms);
    let queries = query_latency(if quick { 3 } else { 15 });
    let shape_sets = shapes::run(quick, false);
    let moving: Vec<coherence::CoherenceResult> = [
        (scenes::drift100k as fn() -> scenes::MovingScene, 30),
        (scenes::drift1m, 10),
        (scenes::static100k_dynamic1k, 60),
        (scenes::teleport100k, 20),
    ]
    .into_iter()
    .map(|(make, frames)| coherence::run(make, if quick { 3 } else { frames }))
    .collect();
    let nb = neighbor_sets::run_all(quick);
    let results = report::Results {
        scenes: &scenes_out,
        scaling: &scaling,
        queries: &queries,
        shape_sets: &shape_sets,
        neighbors: &nb,
        moving: &moving,
    };
    report::write(&out, quick, &results).expect("write the report");
    eprintln!("wrote {}", out.display());
}
