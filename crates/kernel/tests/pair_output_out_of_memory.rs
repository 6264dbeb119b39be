//! When the pair output cannot grow, `try_pairs` and `try_find_pairs`
//! report it instead of aborting the process.
//!
//! A pile of n coincident boxes has n(n-1)/2 pairs; a game that feeds
//! arbitrary input (a level editor, a network peer) can ask for more output
//! than memory holds. Rust aborts on a failed `Vec` growth, so `try_pairs`
//! and `try_find_pairs` grow the output with `try_reserve`. This test's
//! allocator refuses any single allocation above a limit, standing in for
//! an exhausted machine.

#![allow(unsafe_code, reason = "the refusing allocator forwards to the system allocator")]

use broadphase_kernel::{AdaptiveGrid, FindPairsError, GridConfig, PairKernel, PairsError};
use broadphase_scenes::pile;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Largest single allocation allowed, in bytes (`usize::MAX`: no limit).
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

struct RefusingAllocator;

// SAFETY: forwards to the system allocator, or returns null (a legal
// "allocation failed" answer) when the request is over the limit.
unsafe impl GlobalAlloc for RefusingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > LIMIT.load(Ordering::Relaxed) {
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > LIMIT.load(Ordering::Relaxed) {
            return std::ptr::null_mut();
        }
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: RefusingAllocator = RefusingAllocator;

/// A partial output is still right: each pair once, `a < b`, in range.
fn assert_partial(pairs: &mut Vec<[u32; 2]>, found: usize, boxes: usize, what: &str) {
    assert_eq!(found, pairs.len(), "{what}");
    assert!(found > 0 && found < 1_999_000, "{what}: {found} pairs");
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), found, "{what}: a partial output repeated a pair");
    assert!(pairs.iter().all(|&[a, b]| a < b && (b as usize) < boxes), "{what}");
}

/// Every kernel this CPU runs, with the pile swept (the default) and tiled
/// (a sweep threshold above the pile).
fn grids() -> Vec<AdaptiveGrid> {
    let mut grids = Vec::new();
    for kernel in PairKernel::available() {
        for sweep_above in [GridConfig::default().sweep_above, 4_000] {
            let config = GridConfig { kernel, sweep_above, ..GridConfig::default() };
            grids.push(AdaptiveGrid::with_config(config));
        }
    }
    grids
}

/// The allocation limit is global to this test binary, so the file holds a
/// single `#[test]` and the two paths run one after the other.
#[test]
fn pile_output_past_memory_is_an_error_not_an_abort() {
    kept_build_output_past_memory();
    frame_output_past_memory();
}

/// `build`, then `try_pairs` under the limit.
fn kept_build_output_past_memory() {
    let boxes = pile().boxes; // 2,000 coincident boxes: 1,999,000 pairs, 16 MB
    for mut grid in grids() {
        let what = format!("{:?}", grid.config());
        grid.build(&boxes).unwrap();

        let mut pairs = Vec::new();
        LIMIT.store(4 << 20, Ordering::Relaxed);
        let result = grid.try_pairs(&mut pairs);
        LIMIT.store(usize::MAX, Ordering::Relaxed);

        let Err(PairsError::OutOfMemory { found }) = result else {
            panic!("{what}: a 16 MB output fit under a 4 MB allocation limit: {result:?}");
        };
        assert_partial(&mut pairs, found, boxes.len(), &format!("{what}: try_pairs"));

        // With memory back, the same grid gives the whole answer.
        grid.try_pairs(&mut pairs).unwrap();
        assert_eq!(pairs.len(), 1_999_000, "{what}");
    }
}

/// `try_find_pairs` under the limit.
fn frame_output_past_memory() {
    let boxes = pile().boxes;
    for mut grid in grids() {
        let what = format!("{:?}", grid.config());
        let mut pairs = Vec::new();
        LIMIT.store(4 << 20, Ordering::Relaxed);
        let result = grid.try_find_pairs(&boxes, &mut pairs);
        LIMIT.store(usize::MAX, Ordering::Relaxed);

        let Err(FindPairsError::Pairs(PairsError::OutOfMemory { found })) = result else {
            panic!("{what}: a 16 MB output fit under a 4 MB allocation limit: {result:?}");
        };
        assert_partial(&mut pairs, found, boxes.len(), &format!("{what}: try_find_pairs"));
        assert!(grid.is_empty());

        // With memory back, the same grid gives the whole answer, on both paths.
        grid.try_find_pairs(&boxes, &mut pairs).unwrap();
        assert_eq!(pairs.len(), 1_999_000, "{what}");
        pairs.sort_unstable();
        pairs.dedup();
        assert_eq!(pairs.len(), 1_999_000, "{what}: a pair repeated");
        grid.build(&boxes).unwrap();
        grid.try_pairs(&mut pairs).unwrap();
        assert_eq!(pairs.len(), 1_999_000, "{what}");
    }
}
