//! Ray, sphere and box queries on the kept grid, one thread.
//!
//! Scene: mixed100k (100,000 static cubes of widths 0.5–50, log-uniform,
//! in a 2,000-unit cube). Query sets, each 10,000 queries from a fixed
//! seed:
//!
//! - `rays/short`: from random points, random directions, `max_t` 40 (2%
//!   of the scene's side);
//! - `rays/long`: the same with no end (`max_t = inf`);
//! - `spheres`: radius 10 around random points, and `boxes`: the spheres'
//!   bounding boxes, the same candidates for the box query.
//!
//! Groups (criterion ids are `group/function`, each iteration one pass
//! over the 10,000 queries): `queries/cast_ray_short`,
//! `queries/cast_ray_long`, `queries/ray_hits_short` (every hit, sorted),
//! `queries/query_sphere`, `queries/query_box`,
//! `queries/cast_rays_short_2_threads` (the short rays as one batch on a
//! 2-thread job system), and
//! `queries/brute_force_cast_ray_short` over the first 100 short rays
//! only, for scale. Before timing, the first 500 queries of each set are
//! checked against brute force.
//!
//! Group `ray_dedup`: all-hits rays with each way of dropping the copies
//! of a box in several leaves (`GridConfig::ray_dedup`), side by side:
//! `ray_dedup/{short,long}/{sort,fast_unique}`, each iteration the 10,000
//! short or long rays (`ray_dedup/short/sort` is `queries/ray_hits_short`
//! again, in the same sitting).
//!
//! Group `frustum`: 100 view frustums (from random points toward random
//! points, vertical field of view 1 rad, aspect 1.5, near 1, far 300) over
//! the same 100,000 static boxes, each iteration one pass over the 100:
//! `frustum/query_with` (the conservative plane test over the frustum's
//! bounds, `AdaptiveGrid::query_with`: planes dropped below cells inside
//! them, the rest tested on the candidates' quantized corners) against
//! `frustum/query_box_over_bounds` (the box query over the same bounds,
//! which a caller would then still have to cull). Before timing, the first
//! 20 frustums are checked against brute force.
//!
//! Group `persistent_batch`: the same 10,000 short rays and 10,000 boxes
//! on the persistent broad phase (mixed100k's boxes as proxies, every
//! fourth static, after one update), each iteration one pass over all of
//! them: a loop of single queries on the calling thread
//! (`persistent_batch/cast_ray_loop`, `persistent_batch/query_aabb_loop`)
//! against one batch on a job system of 1 and 2 threads
//! (`persistent_batch/cast_rays_{1,2}_threads`,
//! `persistent_batch/query_aabbs_{1,2}_threads`). Before timing, both
//! batches are checked against the single queries.
//!
//! Group `rays`: what the rays' own tree costs to build (kept until the
//! next build; `prepare_rays` builds it, or the casts once their cell
//! walks paid for it), on mixed100k and on uniform1m (1,000,000 cubes):
//! `rays/{mixed100k,uniform1m}/prepare_rays` times `prepare_rays` right
//! after a build (the build itself not timed), against
//! `rays/{mixed100k,uniform1m}/warm_cast` (one short ray, tree built) and
//! `rays/{mixed100k,uniform1m}/cell_walk_cast` (the same ray on a fresh
//! build, before any tree).
//!
//! ```text
//! cargo bench --bench queries
//! cargo bench --bench queries -- rays/
//! cargo bench --bench queries -- ray_dedup
//! cargo bench --bench queries -- frustum
//! cargo bench --bench queries -- persistent_batch
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase::grid::{GridConfig, RayDedup};
use broadphase::oracle::brute_force_ray_hits;
use broadphase::persistent::{BatchAnswers, PersistentBroadPhase, ProxyKind};
use broadphase::query::{Frustum, Ray, Sphere, cast_rays};
use broadphase::{
    Aabb, AdaptiveGrid, JobSystem,
    glam::{Mat4, Vec3},
};
use broadphase_scenes::{SplitMix64, mixed100k, uniform1m};
use criterion::{Criterion, criterion_main};

const QUERIES: usize = 10_000;

fn random_point(rng: &mut SplitMix64) -> Vec3 {
    Vec3::new(rng.range_f32(0.0, 2000.0), rng.range_f32(0.0, 2000.0), rng.range_f32(0.0, 2000.0))
}

fn random_dir(rng: &mut SplitMix64) -> Vec3 {
    loop {
        let d =
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0));
        if d.length_squared() > 1e-4 && d.length_squared() <= 1.0 {
            return d.normalize();
        }
    }
}

fn rays(seed: u64, max_t: f32) -> Vec<Ray> {
    let mut rng = SplitMix64::new(seed);
    (0..QUERIES).map(|_| Ray::new(random_point(&mut rng), random_dir(&mut rng), max_t)).collect()
}

fn brute_first(boxes: &[Aabb], ray: &Ray) -> Option<(u32, f32)> {
    brute_force_ray_hits(boxes, ray).first().copied()
}

fn queries(c: &mut Criterion) {
    let boxes = mixed100k().boxes;
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).expect("valid scene");
    let short = rays(1, 40.0);
    let long = rays(2, f32::INFINITY);
    let mut rng = SplitMix64::new(3);
    let spheres: Vec<Sphere> =
        (0..QUERIES).map(|_| Sphere::new(random_point(&mut rng), 10.0)).collect();
    let sphere_boxes: Vec<Aabb> = spheres.iter().map(Sphere::bounds).collect();

    for ray in short.iter().chain(&long).take(500) {
        assert_eq!(grid.cast_ray(ray).expect("valid ray"), brute_first(&boxes, ray), "{ray:?}");
    }
    let mut ids = Vec::new();
    for sphere in spheres.iter().take(500) {
        grid.query_sphere(sphere, &mut ids).expect("valid sphere");
        ids.sort_unstable();
        let expected: Vec<u32> =
            (0..boxes.len() as u32).filter(|&i| sphere.overlaps(&boxes[i as usize])).collect();
        assert_eq!(ids, expected, "{sphere:?}");
    }
    let hit_share = |rays: &[Ray]| {
        rays.iter().filter(|r| grid.cast_ray(r).expect("valid ray").is_some()).count() as f64
            / rays.len() as f64
    };
    eprintln!(
        "queries: short rays hit {:.0}%, long rays {:.0}%",
        100.0 * hit_share(&short),
        100.0 * hit_share(&long)
    );

    let mut group = c.benchmark_group("queries");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("cast_ray_short", |b| {
        b.iter(|| {
            short.iter().filter_map(|r| grid.cast_ray(black_box(r)).expect("valid ray")).count()
        })
    });
    group.bench_function("cast_ray_long", |b| {
        b.iter(|| {
            long.iter().filter_map(|r| grid.cast_ray(black_box(r)).expect("valid ray")).count()
        })
    });
    let mut hits = Vec::new();
    group.bench_function("ray_hits_short", |b| {
        b.iter(|| {
            short.iter().fold(0, |n, r| {
                grid.ray_hits(black_box(r), &mut hits).expect("valid ray");
                n + hits.len()
            })
        })
    });
    group.bench_function("query_sphere", |b| {
        b.iter(|| {
            spheres.iter().fold(0, |n, s| {
                grid.query_sphere(black_box(s), &mut ids).expect("valid sphere");
                n + ids.len()
            })
        })
    });
    group.bench_function("query_box", |b| {
        b.iter(|| {
            sphere_boxes.iter().fold(0, |n, q| {
                grid.query_aabb(black_box(q), &mut ids).expect("valid box");
                n + ids.len()
            })
        })
    });
    let jobs = JobSystem::new(2);
    let mut batch = Vec::new();
    group.bench_function("cast_rays_short_2_threads", |b| {
        b.iter(|| {
            cast_rays(&jobs, &grid, black_box(&short), &mut batch).expect("valid rays");
            batch.iter().filter(|h| h.is_some()).count()
        })
    });
    group.bench_function("brute_force_cast_ray_short", |b| {
        b.iter(|| short[..100].iter().filter_map(|r| brute_first(&boxes, black_box(r))).count())
    });
    group.finish();

    let mut group = c.benchmark_group("ray_dedup");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    for (name, ray_dedup) in [("sort", RayDedup::Sort), ("fast_unique", RayDedup::FastUnique)] {
        let mut grid = AdaptiveGrid::with_config(GridConfig { ray_dedup, ..GridConfig::default() });
        grid.build(&boxes).expect("valid scene");
        for ray in short.iter().chain(&long).take(500) {
            grid.ray_hits(ray, &mut hits).expect("valid ray");
            assert_eq!(hits, brute_force_ray_hits(&boxes, ray), "{name}, {ray:?}");
        }
        for (set, rays) in [("short", &short), ("long", &long)] {
            group.bench_function(format!("{set}/{name}"), |b| {
                b.iter(|| {
                    rays.iter().fold(0, |n, r| {
                        grid.ray_hits(black_box(r), &mut hits).expect("valid ray");
                        n + hits.len()
                    })
                })
            });
        }
    }
    group.finish();

    let frustums = frustums(4, 100);
    for frustum in frustums.iter().take(20) {
        grid.query_with(frustum, &mut ids).expect("valid frustum");
        ids.sort_unstable();
        let expected: Vec<u32> =
            (0..boxes.len() as u32).filter(|&i| frustum.overlaps(&boxes[i as usize])).collect();
        assert_eq!(ids, expected, "{frustum:?}");
    }
    let bounds: Vec<Aabb> = frustums.iter().map(Frustum::bounds).collect();
    let mut group = c.benchmark_group("frustum");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("query_with", |b| {
        b.iter(|| {
            frustums.iter().fold(0, |n, f| {
                grid.query_with(black_box(f), &mut ids).expect("valid frustum");
                n + ids.len()
            })
        })
    });
    group.bench_function("query_box_over_bounds", |b| {
        b.iter(|| {
            bounds.iter().fold(0, |n, q| {
                grid.query_aabb(black_box(q), &mut ids).expect("valid box");
                n + ids.len()
            })
        })
    });
    group.finish();

    persistent_batch(c, &boxes, &short, &sphere_boxes);
}

/// Group `persistent_batch`: batches of rays and boxes on the persistent
/// broad phase against a loop of single queries.
fn persistent_batch(c: &mut Criterion, boxes: &[Aabb], rays: &[Ray], queries: &[Aabb]) {
    let jobs = [JobSystem::new(1), JobSystem::new(2)];
    let mut world = PersistentBroadPhase::default();
    for (i, &b) in boxes.iter().enumerate() {
        let kind = if i.is_multiple_of(4) { ProxyKind::Static } else { ProxyKind::Dynamic };
        world.insert(b, kind).expect("valid scene");
    }
    world.update(&jobs[1]).expect("valid scene");
    let view = world.queries(&jobs[1]).expect("an index");
    let (mut firsts, mut found, mut single) = (Vec::new(), BatchAnswers::default(), Vec::new());
    for jobs in &jobs {
        view.cast_rays(jobs, rays, &mut firsts).expect("valid rays");
        view.query_aabbs(jobs, queries, &mut found).expect("valid boxes");
        for i in 0..500 {
            assert_eq!(firsts[i], view.cast_ray(&rays[i]).expect("valid ray"), "{:?}", rays[i]);
            view.query_aabb(&queries[i], &mut single).expect("valid box");
            assert_eq!(found.hits(i), single, "{:?}", queries[i]);
        }
    }

    let mut group = c.benchmark_group("persistent_batch");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("cast_ray_loop", |b| {
        b.iter(|| {
            rays.iter().filter_map(|r| view.cast_ray(black_box(r)).expect("valid ray")).count()
        })
    });
    group.bench_function("query_aabb_loop", |b| {
        b.iter(|| {
            queries.iter().fold(0, |n, q| {
                view.query_aabb(black_box(q), &mut single).expect("valid box");
                n + single.len()
            })
        })
    });
    for jobs in &jobs {
        let threads = jobs.threads();
        group.bench_function(format!("cast_rays_{threads}_threads"), |b| {
            b.iter(|| {
                view.cast_rays(jobs, black_box(rays), &mut firsts).expect("valid rays");
                firsts.iter().filter(|h| h.is_some()).count()
            })
        });
        group.bench_function(format!("query_aabbs_{threads}_threads"), |b| {
            b.iter(|| {
                view.query_aabbs(jobs, black_box(queries), &mut found).expect("valid boxes");
                found.items().len()
            })
        });
    }
    group.finish();
}

/// The rays' tree's build: the first cast after each build, the build not
/// timed, against a cast through a tree already built.
fn first_cast(c: &mut Criterion) {
    let mut group = c.benchmark_group("rays");
    group.sample_size(10).warm_up_time(Duration::from_millis(500));
    for (name, boxes) in [("mixed100k", mixed100k().boxes), ("uniform1m", uniform1m().boxes)] {
        let mut grid = AdaptiveGrid::default();
        let ray = rays(1, 40.0)[0];
        group.bench_function(format!("{name}/prepare_rays"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    grid.build(&boxes).expect("valid scene");
                    let start = Instant::now();
                    grid.prepare_rays();
                    total += start.elapsed();
                }
                total
            })
        });
        group.bench_function(format!("{name}/warm_cast"), |b| {
            b.iter(|| grid.cast_ray(black_box(&ray)).expect("valid ray"))
        });
        grid.build(&boxes).expect("valid scene");
        group.bench_function(format!("{name}/cell_walk_cast"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // A fresh build each time: its casts walk the cells.
                    if grid.has_ray_tree() {
                        grid.build(&boxes).expect("valid scene");
                    }
                    let start = Instant::now();
                    black_box(grid.cast_ray(black_box(&ray)).expect("valid ray"));
                    total += start.elapsed();
                }
                total
            })
        });
    }
    group.finish();
}

/// `count` cameras from random points toward random points, from a fixed
/// seed.
fn frustums(seed: u64, count: usize) -> Vec<Frustum> {
    let mut rng = SplitMix64::new(seed);
    let projection = Mat4::perspective_rh(1.0, 1.5, 1.0, 300.0);
    (0..count)
        .map(|_| {
            let (eye, target) = (random_point(&mut rng), random_point(&mut rng));
            let view = Mat4::look_at_rh(eye, target, Vec3::Y);
            Frustum::from_view_projection(projection * view).expect("a finite camera")
        })
        .collect()
}

/// `criterion_group!` wrapped in a module: the generated `pub fn` cannot
/// carry a doc comment.
mod groups {
    use super::{first_cast, queries};
    use criterion::criterion_group;

    criterion_group!(benches, queries, first_cast);
}

criterion_main!(groups::benches);
