//! The plugin's pairs equal brute force over the same entities, and its
//! events equal the difference of consecutive brute-force frames: random
//! worlds (boxes and colliders, random layers, static/dynamic mixes) over
//! several frames of moves, spawns, despawns, kind and layer changes; and
//! one large scene against sort-and-sweep.

use crate::ecs_support;

use broadphase::ecs::hecs::{Entity, EntityBuilder, World};
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, Collider, CollisionLayers, PluginConfig, Static, StaticChanges,
};
use broadphase::glam::Vec3;
use broadphase::oracle::{SortAndSweep, brute_force_pairs};
use broadphase::persistent::PersistentConfig;
use broadphase_scenes::sparse20k;
use ecs_support::{cube, expected_pairs, minus};
use proptest::prelude::*;

/// Layer sets the generator picks from (`None`: no component).
const LAYERS: [Option<CollisionLayers>; 6] = [
    None,
    Some(CollisionLayers::new(1, u32::MAX)),
    Some(CollisionLayers::new(2, 1)),
    Some(CollisionLayers::new(4, 4 | 1)),
    Some(CollisionLayers::new(1 | 2, 2)),
    Some(CollisionLayers::NONE),
];

#[derive(Clone, Copy, Debug)]
struct Spec {
    /// Min corner (Aabb) or center (collider), on a half-unit lattice so
    /// touching faces are common.
    at: Vec3,
    size: f32,
    collider: bool,
    is_static: bool,
    layers: usize,
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Move(usize, Vec3),
    Spawn(Spec),
    Despawn(usize),
    ToggleStatic(usize),
    SetLayers(usize, usize),
}

fn lattice() -> impl Strategy<Value = Vec3> {
    (0u8..24, 0u8..24, 0u8..6).prop_map(|(x, y, z)| Vec3::new(x as f32, y as f32, z as f32) * 0.5)
}

fn spec() -> impl Strategy<Value = Spec> {
    // Most entities have no layers, so many worlds have layers on only a
    // few entities (on only statics, or only dynamics).
    let layers = prop_oneof![4 => Just(0), 1 => 1..LAYERS.len()];
    (
        lattice(),
        prop::sample::select(vec![0.0f32, 0.5, 1.0, 2.0, 3.5]),
        any::<bool>(),
        prop::bool::weighted(0.4),
        layers,
    )
        .prop_map(|(at, size, collider, is_static, layers)| Spec {
            at,
            size,
            collider,
            is_static,
            layers,
        })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<usize>(), lattice()).prop_map(|(i, p)| Op::Move(i, p)),
        2 => spec().prop_map(Op::Spawn),
        2 => any::<usize>().prop_map(Op::Despawn),
        1 => any::<usize>().prop_map(Op::ToggleStatic),
        1 => (any::<usize>(), 0..LAYERS.len()).prop_map(|(i, l)| Op::SetLayers(i, l)),
    ]
}

fn spawn(world: &mut World, s: &Spec) -> Entity {
    let mut b = EntityBuilder::new();
    if s.collider {
        b.add(s.at).add(Collider::sphere(s.size / 2.0));
    } else {
        b.add(Aabb::new(s.at, s.at + Vec3::splat(s.size)));
    }
    if s.is_static {
        b.add(Static);
    }
    if let Some(l) = LAYERS[s.layers] {
        b.add(l);
    }
    world.spawn(b.build())
}

/// Applies `op`; returns whether it touched a static entity (what a game
/// using `StaticChanges::Notify` reports).
fn apply(world: &mut World, live: &mut Vec<Entity>, op: Op) -> bool {
    if live.is_empty() {
        if let Op::Spawn(s) = op {
            live.push(spawn(world, &s));
            return s.is_static;
        }
        return false;
    }
    let touched = match op {
        Op::Move(i, _) | Op::Despawn(i) | Op::ToggleStatic(i) | Op::SetLayers(i, _) => {
            world.satisfies::<&Static>(live[i % live.len()])
        }
        Op::Spawn(s) => s.is_static,
    };
    match op {
        Op::Move(i, p) => {
            let e = live[i % live.len()];
            if let Ok(mut b) = world.get::<&mut Aabb>(e) {
                let size = b.max - b.min;
                *b = Aabb::new(p, p + size);
            } else {
                *world.get::<&mut Vec3>(e).unwrap() = p;
            }
        }
        Op::Spawn(s) => live.push(spawn(world, &s)),
        Op::Despawn(i) => {
            let e = live.swap_remove(i % live.len());
            world.despawn(e).unwrap();
        }
        Op::ToggleStatic(i) => {
            let e = live[i % live.len()];
            if world.remove_one::<Static>(e).is_err() {
                world.insert_one(e, Static).unwrap();
                return true;
            }
        }
        Op::SetLayers(i, l) => {
            let e = live[i % live.len()];
            match LAYERS[l] {
                Some(layers) => world.insert_one(e, layers).unwrap(),
                None => {
                    let _ = world.remove_one::<CollisionLayers>(e);
                }
            }
        }
    }
    touched
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn plugin_equals_brute_force_frame_after_frame(
        initial in prop::collection::vec(spec(), 0..48),
        frames in prop::collection::vec(prop::collection::vec(op(), 0..10), 1..7),
    ) {
        let mut world = World::new();
        let mut live: Vec<Entity> = initial.iter().map(|s| spawn(&mut world, s)).collect();
        // Every way of running must give the same, exact, answer: static
        // changes detected (the default) or reported by the caller
        // (Notify); no margin (every move re-indexes); every update
        // recomputing all candidates; no update ever doing so.
        let with = |broad_phase: PersistentConfig| {
            BroadPhasePlugin::with_config(PluginConfig { broad_phase, ..PluginConfig::default() })
        };
        let mut detect = BroadPhasePlugin::new();
        let mut notify = BroadPhasePlugin::with_config(PluginConfig {
            static_changes: StaticChanges::Notify,
            ..PluginConfig::default()
        });
        let mut no_margin = with(PersistentConfig { margin: 0.0, ..Default::default() });
        let mut always_full =
            with(PersistentConfig { full_rebuild_fraction: 0.0, ..Default::default() });
        let mut never_full =
            with(PersistentConfig { full_rebuild_fraction: f32::INFINITY, ..Default::default() });
        let mut prev: Vec<(Entity, Entity)> = Vec::new();
        for (frame, ops) in std::iter::once(&Vec::new()).chain(&frames).enumerate() {
            for &op in ops {
                if apply(&mut world, &mut live, op) {
                    notify.statics_changed();
                }
            }
            let expected = expected_pairs(&world);
            for plugin in [&mut detect, &mut notify, &mut no_margin, &mut always_full, &mut never_full] {
                plugin.run(&mut world).unwrap();
                let mode = *plugin.config();
                prop_assert_eq!(plugin.pairs(), &expected[..], "frame {} {:?}", frame, mode);
                prop_assert_eq!(plugin.started(), &minus(&expected, &prev)[..], "frame {} {:?}", frame, mode);
                prop_assert_eq!(plugin.ended(), &minus(&prev, &expected)[..], "frame {} {:?}", frame, mode);
            }
            prev = expected;
        }
    }
}

/// Index pairs as the plugin publishes them: entity pairs `(a, b)` with
/// `a < b`, sorted.
fn as_entities(pairs: &[[u32; 2]], entities: &[Entity]) -> Vec<(Entity, Entity)> {
    let mut out: Vec<(Entity, Entity)> = pairs
        .iter()
        .map(|&[a, b]| {
            let (a, b) = (entities[a as usize], entities[b as usize]);
            if a < b { (a, b) } else { (b, a) }
        })
        .collect();
    out.sort_unstable();
    out
}

/// sparse20k as 20,004 dynamic entities: the plugin's pairs are
/// sort-and-sweep's, mapped to entities.
#[test]
fn large_scene_equals_sort_and_sweep() {
    let scene = sparse20k();
    let mut world = World::new();
    let entities: Vec<Entity> = scene.boxes.iter().map(|b| world.spawn((*b,))).collect();
    let mut plugin = BroadPhasePlugin::new();
    plugin.run(&mut world).unwrap();

    let mut reference = Vec::new();
    SortAndSweep::default().find_pairs(&scene.boxes, &mut reference).unwrap();
    let expected = as_entities(&reference, &entities);
    assert_eq!(expected.len(), 138);
    assert_eq!(plugin.pairs(), expected);
}

/// A few hundred boxes, half static, all with layers: equals brute force on
/// the raw boxes with the rule applied by hand.
#[test]
fn mixed_world_equals_brute_force_on_raw_boxes() {
    let scene = sparse20k();
    let boxes = &scene.boxes[..3_000];
    let mut world = World::new();
    let layers = |i: usize| {
        CollisionLayers::new(1 << (i % 3), if i.is_multiple_of(7) { 1 } else { u32::MAX })
    };
    let entities: Vec<Entity> = boxes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if i.is_multiple_of(2) {
                world.spawn((*b, Static, layers(i)))
            } else {
                world.spawn((*b, layers(i)))
            }
        })
        .collect();
    let mut plugin = BroadPhasePlugin::new();
    plugin.run(&mut world).unwrap();
    let mut all = Vec::new();
    brute_force_pairs(boxes, &mut all).unwrap();
    let mut expected: Vec<(Entity, Entity)> = all
        .iter()
        .filter(|&&[a, b]| !(a.is_multiple_of(2) && b.is_multiple_of(2)))
        .filter(|&&[a, b]| layers(a as usize).interacts_with(&layers(b as usize)))
        .map(|&[a, b]| (entities[a as usize], entities[b as usize]))
        .collect();
    expected.sort_unstable();
    assert_eq!(plugin.pairs(), expected);
    assert_eq!(plugin.pairs(), expected_pairs(&world));
}

/// About 200,000 pairs among 20,000 entities on 2 threads: the plugin maps
/// long lists to entities in pieces on all threads; frame after frame the
/// pairs are sort-and-sweep's and the events their difference.
#[test]
fn long_pair_lists_published_on_all_threads() {
    let mut rng = broadphase_scenes::SplitMix64::new(21);
    let mut world = World::new();
    let mut boxes: Vec<Aabb> = (0..20_000)
        .map(|_| {
            let at = Vec3::new(
                rng.range_f32(0.0, 40.0),
                rng.range_f32(0.0, 40.0),
                rng.range_f32(0.0, 40.0),
            );
            cube(at, 2.0)
        })
        .collect();
    let entities: Vec<Entity> = boxes.iter().map(|b| world.spawn((*b,))).collect();
    let config = PluginConfig { threads: 2, ..PluginConfig::default() };
    let mut plugin = BroadPhasePlugin::with_config(config);
    let mut before: Vec<(Entity, Entity)> = Vec::new();
    for frame in 0..3 {
        if frame > 0 {
            for (i, (b, &e)) in boxes.iter_mut().zip(&entities).enumerate() {
                if i % 3 == frame % 3 {
                    *b = cube(b.min + Vec3::new(1.5, 0.0, 0.0), 2.0);
                    *world.get::<&mut Aabb>(e).unwrap() = *b;
                }
            }
        }
        plugin.run(&mut world).unwrap();
        let mut reference = Vec::new();
        SortAndSweep::default().find_pairs(&boxes, &mut reference).unwrap();
        let expected = as_entities(&reference, &entities);
        assert!(expected.len() > 100_000, "frame {frame}: {} pairs", expected.len());
        assert_eq!(plugin.pairs(), expected, "frame {frame}");
        assert_eq!(plugin.started(), minus(&expected, &before), "frame {frame}");
        assert_eq!(plugin.ended(), minus(&before, &expected), "frame {frame}");
        before = expected;
    }
}

/// A marker that puts entities in an archetype of their own.
struct Tag;

/// 60,000 entities in four archetypes (boxes and colliders, with and
/// without a marker), spawned interleaved, on 2 threads: the boxes are
/// made in chunks on both threads, archetype by archetype, and every pair
/// is still sort-and-sweep's, frame after frame as they move.
#[test]
fn boxes_of_many_archetypes_made_on_all_threads() {
    let mut rng = broadphase_scenes::SplitMix64::new(5);
    let mut world = World::new();
    let mut centers = Vec::new();
    let mut entities = Vec::new();
    let collider = Collider::cuboid(Vec3::splat(0.5));
    for i in 0..60_000 {
        let at = Vec3::new(
            rng.range_f32(0.0, 120.0),
            rng.range_f32(0.0, 120.0),
            rng.range_f32(0.0, 12.0),
        );
        centers.push(at);
        let aabb = collider.aabb_at(at);
        entities.push(match i % 4 {
            0 => world.spawn((aabb,)),
            1 => world.spawn((at, collider)),
            2 => world.spawn((aabb, Tag)),
            _ => world.spawn((at, collider, Tag)),
        });
    }
    let config = PluginConfig { threads: 2, ..PluginConfig::default() };
    let mut plugin = BroadPhasePlugin::with_config(config);
    for frame in 0..3 {
        if frame > 0 {
            for (i, (at, &e)) in centers.iter_mut().zip(&entities).enumerate() {
                *at += Vec3::new(0.3 * frame as f32, (i % 5) as f32 * 0.1, 0.0);
                if i % 2 == 0 {
                    *world.get::<&mut Aabb>(e).unwrap() = collider.aabb_at(*at);
                } else {
                    *world.get::<&mut Vec3>(e).unwrap() = *at;
                }
            }
        }
        plugin.run(&mut world).unwrap();
        let boxes: Vec<Aabb> = centers.iter().map(|&at| collider.aabb_at(at)).collect();
        let mut reference = Vec::new();
        SortAndSweep::default().find_pairs(&boxes, &mut reference).unwrap();
        let expected = as_entities(&reference, &entities);
        assert!(expected.len() > 1_000, "frame {frame}: {} pairs", expected.len());
        assert_eq!(plugin.pairs(), expected, "frame {frame}");
    }
}

/// Marker `N`: entities with different sets of markers are in different
/// archetypes.
struct Marker<const N: usize>;

/// 4,000 entities spread over 128 archetypes (every subset of seven
/// markers), more than the entity pass hands to jobs, beside one big
/// archetype read in batches, on 2 threads: every pair is brute force's,
/// whichever way each archetype was read.
#[test]
fn entities_of_many_archetypes_read_in_order() {
    use broadphase::ecs::hecs::EntityBuilder;
    let mut rng = broadphase_scenes::SplitMix64::new(8);
    let mut world = World::new();
    let mut boxes = Vec::new();
    let mut entities = Vec::new();
    for i in 0..40_000usize {
        let at = Vec3::new(
            rng.range_f32(0.0, 150.0),
            rng.range_f32(0.0, 150.0),
            rng.range_f32(0.0, 15.0),
        );
        let aabb = cube(at, 1.0);
        let mut builder = EntityBuilder::new();
        builder.add(aabb);
        // One in ten in a small archetype of its own marker set.
        let set = if i % 10 == 0 { (i / 10) % 128 } else { 0 };
        macro_rules! mark {
            ($($n:literal)*) => { $(if set & (1 << $n) != 0 { builder.add(Marker::<$n>); })* };
        }
        mark!(0 1 2 3 4 5 6);
        entities.push(world.spawn(builder.build()));
        boxes.push(aabb);
    }
    let config = PluginConfig { threads: 2, ..PluginConfig::default() };
    let mut plugin = BroadPhasePlugin::with_config(config);
    plugin.run(&mut world).unwrap();
    let mut reference = Vec::new();
    SortAndSweep::default().find_pairs(&boxes, &mut reference).unwrap();
    let expected = as_entities(&reference, &entities);
    assert!(expected.len() > 1_000, "{} pairs", expected.len());
    assert_eq!(plugin.pairs(), expected);
}

/// 140,000 entities on 2 threads, compared with last frame's list in
/// pieces: an entity replaced deep in the list (despawned, another
/// spawned, the same count) is seen, and the pairs stay sort-and-sweep's.
#[test]
fn a_replaced_entity_deep_in_a_long_list_is_seen() {
    let mut rng = broadphase_scenes::SplitMix64::new(13);
    let mut world = World::new();
    let mut spawn = |world: &mut World| {
        let at = Vec3::new(
            rng.range_f32(0.0, 200.0),
            rng.range_f32(0.0, 200.0),
            rng.range_f32(0.0, 20.0),
        );
        world.spawn((cube(at, 1.0),))
    };
    let mut entities: Vec<Entity> = (0..140_000).map(|_| spawn(&mut world)).collect();
    let config = PluginConfig { threads: 2, ..PluginConfig::default() };
    let mut plugin = BroadPhasePlugin::with_config(config);
    plugin.run(&mut world).unwrap();
    for victim in [100_000, 139_999, 70_000] {
        world.despawn(entities[victim]).unwrap();
        entities[victim] = spawn(&mut world);
        plugin.run(&mut world).unwrap();
        let boxes: Vec<Aabb> = entities.iter().map(|&e| *world.get::<&Aabb>(e).unwrap()).collect();
        let mut reference = Vec::new();
        SortAndSweep::default().find_pairs(&boxes, &mut reference).unwrap();
        assert_eq!(plugin.pairs(), as_entities(&reference, &entities), "replaced {victim}");
    }
}
