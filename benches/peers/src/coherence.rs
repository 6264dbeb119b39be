//! Moving scenes frame after frame: broadphase's persistent broad phase,
//! parry's `Bvh` driven as rapier drives it, and broadphase's full rebuild
//! (the grid tree), each on its own copy of the scene stepping the same
//! way. Gate: every method's pairs equal on the first frames (pairs of two
//! static boxes left out everywhere); then frames are timed round-robin.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use broadphase::persistent::{PersistentBroadPhase, Proxy, ProxyKind};
use broadphase::{GridTree, JobSystem};
use broadphase_scenes::MovingScene;

use crate::peers::parry::Incremental;

/// One moving scene's frame times per method, in method order.
pub struct CoherenceResult {
    pub name: &'static str,
    pub boxes: usize,
    pub moving: usize,
    pub rows: Vec<(&'static str, bool, Vec<Duration>)>,
}

/// What each method keeps between frames.
enum Rig {
    Persistent { world: Box<PersistentBroadPhase>, handles: Vec<Proxy>, jobs: JobSystem },
    Parry(Box<Incremental>),
    Rebuild { tree: Box<GridTree>, jobs: JobSystem },
}

impl Rig {
    /// One frame on the scene's current boxes: the pairs as index pairs
    /// (static-static left out).
    fn frame(&mut self, scene: &MovingScene, out: &mut Vec<[u32; 2]>) {
        match self {
            Rig::Persistent { world, handles, jobs } => {
                world.set_aabbs(jobs, handles, &scene.boxes[..scene.moving]).expect("valid boxes");
                world.update(jobs).expect("update");
                out.clear();
                out.extend(world.pairs().iter().map(|[a, b]| [a.index(), b.index()]));
            }
            Rig::Parry(peer) => peer.frame(&scene.boxes, scene.moving, out),
            Rig::Rebuild { tree, jobs } => {
                tree.find_pairs(jobs, &scene.boxes, out).expect("valid boxes");
                let moving = scene.moving as u32;
                out.retain(|&[a, _]| a < moving);
            }
        }
    }
}

/// The margin both incremental methods use (broadphase's default).
const MARGIN: f32 = 0.5;

fn rigs(scene: &MovingScene) -> Vec<(&'static str, bool, Rig)> {
    let persistent = |threads| {
        let jobs = JobSystem::new(threads);
        let mut world = PersistentBroadPhase::default();
        let mut handles = Vec::new();
        let (moving, statics) = scene.boxes.split_at(scene.moving);
        world.insert_many(moving, ProxyKind::Dynamic, &mut handles).expect("valid scene");
        world.insert_many(statics, ProxyKind::Static, &mut Vec::new()).expect("valid scene");
        world.update(&jobs).expect("update");
        Rig::Persistent { world: Box::new(world), handles, jobs }
    };
    vec![
        ("broadphase PersistentBroadPhase (1 thread)", false, persistent(1)),
        ("broadphase PersistentBroadPhase (all threads)", false, persistent(0)),
        (
            "parry3d Bvh, rapier-style (update, refit, traversal, optimize)",
            true,
            Rig::Parry(Box::new(Incremental::new(&scene.boxes, scene.moving, MARGIN))),
        ),
        (
            "broadphase GridTree rebuild (all threads)",
            false,
            Rig::Rebuild { tree: Box::default(), jobs: JobSystem::new(0) },
        ),
    ]
}

/// Runs `make`'s scene for `frames` timed frames after the gate.
pub fn run(make: fn() -> MovingScene, frames: usize) -> CoherenceResult {
    let first = make();
    eprintln!(
        "coherence {}: {} boxes, {} moving, {frames} frames",
        first.name,
        first.boxes.len(),
        first.moving
    );
    let mut methods = rigs(&first);
    let mut scenes: Vec<MovingScene> = methods.iter().map(|_| make()).collect();
    let mut out = Vec::new();
    for frame in 0..3 {
        let mut reference: Option<BTreeSet<[u32; 2]>> = None;
        for ((name, _, rig), scene) in methods.iter_mut().zip(&mut scenes) {
            scene.step();
            rig.frame(scene, &mut out);
            let got: BTreeSet<[u32; 2]> = out.iter().copied().collect();
            match &reference {
                None => reference = Some(got),
                Some(want) => {
                    assert!(&got == want, "{}: frame {frame}: {name} differs", first.name)
                }
            }
        }
    }
    let mut rows: Vec<(&'static str, bool, Vec<Duration>)> =
        methods.iter().map(|(name, peer, _)| (*name, *peer, Vec::new())).collect();
    // A method whose frame takes over `SKIP_OVER` stops there: its row
    // keeps the frames it ran.
    let mut stopped = vec![false; methods.len()];
    for _ in 0..frames {
        let rigs = methods.iter_mut().zip(&mut scenes).zip(&mut rows).zip(&mut stopped);
        for ((((_, _, rig), scene), row), stopped) in rigs {
            if *stopped {
                continue;
            }
            scene.step();
            let start = Instant::now();
            rig.frame(scene, &mut out);
            let took = start.elapsed();
            row.2.push(took);
            *stopped = took > crate::SKIP_OVER;
        }
    }
    CoherenceResult { name: first.name, boxes: first.boxes.len(), moving: first.moving, rows }
}
