//! The ECS plugin's snapshots through bytes (the `serde` feature): bytes
//! that break an invariant of the snapshot are an error when read; any
//! that read back restore and run without a panic. The replays of
//! snapshots read back run inside the rollback tests (`ecs_rollback.rs`).
#![cfg(feature = "serde")]

use crate::json_numbers::{at_path, number_paths};
use broadphase::ecs::hecs::World;
use broadphase::ecs::{
    Aabb, BroadPhasePlugin, CollisionLayers, PluginConfig, PluginSnapshot, Sleeping, Static,
};
use broadphase::glam::Vec3;
use broadphase_scenes::SplitMix64;
use serde_json::{Value, json};

/// A world of 200 entities (some static, some asleep, some on layers)
/// after three runs, with a plugin on 2 threads.
fn world() -> (World, BroadPhasePlugin) {
    let mut rng = SplitMix64::new(5);
    let mut world = World::new();
    for k in 0..200 {
        let min =
            Vec3::new(rng.range_f32(0.0, 30.0), rng.range_f32(0.0, 30.0), rng.range_f32(0.0, 30.0));
        let e = world.spawn((Aabb::new(min, min + Vec3::splat(2.0)),));
        match k % 7 {
            0 => world.insert_one(e, Static).unwrap(),
            1 => world.insert_one(e, Sleeping).unwrap(),
            2 => world.insert_one(e, CollisionLayers::new(1, 2)).unwrap(),
            _ => {}
        }
    }
    let mut plugin =
        BroadPhasePlugin::with_config(PluginConfig { threads: 2, ..Default::default() });
    for _ in 0..3 {
        plugin.run(&mut world).unwrap();
        for aabb in world.query_mut::<&mut Aabb>().without::<&Static>() {
            *aabb = Aabb::new(aabb.min + 0.2, aabb.max + 0.2);
        }
    }
    (world, plugin)
}

/// Restores `snapshot` into a new plugin and runs it twice on `world`
/// with a query: each must succeed (a job's panic would be an error).
fn run(snapshot: &PluginSnapshot, world: &mut World) -> Result<(), broadphase::ecs::PluginError> {
    let mut plugin =
        BroadPhasePlugin::with_config(PluginConfig { threads: 2, ..Default::default() });
    plugin.restore(snapshot);
    let mut hits = Vec::new();
    for _ in 0..2 {
        plugin.run(world)?;
        let query = Aabb::new(Vec3::splat(5.0), Vec3::splat(20.0));
        plugin.query_aabb(&query, CollisionLayers::ALL, &mut hits)?;
    }
    Ok(())
}

#[test]
fn a_snapshot_read_back_publishes_what_the_original_did() {
    let (mut world, plugin) = world();
    let text = serde_json::to_string(&plugin.snapshot()).unwrap();
    let read: PluginSnapshot = serde_json::from_str(&text).unwrap();
    let mut fresh =
        BroadPhasePlugin::with_config(PluginConfig { threads: 2, ..Default::default() });
    fresh.restore(&read);
    assert_eq!(fresh.pairs(), plugin.pairs());
    fresh.run(&mut world).unwrap();
    let mut again =
        BroadPhasePlugin::with_config(PluginConfig { threads: 1, ..Default::default() });
    again.restore(&plugin.snapshot());
    again.run(&mut world).unwrap();
    assert_eq!(
        (fresh.pairs(), fresh.started(), fresh.ended()),
        (again.pairs(), again.started(), again.ended())
    );
}

#[test]
fn truncated_bytes_are_an_error() {
    let (_, plugin) = world();
    let text = serde_json::to_string(&plugin.snapshot()).unwrap();
    for cut in [0, 1, text.len() / 3, text.len() / 2, text.len() - 1] {
        assert!(serde_json::from_str::<PluginSnapshot>(&text[..cut]).is_err());
    }
}

/// Applies `corrupt` to the JSON of the test world's snapshot and expects
/// reading it to fail with `message` in the error.
fn rejects(message: &str, corrupt: impl FnOnce(&mut Value)) {
    let (_, plugin) = world();
    let mut json = serde_json::to_value(plugin.snapshot()).unwrap();
    corrupt(&mut json);
    let err = serde_json::from_value::<PluginSnapshot>(json).expect_err(message);
    assert!(err.to_string().contains(message), "{err} does not say {message:?}");
}

#[test]
fn a_table_that_contradicts_itself_is_an_error() {
    let pop = |list: &mut Value| {
        list.as_array_mut().unwrap().pop();
    };
    rejects("differ in length", |j| pop(&mut j["proxies"]["owners"]));
    rejects("differ in length", |j| pop(&mut j["proxies"]["slots"]));
    rejects("proxy at another id", |j| j["proxies"]["slots"][3]["proxy"]["index"] = json!(4));
    rejects("entity at another id", |j| {
        j["proxies"]["owners"][3] = j["proxies"]["owners"][4].clone()
    });
    rejects("handle lists", |j| j["proxies"]["handles"][0][0]["index"] = json!(100_000));
    rejects("fewer entities", |j| {
        for slot in j["proxies"]["slots"].as_array_mut().unwrap() {
            *slot = Value::Null;
        }
    });
    // A run trusts the ids of a dynamic list that did not change.
    rejects("past MAX_ENTITY_ID", |j| {
        j["proxies"]["dynamic"][0] = json!((1u64 << 32) | (1 << 24));
    });
    // The broad phase's part is checked as a broad-phase snapshot is.
    rejects("broad phase snapshot", |j| pop(&mut j["broad_phase"]["candidates"]["touching"]));
}

/// Every number of the JSON, one at a time, replaced by another: what
/// reads back must restore and run without a panic.
#[test]
fn any_number_changed_reads_as_an_error_or_a_working_snapshot() {
    let (mut world, plugin) = world();
    let json = serde_json::to_value(plugin.snapshot()).unwrap();
    let paths = number_paths(&json);
    let mut rng = SplitMix64::new(9);
    let (mut accepted, mut tried) = (0, 0);
    let ids: Vec<u64> = world.iter().map(|e| e.entity().to_bits().get()).collect();
    for _ in 0..600 {
        let path = &paths[rng.below(paths.len())];
        let mut bad = json.clone();
        let leaf = at_path(&mut bad, path);
        let was = leaf.as_f64().unwrap();
        let other = ids[rng.below(ids.len())] as f64;
        let values = [0.0, 1.0, 2.0, 63.0, 64.0, 199.0, 200.0, 1e6, -1.0, was + 1.0, other];
        *leaf = json!(values[rng.below(values.len())]);
        tried += 1;
        if let Ok(snapshot) = serde_json::from_value::<PluginSnapshot>(bad) {
            accepted += 1;
            run(&snapshot, &mut world).unwrap();
        }
    }
    assert!(accepted > 0 && accepted < tried, "{accepted} of {tried} read back");
}
