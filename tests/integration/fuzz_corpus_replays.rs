//! The fuzz corpus as ordinary stable tests.
//!
//! `fuzz/corpus/grid_pairs/` holds the inputs cargo-fuzz kept (committed
//! seeds included); every one must still pass the same check the fuzz
//! target runs: a typed error exactly where brute force finds bad input,
//! otherwise exactly brute force's pairs and queries. A seeded sweep of
//! random bytes runs the check on inputs the corpus does not have, so the
//! decoder and the check are exercised even without the fuzzer.

use crate::{fuzz_input, fuzz_world};

use broadphase_scenes::SplitMix64;
use std::path::Path;

fn replay_dir(dir: &Path, check: fn(&[u8])) -> usize {
    let mut replayed = 0;
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("corpus {} missing: {e}", dir.display()))
        .map(|entry| entry.expect("readable corpus entry").path())
        .collect();
    entries.sort();
    for path in entries {
        let data = std::fs::read(&path).expect("readable corpus file");
        let outcome = std::panic::catch_unwind(|| check(&data));
        assert!(outcome.is_ok(), "corpus input {} fails", path.display());
        replayed += 1;
    }
    replayed
}

#[test]
fn committed_grid_corpus_still_passes() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/grid_pairs");
    let replayed = replay_dir(&corpus, fuzz_input::check_grid);
    assert!(replayed >= 10, "only {replayed} corpus inputs: the seeds are missing");
}

#[test]
fn committed_grid_tree_corpus_still_passes() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let replayed = replay_dir(&fuzz.join("grid_tree_pairs"), fuzz_input::check_grid_tree);
    assert!(replayed >= 10, "only {replayed} corpus inputs: the seeds are missing");
    // The grid's corpus is hostile box input too: the tree must pass it.
    replay_dir(&fuzz.join("grid_pairs"), fuzz_input::check_grid_tree);
}

#[test]
fn committed_neighbors_corpus_still_passes() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/neighbor_pairs");
    let replayed = replay_dir(&corpus, fuzz_input::check_neighbors);
    assert!(replayed >= 10, "only {replayed} corpus inputs: the seeds are missing");
}

#[test]
fn committed_rays_corpus_still_passes() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus");
    let replayed = replay_dir(&fuzz.join("rays"), fuzz_input::check_rays);
    assert!(replayed >= 10, "only {replayed} corpus inputs: the seeds are missing");
    replay_dir(&fuzz.join("grid_pairs"), fuzz_input::check_rays);
}

#[test]
fn committed_world_corpus_still_passes() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/ecs_world");
    let replayed = replay_dir(&corpus, |data| _ = fuzz_world::check_world(data));
    assert!(replayed >= 10, "only {replayed} corpus inputs: the seeds are missing");
}

#[test]
fn random_bytes_pass_the_world_check() {
    // Long inputs: a few hundred frames of edits, snapshots and restores
    // each, on 1 and 2 threads, detected and notified statics.
    let mut rng = SplitMix64::new(0xEC5);
    let mut reached = fuzz_world::Reached::default();
    for _ in 0..60 {
        let len = 200 + rng.below(2400);
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        let one = fuzz_world::check_world(&data);
        reached.runs_with_pairs += one.runs_with_pairs;
        reached.failed_runs += one.failed_runs;
        reached.restores += one.restores;
        reached.sleeps += one.sleeps;
        reached.body_pairs_merged += one.body_pairs_merged;
        reached.links += one.links;
        reached.resting_runs += one.resting_runs;
        reached.patched_runs += one.patched_runs;
    }
    // The check means something only if the decoder still makes all three.
    assert!(reached.runs_with_pairs > 100, "{reached:?}");
    assert!(reached.failed_runs > 30, "{reached:?}");
    assert!(reached.restores > 30, "{reached:?}");
    assert!(reached.sleeps > 30, "{reached:?}");
    assert!(reached.links > 30 && reached.body_pairs_merged > 10, "{reached:?}");
    assert!(reached.resting_runs > 30 && reached.patched_runs > 100, "{reached:?}");
}

#[test]
fn random_bytes_pass_the_grid_check() {
    let mut rng = SplitMix64::new(0xF0221);
    for _ in 0..1500 {
        let len = rng.below(1200);
        let data: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
        fuzz_input::check_grid(&data);
        fuzz_input::check_grid_tree(&data);
        fuzz_input::check_neighbors(&data);
        fuzz_input::check_rays(&data);
    }
}

#[test]
fn decoder_reaches_both_outcomes() {
    // The check is only meaningful if decoded inputs are sometimes valid
    // with pairs and sometimes invalid; guard the decoder against drifting
    // into one of them.
    let mut rng = SplitMix64::new(7);
    let (mut valid_with_pairs, mut invalid) = (0, 0);
    for _ in 0..300 {
        let data: Vec<u8> = (0..rng.below(600)).map(|_| rng.next_u64() as u8).collect();
        let (_, boxes) = fuzz_input::decode(&data);
        let mut pairs = Vec::new();
        match broadphase::oracle::brute_force_pairs(&boxes, &mut pairs) {
            Ok(()) if !pairs.is_empty() => valid_with_pairs += 1,
            Ok(()) => {}
            Err(_) => invalid += 1,
        }
    }
    assert!(valid_with_pairs > 30, "only {valid_with_pairs} valid scenes with pairs");
    assert!(invalid > 30, "only {invalid} invalid scenes");
}
