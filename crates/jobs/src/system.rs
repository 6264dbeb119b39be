//! The job system: persistent workers, their deques, sleeping and waking.

use core::fmt;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;

use crossbeam_deque::{Steal, Stealer, Worker};
use crossbeam_utils::Backoff;
use parking_lot::Mutex;

use crate::group::{GroupState, Job, JobContext, JobError, JobGroup, run_job};
use crate::latch::Sleep;
use crate::scratch::ScratchMap;

/// Jobs a thread keeps on its own deque before it queues more on the
/// shared queue: crossbeam's deque starts with room for 64 and grows (and
/// later shrinks) past that, reallocating, where the shared queue keeps
/// its capacity from one frame to the next.
const LOCAL_JOBS: usize = 64;

/// One thread that runs jobs: its deque (jobs it spawns go here, last in
/// first out; others steal from the far end) and its scratch memory.
#[derive(Debug)]
pub(crate) struct Participant {
    /// 0 for the thread that waits on a group, 1.. for worker threads.
    pub(crate) index: usize,
    pub(crate) deque: Worker<Job>,
    pub(crate) scratch: ScratchMap,
}

/// What every participant shares.
pub(crate) struct Shared {
    /// Jobs queued from outside any job, and those a thread's full deque
    /// overflowed; first in, first out. A plain queue behind a lock rather
    /// than crossbeam's `Injector`, which allocates a block every 63 jobs:
    /// this one reuses its memory, and it is locked a few hundred times a
    /// frame at most.
    injector: Mutex<VecDeque<Job>>,
    /// Jobs in `injector`, read without its lock.
    injected: AtomicUsize,
    /// States of finished groups, reused by the next groups.
    free_groups: Mutex<Vec<Arc<GroupState>>>,
    /// One per participant, in participant order.
    stealers: Vec<Stealer<Job>>,
    shutdown: AtomicBool,
    /// Worker threads that have made their per-thread start-up
    /// allocations (see [`Shared::register_this_thread`]).
    started: AtomicUsize,
    /// Where idle threads park.
    pub(crate) sleep: Sleep,
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared").field("participants", &self.stealers.len()).finish_non_exhaustive()
    }
}

impl Shared {
    /// Queues a job on the shared queue: from outside any job, or when a
    /// thread's deque is full.
    pub(crate) fn inject(&self, job: Job) {
        let mut queue = self.injector.lock();
        queue.push_back(job);
        self.injected.store(queue.len(), Ordering::SeqCst);
        drop(queue);
        self.sleep.notify_one();
    }

    /// Queues a job spawned inside a job: on the spawning thread's deque
    /// while it has room, else on the shared queue.
    pub(crate) fn push_local(&self, local: &Worker<Job>, job: Job) {
        if local.len() < LOCAL_JOBS {
            local.push(job);
            self.sleep.notify_one();
        } else {
            self.inject(job);
        }
    }

    /// Room on the shared queue for `jobs` more jobs than it holds now.
    pub(crate) fn reserve_more(&self, jobs: usize) {
        self.injector.lock().reserve(jobs);
    }

    fn pop_injected(&self) -> Option<Job> {
        if self.injected.load(Ordering::SeqCst) == 0 {
            return None;
        }
        let mut queue = self.injector.lock();
        let job = queue.pop_front();
        self.injected.store(queue.len(), Ordering::SeqCst);
        job
    }

    /// A group state with no pending job, reused if one is free.
    pub(crate) fn take_group(&self) -> Arc<GroupState> {
        let Some(state) = self.free_groups.lock().pop() else {
            return Arc::new(GroupState::default());
        };
        // The last job of its group may still be dropping its handle (it
        // counted itself finished just before): wait for that, a few
        // instructions, so the state is ours alone.
        let backoff = Backoff::new();
        while Arc::strong_count(&state) > 1 {
            backoff.snooze();
        }
        state
    }

    /// Keeps a finished group's state for the next group.
    pub(crate) fn recycle_group(&self, state: &Arc<GroupState>) {
        state.clear_panics();
        self.free_groups.lock().push(Arc::clone(state));
    }

    fn has_work(&self) -> bool {
        self.injected.load(Ordering::SeqCst) > 0 || self.stealers.iter().any(|s| !s.is_empty())
    }

    /// Takes the next job for participant `me`: its own deque first, then
    /// the shared queue, then one stolen from another participant.
    pub(crate) fn find_job(&self, local: &Worker<Job>, me: usize) -> Option<Job> {
        if let Some(job) = local.pop() {
            return Some(job);
        }
        let n = self.stealers.len();
        loop {
            if let Some(job) = self.pop_injected() {
                return Some(job);
            }
            let mut retry = false;
            // Start after ourselves so thieves spread over victims.
            for k in 1..n {
                match self.stealers[(me + k) % n].steal() {
                    Steal::Success(job) => return Some(job),
                    Steal::Retry => retry = true,
                    Steal::Empty => {}
                }
            }
            if !retry {
                return None;
            }
        }
    }

    /// Makes now, at start-up, the allocations the libraries under the pool
    /// make once per thread — crossbeam-epoch registers a thread the first
    /// time it steals, parking_lot records a thread the first time it
    /// parks — so that they do not land in whichever frame first steals or
    /// parks on this thread.
    fn register_this_thread() {
        // A steal from a deque of our own, always empty, pins the epoch. Not
        // from the pool's deques: a job stolen here would be lost.
        let _ = Worker::<Job>::new_lifo().stealer().steal();
        let (lock, condvar) = (Mutex::new(()), parking_lot::Condvar::new());
        condvar.wait_for(&mut lock.lock(), std::time::Duration::ZERO);
    }

    /// Sleeps until work may be available, `done()` holds, or shutdown.
    pub(crate) fn park(&self, done: impl Fn() -> bool) {
        self.sleep.park(|| self.has_work() || done() || self.shutdown.load(Ordering::SeqCst));
    }
}

/// A fixed set of persistent worker threads fed through crossbeam-deque:
/// a shared queue for jobs queued from outside any job, and one
/// [`Worker`](crossbeam_deque::Worker) deque per thread for the sub-jobs
/// its jobs spawn, which idle threads steal.
///
/// `threads` counts every thread that runs jobs, **including the one that
/// waits**: [`JobSystem::scope`] and [`JobGroup::wait`] do not block idle,
/// they run queued jobs until their jobs are done. So `JobSystem::new(2)` starts one worker
/// thread, and `JobSystem::new(1)` starts none (jobs run inside `wait`).
/// Threads are started once and live until the system is dropped, which
/// stops and joins them. Each participant (worker thread, or the waiting
/// caller) keeps typed scratch memory across jobs and frames
/// ([`JobContext::scratch`]).
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicUsize, Ordering};
///
/// let jobs = JobSystem::new(2);
/// let sum = Arc::new(AtomicUsize::new(0));
/// let group = jobs.group();
/// for i in 0..100 {
///     let sum = Arc::clone(&sum);
///     group.spawn(move |_ctx| {
///         sum.fetch_add(i, Ordering::Relaxed);
///     });
/// }
/// group.wait()?; // this thread runs jobs too while it waits
/// assert_eq!(sum.load(Ordering::Relaxed), 4950);
/// # Ok::<(), broadphase_jobs::JobError>(())
/// ```
#[derive(Debug)]
pub struct JobSystem {
    pub(crate) shared: Arc<Shared>,
    /// The waiting thread's participant slot (index 0); whoever waits on a
    /// group locks it to help, a second concurrent waiter parks instead.
    pub(crate) caller: Mutex<Participant>,
    handles: Vec<JoinHandle<()>>,
}

impl JobSystem {
    /// A job system of `threads` threads in all, the caller's included
    /// (`threads - 1` worker threads are started); `0` means one per
    /// available core.
    ///
    /// # Panics
    ///
    /// If the operating system refuses to start a thread; use
    /// [`JobSystem::builder`] to get that as an error instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// assert_eq!(JobSystem::new(3).threads(), 3);
    /// assert!(JobSystem::new(0).threads() >= 1);
    /// ```
    pub fn new(threads: usize) -> Self {
        match Self::builder().threads(threads).build() {
            Ok(system) => system,
            Err(e) => panic!("broadphase JobSystem::new({threads}): {e}"),
        }
    }

    /// A builder, for thread names, stack size, or start-up errors as values.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// let jobs = JobSystem::builder().threads(2).thread_name("physics").build()?;
    /// assert_eq!(jobs.threads(), 2);
    /// # Ok::<(), broadphase_jobs::SpawnError>(())
    /// ```
    pub fn builder() -> JobSystemBuilder {
        JobSystemBuilder::default()
    }

    /// Threads that run jobs, the waiting caller's included.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(broadphase_jobs::JobSystem::new(1).threads(), 1);
    /// ```
    pub fn threads(&self) -> usize {
        self.shared.stealers.len()
    }

    /// A new, empty group of jobs to spawn into and wait on.
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_jobs::JobSystem::new(2);
    /// let group = jobs.group();
    /// group.spawn(|ctx| assert!(ctx.worker_index() < 2));
    /// group.wait()?;
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn group(&self) -> JobGroup<'_> {
        JobGroup::new(self, self.shared.take_group())
    }

    /// Runs one job (which may spawn sub-jobs) and waits for it and all its
    /// descendants, helping with them.
    ///
    /// # Errors
    ///
    /// [`JobError`] if a job of the group panicked.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::{JobError, JobSystem};
    /// let jobs = JobSystem::new(2);
    /// let err = jobs.run(|_ctx| panic!("boom")).unwrap_err();
    /// assert!(matches!(err, JobError::Panicked { ref message, count: 1 } if message == "boom"));
    /// ```
    pub fn run<F>(&self, f: F) -> Result<(), JobError>
    where
        F: FnOnce(&mut JobContext<'_, 'static>) + Send + 'static,
    {
        let group = self.group();
        group.spawn(f);
        group.wait()
    }

    /// Room for `jobs` jobs queued at once from outside any job, so a frame
    /// that queues as many as an earlier one allocates nothing, however
    /// fast the workers drain the queue. The queue keeps its memory, so
    /// callers that queue a varying number of jobs reserve last frame's
    /// count.
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_jobs::JobSystem::new(2);
    /// jobs.reserve_queue(1024); // a frame of up to 1,024 top-level jobs queues without allocating
    /// ```
    pub fn reserve_queue(&self, jobs: usize) {
        let mut queue = self.shared.injector.lock();
        let additional = jobs.saturating_sub(queue.len());
        queue.reserve(additional);
    }

    /// Runs queued jobs on the calling thread (as participant 0) until
    /// `done()` holds; parks when there is nothing to run.
    pub(crate) fn help_until(&self, done: &dyn Fn() -> bool) {
        let backoff = Backoff::new();
        while !done() {
            if let Some(mut me) = self.caller.try_lock() {
                let me = &mut *me;
                while !done() {
                    match self.shared.find_job(&me.deque, me.index) {
                        Some(job) => {
                            run_job(&self.shared, me, job);
                            backoff.reset();
                        }
                        None => break,
                    }
                }
            }
            if done() {
                break;
            }
            if backoff.is_completed() {
                self.shared.park(done);
                backoff.reset();
            } else {
                backoff.snooze();
            }
        }
    }
}

impl Drop for JobSystem {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::SeqCst);
        self.shared.sleep.notify_all();
        for handle in self.handles.drain(..) {
            // Jobs run under catch_unwind, so a worker never unwinds.
            let _ = handle.join();
        }
    }
}

fn worker_main(shared: Arc<Shared>, mut me: Participant) {
    Shared::register_this_thread();
    shared.started.fetch_add(1, Ordering::SeqCst);
    let backoff = Backoff::new();
    loop {
        if let Some(job) = shared.find_job(&me.deque, me.index) {
            run_job(&shared, &mut me, job);
            backoff.reset();
            continue;
        }
        if shared.shutdown.load(Ordering::SeqCst) {
            return;
        }
        if backoff.is_completed() {
            shared.park(|| false);
            backoff.reset();
        } else {
            backoff.snooze();
        }
    }
}

/// Configures a [`JobSystem`]; `build` reports start-up failure as a value.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystemBuilder;
/// let jobs = JobSystemBuilder::default().threads(4).stack_size(1 << 20).build()?;
/// assert_eq!(jobs.threads(), 4);
/// # Ok::<(), broadphase_jobs::SpawnError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct JobSystemBuilder {
    threads: usize,
    thread_name: Option<String>,
    stack_size: Option<usize>,
}

impl JobSystemBuilder {
    /// Threads in all, the waiting caller's included; `0` (the default)
    /// means one per available core.
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_jobs::JobSystem::builder().threads(1).build()?;
    /// assert_eq!(jobs.threads(), 1);
    /// # Ok::<(), broadphase_jobs::SpawnError>(())
    /// ```
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Worker threads are named `{name}-1`, `{name}-2`, …
    /// (default `broadphase`).
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_jobs::JobSystem::builder().thread_name("bp").build()?;
    /// # Ok::<(), broadphase_jobs::SpawnError>(())
    /// ```
    pub fn thread_name(mut self, name: impl Into<String>) -> Self {
        self.thread_name = Some(name.into());
        self
    }

    /// Stack size of each worker thread, in bytes (default: the platform's).
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_jobs::JobSystem::builder().stack_size(4 << 20).build()?;
    /// # Ok::<(), broadphase_jobs::SpawnError>(())
    /// ```
    pub fn stack_size(mut self, bytes: usize) -> Self {
        self.stack_size = Some(bytes);
        self
    }

    /// Starts the worker threads.
    ///
    /// # Errors
    ///
    /// [`SpawnError::Io`] if the operating system refuses a thread;
    /// threads already started are stopped and joined first.
    ///
    /// # Examples
    ///
    /// ```
    /// let jobs = broadphase_jobs::JobSystem::builder().threads(2).build()?;
    /// assert_eq!(jobs.threads(), 2);
    /// # Ok::<(), broadphase_jobs::SpawnError>(())
    /// ```
    pub fn build(self) -> Result<JobSystem, SpawnError> {
        let threads = if self.threads == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            self.threads
        };
        let deques: Vec<Worker<Job>> = (0..threads).map(|_| Worker::new_lifo()).collect();
        let shared = Arc::new(Shared {
            injector: Mutex::new(VecDeque::new()),
            injected: AtomicUsize::new(0),
            free_groups: Mutex::new(Vec::new()),
            stealers: deques.iter().map(Worker::stealer).collect(),
            shutdown: AtomicBool::new(false),
            started: AtomicUsize::new(0),
            sleep: Sleep::default(),
        });
        Shared::register_this_thread(); // the thread that builds is the one that waits, usually
        let mut deques = deques.into_iter().enumerate();
        let (_, caller_deque) = deques.next().expect("threads >= 1");
        let mut system = JobSystem {
            shared: Arc::clone(&shared),
            caller: Mutex::new(Participant {
                index: 0,
                deque: caller_deque,
                scratch: ScratchMap::default(),
            }),
            handles: Vec::with_capacity(threads - 1),
        };
        let name = self.thread_name.as_deref().unwrap_or("broadphase");
        for (index, deque) in deques {
            let me = Participant { index, deque, scratch: ScratchMap::default() };
            let shared = Arc::clone(&shared);
            let mut builder = std::thread::Builder::new().name(format!("{name}-{index}"));
            if let Some(bytes) = self.stack_size {
                builder = builder.stack_size(bytes);
            }
            // On error `system` drops here, stopping the threads started so far.
            let handle = builder.spawn(move || worker_main(shared, me)).map_err(SpawnError::Io)?;
            system.handles.push(handle);
        }
        // Wait until every worker has registered with the libraries under
        // the pool: a worker the scheduler starts late would otherwise make
        // those allocations in some frame long after `build`.
        while shared.started.load(Ordering::SeqCst) < threads - 1 {
            std::thread::yield_now();
        }
        Ok(system)
    }
}

/// Why a [`JobSystem`] could not start.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::SpawnError;
/// let e = SpawnError::Io(std::io::Error::other("no threads left"));
/// assert!(e.to_string().contains("no threads left"));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum SpawnError {
    /// The operating system refused to start a worker thread.
    Io(std::io::Error),
}

impl fmt::Display for SpawnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpawnError::Io(e) => write!(f, "could not start a worker thread: {e}"),
        }
    }
}

impl std::error::Error for SpawnError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SpawnError::Io(e) => Some(e),
        }
    }
}
