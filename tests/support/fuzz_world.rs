//! Decoding arbitrary bytes into a game's frames — spawns, despawns, moves,
//! `Static`, `Sleeping`, layer and `ColliderOf` changes, snapshots and
//! restores, runs — and the check
//! every run of the ECS plugin must pass. Shared, by `#[path]`, between the
//! cargo-fuzz target (`fuzz/fuzz_targets/ecs_world.rs`) and the stable test
//! that replays the committed corpus (`tests/integration/fuzz_corpus_replays.rs`).
//!
//! The check keeps its own model of the world (each entity's components)
//! and, after every run, compares the plugin with brute force over the
//! model: a typed [`PluginError::DeadBody`] or [`PluginError::NestedBody`]
//! naming a collider whose link is bad, else [`PluginError::InvalidBox`]
//! naming an entity whose box is bad, with the published lists left as
//! they were; otherwise exactly the overlapping pairs (layers matching, not
//! both static, not two colliders of one body), `started` and `ended` as
//! the difference from the last published list, every entity's `touching`
//! list, and the body pairs and body events derived from the pairs. A restore rebuilds the world at the
//! snapshot's handles (as a game rolling back would) and must publish the
//! snapshot's lists again.

use broadphase::ecs::hecs::{Entity, EntityBuilder, World};
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, Collider, ColliderOf, CollisionLayers, PluginConfig, PluginError,
    PluginSnapshot, SleepChanges, Sleeping, Static, StaticChanges,
};
use broadphase::glam::Vec3;
use broadphase::persistent::PersistentConfig;

/// Most entities alive at once: brute force is the oracle.
const MAX_ENTITIES: usize = 64;

/// Most operations one input decodes to.
const MAX_OPS: usize = 400;

/// Coordinates that break naive code, for the raw mode's bad boxes.
const SPECIAL: [f32; 8] =
    [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN, -0.0, 1.0e-40, 3.0e38];

/// A cursor over the fuzzer's bytes; reading past the end gives zeros.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let byte = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }

    fn exhausted(&self) -> bool {
        self.at >= self.data.len()
    }
}

/// How an entity's box is given.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Boxed(Aabb),
    Placed(Vec3, Collider),
}

impl Shape {
    fn aabb(&self) -> Aabb {
        match *self {
            Shape::Boxed(aabb) => aabb,
            Shape::Placed(at, collider) => collider.aabb_at(at),
        }
    }
}

/// One entity as the check knows it.
#[derive(Clone, Copy, Debug)]
struct Thing {
    entity: Entity,
    shape: Shape,
    is_static: bool,
    asleep: bool,
    layers: Option<CollisionLayers>,
    /// The body its `ColliderOf` names, if it has one.
    body: Option<Entity>,
    /// Its box or layers changed since the last run.
    edited: bool,
}

impl Thing {
    fn spawn(&self, world: &mut World, at: Option<Entity>) -> Entity {
        let mut builder = EntityBuilder::new();
        match self.shape {
            Shape::Boxed(aabb) => builder.add(aabb),
            Shape::Placed(at, collider) => builder.add(at).add(collider),
        };
        if self.is_static {
            builder.add(Static);
        }
        if self.asleep {
            builder.add(Sleeping);
        }
        if let Some(layers) = self.layers {
            builder.add(layers);
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

    fn layers(&self) -> CollisionLayers {
        self.layers.unwrap_or_default()
    }

    /// The body it belongs to: the one its `ColliderOf` names, or itself.
    fn body_entity(&self) -> Entity {
        self.body.unwrap_or(self.entity)
    }

    /// Whether the plugin counts it among the sleeping entities.
    fn sleeping(&self) -> bool {
        self.asleep && !self.is_static
    }

    /// What a change to it concerns: the static set, the sleeping set.
    fn touches(&self) -> Touched {
        Touched { statics: self.is_static, sleeping: self.sleeping() }
    }
}

/// Which kept sets an operation changed, so the check can report it where
/// the plugin's mode asks the game to.
#[derive(Clone, Copy, Debug, Default)]
struct Touched {
    statics: bool,
    sleeping: bool,
}

/// A small coordinate on a half grid (boxes touch and coincide), now and
/// then a special value when `raw`.
fn coordinate(bytes: &mut Bytes<'_>, raw: bool) -> f32 {
    let byte = bytes.u8();
    if raw && byte >= 250 {
        return SPECIAL[usize::from(bytes.u8()) % SPECIAL.len()];
    }
    f32::from(byte % 64) / 2.0 - 16.0
}

/// A shape from the bytes: corners in order unless `raw` says otherwise,
/// half extents never negative unless `raw`.
fn shape(bytes: &mut Bytes<'_>, raw: bool) -> Shape {
    let flags = bytes.u8();
    let mut v = [0.0f32; 6];
    for value in &mut v {
        *value = coordinate(bytes, raw);
    }
    let swapped = raw && flags & 2 != 0;
    if flags & 1 == 0 {
        let (mut min, mut max) = (Vec3::new(v[0], v[1], v[2]), Vec3::new(v[3], v[4], v[5]));
        if !swapped {
            (min, max) = (min.min(max), min.max(max));
        }
        Shape::Boxed(Aabb::new(min, max))
    } else {
        let mut half = Vec3::new(v[3], v[4], v[5]).abs() / 4.0;
        if swapped {
            half = -half;
        }
        Shape::Placed(Vec3::new(v[0], v[1], v[2]), Collider::cuboid(half))
    }
}

fn layers(bytes: &mut Bytes<'_>) -> Option<CollisionLayers> {
    let byte = bytes.u8();
    (byte & 1 == 1).then(|| CollisionLayers::new(u32::from(byte >> 1 & 7), u32::from(byte >> 4)))
}

/// A plugin's published lists.
#[derive(Clone, Debug, Default, PartialEq)]
struct Published {
    pairs: Vec<(Entity, Entity)>,
    started: Vec<(Entity, Entity)>,
    ended: Vec<(Entity, Entity)>,
    body_pairs: Vec<(Entity, Entity)>,
    body_started: Vec<(Entity, Entity)>,
    body_ended: Vec<(Entity, Entity)>,
}

impl Published {
    fn of(plugin: &BroadPhasePlugin) -> Self {
        Published {
            pairs: plugin.pairs().to_vec(),
            started: plugin.started().to_vec(),
            ended: plugin.ended().to_vec(),
            body_pairs: plugin.body_pairs().to_vec(),
            body_started: plugin.body_started().to_vec(),
            body_ended: plugin.body_ended().to_vec(),
        }
    }
}

/// What a snapshot holds on each side: the plugin's and the model's.
struct Saved {
    plugin: PluginSnapshot,
    live: Vec<Thing>,
    published: Published,
}

/// The pairs brute force finds among `live`.
fn expected_pairs(live: &[Thing]) -> Vec<(Entity, Entity)> {
    let mut pairs = Vec::new();
    for (i, a) in live.iter().enumerate() {
        for b in &live[i + 1..] {
            if (a.is_static && b.is_static)
                || !a.layers().interacts_with(&b.layers())
                || a.body_entity() == b.body_entity()
            {
                continue;
            }
            if a.shape.aabb().overlaps(&b.shape.aabb()) {
                pairs.push((a.entity.min(b.entity), a.entity.max(b.entity)));
            }
        }
    }
    pairs.sort_unstable();
    pairs
}

/// Each pair of bodies of `pairs` once, `(a, b)` with `a < b`, sorted.
fn body_pairs_of(pairs: &[(Entity, Entity)], live: &[Thing]) -> Vec<(Entity, Entity)> {
    let body = |e: Entity| live.iter().find(|t| t.entity == e).expect("live").body_entity();
    let mut bodies: Vec<_> = pairs
        .iter()
        .map(|&(a, b)| {
            let (a, b) = (body(a), body(b));
            (a.min(b), a.max(b))
        })
        .collect();
    bodies.sort_unstable();
    bodies.dedup();
    bodies
}

/// The link error a run must fail with, if some link is bad: whether it
/// names a collider whose link is bad.
fn bad_link(live: &[Thing], error: &PluginError) -> Option<bool> {
    let linked = |t: &Thing| t.body.filter(|&b| b != t.entity);
    let dead = |t: &Thing| linked(t).is_some_and(|b| !live.iter().any(|o| o.entity == b));
    let nested = |t: &Thing| {
        linked(t).is_some_and(|b| live.iter().any(|o| o.entity == b && linked(o).is_some()))
    };
    let any_bad = live.iter().any(|t| dead(t) || nested(t));
    let named_right = match *error {
        PluginError::DeadBody { collider, body } => {
            live.iter().any(|t| t.entity == collider && t.body == Some(body) && dead(t))
        }
        PluginError::NestedBody { collider, body } => {
            live.iter().any(|t| t.entity == collider && t.body == Some(body) && nested(t))
        }
        _ => return any_bad.then_some(false),
    };
    Some(named_right)
}

/// `now` minus `then`, both sorted.
fn minus(now: &[(Entity, Entity)], then: &[(Entity, Entity)]) -> Vec<(Entity, Entity)> {
    now.iter().filter(|p| then.binary_search(p).is_err()).copied().collect()
}

/// What one input's frames reached, so a test can tell that the decoder
/// still makes runs with pairs, failed runs and restores.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Reached {
    pub(crate) runs_with_pairs: usize,
    pub(crate) failed_runs: usize,
    pub(crate) restores: usize,
    /// Entities that fell asleep (not counting those spawned asleep).
    pub(crate) sleeps: usize,
    /// Runs where some body pair stood for several collider pairs.
    pub(crate) body_pairs_merged: usize,
    /// `ColliderOf` components added or changed.
    pub(crate) links: usize,
    /// Runs whose broad phase kept resting pairs aside.
    pub(crate) resting_runs: usize,
    /// Runs that changed the contact lists by their events.
    pub(crate) patched_runs: usize,
}

/// Runs the plugin once and checks it against brute force over `live`;
/// returns the published lists after the run.
fn run_and_check(
    plugin: &mut BroadPhasePlugin,
    world: &mut World,
    live: &[Thing],
    before: &Published,
    reached: &mut Reached,
) -> Published {
    let bad = live.iter().find(|t| t.shape.aabb().validate(0).is_err());
    let outcome = plugin.run(world);
    let link_error = outcome.as_ref().err().and_then(|error| bad_link(live, error));
    if let Some(named_right) = link_error {
        // Links are checked first: a bad one fails the run whatever else.
        assert!(named_right, "a bad link, but the run gave {outcome:?}");
        assert_eq!(Published::of(plugin), *before, "a failed run changed the lists");
        reached.failed_runs += 1;
        return before.clone();
    }
    let ok_links = |error: &PluginError| {
        !matches!(error, PluginError::DeadBody { .. } | PluginError::NestedBody { .. })
    };
    assert!(outcome.as_ref().err().is_none_or(ok_links), "no bad link: {outcome:?}");
    match outcome {
        Err(PluginError::InvalidBox { entity, .. }) => {
            let named = live.iter().find(|t| t.entity == entity);
            assert!(
                named.is_some_and(|t| t.shape.aabb().validate(0).is_err()),
                "InvalidBox names {entity:?}, whose box is fine: {named:?}"
            );
            assert_eq!(Published::of(plugin), *before, "a failed run changed the lists");
            reached.failed_runs += 1;
            return before.clone();
        }
        Err(other) => panic!("unexpected error {other:?}"),
        Ok(()) => assert!(bad.is_none(), "a run took the bad box of {bad:?}"),
    }
    let now = Published::of(plugin);
    let expected = expected_pairs(live);
    assert_eq!(now.pairs, expected, "pairs differ from brute force");
    reached.runs_with_pairs += usize::from(!expected.is_empty());
    assert_eq!(now.started, minus(&expected, &before.pairs), "started");
    assert_eq!(now.ended, minus(&before.pairs, &expected), "ended");
    for thing in live {
        let mut partners: Vec<Entity> = expected
            .iter()
            .filter_map(|&(a, b)| {
                (a == thing.entity).then_some(b).or((b == thing.entity).then_some(a))
            })
            .collect();
        partners.sort_unstable();
        let mut touching = plugin.touching(thing.entity).to_vec();
        touching.sort_unstable();
        assert_eq!(touching, partners, "touching({:?})", thing.entity);
    }
    // The awake pairs: those with an entity neither asleep nor static.
    let thing = |e: Entity| live.iter().find(|t| t.entity == e).expect("live");
    let at_rest = |e: Entity| thing(e).asleep || thing(e).is_static;
    let awake: Vec<_> = expected.iter().filter(|&&(a, b)| !(at_rest(a) && at_rest(b))).collect();
    assert!(plugin.awake_pairs().iter().eq(awake), "awake pairs");
    let stats = plugin.stats();
    reached.resting_runs += usize::from(stats.broad_phase.resting > 0);
    reached.patched_runs += usize::from(plugin.contact_list_stats().is_some_and(|s| s.patched));
    let bodies = body_pairs_of(&expected, live);
    assert_eq!(now.body_pairs, bodies, "body pairs");
    assert_eq!(now.body_started, minus(&bodies, &before.body_pairs), "body started");
    assert_eq!(now.body_ended, minus(&before.body_pairs, &bodies), "body ended");
    reached.body_pairs_merged += usize::from(bodies.len() < expected.len());
    now
}

/// Decodes `data` into frames and checks every run of the plugin. The
/// first byte picks the plugin: 1 or 2 threads, static changes detected or
/// notified, a margin of 0 or 0.5, sleeping changes detected or notified;
/// the second whether bad boxes (NaN, infinities, `min > max`, negative
/// half extents) may appear. The game reports changes as each mode asks.
pub(crate) fn check_world(data: &[u8]) -> Reached {
    let mut bytes = Bytes { data, at: 0 };
    let config_byte = bytes.u8();
    let raw = bytes.u8() & 1 == 1;
    let notify = config_byte & 2 != 0;
    let notify_sleep = config_byte & 8 != 0;
    let config = PluginConfig {
        threads: 1 + usize::from(config_byte & 1),
        static_changes: if notify { StaticChanges::Notify } else { StaticChanges::Detect },
        sleep_changes: if notify_sleep { SleepChanges::Notify } else { SleepChanges::Detect },
        broad_phase: PersistentConfig {
            margin: if config_byte & 4 != 0 { 0.5 } else { 0.0 },
            ..PluginConfig::default().broad_phase
        },
    };
    let mut plugin = BroadPhasePlugin::with_config(config);
    let mut world = World::new();
    let mut live: Vec<Thing> = Vec::new();
    let mut published = Published::default();
    let mut saved: Option<Saved> = None;
    let mut despawned: Vec<Entity> = Vec::new();
    let mut reached = Reached::default();

    let mut ops = 0;
    while !bytes.exhausted() && ops < MAX_OPS {
        ops += 1;
        let op = bytes.u8();
        let pick = usize::from(bytes.u8());
        let touched = match op % 14 {
            0 | 1 if live.len() < MAX_ENTITIES => {
                let mut thing = Thing {
                    entity: Entity::DANGLING,
                    shape: shape(&mut bytes, raw),
                    is_static: op & 0x10 != 0,
                    asleep: op & 0x20 != 0,
                    layers: layers(&mut bytes),
                    body: None,
                    edited: false,
                };
                thing.entity = thing.spawn(&mut world, None);
                live.push(thing);
                thing.touches()
            }
            2 if !live.is_empty() => {
                let thing = live.swap_remove(pick % live.len());
                world.despawn(thing.entity).expect("a live entity");
                despawned.push(thing.entity);
                if op & 0xc0 != 0 {
                    // The game mostly unlinks the colliders of a despawned
                    // body (else their links are dead until it does).
                    for collider in live.iter_mut().filter(|t| t.body == Some(thing.entity)) {
                        world.remove_one::<ColliderOf>(collider.entity).expect("linked");
                        collider.body = None;
                    }
                }
                thing.touches()
            }
            3 | 4 if !live.is_empty() => {
                let k = pick % live.len();
                let old = live[k];
                let entity = old.entity;
                let new = shape(&mut bytes, raw);
                match new {
                    Shape::Boxed(aabb) => {
                        let had_box = world.get::<&mut Aabb>(entity).map(|mut b| *b = aabb);
                        if had_box.is_err() {
                            world.remove::<(Vec3, Collider)>(entity).expect("placed");
                            world.insert_one(entity, aabb).expect("live");
                        }
                    }
                    Shape::Placed(at, collider) => {
                        // Fails where it was placed already: nothing to do.
                        _ = world.remove_one::<Aabb>(entity);
                        world.insert(entity, (at, collider)).expect("live");
                    }
                }
                live[k].shape = new;
                live[k].edited = true;
                old.touches()
            }
            5 if !live.is_empty() => {
                let k = pick % live.len();
                let entity = live[k].entity;
                if live[k].is_static {
                    world.remove_one::<Static>(entity).expect("static");
                } else {
                    world.insert_one(entity, Static).expect("live");
                }
                live[k].is_static = !live[k].is_static;
                // A sleeping entity turned static leaves the sleeping set,
                // and one that stops being static joins it.
                Touched { statics: true, sleeping: live[k].asleep }
            }
            6 if !live.is_empty() => {
                let k = pick % live.len();
                let entity = live[k].entity;
                let new = layers(&mut bytes);
                match new {
                    Some(layers) => world.insert_one(entity, layers).expect("live"),
                    None => _ = world.remove_one::<CollisionLayers>(entity),
                }
                live[k].layers = new;
                live[k].edited = true;
                live[k].touches()
            }
            8 => {
                saved = Some(Saved {
                    plugin: plugin.snapshot(),
                    live: live.clone(),
                    published: published.clone(),
                });
                Touched::default()
            }
            9 if saved.is_some() => {
                let saved = saved.as_ref().expect("checked");
                let all: Vec<Entity> = world.iter().map(|e| e.entity()).collect();
                for entity in all {
                    world.despawn(entity).expect("listed");
                }
                live.clone_from(&saved.live);
                for thing in live.iter().rev() {
                    thing.spawn(&mut world, Some(thing.entity));
                }
                plugin.restore(&saved.plugin);
                published = saved.published.clone();
                assert_eq!(Published::of(&plugin), published, "restore published other lists");
                reached.restores += 1;
                Touched::default()
            }
            10 if !live.is_empty() => {
                // Falls asleep or wakes.
                let k = pick % live.len();
                let entity = live[k].entity;
                if live[k].asleep {
                    world.remove_one::<Sleeping>(entity).expect("asleep");
                } else {
                    world.insert_one(entity, Sleeping).expect("live");
                }
                live[k].asleep = !live[k].asleep;
                reached.sleeps += usize::from(live[k].sleeping());
                Touched { sleeping: !live[k].is_static, ..Touched::default() }
            }
            12 if !live.is_empty() => {
                // Links a collider to a body (itself, another entity, one
                // despawned), or unlinks it.
                let k = pick % live.len();
                let entity = live[k].entity;
                let choice = bytes.u8();
                let target = usize::from(choice & 0x7f) % (live.len() + 2);
                let body = if choice & 0x80 == 0 {
                    // Mostly a link the plugin accepts: to an entity that
                    // is no collider of another, from one that is no body.
                    let is_body = live.iter().any(|t| t.body == Some(entity) && t.entity != entity);
                    let bodies: Vec<Entity> = live
                        .iter()
                        .filter(|t| t.body.is_none_or(|b| b == t.entity))
                        .map(|t| t.entity)
                        .collect();
                    (!is_body && !bodies.is_empty()).then(|| bodies[target % bodies.len()])
                } else {
                    match target {
                        t if t < live.len() => Some(live[t].entity),
                        t if t == live.len() => None,
                        _ => despawned.last().copied(),
                    }
                };
                match body {
                    Some(body) => world.insert_one(entity, ColliderOf(body)).expect("live"),
                    None => _ = world.remove_one::<ColliderOf>(entity),
                }
                live[k].body = body;
                reached.links += usize::from(body.is_some());
                Touched::default()
            }
            _ => {
                report_edited_sleepers(&mut plugin, &mut live);
                published = run_and_check(&mut plugin, &mut world, &live, &published, &mut reached);
                Touched::default()
            }
        };
        if notify && touched.statics {
            plugin.statics_changed();
        }
        if notify_sleep && touched.sleeping {
            plugin.sleepers_changed();
        }
    }
    report_edited_sleepers(&mut plugin, &mut live);
    run_and_check(&mut plugin, &mut world, &live, &published, &mut reached);
    reached
}

/// The plugin never reads a sleeping entity's box by itself: before a run,
/// the game reports (in either mode) that an entity asleep now had its box
/// or layers changed since the last run, whatever it was at the time.
fn report_edited_sleepers(plugin: &mut BroadPhasePlugin, live: &mut [Thing]) {
    if live.iter().any(|t| t.sleeping() && t.edited) {
        plugin.sleepers_changed();
    }
    for thing in live {
        thing.edited = false;
    }
}
