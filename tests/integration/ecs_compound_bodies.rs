//! Compound bodies: colliders tied to a body by `ColliderOf` never pair
//! with each other, and the body lists are the collider pairs reduced to
//! body pairs. Random sequences of spawns, despawns, moves and
//! re-parenting (adding, changing and removing `ColliderOf`) are checked
//! against brute force every frame, on 1 and 2 threads; bad links are
//! typed errors; the body lists are the same on any thread count and
//! after a rollback.

use crate::ecs_support::{expected_body_pairs, expected_pairs, minus};

use broadphase::ecs::hecs::{Entity, EntityBuilder, World};
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, Collider, ColliderOf, CollisionLayers, PluginConfig, PluginError,
    PluginSnapshot, Static,
};
use broadphase::glam::Vec3;
use broadphase::persistent::PersistentConfig;
use broadphase_scenes::SplitMix64;
use proptest::prelude::*;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Sorted entity pairs, as the plugin publishes them.
type Pairs = Vec<(Entity, Entity)>;

fn unit(x: f32) -> Aabb {
    Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0))
}

fn plugin(threads: usize) -> BroadPhasePlugin {
    BroadPhasePlugin::with_config(PluginConfig { threads, ..PluginConfig::default() })
}

/// Checks every list of `plugin` against brute force on `world`, given
/// the last frame's expected collider and body pairs.
fn check(
    plugin: &BroadPhasePlugin,
    world: &World,
    prev: &[(Entity, Entity)],
    prev_bodies: &[(Entity, Entity)],
    what: &str,
) -> (Pairs, Pairs) {
    let pairs = expected_pairs(world);
    let bodies = expected_body_pairs(world);
    assert_eq!(plugin.pairs(), pairs, "{what}: pairs");
    assert_eq!(plugin.started(), minus(&pairs, prev), "{what}: started");
    assert_eq!(plugin.ended(), minus(prev, &pairs), "{what}: ended");
    assert_eq!(plugin.body_pairs(), bodies, "{what}: body pairs");
    assert_eq!(plugin.body_started(), minus(&bodies, prev_bodies), "{what}: body started");
    assert_eq!(plugin.body_ended(), minus(prev_bodies, &bodies), "{what}: body ended");
    (pairs, bodies)
}

#[test]
fn two_overlapping_colliders_of_one_body_never_pair() {
    let mut world = World::new();
    let body = world.spawn(());
    let a = world.spawn((unit(0.0), ColliderOf(body)));
    let b = world.spawn((unit(0.0), ColliderOf(body)));
    // Static parts too, and a body with a box of its own.
    let c = world.spawn((unit(0.5), ColliderOf(body), Static));
    let owner = world.spawn((unit(0.25),));
    let part = world.spawn((unit(0.25), ColliderOf(owner)));
    for threads in [1, 2] {
        let mut plugin = plugin(threads);
        for frame in 0..3 {
            for (k, e) in [a, b, c, owner, part].into_iter().enumerate() {
                let mut aabb = world.get::<&mut Aabb>(e).unwrap();
                *aabb = unit(frame as f32 * 0.01 * k as f32);
            }
            plugin.run(&mut world).unwrap();
            let within = |x: Entity, y: Entity| {
                plugin.pairs().contains(&(x, y)) || plugin.pairs().contains(&(y, x))
            };
            assert!(!within(a, b) && !within(a, c) && !within(b, c) && !within(owner, part));
            assert_eq!(plugin.pairs(), expected_pairs(&world));
            assert_eq!(plugin.body_pairs(), [(body, owner)]);
            assert!(plugin.touching(a).iter().all(|&e| e == owner || e == part));
        }
    }
}

#[test]
fn a_link_to_a_dead_body_is_an_error_naming_the_collider() {
    let mut world = World::new();
    let gone = world.spawn(());
    world.despawn(gone).unwrap();
    let a = world.spawn((unit(0.0),));
    let b = world.spawn((unit(0.0),));
    let mut plugin = plugin(1);
    plugin.run(&mut world).unwrap();
    world.insert_one(b, ColliderOf(gone)).unwrap();
    let error = plugin.run(&mut world).unwrap_err();
    assert_eq!(error, PluginError::DeadBody { collider: b, body: gone });
    assert!(error.to_string().contains("not alive"), "{error}");
    // Nothing published changed, and the collider was not dropped.
    assert_eq!(plugin.pairs(), [(a, b)]);
    assert_eq!(plugin.stats().frame, 1);
    world.insert_one(b, ColliderOf(a)).unwrap();
    plugin.run(&mut world).unwrap();
    assert_eq!((plugin.ended(), plugin.body_ended()), (&[(a, b)][..], &[(a, b)][..]));
    assert!(plugin.pairs().is_empty() && plugin.body_pairs().is_empty());
}

#[test]
fn a_link_to_a_collider_of_another_body_is_an_error() {
    let mut world = World::new();
    let ship = world.spawn(());
    let hull = world.spawn((unit(0.0), ColliderOf(ship)));
    let gun = world.spawn((unit(0.0), ColliderOf(hull)));
    let mut plugin = plugin(2);
    let error = plugin.run(&mut world).unwrap_err();
    assert_eq!(error, PluginError::NestedBody { collider: gun, body: hull });
    assert!(error.to_string().contains("one level deep"), "{error}");
    // One level deep: naming itself is allowed, it is its own body.
    world.insert_one(hull, ColliderOf(hull)).unwrap();
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty());
    assert!(plugin.body_pairs().is_empty());
    let rock = world.spawn((unit(0.5),));
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(hull, rock), (gun, rock)]);
    assert_eq!(plugin.body_pairs(), [(hull, rock)]);
}

#[test]
fn re_parenting_is_picked_up_by_the_next_run() {
    let mut world = World::new();
    let left = world.spawn(());
    let right = world.spawn(());
    let a = world.spawn((unit(0.0), ColliderOf(left)));
    let b = world.spawn((unit(0.5), ColliderOf(left)));
    let c = world.spawn((unit(0.75), ColliderOf(right)));
    let mut plugin = plugin(1);
    let (mut prev, mut prev_bodies) = (Vec::new(), Vec::new());
    let mut step = |world: &mut World, what: &str| {
        plugin.run(world).unwrap();
        (prev, prev_bodies) = check(&plugin, world, &prev, &prev_bodies, what);
    };
    step(&mut world, "start");
    // b joins c's body: b-c ends, a-b starts.
    world.insert_one(b, ColliderOf(right)).unwrap();
    step(&mut world, "changed");
    // b leaves every body: b-c starts again, b is its own body.
    world.remove_one::<ColliderOf>(b).unwrap();
    step(&mut world, "removed");
    // The last links go: the body lists become the collider lists.
    world.remove_one::<ColliderOf>(a).unwrap();
    world.remove_one::<ColliderOf>(c).unwrap();
    step(&mut world, "no links");
    step(&mut world, "no links, again");
    // A body despawned with its colliders ends its body pairs.
    world.insert_one(a, ColliderOf(left)).unwrap();
    world.insert_one(b, ColliderOf(left)).unwrap();
    step(&mut world, "linked again");
    world.despawn(a).unwrap();
    world.despawn(b).unwrap();
    world.despawn(left).unwrap();
    step(&mut world, "body despawned");
}

/// Regression: a collider whose box is removed and given back while it
/// keeps its `ColliderOf` gets a new proxy, which must get its group.
#[test]
fn a_collider_that_loses_and_regains_its_box_stays_in_its_body() {
    let mut world = World::new();
    let body = world.spawn(());
    let a = world.spawn((unit(0.0), ColliderOf(body)));
    let b = world.spawn((unit(0.0), ColliderOf(body)));
    let mut plugin = plugin(1);
    plugin.run(&mut world).unwrap();
    world.remove_one::<Aabb>(b).unwrap();
    plugin.run(&mut world).unwrap();
    world.insert_one(b, unit(0.0)).unwrap();
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty(), "{:?}", plugin.pairs());
    let _ = a;
}

/// Regression: a run that fails part way through syncing the proxies
/// (a bad box met after a linked collider's new proxy was inserted) must
/// not leave that proxy without its group when the next run sees the
/// same links.
#[test]
fn a_proxy_inserted_by_a_failed_run_gets_its_group() {
    let mut world = World::new();
    let body = world.spawn(());
    let a = world.spawn((unit(0.0), ColliderOf(body)));
    let b = world.spawn((ColliderOf(body),)); // linked, no box yet
    let mut plugin = plugin(1);
    plugin.run(&mut world).unwrap();
    world.insert_one(b, unit(0.0)).unwrap();
    let bad = world.spawn((Aabb::new(Vec3::ONE, Vec3::ZERO),));
    assert!(
        matches!(plugin.run(&mut world), Err(PluginError::InvalidBox { entity, .. }) if entity == bad)
    );
    world.despawn(bad).unwrap();
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty(), "{:?} of one body paired", plugin.pairs());
    let _ = a;
}

/// Regression: a replay whose first frame makes the same links as the
/// run before the restore (a rollback that replays a re-parenting) must
/// set the groups again: the restore put back the snapshot's groups.
#[test]
fn a_replayed_re_parenting_after_a_restore_takes_effect() {
    let mut world = World::new();
    let ship = world.spawn(());
    let hull = world.spawn((unit(0.0), ColliderOf(ship)));
    let boat = world.spawn((unit(0.5),));
    let mut plugin = plugin(1);
    plugin.run(&mut world).unwrap();
    assert_eq!(plugin.pairs(), [(hull, boat)]);
    let saved = plugin.snapshot();
    world.insert_one(boat, ColliderOf(ship)).unwrap(); // docks
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty());
    // Roll back: the game's world as at the snapshot, then the same input.
    world.remove_one::<ColliderOf>(boat).unwrap();
    plugin.restore(&saved);
    world.insert_one(boat, ColliderOf(ship)).unwrap();
    plugin.run(&mut world).unwrap();
    assert!(plugin.pairs().is_empty(), "{:?}", plugin.pairs());
    assert_eq!(plugin.body_ended(), [(ship, boat)]);
}

/// Body entities a random world may link colliders to.
const BODIES: usize = 4;

#[derive(Clone, Copy, Debug)]
enum Op {
    Move(usize, Vec3),
    Spawn {
        at: Vec3,
        size: f32,
        collider: bool,
        body: Option<usize>,
        is_static: bool,
    },
    Despawn(usize),
    /// Sets (`Some`) or removes (`None`) a collider's `ColliderOf`.
    Relink(usize, Option<usize>),
    /// Gives a body entity a box, or takes it away.
    ToggleBodyBox(usize, Vec3),
    ToggleStatic(usize),
    SetLayers(usize, bool),
    /// Despawns a body and respawns it (its colliders are unlinked
    /// first, or despawned with it).
    RespawnBody(usize, bool),
}

fn lattice() -> impl Strategy<Value = Vec3> {
    (0u8..12, 0u8..12, 0u8..3).prop_map(|(x, y, z)| Vec3::new(x as f32, y as f32, z as f32) * 0.5)
}

fn op() -> impl Strategy<Value = Op> {
    let body = prop_oneof![1 => Just(None), 2 => (0..BODIES).prop_map(Some)];
    prop_oneof![
        4 => (any::<usize>(), lattice()).prop_map(|(i, p)| Op::Move(i, p)),
        2 => (lattice(), prop::sample::select(vec![0.0f32, 0.5, 1.0, 2.5]), any::<bool>(), body.clone(), prop::bool::weighted(0.2))
            .prop_map(|(at, size, collider, body, is_static)| Op::Spawn { at, size, collider, body, is_static }),
        1 => any::<usize>().prop_map(Op::Despawn),
        3 => (any::<usize>(), body).prop_map(|(i, b)| Op::Relink(i, b)),
        1 => (0..BODIES, lattice()).prop_map(|(b, p)| Op::ToggleBodyBox(b, p)),
        1 => any::<usize>().prop_map(Op::ToggleStatic),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(i, l)| Op::SetLayers(i, l)),
        1 => (0..BODIES, any::<bool>()).prop_map(|(b, d)| Op::RespawnBody(b, d)),
    ]
}

/// A random world: a few body entities (with or without a box of their
/// own) and colliders that may name one of them.
struct Sim {
    bodies: Vec<Entity>,
    colliders: Vec<Entity>,
}

impl Sim {
    fn apply(&mut self, world: &mut World, op: Op) {
        let pick = |list: &[Entity], i: usize| (!list.is_empty()).then(|| list[i % list.len()]);
        match op {
            Op::Move(i, p) => {
                let Some(e) = pick(&self.colliders, i) else { return };
                if let Ok(mut b) = world.get::<&mut Aabb>(e) {
                    let size = b.max - b.min;
                    *b = Aabb::new(p, p + size);
                } else {
                    *world.get::<&mut Vec3>(e).unwrap() = p;
                }
            }
            Op::Spawn { at, size, collider, body, is_static } => {
                let mut b = EntityBuilder::new();
                if collider {
                    b.add(at).add(Collider::sphere(size / 2.0));
                } else {
                    b.add(Aabb::new(at, at + Vec3::splat(size)));
                }
                if let Some(k) = body {
                    b.add(ColliderOf(self.bodies[k]));
                }
                if is_static {
                    b.add(Static);
                }
                self.colliders.push(world.spawn(b.build()));
            }
            Op::Despawn(i) => {
                if self.colliders.is_empty() {
                    return;
                }
                let e = self.colliders.swap_remove(i % self.colliders.len());
                world.despawn(e).unwrap();
            }
            Op::Relink(i, body) => {
                let Some(e) = pick(&self.colliders, i) else { return };
                match body {
                    Some(k) => world.insert_one(e, ColliderOf(self.bodies[k])).unwrap(),
                    None => _ = world.remove_one::<ColliderOf>(e),
                }
            }
            Op::ToggleBodyBox(k, p) => {
                let e = self.bodies[k];
                if world.remove_one::<Aabb>(e).is_err() {
                    world.insert_one(e, Aabb::new(p, p + Vec3::ONE)).unwrap();
                }
            }
            Op::ToggleStatic(i) => {
                let Some(e) = pick(&self.colliders, i) else { return };
                if world.remove_one::<Static>(e).is_err() {
                    world.insert_one(e, Static).unwrap();
                }
            }
            Op::SetLayers(i, on) => {
                let Some(e) = pick(&self.colliders, i) else { return };
                if on {
                    world.insert_one(e, CollisionLayers::new(1, 2 | 1)).unwrap();
                } else {
                    _ = world.remove_one::<CollisionLayers>(e);
                }
            }
            Op::RespawnBody(k, with_colliders) => {
                let old = self.bodies[k];
                let linked: Vec<Entity> = self
                    .colliders
                    .iter()
                    .copied()
                    .filter(|&e| world.get::<&ColliderOf>(e).is_ok_and(|of| of.0 == old))
                    .collect();
                for e in linked {
                    if with_colliders {
                        world.despawn(e).unwrap();
                        self.colliders.retain(|&c| c != e);
                    } else {
                        world.remove_one::<ColliderOf>(e).unwrap();
                    }
                }
                world.despawn(old).unwrap();
                // The id is likely reused, with a new generation.
                self.bodies[k] = world.spawn(());
            }
        }
    }
}

/// Runs `frames` of ops on plugins of 1 and 2 threads (and the paths
/// that never or always recompute every candidate), checking every list
/// against brute force each frame.
fn run_random(initial: &[Op], frames: &[Vec<Op>]) {
    let mut world = World::new();
    let mut sim = Sim { bodies: (0..BODIES).map(|_| world.spawn(())).collect(), colliders: vec![] };
    for &op in initial {
        sim.apply(&mut world, op);
    }
    let with = |threads: usize, fraction: f32| {
        BroadPhasePlugin::with_config(PluginConfig {
            threads,
            broad_phase: PersistentConfig { full_rebuild_fraction: fraction, ..Default::default() },
            ..PluginConfig::default()
        })
    };
    let mut plugins = [
        plugin(1),
        plugin(2),
        with(1, f32::INFINITY),
        with(2, 0.0),
        BroadPhasePlugin::with_config(PluginConfig {
            threads: 2,
            broad_phase: PersistentConfig { margin: 0.5, ..Default::default() },
            ..PluginConfig::default()
        }),
    ];
    let (mut prev, mut prev_bodies) = (Vec::new(), Vec::new());
    for (frame, ops) in std::iter::once(&Vec::new()).chain(frames).enumerate() {
        for &op in ops {
            sim.apply(&mut world, op);
        }
        let mut next = (Vec::new(), Vec::new());
        for (k, plugin) in plugins.iter_mut().enumerate() {
            plugin.run(&mut world).unwrap();
            next =
                check(plugin, &world, &prev, &prev_bodies, &format!("frame {frame}, plugin {k}"));
        }
        (prev, prev_bodies) = next;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn compound_worlds_equal_brute_force_frame_after_frame(
        initial in prop::collection::vec(op(), 0..40),
        frames in prop::collection::vec(prop::collection::vec(op(), 0..8), 1..30),
    ) {
        run_random(&initial, &frames);
    }
}

/// A seeded world of bodies of several colliders each that drift, re-parent
/// and respawn, hashed frame by frame: the same for 1, 2 and 4 threads.
fn hash_run(threads: usize) -> u64 {
    let mut rng = SplitMix64::new(77);
    let mut world = World::new();
    let bodies: Vec<Entity> = (0..600).map(|_| world.spawn(())).collect();
    let mut colliders = Vec::new();
    for (k, &body) in bodies.iter().enumerate() {
        let c =
            Vec3::new(rng.range_f32(0.0, 60.0), rng.range_f32(0.0, 60.0), rng.range_f32(0.0, 20.0));
        for part in 0..3 {
            let at = c + Vec3::new(part as f32 * 0.8, 0.0, 0.0);
            let e = if k % 5 == 0 {
                world.spawn((Aabb::new(at, at + Vec3::ONE),))
            } else {
                world.spawn((Aabb::new(at, at + Vec3::ONE), ColliderOf(body)))
            };
            colliders.push(e);
        }
    }
    let config = PluginConfig {
        threads,
        broad_phase: PersistentConfig {
            tree: broadphase::tree::GridTreeConfig { split_threshold: 64, ..Default::default() },
            ..PersistentConfig::default()
        },
        ..PluginConfig::default()
    };
    let mut plugin = BroadPhasePlugin::with_config(config);
    let mut hasher = DefaultHasher::new();
    for frame in 0..20 {
        for &e in colliders.iter().step_by(2) {
            let mut b = world.get::<&mut Aabb>(e).unwrap();
            let step = Vec3::new(rng.range_f32(-0.6, 0.6), rng.range_f32(-0.6, 0.6), 0.0);
            b.min += step;
            b.max += step;
        }
        for _ in 0..20 {
            let e = colliders[rng.below(colliders.len())];
            let body = bodies[rng.below(bodies.len())];
            world.insert_one(e, ColliderOf(body)).unwrap();
        }
        plugin.run(&mut world).unwrap();
        assert_eq!(plugin.body_pairs(), expected_body_pairs(&world), "frame {frame}");
        (plugin.pairs(), plugin.body_pairs(), plugin.body_started(), plugin.body_ended())
            .hash(&mut hasher);
    }
    hasher.finish()
}

#[test]
fn body_lists_are_the_same_on_any_thread_count() {
    let one = hash_run(1);
    for threads in [2, 4] {
        assert_eq!(hash_run(threads), one, "{threads} threads");
    }
}

#[test]
fn a_restore_and_replay_gives_the_same_body_lists() {
    let mut world = World::new();
    let body = world.spawn(());
    let other = world.spawn(());
    let parts: Vec<Entity> =
        (0..4).map(|k| world.spawn((unit(k as f32 * 0.5), ColliderOf(body)))).collect();
    let rock = world.spawn((unit(3.0),));
    let mut plugin = plugin(2);
    plugin.run(&mut world).unwrap();
    let mut saved = PluginSnapshot::default();
    plugin.snapshot_into(&mut saved);
    let frames = |plugin: &mut BroadPhasePlugin, world: &mut World| {
        let mut lists = Vec::new();
        for frame in 0..6 {
            *world.get::<&mut Aabb>(rock).unwrap() = unit(2.5 - frame as f32 * 0.5);
            if frame == 2 {
                world.insert_one(parts[0], ColliderOf(other)).unwrap();
            }
            if frame == 4 {
                world.remove_one::<ColliderOf>(parts[1]).unwrap();
            }
            plugin.run(world).unwrap();
            lists.push((
                plugin.body_pairs().to_vec(),
                plugin.body_started().to_vec(),
                plugin.body_ended().to_vec(),
            ));
        }
        lists
    };
    let first = frames(&mut plugin, &mut world);
    assert!(first.iter().any(|(pairs, _, _)| pairs.len() > 1), "{first:?}");
    // The game puts its world back; the plugin its state.
    world.insert_one(parts[0], ColliderOf(body)).unwrap();
    world.insert_one(parts[1], ColliderOf(body)).unwrap();
    *world.get::<&mut Aabb>(rock).unwrap() = unit(3.0);
    plugin.restore(&saved);
    assert!(plugin.body_pairs().is_empty());
    assert_eq!(frames(&mut plugin, &mut world), first);
}
