//! Queries through the ECS plugin against brute force over the world's
//! bodies: rays (first hit, with a predicate; all hits), boxes, points,
//! spheres, capsules and frustums (with a predicate), filtered by collision layers, over frames of motion, spawns
//! and despawns, static and dynamic entities.

use crate::ecs_support;

use broadphase::ecs::hecs::{Entity, World};
use broadphase::ecs::{Aabb, BroadPhasePlugin, CollisionLayers, PluginConfig, PluginError, Static};
use broadphase::glam::{Mat4, Vec3};
use broadphase::query::{Capsule, Frustum, QueryError, Ray, Sphere};
use broadphase_scenes::SplitMix64;
use ecs_support::{Body, bodies};

fn random_box(rng: &mut SplitMix64) -> Aabb {
    let min =
        Vec3::new(rng.range_f32(0.0, 40.0), rng.range_f32(0.0, 40.0), rng.range_f32(0.0, 40.0));
    Aabb::new(
        min,
        min + Vec3::new(rng.range_f32(0.0, 4.0), rng.range_f32(0.0, 4.0), rng.range_f32(0.0, 4.0)),
    )
}

fn random_layers(rng: &mut SplitMix64) -> CollisionLayers {
    CollisionLayers::new(1 << rng.below(3), [u32::MAX, 0b011, 0b110][rng.below(3)])
}

fn expected_ray(bodies: &[Body], ray: &Ray, layers: CollisionLayers) -> Vec<(Entity, f32)> {
    let mut hits: Vec<(Entity, f32)> = bodies
        .iter()
        .filter(|b| layers.interacts_with(&b.layers))
        .filter_map(|b| ray.entry(&b.aabb).map(|t| (b.entity, t)))
        .collect();
    hits.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.id().cmp(&b.0.id())));
    hits
}

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

#[test]
fn plugin_queries_match_brute_force() {
    let mut rng = SplitMix64::new(31);
    let mut world = World::new();
    let mut live = Vec::new();
    for i in 0..800 {
        let b = random_box(&mut rng);
        let layers = random_layers(&mut rng);
        live.push(if i % 5 == 0 {
            world.spawn((b, layers, Static))
        } else {
            world.spawn((b, layers))
        });
    }
    let config = PluginConfig { threads: 2, ..PluginConfig::default() };
    let mut plugin = BroadPhasePlugin::with_config(config);
    let (mut hits, mut found) = (Vec::new(), Vec::new());
    for frame in 0..12 {
        for &e in &live {
            if !world.satisfies::<&Static>(e) && rng.below(2) == 0 {
                let step = Vec3::splat(rng.range_f32(-0.5, 0.5));
                let mut b = world.get::<&mut Aabb>(e).unwrap();
                *b = Aabb::new(b.min + step, b.max + step);
            }
        }
        for _ in 0..10 {
            let k = rng.below(live.len());
            world.despawn(live[k]).unwrap();
            live[k] = world.spawn((random_box(&mut rng), random_layers(&mut rng)));
        }
        plugin.run(&mut world).unwrap();
        let bodies = bodies(&world);
        for _ in 0..30 {
            let origin = Vec3::new(
                rng.range_f32(-5.0, 40.0),
                rng.range_f32(0.0, 40.0),
                rng.range_f32(0.0, 40.0),
            );
            let dir = Vec3::new(
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
            );
            let ray = Ray::new(origin, dir, if rng.below(2) == 0 { f32::INFINITY } else { 15.0 });
            let layers =
                if rng.below(3) == 0 { CollisionLayers::ALL } else { random_layers(&mut rng) };
            let expected = expected_ray(&bodies, &ray, layers);
            assert_eq!(
                plugin.cast_ray(&ray, layers).unwrap(),
                expected.first().copied(),
                "frame {frame}: {ray:?}"
            );
            plugin.ray_hits(&ray, layers, &mut hits).unwrap();
            assert_eq!(hits, expected, "frame {frame}: all hits of {ray:?}");
            if let Some(&(first, _)) = expected.first() {
                let rest = expected.iter().copied().find(|&(e, _)| e != first);
                assert_eq!(plugin.cast_ray_where(&ray, layers, |e| e != first).unwrap(), rest);
            }
            let query = random_box(&mut rng);
            plugin.query_aabb(&query, layers, &mut found).unwrap();
            assert_eq!(found, expected_shape(&bodies, layers, |b| b.overlaps(&query)), "{query:?}");
            plugin.query_point(origin, layers, &mut found).unwrap();
            let point = Aabb::new(origin, origin);
            assert_eq!(found, expected_shape(&bodies, layers, |b| b.overlaps(&point)));
            let sphere = Sphere::new(origin, rng.range_f32(0.0, 8.0));
            plugin.query_sphere(&sphere, layers, &mut found).unwrap();
            assert_eq!(
                found,
                expected_shape(&bodies, layers, |b| sphere.overlaps(b)),
                "{sphere:?}"
            );
            // Regions, with a predicate that leaves out every third entity.
            let keep = |e: Entity| !e.id().is_multiple_of(3);
            let capsule = Capsule::new(origin, origin + dir * 10.0, rng.range_f32(0.0, 3.0));
            plugin.query_with(&capsule, layers, keep, &mut found).unwrap();
            let mut expected = expected_shape(&bodies, layers, |b| capsule.overlaps(b));
            expected.retain(|&e| keep(e));
            assert_eq!(found, expected, "{capsule:?}");
            let camera = Mat4::perspective_rh(1.0, 1.5, 0.5, 30.0)
                * Mat4::look_at_rh(origin, origin + dir + Vec3::new(0.0, 0.0, 0.1), Vec3::Y);
            let frustum = Frustum::from_view_projection(camera).unwrap();
            plugin.query_with(&frustum, layers, |_| true, &mut found).unwrap();
            assert_eq!(found, expected_shape(&bodies, layers, |b| frustum.overlaps(b)));
        }
    }
}

#[test]
fn bad_queries_are_typed_errors() {
    let mut world = World::new();
    world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
    let mut plugin = BroadPhasePlugin::new();
    plugin.run(&mut world).unwrap();
    let ray = Ray::new(Vec3::new(f32::NAN, 0.0, 0.0), Vec3::X, 1.0);
    assert!(matches!(
        plugin.cast_ray(&ray, CollisionLayers::ALL),
        Err(PluginError::Query(QueryError::NotFinite { .. }))
    ));
    let mut found = vec![world.spawn(())];
    let inverted = Aabb { min: Vec3::ONE, max: Vec3::ZERO };
    assert!(matches!(
        plugin.query_aabb(&inverted, CollisionLayers::ALL, &mut found),
        Err(PluginError::Input(_))
    ));
    assert!(found.is_empty());
    let err = plugin
        .query_sphere(&Sphere::new(Vec3::ZERO, -1.0), CollisionLayers::ALL, &mut found)
        .unwrap_err();
    assert!(err.to_string().contains("query"), "{err}");
    found.push(world.spawn(()));
    let capsule = Capsule::new(Vec3::ZERO, Vec3::ONE, f32::INFINITY);
    assert!(matches!(
        plugin.query_with(&capsule, CollisionLayers::ALL, |_| true, &mut found),
        Err(PluginError::Query(QueryError::BadLength { .. }))
    ));
    assert!(found.is_empty());
}
