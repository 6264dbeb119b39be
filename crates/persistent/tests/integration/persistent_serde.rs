//! Snapshots through bytes (the `serde` feature): a snapshot read back
//! from JSON restores the state it was taken of, and bytes that break an
//! invariant of the snapshot are an error when read, never a panic or a
//! wrong answer later. The replays of snapshots read back run inside the
//! rollback tests (`persistent_rollback.rs`).
#![cfg(feature = "serde")]

use crate::json_numbers::{at_path, number_paths};
use broadphase_jobs::JobSystem;
use broadphase_persistent::{BroadPhaseSnapshot, PersistentBroadPhase, ProxyKind, UpdatePath};
use broadphase_scenes::SplitMix64;
use broadphase_storage::Aabb;
use glam::Vec3;
use serde_json::{Value, json};

/// A world with pending calls: 300 proxies (one dynamic in three asleep),
/// two updates, then moves, removals and inserts not yet updated.
fn world(jobs: &JobSystem) -> PersistentBroadPhase {
    let mut rng = SplitMix64::new(7);
    let mut world = PersistentBroadPhase::default();
    let mut handles = Vec::new();
    for k in 0..300 {
        let min =
            Vec3::new(rng.range_f32(0.0, 40.0), rng.range_f32(0.0, 40.0), rng.range_f32(0.0, 40.0));
        let kind = if k % 5 == 0 { ProxyKind::Static } else { ProxyKind::Dynamic };
        let proxy = world.insert(Aabb::new(min, min + Vec3::splat(2.0)), kind).unwrap();
        world.set_asleep(proxy, k % 3 == 1).unwrap();
        handles.push(proxy);
    }
    world.update(jobs).unwrap();
    assert!(world.stats().resting > 0);
    for &h in handles.iter().skip(1).step_by(7) {
        let aabb = world.aabb(h).unwrap();
        world.set_aabb(h, Aabb::new(aabb.min + 0.3, aabb.max + 0.3)).unwrap();
    }
    world.update(jobs).unwrap();
    for &h in handles.iter().skip(3).step_by(11) {
        let aabb = world.aabb(h).unwrap();
        world.set_aabb(h, Aabb::new(aabb.min + 5.0, aabb.max + 5.0)).unwrap();
    }
    for &h in handles.iter().skip(2).step_by(13) {
        world.remove(h).unwrap();
    }
    world.insert(Aabb::new(Vec3::ONE, Vec3::splat(3.0)), ProxyKind::Dynamic).unwrap();
    world
}

fn read(json: Value) -> Result<BroadPhaseSnapshot, serde_json::Error> {
    serde_json::from_value(json)
}

/// Runs an update and a query on a broad phase restored from `snapshot`.
fn run(
    snapshot: &BroadPhaseSnapshot,
    jobs: &JobSystem,
) -> (Vec<[broadphase_persistent::Proxy; 2]>, Vec<broadphase_persistent::Proxy>) {
    let mut world = PersistentBroadPhase::default();
    world.restore(snapshot);
    world.update(jobs).unwrap();
    let mut hits = Vec::new();
    let view = world.queries(jobs).unwrap();
    view.query_aabb(&Aabb::new(Vec3::splat(10.0), Vec3::splat(30.0)), &mut hits).unwrap();
    (world.pairs().to_vec(), hits)
}

#[test]
fn a_snapshot_read_back_restores_the_same_state() {
    let jobs = JobSystem::new(2);
    let original = world(&jobs).snapshot();
    let text = serde_json::to_string(&original).unwrap();
    let read: BroadPhaseSnapshot = serde_json::from_str(&text).unwrap();
    assert_eq!(read.len(), original.len());
    assert_eq!(read.config(), original.config());
    assert_eq!(run(&read, &jobs), run(&original, &jobs));
}

/// A snapshot read back keeps its groups: a full update of the restored
/// broad phase (every proxy moved) drops the pairs of one group, as the
/// original's does.
#[test]
fn a_snapshot_read_back_keeps_its_groups_on_a_full_update() {
    let jobs = JobSystem::new(2);
    let mut original = PersistentBroadPhase::default();
    let unit = |x: f32| Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0));
    let handles: Vec<_> = (0..40)
        .map(|i| original.insert(unit(0.5 * i as f32), ProxyKind::Dynamic).unwrap())
        .collect();
    for &h in &handles[..10] {
        original.set_group(h, 3).unwrap();
    }
    original.update(&jobs).unwrap();
    let text = serde_json::to_string(&original.snapshot()).unwrap();
    let read: BroadPhaseSnapshot = serde_json::from_str(&text).unwrap();
    let mut restored = PersistentBroadPhase::default();
    restored.restore(&read);
    for world in [&mut original, &mut restored] {
        for (i, &h) in handles.iter().enumerate() {
            world.set_aabb(h, unit(0.5 * i as f32 + 100.0)).unwrap();
        }
        world.update(&jobs).unwrap();
        assert_eq!(world.stats().path, UpdatePath::Full);
    }
    assert_eq!(restored.pairs(), original.pairs());
    assert!(!restored.pairs().contains(&[handles[0], handles[1]]), "a pair of one group");
    assert!(restored.pairs().contains(&[handles[10], handles[11]]));
}

/// Applies `corrupt` to the JSON of the test world's snapshot and expects
/// reading it to fail with `message` in the error.
fn rejects(message: &str, corrupt: impl FnOnce(&mut Value)) {
    let jobs = JobSystem::new(1);
    let mut json = serde_json::to_value(world(&jobs).snapshot()).unwrap();
    corrupt(&mut json);
    let err = read(json).expect_err(message);
    assert!(err.to_string().contains(message), "{err} does not say {message:?}");
}

fn pop(list: &mut Value) {
    list.as_array_mut().unwrap().pop();
}

#[test]
fn truncated_slot_arrays_are_an_error() {
    rejects("differ in length", |j| pop(&mut j["slots"]["boxes"]));
    rejects("differ in length", |j| pop(&mut j["slots"]["group"]));
    rejects("enlarged boxes", |j| pop(&mut j["slots"]["fat"]));
    rejects("mark array", |j| pop(&mut j["slots"]["changed"]["words"]));
}

#[test]
fn mismatched_lists_are_an_error() {
    rejects("touching marks differ in length", |j| pop(&mut j["candidates"]["touching"]));
    rejects("re-index queue", |j| pop(&mut j["queue"]));
    rejects("re-index queue", |j| j["queue"].as_array_mut().unwrap().push(json!(100_000)));
    rejects("removed list", |j| j["removed"].as_array_mut().unwrap().push(json!(5)));
    rejects("out of order", |j| j["candidates"]["pairs"].as_array_mut().unwrap().reverse());
    rejects("published pair", |j| j["events"]["pairs"][0][0]["index"] = json!(100_000));
}

#[test]
fn a_broken_resting_tier_is_an_error() {
    rejects("touching marks differ in length", |j| pop(&mut j["candidates"]["resting_touching"]));
    rejects("out of order", |j| j["candidates"]["resting"].as_array_mut().unwrap().reverse());
    rejects("not at rest", |j| {
        for word in j["slots"]["rested"]["words"].as_array_mut().unwrap() {
            *word = json!(0);
        }
    });
    rejects("rest marks", |j| j["slots"]["at_rest"]["words"][0] = json!(0));
    rejects("rest changed with no mark", |j| {
        // Slot 0 is static: at rest, and so at the last update.
        j["slots"]["rested"]["words"][0] = json!(0);
        j["candidates"]["resting"] = json!([]);
        j["candidates"]["resting_touching"] = json!([]);
    });
    rejects("both tiers", |j| {
        j["candidates"]["pairs"] = json!([j["candidates"]["resting"][0]]);
        j["candidates"]["touching"] = json!([true]);
    });
}

#[test]
fn inconsistent_counts_and_free_lists_are_an_error() {
    rejects("proxy counts", |j| j["slots"]["live"] = json!(3));
    rejects("proxy counts", |j| j["slots"]["dynamic"] = json!(0));
    rejects("free list", |j| j["slots"]["free"].as_array_mut().unwrap().push(json!(0)));
}

#[test]
fn bad_boxes_are_an_error() {
    rejects("box", |j| j["slots"]["boxes"][0]["min"] = json!([1e9, 1e9, 1e9]));
    rejects("is greater than", |j| {
        let grid = &mut j["index"]["tiers"][1]["parts"][0]["grid"];
        grid["kept"][0]["min"] = json!([1e9, 1e9, 1e9]);
    });
    rejects("expected f32", |j| j["slots"]["boxes"][0]["min"] = json!([null, 0, 0]));
}

#[test]
fn an_index_that_contradicts_the_slots_is_an_error() {
    rejects("index grid", |j| pop(&mut j["index"]["tiers"][1]["parts"][0]["ids"]));
    rejects("grid count", |j| j["index"]["tiers"][0]["used"] = json!(9));
    rejects("wrong kind", |j| j["index"]["tiers"][0]["kind"] = json!("Moving"));
    rejects("grid tuning", |j| j["config"]["tree"]["grid"]["leaf_capacity"] = json!(7));
}

#[test]
fn truncated_bytes_are_an_error() {
    let jobs = JobSystem::new(1);
    let text = serde_json::to_string(&world(&jobs).snapshot()).unwrap();
    for cut in [0, 1, text.len() / 3, text.len() / 2, text.len() - 1] {
        assert!(serde_json::from_str::<BroadPhaseSnapshot>(&text[..cut]).is_err());
    }
}

/// Every number of the JSON, one at a time, replaced by another: what
/// reads back must restore, update and answer queries without a panic.
#[test]
fn any_number_changed_reads_as_an_error_or_a_working_snapshot() {
    let jobs = JobSystem::new(2);
    let json = serde_json::to_value(world(&jobs).snapshot()).unwrap();
    let paths = number_paths(&json);
    let mut rng = SplitMix64::new(3);
    let (mut accepted, mut tried) = (0, 0);
    for _ in 0..600 {
        let path = &paths[rng.below(paths.len())];
        let mut bad = json.clone();
        let leaf = at_path(&mut bad, path);
        let was = leaf.as_f64().unwrap();
        *leaf = json!([0.0, 1.0, 63.0, 64.0, 299.0, 300.0, 1e6, -1.0, was + 1.0][rng.below(9)]);
        tried += 1;
        if let Ok(snapshot) = read(bad) {
            accepted += 1;
            run(&snapshot, &jobs);
        }
    }
    assert!(accepted > 0 && accepted < tried, "{accepted} of {tried} read back");
}
