//! Groups of jobs: spawning, sub-jobs, waiting, and panics as errors.

use core::fmt;
use std::any::Any;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::system::{JobSystem, Participant, Shared};

thread_local! {
    /// Whether this thread is inside a job right now (waiting there would
    /// block a participant that others may be waiting on).
    static IN_JOB: Cell<bool> = const { Cell::new(false) };
}

/// The work of one job.
type JobFn = Box<dyn FnOnce(&mut JobContext<'_>) + Send + 'static>;

/// A job made of a shared object and an index into the work it holds:
/// spawning one clones an `Arc` and allocates nothing, where a closure job
/// boxes its closure. The grid tree's frames are made of these.
pub(crate) trait IndexedJob: Send + Sync + 'static {
    /// Runs item `index`; the `Arc` is dropped before the job counts as
    /// finished, so once a group is done no job holds the object.
    fn run(self: Arc<Self>, ctx: &mut JobContext<'_>, index: usize);
}

/// What a queued job runs.
enum Work {
    Closure(JobFn),
    Indexed(Arc<dyn IndexedJob>, usize),
}

/// A queued job and the group it counts in.
pub(crate) struct Job {
    work: Work,
    group: Arc<GroupState>,
}

impl fmt::Debug for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Job").finish_non_exhaustive()
    }
}

/// The join counter of a group and what its panics said.
#[derive(Debug, Default)]
pub(crate) struct GroupState {
    /// Jobs spawned and not yet finished (a job's sub-jobs are counted
    /// before it finishes, so this reaches 0 only when all are done).
    pending: AtomicUsize,
    panics: Mutex<Panics>,
}

#[derive(Debug, Default)]
struct Panics {
    count: usize,
    first: Option<String>,
}

impl GroupState {
    fn is_done(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0
    }

    fn record_panic(&self, payload: &(dyn Any + Send)) {
        let message = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_owned()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "a job panicked with a non-string payload".to_owned()
        };
        let mut panics = self.panics.lock();
        panics.count += 1;
        panics.first.get_or_insert(message);
    }

    /// Forgets the panics of a group nobody waited on.
    pub(crate) fn clear_panics(&self) {
        *self.panics.lock() = Panics::default();
    }

    /// The group's outcome once it is done, resetting the panic record.
    fn outcome(&self) -> Result<(), JobError> {
        let mut panics = self.panics.lock();
        match panics.first.take() {
            None => Ok(()),
            Some(message) => {
                let count = std::mem::take(&mut panics.count);
                Err(JobError::Panicked { message, count })
            }
        }
    }
}

/// Runs one job on participant `me`, catching a panic into its group.
pub(crate) fn run_job(shared: &Shared, me: &mut Participant, job: Job) {
    let Job { work, group } = job;
    let outer = IN_JOB.replace(true);
    let result = {
        let mut ctx = JobContext { shared, me: &mut *me, group: &group };
        // The closure and everything it captured (or the indexed job's
        // `Arc`) are dropped inside the call, or during unwinding, before
        // the group counts the job finished.
        catch_unwind(AssertUnwindSafe(move || match work {
            Work::Closure(f) => f(&mut ctx),
            Work::Indexed(job, index) => job.run(&mut ctx, index),
        }))
    };
    IN_JOB.set(outer);
    if let Err(payload) = result {
        group.record_panic(&*payload);
    }
    if group.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
        // The waiter may be asleep.
        shared.notify_all();
    }
}

/// What a running job may do: spawn sub-jobs into its group, and use the
/// scratch memory of the thread it runs on.
///
/// # Examples
///
/// ```
/// use broadphase_partition::JobSystem;
/// let jobs = JobSystem::new(2);
/// jobs.run(|ctx| {
///     for _ in 0..4 {
///         ctx.spawn(|ctx| {
///             let buffer: &mut Vec<u64> = ctx.scratch(); // kept across jobs
///             buffer.clear();
///             buffer.extend(0..1000);
///         });
///     }
/// })?;
/// # Ok::<(), broadphase_partition::JobError>(())
/// ```
pub struct JobContext<'a> {
    shared: &'a Shared,
    me: &'a mut Participant,
    group: &'a Arc<GroupState>,
}

impl fmt::Debug for JobContext<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobContext").field("worker_index", &self.me.index).finish_non_exhaustive()
    }
}

impl JobContext<'_> {
    /// Queues a sub-job in the same group, on this thread's deque (others
    /// steal it when idle). The group's `wait` returns only after it, and
    /// anything it spawns, has finished.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::JobSystem;
    /// use std::sync::{Arc, atomic::{AtomicU32, Ordering}};
    /// let jobs = JobSystem::new(2);
    /// let leaves = Arc::new(AtomicU32::new(0));
    /// let counter = Arc::clone(&leaves);
    /// jobs.run(move |ctx| {
    ///     for _ in 0..8 {
    ///         let counter = Arc::clone(&counter);
    ///         ctx.spawn(move |_| { counter.fetch_add(1, Ordering::Relaxed); });
    ///     }
    /// })?;
    /// assert_eq!(leaves.load(Ordering::Relaxed), 8);
    /// # Ok::<(), broadphase_partition::JobError>(())
    /// ```
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&mut JobContext<'_>) + Send + 'static,
    {
        self.push(Work::Closure(Box::new(f)));
    }

    /// As [`spawn`](JobContext::spawn) for an indexed job: allocates nothing.
    pub(crate) fn spawn_indexed(&self, job: Arc<dyn IndexedJob>, index: usize) {
        self.push(Work::Indexed(job, index));
    }

    fn push(&self, work: Work) {
        self.group.pending.fetch_add(1, Ordering::Relaxed);
        self.shared.push_local(&self.me.deque, Job { work, group: Arc::clone(self.group) });
    }

    /// This thread's value of type `T`, made with `T::default()` the first
    /// time and kept across jobs and frames: per-thread memory pools.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::JobSystem;
    /// let jobs = JobSystem::new(1);
    /// jobs.run(|ctx| ctx.scratch::<Vec<u32>>().push(7))?;
    /// jobs.run(|ctx| assert_eq!(ctx.scratch::<Vec<u32>>(), &[7]))?; // same thread, same memory
    /// # Ok::<(), broadphase_partition::JobError>(())
    /// ```
    pub fn scratch<T: Default + Send + 'static>(&mut self) -> &mut T {
        self.me.scratch.get::<T>()
    }

    /// Which thread runs this job: 0 is the thread waiting on a group,
    /// `1..threads` the worker threads.
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_partition::JobSystem::new(1);
    /// jobs.run(|ctx| assert_eq!(ctx.worker_index(), 0))?; // no workers: the waiter ran it
    /// # Ok::<(), broadphase_partition::JobError>(())
    /// ```
    pub fn worker_index(&self) -> usize {
        self.me.index
    }
}

/// Jobs spawned together and waited on together.
///
/// Jobs are `'static` closures: they own (or share through `Arc`) what they
/// read. Dropping a group without calling [`wait`](JobGroup::wait) waits
/// anyway, ignoring panics (except inside a job, where the jobs are left to
/// run on their own).
///
/// # Examples
///
/// ```
/// use broadphase_partition::{JobError, JobSystem};
/// let jobs = JobSystem::new(2);
/// let group = jobs.group();
/// group.spawn(|_| {});
/// group.spawn(|_| panic!("bad job"));
/// match group.wait() {
///     Err(JobError::Panicked { message, count }) => assert_eq!((message.as_str(), count), ("bad job", 1)),
///     other => panic!("{other:?}"),
/// }
/// ```
pub struct JobGroup<'a> {
    system: &'a JobSystem,
    state: Arc<GroupState>,
    waited: bool,
}

impl fmt::Debug for JobGroup<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobGroup")
            .field("pending", &self.state.pending.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<'a> JobGroup<'a> {
    pub(crate) fn new(system: &'a JobSystem, state: Arc<GroupState>) -> Self {
        Self { system, state, waited: false }
    }

    /// Queues a job on the global injector.
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_partition::JobSystem::new(2);
    /// let group = jobs.group();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// group.spawn(move |_| tx.send(42).unwrap());
    /// group.wait()?;
    /// assert_eq!(rx.recv().unwrap(), 42);
    /// # Ok::<(), broadphase_partition::JobError>(())
    /// ```
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&mut JobContext<'_>) + Send + 'static,
    {
        self.push(Work::Closure(Box::new(f)));
    }

    /// As [`spawn`](JobGroup::spawn) for an indexed job: allocates nothing.
    pub(crate) fn spawn_indexed(&self, job: Arc<dyn IndexedJob>, index: usize) {
        self.push(Work::Indexed(job, index));
    }

    fn push(&self, work: Work) {
        self.state.pending.fetch_add(1, Ordering::Relaxed);
        self.system.shared.inject(Job { work, group: Arc::clone(&self.state) });
    }

    /// Waits until every job of the group and all their sub-jobs have
    /// finished, running queued jobs on this thread meanwhile.
    ///
    /// # Errors
    ///
    /// - [`JobError::Panicked`] if any of them panicked (the others still
    ///   ran to completion; nothing hangs).
    /// - [`JobError::WaitInsideJob`] if called from inside a job, where it
    ///   would block a thread the group may need; spawn sub-jobs with
    ///   [`JobContext::spawn`] instead. The group's jobs still run.
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_partition::JobSystem::new(2);
    /// let group = jobs.group();
    /// group.spawn(|ctx| ctx.spawn(|_| {}));
    /// assert!(group.wait().is_ok());
    /// ```
    pub fn wait(mut self) -> Result<(), JobError> {
        if IN_JOB.get() {
            return Err(JobError::WaitInsideJob);
        }
        self.waited = true;
        let state = &self.state;
        self.system.help_until(&|| state.is_done());
        state.outcome()
    }
}

impl Drop for JobGroup<'_> {
    fn drop(&mut self) {
        // Inside a job, waiting could block the only thread able to run
        // the group; its jobs own what they touch and run later anyway.
        if !self.waited && !IN_JOB.get() {
            let state = &self.state;
            self.system.help_until(&|| state.is_done());
        }
        if self.state.is_done() {
            // No job of the group is queued or running: its state can
            // serve the next group.
            self.system.shared.recycle_group(&self.state);
        }
    }
}

/// Why waiting on a [`JobGroup`] failed.
///
/// # Examples
///
/// ```
/// use broadphase_partition::JobError;
/// let e = JobError::Panicked { message: "index out of bounds".into(), count: 2 };
/// assert_eq!(e.to_string(), "2 job(s) panicked; the first said: index out of bounds");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum JobError {
    /// At least one job of the group panicked; the panic was caught on its
    /// thread and the rest of the group still ran.
    Panicked {
        /// The first panic's message (its `&str` or `String` payload).
        message: String,
        /// How many jobs of the group panicked.
        count: usize,
    },
    /// `wait` was called from inside a job.
    WaitInsideJob,
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobError::Panicked { message, count } => {
                write!(f, "{count} job(s) panicked; the first said: {message}")
            }
            JobError::WaitInsideJob => {
                write!(f, "wait called from inside a job; spawn sub-jobs instead")
            }
        }
    }
}

impl std::error::Error for JobError {}
