//! Helpers every broadphase crate's tests share, so each test file states
//! only what it checks:
//!
//! - [`within`]: runs a test body under a time limit, so a hang in the job
//!   system fails the test instead of stalling CI;
//! - [`CountingAllocator`] with [`allocations_during`] and
//!   [`allocations_on_every_thread_during`]: the warm-frame tests' proof
//!   that a frame allocates nothing.
//!
//! Scenes live in `broadphase-scenes`; this crate holds no geometry.

use std::sync::mpsc;
use std::time::Duration;

/// Runs `f` on its own thread and returns its result; panics if it takes
/// longer than `seconds`, and passes on `f`'s own panic.
///
/// # Examples
///
/// ```
/// assert_eq!(broadphase_testkit::within(5, || 2 + 2), 4);
/// ```
pub fn within<T: Send + 'static>(seconds: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(Duration::from_secs(seconds)) {
        Ok(Ok(value)) => value,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => panic!("did not finish within {seconds} s"),
    }
}

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Forwards to [`System`], counting allocations and reallocations made on a
/// thread that has switched counting on. A test binary installs it with
/// `#[global_allocator] static ALLOCATOR: CountingAllocator = CountingAllocator;`.
#[derive(Debug)]
pub struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

/// Counting switched on for every thread.
static COUNTING_EVERYWHERE: AtomicBool = AtomicBool::new(false);

thread_local! {
    // `const` initialisation and no destructor: reading it never allocates.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn note_allocation() {
    if COUNTING_EVERYWHERE.load(Ordering::Relaxed) || COUNTING.try_with(Cell::get).unwrap_or(false)
    {
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

/// Runs `f` and returns its result with the allocations this thread made
/// during it; with `count` false nothing is counted (warm-up frames) and
/// the count is 0. One counter serves the whole binary, so callers keep to
/// one counting thread at a time.
pub fn allocations_during<R>(count: bool, f: impl FnOnce() -> R) -> (R, usize) {
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.set(count);
    let result = f();
    COUNTING.set(false);
    (result, ALLOCATIONS.load(Ordering::Relaxed))
}

/// As [`allocations_during`], counting the allocations of every thread of
/// the process while `f` runs (worker threads included).
pub fn allocations_on_every_thread_during<R>(count: bool, f: impl FnOnce() -> R) -> (R, usize) {
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING_EVERYWHERE.store(count, Ordering::SeqCst);
    let result = f();
    COUNTING_EVERYWHERE.store(false, Ordering::SeqCst);
    (result, ALLOCATIONS.load(Ordering::Relaxed))
}
