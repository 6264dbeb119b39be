//! Rollback of the ECS plugin: a snapshot taken after a run, restored
//! after more frames of spawns, despawns, moves, static, sleeping, layer
//! and body-link changes, replays the same frames into the same pairs,
//! started, ended, touching lists, body lists and query answers, bit for
//! bit, and the same broad-phase updates
//! (path, index rebuilds, counts: the index comes back with the snapshot),
//! whether the plugin runs on 1 or 2 threads, with static changes
//! detected or notified.
//!
//! The test keeps its own model of the world (each entity's handle and
//! components) and restores the hecs `World` the way a game would: it
//! despawns every entity and spawns the snapshot's ones again at their own
//! handles (`World::spawn_at`), so the world lists them in another order
//! than before. Replayed spawns take the handles the first run got. Each
//! snapshot is restored twice: into the plugin that went on (from
//! `snapshot`) and into a new plugin with the other thread count (from a
//! reused snapshot that `snapshot_into` overwrote); every replayed frame's
//! pairs are also the brute-force pairs of the world. Small random worlds
//! run as a property test; a big one (6,000 entities) merges its contact
//! lists, the restore's too, in pieces on 2 threads. With the `serde`
//! feature, each snapshot also goes through JSON and back into a new
//! plugin, which replays the same way.

use crate::ecs_support::expected_pairs;
use broadphase::ecs::hecs::{Entity, EntityBuilder, World};
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, Collider, ColliderOf, CollisionLayers, PluginConfig, PluginSnapshot,
    SleepChanges, Sleeping, Static, StaticChanges,
};
use broadphase::glam::Vec3;
use broadphase::persistent::{PersistentConfig, UpdateStats};
use broadphase::query::Ray;
use broadphase::tree::GridTreeConfig;
use broadphase_scenes::SplitMix64;
use proptest::prelude::*;

const SIDE: f32 = 50.0;
const SIZE: f32 = 7.0;

/// How an entity's box is given.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Shape {
    Boxed(Aabb),
    Placed(Vec3, Collider),
}

/// One entity as the test knows it.
#[derive(Clone, Copy, Debug)]
struct Thing {
    entity: Entity,
    shape: Shape,
    is_static: bool,
    layers: Option<CollisionLayers>,
    asleep: bool,
    /// The body its `ColliderOf` names.
    body: Option<Entity>,
}

impl Thing {
    /// Spawns it at `at`, or where the world says (`None`); returns its
    /// entity.
    fn spawn(&self, world: &mut World, at: Option<Entity>) -> Entity {
        let mut builder = EntityBuilder::new();
        match self.shape {
            Shape::Boxed(aabb) => builder.add(aabb),
            Shape::Placed(at, collider) => builder.add(at).add(collider),
        };
        if self.is_static {
            builder.add(Static);
        }
        if let Some(layers) = self.layers {
            builder.add(layers);
        }
        if self.asleep {
            builder.add(Sleeping);
        }
        if let Some(body) = self.body {
            builder.add(ColliderOf(body));
        }
        match at {
            Some(entity) => {
                world.spawn_at(entity, builder.build());
                entity
            }
            None => world.spawn(builder.build()),
        }
    }
}

/// One change to the world, or a call on the plugin.
#[derive(Clone, Copy, Debug)]
enum Op {
    /// Spawns the thing; its entity is the one `World::spawn` gives the
    /// first time (`None`), then the one recorded.
    Spawn(Thing, Option<Entity>),
    Despawn(Entity),
    Move(Entity, Shape),
    SetStatic(Entity, bool),
    SetLayers(Entity, Option<CollisionLayers>),
    SetAsleep(Entity, bool),
    SetBody(Entity, Option<Entity>),
    StaticsChanged,
    SleepersChanged,
    Run,
    Query(Aabb, Ray),
}

/// What an op gave; floats as bits. A test record, a few hundred per
/// case: its size does not matter.
#[derive(Debug, PartialEq)]
#[allow(clippy::large_enum_variant)]
enum Output {
    Spawned(Entity),
    Done,
    Ran {
        pairs: Vec<(Entity, Entity)>,
        started: Vec<(Entity, Entity)>,
        ended: Vec<(Entity, Entity)>,
        /// Every entity the model ever held, with its `touching` list.
        touching: Vec<Vec<Entity>>,
        /// The run's dynamic and static boxes.
        boxes: [usize; 2],
        body_pairs: Vec<(Entity, Entity)>,
        body_started: Vec<(Entity, Entity)>,
        body_ended: Vec<(Entity, Entity)>,
        /// What the broad phase's update did: its path, whether it rebuilt
        /// the index, its counts.
        update: UpdateStats,
    },
    Answered {
        boxes: Vec<Entity>,
        hits: Vec<(Entity, u32)>,
    },
}

/// The world as the test knows it, and every entity it ever spawned.
#[derive(Clone, Debug, Default)]
struct Model {
    live: Vec<Thing>,
    ever: Vec<Entity>,
}

impl Model {
    fn find(&self, entity: Entity) -> usize {
        self.live.iter().position(|t| t.entity == entity).expect("a live entity")
    }

    /// Rebuilds `world` as the model says: every entity despawned, then
    /// the model's spawned again at their handles (in reverse, so the
    /// world lists them in another order than the first run's).
    fn restore(&self, world: &mut World) {
        let all: Vec<Entity> = world.iter().map(|e| e.entity()).collect();
        for entity in all {
            world.despawn(entity).unwrap();
        }
        for thing in self.live.iter().rev() {
            thing.spawn(world, Some(thing.entity));
        }
    }

    fn apply(&mut self, world: &mut World, plugin: &mut BroadPhasePlugin, op: Op) -> Output {
        match op {
            Op::Spawn(mut thing, at) => {
                thing.entity = thing.spawn(world, at);
                self.live.push(thing);
                if !self.ever.contains(&thing.entity) {
                    self.ever.push(thing.entity);
                }
                Output::Spawned(thing.entity)
            }
            Op::Despawn(entity) => {
                world.despawn(entity).unwrap();
                self.live.swap_remove(self.find(entity));
                Output::Done
            }
            Op::Move(entity, shape) => {
                match shape {
                    Shape::Boxed(aabb) => *world.get::<&mut Aabb>(entity).unwrap() = aabb,
                    Shape::Placed(at, _) => *world.get::<&mut Vec3>(entity).unwrap() = at,
                }
                let k = self.find(entity);
                self.live[k].shape = shape;
                Output::Done
            }
            Op::SetStatic(entity, is_static) => {
                if is_static {
                    world.insert_one(entity, Static).unwrap();
                } else {
                    world.remove_one::<Static>(entity).unwrap();
                }
                let k = self.find(entity);
                self.live[k].is_static = is_static;
                Output::Done
            }
            Op::SetLayers(entity, layers) => {
                match layers {
                    Some(layers) => world.insert_one(entity, layers).unwrap(),
                    // Fails only where there were none: nothing to do.
                    None => _ = world.remove_one::<CollisionLayers>(entity),
                }
                let k = self.find(entity);
                self.live[k].layers = layers;
                Output::Done
            }
            Op::SetAsleep(entity, asleep) => {
                if asleep {
                    world.insert_one(entity, Sleeping).unwrap();
                } else {
                    world.remove_one::<Sleeping>(entity).unwrap();
                }
                let k = self.find(entity);
                self.live[k].asleep = asleep;
                Output::Done
            }
            Op::SetBody(entity, body) => {
                match body {
                    Some(body) => world.insert_one(entity, ColliderOf(body)).unwrap(),
                    None => _ = world.remove_one::<ColliderOf>(entity),
                }
                let k = self.find(entity);
                self.live[k].body = body;
                Output::Done
            }
            Op::StaticsChanged => {
                plugin.statics_changed();
                Output::Done
            }
            Op::SleepersChanged => {
                plugin.sleepers_changed();
                Output::Done
            }
            Op::Run => {
                plugin.run(world).unwrap();
                Output::Ran {
                    pairs: plugin.pairs().to_vec(),
                    started: plugin.started().to_vec(),
                    ended: plugin.ended().to_vec(),
                    touching: self.ever.iter().map(|&e| plugin.touching(e).to_vec()).collect(),
                    boxes: [plugin.stats().dynamic_boxes, plugin.stats().static_boxes],
                    body_pairs: plugin.body_pairs().to_vec(),
                    body_started: plugin.body_started().to_vec(),
                    body_ended: plugin.body_ended().to_vec(),
                    update: plugin.stats().broad_phase,
                }
            }
            Op::Query(aabb, ray) => {
                let mut boxes = Vec::new();
                plugin.query_aabb(&aabb, CollisionLayers::ALL, &mut boxes).unwrap();
                let mut hits = Vec::new();
                plugin.ray_hits(&ray, CollisionLayers::ALL, &mut hits).unwrap();
                let hits = hits.into_iter().map(|(e, t)| (e, t.to_bits())).collect();
                Output::Answered { boxes, hits }
            }
        }
    }
}

/// Draws ops that fit the model.
struct Draw {
    rng: SplitMix64,
    notify: bool,
    /// A static entity changed since the last run (with `notify`, the
    /// game says so before the run).
    statics_dirty: bool,
    /// A sleeping entity was edited (reported in either mode) or, with
    /// `notify`, the sleeping set changed since the last run.
    sleepers_dirty: bool,
}

impl Draw {
    fn point(&mut self) -> Vec3 {
        Vec3::new(
            self.rng.range_f32(0.0, SIDE),
            self.rng.range_f32(0.0, SIDE),
            self.rng.range_f32(0.0, SIDE),
        )
    }

    fn layers(&mut self) -> Option<CollisionLayers> {
        match self.rng.below(8) {
            0 => Some(CollisionLayers::new(1, 2)),
            1 => Some(CollisionLayers::new(2, 1)),
            2 => Some(CollisionLayers::ALL),
            _ => None,
        }
    }

    fn shape_like(&mut self, shape: Option<Shape>) -> Shape {
        let boxed = match shape {
            Some(Shape::Boxed(_)) => true,
            Some(Shape::Placed(..)) => false,
            None => self.rng.below(2) == 0,
        };
        if boxed {
            let min = self.point();
            let size = Vec3::new(
                self.rng.range_f32(0.0, SIZE),
                self.rng.range_f32(0.0, SIZE),
                self.rng.range_f32(0.0, SIZE),
            );
            Shape::Boxed(Aabb::new(min, min + size))
        } else {
            let collider = match shape {
                Some(Shape::Placed(_, collider)) => collider,
                _ => Collider::cuboid(Vec3::splat(self.rng.range_f32(0.1, SIZE / 2.0))),
            };
            Shape::Placed(self.point(), collider)
        }
    }

    fn thing(&mut self) -> Thing {
        Thing {
            entity: Entity::DANGLING,
            shape: self.shape_like(None),
            is_static: self.rng.below(5) == 0,
            layers: self.layers(),
            asleep: self.rng.below(6) == 0,
            body: None,
        }
    }

    /// A body for `collider`'s link the plugin accepts (an entity that is
    /// no collider of another, for a collider that is no body), or none.
    fn body_for(&mut self, model: &Model, collider: Entity) -> Option<Entity> {
        let is_body = model.live.iter().any(|t| t.body == Some(collider));
        let bodies: Vec<Entity> =
            model.live.iter().filter(|t| t.body.is_none()).map(|t| t.entity).collect();
        if is_body || self.rng.below(4) == 0 {
            return None;
        }
        Some(bodies[self.rng.below(bodies.len())])
    }

    fn op(&mut self, model: &Model) -> Op {
        let roll = self.rng.below(100);
        if model.live.is_empty() || roll < 8 {
            let thing = self.thing();
            self.statics_dirty |= thing.is_static;
            self.sleepers_dirty |= self.notify && thing.asleep;
            return Op::Spawn(thing, None);
        }
        let thing = model.live[self.rng.below(model.live.len())];
        self.statics_dirty |= thing.is_static;
        // Edits of a sleeping entity are reported in either mode; the
        // sleeping set's changes only with `notify`.
        let sleeping = thing.asleep && !thing.is_static;
        self.sleepers_dirty |= (self.notify || matches!(roll, 17..=69)) && sleeping;
        match roll {
            8..=13 => {
                if model.live.iter().any(|t| t.body == Some(thing.entity)) {
                    // A body despawned unlinks its colliders first.
                    let collider = model.live.iter().find(|t| t.body == Some(thing.entity));
                    return Op::SetBody(collider.expect("found").entity, None);
                }
                Op::Despawn(thing.entity)
            }
            14..=16 => {
                self.statics_dirty = true;
                Op::SetStatic(thing.entity, !thing.is_static)
            }
            17..=19 => Op::SetLayers(thing.entity, self.layers()),
            20..=34 => Op::Move(thing.entity, self.shape_like(Some(thing.shape))),
            35..=69 => {
                // A small step.
                let step = Vec3::splat(self.rng.range_f32(-0.4, 0.4));
                Op::Move(
                    thing.entity,
                    match thing.shape {
                        Shape::Boxed(b) => Shape::Boxed(Aabb::new(b.min + step, b.max + step)),
                        Shape::Placed(at, collider) => Shape::Placed(at + step, collider),
                    },
                )
            }
            70..=71 => Op::StaticsChanged,
            72 => {
                self.sleepers_dirty |= self.notify && !thing.is_static;
                Op::SetAsleep(thing.entity, !thing.asleep)
            }
            95..=96 => Op::SetBody(thing.entity, self.body_for(model, thing.entity)),
            73..=94 => {
                if self.notify && self.statics_dirty {
                    self.statics_dirty = false;
                    Op::StaticsChanged
                } else if self.sleepers_dirty {
                    self.sleepers_dirty = false;
                    Op::SleepersChanged
                } else {
                    Op::Run
                }
            }
            _ => {
                let origin =
                    Vec3::new(-1.0, self.rng.range_f32(0.0, SIDE), self.rng.range_f32(0.0, SIDE));
                let dir =
                    Vec3::new(1.0, self.rng.range_f32(-0.2, 0.2), self.rng.range_f32(-0.2, 0.2));
                let min = self.point();
                Op::Query(
                    Aabb::new(min, min + Vec3::splat(SIZE)),
                    Ray::new(origin, dir, f32::INFINITY),
                )
            }
        }
    }
}

fn config(threads: usize, notify: bool, margin: f32, tiny: bool) -> PluginConfig {
    let tree = if tiny {
        GridTreeConfig { split_threshold: 32, ..GridTreeConfig::default() }
    } else {
        GridTreeConfig::default()
    };
    PluginConfig {
        threads,
        broad_phase: PersistentConfig { margin, tree, ..PluginConfig::default().broad_phase },
        static_changes: if notify { StaticChanges::Notify } else { StaticChanges::Detect },
        sleep_changes: if notify { SleepChanges::Notify } else { SleepChanges::Detect },
    }
}

/// Checks `plugin`, just restored, against what it published at the
/// snapshot.
fn check_restored(plugin: &BroadPhasePlugin, at_snapshot: &Output, ever: &[Entity]) {
    let Output::Ran { pairs, started, ended, touching, boxes, body_pairs, .. } = at_snapshot else {
        unreachable!("a snapshot is taken after a run")
    };
    assert_eq!(plugin.pairs(), pairs);
    assert_eq!(plugin.started(), started);
    assert_eq!(plugin.ended(), ended);
    assert_eq!(plugin.body_pairs(), body_pairs);
    assert_eq!([plugin.stats().dynamic_boxes, plugin.stats().static_boxes], *boxes);
    for (k, &entity) in ever.iter().enumerate() {
        let want: &[Entity] = touching.get(k).map_or(&[], Vec::as_slice);
        assert_eq!(plugin.touching(entity), want, "touching({entity:?}) after the restore");
    }
}

/// Replays `ops` on the restored `world` and `plugin`.
fn replay(
    world: &mut World,
    plugin: &mut BroadPhasePlugin,
    mut model: Model,
    ops: &[Op],
    recorded: &[Output],
) {
    for (step, (&op, want)) in ops.iter().zip(recorded).enumerate() {
        let got = model.apply(world, plugin, op);
        assert_eq!(&got, want, "replayed op {step} ({op:?}) differs");
        if let Output::Ran { pairs, .. } = &got {
            assert_eq!(pairs, &expected_pairs(world), "replayed run {step} is not exact");
        }
    }
}

/// Runs `before` ops and a run, snapshots, runs `after` ops recording
/// their outputs, then restores world and plugin and replays them twice.
fn rollback(
    seed: u64,
    start: usize,
    before: usize,
    after: usize,
    threads: [usize; 2],
    make: impl Fn(usize) -> PluginConfig,
    notify: bool,
) {
    let mut draw =
        Draw { rng: SplitMix64::new(seed), notify, statics_dirty: false, sleepers_dirty: false };
    let mut world = World::new();
    let mut plugin = BroadPhasePlugin::with_config(make(threads[0]));
    let mut model = Model::default();
    for _ in 0..start {
        let thing = draw.thing();
        model.apply(&mut world, &mut plugin, Op::Spawn(thing, None));
    }
    let mut reused = PluginSnapshot::default();
    let stale_at = draw.rng.below(before + 1);
    for step in 0..before {
        let op = draw.op(&model);
        model.apply(&mut world, &mut plugin, op);
        if step == stale_at {
            plugin.snapshot_into(&mut reused);
        }
    }
    if notify && draw.statics_dirty {
        model.apply(&mut world, &mut plugin, Op::StaticsChanged);
        draw.statics_dirty = false;
    }
    if draw.sleepers_dirty {
        model.apply(&mut world, &mut plugin, Op::SleepersChanged);
        draw.sleepers_dirty = false;
    }
    let published = model.apply(&mut world, &mut plugin, Op::Run);
    let snapshot = plugin.snapshot();
    plugin.snapshot_into(&mut reused);
    let at_snapshot = model.clone();

    let mut ops = Vec::with_capacity(after + 2);
    let mut recorded = Vec::with_capacity(after + 2);
    for _ in 0..after {
        let mut op = draw.op(&model);
        let out = model.apply(&mut world, &mut plugin, op);
        if let (Op::Spawn(_, at), Output::Spawned(entity)) = (&mut op, &out) {
            *at = Some(*entity);
        }
        ops.push(op);
        recorded.push(out);
    }
    for op in [Op::StaticsChanged, Op::SleepersChanged, Op::Run] {
        recorded.push(model.apply(&mut world, &mut plugin, op));
        ops.push(op);
    }
    // Every entity of the run, in the order the first run met them.
    let ever = model.ever.clone();

    at_snapshot.restore(&mut world);
    plugin.restore(&snapshot);
    check_restored(&plugin, &published, &ever);
    replay(&mut world, &mut plugin, at_snapshot.clone(), &ops, &recorded);

    // Through bytes: the snapshot read back restores into a new plugin
    // and replays as the original does.
    #[cfg(feature = "serde")]
    {
        let json = serde_json::to_string(&snapshot).unwrap();
        let read: PluginSnapshot = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&read).unwrap(), json);
        at_snapshot.restore(&mut world);
        let mut fresh = BroadPhasePlugin::with_config(make(threads[0]));
        fresh.restore(&read);
        check_restored(&fresh, &published, &ever);
        replay(&mut world, &mut fresh, at_snapshot.clone(), &ops, &recorded);
    }

    at_snapshot.restore(&mut world);
    let mut other = BroadPhasePlugin::with_config(make(threads[1]));
    other.restore(&reused);
    assert_eq!(other.config().broad_phase, make(threads[0]).broad_phase);
    check_restored(&other, &published, &ever);
    replay(&mut world, &mut other, at_snapshot, &ops, &recorded);
}

#[test]
fn fixed_seeds_replay_with_statics_detected_and_notified() {
    let make = |threads| config(threads, false, 0.0, false);
    rollback(7, 60, 40, 80, [1, 2], make, false);
    let make = |threads| config(threads, true, 0.5, true);
    rollback(8, 60, 40, 80, [2, 1], make, true);
}

#[test]
fn a_big_world_replays_its_contact_merge_on_threads() {
    // 6,000 entities, tens of thousands of pairs: the contact lists (and
    // the restore's merge of them) run in pieces on 2 threads.
    let make = |threads| config(threads, false, 0.0, false);
    rollback(9, 6_000, 30, 60, [2, 1], make, false);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn replays_after_a_restore_are_bit_identical(
        seed in any::<u64>(),
        start in 0usize..100,
        before in 0usize..120,
        after in 1usize..120,
        notify in any::<bool>(),
        margin in prop_oneof![Just(0.0f32), Just(0.5f32)],
        tiny in any::<bool>(),
        threads in prop_oneof![Just([1usize, 2]), Just([2usize, 1])],
    ) {
        let make = |threads| config(threads, notify, margin, tiny);
        rollback(seed, start, before, after, threads, make, notify);
    }
}

/// What a frame published, kept to compare a replay with.
type Frame = [Vec<(Entity, Entity)>; 3];

/// Moves every particle of `world` by its velocity, bouncing off the walls
/// of a cube of side `side` (the same arithmetic in every replay).
fn step_particles(world: &mut World, side: f32) {
    for (at, velocity) in world.query_mut::<(&mut Vec3, &Velocity)>() {
        *at += velocity.0;
        *at = at.clamp(Vec3::ZERO, Vec3::splat(side));
    }
}

/// A particle's step per frame.
#[derive(Clone, Copy, Debug)]
struct Velocity(Vec3);

#[test]
fn a_100k_world_restored_replays_8_frames_bit_identical_on_any_thread_count() {
    // 100,000 moving particles, a tenth asleep, every eighth a collider of
    // a four-collider body: snapshot after frame 2, record frames 3..=10,
    // then restore world and plugin (also into a plugin of another thread
    // count) and replay the 8 frames.
    let side = 330.0;
    let mut rng = SplitMix64::new(100_000);
    let mut world = World::new();
    let bodies: Vec<Entity> = (0..2_500).map(|_| world.spawn(())).collect();
    for i in 0..100_000usize {
        let at =
            Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side));
        let step =
            Vec3::new(rng.range_f32(-0.3, 0.3), rng.range_f32(-0.3, 0.3), rng.range_f32(-0.3, 0.3));
        let mut builder = EntityBuilder::new();
        builder.add(at).add(Collider::sphere(rng.range_f32(0.5, 2.0)));
        if i % 10 == 3 {
            builder.add(Sleeping);
        } else {
            builder.add(Velocity(step));
        }
        if i % 8 == 0 {
            builder.add(ColliderOf(bodies[(i / 8) % bodies.len()]));
        }
        world.spawn(builder.build());
    }
    let config = |threads| PluginConfig { threads, ..PluginConfig::default() };
    let mut plugin = BroadPhasePlugin::with_config(config(2));
    let published = |plugin: &BroadPhasePlugin| -> Frame {
        [plugin.pairs().to_vec(), plugin.started().to_vec(), plugin.ended().to_vec()]
    };
    for _ in 0..3 {
        step_particles(&mut world, side);
        plugin.run(&mut world).unwrap();
    }
    let snapshot = plugin.snapshot();
    let saved: Vec<(Entity, Vec3)> =
        world.query_mut::<(Entity, &Vec3)>().into_iter().map(|(e, at)| (e, *at)).collect();
    let mut recorded = Vec::new();
    for _ in 0..8 {
        step_particles(&mut world, side);
        plugin.run(&mut world).unwrap();
        recorded.push((published(&plugin), plugin.body_pairs().to_vec()));
    }
    assert!(recorded.iter().all(|(frame, _)| frame[0].len() > 10_000), "a busy world");
    assert!(recorded.iter().any(|(frame, _)| !frame[1].is_empty()), "pairs start");

    for threads in [2, 1] {
        for &(entity, at) in &saved {
            *world.get::<&mut Vec3>(entity).unwrap() = at;
        }
        let mut restored = BroadPhasePlugin::with_config(config(threads));
        restored.restore(&snapshot);
        for (k, want) in recorded.iter().enumerate() {
            step_particles(&mut world, side);
            restored.run(&mut world).unwrap();
            let got = (published(&restored), restored.body_pairs().to_vec());
            assert!(&got == want, "{threads} thread(s): replayed frame {k} differs");
        }
    }
}
