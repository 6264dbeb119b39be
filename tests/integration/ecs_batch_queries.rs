//! Batches of queries through the ECS plugin against its single queries
//! and brute force over the world's bodies: first-hit rays (with and
//! without a predicate that depends on the query's index), all-hits rays,
//! boxes, points, spheres and regions (with a predicate), filtered by
//! collision layers, on plugins of 1 and 2 threads, over random and
//! adversarial worlds (a pile of identical boxes, a lattice of boxes
//! touching face to face, queried on the faces) that move between
//! frames. A bad query anywhere in a batch refuses it and names its index.

use broadphase::ecs::hecs::{Entity, World};
use broadphase::ecs::{
    Aabb, BatchAnswers, BatchError, BroadPhasePlugin, CollisionLayers, PluginConfig, PluginError,
    Static,
};
use broadphase::glam::Vec3;
use broadphase::query::{Capsule, QueryError, QueryPart, Ray, Sphere};
use broadphase_scenes::SplitMix64;
use proptest::prelude::*;

use crate::ecs_support::{Body, bodies};

/// The worlds the batches are asked about.
#[derive(Clone, Copy, Debug)]
enum Scene {
    Random,
    Pile,
    Lattice,
}

fn scene_box(scene: Scene, rng: &mut SplitMix64, i: usize) -> Aabb {
    match scene {
        Scene::Random => {
            let min = Vec3::new(
                rng.range_f32(0.0, 30.0),
                rng.range_f32(0.0, 30.0),
                rng.range_f32(0.0, 30.0),
            );
            let size = Vec3::new(
                rng.range_f32(0.0, 4.0),
                rng.range_f32(0.0, 4.0),
                rng.range_f32(0.0, 4.0),
            );
            Aabb::new(min, min + size)
        }
        Scene::Pile => Aabb::new(Vec3::splat(5.0), Vec3::splat(7.0)),
        Scene::Lattice => {
            let at = Vec3::new((i % 6) as f32, ((i / 6) % 6) as f32, (i / 36) as f32);
            Aabb::new(at, at + Vec3::ONE)
        }
    }
}

fn scene_point(scene: Scene, rng: &mut SplitMix64) -> Vec3 {
    match scene {
        Scene::Lattice => Vec3::new(rng.below(8) as f32, rng.below(8) as f32, rng.below(8) as f32),
        _ => Vec3::new(
            rng.range_f32(-3.0, 33.0),
            rng.range_f32(-3.0, 33.0),
            rng.range_f32(-3.0, 33.0),
        ),
    }
}

fn random_layers(rng: &mut SplitMix64) -> CollisionLayers {
    CollisionLayers::new(1 << rng.below(3), [u32::MAX, 0b011, 0b110][rng.below(3)])
}

/// A predicate that depends on the query's index and the entity.
fn keep(index: usize, entity: Entity) -> bool {
    !(index + entity.id() as usize).is_multiple_of(3)
}

/// Brute force: the bodies whose layers interact with `layers` and whose
/// box passes `hit`, by entity id.
fn expected_shape(
    bodies: &[Body],
    layers: CollisionLayers,
    hit: impl Fn(&Aabb) -> bool,
) -> Vec<Entity> {
    let mut out: Vec<Entity> = bodies
        .iter()
        .filter(|b| layers.interacts_with(&b.layers) && hit(&b.aabb))
        .map(|b| b.entity)
        .collect();
    out.sort_unstable_by_key(|e| e.id());
    out
}

/// Brute force: every hit of `ray` among the bodies whose layers interact
/// with `layers`, by `t` then entity id.
fn expected_ray(bodies: &[Body], ray: &Ray, layers: CollisionLayers) -> Vec<(Entity, f32)> {
    let mut hits: Vec<(Entity, f32)> = bodies
        .iter()
        .filter(|b| layers.interacts_with(&b.layers))
        .filter_map(|b| ray.entry(&b.aabb).map(|t| (b.entity, t)))
        .collect();
    hits.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.id().cmp(&b.0.id())));
    hits
}

fn same_as_single<T: PartialEq + std::fmt::Debug>(
    what: &str,
    batch: &BatchAnswers<T>,
    single: &[Vec<T>],
) {
    assert_eq!(batch.len(), single.len(), "{what}");
    for (i, expected) in single.iter().enumerate() {
        assert_eq!(batch.hits(i), expected.as_slice(), "{what} {i}");
    }
    assert_eq!(batch.offsets().last().copied().unwrap_or(0), batch.items().len(), "{what}");
}

/// Every batch on `plugin` against its single queries, which are checked
/// against brute force.
fn check_batches(
    plugin: &mut BroadPhasePlugin,
    bodies: &[Body],
    scene: Scene,
    rng: &mut SplitMix64,
    count: usize,
) {
    let layers = if rng.below(3) == 0 { CollisionLayers::ALL } else { random_layers(rng) };
    let mut rays = Vec::new();
    let mut boxes = Vec::new();
    let mut points = Vec::new();
    let mut spheres = Vec::new();
    let mut capsules = Vec::new();
    for _ in 0..count {
        let origin = scene_point(scene, rng);
        let dir = match rng.below(3) {
            0 => [Vec3::X, Vec3::NEG_Y, Vec3::Z][rng.below(3)],
            _ => Vec3::new(
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
            ),
        };
        let max_t = if rng.below(2) == 0 { f32::INFINITY } else { rng.range_f32(0.0, 15.0) };
        rays.push(Ray::new(origin, dir, max_t));
        let size = Vec3::new(rng.range_f32(0.0, 5.0), rng.range_f32(0.0, 5.0), 0.0);
        boxes.push(Aabb::new(origin, origin + size));
        points.push(origin);
        spheres.push(Sphere::new(origin, rng.range_f32(0.0, 5.0)));
        capsules.push(Capsule::new(origin, origin + dir * 6.0, rng.range_f32(0.0, 2.0)));
    }

    let mut firsts = Vec::new();
    let mut firsts_kept = Vec::new();
    let mut all_hits = Vec::new();
    let (mut found_boxes, mut found_points, mut found_spheres, mut found_capsules) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut out = Vec::new();
    for i in 0..count {
        let expected = expected_ray(bodies, &rays[i], layers);
        firsts.push(plugin.cast_ray(&rays[i], layers).unwrap());
        assert_eq!(firsts[i], expected.first().copied(), "{:?}", rays[i]);
        firsts_kept.push(plugin.cast_ray_where(&rays[i], layers, |e| keep(i, e)).unwrap());
        assert_eq!(firsts_kept[i], expected.iter().copied().find(|&(e, _)| keep(i, e)));
        let mut hits = Vec::new();
        plugin.ray_hits(&rays[i], layers, &mut hits).unwrap();
        assert_eq!(hits, expected, "{:?}", rays[i]);
        all_hits.push(hits);

        plugin.query_aabb(&boxes[i], layers, &mut out).unwrap();
        assert_eq!(out, expected_shape(bodies, layers, |b| b.overlaps(&boxes[i])));
        found_boxes.push(out.clone());
        plugin.query_point(points[i], layers, &mut out).unwrap();
        let point = Aabb::new(points[i], points[i]);
        assert_eq!(out, expected_shape(bodies, layers, |b| b.overlaps(&point)));
        found_points.push(out.clone());
        plugin.query_sphere(&spheres[i], layers, &mut out).unwrap();
        assert_eq!(out, expected_shape(bodies, layers, |b| spheres[i].overlaps(b)));
        found_spheres.push(out.clone());
        plugin.query_with(&capsules[i], layers, |e| keep(i, e), &mut out).unwrap();
        let mut expected = expected_shape(bodies, layers, |b| capsules[i].overlaps(b));
        expected.retain(|&e| keep(i, e));
        assert_eq!(out, expected, "{:?}", capsules[i]);
        found_capsules.push(out.clone());
    }

    let mut hits = vec![None; 2];
    plugin.cast_rays(&rays, layers, &mut hits).unwrap();
    assert_eq!(hits, firsts);
    plugin.cast_rays_where(&rays, layers, keep, &mut hits).unwrap();
    assert_eq!(hits, firsts_kept);
    let mut ray_batch = BatchAnswers::default();
    plugin.rays_hits(&rays, layers, &mut ray_batch).unwrap();
    same_as_single("rays_hits", &ray_batch, &all_hits);
    let mut batch = BatchAnswers::default();
    plugin.query_aabbs(&boxes, layers, &mut batch).unwrap();
    same_as_single("query_aabbs", &batch, &found_boxes);
    plugin.query_points(&points, layers, &mut batch).unwrap();
    same_as_single("query_points", &batch, &found_points);
    plugin.query_spheres(&spheres, layers, &mut batch).unwrap();
    same_as_single("query_spheres", &batch, &found_spheres);
    plugin.query_regions(&capsules, layers, keep, &mut batch).unwrap();
    same_as_single("query_regions", &batch, &found_capsules);
}

/// Spawns `count` entities of `scene`, runs plugins of 1 and 2 threads
/// over three frames of motion and churn, and checks every batch on both
/// each frame.
fn run_case(scene: Scene, seed: u64, count: usize, queries: usize) {
    let mut rng = SplitMix64::new(seed);
    let mut world = World::new();
    let mut live: Vec<Entity> = (0..count)
        .map(|i| {
            let b = scene_box(scene, &mut rng, i);
            let layers = random_layers(&mut rng);
            if i.is_multiple_of(4) {
                world.spawn((b, layers, Static))
            } else {
                world.spawn((b, layers))
            }
        })
        .collect();
    let mut plugins: Vec<BroadPhasePlugin> = [1, 2]
        .map(|threads| {
            BroadPhasePlugin::with_config(PluginConfig { threads, ..Default::default() })
        })
        .into();
    for _frame in 0..3 {
        for plugin in &mut plugins {
            plugin.run(&mut world).unwrap();
        }
        let bodies = bodies(&world);
        let query_seed = rng.next_u64();
        for plugin in &mut plugins {
            check_batches(plugin, &bodies, scene, &mut SplitMix64::new(query_seed), queries);
        }
        for &e in &live {
            if !world.satisfies::<&Static>(e) && rng.below(2) == 0 {
                let step = Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), 0.0);
                let mut b = world.get::<&mut Aabb>(e).unwrap();
                *b = Aabb::new(b.min + step, b.max + step);
            }
        }
        for _ in 0..count / 8 {
            let k = rng.below(live.len());
            world.despawn(live[k]).unwrap();
            let b = scene_box(scene, &mut rng, k);
            live[k] = world.spawn((b, random_layers(&mut rng)));
        }
    }
}

fn scene() -> impl Strategy<Value = Scene> {
    prop_oneof![Just(Scene::Random), Just(Scene::Pile), Just(Scene::Lattice)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Batches of more than 256 queries are cut into pieces
    /// on 2 threads; both plugins answer as their single queries do.
    #[test]
    fn plugin_batches_equal_single_queries_and_brute_force(
        scene in scene(),
        seed in any::<u64>(),
        count in 1usize..300,
        queries in prop_oneof![0usize..30, 257usize..600],
    ) {
        run_case(scene, seed, count, queries);
    }
}

#[test]
fn a_bad_query_refuses_the_plugins_batch_and_names_its_index() {
    let mut world = World::new();
    let wall = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
    let mut plugin =
        BroadPhasePlugin::with_config(PluginConfig { threads: 2, ..Default::default() });
    plugin.run(&mut world).unwrap();
    let all = CollisionLayers::ALL;

    let mut rays = vec![Ray::new(Vec3::new(-1.0, 0.5, 0.5), Vec3::X, 5.0); 600];
    rays[450].origin.x = f32::NAN;
    let mut hits = vec![Some((wall, 0.0)); 3];
    let err = plugin.cast_rays(&rays, all, &mut hits).unwrap_err();
    assert!(
        matches!(
            err,
            PluginError::Batch(BatchError::Query {
                index: 450,
                error: QueryError::NotFinite { part: QueryPart::Origin, .. }
            })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("query 450:"), "{err}");
    assert!(hits.is_empty(), "a refused batch answers nothing");
    let err = plugin.cast_rays_where(&rays, all, |_, _| true, &mut hits).unwrap_err();
    assert!(matches!(err, PluginError::Batch(BatchError::Query { index: 450, .. })), "{err:?}");

    let mut ray_batch = BatchAnswers::default();
    plugin.rays_hits(&rays[..3], all, &mut ray_batch).unwrap();
    assert_eq!(ray_batch.hits(2), [(wall, 1.0)]);
    let err = plugin.rays_hits(&rays, all, &mut ray_batch).unwrap_err();
    assert!(matches!(err, PluginError::Batch(BatchError::Query { index: 450, .. })), "{err:?}");
    assert!(ray_batch.is_empty());

    let mut found = BatchAnswers::default();
    let mut boxes = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 300];
    boxes[299].max.y = -1.0;
    let err = plugin.query_aabbs(&boxes, all, &mut found).unwrap_err();
    assert!(matches!(err, PluginError::Batch(BatchError::Input { index: 299, .. })), "{err:?}");
    assert!(err.to_string().contains("query box 299:"), "{err}");
    let mut points = vec![Vec3::splat(0.5); 3];
    points[1].y = f32::INFINITY;
    plugin.query_points(&points[..1], all, &mut found).unwrap();
    assert_eq!(found.hits(0), [wall]);
    let err = plugin.query_points(&points, all, &mut found).unwrap_err();
    assert!(
        matches!(
            err,
            PluginError::Batch(BatchError::Query {
                index: 1,
                error: QueryError::NotFinite { part: QueryPart::Point, .. }
            })
        ),
        "{err:?}"
    );
    assert!(found.is_empty());
    let spheres = [Sphere::new(Vec3::ZERO, 1.0), Sphere::new(Vec3::ZERO, f32::NAN)];
    let err = plugin.query_spheres(&spheres, all, &mut found).unwrap_err();
    assert!(
        matches!(
            err,
            PluginError::Batch(BatchError::Query {
                index: 1,
                error: QueryError::BadLength { part: QueryPart::Radius, .. }
            })
        ),
        "{err:?}"
    );
    let capsules = [Capsule::new(Vec3::ZERO, Vec3::new(0.0, f32::INFINITY, 0.0), 1.0)];
    let err = plugin.query_regions(&capsules, all, |_, _| true, &mut found).unwrap_err();
    assert!(
        matches!(
            err,
            PluginError::Batch(BatchError::Query {
                index: 0,
                error: QueryError::NotFinite { part: QueryPart::End, .. }
            })
        ),
        "{err:?}"
    );
    assert!(found.is_empty());
}
