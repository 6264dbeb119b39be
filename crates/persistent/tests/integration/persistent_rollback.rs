//! Rollback: a snapshot taken anywhere in a run of calls (after an update
//! or with calls pending), restored after more calls, makes the same calls
//! give the same outputs bit for bit: the handles inserts return, pairs,
//! started, ended, the update's path and counts (the index's too: whether
//! it was rebuilt, how many entries were stale), box queries and ray hits
//! (also as the first call after the restore), whether the run and the
//! replay use 1 or 2 threads. Handles live at the
//! snapshot are live again after a restore with their boxes and kinds,
//! those stale then are stale, and those given out after it are stale;
//! every replayed update's pairs are the brute-force pairs of the live
//! boxes. Each snapshot is restored three times: into the broad phase that
//! went on (from `snapshot`), again after that replay (from a reused
//! snapshot that `snapshot_into` overwrote), and into a new broad phase of
//! the default tuning, which adopts the snapshot's. Small random worlds
//! run as a property test; two big ones (20,000 proxies) replay merges in
//! parts, bulk sets on all threads and full updates. The update after a
//! restore finds the index as the update after the snapshot did: it is
//! incremental and rebuilds nothing when that one did not. With the
//! `serde` feature, each snapshot also goes through JSON and back into a
//! new broad phase, which replays the same way.

use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, brute_force_pairs};
use broadphase_partition::GridTreeConfig;
use broadphase_persistent::{
    BroadPhaseSnapshot, PersistentBroadPhase, PersistentConfig, Proxy, ProxyKind, UpdatePath,
};
use broadphase_scenes::SplitMix64;
use broadphase_storage::Ray;
use glam::Vec3;
use proptest::prelude::*;

/// Side of the cube the boxes live in (small worlds), and the largest
/// box size.
const SIDE: f32 = 60.0;
const SIZE: f32 = 8.0;
/// Side of a big world's cube.
const BIG_SIDE: f32 = 150.0;

/// One call on the broad phase.
#[derive(Clone, Copy, Debug)]
enum Op {
    Insert(Aabb, ProxyKind),
    /// Into a given slot, as the ECS plugin inserts.
    InsertAt(u32, Aabb, ProxyKind),
    Remove(Proxy),
    Set(Proxy, Aabb),
    /// A bulk set of the first `count` live proxies of the model, moved
    /// by `step` each.
    SetMany(usize, Vec3),
    SetKind(Proxy, ProxyKind),
    Update,
    Query(Aabb, Ray),
}

/// What a call gave back; floats as bits, so equality is bit for bit.
#[derive(Debug, PartialEq)]
enum Output {
    Inserted(Proxy),
    Done,
    Updated {
        pairs: Vec<[Proxy; 2]>,
        started: Vec<[Proxy; 2]>,
        ended: Vec<[Proxy; 2]>,
        path: UpdatePath,
        index_rebuilt: bool,
        counts: [usize; 7],
    },
    Answered {
        boxes: Vec<Proxy>,
        hits: Vec<(Proxy, u32)>,
        first: Option<(Proxy, u32)>,
    },
}

/// The test's model of the live proxies, in a fixed order.
#[derive(Clone, Debug, Default)]
struct Model {
    live: Vec<(Proxy, Aabb, ProxyKind)>,
    /// Handles that went stale (removed), for the staleness checks.
    dead: Vec<Proxy>,
}

impl Model {
    fn find(&self, proxy: Proxy) -> usize {
        self.live.iter().position(|&(p, ..)| p == proxy).expect("a live proxy")
    }

    /// The pairs a brute force (the kernel's grid, for big worlds) finds on
    /// the live boxes, sorted.
    fn expected(&self) -> Vec<[Proxy; 2]> {
        let boxes: Vec<Aabb> = self.live.iter().map(|&(_, aabb, _)| aabb).collect();
        let mut pairs = Vec::new();
        if boxes.len() <= 400 {
            brute_force_pairs(&boxes, &mut pairs).unwrap();
        } else {
            AdaptiveGrid::default().find_pairs(&boxes, &mut pairs).unwrap();
        }
        let mut out: Vec<[Proxy; 2]> = pairs
            .into_iter()
            .filter(|&[i, j]| {
                let (a, b) = (self.live[i as usize], self.live[j as usize]);
                !(a.2 == ProxyKind::Static && b.2 == ProxyKind::Static)
            })
            .map(|[i, j]| {
                let (a, b) = (self.live[i as usize].0, self.live[j as usize].0);
                if a < b { [a, b] } else { [b, a] }
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Applies `op` to `world` and to the model; returns what it gave.
    fn apply(&mut self, world: &mut PersistentBroadPhase, jobs: &JobSystem, op: Op) -> Output {
        match op {
            Op::Insert(aabb, kind) => {
                let proxy = world.insert(aabb, kind).unwrap();
                self.live.push((proxy, aabb, kind));
                Output::Inserted(proxy)
            }
            Op::InsertAt(index, aabb, kind) => {
                let proxy = world.insert_at(index, aabb, kind).unwrap();
                self.live.push((proxy, aabb, kind));
                Output::Inserted(proxy)
            }
            Op::Remove(proxy) => {
                world.remove(proxy).unwrap();
                self.live.swap_remove(self.find(proxy));
                self.dead.push(proxy);
                Output::Done
            }
            Op::Set(proxy, aabb) => {
                world.set_aabb(proxy, aabb).unwrap();
                let k = self.find(proxy);
                self.live[k].1 = aabb;
                Output::Done
            }
            Op::SetMany(count, step) => {
                let count = count.min(self.live.len());
                let mut handles = Vec::with_capacity(count);
                let mut boxes = Vec::with_capacity(count);
                for entry in &mut self.live[..count] {
                    entry.1 = Aabb::new(entry.1.min + step, entry.1.max + step);
                    handles.push(entry.0);
                    boxes.push(entry.1);
                }
                world.set_aabbs(jobs, &handles, &boxes).unwrap();
                Output::Done
            }
            Op::SetKind(proxy, kind) => {
                world.set_kind(proxy, kind).unwrap();
                let k = self.find(proxy);
                self.live[k].2 = kind;
                Output::Done
            }
            Op::Update => {
                world.update(jobs).unwrap();
                let stats = *world.stats();
                Output::Updated {
                    pairs: world.pairs().to_vec(),
                    started: world.started().to_vec(),
                    ended: world.ended().to_vec(),
                    path: stats.path,
                    index_rebuilt: stats.index_rebuilt,
                    counts: [
                        stats.proxies,
                        stats.dynamic,
                        stats.reindexed,
                        stats.stale,
                        stats.candidates,
                        stats.pairs,
                        stats.started + stats.ended,
                    ],
                }
            }
            Op::Query(aabb, ray) => {
                let view = world.queries(jobs).unwrap();
                let mut boxes = Vec::new();
                view.query_aabb(&aabb, &mut boxes).unwrap();
                let mut hits = Vec::new();
                view.ray_hits(&ray, &mut hits).unwrap();
                let first = view.cast_ray(&ray).unwrap().map(|(p, t)| (p, t.to_bits()));
                let hits = hits.into_iter().map(|(p, t)| (p, t.to_bits())).collect();
                Output::Answered { boxes, hits, first }
            }
        }
    }
}

/// Draws calls that fit the model.
struct Draw {
    rng: SplitMix64,
    side: f32,
}

impl Draw {
    fn random_box(&mut self) -> Aabb {
        let side = self.side;
        let min = Vec3::new(
            self.rng.range_f32(0.0, side),
            self.rng.range_f32(0.0, side),
            self.rng.range_f32(0.0, side),
        );
        let size = Vec3::new(
            self.rng.range_f32(0.0, SIZE),
            self.rng.range_f32(0.0, SIZE),
            self.rng.range_f32(0.0, SIZE),
        );
        Aabb::new(min, min + size)
    }

    fn kind(&mut self) -> ProxyKind {
        if self.rng.below(5) == 0 { ProxyKind::Static } else { ProxyKind::Dynamic }
    }

    fn op(&mut self, model: &Model) -> Op {
        let live = model.live.len();
        let roll = self.rng.below(100);
        if live == 0 || roll < 8 {
            return Op::Insert(self.random_box(), self.kind());
        }
        let (proxy, aabb, kind) = model.live[self.rng.below(live)];
        match roll {
            8..=9 => {
                // A fresh slot past the end, or one just removed.
                let end = model.live.iter().map(|e| e.0.index()).max().unwrap_or(0);
                let index = match model.dead.last() {
                    Some(dead)
                        if self.rng.below(2) == 0
                            && !model.live.iter().any(|e| e.0.index() == dead.index()) =>
                    {
                        dead.index()
                    }
                    _ => end + 1 + self.rng.below(3) as u32,
                };
                Op::InsertAt(index, self.random_box(), self.kind())
            }
            10..=15 => Op::Remove(proxy),
            16..=17 => Op::SetKind(
                proxy,
                if kind == ProxyKind::Static { ProxyKind::Dynamic } else { ProxyKind::Static },
            ),
            18..=21 => {
                let step = Vec3::new(
                    self.rng.range_f32(-0.1, 0.1),
                    self.rng.range_f32(-0.1, 0.1),
                    self.rng.range_f32(-0.1, 0.1),
                );
                // Half the time every proxy: a big world's bulk set then
                // runs on all threads.
                let count = if self.rng.below(2) == 0 { live } else { self.rng.below(live + 1) };
                Op::SetMany(count, step)
            }
            22..=29 => Op::Set(proxy, self.random_box()),
            30..=69 => {
                // A drift, mostly inside the margin.
                let step = Vec3::splat(self.rng.range_f32(-0.3, 0.3));
                Op::Set(proxy, Aabb::new(aabb.min + step, aabb.max + step))
            }
            70..=91 => Op::Update,
            _ => self.query(),
        }
    }

    /// A box query and a ray along x.
    fn query(&mut self) -> Op {
        let origin =
            Vec3::new(-1.0, self.rng.range_f32(0.0, self.side), self.rng.range_f32(0.0, self.side));
        let dir = Vec3::new(1.0, self.rng.range_f32(-0.2, 0.2), self.rng.range_f32(-0.2, 0.2));
        Op::Query(self.random_box(), Ray::new(origin, dir, f32::INFINITY))
    }
}

/// Checks that `world`, just restored, is as the snapshot found it.
fn check_restored(
    world: &PersistentBroadPhase,
    at_snapshot: &Model,
    published: &[Vec<[Proxy; 2]>; 3],
    born_after: &[Proxy],
) {
    assert_eq!(world.len(), at_snapshot.live.len());
    for &(proxy, aabb, kind) in &at_snapshot.live {
        assert!(world.contains(proxy), "{proxy:?} was live at the snapshot");
        assert_eq!(world.aabb(proxy).unwrap(), aabb);
        assert_eq!(world.kind(proxy).unwrap(), kind);
    }
    for &proxy in at_snapshot.dead.iter().chain(born_after) {
        assert!(!world.contains(proxy), "{proxy:?} was not live at the snapshot");
    }
    assert_eq!(world.pairs(), published[0]);
    assert_eq!(world.started(), published[1]);
    assert_eq!(world.ended(), published[2]);
}

/// Replays `ops` from the restored `world`, checking each output against
/// the recorded one and each update against brute force.
fn replay(
    world: &mut PersistentBroadPhase,
    jobs: &JobSystem,
    mut model: Model,
    ops: &[Op],
    recorded: &[Output],
) {
    for (step, (&op, want)) in ops.iter().zip(recorded).enumerate() {
        let got = model.apply(world, jobs, op);
        assert_eq!(&got, want, "replayed call {step} ({op:?}) differs");
        if let Output::Updated { pairs, .. } = &got {
            assert_eq!(pairs, &model.expected(), "replayed update {step} is not exact");
        }
    }
}

/// Where the run goes after the snapshot.
#[derive(Clone, Copy, Debug)]
struct Run {
    /// Calls after the snapshot, besides the query and the last update.
    after: usize,
    /// Whether the first call after the snapshot is a query.
    query_first: bool,
    /// Threads of the recorded run and of the replays.
    threads: [usize; 2],
}

/// Runs `before` calls, snapshots, runs `run.after` calls recording their
/// outputs, then restores and replays them three ways.
fn rollback(seed: u64, config: PersistentConfig, start: usize, before: usize, run: Run) {
    let Run { after, query_first, threads } = run;
    let [record, other] = threads.map(JobSystem::new);
    // Big worlds spread out, to a few partners per proxy.
    let side = if start > 1000 { BIG_SIDE } else { SIDE };
    let mut draw = Draw { rng: SplitMix64::new(seed), side };
    let mut world = PersistentBroadPhase::with_config(config);
    let mut model = Model::default();
    for _ in 0..start {
        let op = Op::Insert(draw.random_box(), draw.kind());
        model.apply(&mut world, &record, op);
    }
    // A reused snapshot, filled with an older state first.
    let mut reused = BroadPhaseSnapshot::default();
    let stale_at = draw.rng.below(before + 1);
    for step in 0..before {
        if step == stale_at {
            world.snapshot_into(&mut reused);
        }
        let op = draw.op(&model);
        model.apply(&mut world, &record, op);
    }
    let snapshot = world.snapshot();
    world.snapshot_into(&mut reused);
    assert_eq!(snapshot.len(), world.len());
    let at_snapshot = model.clone();
    let published = [world.pairs().to_vec(), world.started().to_vec(), world.ended().to_vec()];

    let mut ops = Vec::with_capacity(after + 2);
    let mut recorded = Vec::with_capacity(after + 2);
    if query_first {
        let query = draw.query();
        ops.push(query);
        recorded.push(model.apply(&mut world, &record, query));
    }
    for _ in 0..after {
        let op = draw.op(&model);
        recorded.push(model.apply(&mut world, &record, op));
        ops.push(op);
    }
    // A last update, so every replay ends on one.
    ops.push(Op::Update);
    recorded.push(model.apply(&mut world, &record, Op::Update));
    let born_after: Vec<Proxy> = recorded
        .iter()
        .filter_map(|out| if let Output::Inserted(p) = out { Some(*p) } else { None })
        .collect();

    world.restore(&snapshot);
    check_restored(&world, &at_snapshot, &published, &born_after);
    replay(&mut world, &other, at_snapshot.clone(), &ops, &recorded);

    world.restore(&reused);
    check_restored(&world, &at_snapshot, &published, &born_after);
    replay(&mut world, &record, at_snapshot.clone(), &ops, &recorded);

    // Through bytes: the snapshot read back restores into a new broad
    // phase and replays as the original does (JSON has no infinity, which
    // some runs' rebuild fraction is).
    #[cfg(feature = "serde")]
    if config.full_rebuild_fraction.is_finite() {
        let json = serde_json::to_string(&snapshot).unwrap();
        let read: BroadPhaseSnapshot = serde_json::from_str(&json).unwrap();
        assert_eq!(serde_json::to_string(&read).unwrap(), json);
        let mut fresh = PersistentBroadPhase::default();
        fresh.restore(&read);
        assert_eq!(fresh.config(), &config);
        check_restored(&fresh, &at_snapshot, &published, &born_after);
        replay(&mut fresh, &record, at_snapshot.clone(), &ops, &recorded);
    }

    let mut fresh = PersistentBroadPhase::default();
    fresh.restore(&reused);
    assert_eq!(fresh.config(), &config);
    check_restored(&fresh, &at_snapshot, &published, &born_after);
    replay(&mut fresh, &other, at_snapshot, &ops, &recorded);
}

/// A tree that splits tiny inputs, so the parallel passes run on them.
fn tiny_tree() -> GridTreeConfig {
    GridTreeConfig { split_threshold: 32, ..GridTreeConfig::default() }
}

#[test]
fn a_snapshot_before_the_first_update_replays_it() {
    let run = Run { after: 60, query_first: false, threads: [1, 2] };
    rollback(1, PersistentConfig::default(), 40, 0, run);
}

#[test]
fn a_default_snapshot_is_a_new_broad_phase() {
    let jobs = JobSystem::new(1);
    let mut world = PersistentBroadPhase::default();
    let a = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Dynamic).unwrap();
    world.update(&jobs).unwrap();
    world.restore(&BroadPhaseSnapshot::default());
    assert!(world.is_empty() && !world.contains(a) && world.pairs().is_empty());
    assert_eq!(world.config(), &PersistentConfig::default());
    assert_eq!(world.insert(Aabb::default(), ProxyKind::Dynamic).unwrap(), a);
}

#[test]
fn a_big_world_replays_its_merges_in_parts_and_bulk_sets_on_threads() {
    // 20,000 proxies: tens of thousands of candidates, so an incremental
    // merge runs in parts on 2 threads, and bulk sets of most proxies
    // check and write on all threads.
    let config = PersistentConfig { tree: tiny_tree(), ..Default::default() };
    rollback(11, config, 20_000, 60, Run { after: 120, query_first: true, threads: [2, 1] });
    let config = PersistentConfig { margin: 0.0, ..Default::default() };
    rollback(12, config, 20_000, 60, Run { after: 120, query_first: false, threads: [1, 2] });
}

/// Regression: a restore used to drop the index of enlarged boxes, so the
/// update after it rebuilt the index (and, the first time, found every
/// candidate again) where the update after the snapshot had been an
/// incremental one on the kept index. The snapshot now carries the index:
/// restored into the broad phase that went on, into a new one, and into
/// one of another tuning down to its grids, whose own index was built
/// (it adopts the snapshot's tuning and index), the update after
/// the restore is incremental, rebuilds no index, and reports what the
/// first one did, pairs and counts alike.
#[test]
fn the_update_after_a_restore_rebuilds_no_index() {
    for threads in [1, 2] {
        let jobs = JobSystem::new(threads);
        let mut draw = Draw { rng: SplitMix64::new(21), side: BIG_SIDE };
        let mut world = PersistentBroadPhase::default();
        let mut handles = Vec::new();
        for k in 0..2_000 {
            let kind = if k % 10 == 0 { ProxyKind::Static } else { ProxyKind::Dynamic };
            handles.push(world.insert(draw.random_box(), kind).unwrap());
        }
        world.update(&jobs).unwrap();
        assert_eq!(world.stats().path, UpdatePath::Full);
        // A few proxies jump each frame: incremental updates, the first of
        // which builds the index.
        let jump = |world: &mut PersistentBroadPhase, draw: &mut Draw| {
            for _ in 0..10 {
                let proxy = handles[draw.rng.below(handles.len())];
                world.set_aabb(proxy, draw.random_box()).unwrap();
            }
            world.update(&jobs).unwrap();
            (*world.stats(), world.pairs().to_vec(), world.started().to_vec())
        };
        let built = jump(&mut world, &mut draw).0;
        assert_eq!((built.path, built.index_rebuilt), (UpdatePath::Incremental, true));
        jump(&mut world, &mut draw);

        let saved = world.snapshot();
        let at_snapshot = draw.rng.clone();
        let first = jump(&mut world, &mut draw);
        assert_eq!((first.0.path, first.0.index_rebuilt), (UpdatePath::Incremental, false));
        assert!(first.0.stale > 0 && first.0.reindexed > 0);

        // Another tuning, down to the grids, whose index is built.
        let grid = GridConfig { leaf_capacity: 3, ..GridConfig::default() };
        let tree = GridTreeConfig { grid, ..tiny_tree() };
        let mut other = PersistentBroadPhase::with_config(PersistentConfig {
            tree,
            margin: 0.0,
            ..Default::default()
        });
        let mut other_draw = Draw { rng: SplitMix64::new(22), side: BIG_SIDE };
        let proxies: Vec<Proxy> = (0..500)
            .map(|_| other.insert(other_draw.random_box(), ProxyKind::Dynamic).unwrap())
            .collect();
        other.update(&jobs).unwrap();
        other.set_aabb(proxies[0], other_draw.random_box()).unwrap();
        other.update(&jobs).unwrap();
        assert!(other.stats().index_rebuilt);
        let restored = [world, PersistentBroadPhase::default(), other];
        for (k, mut world) in restored.into_iter().enumerate() {
            world.restore(&saved);
            let mut draw = Draw { rng: at_snapshot.clone(), side: BIG_SIDE };
            let again = jump(&mut world, &mut draw);
            assert_eq!(again, first, "{threads} threads, broad phase {k}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn replays_after_a_restore_are_bit_identical(
        seed in any::<u64>(),
        start in 0usize..120,
        before in 0usize..150,
        after in 1usize..150,
        margin in prop_oneof![Just(0.0f32), Just(0.5f32)],
        fraction in prop_oneof![Just(0.0f32), Just(0.25f32), Just(f32::INFINITY)],
        tiny in any::<bool>(),
        query_first in any::<bool>(),
        threads in prop_oneof![Just([1usize, 2]), Just([2usize, 1])],
    ) {
        let tree = if tiny { tiny_tree() } else { GridTreeConfig::default() };
        let config = PersistentConfig { margin, full_rebuild_fraction: fraction, tree, ..Default::default() };
        rollback(seed, config, start, before, Run { after, query_first, threads });
    }
}

/// The groups are part of a snapshot: a restore brings back each proxy's
/// group, and the updates after it pair (or not) as the first time.
#[test]
fn a_restore_brings_back_the_groups() {
    let jobs = JobSystem::new(2);
    let unit = |x: f32| Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0));
    let mut world = PersistentBroadPhase::default();
    let a = world.insert(unit(0.0), ProxyKind::Dynamic).unwrap();
    let b = world.insert(unit(0.5), ProxyKind::Dynamic).unwrap();
    world.set_group(a, 1).unwrap();
    world.set_group(b, 1).unwrap();
    world.update(&jobs).unwrap();
    let saved = world.snapshot();
    world.set_group(b, 2).unwrap();
    world.update(&jobs).unwrap();
    assert_eq!(world.started(), [[a, b]]);

    world.restore(&saved);
    assert_eq!(world.group(b).unwrap(), 1);
    assert!(world.pairs().is_empty());
    world.set_aabb(b, unit(0.25)).unwrap(); // moves, still in a's group
    world.update(&jobs).unwrap();
    assert!(world.pairs().is_empty() && world.started().is_empty());
}
