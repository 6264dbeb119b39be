//! Regression: a game that snapshots the persistent broad phase every frame
//! into a ring, and now and then rolls back a frame and replays it, pays no
//! allocation for it once the ring's snapshots have their size:
//! `snapshot_into` copies into the snapshot's own buffers, and `restore`
//! into the broad phase's. That holds with the index of enlarged boxes in
//! the snapshot: each replayed frame reports what the first one did, so
//! the index came back as it was. (The frames themselves are the update
//! check's.)
//!
//! Scenario: 40,000 drifting boxes on 1 and 2 threads, a ring of 4
//! snapshots; after five laps of the ring (a snapshot's lists grow, with
//! room to spare, as the started and ended counts vary from frame to
//! frame), 40 frames are counted, every fifth one restored and replayed.

use broadphase::JobSystem;
use broadphase::persistent::{BroadPhaseSnapshot, PersistentBroadPhase, ProxyKind, UpdatePath};
use broadphase_scenes::drift100k;
use broadphase_testkit::allocations_on_every_thread_during;

const RING: usize = 4;
const WARM_UP: usize = 5 * RING;

pub(crate) fn warm_snapshots_and_restores_allocate_nothing() {
    for threads in [1, 2] {
        let jobs = JobSystem::new(threads);
        let mut scene = drift100k();
        scene.boxes.truncate(40_000);
        scene.moving = 40_000;
        let mut world = PersistentBroadPhase::default();
        let mut handles = Vec::new();
        world.insert_many(&scene.boxes, ProxyKind::Dynamic, &mut handles).unwrap();
        world.update(&jobs).unwrap();
        let mut ring = vec![BroadPhaseSnapshot::default(); RING];
        let (mut replays, mut incremental) = (0, 0);
        for frame in 0..WARM_UP + 40 {
            scene.step();
            let counted = frame >= WARM_UP;
            let saved = &mut ring[frame % RING];
            let ((), saving) =
                allocations_on_every_thread_during(counted, || world.snapshot_into(saved));
            assert_eq!(saving, 0, "{threads} threads, frame {frame}: snapshot_into allocated");
            world.set_aabbs(&jobs, &handles, &scene.boxes).unwrap();
            world.update(&jobs).unwrap();
            if frame % 5 == 4 {
                let (first, first_stats) = (world.pairs().to_vec(), *world.stats());
                let ((), restoring) =
                    allocations_on_every_thread_during(counted, || world.restore(saved));
                assert_eq!(restoring, 0, "{threads} threads, frame {frame}: restore allocated");
                world.set_aabbs(&jobs, &handles, &scene.boxes).unwrap();
                world.update(&jobs).unwrap();
                assert_eq!(world.pairs(), first);
                assert_eq!(world.stats(), &first_stats, "{threads} threads, frame {frame}");
                replays += usize::from(counted);
                incremental += usize::from(first_stats.path == UpdatePath::Incremental);
            }
        }
        assert!(replays > 0 && incremental > 0 && world.stats().pairs > 0);
    }
}
