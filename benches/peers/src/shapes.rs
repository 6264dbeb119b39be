//! Rays, boxes and spheres against static sets, one thread: the first box
//! each ray hits, and every box a query box or sphere meets.
//!
//! Each structure is built once per scene (untimed). Every peer's leaf test
//! is broadphase's exact one (`Ray::entry`, `Aabb::overlaps`,
//! `Sphere::overlaps`), so the answers are gated equal to brute force on a
//! sample first and the times are the traversals'. Peers without a sphere
//! query answer it as a box query on the sphere's bounds, then the exact
//! sphere test. Rounds interleave the methods; a round times every query of
//! the set once.

use crate::peers;
use broadphase::glam::Vec3;
use broadphase::query::{Ray, Sphere};
use broadphase::{Aabb, AdaptiveGrid};
use broadphase_scenes::{self as scenes, SplitMix64};
use std::hint::black_box;
use std::time::Instant;

/// One query set: ns per query for each method, one entry per round.
#[derive(Clone, Debug)]
pub struct QuerySet {
    /// The scene and its box count.
    pub scene: &'static str,
    pub boxes: usize,
    /// What the queries are, in words.
    pub queries: String,
    /// `(method, ns per query per round)`; broadphase first.
    pub rows: Vec<(&'static str, Vec<f64>)>,
}

/// Every structure over one scene.
struct Structures<'a> {
    boxes: &'a [Aabb],
    grid: AdaptiveGrid,
    parry: parry3d::partitioning::Bvh,
    bvh: bvh::bvh::Bvh<f32, 3>,
    shapes: Vec<peers::bvh::Shape>,
    obvhs: obvhs::cwbvh::CwBvh,
    rstar: rstar::RTree<peers::rstar::Item>,
}

impl<'a> Structures<'a> {
    fn build(boxes: &'a [Aabb]) -> Self {
        let mut grid = AdaptiveGrid::default();
        grid.build(boxes).expect("valid scene");
        // Rays take the rays' tree from the first one (a build cast
        // through many times builds it anyway once its walks paid for it).
        grid.prepare_rays();
        let mut leaves = Vec::new();
        let parry = peers::parry::build(boxes, &mut leaves);
        let mut shapes = Vec::new();
        let bvh = peers::bvh::build(boxes, &mut shapes);
        Structures {
            boxes,
            grid,
            parry,
            bvh,
            shapes,
            obvhs: peers::obvhs::build(boxes),
            rstar: peers::rstar::build(boxes),
        }
    }
}

fn point_in(rng: &mut SplitMix64, lo: Vec3, hi: Vec3) -> Vec3 {
    Vec3::new(rng.range_f32(lo.x, hi.x), rng.range_f32(lo.y, hi.y), rng.range_f32(lo.z, hi.z))
}

/// A direction from a point uniform in the cube `[-1, 1)³`, normalized
/// (not uniform on the sphere: diagonals are a little more likely).
fn direction(rng: &mut SplitMix64) -> Vec3 {
    point_in(rng, Vec3::splat(-1.0), Vec3::ONE).normalize_or(Vec3::X)
}

fn rays_from(origins: impl Iterator<Item = Vec3>, rng: &mut SplitMix64, max_t: f32) -> Vec<Ray> {
    origins.map(|o| Ray::new(o, direction(rng), max_t)).collect()
}

/// The median of one method's rounds.
pub fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Interleaved rounds of `methods` over `count` queries.
fn time<M>(
    methods: &mut [(&'static str, M)],
    count: usize,
    rounds: usize,
) -> Vec<(&'static str, Vec<f64>)>
where
    M: FnMut(usize),
{
    let mut per = vec![Vec::new(); methods.len()];
    for _ in 0..rounds {
        for (i, (_, run)) in methods.iter_mut().enumerate() {
            let t = Instant::now();
            for q in 0..count {
                run(black_box(q));
            }
            per[i].push(t.elapsed().as_secs_f64() * 1e9 / count as f64);
        }
    }
    methods.iter().map(|(name, _)| *name).zip(per).collect()
}

fn ray_set(
    s: &Structures<'_>,
    scene: &'static str,
    what: &str,
    rays: &[Ray],
    rounds: usize,
) -> QuerySet {
    type Cast<'b> = Box<dyn Fn(&Ray) -> Option<(u32, f32)> + 'b>;
    let boxes = s.boxes;
    let casts: Vec<(&'static str, Cast<'_>)> = vec![
        ("broadphase AdaptiveGrid::cast_ray", Box::new(|r| s.grid.cast_ray(r).expect("valid ray"))),
        (
            "parry3d Bvh::cast_ray (best first)",
            Box::new(|r| peers::parry::cast_ray(&s.parry, boxes, r)),
        ),
        ("obvhs CwBvh::ray_traverse", Box::new(|r| peers::obvhs::cast_ray(&s.obvhs, boxes, r))),
        (
            "bvh nearest_traverse_iterator",
            Box::new(|r| peers::bvh::cast_ray(&s.bvh, &s.shapes, boxes, r)),
        ),
    ];
    // Gate: the same first hit (the box too unless two tie), on a sample.
    for ray in rays.iter().step_by((rays.len() / 200).max(1)) {
        let want = broadphase::oracle::brute_force_ray_hits(boxes, ray);
        for (name, cast) in &casts {
            let got = cast(ray);
            let same = match (got, want.first()) {
                (None, None) => true,
                (Some((id, t)), Some(&(wid, wt))) => {
                    t == wt && (id == wid || want.get(1).is_some_and(|&(_, t2)| t2 == wt))
                }
                _ => false,
            };
            assert!(
                same,
                "{scene}: first hit differs: {name} on {ray:?}: {got:?} against {:?}",
                want.first()
            );
        }
    }
    let mut methods: Vec<(&'static str, _)> = casts
        .iter()
        .map(|(name, cast)| {
            (*name, move |q: usize| {
                black_box(cast(&rays[q]));
            })
        })
        .collect();
    let rows = time(&mut methods, rays.len(), rounds);
    report_line(scene, what, &rows);
    QuerySet { scene, boxes: boxes.len(), queries: what.to_string(), rows }
}

/// Box queries, or sphere queries when `spheres` is given (`queries` are
/// then their bounds).
fn shape_set(
    s: &Structures<'_>,
    scene: &'static str,
    what: &str,
    queries: &[Aabb],
    spheres: Option<&[Sphere]>,
    rounds: usize,
) -> QuerySet {
    type Query<'b> = Box<dyn Fn(usize, &mut Vec<u32>) + 'b>;
    let boxes = s.boxes;
    // A peer's sphere: its box query on the bounds, then the exact test.
    let exact = move |q: usize, out: &mut Vec<u32>| {
        if let Some(spheres) = spheres {
            out.retain(|&i| spheres[q].overlaps(&boxes[i as usize]));
        }
    };
    let ours: Query<'_> = match spheres {
        Some(spheres) => {
            Box::new(|q, out| s.grid.query_sphere(&spheres[q], out).expect("valid sphere"))
        }
        None => Box::new(|q, out| s.grid.query_aabb(&queries[q], out).expect("valid box")),
    };
    let ours_name = if spheres.is_some() {
        "broadphase AdaptiveGrid::query_sphere"
    } else {
        "broadphase AdaptiveGrid::query_aabb"
    };
    let methods: Vec<(&'static str, Query<'_>)> = vec![
        (ours_name, ours),
        (
            "parry3d Bvh::intersect_aabb",
            Box::new(move |q, out| {
                peers::parry::query(&s.parry, boxes, &queries[q], out);
                exact(q, out);
            }),
        ),
        (
            "rstar locate_in_envelope_intersecting",
            Box::new(move |q, out| {
                peers::rstar::query(&s.rstar, boxes, &queries[q], out);
                exact(q, out);
            }),
        ),
        (
            "bvh traverse_iterator",
            Box::new(move |q, out| {
                peers::bvh::query(&s.bvh, &s.shapes, boxes, &queries[q], out);
                exact(q, out);
            }),
        ),
    ];
    // Gate: the same boxes, on a sample.
    let mut out = Vec::new();
    for q in (0..queries.len()).step_by((queries.len() / 200).max(1)) {
        let want: Vec<u32> = (0..boxes.len() as u32)
            .filter(|&i| match spheres {
                Some(spheres) => spheres[q].overlaps(&boxes[i as usize]),
                None => queries[q].overlaps(&boxes[i as usize]),
            })
            .collect();
        for (name, query) in &methods {
            query(q, &mut out);
            out.sort_unstable();
            assert!(out == want, "{scene}: {what}: {name} differs on query {q}");
        }
    }
    let mut timed: Vec<(&'static str, _)> = methods
        .iter()
        .map(|(name, query)| {
            let mut out = Vec::new();
            (*name, move |q: usize| {
                query(q, &mut out);
                black_box(out.len());
            })
        })
        .collect();
    let rows = time(&mut timed, queries.len(), rounds);
    report_line(scene, what, &rows);
    QuerySet { scene, boxes: boxes.len(), queries: what.to_string(), rows }
}

fn report_line(scene: &str, what: &str, rows: &[(&'static str, Vec<f64>)]) {
    let times: Vec<String> = rows.iter().map(|(n, v)| format!("{n} {:.0}", median(v))).collect();
    eprintln!("{scene}, {what}: {} ns", times.join(", "));
}

/// Random spheres of `radius` around points in `lo..hi`, and their bounds.
fn spheres(
    rng: &mut SplitMix64,
    count: usize,
    lo: Vec3,
    hi: Vec3,
    radius: f32,
) -> (Vec<Sphere>, Vec<Aabb>) {
    let spheres: Vec<Sphere> =
        (0..count).map(|_| Sphere::new(point_in(rng, lo, hi), radius)).collect();
    let bounds = spheres.iter().map(Sphere::bounds).collect();
    (spheres, bounds)
}

/// Every set. `rays_only` keeps the ray sets alone (for development).
pub fn run(quick: bool, rays_only: bool) -> Vec<QuerySet> {
    let rounds = if quick { 3 } else { 9 };
    let mut sets = Vec::new();

    let scene = scenes::mixed100k();
    let s = Structures::build(&scene.boxes);
    let (lo, hi) = (Vec3::ZERO, Vec3::splat(2000.0));
    let mut rng = SplitMix64::new(11);
    let short: Vec<Ray> = {
        let origins: Vec<Vec3> = (0..10_000).map(|_| point_in(&mut rng, lo, hi)).collect();
        rays_from(origins.into_iter(), &mut rng, 40.0)
    };
    let long: Vec<Ray> = {
        let origins: Vec<Vec3> = (0..10_000).map(|_| point_in(&mut rng, lo, hi)).collect();
        rays_from(origins.into_iter(), &mut rng, f32::INFINITY)
    };
    sets.push(ray_set(&s, "mixed100k", "10,000 short rays (length 40), first hit", &short, rounds));
    sets.push(ray_set(&s, "mixed100k", "10,000 unbounded rays, first hit", &long, rounds));
    if !rays_only {
        let (balls, bounds) = spheres(&mut rng, 10_000, lo, hi, 10.0);
        sets.push(shape_set(&s, "mixed100k", "10,000 boxes (20 wide)", &bounds, None, rounds));
        sets.push(shape_set(
            &s,
            "mixed100k",
            "10,000 spheres (radius 10)",
            &bounds,
            Some(&balls),
            rounds,
        ));
    }
    drop(s);

    // Rays from inside the dense part of cluster88k: 80,000 boxes packed
    // in [0, 1500)³, the origins at the centers of random ones of them.
    let scene = scenes::cluster88k();
    let s = Structures::build(&scene.boxes);
    let mut rng = SplitMix64::new(12);
    let origins: Vec<Vec3> = (0..10_000)
        .map(|_| {
            let b = loop {
                let b = scene.boxes[(rng.next_u64() % scene.boxes.len() as u64) as usize];
                if b.max.max_element() < 1_600.0 {
                    break b;
                }
            };
            (b.min + b.max) * 0.5
        })
        .collect();
    let inside = rays_from(origins.into_iter(), &mut rng, f32::INFINITY);
    sets.push(ray_set(
        &s,
        "cluster88k",
        "10,000 unbounded rays from inside the cluster",
        &inside,
        rounds,
    ));
    drop(s);

    let scene = scenes::uniform1m();
    let s = Structures::build(&scene.boxes);
    let side = scene.boxes.iter().fold(0.0f32, |m, b| m.max(b.max.max_element()));
    let (lo, hi) = (Vec3::ZERO, Vec3::splat(side));
    let mut rng = SplitMix64::new(13);
    let origins: Vec<Vec3> = (0..1_000).map(|_| point_in(&mut rng, lo, hi)).collect();
    let rays = rays_from(origins.into_iter(), &mut rng, f32::INFINITY);
    sets.push(ray_set(&s, "uniform1m", "1,000 unbounded rays, first hit", &rays, rounds));
    if !rays_only {
        let (balls, bounds) = spheres(&mut rng, 1_000, lo, hi, 10.0);
        sets.push(shape_set(&s, "uniform1m", "1,000 boxes (20 wide)", &bounds, None, rounds));
        sets.push(shape_set(
            &s,
            "uniform1m",
            "1,000 spheres (radius 10)",
            &bounds,
            Some(&balls),
            rounds,
        ));
    }
    sets
}
