//! Batches of queries on the persistent broad phase against the single
//! queries and brute force: every batch kind (first-hit and all-hits rays,
//! boxes, points, spheres, regions, each with and without the caller's
//! filter) on 1 and 2 threads gives, in input order, exactly what asking
//! one query at a time gives (and 4 and 8 threads what 1 gives), over random and adversarial worlds (a pile
//! of identical boxes, a lattice of boxes touching face to face with
//! queries on the faces, huge boxes over tiny and flat ones, far
//! outliers), with stale index entries and calls pending since the last
//! update. A bad query anywhere in a batch refuses it and names its index.

use std::sync::OnceLock;

use broadphase_jobs::JobSystem;
use broadphase_kernel::Aabb;
use broadphase_partition::BatchError;
use broadphase_persistent::{
    BatchAnswers, PersistentBroadPhase, PersistentConfig, Proxy, ProxyKind, QueryView,
};
use broadphase_scenes::SplitMix64;
use broadphase_storage::{
    Capsule, InputError, QueryError, QueryPart, Ray, RegionTest, Sphere, validate_point,
};
use glam::Vec3;
use proptest::prelude::*;

/// One job system of each size, made once for every case.
fn job_systems() -> &'static [JobSystem; 2] {
    static JOBS: OnceLock<[JobSystem; 2]> = OnceLock::new();
    JOBS.get_or_init(|| [JobSystem::new(1), JobSystem::new(2)])
}

/// The worlds the batches are asked about.
#[derive(Clone, Copy, Debug)]
enum Scene {
    /// Boxes of random sizes anywhere in a cube.
    Random,
    /// Every box the same: every query finds all or none.
    Pile,
    /// Unit boxes on a lattice, touching face to face; queries start on
    /// lattice points, so they lie on faces, edges and corners.
    Lattice,
    /// A few boxes spanning the world over tiny, flat and point-sized
    /// ones, and a few far outliers.
    HugeAndTiny,
}

fn scene_box(scene: Scene, rng: &mut SplitMix64, i: usize) -> Aabb {
    let side = 30.0;
    let corner = |rng: &mut SplitMix64| {
        Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side))
    };
    match scene {
        Scene::Random => {
            let min = corner(rng);
            let size = Vec3::new(
                rng.range_f32(0.0, 5.0),
                rng.range_f32(0.0, 5.0),
                rng.range_f32(0.0, 5.0),
            );
            Aabb::new(min, min + size)
        }
        Scene::Pile => Aabb::new(Vec3::splat(10.0), Vec3::splat(12.0)),
        Scene::Lattice => {
            let at = Vec3::new((i % 8) as f32, ((i / 8) % 8) as f32, (i / 64) as f32);
            Aabb::new(at, at + Vec3::ONE)
        }
        Scene::HugeAndTiny => match i % 23 {
            0 => Aabb::new(Vec3::splat(-1.0), Vec3::splat(side + 1.0)),
            1 => {
                let far = corner(rng) * 1.0e5;
                Aabb::new(far, far + Vec3::splat(1.0e3))
            }
            k => {
                let min = corner(rng);
                let size = match k % 3 {
                    0 => Vec3::ZERO,
                    1 => Vec3::new(rng.range_f32(0.0, 4.0), 0.0, rng.range_f32(0.0, 4.0)),
                    _ => Vec3::splat(rng.range_f32(0.0, 0.01)),
                };
                Aabb::new(min, min + size)
            }
        },
    }
}

/// A point queries start from: on the lattice for the lattice scene, in
/// or near the world otherwise.
fn scene_point(scene: Scene, rng: &mut SplitMix64) -> Vec3 {
    match scene {
        Scene::Lattice => {
            Vec3::new(rng.below(10) as f32, rng.below(10) as f32, rng.below(10) as f32)
        }
        _ => Vec3::new(
            rng.range_f32(-5.0, 35.0),
            rng.range_f32(-5.0, 35.0),
            rng.range_f32(-5.0, 35.0),
        ),
    }
}

/// A direction, often along an axis or in a plane (the walk's edge cases).
fn direction(rng: &mut SplitMix64) -> Vec3 {
    match rng.below(4) {
        0 => [Vec3::X, Vec3::NEG_Y, Vec3::Z, Vec3::NEG_X][rng.below(4)],
        1 => Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), 0.0),
        _ => {
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0))
        }
    }
}

/// The queries of one batch of each kind.
struct Queries {
    rays: Vec<Ray>,
    boxes: Vec<Aabb>,
    points: Vec<Vec3>,
    spheres: Vec<Sphere>,
    capsules: Vec<Capsule>,
}

fn queries(scene: Scene, rng: &mut SplitMix64, count: usize) -> Queries {
    let mut q = Queries {
        rays: Vec::new(),
        boxes: Vec::new(),
        points: Vec::new(),
        spheres: Vec::new(),
        capsules: Vec::new(),
    };
    for _ in 0..count {
        let origin = scene_point(scene, rng);
        let dir = direction(rng);
        let max_t = match rng.below(3) {
            0 => f32::INFINITY,
            1 => 0.0,
            _ => rng.range_f32(0.0, 20.0),
        };
        q.rays.push(Ray::new(origin, dir, max_t));
        let size = match scene {
            Scene::Lattice => Vec3::new(rng.below(3) as f32, rng.below(3) as f32, 0.0),
            _ => {
                Vec3::new(rng.range_f32(0.0, 6.0), rng.range_f32(0.0, 6.0), rng.range_f32(0.0, 6.0))
            }
        };
        q.boxes.push(Aabb::new(origin, origin + size));
        q.points.push(origin);
        let radius = if rng.below(4) == 0 { 0.0 } else { rng.range_f32(0.0, 6.0) };
        q.spheres.push(Sphere::new(origin, radius));
        q.capsules.push(Capsule::new(origin, origin + dir * 8.0, rng.range_f32(0.0, 2.0)));
    }
    q
}

/// Brute force over the live proxies: those whose box passes `hit`, by
/// handle.
fn brute_force(live: &[(Proxy, Aabb)], hit: impl Fn(&Aabb) -> bool) -> Vec<Proxy> {
    let mut out: Vec<Proxy> = live.iter().filter(|(_, b)| hit(b)).map(|&(p, _)| p).collect();
    out.sort_unstable();
    out
}

/// Brute force over the live proxies: every hit of `ray`, by `t` then
/// handle.
fn brute_force_ray(live: &[(Proxy, Aabb)], ray: &Ray) -> Vec<(Proxy, f32)> {
    let mut hits: Vec<(Proxy, f32)> =
        live.iter().filter_map(|&(p, b)| ray.entry(&b).map(|t| (p, t))).collect();
    hits.sort_unstable_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    hits
}

/// A filter that depends on the query's index and the proxy.
fn keep(index: usize, proxy: Proxy) -> bool {
    !(index + proxy.index() as usize).is_multiple_of(3)
}

/// A map that filters as [`keep`] and translates to the proxy's index.
fn map(index: usize, proxy: Proxy) -> Option<u32> {
    keep(index, proxy).then_some(proxy.index())
}

/// Checks that the answer of query `i` in `batch` is `single(i)` for
/// every `i`, and that it holds no more.
fn same_as_single<T: PartialEq + std::fmt::Debug>(
    what: &str,
    batch: &BatchAnswers<T>,
    count: usize,
    single: impl Fn(usize) -> Vec<T>,
) {
    assert_eq!(batch.len(), count, "{what}");
    assert_eq!(batch.offsets().len(), count + 1, "{what}");
    for i in 0..count {
        assert_eq!(batch.hits(i), single(i).as_slice(), "{what} {i}");
    }
    assert_eq!(batch.offsets()[count], batch.items().len(), "{what}");
}

/// Every batch kind on 1 and 2 threads against the single queries, and
/// the single queries against brute force.
fn check_batches(view: &QueryView<'_>, live: &[(Proxy, Aabb)], q: &Queries) {
    let n = q.rays.len();
    let single = |f: &dyn Fn(&mut Vec<Proxy>)| {
        let mut out = Vec::new();
        f(&mut out);
        out
    };
    // The single answers, checked once against brute force.
    let firsts: Vec<_> = q.rays.iter().map(|r| view.cast_ray(r).unwrap()).collect();
    let firsts_kept: Vec<_> =
        (0..n).map(|i| view.cast_ray_where(&q.rays[i], |p| keep(i, p)).unwrap()).collect();
    let all_hits: Vec<Vec<(Proxy, f32)>> = q
        .rays
        .iter()
        .map(|r| {
            let mut out = Vec::new();
            view.ray_hits(r, &mut out).unwrap();
            out
        })
        .collect();
    let boxes: Vec<_> =
        q.boxes.iter().map(|b| single(&|out| view.query_aabb(b, out).unwrap())).collect();
    let points: Vec<_> =
        q.points.iter().map(|&p| single(&|out| view.query_point(p, out).unwrap())).collect();
    let spheres: Vec<_> =
        q.spheres.iter().map(|s| single(&|out| view.query_sphere(s, out).unwrap())).collect();
    let capsules: Vec<_> =
        q.capsules.iter().map(|c| single(&|out| view.query_with(c, out).unwrap())).collect();
    for i in 0..n {
        let expected = brute_force_ray(live, &q.rays[i]);
        assert_eq!(all_hits[i], expected, "{:?}", q.rays[i]);
        assert_eq!(firsts[i], expected.first().copied(), "{:?}", q.rays[i]);
        let kept = expected.iter().copied().find(|&(p, _)| keep(i, p));
        assert_eq!(firsts_kept[i], kept, "{:?}", q.rays[i]);
        assert_eq!(boxes[i], brute_force(live, |b| b.overlaps(&q.boxes[i])));
        let point = Aabb::new(q.points[i], q.points[i]);
        assert_eq!(points[i], brute_force(live, |b| b.overlaps(&point)));
        assert_eq!(spheres[i], brute_force(live, |b| q.spheres[i].overlaps(b)));
        assert_eq!(capsules[i], brute_force(live, |b| q.capsules[i].meets(b)));
    }

    for jobs in job_systems() {
        let t = jobs.threads();
        let mut hits = vec![None; 3];
        view.cast_rays(jobs, &q.rays, &mut hits).unwrap();
        assert_eq!(hits, firsts, "{t} threads");
        view.cast_rays_where(jobs, &q.rays, keep, &mut hits).unwrap();
        assert_eq!(hits, firsts_kept, "{t} threads");
        let mut mapped = Vec::new();
        view.cast_rays_map(jobs, &q.rays, map, &mut mapped).unwrap();
        let expected: Vec<_> = firsts_kept.iter().map(|h| h.map(|(p, t)| (p.index(), t))).collect();
        assert_eq!(mapped, expected, "{t} threads");

        let mut ray_batch = BatchAnswers::default();
        view.rays_hits(jobs, &q.rays, &mut ray_batch).unwrap();
        same_as_single("rays_hits", &ray_batch, n, |i| all_hits[i].clone());
        let mut ray_batch_mapped = BatchAnswers::default();
        view.rays_hits_map(jobs, &q.rays, map, &mut ray_batch_mapped).unwrap();
        same_as_single("rays_hits_map", &ray_batch_mapped, n, |i| {
            all_hits[i].iter().filter_map(|&(p, t)| Some((map(i, p)?, t))).collect()
        });

        let mut batch = BatchAnswers::default();
        let mut batch_mapped = BatchAnswers::default();
        let filtered = |answers: &[Vec<Proxy>], i: usize| -> Vec<u32> {
            answers[i].iter().filter_map(|&p| map(i, p)).collect()
        };
        view.query_aabbs(jobs, &q.boxes, &mut batch).unwrap();
        same_as_single("query_aabbs", &batch, n, |i| boxes[i].clone());
        view.query_aabbs_map(jobs, &q.boxes, map, &mut batch_mapped).unwrap();
        same_as_single("query_aabbs_map", &batch_mapped, n, |i| filtered(&boxes, i));
        view.query_points(jobs, &q.points, &mut batch).unwrap();
        same_as_single("query_points", &batch, n, |i| points[i].clone());
        view.query_points_map(jobs, &q.points, map, &mut batch_mapped).unwrap();
        same_as_single("query_points_map", &batch_mapped, n, |i| filtered(&points, i));
        view.query_spheres(jobs, &q.spheres, &mut batch).unwrap();
        same_as_single("query_spheres", &batch, n, |i| spheres[i].clone());
        view.query_spheres_map(jobs, &q.spheres, map, &mut batch_mapped).unwrap();
        same_as_single("query_spheres_map", &batch_mapped, n, |i| filtered(&spheres, i));
        view.query_regions(jobs, &q.capsules, &mut batch).unwrap();
        same_as_single("query_regions", &batch, n, |i| capsules[i].clone());
        view.query_regions_map(jobs, &q.capsules, map, &mut batch_mapped).unwrap();
        same_as_single("query_regions_map", &batch_mapped, n, |i| filtered(&capsules, i));
    }
}

/// Builds a world of `count` proxies of `scene`, updates it, moves and
/// churns some (on the update path `config` leads to), updates again,
/// then leaves `pending` calls unflushed, and checks every batch against
/// the single queries and brute force, before and after the calls.
fn run_case(scene: Scene, seed: u64, count: usize, queries_count: usize, config: PersistentConfig) {
    let jobs = &job_systems()[1];
    let mut rng = SplitMix64::new(seed);
    let mut world = PersistentBroadPhase::with_config(config);
    let mut live: Vec<(Proxy, Aabb)> = (0..count)
        .map(|i| {
            let b = scene_box(scene, &mut rng, i);
            let kind = if i.is_multiple_of(3) { ProxyKind::Static } else { ProxyKind::Dynamic };
            (world.insert(b, kind).unwrap(), b)
        })
        .collect();
    world.update(jobs).unwrap();
    let q = queries(scene, &mut rng, queries_count);
    check_batches(&world.queries(jobs).unwrap(), &live, &q);
    // Moves (stale index entries), removals and inserts (slots reused).
    for (i, entry) in live.iter_mut().enumerate() {
        if !i.is_multiple_of(3) && rng.below(3) == 0 {
            let step = Vec3::new(rng.range_f32(-2.0, 2.0), rng.range_f32(-2.0, 2.0), 0.0);
            entry.1 = Aabb::new(entry.1.min + step, entry.1.max + step);
            world.set_aabb(entry.0, entry.1).unwrap();
        }
    }
    for _ in 0..count / 10 {
        let k = rng.below(live.len());
        world.remove(live[k].0).unwrap();
        let b = scene_box(scene, &mut rng, k);
        live[k] = (world.insert(b, ProxyKind::Dynamic).unwrap(), b);
    }
    world.update(jobs).unwrap();
    check_batches(&world.queries(jobs).unwrap(), &live, &q);
    // Calls since the last update: answered as they stand.
    for entry in live.iter_mut().step_by(7) {
        entry.1 = scene_box(scene, &mut rng, 5);
        world.set_aabb(entry.0, entry.1).unwrap();
    }
    let k = rng.below(live.len());
    world.remove(live[k].0).unwrap();
    live.swap_remove(k);
    let b = scene_box(scene, &mut rng, 1);
    live.push((world.insert(b, ProxyKind::Static).unwrap(), b));
    check_batches(&world.queries(jobs).unwrap(), &live, &q);
}

fn scene() -> impl Strategy<Value = Scene> {
    prop_oneof![
        Just(Scene::Random),
        Just(Scene::Pile),
        Just(Scene::Lattice),
        Just(Scene::HugeAndTiny),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Batches of more than 256 queries are cut into pieces
    /// on 2 threads; both thread counts answer as the single queries do.
    #[test]
    fn batches_equal_single_queries_and_brute_force(
        scene in scene(),
        seed in any::<u64>(),
        count in 1usize..400,
        queries_count in prop_oneof![0usize..40, 250usize..700],
        margin in prop_oneof![Just(0.0f32), Just(0.5f32)],
        full_rebuild_fraction in prop_oneof![Just(0.0f32), Just(0.25f32), Just(f32::INFINITY)],
    ) {
        let config = PersistentConfig { margin, full_rebuild_fraction, ..Default::default() };
        run_case(scene, seed, count, queries_count, config);
    }
}

#[test]
fn an_empty_world_answers_every_query_with_nothing() {
    let jobs = &job_systems()[1];
    let mut world = PersistentBroadPhase::default();
    let view = world.queries(jobs).unwrap();
    let q = queries(Scene::Random, &mut SplitMix64::new(3), 600);
    check_batches(&view, &[], &q);
}

/// A region whose bounds break the box contract.
struct InvertedBounds;

impl RegionTest for InvertedBounds {
    fn bounds(&self) -> Aabb {
        Aabb::new(Vec3::ONE, Vec3::ZERO)
    }

    fn meets(&self, _: &Aabb) -> bool {
        true
    }
}

#[test]
fn a_bad_query_refuses_its_batch_and_names_its_index() {
    let jobs = &job_systems()[1];
    let mut world = PersistentBroadPhase::default();
    let mut rng = SplitMix64::new(9);
    for i in 0..200 {
        world.insert(scene_box(Scene::Random, &mut rng, i), ProxyKind::Dynamic).unwrap();
    }
    world.update(jobs).unwrap();
    let view = world.queries(jobs).unwrap();
    let mut q = queries(Scene::Random, &mut rng, 1_000);
    // The first bad query is named, past the first job's share; a later
    // one changes nothing.
    q.rays[700].dir.y = f32::NAN;
    q.rays[900].max_t = -1.0;
    q.boxes[600] = Aabb::new(Vec3::ONE, Vec3::new(2.0, 0.0, 2.0));
    q.boxes[800].min.x = f32::INFINITY;
    q.points[300].z = f32::NEG_INFINITY;
    q.spheres[999].radius = -2.0;
    q.capsules[0].radius = f32::NAN;

    let mut firsts = vec![None; 5];
    let err = view.cast_rays(jobs, &q.rays, &mut firsts).unwrap_err();
    assert!(
        matches!(
            err,
            BatchError::Query {
                index: 700,
                error: QueryError::NotFinite { part: QueryPart::Direction, .. }
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("query 700:"), "{err}");
    assert!(firsts.is_empty(), "a refused batch answers nothing");
    let err = view.cast_rays_where(jobs, &q.rays, keep, &mut firsts).unwrap_err();
    assert!(matches!(err, BatchError::Query { index: 700, .. }), "{err:?}");

    // Each CSR batch, after a good batch filled its output.
    let mut batch = BatchAnswers::default();
    let mut refused =
        |what: &str, run: &dyn Fn(&mut BatchAnswers<Proxy>) -> Result<(), BatchError>| {
            view.query_aabbs(jobs, &q.boxes[..10], &mut batch).unwrap();
            assert_eq!(batch.len(), 10);
            let err = run(&mut batch).unwrap_err();
            assert!(batch.is_empty() && batch.items().is_empty(), "{what}: {err:?}");
            assert!(batch.offsets().is_empty(), "{what}");
            err
        };
    let err = refused("boxes", &|out| view.query_aabbs(jobs, &q.boxes, out));
    assert!(
        matches!(
            err,
            BatchError::Input { index: 600, error: InputError::Inverted { index: 0, .. } }
        ),
        "{err:?}"
    );
    assert!(err.to_string().starts_with("query box 600:"), "{err}");
    let err = refused("points", &|out| view.query_points(jobs, &q.points, out));
    assert!(
        matches!(
            err,
            BatchError::Query {
                index: 300,
                error: QueryError::NotFinite { part: QueryPart::Point, .. }
            }
        ),
        "{err:?}"
    );
    assert_eq!(
        err,
        BatchError::Query { index: 300, error: validate_point(q.points[300]).unwrap_err() }
    );
    let err = refused("spheres", &|out| view.query_spheres(jobs, &q.spheres, out));
    assert!(
        matches!(
            err,
            BatchError::Query {
                index: 999,
                error: QueryError::BadLength { part: QueryPart::Radius, .. }
            }
        ),
        "{err:?}"
    );
    let err = refused("capsules", &|out| view.query_regions(jobs, &q.capsules, out));
    assert!(matches!(err, BatchError::Query { index: 0, .. }), "{err:?}");
    let regions = [InvertedBounds, InvertedBounds];
    let err = refused("bounds", &|out| view.query_regions(jobs, &regions, out));
    assert!(
        matches!(
            err,
            BatchError::Query { index: 0, error: QueryError::Input(InputError::Inverted { .. }) }
        ),
        "{err:?}"
    );
    let mut ray_batch = BatchAnswers::default();
    view.rays_hits(jobs, &q.rays[..5], &mut ray_batch).unwrap();
    let err = view.rays_hits(jobs, &q.rays, &mut ray_batch).unwrap_err();
    assert!(matches!(err, BatchError::Query { index: 700, .. }), "{err:?}");
    assert!(ray_batch.is_empty());
}

/// Every batch's output on 4 and 8 threads, as on 1: more pieces than
/// threads, and more threads than the machine has cores.
#[test]
fn batches_are_the_same_on_1_to_8_threads() {
    let one = &job_systems()[0];
    let mut rng = SplitMix64::new(17);
    let mut world = PersistentBroadPhase::default();
    for i in 0..3_000usize {
        let kind = if i.is_multiple_of(3) { ProxyKind::Static } else { ProxyKind::Dynamic };
        world.insert(scene_box(Scene::Random, &mut rng, i), kind).unwrap();
    }
    world.update(one).unwrap();
    let q = queries(Scene::Random, &mut rng, 3_000);
    let view = world.queries(one).unwrap();
    let answer = |jobs: &JobSystem| {
        let (mut firsts, mut all_hits, mut found) =
            (Vec::new(), BatchAnswers::default(), BatchAnswers::default());
        view.cast_rays_where(jobs, &q.rays, keep, &mut firsts).unwrap();
        view.rays_hits(jobs, &q.rays, &mut all_hits).unwrap();
        let mut shapes = Vec::new();
        view.query_aabbs(jobs, &q.boxes, &mut found).unwrap();
        shapes.push((found.offsets().to_vec(), found.items().to_vec()));
        view.query_points(jobs, &q.points, &mut found).unwrap();
        shapes.push((found.offsets().to_vec(), found.items().to_vec()));
        view.query_spheres(jobs, &q.spheres, &mut found).unwrap();
        shapes.push((found.offsets().to_vec(), found.items().to_vec()));
        view.query_regions(jobs, &q.capsules, &mut found).unwrap();
        shapes.push((found.offsets().to_vec(), found.items().to_vec()));
        (firsts, all_hits.offsets().to_vec(), all_hits.items().to_vec(), shapes)
    };
    let expected = answer(one);
    assert!(expected.2.len() > 500, "the rays hit boxes");
    for threads in [4, 8] {
        assert!(answer(&JobSystem::new(threads)) == expected, "{threads} threads");
    }
}
