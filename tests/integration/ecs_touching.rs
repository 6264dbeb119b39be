//! `touching`, `touching_count` and `is_touching` equal brute force every
//! frame: for every entity ever spawned (despawned ones and stale handles
//! of reused ids included), the sorted list of entities whose boxes
//! overlap its own, layers matching, not both static, built from the
//! components with no broad phase at all.
//!
//! Small random worlds (moves, spawns, despawns, kind and layer changes,
//! piles of boxes on one spot and boxes covering the whole world) on 1, 2
//! and 4 threads; larger dense ones, whose pair lists are long enough to
//! be merged on every thread, with most entities past the sets' inline
//! slots and one touching thousands. The lists are made by the first read
//! after a run, so both read some frames and skip others: a frame read
//! after a read one patches its lists, one after a skipped frame builds
//! them. Reads from several threads at once, and from inside a job, get
//! the same lists.

use crate::ecs_support;

use broadphase::ecs::hecs::{Entity, EntityBuilder, World};
use broadphase::ecs::{Aabb, BroadPhasePlugin, Collider, CollisionLayers, PluginConfig, Static};
use broadphase::glam::Vec3;
use broadphase_scenes::SplitMix64;
use ecs_support::expected_pairs;
use proptest::prelude::*;
use std::collections::BTreeMap;

/// Layer sets the generators pick from (`None`: no component).
const LAYERS: [Option<CollisionLayers>; 5] = [
    None,
    Some(CollisionLayers::new(1, u32::MAX)),
    Some(CollisionLayers::new(2, 1)),
    Some(CollisionLayers::new(4, 4 | 1)),
    Some(CollisionLayers::NONE),
];

/// Every entity's partners in `pairs`, each list sorted.
fn lists(pairs: &[(Entity, Entity)]) -> BTreeMap<Entity, Vec<Entity>> {
    let mut out: BTreeMap<Entity, Vec<Entity>> = BTreeMap::new();
    for &(a, b) in pairs {
        out.entry(a).or_default().push(b);
        out.entry(b).or_default().push(a);
    }
    out.values_mut().for_each(|list| list.sort_unstable());
    out
}

/// Checks the plugin's lists against `expected` (brute force) for every
/// entity in `ever`; returns the first mismatch.
fn check(
    plugin: &BroadPhasePlugin,
    expected: &[(Entity, Entity)],
    ever: &[Entity],
) -> Result<(), String> {
    let want = lists(expected);
    for &e in ever {
        let list = want.get(&e).map_or(&[][..], Vec::as_slice);
        if plugin.touching(e) != list {
            return Err(format!("{e:?}: touching {:?}, expected {list:?}", plugin.touching(e)));
        }
        if plugin.touching_count(e) != list.len() {
            return Err(format!("{e:?}: touching_count {}", plugin.touching_count(e)));
        }
    }
    let touching: usize = ever.iter().map(|&e| plugin.touching_count(e)).sum();
    if touching != 2 * expected.len() {
        return Err(format!("{touching} partners listed for {} pairs", expected.len()));
    }
    for &(a, b) in expected {
        if !plugin.is_touching(a, b) || !plugin.is_touching(b, a) {
            return Err(format!("is_touching({a:?}, {b:?}) is false"));
        }
    }
    // Some non-pairs: every entity against the next few (by spawn order).
    for (i, &a) in ever.iter().enumerate() {
        for &b in ever.iter().skip(i + 1).take(3) {
            let pair = if a < b { (a, b) } else { (b, a) };
            if plugin.is_touching(a, b) != expected.binary_search(&pair).is_ok() {
                return Err(format!("is_touching({a:?}, {b:?}) is wrong"));
            }
        }
    }
    Ok(())
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    /// A cube, or a sphere collider when `collider`.
    Small { at: Vec3, size: f32, collider: bool },
    /// A box over the whole world: it touches everything it may.
    Everything,
}

#[derive(Clone, Copy, Debug)]
struct Spec {
    shape: Shape,
    is_static: bool,
    layers: usize,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Move(usize, Vec3),
    Spawn(Spec),
    /// `count` entities of this spec on one spot: a pile.
    Pile(Spec, usize),
    Despawn(usize),
    ToggleStatic(usize),
    SetLayers(usize, usize),
    /// Takes the box off an entity (it stays alive).
    Unbox(usize),
}

fn lattice() -> impl Strategy<Value = Vec3> {
    (0u8..16, 0u8..16, 0u8..4).prop_map(|(x, y, z)| Vec3::new(x as f32, y as f32, z as f32) * 0.5)
}

fn spec() -> impl Strategy<Value = Spec> {
    let shape = prop_oneof![
        12 => (lattice(), prop::sample::select(vec![0.0f32, 0.5, 1.0, 2.0]), any::<bool>())
            .prop_map(|(at, size, collider)| Shape::Small { at, size, collider }),
        1 => Just(Shape::Everything),
    ];
    let layers = prop_oneof![4 => Just(0), 1 => 1..LAYERS.len()];
    (shape, prop::bool::weighted(0.3), layers).prop_map(|(shape, is_static, layers)| Spec {
        shape,
        is_static,
        layers,
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (any::<usize>(), lattice()).prop_map(|(i, p)| Op::Move(i, p)),
        2 => spec().prop_map(Op::Spawn),
        1 => (spec(), 2usize..24).prop_map(|(s, n)| Op::Pile(s, n)),
        3 => any::<usize>().prop_map(Op::Despawn),
        1 => any::<usize>().prop_map(Op::ToggleStatic),
        1 => (any::<usize>(), 0..LAYERS.len()).prop_map(|(i, l)| Op::SetLayers(i, l)),
        1 => any::<usize>().prop_map(Op::Unbox),
    ]
}

fn spawn(world: &mut World, s: &Spec) -> Entity {
    let mut b = EntityBuilder::new();
    match s.shape {
        Shape::Small { at, size, collider: true } => {
            b.add(at).add(Collider::sphere(size / 2.0));
        }
        Shape::Small { at, size, collider: false } => {
            b.add(Aabb::new(at, at + Vec3::splat(size)));
        }
        Shape::Everything => {
            b.add(Aabb::new(Vec3::splat(-10.0), Vec3::splat(20.0)));
        }
    }
    if s.is_static {
        b.add(Static);
    }
    if let Some(l) = LAYERS[s.layers] {
        b.add(l);
    }
    world.spawn(b.build())
}

fn apply(world: &mut World, live: &mut Vec<Entity>, ever: &mut Vec<Entity>, op: Op) {
    match op {
        Op::Spawn(s) | Op::Pile(s, _) => {
            let n = if let Op::Pile(_, n) = op { n } else { 1 };
            for _ in 0..n {
                let e = spawn(world, &s);
                live.push(e);
                ever.push(e);
            }
            return;
        }
        _ if live.is_empty() => return,
        _ => {}
    }
    match op {
        Op::Move(i, p) => {
            let e = live[i % live.len()];
            if let Ok(mut b) = world.get::<&mut Aabb>(e) {
                let size = b.max - b.min;
                *b = Aabb::new(p, p + size);
            } else if let Ok(mut at) = world.get::<&mut Vec3>(e) {
                *at = p;
            }
        }
        Op::Despawn(i) => {
            let e = live.swap_remove(i % live.len());
            world.despawn(e).unwrap();
        }
        Op::ToggleStatic(i) => {
            let e = live[i % live.len()];
            if world.remove_one::<Static>(e).is_err() {
                world.insert_one(e, Static).unwrap();
            }
        }
        Op::SetLayers(i, l) => {
            let e = live[i % live.len()];
            match LAYERS[l] {
                Some(layers) => world.insert_one(e, layers).unwrap(),
                None => _ = world.remove_one::<CollisionLayers>(e),
            }
        }
        Op::Unbox(i) => {
            let e = live[i % live.len()];
            let _ = world.remove_one::<Aabb>(e);
            let _ = world.remove_one::<Collider>(e);
        }
        Op::Spawn(_) | Op::Pile(..) => unreachable!("handled above"),
    }
}

fn plugin(threads: usize) -> BroadPhasePlugin {
    BroadPhasePlugin::with_config(PluginConfig { threads, ..PluginConfig::default() })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    /// Small worlds, on 1, 2 and 4 threads, every frame whose bit of
    /// `unread` is clear (the last one always).
    #[test]
    fn touching_equals_brute_force_every_frame(
        initial in prop::collection::vec(spec(), 0..40),
        frames in prop::collection::vec(prop::collection::vec(op(), 0..10), 1..8),
        unread in any::<u8>(),
    ) {
        let mut world = World::new();
        let mut live: Vec<Entity> = initial.iter().map(|s| spawn(&mut world, s)).collect();
        let mut ever = live.clone();
        let mut plugins = [plugin(1), plugin(2), plugin(4)];
        for (frame, ops) in std::iter::once(&Vec::new()).chain(&frames).enumerate() {
            for &op in ops {
                apply(&mut world, &mut live, &mut ever, op);
            }
            let expected = expected_pairs(&world);
            let read = frame == frames.len() || unread >> frame & 1 == 0;
            for plugin in &mut plugins {
                plugin.run(&mut world).unwrap();
                prop_assert_eq!(plugin.pairs(), &expected[..]);
                if !read {
                    continue;
                }
                let threads = plugin.stats().threads;
                check(plugin, &expected, &ever)
                    .map_err(|e| TestCaseError::fail(format!("frame {frame}, {threads} threads: {e}")))?;
            }
        }
    }
}

/// `count` cubes of side 1 at random in a cube of side `side`, a few with
/// layers, about a tenth static; and one box over all of them (returned
/// apart).
fn dense_world(rng: &mut SplitMix64, count: usize, side: f32) -> (World, Vec<Entity>, Entity) {
    let mut world = World::new();
    let mut entities = Vec::with_capacity(count + 1);
    for i in 0..count {
        let at =
            Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side));
        let b = Aabb::new(at, at + Vec3::ONE);
        let e = match i % 10 {
            0 => world.spawn((b, Static)),
            1 => world.spawn((b, LAYERS[1 + i / 10 % 4].unwrap())),
            _ => world.spawn((b,)),
        };
        entities.push(e);
    }
    let cover = world.spawn((Aabb::new(Vec3::splat(-1.0), Vec3::splat(side + 2.0)),));
    (world, entities, cover)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, failure_persistence: None, ..ProptestConfig::default() })]

    /// Thousands of entities, tens of thousands of pairs (the merge runs
    /// in pieces on every thread), most entities past 8 partners (the
    /// sets spill), one touching every other; frames of moves, despawns,
    /// spawns into freed ids, and the pile's cover despawned and back.
    #[test]
    fn dense_worlds_equal_brute_force_on_every_thread_count(
        seed in any::<u64>(),
        count in 3_000usize..4_500,
        unread in 0usize..3,
    ) {
        let mut rng = SplitMix64::new(seed);
        let side = 13.0;
        let (mut world, mut entities, mut cover) = dense_world(&mut rng, count, side);
        let mut ever = entities.clone();
        ever.push(cover);
        let mut plugins = [plugin(1), plugin(2), plugin(4)];
        for frame in 0..4 {
            if frame > 0 {
                for &e in entities.iter().step_by(3) {
                    if let Ok(mut b) = world.get::<&mut Aabb>(e) {
                        let step = Vec3::new(rng.range_f32(-0.6, 0.6), rng.range_f32(-0.6, 0.6), 0.0);
                        b.min += step;
                        b.max += step;
                    }
                }
                for _ in 0..200 {
                    let victim = entities.swap_remove(rng.below(entities.len()));
                    world.despawn(victim).unwrap();
                }
                for _ in 0..150 {
                    let at = Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side));
                    let e = world.spawn((Aabb::new(at, at + Vec3::ONE),));
                    entities.push(e);
                    ever.push(e);
                }
                if frame == 2 {
                    world.despawn(cover).unwrap();
                    cover = world.spawn((Aabb::new(Vec3::splat(-1.0), Vec3::splat(side + 2.0)),));
                    ever.push(cover);
                }
            }
            let expected = expected_pairs(&world);
            // Above the 8,192 pairs below which one thread merges them all.
            prop_assert!(expected.len() > 12_000, "a dense world: {} pairs", expected.len());
            let want = lists(&expected);
            let spilled = want.values().filter(|list| list.len() > 8).count();
            prop_assert!(spilled > want.len() / 2, "most lists spill: {spilled} of {}", want.len());
            prop_assert!(want.values().any(|list| list.len() > 2_000), "one entity touches thousands");
            for plugin in &mut plugins {
                plugin.run(&mut world).unwrap();
                prop_assert_eq!(plugin.pairs(), &expected[..]);
                // One frame's lists are never read: the next read builds.
                if frame == unread {
                    continue;
                }
                let threads = plugin.stats().threads;
                check(plugin, &expected, &ever)
                    .map_err(|e| TestCaseError::fail(format!("frame {frame}, {threads} threads: {e}")))?;
            }
        }
    }
}

/// One entity touching ten thousand others, on 1 and 4 threads: its list
/// is all of them in order, and each of theirs is just it; a despawned
/// one leaves its list, and a new entity given the freed id is not the
/// old handle.
#[test]
fn one_entity_touching_ten_thousand() {
    for threads in [1, 4] {
        let mut world = World::new();
        let small: Vec<Entity> = (0..10_000)
            .map(|i| {
                let at = Vec3::new((i % 100) as f32 * 3.0, (i / 100) as f32 * 3.0, 0.0);
                world.spawn((Aabb::new(at, at + Vec3::ONE),))
            })
            .collect();
        let cover = world.spawn((Aabb::new(Vec3::splat(-1.0), Vec3::splat(400.0)), Static));
        let mut plugin = plugin(threads);
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.touching(cover), small, "{threads} threads");
        assert!(small.iter().all(|&e| plugin.touching(e) == [cover]), "{threads} threads");

        world.despawn(small[5_000]).unwrap();
        plugin.run(&mut world).unwrap();
        let mut rest = small.clone();
        rest.remove(5_000);
        assert_eq!(plugin.touching(cover), rest, "{threads} threads");
        assert!(plugin.touching(small[5_000]).is_empty());

        let at = Vec3::new(0.0, 150.0, 0.0); // where the despawned one was
        let back = world.spawn((Aabb::new(at, at + Vec3::ONE),));
        assert_eq!(back.id(), small[5_000].id(), "hecs reuses the freed id");
        plugin.run(&mut world).unwrap();
        assert!(plugin.touching(small[5_000]).is_empty(), "a stale handle of a reused id");
        assert!(!plugin.is_touching(small[5_000], cover));
        assert_eq!(plugin.touching(back), [cover]);
        assert_eq!(plugin.touching_count(cover), 10_000);
        assert_eq!(plugin.touching(cover)[..5_000], small[..5_000]);
        assert_eq!(plugin.touching(cover)[5_000], back);
    }
}

/// A failed run (a bad box) publishes nothing: `touching` answers as of
/// the last successful run until the next one.
#[test]
fn a_failed_run_leaves_touching_as_it_was() {
    let mut world = World::new();
    let a = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
    let b = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
    let mut plugin = plugin(2);
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.touching(a), [b]);
    *world.get::<&mut Aabb>(b).unwrap() =
        Aabb::new(Vec3::new(5.0, 0.0, 0.0), Vec3::splat(f32::NAN));
    assert!(plugin.run(&mut world).is_err());
    assert_eq!(plugin.touching(a), [b]);
    assert_eq!(plugin.touching(b), [a]);
    *world.get::<&mut Aabb>(b).unwrap() = Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0));
    plugin.run(&mut world).unwrap();
    assert!(plugin.touching(a).is_empty() && plugin.touching(b).is_empty());
}

/// [`dense_world`] of `count` cubes in a cube of side 13 from seed
/// `seed`, and every entity of it, the cover last.
fn seeded_dense_world(seed: u64, count: usize) -> (World, Vec<Entity>, Entity, Vec<Entity>) {
    let (world, entities, cover) = dense_world(&mut SplitMix64::new(seed), count, 13.0);
    let ever = entities.iter().copied().chain([cover]).collect();
    (world, entities, cover, ever)
}

/// The lists are made by the first read after a run, once: a frame read
/// after a read one patches them, one read after a frame never read
/// builds them, and a run without a read leaves nothing made.
#[test]
fn the_first_read_after_a_run_makes_the_lists() {
    let (mut world, entities, _, ever) = seeded_dense_world(11, 3_000);
    let mut plugin = plugin(2);
    let step = |world: &mut World, frame: usize| {
        let dx = if frame.is_multiple_of(2) { 0.01 } else { -0.01 };
        for &e in entities.iter().step_by(50) {
            let mut b = world.get::<&mut Aabb>(e).unwrap();
            (b.min.x, b.max.x) = (b.min.x + dx, b.max.x + dx);
        }
    };
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.contact_list_stats(), None, "not read: not made");
    let first = plugin.touching(entities[7]).as_ptr();
    let made = plugin.contact_list_stats().expect("made by the read");
    assert!(!made.patched, "the first frame's lists are built");
    assert_eq!(plugin.touching(entities[7]).as_ptr(), first, "read again, not made again");
    assert_eq!(plugin.contact_list_stats(), Some(made));

    for frame in 1..4 {
        step(&mut world, frame);
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.contact_list_stats(), None, "frame {frame}: due again");
        let expected = expected_pairs(&world);
        check(&plugin, &expected, &ever).unwrap();
        let made = plugin.contact_list_stats().expect("made by the read");
        assert!(made.patched, "frame {frame}: the frame before's lists were read");
    }
    step(&mut world, 4);
    plugin.run(&mut world).unwrap(); // never read
    step(&mut world, 5);
    plugin.run(&mut world).unwrap();
    check(&plugin, &expected_pairs(&world), &ever).unwrap();
    let made = plugin.contact_list_stats().expect("made by the read");
    assert!(!made.patched, "the frame before's lists were never made: built");
}

/// Readers on four threads at once after each run: one makes the lists
/// while the others wait, and every reader sees brute force's lists.
#[test]
fn readers_on_several_threads_at_once_see_the_same_lists() {
    let (mut world, _, cover, ever) = seeded_dense_world(12, 3_000);
    let mut plugin = plugin(2);
    for frame in 0..3 {
        if frame == 2 {
            world.despawn(cover).unwrap();
        }
        plugin.run(&mut world).unwrap();
        let expected = expected_pairs(&world);
        let plugin = &plugin;
        let results: Vec<Result<(), String>> = std::thread::scope(|scope| {
            let readers: Vec<_> =
                (0..4).map(|_| scope.spawn(|| check(plugin, &expected, &ever))).collect();
            readers.into_iter().map(|r| r.join().expect("a reader panicked")).collect()
        });
        for result in results {
            result.unwrap_or_else(|e| panic!("frame {frame}: {e}"));
        }
    }
}

/// A read from inside a job, where the plugin's job system refuses to
/// wait for its jobs: the lists are made on the reading thread alone,
/// and equal brute force, patched and built.
#[test]
fn a_read_from_inside_a_job_makes_exact_lists() {
    use broadphase::JobSystem;
    let (mut world, entities, _, ever) = seeded_dense_world(13, 3_500);
    let mut plugin = plugin(2);
    let (game, other) = (JobSystem::new(2), JobSystem::new(2));
    for frame in 0..3 {
        for &e in entities.iter().step_by(97) {
            let mut b = world.get::<&mut Aabb>(e).unwrap();
            (b.min.z, b.max.z) = (b.min.z + 0.5, b.max.z + 0.5);
        }
        plugin.run(&mut world).unwrap();
        let expected = expected_pairs(&world);
        assert!(expected.len() > 12_000, "long enough to merge on every thread");
        let mut answers = [Ok(()), Ok(())];
        let (plugin, expected, ever) = (&plugin, &expected, &ever);
        game.for_each_mut(&mut answers, |_, answer| {
            // What the plugin's jobs meet here.
            let nested = other.for_each_mut(&mut [0u8; 2], |_, _| {});
            assert!(nested.is_err(), "waiting for jobs inside a job is refused");
            *answer = check(plugin, expected, ever);
        })
        .unwrap();
        for answer in answers {
            answer.unwrap_or_else(|e| panic!("frame {frame}: {e}"));
        }
    }
}
