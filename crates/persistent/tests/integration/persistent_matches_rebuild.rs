//! The persistent broad phase against a full rebuild, update by update:
//! after every update its pairs must be exactly the kernel grid's pairs on
//! the live proxies' true boxes (pairs of two static proxies left out),
//! and `started` / `ended` exactly the difference from the update before.
//! Motions cover drifting, teleporting, growing, shrinking, sleeping and
//! waking proxies, inserts, removals, kind changes and group changes
//! (proxies of one non-zero group never pair); configurations
//! cover margins of 0 (every move re-indexes), the incremental path only,
//! the full path only, and a tree that splits tiny inputs on all threads.

use std::collections::BTreeSet;

use crate::corners::Corners;
use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, AdaptiveGrid, brute_force_pairs};
use broadphase_partition::GridTreeConfig;
use broadphase_persistent::{PersistentBroadPhase, PersistentConfig, Proxy, ProxyKind, UpdatePath};
use broadphase_scenes::SplitMix64;
use broadphase_testkit::within;
use glam::Vec3;
use proptest::prelude::*;

/// What the test knows each live proxy to be.
#[derive(Clone, Copy, Debug)]
struct Known {
    proxy: Proxy,
    aabb: Aabb,
    kind: ProxyKind,
    /// 0 (no group) unless the motion regroups.
    group: u32,
    /// Marked asleep (`set_asleep`), which must change no output.
    asleep: bool,
}

/// How a simulated world moves.
#[derive(Clone, Copy, Debug)]
struct Motion {
    /// Side of the cube the boxes live in.
    side: f32,
    /// Largest box size.
    size: f32,
    /// Per update, out of 1000: a dynamic proxy drifts by up to 2% of its
    /// size on each axis.
    drift: u32,
    /// Teleports anywhere.
    teleport: u32,
    /// Grows or shrinks by up to 2x.
    resize: u32,
    /// Insert and remove, per proxy.
    churn: u32,
    /// Kind change.
    flip: u32,
    /// Group change, to one of a few groups or none; 0 leaves every proxy
    /// without a group (and draws no random number for it).
    regroup: u32,
    /// Falling asleep or waking, per proxy; an asleep proxy moves one
    /// update in ten. 0 keeps every proxy awake (and draws nothing).
    nap: u32,
}

/// How a frame's boxes are given to the broad phase.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Calls {
    /// One `set_aabb` per moved proxy.
    Single,
    /// One `set_aabbs` with every moved proxy, after the removals and
    /// kind changes of the frame.
    Bulk,
    /// As `Bulk`, through `set_aabbs_from` and a source of two corner
    /// columns.
    Source,
}

struct Sim {
    rng: SplitMix64,
    motion: Motion,
    known: Vec<Known>,
    calls: Calls,
    moved: Vec<Proxy>,
    moved_boxes: Vec<Aabb>,
}

impl Sim {
    fn random_box(&mut self) -> Aabb {
        let m = self.motion;
        let size = Vec3::new(
            self.rng.range_f32(0.0, m.size),
            self.rng.range_f32(0.0, m.size),
            self.rng.range_f32(0.0, m.size),
        );
        let min = Vec3::new(
            self.rng.range_f32(0.0, m.side),
            self.rng.range_f32(0.0, m.side),
            self.rng.range_f32(0.0, m.side),
        );
        Aabb::new(min, min + size)
    }

    fn roll(&mut self, per_mille: u32) -> bool {
        (self.rng.below(1000) as u32) < per_mille
    }

    /// No group or one of three, so that groups are crowded.
    fn random_group(&mut self) -> u32 {
        self.rng.below(4) as u32
    }

    fn random_kind(&mut self) -> ProxyKind {
        if self.roll(200) { ProxyKind::Static } else { ProxyKind::Dynamic }
    }

    /// One frame of calls on `world`, mirrored in `known`.
    fn step(&mut self, world: &mut PersistentBroadPhase, jobs: &JobSystem) {
        let m = self.motion;
        self.moved.clear();
        self.moved_boxes.clear();
        let mut k = 0;
        while k < self.known.len() {
            let mut entry = self.known[k];
            if self.roll(m.churn) {
                world.remove(entry.proxy).unwrap();
                if self.roll(500) {
                    // The slot taken again at once, as an ECS reuses an
                    // entity id in the same frame.
                    let (aabb, kind) = (self.random_box(), self.random_kind());
                    let proxy = world.insert_at(entry.proxy.index(), aabb, kind).unwrap();
                    assert_eq!(proxy.generation(), entry.proxy.generation().wrapping_add(1));
                    assert_eq!(
                        world.group(proxy).unwrap(),
                        0,
                        "a reused slot starts with no group"
                    );
                    self.known[k] = Known { proxy, aabb, kind, group: 0, asleep: false };
                    k += 1;
                } else {
                    self.known.swap_remove(k);
                }
                continue;
            }
            if self.roll(m.flip) {
                entry.kind = match entry.kind {
                    ProxyKind::Dynamic => ProxyKind::Static,
                    ProxyKind::Static => ProxyKind::Dynamic,
                };
                world.set_kind(entry.proxy, entry.kind).unwrap();
            }
            if m.regroup > 0 && self.roll(m.regroup) {
                entry.group = self.random_group();
                world.set_group(entry.proxy, entry.group).unwrap();
            }
            if m.nap > 0 && self.roll(m.nap) {
                entry.asleep = !entry.asleep;
                world.set_asleep(entry.proxy, entry.asleep).unwrap();
            }
            let still = entry.asleep && !self.roll(100);
            let dynamic = entry.kind == ProxyKind::Dynamic && !still;
            let mut aabb = entry.aabb;
            if dynamic && self.roll(m.teleport) {
                aabb = self.random_box();
            } else if dynamic && self.roll(m.resize) {
                let center = (aabb.min + aabb.max) * 0.5;
                let half = (aabb.max - aabb.min) * 0.5 * self.rng.range_f32(0.5, 2.0);
                aabb = Aabb::new(center - half, center + half);
            } else if dynamic && self.roll(m.drift) {
                let size = (aabb.max - aabb.min).max_element();
                let step = Vec3::new(
                    self.rng.range_f32(-0.02, 0.02),
                    self.rng.range_f32(-0.02, 0.02),
                    self.rng.range_f32(-0.02, 0.02),
                ) * size;
                aabb = Aabb::new(aabb.min + step, aabb.max + step);
            }
            if aabb != entry.aabb {
                match self.calls {
                    Calls::Single => world.set_aabb(entry.proxy, aabb).unwrap(),
                    Calls::Bulk | Calls::Source => {
                        self.moved.push(entry.proxy);
                        self.moved_boxes.push(aabb);
                    }
                }
                entry.aabb = aabb;
            }
            self.known[k] = entry;
            k += 1;
        }
        if self.calls == Calls::Source {
            world.set_aabbs_from(jobs, &self.moved, &Corners::of(&self.moved_boxes)).unwrap();
        } else {
            world.set_aabbs(jobs, &self.moved, &self.moved_boxes).unwrap();
        }
        let inserts = (self.known.len().max(20) as u32 * m.churn / 1000) as usize + 1;
        for _ in 0..inserts {
            if self.roll(500) || self.known.is_empty() {
                let aabb = self.random_box();
                let kind = self.random_kind();
                let proxy = if self.roll(100) {
                    // Past the end, leaving free slots between.
                    let end = self.known.iter().map(|k| k.proxy.index()).max().unwrap_or(0);
                    world.insert_at(end + 1 + self.rng.below(3) as u32, aabb, kind).unwrap()
                } else {
                    world.insert(aabb, kind).unwrap()
                };
                let group = if m.regroup > 0 { self.random_group() } else { 0 };
                world.set_group(proxy, group).unwrap();
                self.known.push(Known { proxy, aabb, kind, group, asleep: false });
            }
        }
    }

    /// Checks that the pairs are split into the awake and resting ones as
    /// the known proxies say: resting pairs have two proxies each asleep
    /// or static, awake ones at least one that is neither.
    fn check_tiers(&self, world: &PersistentBroadPhase, frame: usize) {
        let at_rest = |proxy: Proxy| {
            let known = self.known.iter().find(|k| k.proxy == proxy).expect("a live proxy");
            known.asleep || known.kind == ProxyKind::Static
        };
        let (awake, resting) = (world.awake_pairs(), world.resting_pairs());
        assert!(awake.windows(2).all(|w| w[0] < w[1]), "frame {frame}: awake pairs out of order");
        assert!(resting.windows(2).all(|w| w[0] < w[1]), "frame {frame}: resting out of order");
        assert_eq!(awake.len() + resting.len(), world.pairs().len(), "frame {frame}");
        assert!(awake.iter().all(|&[a, b]| !(at_rest(a) && at_rest(b))), "frame {frame}: awake");
        assert!(resting.iter().all(|&[a, b]| at_rest(a) && at_rest(b)), "frame {frame}: resting");
    }

    /// The pairs a full rebuild reports on the known boxes, as handles.
    fn expected(&self) -> BTreeSet<[Proxy; 2]> {
        let boxes: Vec<Aabb> = self.known.iter().map(|k| k.aabb).collect();
        let mut pairs = Vec::new();
        if boxes.len() <= 300 {
            brute_force_pairs(&boxes, &mut pairs).unwrap();
        } else {
            AdaptiveGrid::default().find_pairs(&boxes, &mut pairs).unwrap();
        }
        pairs
            .into_iter()
            .filter(|&[i, j]| {
                let (a, b) = (self.known[i as usize], self.known[j as usize]);
                let both_static = a.kind == ProxyKind::Static && b.kind == ProxyKind::Static;
                let one_group = a.group != 0 && a.group == b.group;
                !both_static && !one_group
            })
            .map(|[i, j]| {
                let (a, b) = (self.known[i as usize].proxy, self.known[j as usize].proxy);
                if a < b { [a, b] } else { [b, a] }
            })
            .collect()
    }
}

/// Runs `frames` updates and checks each; returns how many updates took
/// each path (unchanged, incremental, full), how many rebuilt the index,
/// how many took the incremental path with proxies to re-index, and how
/// many kept resting candidates aside.
fn run(
    seed: u64,
    start: usize,
    frames: usize,
    motion: Motion,
    config: PersistentConfig,
    threads: usize,
    calls: Calls,
) -> [usize; 6] {
    let jobs = JobSystem::new(threads);
    let mut world = PersistentBroadPhase::with_config(config);
    let mut sim = Sim {
        rng: SplitMix64::new(seed),
        motion,
        known: Vec::new(),
        calls,
        moved: Vec::new(),
        moved_boxes: Vec::new(),
    };
    for _ in 0..start {
        let aabb = sim.random_box();
        let kind = sim.random_kind();
        let proxy = world.insert(aabb, kind).unwrap();
        let group = if motion.regroup > 0 { sim.random_group() } else { 0 };
        world.set_group(proxy, group).unwrap();
        sim.known.push(Known { proxy, aabb, kind, group, asleep: false });
    }
    let mut before: BTreeSet<[Proxy; 2]> = BTreeSet::new();
    let mut paths = [0; 6];
    let mut last_resting = Vec::new();
    for frame in 0..frames {
        if frame > 0 {
            sim.step(&mut world, &jobs);
        }
        world.update(&jobs).unwrap();
        let stats = *world.stats();
        paths[match stats.path {
            UpdatePath::Unchanged => 0,
            UpdatePath::Incremental => 1,
            UpdatePath::Full => 2,
        }] += 1;
        paths[3] += usize::from(stats.index_rebuilt);
        paths[4] += usize::from(stats.path == UpdatePath::Incremental && stats.reindexed > 0);
        paths[5] += usize::from(stats.resting > 0);
        let expected = sim.expected();
        let got: Vec<[Proxy; 2]> = world.pairs().to_vec();
        assert!(got.windows(2).all(|w| w[0] < w[1]), "frame {frame}: pairs not sorted or repeated");
        let got_set: BTreeSet<[Proxy; 2]> = got.iter().copied().collect();
        if got_set != expected {
            let missing: Vec<_> = expected.difference(&got_set).take(5).collect();
            let extra: Vec<_> = got_set.difference(&expected).take(5).collect();
            panic!("frame {frame} ({stats:?}): missing {missing:?}, extra {extra:?}");
        }
        let started: Vec<_> = expected.difference(&before).copied().collect();
        let ended: Vec<_> = before.difference(&expected).copied().collect();
        assert_eq!(world.started(), started, "frame {frame}: started");
        assert_eq!(world.ended(), ended, "frame {frame}: ended");
        assert_eq!(world.len(), sim.known.len());
        assert_eq!(stats.pairs, expected.len());
        if motion.nap > 0 {
            sim.check_tiers(&world, frame);
            if !stats.resting_changed {
                assert_eq!(world.resting_pairs(), last_resting, "frame {frame}: resting changed");
            }
            last_resting = world.resting_pairs().to_vec();
        }
        before = expected;
    }
    paths
}

const DRIFT: Motion = Motion {
    side: 40.0,
    size: 4.0,
    drift: 900,
    teleport: 2,
    resize: 5,
    churn: 3,
    flip: 1,
    regroup: 0,
    nap: 0,
};
const CHAOS: Motion = Motion {
    side: 20.0,
    size: 5.0,
    drift: 500,
    teleport: 100,
    resize: 100,
    churn: 50,
    flip: 20,
    regroup: 0,
    nap: 0,
};
const ASLEEP: Motion = Motion {
    side: 40.0,
    size: 4.0,
    drift: 20,
    teleport: 0,
    resize: 0,
    churn: 0,
    flip: 0,
    regroup: 0,
    nap: 0,
};

fn tiny_tree() -> GridTreeConfig {
    GridTreeConfig { split_threshold: 32, ..GridTreeConfig::default() }
}

#[test]
fn drifting_world_matches_rebuild_over_a_thousand_updates() {
    within(120, || {
        let paths = run(1, 600, 1000, DRIFT, PersistentConfig::default(), 2, Calls::Single);
        // Mostly incremental, with index rebuilds along the way.
        assert!(paths[1] > 900, "{paths:?}");
        assert!(paths[3] >= 2, "{paths:?}");
    });
}

#[test]
fn chaotic_world_matches_rebuild_on_both_paths() {
    within(120, || {
        let paths = run(2, 300, 400, CHAOS, PersistentConfig::default(), 2, Calls::Single);
        assert!(paths[1] > 0 && paths[2] > 0, "{paths:?}");
    });
}

#[test]
fn zero_margin_reindexes_every_move_and_stays_exact() {
    within(120, || {
        // With no margin no enlarged box is kept: single and bulk sets
        // must re-index every change themselves.
        let config = PersistentConfig { margin: 0.0, ..Default::default() };
        run(3, 400, 300, DRIFT, config, 1, Calls::Single);
        run(3, 400, 300, DRIFT, config, 2, Calls::Bulk);
        let slow = Motion { drift: 20, ..DRIFT };
        run(3, 400, 300, slow, config, 2, Calls::Bulk);
    });
}

#[test]
fn incremental_only_and_full_only_agree_with_rebuild() {
    within(120, || {
        let never_full =
            PersistentConfig { full_rebuild_fraction: f32::INFINITY, ..Default::default() };
        let paths = run(4, 300, 200, CHAOS, never_full, 2, Calls::Single);
        assert_eq!(paths[2], 0, "{paths:?}");
        let always_full = PersistentConfig {
            full_rebuild_fraction: 0.0,
            tree: tiny_tree(),
            ..Default::default()
        };
        let paths = run(4, 300, 200, CHAOS, always_full, 4, Calls::Single);
        assert_eq!(paths[4], 0, "{paths:?}");
    });
}

#[test]
fn big_updates_merge_in_parts_on_all_threads() {
    within(240, || {
        // Enough pairs (about 100,000) for a full update to sort in two
        // runs and merge in one part per thread, and for an incremental
        // one to re-test and merge the kept pairs in parts, with churn,
        // slot reuse, statics and kind flips crossing the parts' edges.
        let dense = Motion { side: 60.0, ..CHAOS };
        for (margin, threads) in [(0.0, 2), (0.5, 3)] {
            let config = PersistentConfig {
                margin,
                full_rebuild_fraction: 0.0,
                ..PersistentConfig::default()
            };
            let paths = run(8, 20_000, 12, dense, config, threads, Calls::Bulk);
            assert_eq!(paths[1], 0, "{paths:?}");
            let config = PersistentConfig {
                margin,
                full_rebuild_fraction: f32::INFINITY,
                ..PersistentConfig::default()
            };
            let paths = run(9, 20_000, 12, dense, config, threads, Calls::Source);
            assert_eq!(paths[2], 0, "{paths:?}");
        }
    });
}

#[test]
fn groups_drop_and_restore_their_pairs_on_both_paths() {
    within(240, || {
        // Crowded groups changing every few frames, with kind flips and
        // churn: pairs of one group must leave and come back exactly, on
        // the incremental path (re-indexed like a kind change), the full
        // one, and in parts on several threads.
        let grouped = Motion { regroup: 60, ..CHAOS };
        let paths = run(10, 300, 200, grouped, PersistentConfig::default(), 2, Calls::Single);
        assert!(paths[1] > 0 && paths[2] > 0, "{paths:?}");
        let never_full =
            PersistentConfig { full_rebuild_fraction: f32::INFINITY, ..Default::default() };
        run(11, 300, 200, grouped, never_full, 3, Calls::Bulk);
        let zero_margin = PersistentConfig { margin: 0.0, ..Default::default() };
        run(12, 300, 200, Motion { regroup: 20, ..DRIFT }, zero_margin, 1, Calls::Bulk);
        let dense = Motion { side: 60.0, regroup: 30, ..CHAOS };
        for (fraction, calls) in [(0.0, Calls::Source), (f32::INFINITY, Calls::Bulk)] {
            let config = PersistentConfig { full_rebuild_fraction: fraction, ..Default::default() };
            run(13, 20_000, 8, dense, config, 3, calls);
        }
    });
}

#[test]
fn parallel_passes_on_tiny_inputs_stay_exact() {
    within(120, || {
        let config = PersistentConfig { tree: tiny_tree(), ..Default::default() };
        run(5, 2000, 150, DRIFT, config, 4, Calls::Single);
    });
}

#[test]
fn a_sleeping_world_does_nothing() {
    within(60, || {
        let paths = run(6, 500, 300, ASLEEP, PersistentConfig::default(), 2, Calls::Single);
        assert!(paths[1] > 0, "{paths:?}");
        // With no call at all, the update is skipped.
        let jobs = JobSystem::new(1);
        let mut world = PersistentBroadPhase::default();
        let a = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Dynamic).unwrap();
        let b = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Dynamic).unwrap();
        world.update(&jobs).unwrap();
        assert_eq!(world.started(), [[a, b]]);
        world.update(&jobs).unwrap();
        assert_eq!(world.stats().path, UpdatePath::Unchanged);
        assert!(world.started().is_empty());
        assert_eq!(world.pairs(), [[a, b]]);
    });
}

#[test]
fn sleeping_proxies_rest_aside_and_stay_exact_on_both_paths() {
    within(240, || {
        // Proxies fall asleep and wake all the time, and an asleep one
        // still moves now and then: the outputs must not change, and the
        // resting tier must take part, on both paths and in parts.
        let napping = Motion { nap: 150, regroup: 20, ..DRIFT };
        let paths = run(20, 600, 300, napping, PersistentConfig::default(), 2, Calls::Single);
        assert!(paths[5] > 250 && paths[1] > 0, "{paths:?}");
        run(
            21,
            300,
            200,
            Motion { nap: 300, ..CHAOS },
            PersistentConfig::default(),
            3,
            Calls::Bulk,
        );
        let zero_margin = PersistentConfig { margin: 0.0, ..Default::default() };
        run(22, 400, 200, Motion { nap: 50, ..DRIFT }, zero_margin, 1, Calls::Bulk);
        let dense = Motion { side: 60.0, nap: 200, ..CHAOS };
        for fraction in [0.0, f32::INFINITY] {
            let config = PersistentConfig { full_rebuild_fraction: fraction, ..Default::default() };
            let paths = run(23, 20_000, 8, dense, config, 3, Calls::Bulk);
            assert!(paths[5] > 0, "{paths:?}");
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn random_worlds_match_rebuild(
        seed in any::<u64>(),
        start in 0usize..200,
        margin in prop_oneof![Just(0.0f32), 0.0f32..1.0, Just(4.0)],
        fraction in prop_oneof![Just(0.0f32), 0.0f32..1.0, Just(f32::INFINITY)],
        side in prop_oneof![Just(1.0f32), 5.0f32..50.0],
        threads in 1usize..4,
        calls in prop::sample::select(vec![Calls::Single, Calls::Bulk, Calls::Source]),
        regroup in prop_oneof![Just(0u32), 1u32..200],
        nap in prop_oneof![Just(0u32), 1u32..400],
    ) {
        let motion = Motion { side, size: 3.0, drift: 600, teleport: 30, resize: 30, churn: 40, flip: 10, regroup, nap };
        let config = PersistentConfig { margin, full_rebuild_fraction: fraction, tree: tiny_tree(), ..Default::default() };
        run(seed, start, 40, motion, config, threads, calls);
    }
}
