//! Jobs and what runs them: the queued job, its group's state, the context
//! a running job sees, `'static` job groups, and panics as errors.

use core::fmt;
use core::marker::PhantomData;
use std::any::Any;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::latch::Latch;
use crate::scope::{ErasedIndexed, IndexedJob, erase_closure, erase_indexed};
use crate::system::{JobSystem, Participant, Shared};

thread_local! {
    /// Whether this thread is inside a job right now (waiting there would
    /// block a participant that others may be waiting on).
    static IN_JOB: Cell<bool> = const { Cell::new(false) };
}

/// Whether the calling thread is running a job.
pub(crate) fn in_job() -> bool {
    IN_JOB.get()
}

/// A closure job as queued: its borrows erased to `'static` (a scope
/// guarantees them by waiting; see [`erase_closure`]).
pub(crate) type JobFn = Box<dyn FnOnce(&mut JobContext<'_, 'static>) + Send + 'static>;

/// What a queued job runs.
enum Work {
    Closure(JobFn),
    Indexed(ErasedIndexed, usize),
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

/// The latch of a group (or scope) and what its panics said.
#[derive(Debug, Default)]
pub(crate) struct GroupState {
    pub(crate) latch: Latch,
    panics: PanicLog,
}

/// The panics of a group or a parallel loop: how many, and the first
/// message.
#[derive(Debug, Default)]
pub(crate) struct PanicLog {
    panics: Mutex<Panics>,
}

#[derive(Debug, Default)]
struct Panics {
    count: usize,
    first: Option<String>,
}

impl PanicLog {
    /// Counts one panic, keeping its message if it is the first.
    pub(crate) fn record(&self, payload: &(dyn Any + Send)) {
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

    /// Runs `f`, counting a panic instead of unwinding.
    #[inline]
    pub(crate) fn catch(&self, f: impl FnOnce()) {
        if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
            self.record(&*payload);
        }
    }

    /// Forgets every panic.
    fn clear(&self) {
        *self.panics.lock() = Panics::default();
    }

    /// `Ok` if nothing panicked, else what did; resets the log.
    pub(crate) fn outcome(&self) -> Result<(), JobError> {
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

impl GroupState {
    /// Forgets the panics of a group nobody waited on.
    pub(crate) fn clear_panics(&self) {
        self.panics.clear();
    }

    /// The group's outcome once it is done, resetting the panic record.
    fn outcome(&self) -> Result<(), JobError> {
        self.panics.outcome()
    }
}

/// Runs `f` on the calling thread as if it were a job: a wait or scope
/// inside it is refused with [`JobError::WaitInsideJob`], as inside any
/// job.
pub(crate) fn as_job<R>(f: impl FnOnce() -> R) -> R {
    /// Restores the flag however `f` ends.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            IN_JOB.set(self.0);
        }
    }
    let _restore = Restore(IN_JOB.replace(true));
    f()
}

/// Runs one job on participant `me`, catching a panic into its group.
pub(crate) fn run_job(shared: &Shared, me: &mut Participant, job: Job) {
    let Job { work, group } = job;
    let outer = IN_JOB.replace(true);
    let result = {
        let mut ctx = JobContext::new(shared, me, &group);
        // The closure and everything it captured are dropped inside the
        // call, or while unwinding, before the job counts as finished: once
        // its scope's latch reads zero, no job touches borrowed data.
        catch_unwind(AssertUnwindSafe(move || match work {
            Work::Closure(f) => f(&mut ctx),
            Work::Indexed(job, index) => job.run(&mut ctx, index),
        }))
    };
    IN_JOB.set(outer);
    if let Err(payload) = result {
        group.panics.record(&*payload);
    }
    if group.latch.finish() {
        // The waiter may be asleep.
        shared.sleep.notify_all();
    }
}

/// What a running job may do: spawn sub-jobs into its group or scope, and
/// use the scratch memory of the thread it runs on.
///
/// `'scope` is how long the job's borrows live: `'static` for a
/// [`JobGroup`]'s jobs, the scope's lifetime for a
/// [`Scope`](crate::Scope)'s. Sub-jobs may borrow for as long.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
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
/// # Ok::<(), broadphase_jobs::JobError>(())
/// ```
pub struct JobContext<'a, 'scope> {
    shared: &'a Shared,
    me: &'a mut Participant,
    group: &'a Arc<GroupState>,
    /// Invariant in `'scope`, as a scope is.
    scope: PhantomData<&'scope mut &'scope ()>,
}

impl fmt::Debug for JobContext<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JobContext").field("worker_index", &self.me.index).finish_non_exhaustive()
    }
}

impl<'a> JobContext<'a, 'static> {
    fn new(shared: &'a Shared, me: &'a mut Participant, group: &'a Arc<GroupState>) -> Self {
        JobContext { shared, me, group, scope: PhantomData }
    }
}

impl<'scope> JobContext<'_, 'scope> {
    /// Queues a sub-job in the same group or scope, on this thread's deque
    /// (others steal it when idle). The group's `wait`, or the scope,
    /// returns only after it, and anything it spawns, has finished.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// let jobs = JobSystem::new(2);
    /// let leaves = AtomicU32::new(0);
    /// jobs.scope(|s| {
    ///     s.spawn(|ctx| {
    ///         for _ in 0..8 {
    ///             ctx.spawn(|_| {
    ///                 leaves.fetch_add(1, Ordering::Relaxed);
    ///             });
    ///         }
    ///     });
    /// })?;
    /// assert_eq!(leaves.load(Ordering::Relaxed), 8);
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&mut JobContext<'_, 'scope>) + Send + 'scope,
    {
        // SAFETY: this context runs a job of a group whose latch is
        // waited on before `'scope` ends (a scope's, or a `JobGroup`'s with
        // `'scope = 'static`), and the sub-job counts in the same latch.
        let job = unsafe { erase_closure(Box::new(f)) };
        self.push(Work::Closure(job));
    }

    /// Queues `job.run(ctx, index)` as a sub-job, as
    /// [`spawn`](JobContext::spawn) does a closure; allocates nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::{IndexedJob, JobContext, JobSystem};
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// /// Sums 0..n by halving ranges: job `i` covers `[i * width, (i + 1) * width)`.
    /// struct Halves { sum: AtomicU64 }
    /// impl<'scope> IndexedJob<'scope> for Halves {
    ///     fn run(&'scope self, ctx: &mut JobContext<'_, 'scope>, packed: usize) {
    ///         let (start, len) = (packed >> 16, packed & 0xFFFF);
    ///         if len <= 16 {
    ///             self.sum.fetch_add((start..start + len).sum::<usize>() as u64, Ordering::Relaxed);
    ///         } else {
    ///             let half = len / 2;
    ///             ctx.spawn_indexed(self, start << 16 | half);
    ///             ctx.spawn_indexed(self, (start + half) << 16 | (len - half));
    ///         }
    ///     }
    /// }
    ///
    /// let halves = Halves { sum: AtomicU64::new(0) };
    /// JobSystem::new(2).scope(|s| s.spawn_indexed(&halves, 1000))?;
    /// assert_eq!(halves.sum.into_inner(), 499_500);
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn spawn_indexed<J>(&self, job: &'scope J, index: usize)
    where
        J: IndexedJob<'scope>,
    {
        // SAFETY: as in `spawn`: the sub-job counts in a latch that is
        // waited on before `'scope` ends.
        let job = unsafe { erase_indexed(job) };
        self.push(Work::Indexed(job, index));
    }

    fn push(&self, work: Work) {
        self.group.latch.add();
        self.shared.push_local(&self.me.deque, Job { work, group: Arc::clone(self.group) });
    }

    /// This thread's value of type `T`, made with `T::default()` the first
    /// time and kept across jobs and frames: per-thread memory pools.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// let jobs = JobSystem::new(1);
    /// jobs.run(|ctx| ctx.scratch::<Vec<u32>>().push(7))?;
    /// jobs.run(|ctx| assert_eq!(ctx.scratch::<Vec<u32>>(), &[7]))?; // same thread, same memory
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn scratch<T: Default + Send + 'static>(&mut self) -> &mut T {
        self.me.scratch.get::<T>()
    }

    /// Which thread runs this job: 0 is the thread waiting on a group or
    /// scope, `1..threads` the worker threads.
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_jobs::JobSystem::new(1);
    /// jobs.run(|ctx| assert_eq!(ctx.worker_index(), 0))?; // no workers: the waiter ran it
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn worker_index(&self) -> usize {
        self.me.index
    }
}

/// `'static` jobs spawned together and waited on together.
///
/// A group's jobs own (or share through `Arc`) what they read; a
/// [`Scope`](crate::Scope) is the same with jobs that borrow. Dropping a
/// group without calling [`wait`](JobGroup::wait) waits anyway, ignoring
/// panics (except inside a job, where the jobs are left to run on their
/// own).
///
/// # Examples
///
/// ```
/// use broadphase_jobs::{JobError, JobSystem};
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
            .field("pending", &self.state.latch.pending())
            .finish_non_exhaustive()
    }
}

impl<'a> JobGroup<'a> {
    pub(crate) fn new(system: &'a JobSystem, state: Arc<GroupState>) -> Self {
        Self { system, state, waited: false }
    }

    /// Queues a job on the shared queue.
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_jobs::JobSystem::new(2);
    /// let group = jobs.group();
    /// let (tx, rx) = std::sync::mpsc::channel();
    /// group.spawn(move |_| tx.send(42).unwrap());
    /// group.wait()?;
    /// assert_eq!(rx.recv().unwrap(), 42);
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&mut JobContext<'_, 'static>) + Send + 'static,
    {
        self.queue_closure(Box::new(f));
    }

    /// Counts a closure job in the group and queues it on the shared queue.
    pub(crate) fn queue_closure(&self, f: JobFn) {
        self.queue(Work::Closure(f));
    }

    /// Counts an indexed job in the group and queues it on the shared queue.
    pub(crate) fn queue_indexed(&self, job: ErasedIndexed, index: usize) {
        self.queue(Work::Indexed(job, index));
    }

    fn queue(&self, work: Work) {
        self.state.latch.add();
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
    /// let jobs = broadphase_jobs::JobSystem::new(2);
    /// let group = jobs.group();
    /// group.spawn(|ctx| ctx.spawn(|_| {}));
    /// assert!(group.wait().is_ok());
    /// ```
    pub fn wait(mut self) -> Result<(), JobError> {
        if in_job() {
            return Err(JobError::WaitInsideJob);
        }
        self.waited = true;
        let state = &self.state;
        self.system.help_until(&|| state.latch.is_done());
        state.outcome()
    }
}

impl Drop for JobGroup<'_> {
    fn drop(&mut self) {
        // Inside a job, waiting could block the only thread able to run
        // the group; its jobs own what they touch and run later anyway.
        if !self.waited && !in_job() {
            let state = &self.state;
            self.system.help_until(&|| state.latch.is_done());
        }
        if self.state.latch.is_done() {
            // No job of the group is queued or running: its state can
            // serve the next group.
            self.system.shared.recycle_group(&self.state);
        }
    }
}

/// Why waiting on a [`JobGroup`] or a scope failed.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobError;
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
    /// `wait`, or a scope, was called from inside a job; spawn sub-jobs
    /// instead.
    WaitInsideJob,
}

impl fmt::Display for JobError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JobError::Panicked { message, count } => {
                write!(f, "{count} job(s) panicked; the first said: {message}")
            }
            JobError::WaitInsideJob => {
                write!(f, "wait or scope called from inside a job; spawn sub-jobs instead")
            }
        }
    }
}

impl std::error::Error for JobError {}
