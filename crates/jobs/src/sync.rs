//! The synchronisation primitives the latch and sleep protocols use: the
//! standard ones and `parking_lot`'s, or loom's when the crate is built
//! with `--cfg loom` to model-check those protocols.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicUsize, Ordering, fence};
#[cfg(loom)]
pub(crate) use loom::sync::{Condvar, Mutex, MutexGuard};

#[cfg(not(loom))]
pub(crate) use parking_lot::{Condvar, Mutex, MutexGuard};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicUsize, Ordering, fence};

/// Locks `mutex` (loom's lock returns a `Result`; it cannot be poisoned
/// here, as no code panics while holding it).
#[inline]
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    #[cfg(loom)]
    {
        mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
    #[cfg(not(loom))]
    {
        mutex.lock()
    }
}
