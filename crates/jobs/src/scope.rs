//! Scoped jobs: jobs that borrow from the caller's stack, because the
//! scope does not return until every one of them has finished.
//!
//! This is the one place where lifetimes are erased. A job is queued as a
//! `'static` value; what makes that sound is the scope's latch: the scope
//! waits for it (even when its closure panics) before its borrows end,
//! and a job counts itself finished only after it has dropped everything
//! it captured (see `latch.rs`, model-checked with loom).

use core::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use crate::group::{JobContext, JobError, JobFn, JobGroup, in_job};
use crate::system::JobSystem;

/// A job made of a shared object and an index into the work it holds:
/// spawning one copies a reference and an index and allocates nothing,
/// where a closure job boxes its closure. `run` receives the object for
/// the whole scope, so a job can spawn more jobs on the same object (a
/// grid tree's node jobs spawning their children).
///
/// # Examples
///
/// ```
/// use broadphase_jobs::{IndexedJob, JobContext, JobSystem};
/// use std::sync::atomic::{AtomicU32, Ordering};
///
/// /// Squares each number into its own slot.
/// struct Squares<'a> { input: &'a [u32], output: Vec<AtomicU32> }
/// impl<'scope> IndexedJob<'scope> for Squares<'_> {
///     fn run(&'scope self, _ctx: &mut JobContext<'_, 'scope>, index: usize) {
///         self.output[index].store(self.input[index].pow(2), Ordering::Relaxed);
///     }
/// }
///
/// let input = [1, 2, 3, 4];
/// let squares = Squares { input: &input, output: (0..4).map(|_| AtomicU32::new(0)).collect() };
/// JobSystem::new(2).scope(|s| (0..4).for_each(|i| s.spawn_indexed(&squares, i)))?;
/// let output: Vec<u32> = squares.output.iter().map(|v| v.load(Ordering::Relaxed)).collect();
/// assert_eq!(output, [1, 4, 9, 16]);
/// # Ok::<(), broadphase_jobs::JobError>(())
/// ```
pub trait IndexedJob<'scope>: Sync {
    /// Runs item `index` of this job's work, on whichever thread took it.
    fn run(&'scope self, ctx: &mut JobContext<'_, 'scope>, index: usize);
}

/// An indexed job as queued: its lifetime erased to `'static`.
#[derive(Clone, Copy)]
pub(crate) struct ErasedIndexed(&'static (dyn IndexedJob<'static> + 'static));

impl ErasedIndexed {
    /// Runs item `index`.
    #[inline]
    pub(crate) fn run(self, ctx: &mut JobContext<'_, 'static>, index: usize) {
        self.0.run(ctx, index);
    }
}

/// Erases the lifetime of a closure job so it can be queued.
///
/// The types differ only in lifetimes (the context's `'scope` is a
/// `PhantomData` marker), so layout and vtable are the same.
///
/// # Safety
///
/// The job must be counted in a group whose latch is waited on before
/// `'scope` ends: a scope's (it waits before returning), or a
/// [`JobGroup`]'s when `'scope` is `'static`. The closure runs and is
/// dropped before the latch counts it finished, so nothing it borrows
/// dies while it lives.
///
/// [`JobGroup`]: crate::JobGroup
pub(crate) unsafe fn erase_closure<'scope>(
    job: Box<dyn FnOnce(&mut JobContext<'_, 'scope>) + Send + 'scope>,
) -> JobFn {
    // SAFETY: only lifetimes change; the caller keeps the borrows alive
    // for as long as the job can run (see `# Safety`).
    unsafe {
        core::mem::transmute::<Box<dyn FnOnce(&mut JobContext<'_, 'scope>) + Send + 'scope>, JobFn>(
            job,
        )
    }
}

/// Erases the lifetime of an indexed job so it can be queued.
///
/// # Safety
///
/// As for [`erase_closure`]: the job must be counted in a group whose
/// latch is waited on before `'scope` ends. The reference is used only
/// while the job runs, before the latch counts it finished.
pub(crate) unsafe fn erase_indexed<'scope, J: IndexedJob<'scope>>(job: &'scope J) -> ErasedIndexed {
    let job: &'scope (dyn IndexedJob<'scope> + 'scope) = job;
    // SAFETY: only lifetimes change; the caller keeps `job` alive for as
    // long as it can run (see `# Safety`).
    ErasedIndexed(unsafe {
        core::mem::transmute::<
            &'scope (dyn IndexedJob<'scope> + 'scope),
            &'static (dyn IndexedJob<'static> + 'static),
        >(job)
    })
}

/// Jobs that may borrow anything that outlives the scope; made by
/// [`JobSystem::scope`], which returns only once all of them (and their
/// sub-jobs) have finished.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// let jobs = JobSystem::new(2);
/// let mut halves = [vec![1, 2, 3], vec![4, 5, 6]];
/// let [left, right] = &mut halves;
/// jobs.scope(|s| {
///     s.spawn(|_| left.iter_mut().for_each(|v| *v *= 10));
///     s.spawn(|_| right.iter_mut().for_each(|v| *v *= 100));
/// })?;
/// assert_eq!(halves, [vec![10, 20, 30], vec![400, 500, 600]]);
/// # Ok::<(), broadphase_jobs::JobError>(())
/// ```
#[derive(Debug)]
pub struct Scope<'scope> {
    /// A scope is a group whose jobs borrow: the same latch, queue and
    /// wait, with lifetimes erased on the way in.
    group: JobGroup<'scope>,
    /// Invariant in `'scope`: a scope may not be taken for a shorter one.
    marker: PhantomData<&'scope mut &'scope ()>,
}

impl<'scope> Scope<'scope> {
    /// Queues a job that may borrow for `'scope`. It receives a
    /// [`JobContext`] to spawn sub-jobs into the same scope. Boxes the
    /// closure: one allocation per job ([`spawn_indexed`](Scope::spawn_indexed)
    /// makes none).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// let jobs = JobSystem::new(2);
    /// let words = ["scoped", "jobs", "borrow"];
    /// let mut lengths = [0; 3];
    /// jobs.scope(|s| {
    ///     for (word, length) in words.iter().zip(&mut lengths) {
    ///         s.spawn(move |_| *length = word.len());
    ///     }
    /// })?;
    /// assert_eq!(lengths, [6, 4, 6]);
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn spawn<F>(&self, f: F)
    where
        F: FnOnce(&mut JobContext<'_, 'scope>) + Send + 'scope,
    {
        // SAFETY: the job counts in this scope's latch, which
        // `JobSystem::scope` waits on before `'scope` ends.
        let job = unsafe { erase_closure(Box::new(f)) };
        self.group.queue_closure(job);
    }

    /// Queues `job.run(ctx, index)`; allocates nothing. See [`IndexedJob`].
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::{IndexedJob, JobContext, JobSystem};
    /// use std::sync::atomic::{AtomicUsize, Ordering};
    /// struct Count(AtomicUsize);
    /// impl<'scope> IndexedJob<'scope> for Count {
    ///     fn run(&'scope self, _: &mut JobContext<'_, 'scope>, index: usize) {
    ///         self.0.fetch_add(index, Ordering::Relaxed);
    ///     }
    /// }
    /// let count = Count(AtomicUsize::new(0));
    /// JobSystem::new(2).scope(|s| (0..10).for_each(|i| s.spawn_indexed(&count, i)))?;
    /// assert_eq!(count.0.into_inner(), 45);
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn spawn_indexed<J>(&self, job: &'scope J, index: usize)
    where
        J: IndexedJob<'scope>,
    {
        // SAFETY: as in `spawn`: the scope waits on this latch.
        let job = unsafe { erase_indexed(job) };
        self.group.queue_indexed(job, index);
    }
}

impl JobSystem {
    /// Runs `f`, whose jobs may borrow anything that outlives the call,
    /// then waits for every job spawned into the scope (and their
    /// sub-jobs), running queued jobs on this thread meanwhile; returns
    /// what `f` returned.
    ///
    /// If `f` panics, the scope still waits for its jobs, then resumes the
    /// panic. A panic inside a job is caught on its thread; the other jobs
    /// still run, and the scope reports it as [`JobError::Panicked`].
    ///
    /// # Errors
    ///
    /// - [`JobError::Panicked`] if a job panicked.
    /// - [`JobError::WaitInsideJob`] if called from inside a job, where
    ///   waiting could block a thread the jobs need; `f` is not run. Spawn
    ///   sub-jobs with [`JobContext::spawn`] instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// let jobs = JobSystem::new(2);
    /// let boxes = vec![3u32; 1000];
    /// let mut sums = [0u32; 4];
    /// jobs.scope(|s| {
    ///     for (chunk, sum) in boxes.chunks(250).zip(&mut sums) {
    ///         s.spawn(move |_| *sum = chunk.iter().sum());
    ///     }
    /// })?;
    /// assert_eq!(sums, [750; 4]);
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn scope<'scope, F, R>(&'scope self, f: F) -> Result<R, JobError>
    where
        F: FnOnce(&Scope<'scope>) -> R,
    {
        if in_job() {
            return Err(JobError::WaitInsideJob);
        }
        let scope = Scope { group: self.group(), marker: PhantomData };
        let result = catch_unwind(AssertUnwindSafe(|| f(&scope)));
        // Whatever `f` did, its jobs borrow data that lives only as long
        // as this call: wait for every one of them before returning (not
        // inside a job, checked above, so `wait` does wait).
        let outcome = scope.group.wait();
        match result {
            Ok(value) => outcome.map(|()| value),
            Err(payload) => resume_unwind(payload),
        }
    }
}
