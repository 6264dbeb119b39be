//! Regression: the persistent broad phase gives the same pairs, started
//! and ended lists, in the same order, for the same calls on 1, 2, 4 and 8
//! threads.
//!
//! Scenario: 30,000 drifting boxes (so bulk sets and the index queries run
//! in parallel chunks), 50 removed and 50 inserted every frame, and every
//! fifth frame a shockwave that moves a third of them far enough to take
//! the full path; a few frames rebuild the index on the way. The boxes go
//! in through `set_aabbs`, or through `set_aabbs_from` and a source that
//! makes them from two corner columns: the same lists either way.

use broadphase::Aabb;
use broadphase::JobSystem;
use broadphase::glam::Vec3;
use broadphase::persistent::{AabbSource, PersistentBroadPhase, Proxy, ProxyKind, UpdatePath};
use broadphase_scenes::{SplitMix64, drift100k};

use crate::corners::Corners;

/// The shared source implements the trait the `broadphase` crate exports.
const _: fn() = || {
    fn implements<S: AabbSource>() {}
    implements::<Corners>();
};

type Frame = (Vec<[Proxy; 2]>, Vec<[Proxy; 2]>, Vec<[Proxy; 2]>);

fn run(threads: usize, from_source: bool) -> (Vec<Frame>, [usize; 3]) {
    let jobs = JobSystem::new(threads);
    let mut scene = drift100k();
    scene.boxes.truncate(30_000);
    scene.moving = 30_000;
    let mut rng = SplitMix64::new(77);
    let mut world = PersistentBroadPhase::default();
    let mut handles = Vec::new();
    world.insert_many(&scene.boxes, ProxyKind::Dynamic, &mut handles).unwrap();
    let mut frames = Vec::new();
    let mut paths = [0; 3];
    for frame in 0..30 {
        scene.step();
        if frame % 5 == 4 {
            for b in scene.boxes.iter_mut().step_by(3) {
                let kick = Vec3::splat(rng.range_f32(20.0, 60.0));
                *b = Aabb::new(b.min + kick, b.max + kick);
            }
        }
        if from_source {
            world.set_aabbs_from(&jobs, &handles, &Corners::of(&scene.boxes)).unwrap();
        } else {
            world.set_aabbs(&jobs, &handles, &scene.boxes).unwrap();
        }
        for _ in 0..50 {
            let k = rng.below(handles.len());
            world.remove(handles[k]).unwrap();
            handles[k] = world.insert(scene.boxes[k], ProxyKind::Dynamic).unwrap();
        }
        world.update(&jobs).unwrap();
        paths[match world.stats().path {
            UpdatePath::Unchanged => 0,
            UpdatePath::Incremental => 1,
            UpdatePath::Full => 2,
        }] += 1;
        frames.push((world.pairs().to_vec(), world.started().to_vec(), world.ended().to_vec()));
    }
    (frames, paths)
}

#[test]
fn same_calls_same_pairs_and_events_on_any_thread_count() {
    let (reference, paths) = run(1, false);
    assert!(paths[1] > 0 && paths[2] > 0, "both paths taken: {paths:?}");
    assert!(reference.iter().any(|(pairs, ..)| !pairs.is_empty()));
    assert!(reference.iter().any(|(_, started, ended)| !started.is_empty() && !ended.is_empty()));
    for (threads, from_source) in
        [(2, false), (4, false), (8, false), (1, true), (2, true), (4, true)]
    {
        let (frames, _) = run(threads, from_source);
        for (frame, (got, want)) in frames.iter().zip(&reference).enumerate() {
            assert!(
                got == want,
                "{threads} threads (from a source: {from_source}) differ from 1 at frame {frame}"
            );
        }
    }
}
