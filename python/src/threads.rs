//! `threads=` becomes a job system, and work leaves the interpreter the
//! one way every call uses: detached, so other Python threads run, with a
//! panic turned into a `RuntimeError` instead of unwinding into Python.

use broadphase::JobSystem;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};

/// Above this a `threads=` value is a mistake, not a machine.
const MAX_THREADS: i64 = 1024;

/// Job systems kept for the life of the process, one per thread count:
/// starting worker threads on every call would cost more than a small
/// call's work. Each remembers the process that started it, since a child
/// made by `fork` inherits the system but not its workers.
static SYSTEMS: Mutex<Vec<(u32, Arc<JobSystem>)>> = Mutex::new(Vec::new());

/// The job system for a `threads=` argument: `None` is one thread (the
/// caller's, no worker), `0` one per core, `n` that many, the caller's
/// included.
pub(crate) fn job_system(threads: Option<i64>) -> PyResult<Arc<JobSystem>> {
    let count = match threads {
        None => 1,
        Some(0) => std::thread::available_parallelism().map_or(1, usize::from),
        Some(t) if (1..=MAX_THREADS).contains(&t) => t as usize,
        Some(t) => {
            return Err(PyValueError::new_err(format!(
                "threads must be None, 0 (one per core) or 1..={MAX_THREADS}, got {t}"
            )));
        }
    };
    catch_unwind(|| cached(count)).map_err(|payload| internal(&*payload))?
}

/// The kept job system of `count` threads, started on first use in this
/// process.
fn cached(count: usize) -> PyResult<Arc<JobSystem>> {
    let pid = std::process::id();
    let mut systems = SYSTEMS.lock().unwrap_or_else(PoisonError::into_inner);
    if systems.iter().any(|(owner, _)| *owner != pid) {
        // A `fork` child: the parent's systems came along without their
        // worker threads. Dropping one would join threads that do not
        // exist here (a panic), using one would wait on them: they are
        // leaked instead, once per fork and thread count.
        let (own, inherited) =
            std::mem::take(&mut *systems).into_iter().partition(|(owner, _)| *owner == pid);
        *systems = own;
        inherited.into_iter().for_each(std::mem::forget::<(u32, Arc<JobSystem>)>);
    }
    if let Some((_, system)) = systems.iter().find(|(_, s)| s.threads() == count) {
        return Ok(Arc::clone(system));
    }
    let system =
        JobSystem::builder().threads(count).thread_name("broadphase").build().map_err(|e| {
            PyRuntimeError::new_err(format!("could not start {count} threads: {e}"))
        })?;
    let system = Arc::new(system);
    systems.push((pid, Arc::clone(&system)));
    Ok(system)
}

/// Stops the workers of every job system this process kept, before the
/// process forks (registered with `os.register_at_fork` by the package).
///
/// A child made by `fork` gets a copy of the parent's memory at one
/// instant: a worker that was taking or leaving a lock then (going to
/// sleep after a call, in the lock table of `parking_lot`) leaves that lock
/// taken forever in the child, and the child's own workers can hang on it.
/// With no worker running at the fork there is no such lock; the systems
/// start again on the next call, in the parent as in the child.
#[pyfunction]
pub(crate) fn _stop_workers_before_fork(py: Python<'_>) {
    let pid = std::process::id();
    let own: Vec<(u32, Arc<JobSystem>)> = {
        let mut systems = SYSTEMS.lock().unwrap_or_else(PoisonError::into_inner);
        let (own, inherited) =
            std::mem::take(&mut *systems).into_iter().partition(|(owner, _)| *owner == pid);
        *systems = inherited;
        own
    };
    // Dropping the last handle joins the workers; a call running on
    // another Python thread keeps its own handle, and forking under it is
    // the caller's race.
    py.detach(|| drop(own));
}

/// Runs `work` with the interpreter released, so other Python threads run
/// meanwhile. A panic is a bug in this package or the crates below; it
/// comes back as `RuntimeError` rather than `pyo3`'s `PanicException`,
/// which derives from `BaseException` and slips past `except Exception`.
pub(crate) fn detached<T, F>(py: Python<'_>, work: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> T + Send,
{
    py.detach(|| catch_unwind(AssertUnwindSafe(work))).map_err(|payload| internal(&*payload))
}

/// The `RuntimeError` for a caught panic or a failed job.
pub(crate) fn internal(payload: &(dyn Any + Send)) -> PyErr {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned());
    PyRuntimeError::new_err(format!("internal error in broadphase (a bug): {message}"))
}

/// The `RuntimeError` for an error the crates report only when something
/// inside them failed (a job panicked, an allocation was refused).
pub(crate) fn failed(error: impl std::fmt::Display) -> PyErr {
    PyRuntimeError::new_err(format!("internal error in broadphase (a bug): {error}"))
}
