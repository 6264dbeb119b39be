//! Collision layers: a pair is kept iff each is on a layer the other's
//! filter accepts; no component means every layer; the rule holds for
//! dynamic-vs-dynamic and dynamic-vs-static pairs alike, and a layer change
//! is an event.

use crate::ecs_support;

use broadphase::ecs::hecs::World;
use broadphase::ecs::{BroadPhasePlugin, CollisionLayers, Static};
use broadphase::glam::Vec3;
use ecs_support::{cube, expected_pairs};

const PLAYER: u32 = 1 << 0;
const ENEMY: u32 = 1 << 1;
const BULLET: u32 = 1 << 2;
const GHOST: u32 = 1 << 3;

#[test]
fn the_rule_on_every_combination() {
    let masks = [0, PLAYER, ENEMY, PLAYER | ENEMY, BULLET, u32::MAX];
    for &am in &masks {
        for &af in &masks {
            for &bm in &masks {
                for &bf in &masks {
                    let a = CollisionLayers::new(am, af);
                    let b = CollisionLayers::new(bm, bf);
                    let keep = (am & bf) != 0 && (bm & af) != 0;
                    assert_eq!(a.interacts_with(&b), keep);
                    assert_eq!(b.interacts_with(&a), keep, "symmetric");
                }
            }
        }
    }
    assert_eq!(CollisionLayers::default(), CollisionLayers::ALL);
    assert!(!CollisionLayers::NONE.interacts_with(&CollisionLayers::ALL));
}

#[test]
fn pairs_are_dropped_inside_the_broad_phase() {
    let mut world = World::new();
    // Everything overlaps everything.
    let b = |world: &mut World, layers: Option<CollisionLayers>, is_static: bool| {
        let mut builder = broadphase::ecs::hecs::EntityBuilder::new();
        builder.add(cube(Vec3::ZERO, 1.0));
        if let Some(l) = layers {
            builder.add(l);
        }
        if is_static {
            builder.add(Static);
        }
        world.spawn(builder.build())
    };
    let player = b(&mut world, Some(CollisionLayers::new(PLAYER, ENEMY | BULLET)), false);
    let enemy = b(&mut world, Some(CollisionLayers::new(ENEMY, PLAYER | BULLET)), false);
    let enemy2 = b(&mut world, Some(CollisionLayers::new(ENEMY, PLAYER | BULLET)), false);
    let bullet = b(&mut world, Some(CollisionLayers::new(BULLET, ENEMY)), false);
    let ghost = b(&mut world, Some(CollisionLayers::new(GHOST, 0)), false);
    let plain = b(&mut world, None, false);
    let wall = b(&mut world, Some(CollisionLayers::new(u32::MAX, PLAYER)), true);
    let plain_wall = b(&mut world, None, true);

    let mut plugin = BroadPhasePlugin::new();
    plugin.run(&mut world).unwrap();
    let mut expected = vec![
        (player, enemy),
        (player, enemy2),
        (enemy, bullet),
        (enemy2, bullet),
        (player, plain),
        (enemy, plain),
        (enemy2, plain),
        (bullet, plain),
        (player, wall),
        (plain, wall),
        (player, plain_wall),
        (enemy, plain_wall),
        (enemy2, plain_wall),
        (bullet, plain_wall),
        (plain, plain_wall),
    ];
    for p in &mut expected {
        if p.0 > p.1 {
            *p = (p.1, p.0);
        }
    }
    expected.sort_unstable();
    assert_eq!(plugin.pairs(), expected);
    assert_eq!(plugin.pairs(), expected_pairs(&world));
    assert!(plugin.pairs().iter().all(|&(x, y)| x != ghost && y != ghost));

    // A layer change is seen next frame, on dynamic and static entities.
    *world.get::<&mut CollisionLayers>(ghost).unwrap() = CollisionLayers::ALL;
    *world.get::<&mut CollisionLayers>(wall).unwrap() = CollisionLayers::NONE;
    plugin.run(&mut world).unwrap();
    assert!(plugin.stats().static_rebuilt, "a static layer change re-indexes");
    assert_eq!(plugin.pairs(), expected_pairs(&world));
    assert!(plugin.started().iter().all(|&(x, y)| x == ghost || y == ghost));
    assert_eq!(
        plugin.started().len(),
        6,
        "ghost meets the 5 others that accept it, and plain_wall"
    );
    assert_eq!(plugin.ended(), [(player, wall), (plain, wall)]);
}
