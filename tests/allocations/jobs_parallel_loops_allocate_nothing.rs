//! A warm parallel loop allocates nothing on any thread, in each of its
//! shapes: index ranges, `&mut` chunks of a slice, one item each.

use std::sync::atomic::{AtomicU64, Ordering};

use broadphase::JobSystem;
use broadphase_testkit::allocations_on_every_thread_during;

pub(crate) fn warm_parallel_loops_allocate_nothing() {
    for threads in [1, 2, 4] {
        let jobs = JobSystem::new(threads);
        let input: Vec<u64> = (0..100_000).collect();
        let mut squares = vec![0u64; input.len()];
        let mut parts = vec![0u64; 8];
        let sum = AtomicU64::new(0);
        let mut frame = || {
            jobs.for_each(input.len(), 1000, |range, _| {
                sum.fetch_add(input[range].iter().sum(), Ordering::Relaxed);
            })
            .unwrap();
            jobs.for_each_chunk_mut(&mut squares, 1000, |range, out| {
                out.iter_mut().zip(&input[range]).for_each(|(square, &x)| *square = x * x);
            })
            .unwrap();
            jobs.for_each_mut(&mut parts, |part, total| {
                *total = input[part * 12_500..][..12_500].iter().sum();
            })
            .unwrap();
            // A small loop, on the caller alone.
            jobs.for_each(10, 1000, |range, _| assert_eq!(range, 0..10)).unwrap();
        };
        for _ in 0..20 {
            frame(); // warm up: queue, group states
        }
        let ((), allocated) =
            allocations_on_every_thread_during(true, || (0..50).for_each(|_| frame()));
        assert_eq!(allocated, 0, "{threads} threads: warm loops allocated {allocated} times");
        assert_eq!(sum.load(Ordering::Relaxed), 70 * 4_999_950_000);
        assert_eq!(squares[999], 999 * 999);
        assert_eq!(parts.iter().sum::<u64>(), 4_999_950_000);
    }
}
