//! A warm scope of indexed jobs allocates nothing on any thread: the
//! queues, the group states and the jobs themselves reuse their memory.

use std::sync::atomic::{AtomicUsize, Ordering};

use broadphase::JobSystem;
use broadphase::jobs::{IndexedJob, JobContext};
use broadphase_testkit::allocations_on_every_thread_during;

/// Fills slot `index`, and fans out 4 sub-jobs from the first 64 slots.
struct Fill<'a> {
    slots: &'a [AtomicUsize],
}

impl<'scope> IndexedJob<'scope> for Fill<'_> {
    fn run(&'scope self, ctx: &mut JobContext<'_, 'scope>, index: usize) {
        self.slots[index].store(index + 1, Ordering::Relaxed);
        if index < 64 {
            (1..=4).for_each(|k| ctx.spawn_indexed(self, 64 + index * 4 + k - 1));
        }
    }
}

pub(crate) fn a_warm_scope_of_indexed_jobs_allocates_nothing() {
    let jobs = JobSystem::new(2);
    let slots: Vec<AtomicUsize> = (0..64 + 256).map(|_| AtomicUsize::new(0)).collect();
    let fill = Fill { slots: &slots };
    let frame = || {
        // Room for every job of the frame: how many overflow a full deque
        // into the shared queue depends on timing.
        jobs.reserve_queue(64 + 256);
        jobs.scope(|s| (0..64).for_each(|i| s.spawn_indexed(&fill, i))).unwrap();
    };
    for _ in 0..20 {
        frame(); // warm up: deques, queue, group states
    }
    let ((), allocated) =
        allocations_on_every_thread_during(true, || (0..50).for_each(|_| frame()));
    assert_eq!(allocated, 0, "warm frames allocated {allocated} times");
    assert!(slots.iter().enumerate().all(|(i, s)| s.load(Ordering::Relaxed) == i + 1));
}
