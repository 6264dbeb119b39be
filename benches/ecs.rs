//! ECS plugin benchmarks: what the `hecs` system costs on top of the raw
//! broad-phase call, and what a large static set costs per frame.
//!
//! Groups (criterion ids are `group/function`):
//!
//! - `ecs_overhead`: mixed100k (100,000 boxes, 22,239 pairs) as 100,000
//!   dynamic entities with an `Aabb` component each.
//!   - `raw_partition`: [`GridTree::find_pairs`] on the boxes as a slice, on a
//!     [`JobSystem`] with one thread per core: the raw partition call, the
//!     one the plugin makes;
//!   - `raw_kernel`: [`AdaptiveGrid::build`] + [`AdaptiveGrid::pairs`], the
//!     single-thread kernel, for scale;
//!   - `plugin`: every box nudged by ±1/1024 on x (in the timed loop,
//!     about 0.1 ms), then [`BroadPhasePlugin::run`] on the world (default
//!     config, one thread per core): gather from hecs, every proxy's box
//!     set and re-indexed, the pairs and started/ended from the persistent
//!     broad phase, mapped to entities (target: at most 1.15 ×
//!     `raw_partition`).
//! - `static_scene`: 1,000 moving boxes (cubes, widths log-uniform in
//!   [0.5, 50), mixed100k's distribution) and mixed100k's 100,000 boxes;
//!   every iteration moves the 1,000 by ±0.5 on x (events every frame).
//!   - `dynamic1k`: the 1,000 movers alone;
//!   - `static100k_dynamic1k`: the movers and the 100,000 marked `Static`
//!     (default [`StaticChanges::Detect`]: every run checks the static
//!     entities for changes);
//!   - `static100k_dynamic1k_notify`: the same with
//!     [`StaticChanges::Notify`] (the game reports static changes);
//!   - `all_dynamic_101k`: the same 101,000 entities, none static (the
//!     target: `static100k_dynamic1k` costs about what `dynamic1k` does).
//! - `sleeping_scene`: `static_scene`'s 1,000 movers beside mixed100k's
//!   100,000 boxes marked `Sleeping` (kept, with their 22,239 pairs among
//!   each other, and not read):
//!   - `dynamic1k`: the 1,000 movers alone (as in `static_scene`);
//!   - `asleep100k_dynamic1k`: with the sleepers, default
//!     [`SleepChanges::Detect`] (every run compares the sleeping entities);
//!   - `asleep100k_dynamic1k_notify`: the same with
//!     [`SleepChanges::Notify`] (the target: at most 1.5 × `dynamic1k`);
//!   - `asleep100k_apart_dynamic1k_notify`: the same sleepers moved 4,000
//!     units along x, out of the movers' way: what sleeping costs when the
//!     movers have no sleeping neighbors to find.
//! - `ecs_contacts`: the contact lists (every entity's partners merged
//!   from the pairs, or patched from the frame before's, and laid out for
//!   `touching`), made by the first `touching` after each run and timed
//!   by the plugin itself (`contact_list_stats`, criterion's
//!   `iter_custom`): `_contacts` after a frame whose lists were read
//!   (patched; the nudges start and end no pair, so the patch is empty),
//!   `_contacts_built` after a frame whose lists were not (built from
//!   every pair); beside the run alone (`_run`, `FrameStats::times`) and
//!   the run with its first read (`_run_read`, timed around both):
//!   - `particles100k_*`: the game loop's world (100,000 cubes of
//!     half-widths 1–4 in a slab sized for about one contact each, about
//!     50,000 pairs), every box nudged by ±1/1024 a frame;
//!   - `dense20k_*`: 20,000 cubes with about 20 partners each (most sets
//!     past their 8 inline slots) and one box touching 2,000 of them.
//! - `ecs_bodies`: compound bodies. 20,000 body entities (no box), each
//!   with 4 colliders, cubes of half-width 1 at ±0.6 on x and y from the
//!   body's center, overlapping each other, in a cube of side 150; every
//!   box nudged by ±1/1024 a frame, as `ecs_contacts` does:
//!   - `compound20kx4`: each collider has a `ColliderOf` naming its body:
//!     colliders of one body never pair, and the body pairs are reduced
//!     from the collider pairs every run;
//!   - `flat80k`: the same 80,000 boxes and the same 20,000 boxless
//!     entities, no `ColliderOf` (the pairs within a body are pairs then).
//!
//! Before timing, each setup's pairs are checked: the plugin's against the
//! kernel's mapped to entities, and the static scene's against the
//! all-dynamic one minus the static-static pairs. After each group a line
//! per world gives the plugin's per-stage medians (from `FrameStats`) over
//! 100 extra frames, and after `ecs_overhead` a line gives the medians of
//! 200 rounds that run `raw_partition` and `plugin`
//! one after the other (a paired comparison: criterion's separate timing
//! windows can see different loads on a shared machine).
//!
//! ```text
//! cargo bench --bench ecs                  # both groups, ~1 minute on 2 cores
//! cargo bench --bench ecs -- static_scene  # one group
//! cargo bench --bench ecs -- sleeping_scene # 100,000 sleeping entities
//! cargo bench --bench ecs -- ecs_contacts  # the contact lists
//! cargo bench --bench ecs -- ecs_bodies    # compound bodies
//! ```

use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase::ecs::hecs::{Entity, World};
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, ColliderOf, FrameStats, PluginConfig, SleepChanges, Sleeping, Static,
    StaticChanges,
};
use broadphase::glam::Vec3;
use broadphase::{AdaptiveGrid, GridTree, JobSystem};
use broadphase_scenes::{SplitMix64, mixed100k};
use criterion::{BenchmarkGroup, Criterion, criterion_main, measurement::WallTime};

/// Timing settings shared by every group.
fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
}

/// Rounds of the interleaved comparison after `ecs_overhead`.
const INTERLEAVED_ROUNDS: usize = 200;

/// The median of `times`, in milliseconds.
fn median_ms(times: &mut [Duration]) -> f64 {
    times.sort_unstable();
    times[times.len() / 2].as_secs_f64() * 1e3
}

/// Marks the entities `static_scene` moves each frame.
struct Mover;

/// Per-stage medians over `frames` more runs of `plugin` on `world`,
/// moving the world between runs with `step` (given the frame) as the
/// timed loop does.
fn stage_medians(
    plugin: &mut BroadPhasePlugin,
    world: &mut World,
    frames: usize,
    step: fn(&mut World, usize),
) -> String {
    let mut history: Vec<FrameStats> = Vec::with_capacity(frames);
    for frame in 0..frames {
        step(world, frame);
        plugin.run(world).expect("valid world");
        history.push(*plugin.stats());
    }
    let last = history[frames - 1];
    let mut line = format!(
        "{} dynamic + {} static boxes, {} pairs; median ms:",
        last.dynamic_boxes, last.static_boxes, last.pairs
    );
    for (stage, (name, _)) in last.times.as_ms().into_iter().enumerate() {
        let mut ms: Vec<f64> = history.iter().map(|s| s.times.as_ms()[stage].1).collect();
        ms.sort_unstable_by(f64::total_cmp);
        line += &format!(" {name} {:.3}", ms[frames / 2]);
    }
    line
}

/// Shifts every [`Mover`] by +0.5 or -0.5 on x, alternating by frame.
fn move_movers(world: &mut World, frame: usize) {
    let dx = if frame.is_multiple_of(2) { 0.5 } else { -0.5 };
    for (b, _) in world.query_mut::<(&mut Aabb, &Mover)>() {
        b.min.x += dx;
        b.max.x += dx;
    }
}

/// Shifts every box by +1/1024 or -1/1024 on x, alternating by frame: every
/// proxy moves (with the plugin's margin of 0, every one is re-indexed),
/// and the pairs stay about those of the scene.
fn nudge_all(world: &mut World, frame: usize) {
    let dx = if frame.is_multiple_of(2) { 1.0 / 1024.0 } else { -1.0 / 1024.0 };
    for b in world.query_mut::<&mut Aabb>() {
        b.min.x += dx;
        b.max.x += dx;
    }
}

/// The plugin against the raw partition and kernel calls on mixed100k.
fn ecs_overhead(c: &mut Criterion) {
    let scene = mixed100k();
    let mut world = World::new();
    let entities: Vec<Entity> = world.spawn_batch(scene.boxes.iter().map(|b| (*b,))).collect();

    // Checked before timing: the plugin's pairs are the kernel's.
    let mut grid = AdaptiveGrid::default();
    let mut raw = Vec::new();
    grid.build(&scene.boxes).expect("valid scene");
    grid.pairs(&mut raw);
    let mut expected: Vec<(Entity, Entity)> = raw
        .iter()
        .map(|&[a, b]| {
            let (a, b) = (entities[a as usize], entities[b as usize]);
            if a < b { (a, b) } else { (b, a) }
        })
        .collect();
    expected.sort_unstable();
    let mut plugin = BroadPhasePlugin::new();
    plugin.run(&mut world).expect("valid world");
    assert_eq!(plugin.pairs(), expected, "plugin pairs differ from the kernel's");

    let jobs = JobSystem::new(0);
    let mut tree = GridTree::default();
    let mut tree_pairs = Vec::new();
    tree.find_pairs(&jobs, &scene.boxes, &mut tree_pairs).expect("valid scene");
    tree_pairs.sort_unstable();
    raw.sort_unstable();
    assert_eq!(tree_pairs, raw, "partition pairs differ from the kernel's");

    let mut group = c.benchmark_group("ecs_overhead");
    configure(&mut group);
    group.bench_function("raw_partition", |b| {
        b.iter(|| {
            tree.find_pairs(&jobs, black_box(&scene.boxes), &mut tree_pairs).expect("valid scene");
            black_box(tree_pairs.len())
        })
    });
    group.bench_function("raw_kernel", |b| {
        b.iter(|| {
            grid.build(black_box(&scene.boxes)).expect("valid scene");
            grid.pairs(&mut raw);
            black_box(raw.len())
        })
    });
    let mut frame = 0;
    group.bench_function("plugin", |b| {
        b.iter(|| {
            frame += 1;
            nudge_all(&mut world, frame);
            plugin.run(black_box(&mut world)).expect("valid world");
            black_box(plugin.pairs().len())
        })
    });
    group.finish();
    // (No `Mover` here: the stage medians' frames leave the boxes alone,
    // so they time a frame where nothing moved.)
    eprintln!(
        "ecs_overhead/plugin stages, nothing moving: {}",
        stage_medians(&mut plugin, &mut world, 100, move_movers)
    );

    // Criterion times each function in its own window; on a shared machine
    // the load can change between windows. Interleaving the two calls
    // frame by frame gives a paired comparison that load drift cannot skew.
    let (mut raw, mut ecs) = (Vec::new(), Vec::new());
    for _ in 0..INTERLEAVED_ROUNDS {
        let t = Instant::now();
        tree.find_pairs(&jobs, black_box(&scene.boxes), &mut tree_pairs).expect("valid scene");
        raw.push(t.elapsed());
        frame += 1;
        nudge_all(&mut world, frame);
        let t = Instant::now();
        plugin.run(black_box(&mut world)).expect("valid world");
        ecs.push(t.elapsed());
    }
    let (raw, ecs) = (median_ms(&mut raw), median_ms(&mut ecs));
    eprintln!(
        "ecs_overhead interleaved medians over {INTERLEAVED_ROUNDS} rounds: raw_partition {raw:.3} ms, \
         plugin {ecs:.3} ms; plugin / raw_partition {:.3}",
        ecs / raw
    );
}

/// 1,000 cubes with mixed100k's distribution (another seed).
fn movers() -> Vec<Aabb> {
    let mut rng = SplitMix64::new(0xEC5_0001);
    let ln_100 = 100.0_f64.ln();
    (0..1_000)
        .map(|_| {
            let c = Vec3::new(
                rng.range_f32(0.0, 2000.0),
                rng.range_f32(0.0, 2000.0),
                rng.range_f32(0.0, 2000.0),
            );
            let width = (0.5 * (f64::from(rng.next_f32()) * ln_100).exp()) as f32;
            Aabb::from_center_half_extent(c, Vec3::splat(width * 0.5))
        })
        .collect()
}

/// The movers, and mixed100k's boxes marked `Sleeping`.
fn sleeping_world() -> World {
    let mut world = World::new();
    world.spawn_batch(movers().into_iter().map(|b| (b, Mover)));
    world.spawn_batch(mixed100k().boxes.into_iter().map(|b| (b, Sleeping)));
    world
}

/// The movers, and mixed100k's boxes marked `Sleeping` 4,000 units away
/// on x: the same sleepers, none in the movers' way.
fn sleeping_apart_world() -> World {
    let mut world = World::new();
    world.spawn_batch(movers().into_iter().map(|b| (b, Mover)));
    let away = Vec3::new(4000.0, 0.0, 0.0);
    let boxes = mixed100k().boxes.into_iter().map(|b| Aabb::new(b.min + away, b.max + away));
    world.spawn_batch(boxes.map(|b| (b, Sleeping)));
    world
}

/// 1,000 movers alone, and beside 100,000 sleeping entities (detected and
/// notified).
fn sleeping_scene(c: &mut Criterion) {
    let notify = PluginConfig { sleep_changes: SleepChanges::Notify, ..PluginConfig::default() };
    let worlds = [
        ("dynamic1k", static_world(false, false), PluginConfig::default()),
        ("asleep100k_dynamic1k", sleeping_world(), PluginConfig::default()),
        ("asleep100k_dynamic1k_notify", sleeping_world(), notify),
        ("asleep100k_apart_dynamic1k_notify", sleeping_apart_world(), notify),
    ];
    let mut setups = first_runs(worlds);
    // Checked before timing: sleeping entities pair as awake ones do.
    let mut all = static_world(true, false);
    let mut awake = BroadPhasePlugin::new();
    awake.run(&mut all).expect("valid world");
    for (name, _, plugin) in &setups[1..3] {
        assert_eq!(plugin.pairs(), awake.pairs(), "{name}: differs from all awake");
        assert_eq!(plugin.stats().sleeping_boxes, 100_000, "{name}");
    }

    time_movers(c, "sleeping_scene", &mut setups);
    for (name, _, plugin) in &setups {
        assert!(!plugin.stats().sleeping_rebuilt, "{name}: the sleeping set was read again");
    }
}

/// Each world with a plugin of its config that has run once on it.
fn first_runs<const N: usize>(
    worlds: [(&'static str, World, PluginConfig); N],
) -> Vec<(&'static str, World, BroadPhasePlugin)> {
    worlds
        .into_iter()
        .map(|(name, mut world, config)| {
            let mut plugin = BroadPhasePlugin::with_config(config);
            plugin.run(&mut world).expect("valid world");
            (name, world, plugin)
        })
        .collect()
}

/// Times a run per frame of each setup, the movers moved before each, as
/// group `group`; then prints each one's stage medians.
fn time_movers(c: &mut Criterion, group: &str, setups: &mut [(&str, World, BroadPhasePlugin)]) {
    let mut timed = c.benchmark_group(group);
    configure(&mut timed);
    for (name, world, plugin) in setups.iter_mut() {
        let mut frame = 0;
        timed.bench_function(*name, |b| {
            b.iter(|| {
                frame += 1;
                move_movers(world, frame);
                plugin.run(black_box(world)).expect("valid world");
                // What a physics step reads: the pairs with a mover (all of
                // them but where entities sleep; `pairs()` would merge in
                // the sleepers' pairs too, about 0.3 ns a pair).
                black_box(plugin.awake_pairs().len())
            })
        });
    }
    timed.finish();
    for (name, world, plugin) in setups.iter_mut() {
        eprintln!("{group}/{name} stages: {}", stage_medians(plugin, world, 100, move_movers));
    }
}

/// The movers, and mixed100k's boxes (marked static or not), or not.
fn static_world(with_scene: bool, scene_static: bool) -> World {
    let mut world = World::new();
    world.spawn_batch(movers().into_iter().map(|b| (b, Mover)));
    if with_scene {
        let boxes = mixed100k().boxes;
        if scene_static {
            world.spawn_batch(boxes.into_iter().map(|b| (b, Static)));
        } else {
            world.spawn_batch(boxes.into_iter().map(|b| (b,)));
        }
    }
    world
}

/// 1,000 movers alone, beside 100,000 statics, and all 101,000 dynamic.
fn static_scene(c: &mut Criterion) {
    let notify = PluginConfig { static_changes: StaticChanges::Notify, ..PluginConfig::default() };
    let worlds = [
        ("dynamic1k", static_world(false, false), PluginConfig::default()),
        ("static100k_dynamic1k", static_world(true, true), PluginConfig::default()),
        ("static100k_dynamic1k_notify", static_world(true, true), notify),
        ("all_dynamic_101k", static_world(true, false), PluginConfig::default()),
    ];
    let mut setups = first_runs(worlds);

    // Checked before timing: static + dynamic equals all-dynamic minus the
    // static-static pairs (same spawn order, so the same entities).
    for split in &setups[1..3] {
        let all = &setups[3];
        let is_static = |e: Entity| split.1.satisfies::<&Static>(e);
        let expected: Vec<(Entity, Entity)> = all
            .2
            .pairs()
            .iter()
            .copied()
            .filter(|&(a, b)| !(is_static(a) && is_static(b)))
            .collect();
        assert_eq!(split.2.pairs(), expected, "{}: differs from all-dynamic", split.0);
    }

    time_movers(c, "static_scene", &mut setups);
    for (name, _, plugin) in &setups {
        assert!(plugin.stats().static_rebuilds <= 1, "{name}: the static set was re-indexed");
    }
}

/// The game loop's particles as cubes: 100,000 of half-widths in [1, 4)
/// in a slab `[0, L)² × [0, 8)` with `L` set for about one contact each.
fn particles100k() -> World {
    let count = 100_000;
    let side = ((count - 1) as f64 * 106.0).sqrt() as f32;
    let mut rng = SplitMix64::new(1);
    let mut world = World::new();
    world.spawn_batch((0..count).map(|_| {
        let r = rng.range_f32(1.0, 4.0);
        let c = Vec3::new(
            rng.range_f32(r, side - r),
            rng.range_f32(r, side - r),
            rng.range_f32(r, 8.0 - r),
        );
        (Aabb::from_center_half_extent(c, Vec3::splat(r)),)
    }));
    world
}

/// 20,000 unit cubes in a cube of side 28 (about 20 partners each) and one
/// box over a corner of them.
fn dense20k() -> World {
    let mut rng = SplitMix64::new(2);
    let mut world = World::new();
    world.spawn_batch((0..20_000).map(|_| {
        let at =
            Vec3::new(rng.range_f32(0.0, 28.0), rng.range_f32(0.0, 28.0), rng.range_f32(0.0, 28.0));
        (Aabb::new(at, at + Vec3::ONE),)
    }));
    world.spawn((Aabb::new(Vec3::ZERO, Vec3::splat(12.0)),));
    world
}

/// What one `ecs_contacts` id times of a frame: the run, the first read
/// after it, or both.
#[derive(Clone, Copy)]
enum Timed {
    /// The lists' making, as the plugin timed it.
    Lists,
    /// The same after a run whose lists were not read: a build.
    ListsBuilt,
    /// The run, as the plugin timed it.
    Run,
    /// The run and the first read, timed around both.
    RunAndRead,
}

/// The contact lists, the run, and both, each timed as [`Timed`] says.
fn ecs_contacts(c: &mut Criterion) {
    let mut group = c.benchmark_group("ecs_contacts");
    configure(&mut group);
    for (name, mut world) in [("particles100k", particles100k()), ("dense20k", dense20k())] {
        let mut plugin = BroadPhasePlugin::new();
        plugin.run(&mut world).expect("valid world");
        // Checked before timing: every pair is listed under both entities.
        let listed: usize = plugin.pairs().iter().map(|&(a, _)| plugin.touching(a).len()).sum();
        assert!(listed >= plugin.pairs().len(), "{name}: lists shorter than the pairs");
        assert!(
            plugin
                .pairs()
                .iter()
                .all(|&(a, b)| plugin.is_touching(a, b) && plugin.is_touching(b, a)),
            "{name}: a pair missing from the lists"
        );
        let reader = plugin.pairs()[0].0;
        let mut frame = 0;
        let ids = [
            ("contacts", Timed::Lists),
            ("contacts_built", Timed::ListsBuilt),
            ("run", Timed::Run),
            ("run_read", Timed::RunAndRead),
        ];
        for (id, timed) in ids {
            group.bench_function(format!("{name}_{id}"), |b| {
                b.iter_custom(|iterations| {
                    let mut sum = Duration::ZERO;
                    for _ in 0..iterations {
                        if matches!(timed, Timed::ListsBuilt) {
                            // A frame nobody reads: the next read builds.
                            frame += 1;
                            nudge_all(&mut world, frame);
                            plugin.run(black_box(&mut world)).expect("valid world");
                        }
                        frame += 1;
                        nudge_all(&mut world, frame);
                        let start = Instant::now();
                        plugin.run(black_box(&mut world)).expect("valid world");
                        black_box(plugin.touching(reader));
                        sum += match timed {
                            Timed::Lists | Timed::ListsBuilt => {
                                plugin.contact_list_stats().expect("read").time
                            }
                            Timed::Run => plugin.stats().times.total,
                            Timed::RunAndRead => start.elapsed(),
                        };
                    }
                    sum
                })
            });
        }
        let line = stage_medians(&mut plugin, &mut world, 100, nudge_all);
        eprintln!("ecs_contacts/{name} stages: {line}");
    }
    group.finish();
}

/// 20,000 bodies of 4 overlapping unit-half-width cubes each, in a cube
/// of side 150; the colliders name their body with `ColliderOf` if
/// `compound`. The same boxes and entities either way.
fn bodies20k(compound: bool) -> World {
    let mut rng = SplitMix64::new(3);
    let mut world = World::new();
    for _ in 0..20_000 {
        let body = world.spawn(());
        let c = Vec3::new(
            rng.range_f32(2.0, 148.0),
            rng.range_f32(2.0, 148.0),
            rng.range_f32(2.0, 148.0),
        );
        for (dx, dy) in [(-0.6, -0.6), (0.6, -0.6), (-0.6, 0.6), (0.6, 0.6)] {
            let aabb = Aabb::from_center_half_extent(c + Vec3::new(dx, dy, 0.0), Vec3::ONE);
            if compound {
                world.spawn((aabb, ColliderOf(body)));
            } else {
                world.spawn((aabb,));
            }
        }
    }
    world
}

/// Compound bodies against the same colliders without `ColliderOf`.
fn ecs_bodies(c: &mut Criterion) {
    let mut group = c.benchmark_group("ecs_bodies");
    configure(&mut group);
    let (mut flat, mut compound) = (bodies20k(false), bodies20k(true));
    let (mut flat_plugin, mut compound_plugin) = (BroadPhasePlugin::new(), BroadPhasePlugin::new());
    flat_plugin.run(&mut flat).expect("valid world");
    compound_plugin.run(&mut compound).expect("valid world");
    // Checked before timing: the compound pairs are the flat ones minus
    // those within a body, and the body pairs are theirs reduced.
    let body_of = |e: Entity| compound.get::<&ColliderOf>(e).map_or(e, |of| of.0);
    let across: Vec<(Entity, Entity)> =
        flat_plugin.pairs().iter().copied().filter(|&(a, b)| body_of(a) != body_of(b)).collect();
    assert!(across.len() < flat_plugin.pairs().len(), "bodies overlap their own colliders");
    assert_eq!(compound_plugin.pairs(), across, "pairs across bodies");
    let mut bodies: Vec<(Entity, Entity)> = across
        .iter()
        .map(|&(a, b)| {
            let (a, b) = (body_of(a), body_of(b));
            if a < b { (a, b) } else { (b, a) }
        })
        .collect();
    bodies.sort_unstable();
    bodies.dedup();
    assert!(!bodies.is_empty(), "bodies touch");
    assert_eq!(compound_plugin.body_pairs(), bodies, "body pairs");
    for (name, world, plugin) in [
        ("compound20kx4", &mut compound, &mut compound_plugin),
        ("flat80k", &mut flat, &mut flat_plugin),
    ] {
        let mut frame = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                frame += 1;
                nudge_all(world, frame);
                plugin.run(black_box(&mut *world)).expect("valid world");
            })
        });
        eprintln!("ecs_bodies/{name} stages: {}", stage_medians(plugin, world, 100, nudge_all));
    }
    group.finish();
}

/// The benchmark groups, in run order. Kept in a private module: the `pub
/// fn` that `criterion_group!` generates cannot carry a doc comment.
mod groups {
    use super::{ecs_bodies, ecs_contacts, ecs_overhead, sleeping_scene, static_scene};
    use criterion::criterion_group;

    criterion_group!(benches, ecs_overhead, static_scene, sleeping_scene, ecs_contacts, ecs_bodies);
}

criterion_main!(groups::benches);
