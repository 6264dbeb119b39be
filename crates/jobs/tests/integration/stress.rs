//! The job system under stress, every test bounded in time (a hang fails
//! instead of stalling CI): many tiny jobs, deep and wide nested spawns,
//! panicking jobs reported as errors, waits from several threads, clean
//! shutdown, scratch memory kept per thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

use broadphase_jobs::{JobContext, JobError, JobSystem};
use broadphase_testkit::within;

#[test]
fn a_hundred_thousand_tiny_jobs() {
    within(60, || {
        for threads in [1, 2, 4, 8] {
            let jobs = JobSystem::new(threads);
            let sum = Arc::new(AtomicUsize::new(0));
            let group = jobs.group();
            for i in 0..100_000 {
                let sum = Arc::clone(&sum);
                group.spawn(move |_| {
                    sum.fetch_add(i, Ordering::Relaxed);
                });
            }
            group.wait().unwrap();
            assert_eq!(sum.load(Ordering::Relaxed), 100_000 * 99_999 / 2, "{threads} threads");
        }
    });
}

/// A binary tree of sub-jobs, 2^depth leaves, each spawned by its parent.
fn fan_out(ctx: &JobContext<'_, 'static>, depth: u32, leaves: Arc<AtomicUsize>) {
    if depth == 0 {
        leaves.fetch_add(1, Ordering::Relaxed);
        return;
    }
    for _ in 0..2 {
        let leaves = Arc::clone(&leaves);
        ctx.spawn(move |ctx| fan_out(ctx, depth - 1, leaves));
    }
}

#[test]
fn nested_spawns_deep_and_wide() {
    within(60, || {
        for threads in [1, 2, 4] {
            let jobs = JobSystem::new(threads);
            for round in 0..20 {
                let leaves = Arc::new(AtomicUsize::new(0));
                let counter = Arc::clone(&leaves);
                jobs.run(move |ctx| fan_out(ctx, 14, counter)).unwrap();
                assert_eq!(
                    leaves.load(Ordering::Relaxed),
                    1 << 14,
                    "{threads} threads, round {round}"
                );
            }
            // A chain: each job spawns one more, 10,000 deep.
            let count = Arc::new(AtomicUsize::new(0));
            fn chain(ctx: &JobContext<'_, 'static>, left: u32, count: Arc<AtomicUsize>) {
                count.fetch_add(1, Ordering::Relaxed);
                if left > 0 {
                    ctx.spawn(move |ctx| chain(ctx, left - 1, count));
                }
            }
            let c = Arc::clone(&count);
            jobs.run(move |ctx| chain(ctx, 9_999, c)).unwrap();
            assert_eq!(count.load(Ordering::Relaxed), 10_000);
        }
    });
}

#[test]
fn a_panicking_job_is_an_error_not_a_hang() {
    within(60, || {
        for threads in [1, 2, 4] {
            let jobs = JobSystem::new(threads);
            let done = Arc::new(AtomicUsize::new(0));
            let group = jobs.group();
            for i in 0..1_000 {
                let done = Arc::clone(&done);
                group.spawn(move |ctx| {
                    if i % 250 == 7 {
                        panic!("job {i} failed");
                    }
                    // Panics in sub-jobs are reported too.
                    if i == 500 {
                        ctx.spawn(|_| panic!("{}", String::from("sub-job failed")));
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                });
            }
            match group.wait() {
                Err(JobError::Panicked { message, count }) => {
                    assert_eq!(count, 5, "{threads} threads");
                    assert!(message.contains("failed"), "{message}");
                }
                other => panic!("{threads} threads: expected a panic error, got {other:?}"),
            }
            assert_eq!(done.load(Ordering::Relaxed), 996, "the other jobs still ran");
            // The system is still usable after panics.
            let ok = Arc::new(AtomicUsize::new(0));
            let o = Arc::clone(&ok);
            jobs.run(move |_| {
                o.fetch_add(1, Ordering::Relaxed);
            })
            .unwrap();
            assert_eq!(ok.load(Ordering::Relaxed), 1);
        }
    });
}

#[test]
fn waiting_inside_a_job_is_an_error() {
    within(60, || {
        let jobs = Arc::new(JobSystem::new(2));
        let inner = Arc::clone(&jobs);
        let (tx, rx) = mpsc::channel();
        jobs.run(move |_| {
            let group = inner.group();
            group.spawn(|_| {});
            tx.send(group.wait()).unwrap();
        })
        .unwrap();
        assert_eq!(rx.recv().unwrap(), Err(JobError::WaitInsideJob));
        // The inner group's job still runs; the system shuts down cleanly.
        drop(jobs);
    });
}

#[test]
fn several_threads_wait_on_one_system_at_once() {
    within(60, || {
        let jobs = Arc::new(JobSystem::new(2));
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let jobs = Arc::clone(&jobs);
                std::thread::spawn(move || {
                    for round in 0..50 {
                        let sum = Arc::new(AtomicUsize::new(0));
                        let group = jobs.group();
                        for i in 0..100 {
                            let sum = Arc::clone(&sum);
                            group.spawn(move |ctx| {
                                let s = Arc::clone(&sum);
                                ctx.spawn(move |_| {
                                    s.fetch_add(i, Ordering::Relaxed);
                                });
                            });
                        }
                        group.wait().unwrap();
                        assert_eq!(sum.load(Ordering::Relaxed), 4_950, "waiter {t}, round {round}");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    });
}

#[test]
fn start_and_drop_many_systems() {
    within(60, || {
        for round in 0..200 {
            let jobs = JobSystem::new(1 + round % 8);
            if round % 2 == 0 {
                jobs.run(|_| {}).unwrap();
            }
            drop(jobs); // joins its threads
        }
        let jobs = JobSystem::builder().threads(3).thread_name("stress").build().unwrap();
        assert_eq!(jobs.threads(), 3);
    });
}

#[test]
fn scratch_memory_stays_with_its_thread() {
    within(60, || {
        let jobs = JobSystem::new(4);
        for _ in 0..10 {
            let group = jobs.group();
            for _ in 0..64 {
                group.spawn(|ctx| {
                    let index = ctx.worker_index();
                    let scratch: &mut Vec<usize> = ctx.scratch();
                    assert!(scratch.iter().all(|&w| w == index), "scratch moved threads");
                    scratch.push(index);
                });
            }
            group.wait().unwrap();
        }
    });
}

/// Workers start while the caller is already running jobs and queuing
/// their sub-jobs on its deque: every job still runs. (A worker that stole
/// from the pool's deques on start-up, only to pin crossbeam's epoch, once
/// dropped the sub-job it took, and the scope waited forever.)
#[test]
fn jobs_queued_as_the_workers_start_all_run() {
    within(60, || {
        for round in 0..500 {
            // More threads than cores: some start late, after jobs queue.
            let jobs = JobSystem::new(8);
            let ran = AtomicUsize::new(0);
            jobs.scope(|s| {
                for _ in 0..8 {
                    s.spawn(|ctx| {
                        for _ in 0..8 {
                            ctx.spawn(|_| {
                                ran.fetch_add(1, Ordering::Relaxed);
                            });
                        }
                    });
                }
            })
            .unwrap();
            assert_eq!(ran.into_inner(), 64, "round {round}");
        }
    });
}
