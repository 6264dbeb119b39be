//! Neighbor lists filled by the job system equal the single-thread fill,
//! row for row and entry for entry, for any thread count and structure.

use broadphase_jobs::{JobError, JobSystem};
use broadphase_neighbors::{
    CountingSortGrid, CountingSortGridConfig, NeighborLists, NeighborRule, NeighborSearch,
    ParallelNeighborLists, PointError, ScanKernel, SpatialHash, SpatialIndex,
};
use broadphase_scenes::{SplitMix64, sph};
use core::ops::Range;
use glam::Vec3;

fn clustered(count: usize, seed: u64) -> Vec<Vec3> {
    let mut rng = SplitMix64::new(seed);
    let centers: Vec<Vec3> = (0..5)
        .map(|_| Vec3::new(rng.range_f32(-50.0, 50.0), rng.range_f32(-50.0, 50.0), 0.0))
        .collect();
    (0..count)
        .map(|i| {
            let c = centers[i % centers.len()];
            c + Vec3::new(
                rng.range_f32(-3.0, 3.0),
                rng.range_f32(-3.0, 3.0),
                rng.range_f32(-3.0, 3.0),
            )
        })
        .collect()
}

fn check<S: NeighborSearch + Sync>(mut structure: S, points: &[Vec3], radius: f32) {
    structure.build(points, radius).unwrap();
    let mut single = NeighborLists::default();
    structure.sorted_neighbor_lists(0..structure.len(), &mut single);
    let mut parallel = ParallelNeighborLists::default();
    let mut lists = NeighborLists::default();
    for threads in [1, 2, 4] {
        let jobs = JobSystem::new(threads);
        for _frame in 0..2 {
            parallel.fill(&jobs, &structure, &mut lists).unwrap();
            assert_eq!(lists.offsets(), single.offsets(), "{threads} threads: row offsets differ");
            assert_eq!(lists.indices(), single.indices(), "{threads} threads: entries differ");
        }
    }
}

#[test]
fn parallel_lists_equal_single_thread_lists() {
    let scenes: Vec<(Vec<Vec3>, f32)> = vec![
        (sph(15), 2.0),
        (clustered(3_000, 11), 1.0),
        (vec![Vec3::ZERO], 1.0),
        (Vec::new(), 1.0),
        (vec![Vec3::splat(7.0); 40], 0.0), // coincident points, radius 0: all neighbors
    ];
    for (points, radius) in &scenes {
        check(CountingSortGrid::default(), points, *radius);
        check(SpatialHash::default(), points, *radius);
        check(SpatialIndex::default(), points, *radius);
    }
}

/// Above 4,096 rows the jobs fill chunks and place them in order, parking
/// a chunk filled before the ones ahead of it: on many chunks (a dense
/// cluster first, so the first chunks are slow and later ones wait), on
/// more threads than chunks, and frame after frame with the buffers kept,
/// the lists are the one-thread lists.
#[test]
fn chunks_placed_in_order_equal_the_one_thread_lists() {
    let mut dense_first = clustered(6_000, 5);
    dense_first.iter_mut().for_each(|p| *p *= 0.2);
    dense_first.extend(clustered(40_000, 7));
    let scenes: Vec<(Vec<Vec3>, f32)> =
        vec![(sph(32), 2.0), (dense_first, 1.0), (clustered(9_000, 3), 0.7)];
    let mut parallel = ParallelNeighborLists::default();
    let mut lists = NeighborLists::default();
    // Every kernel: the per-particle walk appends rows as the block walk does.
    let kernels = ScanKernel::available().into_iter().chain([ScanKernel::Auto]);
    let configs = kernels.map(|kernel| CountingSortGridConfig { kernel, ..Default::default() });
    for (config, (points, radius)) in configs.flat_map(|c| scenes.iter().map(move |s| (c, s))) {
        let mut grid = CountingSortGrid::with_config(config);
        grid.build(points, *radius).unwrap();
        let mut single = NeighborLists::default();
        grid.sorted_neighbor_lists(0..grid.len(), &mut single);
        for threads in [2, 3, 17, 1, 2] {
            let jobs = JobSystem::new(threads);
            for frame in 0..2 {
                parallel.fill(&jobs, &grid, &mut lists).unwrap();
                let what = format!(
                    "{} points, {:?}, {threads} threads, frame {frame}",
                    points.len(),
                    config.kernel
                );
                assert_eq!(lists.offsets(), single.offsets(), "{what}: row offsets differ");
                assert_eq!(lists.indices(), single.indices(), "{what}: entries differ");
            }
        }
    }
}

/// The output and the per-range buffers are reused from frame to frame:
/// answers that grow past what they hold, shrink, and grow again each
/// equal the one-thread lists, with nothing left over from a longer frame.
#[test]
fn reused_lists_give_each_frame_its_own_answer_as_answers_grow_and_shrink() {
    let points = clustered(4_000, 23);
    let mut grid = CountingSortGrid::default();
    let (mut parallel, mut lists, mut single) =
        (ParallelNeighborLists::default(), NeighborLists::default(), NeighborLists::default());
    for threads in [2, 4] {
        let jobs = JobSystem::new(threads);
        for radius in [0.5, 0.5, 1.5, 1.0, 0.2, 1.6, 1.6, 0.0] {
            grid.build(&points, radius).unwrap();
            grid.sorted_neighbor_lists(0..grid.len(), &mut single);
            parallel.fill(&jobs, &grid, &mut lists).unwrap();
            assert_eq!(lists.offsets(), single.offsets(), "radius {radius}: row offsets differ");
            assert_eq!(lists.indices(), single.indices(), "radius {radius}: entries differ");
        }
    }
}

/// A grid whose lists misbehave on purpose, as a user's structure may:
/// see [`Script`].
struct Scripted {
    grid: CountingSortGrid,
    script: Script,
    /// The address of the lists each piece was appended to.
    written_into: std::sync::Mutex<Vec<usize>>,
}

#[derive(Clone, Copy, PartialEq)]
enum Script {
    /// The chunk holding row 0 stalls: the other jobs run a whole ring of
    /// buffers ahead and wait for it.
    SlowFirstChunk,
    /// The chunk holding row 0 panics (a bug): the other jobs must not be
    /// left waiting.
    PanicInFirstChunk,
    /// Each piece of rows takes 0 to 2 ms, so a chunk becomes the first
    /// not yet placed at any point of its fill.
    UnevenPieces,
}

impl Scripted {
    /// Built on 64,000 points (16 chunks, more than a ring of 2 threads'
    /// buffers, of 8 pieces each), with the one-thread lists to expect.
    fn built(script: Script) -> (Self, NeighborLists) {
        let mut grid = CountingSortGrid::default();
        grid.build(&sph(40), 2.0).unwrap();
        let mut single = NeighborLists::default();
        grid.sorted_neighbor_lists(0..grid.len(), &mut single);
        (Self { grid, script, written_into: Default::default() }, single)
    }
}

impl NeighborSearch for Scripted {
    fn build(&mut self, points: &[Vec3], radius: f32) -> Result<(), PointError> {
        self.grid.build(points, radius)
    }
    fn build_spheres(&mut self, centers: &[Vec3], radii: &[f32]) -> Result<(), PointError> {
        self.grid.build_spheres(centers, radii)
    }
    fn len(&self) -> usize {
        self.grid.len()
    }
    fn rule(&self) -> NeighborRule {
        self.grid.rule()
    }
    fn sorted_order(&self) -> &[u32] {
        self.grid.sorted_order()
    }
    fn query(&self, point: Vec3, radius: f32, out: &mut Vec<u32>) -> Result<(), PointError> {
        self.grid.query(point, radius, out)
    }
    fn for_each_neighbor_pair_in(&self, slots: Range<usize>, f: impl FnMut(u32, u32)) {
        self.grid.for_each_neighbor_pair_in(slots, f);
    }
    fn neighbor_lists(&self, out: &mut NeighborLists) {
        self.grid.neighbor_lists(out);
    }
    fn sorted_neighbor_lists(&self, slots: Range<usize>, out: &mut NeighborLists) {
        if slots.start == 0 && self.script != Script::UnevenPieces {
            assert!(self.script != Script::PanicInFirstChunk, "a bug in the first chunk");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        self.grid.sorted_neighbor_lists(slots, out);
    }
    fn append_sorted_neighbor_lists(&self, slots: Range<usize>, out: &mut NeighborLists) {
        if self.script != Script::UnevenPieces {
            // The trait's default: the rows filled apart, then appended.
            let mut part = NeighborLists::default();
            self.sorted_neighbor_lists(slots, &mut part);
            return out.append_rows(&part);
        }
        let delay = SplitMix64::new(slots.start as u64).next_u64() % 3;
        std::thread::sleep(std::time::Duration::from_millis(delay));
        self.written_into.lock().unwrap().push(core::ptr::from_ref(out) as usize);
        self.grid.append_sorted_neighbor_lists(slots, out);
    }
}

#[test]
fn jobs_wait_for_a_slow_first_chunk_and_a_panic_does_not_leave_them_waiting() {
    let (slow, single) = Scripted::built(Script::SlowFirstChunk);
    let jobs = JobSystem::new(2);
    let mut parallel = ParallelNeighborLists::default();
    let mut lists = NeighborLists::default();
    parallel.fill(&jobs, &slow, &mut lists).unwrap();
    assert_eq!(lists.offsets(), single.offsets());
    assert_eq!(lists.indices(), single.indices());

    let buggy = Scripted { script: Script::PanicInFirstChunk, ..slow };
    let error = parallel.fill(&jobs, &buggy, &mut lists).unwrap_err();
    assert!(matches!(error, JobError::Panicked { .. }), "{error:?}");
    // The kept buffers still serve the next fill.
    parallel.fill(&jobs, &buggy.grid, &mut lists).unwrap();
    assert_eq!(lists.indices(), single.indices());
}

/// Whatever order the chunks become the first not yet placed in, a job
/// that buffered part of its chunk moves those rows into the answer and
/// writes the rest there directly, while the other jobs buffer theirs:
/// the lists are the one-thread lists.
#[test]
fn chunks_that_become_first_midway_move_their_buffered_rows_before_writing_on() {
    let (uneven, single) = Scripted::built(Script::UnevenPieces);
    let mut parallel = ParallelNeighborLists::default();
    let mut lists = NeighborLists::default();
    for threads in [2, 3] {
        let jobs = JobSystem::new(threads);
        for frame in 0..3 {
            uneven.written_into.lock().unwrap().clear();
            parallel.fill(&jobs, &uneven, &mut lists).unwrap();
            let what = format!("{threads} threads, frame {frame}");
            assert_eq!(lists.offsets(), single.offsets(), "{what}: row offsets differ");
            assert_eq!(lists.indices(), single.indices(), "{what}: entries differ");
            let answer = core::ptr::from_ref(&lists) as usize;
            let written_into = uneven.written_into.lock().unwrap();
            let direct = written_into.iter().filter(|&&at| at == answer).count();
            if frame == 0 {
                // A new ring (a new thread count) sizes its buffers first.
                assert_eq!(direct, 0, "{what}: a new ring's fill wrote in place");
            } else {
                // The first chunk is first from the start, so its pieces
                // go straight into the answer; the second starts while the
                // first runs.
                assert!(direct >= 8, "{what}: {direct} pieces written in place");
                assert!(direct < written_into.len(), "{what}: every piece in place");
            }
        }
    }
}

/// The caller-order fill equals the one-thread `neighbor_lists`, row for
/// row and entry for entry: below one chunk (the one-thread call), above
/// it with more pieces of the move than threads and fewer, frame after
/// frame with its buffers kept, for each structure.
#[test]
fn the_caller_order_fill_equals_one_thread_neighbor_lists() {
    fn check<S: NeighborSearch + Sync>(mut structure: S, points: &[Vec3], radius: f32) {
        structure.build(points, radius).unwrap();
        let mut single = NeighborLists::default();
        structure.neighbor_lists(&mut single);
        let (mut parallel, mut lists) =
            (ParallelNeighborLists::default(), NeighborLists::default());
        for threads in [2, 3, 17, 1, 2] {
            let jobs = JobSystem::new(threads);
            for frame in 0..2 {
                parallel.fill_caller_order(&jobs, &structure, &mut lists).unwrap();
                let what = format!("{} points, {threads} threads, frame {frame}", points.len());
                assert_eq!(lists.offsets(), single.offsets(), "{what}: row offsets differ");
                assert_eq!(lists.indices(), single.indices(), "{what}: entries differ");
            }
        }
    }
    // Shuffled, so that caller order and sorted order differ everywhere.
    let mut shuffled = sph(24);
    let mut rng = SplitMix64::new(41);
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    let mut dense_first = clustered(5_000, 5);
    dense_first.iter_mut().for_each(|p| *p *= 0.2);
    dense_first.extend(clustered(20_000, 7));
    let scenes: Vec<(Vec<Vec3>, f32)> =
        vec![(shuffled, 2.0), (dense_first, 1.0), (clustered(3_000, 11), 1.0), (Vec::new(), 1.0)];
    for (points, radius) in &scenes {
        check(CountingSortGrid::default(), points, *radius);
        check(SpatialHash::default(), points, *radius);
        check(SpatialIndex::default(), points, *radius);
    }
}

/// A structure that keeps the trait's own caller-order rows (sorted rows
/// with their entries mapped) fills the same lists; a panicking job
/// leaves the answer empty, and the fill serves the next call.
#[test]
fn the_caller_order_fill_of_a_structure_of_ones_own_and_its_panic() {
    let (uneven, _) = Scripted::built(Script::UnevenPieces);
    let mut single = NeighborLists::default();
    uneven.grid.neighbor_lists(&mut single);
    let (mut parallel, mut lists) = (ParallelNeighborLists::default(), NeighborLists::default());
    let jobs = JobSystem::new(3);
    parallel.fill_caller_order(&jobs, &uneven, &mut lists).unwrap();
    assert_eq!((lists.offsets(), lists.indices()), (single.offsets(), single.indices()));

    let buggy = Scripted { script: Script::PanicInFirstChunk, ..uneven };
    let error = parallel.fill_caller_order(&jobs, &buggy, &mut lists).unwrap_err();
    assert!(matches!(error, JobError::Panicked { .. }), "{error:?}");
    assert!(lists.is_empty() && lists.indices().is_empty(), "a failed fill leaves no rows");
    parallel.fill_caller_order(&jobs, &buggy.grid, &mut lists).unwrap();
    assert_eq!((lists.offsets(), lists.indices()), (single.offsets(), single.indices()));
}
