//! Helpers every broadphase crate's tests share, so each test file states
//! only what it checks:
//!
//! - [`within`]: runs a test body under a time limit, so a hang in the job
//!   system fails the test instead of stalling CI;
//! - [`CountingAllocator`] with [`allocations_during`] and
//!   [`allocations_on_every_thread_during`]: the warm-frame tests' proof
//!   that a frame allocates nothing, taken one test at a time under
//!   [`serial`]; [`live_heap_bytes`]: the soak test's memory figure;
//! - [`huge_pages_advised`]: whether a buffer's memory was advised huge
//!   pages, read from the kernel's own account of the process.
//!
//! Scenes live in `broadphase-scenes`; this crate holds no geometry.

#![allow(unsafe_code, reason = "the counting allocator forwards to the system allocator")]

use std::sync::mpsc;
use std::time::Duration;

/// Whether the mapping that holds `address` is advised transparent huge
/// pages (`hg` among its `VmFlags` in `/proc/self/smaps`). `None` where
/// that cannot be known: not Linux, THP off (the advice is then ignored),
/// or no mapping holds the address.
pub fn huge_pages_advised(address: usize) -> Option<bool> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
    if !mode.is_ok_and(|mode| !mode.contains("[never]")) {
        return None;
    }
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut lines = smaps.lines();
    while let Some(line) = lines.next() {
        let Some((range, _)) = line.split_once(' ') else { continue };
        let Some((from, to)) = range.split_once('-') else { continue };
        let (Ok(from), Ok(to)) = (usize::from_str_radix(from, 16), usize::from_str_radix(to, 16))
        else {
            continue;
        };
        if (from..to).contains(&address) {
            let flags = lines.find(|line| line.starts_with("VmFlags:"))?;
            return Some(flags.split_whitespace().any(|flag| flag == "hg"));
        }
    }
    None
}

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

/// The SIMD paths that `BROADPHASE_REQUIRE_SIMD` says this run must
/// exercise (comma-separated, lower case: `avx2,avx512`); none when it is
/// unset. CI sets it from the CPU's flags, and the SIMD agreement tests
/// fail when a required path is not among the kernels they compared.
///
/// # Examples
///
/// ```
/// // Whatever the environment says, the names come back trimmed and lower case.
/// for path in broadphase_testkit::required_simd() {
///     assert_eq!(path, path.trim().to_ascii_lowercase());
/// }
/// ```
pub fn required_simd() -> Vec<String> {
    std::env::var("BROADPHASE_REQUIRE_SIMD")
        .unwrap_or_default()
        .split(',')
        .map(|path| path.trim().to_ascii_lowercase())
        .filter(|path| !path.is_empty())
        .collect()
}

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Forwards to [`System`], counting allocations and reallocations made on a
/// thread that has switched counting on, and keeping the number of live
/// heap bytes. A test binary installs it with
/// `#[global_allocator] static ALLOCATOR: CountingAllocator = CountingAllocator;`.
#[derive(Debug)]
pub struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

/// Bytes allocated and not yet freed, by every thread, always counted.
static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

/// Counting switched on for every thread.
static COUNTING_EVERYWHERE: AtomicBool = AtomicBool::new(false);

/// The one counting session of the binary: see [`serial`].
static SERIAL: Mutex<()> = Mutex::new(());

thread_local! {
    // `const` initialisation and no destructor: reading them never allocates.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static HOLDS_SERIAL: Cell<bool> = const { Cell::new(false) };
}

fn note_allocation() {
    if COUNTING_EVERYWHERE.load(Ordering::Relaxed) || COUNTING.try_with(Cell::get).unwrap_or(false)
    {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are ours; counting touches only
// atomics and a const-initialised thread-local, none of which allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            LIVE_BYTES.fetch_add(layout.size(), Ordering::Relaxed);
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller upholds `GlobalAlloc::realloc`'s contract.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            LIVE_BYTES.fetch_add(new_size, Ordering::Relaxed);
            LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        moved
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::dealloc`'s contract.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Proof that this thread holds the binary's one counting session; the
/// session ends when it is dropped.
#[derive(Debug)]
pub struct Serial {
    _guard: MutexGuard<'static, ()>,
}

impl Drop for Serial {
    fn drop(&mut self) {
        HOLDS_SERIAL.set(false);
    }
}

/// Takes the binary's one counting session, waiting for any other test
/// that holds it. The allocation counters are global to the process (the
/// every-thread count sees the harness's other tests, too), so every test
/// of a binary that installs [`CountingAllocator`] takes this first and
/// holds it to its end; [`allocations_during`] and
/// [`allocations_on_every_thread_during`] panic on a thread without it.
///
/// # Examples
///
/// ```
/// let _serial = broadphase_testkit::serial();
/// let (_, allocations) = broadphase_testkit::allocations_during(true, || 1 + 1);
/// assert_eq!(allocations, 0); // the doctest installs no counting allocator
/// ```
pub fn serial() -> Serial {
    // A test that failed while holding the session poisons the lock; the
    // counters are reset by every count, so the next test may go on.
    let guard = SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    HOLDS_SERIAL.set(true);
    Serial { _guard: guard }
}

fn assert_serial() {
    assert!(
        HOLDS_SERIAL.get(),
        "count allocations only inside `broadphase_testkit::serial()`: other tests of the \
         binary would add to the count"
    );
}

/// Runs `f` and returns its result with the allocations this thread made
/// during it; with `count` false nothing is counted (warm-up frames) and
/// the count is 0. Panics unless this thread holds [`serial`].
pub fn allocations_during<R>(count: bool, f: impl FnOnce() -> R) -> (R, usize) {
    assert_serial();
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING.set(count);
    let result = f();
    COUNTING.set(false);
    (result, ALLOCATIONS.load(Ordering::Relaxed))
}

/// As [`allocations_during`], counting the allocations of every thread of
/// the process while `f` runs (worker threads included).
pub fn allocations_on_every_thread_during<R>(count: bool, f: impl FnOnce() -> R) -> (R, usize) {
    assert_serial();
    ALLOCATIONS.store(0, Ordering::Relaxed);
    COUNTING_EVERYWHERE.store(count, Ordering::SeqCst);
    let result = f();
    COUNTING_EVERYWHERE.store(false, Ordering::SeqCst);
    (result, ALLOCATIONS.load(Ordering::Relaxed))
}

/// Heap bytes allocated through [`CountingAllocator`] and not yet freed,
/// by every thread: a memory figure that needs no operating system support
/// (0 in a binary that does not install the allocator).
///
/// # Examples
///
/// ```
/// let before = broadphase_testkit::live_heap_bytes();
/// let kept = vec![0u8; 1 << 20];
/// // No counting allocator in a doctest: the figure does not move.
/// assert_eq!(broadphase_testkit::live_heap_bytes(), before);
/// drop(kept);
/// ```
pub fn live_heap_bytes() -> usize {
    LIVE_BYTES.load(Ordering::Relaxed)
}
