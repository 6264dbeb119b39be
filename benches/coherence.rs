//! Frame coherence: the persistent broad phase against a full rebuild of
//! the grid tree, on scenes that move (see `broadphase_scenes::MovingScene`).
//!
//! Each iteration is one game frame: the scene steps (untimed), then the
//! timed part runs on a 2-thread [`JobSystem`] (the calling thread and one
//! worker). Before anything is timed, 20 frames of the persistent broad
//! phase are checked against the grid tree's pairs on the same boxes (pairs
//! of two static boxes left out), so a fast wrong answer is never
//! recorded.
//!
//! Groups (criterion ids are `group/function`), one per scene
//! (`drift100k`, `drift1m`, `static100k_dynamic1k`, `dynamic1k`,
//! `teleport100k`):
//!
//! - `persistent/frame`: [`PersistentBroadPhase::set_aabbs`] for every
//!   moving box, then [`PersistentBroadPhase::update`];
//! - `persistent/update`: the update alone (the set untimed);
//! - `persistent/snapshot`: [`PersistentBroadPhase::snapshot_into`] a
//!   snapshot kept across frames, after each frame (the frame untimed);
//! - `persistent/restore`: a rollback of one frame: the frame is run
//!   (untimed), then [`PersistentBroadPhase::restore`] of the snapshot
//!   taken before it and the same frame again are timed (compare with
//!   `persistent/frame`: the restore copies the index back, and the frame
//!   after it stays incremental);
//! - `tree/rebuild`: [`GridTree::find_pairs`] over every box of the frame, what
//!   a game without coherence runs.
//!
//! ```text
//! cargo bench --bench coherence                 # everything, ~4 minutes on 2 cores
//! cargo bench --bench coherence -- drift100k/   # one scene
//! ```

use std::collections::BTreeSet;
use std::hint::black_box;
use std::time::{Duration, Instant};

use broadphase::persistent::{BroadPhaseSnapshot, PersistentBroadPhase, Proxy, ProxyKind};
use broadphase::{GridTree, JobSystem};
use broadphase_scenes::{
    MovingScene, drift1m, drift100k, dynamic1k, static100k_dynamic1k, teleport100k,
};
use criterion::{Criterion, SamplingMode, criterion_main};

/// A world holding a scene's boxes: the moving ones dynamic (slots
/// `0..moving`), the rest static.
struct Rig {
    scene: MovingScene,
    world: PersistentBroadPhase,
    moving: Vec<Proxy>,
}

impl Rig {
    fn new(scene: MovingScene, jobs: &JobSystem) -> Rig {
        let mut world = PersistentBroadPhase::default();
        let mut moving = Vec::new();
        let (dynamic, statics) = scene.boxes.split_at(scene.moving);
        world.insert_many(dynamic, ProxyKind::Dynamic, &mut moving).expect("valid scene");
        world.insert_many(statics, ProxyKind::Static, &mut Vec::new()).expect("valid scene");
        world.update(jobs).expect("update");
        Rig { scene, world, moving }
    }

    fn set(&mut self, jobs: &JobSystem) {
        let boxes = &self.scene.boxes[..self.scene.moving];
        self.world.set_aabbs(jobs, &self.moving, boxes).expect("valid boxes");
    }
}

/// Panics unless 20 frames of the rig match the tree on the same boxes.
fn check(make: fn() -> MovingScene, jobs: &JobSystem) {
    let mut rig = Rig::new(make(), jobs);
    let mut tree = GridTree::default();
    let mut pairs = Vec::new();
    for frame in 0..20 {
        rig.scene.step();
        rig.set(jobs);
        rig.world.update(jobs).expect("update");
        tree.find_pairs(jobs, &rig.scene.boxes, &mut pairs).expect("valid boxes");
        let moving = rig.scene.moving as u32;
        let expected: BTreeSet<[u32; 2]> =
            pairs.iter().copied().filter(|&[a, _]| a < moving).collect();
        let got: BTreeSet<[u32; 2]> =
            rig.world.pairs().iter().map(|&[a, b]| [a.index(), b.index()]).collect();
        assert!(got == expected, "{}: frame {frame} differs from a rebuild", rig.scene.name);
    }
}

fn bench_scene(c: &mut Criterion, make: fn() -> MovingScene, jobs: &JobSystem) {
    check(make, jobs);
    let name = make().name;
    let big = make().boxes.len() > 500_000;
    let mut group = c.benchmark_group(name);
    group
        .sample_size(if big { 10 } else { 30 })
        .warm_up_time(Duration::from_millis(if big { 1_000 } else { 500 }))
        .measurement_time(Duration::from_secs(if big { 4 } else { 2 }))
        .sampling_mode(SamplingMode::Flat);

    let mut rig = Rig::new(make(), jobs);
    group.bench_function("persistent/frame", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                rig.scene.step();
                let start = Instant::now();
                rig.set(jobs);
                rig.world.update(jobs).expect("update");
                timed += start.elapsed();
                black_box(rig.world.pairs().len());
            }
            timed
        });
    });

    let mut rig = Rig::new(make(), jobs);
    group.bench_function("persistent/update", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                rig.scene.step();
                rig.set(jobs);
                let start = Instant::now();
                rig.world.update(jobs).expect("update");
                timed += start.elapsed();
                black_box(rig.world.pairs().len());
            }
            timed
        });
    });

    let mut rig = Rig::new(make(), jobs);
    let mut snapshot = BroadPhaseSnapshot::default();
    group.bench_function("persistent/snapshot", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                rig.scene.step();
                rig.set(jobs);
                rig.world.update(jobs).expect("update");
                let start = Instant::now();
                rig.world.snapshot_into(&mut snapshot);
                timed += start.elapsed();
                black_box(snapshot.len());
            }
            timed
        });
    });

    let mut rig = Rig::new(make(), jobs);
    group.bench_function("persistent/restore", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                rig.world.snapshot_into(&mut snapshot);
                rig.scene.step();
                rig.set(jobs);
                rig.world.update(jobs).expect("update");
                let start = Instant::now();
                rig.world.restore(&snapshot);
                rig.set(jobs);
                rig.world.update(jobs).expect("update");
                timed += start.elapsed();
                black_box(rig.world.pairs().len());
            }
            timed
        });
    });

    let mut scene = make();
    let mut tree = GridTree::default();
    let mut pairs = Vec::new();
    group.bench_function("tree/rebuild", |b| {
        b.iter_custom(|iters| {
            let mut timed = Duration::ZERO;
            for _ in 0..iters {
                scene.step();
                let start = Instant::now();
                tree.find_pairs(jobs, &scene.boxes, &mut pairs).expect("valid boxes");
                timed += start.elapsed();
                black_box(pairs.len());
            }
            timed
        });
    });
    group.finish();
}

fn coherence(c: &mut Criterion) {
    let jobs = JobSystem::new(2);
    for make in [drift100k, drift1m, static100k_dynamic1k, dynamic1k, teleport100k] {
        bench_scene(c, make, &jobs);
    }
}

/// `criterion_group!` wrapped in a module: the generated `pub fn` cannot
/// carry a doc comment.
mod groups {
    use super::coherence;
    use criterion::criterion_group;

    criterion_group!(benches, coherence);
}

criterion_main!(groups::benches);
