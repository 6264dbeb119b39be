//! The two protocols every wait rests on, kept apart so loom can check
//! them: a [`Latch`] counts a group's unfinished jobs, and [`Sleep`] parks
//! idle threads without losing a wake-up.
//!
//! A scope's soundness hangs on the latch: its jobs borrow the caller's
//! stack, so the caller may return only once every job has finished with
//! it. A job counts itself finished ([`Latch::finish`], release) only after
//! its closure and everything it captured are gone; a waiter that sees the
//! count at zero ([`Latch::is_done`], acquire) therefore sees every write
//! the jobs made, and no job touches borrowed data again.

use crate::sync::{AtomicUsize, Condvar, Mutex, Ordering, fence, lock};

/// Jobs of one group spawned and not yet finished. A job's sub-jobs are
/// counted before the job itself finishes, so the count reaches zero only
/// once all of them are done.
#[derive(Debug)]
pub(crate) struct Latch {
    pending: AtomicUsize,
}

impl Default for Latch {
    fn default() -> Self {
        Latch { pending: AtomicUsize::new(0) }
    }
}

impl Latch {
    /// Counts one more job; call before the job is queued.
    #[inline]
    pub(crate) fn add(&self) {
        // Relaxed: every later `finish` is an RMW on the same counter, so
        // it is ordered after this one whatever thread runs it.
        self.pending.fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one job finished; `true` when it was the last one (the
    /// waiter may be asleep: wake it).
    #[inline]
    pub(crate) fn finish(&self) -> bool {
        self.pending.fetch_sub(1, Ordering::AcqRel) == 1
    }

    /// Whether every job counted so far has finished.
    #[inline]
    pub(crate) fn is_done(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0
    }

    /// Jobs not yet finished (for `Debug` output).
    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::Relaxed)
    }
}

/// Where idle threads sleep, and how work wakes them.
///
/// A sleeper counts itself in `sleepers`, then (after a fence) checks
/// whether it should run after all; a waker publishes its work, then
/// (after a fence) looks at `sleepers` and, if anyone may sleep, notifies
/// under the lock. With both fences sequentially consistent, either the
/// sleeper sees the work or the waker sees the sleeper, and the lock makes
/// the notification reach a sleeper that is already waiting.
#[derive(Debug)]
pub(crate) struct Sleep {
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

impl Default for Sleep {
    fn default() -> Self {
        Sleep { sleepers: AtomicUsize::new(0), lock: Mutex::new(()), wake: Condvar::new() }
    }
}

impl Sleep {
    /// Sleeps unless `ready()` holds once this thread is counted as a
    /// sleeper; returns after one wake-up (or, outside loom, after at most
    /// `PARK_TIMEOUT`: a backstop that turns a lost wake-up, a bug, into
    /// latency instead of a hang). Callers loop.
    pub(crate) fn park(&self, ready: impl Fn() -> bool) {
        let mut guard = lock(&self.lock);
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !ready() {
            #[cfg(loom)]
            {
                guard = self.wake.wait(guard).unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            #[cfg(not(loom))]
            {
                self.wake.wait_for(&mut guard, PARK_TIMEOUT);
            }
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        drop(guard);
    }

    /// Wakes one sleeping thread, if any may sleep; call after publishing
    /// work.
    pub(crate) fn notify_one(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = lock(&self.lock);
            self.wake.notify_one();
        }
    }

    /// Wakes every sleeping thread (a group finished and its waiter may be
    /// asleep, or shutdown).
    pub(crate) fn notify_all(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::SeqCst) > 0 {
            let _guard = lock(&self.lock);
            self.wake.notify_all();
        }
    }
}

/// Longest a parked thread sleeps before it looks at the queues again.
#[cfg(not(loom))]
const PARK_TIMEOUT: std::time::Duration = std::time::Duration::from_millis(5);

/// The protocols under every interleaving loom can reach: a waiter that
/// helps and parks, a worker that runs jobs and parks, one job that spawns
/// a sub-job; and a parallel loop's jobs draining its range dispenser
/// under the same latch. Run with
/// `RUSTFLAGS="--cfg loom" cargo test -p broadphase-jobs --release --lib loom`.
#[cfg(all(test, loom))]
#[allow(unsafe_code, reason = "the model reads its counters through loom's UnsafeCell")]
mod loom_tests {
    use super::{Latch, Sleep};
    use crate::parallel::{Ranges, Split};
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::{AtomicBool, Ordering};
    use loom::sync::{Arc, Mutex};
    use loom::thread;

    /// A scope in miniature: a queue of job numbers, the scope's latch, the
    /// threads' sleep, and the caller's data the jobs write.
    struct Model {
        queue: Mutex<Vec<usize>>,
        latch: Latch,
        sleep: Sleep,
        shutdown: AtomicBool,
        /// Borrowed stack data in the real scope: one slot per job.
        data: [UnsafeCell<u32>; 2],
    }

    impl Model {
        fn spawn(&self, job: usize) {
            self.latch.add();
            self.queue.lock().unwrap().push(job);
            self.sleep.notify_one();
        }

        fn pop(&self) -> Option<usize> {
            self.queue.lock().unwrap().pop()
        }

        fn has_work(&self) -> bool {
            !self.queue.lock().unwrap().is_empty()
        }

        /// Job 0 spawns job 1 before it finishes, as a node job spawns its
        /// children.
        fn run(&self, job: usize) {
            // SAFETY: job `job` runs once, and nothing else touches its slot
            // until the latch says every job is done (which loom checks).
            self.data[job].with_mut(|slot| unsafe { *slot += 1 });
            if job == 0 {
                self.spawn(1);
            }
            if self.latch.finish() {
                self.sleep.notify_all();
            }
        }
    }

    #[test]
    fn loom_a_waiter_returns_only_after_every_job_and_sees_their_writes() {
        // Three preemptions cover the races here (a wake-up between the
        // check and the wait, a finish between two loads) and keep the run
        // to seconds; `LOOM_MAX_PREEMPTIONS` overrides it.
        let mut model = loom::model::Builder::new();
        if model.preemption_bound.is_none() {
            model.preemption_bound = Some(3);
        }
        model.check(|| {
            let model = Arc::new(Model {
                queue: Mutex::new(Vec::new()),
                latch: Latch::default(),
                sleep: Sleep::default(),
                shutdown: AtomicBool::new(false),
                data: [UnsafeCell::new(0), UnsafeCell::new(0)],
            });
            let worker = {
                let model = Arc::clone(&model);
                thread::spawn(move || {
                    loop {
                        if let Some(job) = model.pop() {
                            model.run(job);
                        } else if model.shutdown.load(Ordering::SeqCst) {
                            return;
                        } else {
                            model
                                .sleep
                                .park(|| model.has_work() || model.shutdown.load(Ordering::SeqCst));
                        }
                    }
                })
            };
            model.spawn(0);
            // The scope's wait: help, else park until done.
            while !model.latch.is_done() {
                match model.pop() {
                    Some(job) => model.run(job),
                    None => model.sleep.park(|| model.latch.is_done() || model.has_work()),
                }
            }
            // The caller owns its data again: a job still writing would be
            // a data race, which loom reports.
            // SAFETY: the latch is done, so no job writes any slot now;
            // loom reports it as a race if that were false.
            let written: [u32; 2] =
                core::array::from_fn(|job| model.data[job].with(|slot| unsafe { *slot }));
            assert_eq!(written, [1, 1]);
            model.shutdown.store(true, Ordering::SeqCst);
            model.sleep.notify_all();
            worker.join().unwrap();
        });
    }

    /// A parallel loop in miniature: the waiter queues two loop jobs (one
    /// per thread) on the loop's real range dispenser, and whichever
    /// thread runs one takes chunks until none is left.
    struct LoopModel {
        /// Loop jobs queued and not yet taken.
        queued: Mutex<usize>,
        latch: Latch,
        sleep: Sleep,
        shutdown: AtomicBool,
        ranges: Ranges,
        /// The caller's data: one slot per item of the loop.
        data: [UnsafeCell<u32>; 3],
    }

    impl LoopModel {
        fn spawn(&self) {
            self.latch.add();
            *self.queued.lock().unwrap() += 1;
            self.sleep.notify_one();
        }

        fn pop(&self) -> bool {
            let mut queued = self.queued.lock().unwrap();
            let some = *queued > 0;
            *queued -= usize::from(some);
            some
        }

        fn has_work(&self) -> bool {
            *self.queued.lock().unwrap() > 0
        }

        /// One loop job: drains the dispenser.
        fn run(&self) {
            while let Some(range) = self.ranges.take() {
                for item in range {
                    // SAFETY: the dispenser hands each item to one job, and
                    // nothing else touches the slot until the latch says
                    // every job is done (loom checks both).
                    self.data[item].with_mut(|slot| unsafe { *slot += 1 });
                }
            }
            if self.latch.finish() {
                self.sleep.notify_all();
            }
        }
    }

    #[test]
    fn loom_a_parallel_loop_runs_each_item_once_before_its_wait_returns() {
        let mut model = loom::model::Builder::new();
        if model.preemption_bound.is_none() {
            model.preemption_bound = Some(3);
        }
        model.check(|| {
            let model = Arc::new(LoopModel {
                queued: Mutex::new(0),
                latch: Latch::default(),
                sleep: Sleep::default(),
                shutdown: AtomicBool::new(false),
                // Three items in chunks of one (as with two threads and a
                // `min_len` of 1 there would be more; three keeps it small).
                ranges: Ranges::new(Split::each(3)),
                data: [UnsafeCell::new(0), UnsafeCell::new(0), UnsafeCell::new(0)],
            });
            let worker = {
                let model = Arc::clone(&model);
                thread::spawn(move || {
                    loop {
                        if model.pop() {
                            model.run();
                        } else if model.shutdown.load(Ordering::SeqCst) {
                            return;
                        } else {
                            model
                                .sleep
                                .park(|| model.has_work() || model.shutdown.load(Ordering::SeqCst));
                        }
                    }
                })
            };
            model.spawn();
            model.spawn();
            while !model.latch.is_done() {
                if model.pop() {
                    model.run();
                } else {
                    model.sleep.park(|| model.latch.is_done() || model.has_work());
                }
            }
            // SAFETY: the latch is done, so no job writes any slot now;
            // loom reports it as a race if that were false.
            let written: [u32; 3] =
                core::array::from_fn(|item| model.data[item].with(|slot| unsafe { *slot }));
            assert_eq!(written, [1, 1, 1], "each item exactly once");
            model.shutdown.store(true, Ordering::SeqCst);
            model.sleep.notify_all();
            worker.join().unwrap();
        });
    }
}
