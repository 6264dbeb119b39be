//! Scoped jobs: they borrow the caller's data, the scope waits for every
//! one of them (sub-jobs, panics and a panicking closure included), and a
//! scope opened inside a job is refused before anything runs.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicUsize, Ordering};

use broadphase_jobs::{IndexedJob, JobContext, JobError, JobSystem};

#[test]
fn jobs_write_disjoint_borrowed_halves_on_any_thread_count() {
    for threads in [1, 2, 4, 8] {
        let jobs = JobSystem::new(threads);
        let mut values: Vec<u64> = (0..10_000).collect();
        jobs.scope(|s| {
            for chunk in values.chunks_mut(97) {
                s.spawn(move |_| chunk.iter_mut().for_each(|v| *v *= 3));
            }
        })
        .unwrap();
        assert!(values.iter().enumerate().all(|(i, &v)| v == 3 * i as u64), "{threads} threads");
    }
}

/// Splits `[start, start + len)` in halves down to 64, summing the leaves.
fn sum_range<'scope>(
    ctx: &mut JobContext<'_, 'scope>,
    data: &'scope [u64],
    total: &'scope AtomicUsize,
) {
    if data.len() <= 64 {
        total.fetch_add(data.iter().sum::<u64>() as usize, Ordering::Relaxed);
        return;
    }
    let (left, right) = data.split_at(data.len() / 2);
    ctx.spawn(move |ctx| sum_range(ctx, left, total));
    ctx.spawn(move |ctx| sum_range(ctx, right, total));
}

#[test]
fn sub_jobs_borrow_for_the_whole_scope() {
    let data: Vec<u64> = (0..100_000).collect();
    let total = AtomicUsize::new(0);
    let jobs = JobSystem::new(4);
    jobs.scope(|s| s.spawn(|ctx| sum_range(ctx, &data, &total))).unwrap();
    assert_eq!(total.into_inner() as u64, data.iter().sum::<u64>());
}

/// Counts the indices it ran, spawning `index / 2` again until it reaches 0,
/// so one job's sub-jobs are indexed jobs on the same object.
struct Countdown {
    ran: AtomicUsize,
}

impl<'scope> IndexedJob<'scope> for Countdown {
    fn run(&'scope self, ctx: &mut JobContext<'_, 'scope>, index: usize) {
        self.ran.fetch_add(1, Ordering::Relaxed);
        if index > 0 {
            ctx.spawn_indexed(self, index / 2);
        }
    }
}

#[test]
fn indexed_jobs_spawn_more_of_themselves() {
    let countdown = Countdown { ran: AtomicUsize::new(0) };
    JobSystem::new(2)
        .scope(|s| {
            for _ in 0..100 {
                s.spawn_indexed(&countdown, 1000); // 1000, 500, …, 1, 0: 11 runs each
            }
        })
        .unwrap();
    assert_eq!(countdown.ran.into_inner(), 1100);
}

#[test]
fn a_panicking_job_is_an_error_and_the_others_still_run() {
    let finished = AtomicUsize::new(0);
    let err = JobSystem::new(2)
        .scope(|s| {
            for i in 0..50 {
                let finished = &finished;
                s.spawn(move |_| {
                    assert!(i != 17, "job {i} failed");
                    finished.fetch_add(1, Ordering::Relaxed);
                });
            }
        })
        .unwrap_err();
    assert_eq!(err, JobError::Panicked { message: "job 17 failed".into(), count: 1 });
    assert_eq!(finished.into_inner(), 49);
}

#[test]
fn a_panicking_scope_closure_still_waits_for_its_jobs() {
    let jobs = JobSystem::new(2);
    let finished = AtomicUsize::new(0);
    let result = catch_unwind(AssertUnwindSafe(|| {
        jobs.scope(|s| {
            for _ in 0..20 {
                s.spawn(|_| {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    finished.fetch_add(1, Ordering::Relaxed);
                });
            }
            panic!("the closure gave up");
        })
    }));
    assert!(result.is_err(), "the closure's panic comes back");
    assert_eq!(finished.load(Ordering::Relaxed), 20, "every job finished before the unwind");
    // The system is still usable.
    assert_eq!(jobs.scope(|_| 5), Ok(5));
}

#[test]
fn a_scope_inside_a_job_is_refused_before_it_runs() {
    let jobs = JobSystem::new(2);
    let ran = AtomicUsize::new(0);
    let outcome = std::sync::Mutex::new(None);
    jobs.scope(|s| {
        s.spawn(|_| {
            let inner = jobs.scope(|_| ran.fetch_add(1, Ordering::Relaxed));
            *outcome.lock().unwrap() = Some(inner);
        });
    })
    .unwrap();
    assert_eq!(outcome.into_inner().unwrap(), Some(Err(JobError::WaitInsideJob)));
    assert_eq!(ran.into_inner(), 0);
}

#[test]
fn scopes_nest_on_the_waiting_thread() {
    let jobs = JobSystem::new(2);
    let outer_done = AtomicUsize::new(0);
    let inner_done = AtomicUsize::new(0);
    jobs.scope(|outer| {
        for _ in 0..10 {
            outer.spawn(|_| {
                outer_done.fetch_add(1, Ordering::Relaxed);
            });
        }
        // An orchestrating thread runs a pass of its own and waits for it
        // while the outer jobs are still in flight.
        jobs.scope(|inner| {
            for _ in 0..10 {
                inner.spawn(|_| {
                    inner_done.fetch_add(1, Ordering::Relaxed);
                });
            }
        })
        .unwrap();
        assert_eq!(inner_done.load(Ordering::Relaxed), 10);
    })
    .unwrap();
    assert_eq!(outer_done.into_inner(), 10);
}
