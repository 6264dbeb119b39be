//! Regression: a batch of queries on the persistent broad phase, or
//! through the plugin, the same size as one before it allocates nothing,
//! and so do single queries (their scratch is kept in the broad phase),
//! on any thread: first-hit rays write into the caller's vector, the other
//! batches into `BatchAnswers`'s kept lists, and each job's scratch is
//! kept with its piece. The world has proxies set since its last update,
//! so the queries test loose proxies as well as the index. The counter
//! sees every thread, and the allocations binary runs its checks in turn.

use broadphase::ecs::hecs::World;
use broadphase::ecs::{BatchAnswers, BroadPhasePlugin, CollisionLayers, PluginConfig};
use broadphase::glam::Vec3;
use broadphase::jobs::JobSystem;
use broadphase::persistent::{PersistentBroadPhase, ProxyKind};
use broadphase::query::{Capsule, Ray, Sphere};
use broadphase_scenes::{SplitMix64, mixed100k};
use broadphase_testkit::allocations_on_every_thread_during;

struct Queries {
    rays: Vec<Ray>,
    points: Vec<Vec3>,
    boxes: Vec<broadphase::Aabb>,
    spheres: Vec<Sphere>,
    capsules: Vec<Capsule>,
}

fn queries() -> Queries {
    let mut rng = SplitMix64::new(2);
    let mut point = || {
        Vec3::new(
            rng.range_f32(0.0, 2000.0),
            rng.range_f32(0.0, 2000.0),
            rng.range_f32(0.0, 2000.0),
        )
    };
    let points: Vec<Vec3> = (0..2_000).map(|_| point()).collect();
    Queries {
        rays: points.iter().map(|&p| Ray::new(p, Vec3::new(1.0, 0.5, -0.25), 300.0)).collect(),
        boxes: points.iter().map(|&p| broadphase::Aabb::new(p, p + Vec3::splat(20.0))).collect(),
        spheres: points.iter().map(|&p| Sphere::new(p, 15.0)).collect(),
        capsules: points.iter().map(|&p| Capsule::new(p, p + Vec3::splat(30.0), 5.0)).collect(),
        points,
    }
}

pub(crate) fn warm_persistent_and_plugin_batches_allocate_nothing() {
    let boxes = &mixed100k().boxes[..30_000];
    let q = queries();
    for threads in [1, 2, 4] {
        let jobs = JobSystem::new(threads);
        let mut world = PersistentBroadPhase::default();
        let proxies: Vec<_> = boxes
            .iter()
            .enumerate()
            .map(|(i, &b)| {
                let kind = if i.is_multiple_of(4) { ProxyKind::Static } else { ProxyKind::Dynamic };
                world.insert(b, kind).unwrap()
            })
            .collect();
        world.update(&jobs).unwrap();
        // Set since the update: tested one by one, not through the index.
        for (&proxy, b) in proxies.iter().zip(boxes).step_by(50) {
            world.set_aabb(proxy, broadphase::Aabb::new(b.min + 3.0, b.max + 3.0)).unwrap();
        }
        let (mut firsts, mut mapped) = (Vec::new(), Vec::new());
        let (mut one_ray, mut one_query) = (Vec::new(), Vec::new());
        let (mut all_hits, mut found, mut found_mapped) =
            (BatchAnswers::default(), BatchAnswers::default(), BatchAnswers::default());
        let mut frame = |count: bool| {
            allocations_on_every_thread_during(count, || {
                let view = world.queries(&jobs).unwrap();
                let map = |i: usize, p: broadphase::persistent::Proxy| {
                    i.is_multiple_of(2).then_some(p.index())
                };
                view.cast_rays(&jobs, &q.rays, &mut firsts).unwrap();
                view.cast_rays_map(&jobs, &q.rays, map, &mut mapped).unwrap();
                view.rays_hits(&jobs, &q.rays, &mut all_hits).unwrap();
                view.query_aabbs(&jobs, &q.boxes, &mut found).unwrap();
                view.query_aabbs_map(&jobs, &q.boxes, map, &mut found_mapped).unwrap();
                view.query_points(&jobs, &q.points, &mut found).unwrap();
                view.query_spheres(&jobs, &q.spheres, &mut found).unwrap();
                view.query_regions(&jobs, &q.capsules, &mut found).unwrap();
                // Single queries too: their scratch is kept in the world.
                for k in 0..200 {
                    view.ray_hits(&q.rays[k], &mut one_ray).unwrap();
                    view.query_aabb(&q.boxes[k], &mut one_query).unwrap();
                    view.query_point(q.points[k], &mut one_query).unwrap();
                    view.query_sphere(&q.spheres[k], &mut one_query).unwrap();
                    view.query_with(&q.capsules[k], &mut one_query).unwrap();
                }
            })
            .1
        };
        // The warm-up's first-hit casts walk the index's cells until they
        // have paid for the rays' trees, which are then built (their
        // buffers allocated once): a few frames.
        for _ in 0..8 {
            frame(false);
        }
        let counted: Vec<usize> = (0..5).map(|_| frame(true)).collect();
        assert!(counted.iter().all(|&a| a == 0), "persistent, {threads} threads: {counted:?}");
        assert!(all_hits.items().len() > 1_000, "the rays hit boxes");
    }

    let mut world = World::new();
    for (i, &b) in boxes.iter().enumerate() {
        world.spawn((b, CollisionLayers::new(1 << (i % 3), 0b011)));
    }
    for threads in [1, 2] {
        let mut plugin =
            BroadPhasePlugin::with_config(PluginConfig { threads, ..Default::default() });
        plugin.run(&mut world).unwrap();
        let layers = CollisionLayers::new(1, u32::MAX);
        let mut firsts = Vec::new();
        let (mut one_ray, mut one_query) = (Vec::new(), Vec::new());
        let (mut all_hits, mut found) = (BatchAnswers::default(), BatchAnswers::default());
        let mut frame = |count: bool| {
            allocations_on_every_thread_during(count, || {
                plugin
                    .cast_rays_where(&q.rays, layers, |i, _| !i.is_multiple_of(3), &mut firsts)
                    .unwrap();
                plugin.rays_hits(&q.rays, layers, &mut all_hits).unwrap();
                plugin.query_aabbs(&q.boxes, layers, &mut found).unwrap();
                plugin.query_points(&q.points, layers, &mut found).unwrap();
                plugin.query_spheres(&q.spheres, layers, &mut found).unwrap();
                plugin.query_regions(&q.capsules, layers, |_, _| true, &mut found).unwrap();
                for k in 0..200 {
                    plugin.ray_hits(&q.rays[k], layers, &mut one_ray).unwrap();
                    plugin.query_aabb(&q.boxes[k], layers, &mut one_query).unwrap();
                    plugin.query_sphere(&q.spheres[k], layers, &mut one_query).unwrap();
                }
            })
            .1
        };
        // The warm-up's first-hit casts walk the index's cells until they
        // have paid for the rays' trees, which are then built (their
        // buffers allocated once): a few frames.
        for _ in 0..8 {
            frame(false);
        }
        let counted: Vec<usize> = (0..5).map(|_| frame(true)).collect();
        assert!(counted.iter().all(|&a| a == 0), "plugin, {threads} threads: {counted:?}");
    }
}
