//! Regression: a warm frame allocates nothing. Rebuilding the same scene
//! with the same grid and listing its pairs into a reused `Vec` must reuse
//! the grid's pools (reset, not freed) and the caller's buffer: after two
//! warm-up frames, 98 more frames make zero heap allocations.
//!
//! The counting allocator is global to this test binary, so the file holds
//! a single `#[test]`, and only allocations made by the counting thread
//! while counting is switched on are counted (the harness's own threads
//! cannot disturb the count).

use broadphase::{Aabb, AdaptiveGrid, Dedup, GridConfig};
use broadphase_scenes::{dense20k, sparse20k};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Forwards to [`System`], counting allocations and reallocations made on a
/// thread that has switched counting on.
struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // `const` initialisation and no destructor: reading it never allocates.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note_allocation() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are ours; counting touches only an
// atomic and a const-initialised thread-local, neither of which allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

const FRAMES: usize = 100;
const WARM_UP: usize = 2;

/// Runs `FRAMES` frames of build + pairs on one grid and one pair buffer;
/// returns the allocations of each frame after the warm-up.
fn allocations_per_warm_frame(boxes: &[Aabb], config: GridConfig) -> Vec<usize> {
    let mut grid = AdaptiveGrid::with_config(config);
    let mut pairs: Vec<[u32; 2]> = Vec::new();
    let mut per_frame = Vec::with_capacity(FRAMES);
    let mut first_count = None;
    for frame in 0..FRAMES {
        ALLOCATIONS.store(0, Ordering::Relaxed);
        COUNTING.set(frame >= WARM_UP);
        let built = grid.build(boxes);
        grid.pairs(&mut pairs);
        COUNTING.set(false);
        built.expect("valid scene");
        assert_eq!(*first_count.get_or_insert(pairs.len()), pairs.len(), "frame {frame}");
        if frame >= WARM_UP {
            per_frame.push(ALLOCATIONS.load(Ordering::Relaxed));
        }
    }
    assert!(!pairs.is_empty());
    per_frame
}

/// sparse20k and dense20k, each rebuilt 100 times on its own grid, with
/// either dedup mode: zero allocations in each of the 98 warm frames.
#[test]
fn warm_frames_allocate_nothing() {
    let scenes = [sparse20k(), dense20k()];
    let mut failures = Vec::new();
    for scene in &scenes {
        for dedup in [Dedup::ReferencePoint, Dedup::FastUnique] {
            let config = GridConfig { dedup, ..GridConfig::default() };
            let counts = allocations_per_warm_frame(&scene.boxes, config);
            assert_eq!(counts.len(), FRAMES - WARM_UP);
            let total: usize = counts.iter().sum();
            if total != 0 {
                let first = counts.iter().position(|&c| c != 0).unwrap_or(0);
                failures.push(format!(
                    "{} {dedup:?}: {total} allocations in {} warm frames (first in warm frame {}: {})",
                    scene.name,
                    counts.len(),
                    first + WARM_UP,
                    counts[first]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
