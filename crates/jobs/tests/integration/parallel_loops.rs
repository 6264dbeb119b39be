//! The parallel loops: every index (item, chunk) runs exactly once on any
//! thread count, ranges honour `min_len`, small loops and one-thread
//! systems run on the caller alone, no two ranges running at once share a
//! worker index, panics come back as `JobError` with the other chunks
//! run, and a loop inside a job is refused.

use std::ops::Range;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::ThreadId;

use broadphase_jobs::{JobError, JobSystem};
use proptest::prelude::*;

/// Every range a loop ran, with its worker index and thread.
fn record(
    jobs: &JobSystem,
    len: usize,
    min_len: usize,
) -> Result<Vec<(Range<usize>, usize, ThreadId)>, JobError> {
    let seen = Mutex::new(Vec::new());
    jobs.for_each(len, min_len, |range, worker| {
        seen.lock().unwrap().push((range, worker, std::thread::current().id()));
    })?;
    let mut seen = seen.into_inner().unwrap();
    seen.sort_by_key(|(range, ..)| range.start);
    Ok(seen)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn for_each_covers_every_index_once_with_ranges_of_at_least_min_len(
        len in 0usize..20_000,
        min_len in 0usize..3000,
        threads in 1usize..6,
    ) {
        let jobs = JobSystem::new(threads);
        let seen = record(&jobs, len, min_len).unwrap();
        let mut at = 0;
        for (range, worker, _) in &seen {
            prop_assert_eq!(range.start, at, "ranges tile 0..len in order: {:?}", seen);
            prop_assert!(!range.is_empty());
            prop_assert!(*worker < threads);
            at = range.end;
        }
        prop_assert_eq!(at, len);
        prop_assert!(seen.len() <= threads * 4);
        if seen.len() > 1 {
            prop_assert!(seen.iter().all(|(range, ..)| range.len() >= min_len));
        }
    }

    #[test]
    fn for_each_chunk_mut_hands_every_element_to_exactly_one_chunk(
        len in 0usize..20_000,
        min_len in 0usize..3000,
        threads in 1usize..6,
    ) {
        let jobs = JobSystem::new(threads);
        let mut values = vec![0u32; len];
        let chunks = AtomicUsize::new(0);
        jobs.for_each_chunk_mut(&mut values, min_len, |range, chunk| {
            assert_eq!(range.len(), chunk.len());
            chunks.fetch_add(1, Ordering::Relaxed);
            for (value, index) in chunk.iter_mut().zip(range) {
                *value += index as u32 + 1;
            }
        }).unwrap();
        prop_assert!(values.iter().enumerate().all(|(i, &v)| v == i as u32 + 1));
        prop_assert!(chunks.into_inner() <= (threads * 4).max(1));
    }

    #[test]
    fn for_each_mut_runs_every_item_once_with_its_index(
        len in 0usize..200,
        threads in 1usize..6,
    ) {
        let jobs = JobSystem::new(threads);
        let mut items = vec![usize::MAX; len];
        jobs.for_each_mut(&mut items, |index, item| {
            assert_eq!(*item, usize::MAX, "item {index} ran twice");
            *item = index;
        }).unwrap();
        prop_assert!(items.iter().enumerate().all(|(i, &v)| v == i));
    }
}

#[test]
fn small_loops_and_one_thread_systems_run_on_the_caller_alone() {
    let caller = std::thread::current().id();
    // Below twice `min_len`: one range, on this thread, as participant 0.
    let jobs = JobSystem::new(4);
    let seen = record(&jobs, 1999, 1000).unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].0.clone(), seen[0].1, seen[0].2), (0..1999, 0, caller));
    // One thread: the whole loop in one call, however long.
    let seen = record(&JobSystem::new(1), 1_000_000, 1).unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].0.clone(), seen[0].1, seen[0].2), (0..1_000_000, 0, caller));
    // And one item of `for_each_mut` too.
    let mut items = [0u8];
    jobs.for_each_mut(&mut items, |_, _| assert_eq!(std::thread::current().id(), caller)).unwrap();
}

#[test]
fn long_loops_spread_over_the_threads() {
    let jobs = JobSystem::new(2);
    let seen = record(&jobs, 100_000, 1000).unwrap();
    assert_eq!(seen.len(), 8, "threads x 4 ranges: {seen:?}");
}

#[test]
fn no_two_ranges_running_at_once_share_a_worker_index() {
    let jobs = JobSystem::new(4);
    let busy: Vec<AtomicBool> = (0..4).map(|_| AtomicBool::new(false)).collect();
    for _ in 0..200 {
        jobs.for_each(64, 1, |_, worker| {
            assert!(!busy[worker].swap(true, Ordering::SeqCst), "worker {worker} twice at once");
            std::hint::spin_loop();
            busy[worker].store(false, Ordering::SeqCst);
        })
        .unwrap();
    }
}

#[test]
fn a_panicking_range_is_an_error_and_the_others_still_run() {
    for threads in [1, 2, 4] {
        let jobs = JobSystem::new(threads);
        let mut values = vec![0u32; 10_000];
        let result = jobs.for_each_chunk_mut(&mut values, 100, |range, chunk| {
            chunk.fill(1);
            assert!(range.start != 0, "the first chunk fails");
        });
        assert!(
            matches!(&result, Err(JobError::Panicked { message, count: 1 }) if message == "the first chunk fails"),
            "{threads} threads: {result:?}"
        );
        assert!(values.iter().all(|&v| v == 1), "{threads} threads: every chunk ran");

        let ran = AtomicUsize::new(0);
        let result = jobs.for_each(1000, 10, |_, _| {
            ran.fetch_add(1, Ordering::Relaxed);
            panic!("every range fails");
        });
        let ranges = ran.into_inner();
        assert_eq!(
            result,
            Err(JobError::Panicked { message: "every range fails".into(), count: ranges })
        );
        // The system is still usable.
        assert!(jobs.for_each(1000, 10, |_, _| {}).is_ok());
    }
}

#[test]
fn a_loop_inside_a_job_or_a_loop_is_refused_and_runs_nothing() {
    let jobs = JobSystem::new(2);
    let ran = AtomicBool::new(false);
    let inner = Mutex::new(Vec::new());
    jobs.for_each(10, 1, |_, _| {
        let result = jobs.for_each(10, 1, |_, _| ran.store(true, Ordering::Relaxed));
        inner.lock().unwrap().push(result);
        let mut items = [0u8; 3];
        let result = jobs.for_each_mut(&mut items, |_, _| ran.store(true, Ordering::Relaxed));
        inner.lock().unwrap().push(result);
    })
    .unwrap();
    // From a small loop too, which runs on the caller.
    jobs.for_each(1, 1, |_, _| {
        let result = jobs.for_each(1, 1, |_, _| ran.store(true, Ordering::Relaxed));
        inner.lock().unwrap().push(result);
    })
    .unwrap();
    jobs.scope(|s| {
        s.spawn(|_| {
            let mut values = [0u8; 100];
            let result =
                jobs.for_each_chunk_mut(&mut values, 1, |_, _| ran.store(true, Ordering::Relaxed));
            inner.lock().unwrap().push(result);
        });
    })
    .unwrap();
    let inner = inner.into_inner().unwrap();
    assert!(!inner.is_empty());
    assert!(inner.iter().all(|r| *r == Err(JobError::WaitInsideJob)), "{inner:?}");
    assert!(!ran.into_inner());
}

#[test]
fn loops_from_two_threads_on_one_system_both_finish() {
    let jobs = JobSystem::new(3);
    let totals = [AtomicUsize::new(0), AtomicUsize::new(0)];
    std::thread::scope(|t| {
        for total in &totals {
            let jobs = &jobs;
            t.spawn(move || {
                for _ in 0..100 {
                    jobs.for_each(1000, 1, |range, _| {
                        total.fetch_add(range.len(), Ordering::Relaxed);
                    })
                    .unwrap();
                    // One chunk: inline, unless the other thread is waiting.
                    jobs.for_each(1, 1, |range, _| {
                        total.fetch_add(range.len(), Ordering::Relaxed);
                    })
                    .unwrap();
                }
            });
        }
    });
    assert!(totals.iter().all(|t| t.load(Ordering::Relaxed) == 100 * 1001));
}
