//! Regression: a warm frame allocates nothing, on both paths. Rebuilding the
//! same scene with the same grid and listing its pairs into a reused `Vec`
//! (`build` then `pairs`), or finding them in one frame (`find_pairs`), must
//! reuse the grid's pools (reset, not freed) and the caller's buffer: after
//! two warm-up frames, 28 more frames make zero heap allocations.
//!
//! Copies of a kept build (`clone_from`, as a snapshot of a broad phase's
//! index takes them) allocate nothing once the copy has its source's room:
//! neither into a copy that saw other builds of the same scene nor back
//! into the grid the build came from.
//!
//! The counting allocator is global to the test binary, so the test holds
//! `serial()`, and only allocations made by the counting thread
//! while counting is switched on are counted (the harness's own threads
//! cannot disturb the count).

use broadphase::{
    Aabb, AdaptiveGrid,
    grid::{GridConfig, PairKernel},
};
use broadphase_scenes::{dense20k, pile, sparse20k};

use broadphase_testkit::allocations_during;

const FRAMES: usize = 30;
const WARM_UP: usize = 2;

/// The two ways to get a frame's pairs.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// `build`, then `pairs`.
    BuildThenPairs,
    /// `find_pairs`.
    FindPairs,
}

/// Runs `FRAMES` frames of `path` on one grid and one pair buffer; returns
/// the allocations of each frame after the warm-up.
fn allocations_per_warm_frame(boxes: &[Aabb], config: GridConfig, path: Path) -> Vec<usize> {
    let mut grid = AdaptiveGrid::with_config(config);
    let mut pairs: Vec<[u32; 2]> = Vec::new();
    let mut per_frame = Vec::with_capacity(FRAMES);
    let mut first_count = None;
    for frame in 0..FRAMES {
        let (result, allocations) = allocations_during(frame >= WARM_UP, || match path {
            Path::BuildThenPairs => {
                let built = grid.build(boxes);
                grid.pairs(&mut pairs);
                built
            }
            Path::FindPairs => grid.find_pairs(boxes, &mut pairs),
        });
        result.expect("valid scene");
        assert_eq!(*first_count.get_or_insert(pairs.len()), pairs.len(), "{path:?} frame {frame}");
        if frame >= WARM_UP {
            per_frame.push(allocations);
        }
    }
    assert!(!pairs.is_empty());
    per_frame
}

/// sparse20k, dense20k and pile (one big leaf, swept), each rebuilt 100
/// times on its own grid, with every kernel this CPU runs, on both paths:
/// zero allocations in each of the 98 warm frames.
pub(crate) fn warm_frames_allocate_nothing() {
    let scenes = [sparse20k(), dense20k(), pile()];
    let mut failures = Vec::new();
    for scene in &scenes {
        for kernel in PairKernel::available() {
            for path in [Path::BuildThenPairs, Path::FindPairs] {
                let config = GridConfig { kernel, ..GridConfig::default() };
                let counts = allocations_per_warm_frame(&scene.boxes, config, path);
                assert_eq!(counts.len(), FRAMES - WARM_UP);
                let total: usize = counts.iter().sum();
                if total != 0 {
                    let first = counts.iter().position(|&c| c != 0).unwrap_or(0);
                    failures.push(format!(
                        "{} {kernel:?} {path:?}: {total} allocations in {} warm frames \
                         (first in warm frame {}: {})",
                        scene.name,
                        counts.len(),
                        first + WARM_UP,
                        counts[first]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// sparse20k and dense20k built 10 times each on one grid, the build
/// copied into a second grid after each and, every other frame, copied
/// back: no allocation after the first copy.
pub(crate) fn warm_copies_allocate_nothing() {
    let scenes = [sparse20k(), dense20k()];
    let mut grid = AdaptiveGrid::default();
    let mut copy = AdaptiveGrid::default();
    let mut kept = 0;
    for frame in 0..20 {
        let boxes = &scenes[frame % 2].boxes;
        let upto = boxes.len() - frame * 97;
        grid.build(&boxes[..upto]).expect("valid scene");
        let counted = frame >= 2;
        let ((), copying) = allocations_during(counted, || copy.clone_from(&grid));
        assert_eq!(copying, 0, "frame {frame}: the copy allocated");
        if frame % 2 == 1 {
            let ((), back) = allocations_during(counted, || grid.clone_from(&copy));
            assert_eq!(back, 0, "frame {frame}: copying back allocated");
        }
        kept += copy.len();
    }
    assert!(kept > 0);
}
