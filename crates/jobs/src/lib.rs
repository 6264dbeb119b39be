//! A job system for broadphase: persistent worker threads on
//! crossbeam-deque, scoped jobs that borrow the caller's data, and a wait
//! that runs jobs instead of blocking.
//!
//! # The model
//!
//! - **Who runs jobs.** A [`JobSystem`] of `n` threads starts `n - 1`
//!   worker threads once and joins them when dropped. The `n`-th is
//!   whichever thread waits: [`JobSystem::scope`], [`JobGroup::wait`] and
//!   [`JobSystem::run`] run queued jobs on the calling thread until their
//!   own jobs are done, and park only when there is nothing to run. So
//!   `JobSystem::new(1)` starts no thread and runs every job inside the
//!   wait.
//! - **Where jobs queue.** Jobs spawned from outside any job go to one
//!   shared queue (first in, first out). Jobs a job spawns go to its
//!   thread's own deque (last in, first out: depth first, in cache), and
//!   idle threads steal them from the other end.
//! - **Who owns what.** A scope's jobs borrow from the caller: slices,
//!   `&mut` halves from `split_at_mut`, any struct that outlives the
//!   scope. The scope returns only after every job it spawned, and every
//!   sub-job those spawned, has finished, even when the closure given to
//!   the scope panics. A [`JobGroup`]'s jobs are `'static` instead and own
//!   what they read. Each thread also owns typed scratch memory that lives
//!   as long as the system ([`JobContext::scratch`]).
//! - **How panics come back.** Every job runs under `catch_unwind`: a
//!   panicking job is counted and its message kept, the other jobs still
//!   run, nothing hangs, and the wait returns [`JobError::Panicked`] with
//!   the first message and the count.
//! - **Parallel loops.** [`JobSystem::for_each`] runs a loop over index
//!   ranges of `0..n`, [`JobSystem::for_each_chunk_mut`] over `&mut`
//!   chunks of a slice, [`JobSystem::for_each_mut`] over the items of a
//!   slice one each: at most one job per thread, each taking the next
//!   piece until none is left; on the calling thread alone when the loop
//!   is small or the system has one thread. Each `&mut` piece goes to one
//!   job, so a pass needs no lock to hand each job its own part.
//! - **What allocates.** A closure job boxes its closure. An indexed job
//!   ([`IndexedJob`], [`Scope::spawn_indexed`]) is a reference and an
//!   index and allocates nothing; the queues and group states keep their
//!   memory, and [`JobSystem::reserve_queue`] sizes the shared queue, so
//!   a frame built of indexed jobs allocates nothing once warm.
//!
//! `unsafe` lives in `scope.rs`, where a borrowing job's lifetime is
//! erased so it can be queued, and `group.rs`, which queues such jobs;
//! the parallel loops (`parallel.rs`) are safe code on top. The latch and
//! sleep protocols that make the erasure sound, and the loops' range
//! dispenser with the latch, are model-checked with loom (`latch.rs`).
//!
//! # Example
//!
//! ```
//! use broadphase_jobs::JobSystem;
//!
//! let jobs = JobSystem::new(2); // the calling thread and one worker
//! let input: Vec<u64> = (0..100_000).collect();
//! let mut sums = vec![0u64; 8];
//! jobs.scope(|s| {
//!     for (chunk, sum) in input.chunks(input.len() / 8).zip(&mut sums) {
//!         s.spawn(move |_ctx| *sum = chunk.iter().sum()); // borrows `input` and `sums`
//!     }
//! })?;
//! assert_eq!(sums.iter().sum::<u64>(), input.iter().sum::<u64>());
//! # Ok::<(), broadphase_jobs::JobError>(())
//! ```

#[allow(unsafe_code, reason = "hands borrowed jobs to the workers through the scope's erasure")]
mod group;
mod latch;
mod parallel;
#[allow(unsafe_code, reason = "erases a scoped job's lifetime; the scope outlives every job")]
mod scope;
mod scratch;
mod sync;
mod system;

pub use group::{JobContext, JobError, JobGroup};
pub use scope::{IndexedJob, Scope};
pub use system::{JobSystem, JobSystemBuilder, SpawnError};
