//! All-hits rays on the persistent broad phase with both ways the index's
//! grids drop the copies of a box in several leaves ([`RayDedup::Sort`],
//! [`RayDedup::FastUnique`], set through `PersistentConfig::tree.grid`),
//! against brute force over the live proxies' boxes: random worlds that
//! drift and churn with small leaves and big boxes, and hostile ones — a
//! lattice cut along cell borders, one huge proxy over everything, a pile
//! of identical proxies.

use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, GridConfig, RayDedup};
use broadphase_partition::GridTreeConfig;
use broadphase_persistent::{PersistentBroadPhase, PersistentConfig, Proxy, ProxyKind};
use broadphase_scenes::SplitMix64;
use broadphase_storage::Ray;
use glam::Vec3;
use proptest::prelude::*;

fn world(ray_dedup: RayDedup) -> PersistentBroadPhase {
    let grid = GridConfig { ray_dedup, leaf_capacity: 4, ..GridConfig::default() };
    PersistentBroadPhase::with_config(PersistentConfig {
        tree: GridTreeConfig { grid, ..GridTreeConfig::default() },
        ..PersistentConfig::default()
    })
}

/// Brute force over `live`: every proxy `ray` hits, sorted by t then handle.
fn brute(live: &[(Proxy, Aabb)], ray: &Ray) -> Vec<(Proxy, f32)> {
    let mut hits: Vec<(Proxy, f32)> =
        live.iter().filter_map(|&(p, b)| ray.entry(&b).map(|t| (p, t))).collect();
    hits.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    hits
}

/// The same proxies in a world of each strategy, updated once.
fn worlds(boxes: &[Aabb], jobs: &JobSystem) -> Vec<(PersistentBroadPhase, Vec<(Proxy, Aabb)>)> {
    [RayDedup::Sort, RayDedup::FastUnique]
        .into_iter()
        .map(|ray_dedup| {
            let mut world = world(ray_dedup);
            let live = boxes
                .iter()
                .enumerate()
                .map(|(i, &b)| {
                    let kind = if i % 3 == 0 { ProxyKind::Static } else { ProxyKind::Dynamic };
                    (world.insert(b, kind).unwrap(), b)
                })
                .collect();
            world.update(jobs).unwrap();
            (world, live)
        })
        .collect()
}

/// Every ray's hits in every world equal brute force; returns the most
/// hits a ray had.
fn check_rays(boxes: &[Aabb], rays: &[Ray]) -> usize {
    let jobs = JobSystem::new(1);
    let mut most = 0;
    for (mut world, live) in worlds(boxes, &jobs) {
        let view = world.queries(&jobs).unwrap();
        let mut hits = Vec::new();
        for ray in rays {
            view.ray_hits(ray, &mut hits).unwrap();
            assert_eq!(hits, brute(&live, ray), "{ray:?}");
            most = most.max(hits.len());
        }
    }
    most
}

#[test]
fn lattice_cut_along_cell_borders() {
    // Unit cubes 0..16 a side: y = 8, z = 8 are cell borders at every
    // level; rays along them touch four rows of cubes.
    let mut boxes = Vec::new();
    for x in 0..16 {
        for y in 0..16 {
            for z in 0..16 {
                let min = Vec3::new(x as f32, y as f32, z as f32);
                boxes.push(Aabb::new(min, min + Vec3::ONE));
            }
        }
    }
    let rays = [
        Ray::new(Vec3::new(-1.0, 8.0, 8.0), Vec3::X, f32::INFINITY),
        Ray::new(Vec3::new(17.0, 8.0, 4.0), -Vec3::X, 9.0),
        Ray::new(Vec3::new(8.0, -1.0, 8.0), Vec3::Y, f32::INFINITY),
        Ray::new(Vec3::splat(-1.0), Vec3::ONE, f32::INFINITY),
    ];
    assert!(check_rays(&boxes, &rays) >= 64);
}

#[test]
fn huge_proxy_over_everything_and_a_pile() {
    let mut rng = SplitMix64::new(5);
    let mut boxes: Vec<Aabb> = (0..2_000)
        .map(|_| {
            let min = Vec3::new(
                rng.range_f32(0.0, 60.0),
                rng.range_f32(0.0, 60.0),
                rng.range_f32(0.0, 60.0),
            );
            Aabb::new(min, min + Vec3::splat(1.5))
        })
        .collect();
    boxes.insert(700, Aabb::new(Vec3::splat(-1.0), Vec3::splat(62.0)));
    // A pile of 40 identical proxies in the middle.
    boxes.extend(std::iter::repeat_n(Aabb::new(Vec3::splat(30.0), Vec3::splat(31.0)), 40));
    let mut rays: Vec<Ray> = (0..100)
        .map(|_| {
            let origin = Vec3::new(
                rng.range_f32(-5.0, 65.0),
                rng.range_f32(-5.0, 65.0),
                rng.range_f32(-5.0, 65.0),
            );
            let dir = Vec3::new(
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
            );
            Ray::new(origin, dir, [f32::INFINITY, 15.0][rng.below(2)])
        })
        .collect();
    rays.push(Ray::new(Vec3::new(-5.0, 30.5, 30.5), Vec3::X, f32::INFINITY));
    assert!(check_rays(&boxes, &rays) > 41);
}

fn random_box(rng: &mut SplitMix64) -> Aabb {
    let min =
        Vec3::new(rng.range_f32(0.0, 40.0), rng.range_f32(0.0, 40.0), rng.range_f32(0.0, 40.0));
    let size = if rng.below(8) == 0 { 20.0 } else { 3.0 };
    let extent =
        Vec3::new(rng.range_f32(0.0, size), rng.range_f32(0.0, size), rng.range_f32(0.0, size));
    Aabb::new(min, min + extent)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    /// Random worlds over a few frames of drift and churn, queried before
    /// and after each update, in a world of each strategy.
    #[test]
    fn both_strategies_match_brute_force(seed in any::<u64>(), count in 1usize..300) {
        let jobs = JobSystem::new(1);
        let mut rng = SplitMix64::new(seed);
        let boxes: Vec<Aabb> = (0..count).map(|_| random_box(&mut rng)).collect();
        let mut worlds = worlds(&boxes, &jobs);
        let mut hits = Vec::new();
        for frame in 0..4 {
            // The same moves in every world.
            let moves: Vec<(usize, Aabb)> = (0..count / 3 + 1)
                .map(|_| {
                    let k = rng.below(count);
                    let b = boxes[k];
                    let step = Vec3::splat(rng.range_f32(-2.0, 2.0));
                    (k, if rng.below(6) == 0 { random_box(&mut rng) } else { Aabb::new(b.min + step, b.max + step) })
                })
                .collect();
            let rays: Vec<Ray> = (0..12)
                .map(|_| {
                    let origin = Vec3::new(rng.range_f32(-5.0, 45.0), rng.range_f32(0.0, 40.0), rng.range_f32(0.0, 40.0));
                    let mut dir = Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0));
                    if rng.below(3) == 0 {
                        dir = Vec3::new(dir.x, 0.0, 0.0);
                    }
                    Ray::new(origin, dir, [f32::INFINITY, 8.0, 0.0][rng.below(3)])
                })
                .collect();
            for (world, live) in &mut worlds {
                for &(k, b) in &moves {
                    world.set_aabb(live[k].0, b).unwrap();
                    live[k].1 = b;
                }
                for pending in [true, false] {
                    if !pending {
                        world.update(&jobs).unwrap();
                    }
                    let view = world.queries(&jobs).unwrap();
                    for ray in &rays {
                        view.ray_hits(ray, &mut hits).unwrap();
                        prop_assert_eq!(&hits, &brute(live, ray), "frame {}, {:?}", frame, ray);
                    }
                }
            }
        }
    }
}
