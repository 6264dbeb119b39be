//! Ray, box, point, sphere, capsule and frustum queries on the persistent broad phase
//! against brute force over the live proxies' boxes, frame after frame of
//! drift, teleports, churn (slots reused), kind flips, on both update
//! paths, with and without calls pending since the last update, and with
//! a filter.

use broadphase_jobs::JobSystem;
use broadphase_kernel::Aabb;
use broadphase_persistent::{PersistentBroadPhase, PersistentConfig, Proxy, ProxyKind};
use broadphase_scenes::SplitMix64;
use broadphase_storage::{Capsule, Frustum, QueryError, QueryPart, Ray, Sphere};
use glam::{Mat4, Vec3};

fn random_box(rng: &mut SplitMix64, side: f32) -> Aabb {
    let min =
        Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side));
    let size = Vec3::new(rng.range_f32(0.0, 4.0), rng.range_f32(0.0, 4.0), rng.range_f32(0.0, 4.0));
    Aabb::new(min, min + size)
}

/// Brute force over `live`: every proxy `ray` hits, sorted by t then handle.
fn ray_hits(live: &[(Proxy, Aabb)], ray: &Ray) -> Vec<(Proxy, f32)> {
    let mut hits: Vec<(Proxy, f32)> =
        live.iter().filter_map(|&(p, b)| ray.entry(&b).map(|t| (p, t))).collect();
    hits.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    hits
}

fn matching(live: &[(Proxy, Aabb)], hit: impl Fn(&Aabb) -> bool) -> Vec<Proxy> {
    let mut out: Vec<Proxy> = live.iter().filter(|(_, b)| hit(b)).map(|&(p, _)| p).collect();
    out.sort_unstable();
    out
}

fn check(
    world: &mut PersistentBroadPhase,
    jobs: &JobSystem,
    live: &[(Proxy, Aabb)],
    rng: &mut SplitMix64,
    side: f32,
) {
    let view = world.queries(jobs).unwrap();
    let (mut hits, mut found) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        let origin = Vec3::new(
            rng.range_f32(-5.0, side),
            rng.range_f32(0.0, side),
            rng.range_f32(0.0, side),
        );
        let mut dir =
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0));
        if rng.below(4) == 0 {
            dir.z = 0.0;
        }
        let max_t = if rng.below(2) == 0 { f32::INFINITY } else { rng.range_f32(0.0, 20.0) };
        let ray = Ray::new(origin, dir, max_t);
        let expected = ray_hits(live, &ray);
        assert_eq!(view.cast_ray(&ray).unwrap(), expected.first().copied(), "{ray:?}");
        view.ray_hits(&ray, &mut hits).unwrap();
        assert_eq!(hits, expected, "all hits of {ray:?}");
        // Leave out the first proxy hit: the next one wins.
        if let Some(&(skipped, _)) = expected.first() {
            let rest = expected.iter().copied().find(|&(p, _)| p != skipped);
            assert_eq!(view.cast_ray_where(&ray, |p| p != skipped).unwrap(), rest, "{ray:?}");
        }
        let query = random_box(rng, side);
        view.query_aabb(&query, &mut found).unwrap();
        assert_eq!(found, matching(live, |b| b.overlaps(&query)), "{query:?}");
        view.query_point(origin, &mut found).unwrap();
        assert_eq!(found, matching(live, |b| b.overlaps(&Aabb::new(origin, origin))), "{origin:?}");
        let sphere = Sphere::new(origin, rng.range_f32(0.0, 6.0));
        view.query_sphere(&sphere, &mut found).unwrap();
        assert_eq!(found, matching(live, |b| sphere.overlaps(b)), "{sphere:?}");
        // Regions: through the index's enlarged boxes, exact on each own.
        let capsule = Capsule::new(origin, origin + dir * 15.0, rng.range_f32(0.0, 3.0));
        view.query_with(&capsule, &mut found).unwrap();
        assert_eq!(found, matching(live, |b| capsule.overlaps(b)), "{capsule:?}");
        let camera = Mat4::perspective_rh(1.0, 1.5, 0.5, rng.range_f32(5.0, 60.0))
            * Mat4::look_at_rh(origin, origin + dir + Vec3::new(0.0, 0.0, 0.1), Vec3::Y);
        let frustum = Frustum::from_view_projection(camera).unwrap();
        view.query_with(&frustum, &mut found).unwrap();
        assert_eq!(found, matching(live, |b| frustum.overlaps(b)), "{frustum:?}");
    }
}

#[test]
fn queries_match_brute_force_over_changing_worlds() {
    let side = 40.0;
    for (seed, margin, fraction, threads) in
        [(1, 0.5, 0.25, 1), (2, 0.0, 0.25, 2), (3, 0.5, 0.0, 2), (4, 0.25, f32::INFINITY, 3)]
    {
        let jobs = JobSystem::new(threads);
        let config =
            PersistentConfig { margin, full_rebuild_fraction: fraction, ..Default::default() };
        let mut world = PersistentBroadPhase::with_config(config);
        let mut rng = SplitMix64::new(seed);
        let mut live: Vec<(Proxy, Aabb, ProxyKind)> = (0..600)
            .map(|i| {
                let b = random_box(&mut rng, side);
                let kind = if i % 4 == 0 { ProxyKind::Static } else { ProxyKind::Dynamic };
                (world.insert(b, kind).unwrap(), b, kind)
            })
            .collect();
        for frame in 0..30 {
            for entry in &mut live {
                let roll = rng.below(100);
                if entry.2 == ProxyKind::Dynamic && roll < 60 {
                    let step = Vec3::splat(rng.range_f32(-0.3, 0.3));
                    entry.1 = Aabb::new(entry.1.min + step, entry.1.max + step);
                    world.set_aabb(entry.0, entry.1).unwrap();
                } else if entry.2 == ProxyKind::Dynamic && roll < 63 {
                    entry.1 = random_box(&mut rng, side);
                    world.set_aabb(entry.0, entry.1).unwrap();
                } else if roll < 64 {
                    entry.2 = if entry.2 == ProxyKind::Static {
                        ProxyKind::Dynamic
                    } else {
                        ProxyKind::Static
                    };
                    world.set_kind(entry.0, entry.2).unwrap();
                }
            }
            for _ in 0..5 {
                let k = rng.below(live.len());
                world.remove(live[k].0).unwrap();
                let b = random_box(&mut rng, side);
                // Half the time the slot is taken again at once.
                let proxy = if rng.below(2) == 0 {
                    world.insert_at(live[k].0.index(), b, ProxyKind::Dynamic).unwrap()
                } else {
                    world.insert(b, ProxyKind::Dynamic).unwrap()
                };
                live[k] = (proxy, b, ProxyKind::Dynamic);
            }
            let boxes: Vec<(Proxy, Aabb)> = live.iter().map(|&(p, b, _)| (p, b)).collect();
            if frame % 3 == 1 {
                // Calls pending since the last update: answered as they stand.
                check(&mut world, &jobs, &boxes, &mut rng, side);
            }
            world.update(&jobs).unwrap();
            check(&mut world, &jobs, &boxes, &mut rng, side);
        }
    }
}

/// A region refused by its own check or by its bounds leaves nothing.
#[test]
fn bad_regions_are_typed_errors() {
    let jobs = JobSystem::new(1);
    let mut world = PersistentBroadPhase::default();
    let wall = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Static).unwrap();
    world.update(&jobs).unwrap();
    let view = world.queries(&jobs).unwrap();
    let mut found = vec![wall];
    let capsule = Capsule::new(Vec3::ZERO, Vec3::new(f32::NAN, 0.0, 0.0), 1.0);
    assert!(matches!(
        view.query_with(&capsule, &mut found),
        Err(QueryError::NotFinite { part: QueryPart::End, .. })
    ));
    assert!(found.is_empty());
    found.push(wall);
    let beyond = Aabb::new(Vec3::ZERO, Vec3::new(f32::INFINITY, 1.0, 1.0));
    assert!(matches!(view.query_with(&beyond, &mut found), Err(QueryError::Input(_))));
    assert!(found.is_empty());
    // The capsule's end is sqrt(3) = 1.732 from the box's corner.
    let reach = |radius| Capsule::new(Vec3::splat(2.0), Vec3::splat(3.0), radius);
    view.query_with(&reach(1.75), &mut found).unwrap();
    assert_eq!(found, [wall]);
    view.query_with(&reach(1.7), &mut found).unwrap();
    assert!(found.is_empty());
}
