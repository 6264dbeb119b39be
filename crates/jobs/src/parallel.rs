//! Parallel loops: the one way to run a loop over `0..len`, or over the
//! items or chunks of a `&mut` slice, on every thread.
//!
//! A loop is cut into chunks (`Split`), and a few jobs (at most one per
//! thread) each take chunks from a shared dispenser until none is left:
//! an atomic counter for index ranges (`Ranges`), a lock around the rest
//! of the slice for `&mut` chunks (`Chunks`), which splits the next chunk
//! off the front with `split_at_mut`. So a thread that finishes early takes
//! more chunks, every chunk runs exactly once, and each `&mut` chunk is
//! handed to one job with no `unsafe`. The jobs are indexed jobs on an
//! object on the caller's stack, inside a scope: they allocate nothing,
//! and the scope's latch (`latch.rs`) makes their writes visible to the
//! caller when the loop returns. Each chunk runs under `catch_unwind`, so
//! a panic in one chunk is counted and the other chunks still run.

use core::ops::Range;

use crate::group::{JobContext, JobError, PanicLog, as_job, in_job};
use crate::scope::IndexedJob;
use crate::sync::{AtomicUsize, Mutex, Ordering, lock};
use crate::system::JobSystem;

/// Chunks per thread a loop is cut into at most: a few, so that a thread
/// slowed down (a dense region, another process) is made up for by the
/// others taking its share.
pub(crate) const CHUNKS_PER_THREAD: usize = 4;

/// How a loop over `0..len` is cut: `chunks` contiguous ranges whose
/// lengths differ by at most one, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Split {
    len: usize,
    chunks: usize,
}

impl Split {
    /// Chunks of at least `min_len` (one chunk when `len < 2 * min_len`),
    /// at most [`CHUNKS_PER_THREAD`] per thread; one chunk on one thread.
    pub(crate) fn new(len: usize, min_len: usize, threads: usize) -> Self {
        let chunks = if threads <= 1 {
            1
        } else {
            (len / min_len.max(1)).clamp(1, threads.saturating_mul(CHUNKS_PER_THREAD))
        };
        Split { len, chunks: if len == 0 { 0 } else { chunks } }
    }

    /// One chunk per item.
    pub(crate) fn each(len: usize) -> Self {
        Split { len, chunks: len }
    }

    pub(crate) fn chunks(&self) -> usize {
        self.chunks
    }

    /// Where chunk `chunk` starts: the first `len % chunks` chunks are one
    /// longer than the others.
    fn start(&self, chunk: usize) -> usize {
        let (short, longer) = (self.len / self.chunks, self.len % self.chunks);
        chunk * short + chunk.min(longer)
    }

    /// The items of chunk `chunk < chunks`.
    pub(crate) fn range(&self, chunk: usize) -> Range<usize> {
        self.start(chunk)..self.start(chunk + 1)
    }
}

/// Hands out the ranges of a split, each once, in order.
#[derive(Debug)]
pub(crate) struct Ranges {
    split: Split,
    next: AtomicUsize,
}

impl Ranges {
    pub(crate) fn new(split: Split) -> Self {
        Ranges { split, next: AtomicUsize::new(0) }
    }

    /// The next range not yet taken, if any.
    #[inline]
    pub(crate) fn take(&self) -> Option<Range<usize>> {
        // Relaxed: the counter only has to give each chunk number once
        // (every RMW reads the latest value); what the chunks write is
        // published by the scope's latch.
        let chunk = self.next.fetch_add(1, Ordering::Relaxed);
        (chunk < self.split.chunks).then(|| self.split.range(chunk))
    }
}

/// Hands out the chunks of a `&mut` slice along a split, each once, in
/// order: the rest of the slice waits behind a lock, and each take splits
/// the next chunk off its front.
#[derive(Debug)]
pub(crate) struct Chunks<'a, T> {
    split: Split,
    /// The next chunk's number, and the slice from its start on.
    rest: Mutex<(usize, &'a mut [T])>,
}

impl<'a, T> Chunks<'a, T> {
    pub(crate) fn new(split: Split, slice: &'a mut [T]) -> Self {
        Chunks { split, rest: Mutex::new((0, slice)) }
    }

    /// The next chunk not yet taken and where it is in the slice, if any.
    #[inline]
    pub(crate) fn take(&self) -> Option<(Range<usize>, &'a mut [T])> {
        let mut rest = lock(&self.rest);
        let chunk = rest.0;
        if chunk >= self.split.chunks {
            return None;
        }
        let range = self.split.range(chunk);
        let (head, tail) = core::mem::take(&mut rest.1).split_at_mut(range.len());
        *rest = (chunk + 1, tail);
        Some((range, head))
    }
}

/// A loop's chunks and what to run on each.
trait Body: Sync {
    /// Runs chunks until none is left, as participant `worker`, counting
    /// panics in `log`.
    fn drain(&self, worker: usize, log: &PanicLog);
}

/// [`JobSystem::for_each`]'s loop.
struct ForEach<F> {
    ranges: Ranges,
    job: F,
}

impl<F: Fn(Range<usize>, usize) + Sync> Body for ForEach<F> {
    fn drain(&self, worker: usize, log: &PanicLog) {
        while let Some(range) = self.ranges.take() {
            log.catch(|| (self.job)(range, worker));
        }
    }
}

/// [`JobSystem::for_each_chunk_mut`]'s loop.
struct ForEachChunk<'a, T, F> {
    chunks: Chunks<'a, T>,
    job: F,
}

impl<T: Send, F: Fn(Range<usize>, &mut [T]) + Sync> Body for ForEachChunk<'_, T, F> {
    fn drain(&self, _worker: usize, log: &PanicLog) {
        while let Some((range, chunk)) = self.chunks.take() {
            log.catch(|| (self.job)(range, chunk));
        }
    }
}

/// [`JobSystem::for_each_mut`]'s loop: chunks of one item.
struct ForEachItem<'a, T, F> {
    items: Chunks<'a, T>,
    job: F,
}

impl<T: Send, F: Fn(usize, &mut T) + Sync> Body for ForEachItem<'_, T, F> {
    fn drain(&self, _worker: usize, log: &PanicLog) {
        while let Some((range, item)) = self.items.take() {
            log.catch(|| item.iter_mut().for_each(|item| (self.job)(range.start, item)));
        }
    }
}

/// One of a loop's jobs: drains the loop's chunks on whichever thread
/// took it.
struct LoopJob<'a, B> {
    body: &'a B,
    log: &'a PanicLog,
}

impl<'scope, B: Body> IndexedJob<'scope> for LoopJob<'_, B> {
    fn run(&'scope self, ctx: &mut JobContext<'_, 'scope>, _index: usize) {
        self.body.drain(ctx.worker_index(), self.log);
    }
}

impl JobSystem {
    /// Runs `job(range, worker)` over ranges that together cover `0..len`,
    /// each once, on every thread; returns when all have run. `worker` is
    /// the [worker index](JobContext::worker_index) of the thread running
    /// the range (`0..threads()`; no two ranges running at once share it).
    ///
    /// The ranges are about [`threads()`](JobSystem::threads) × 4, each at
    /// least `min_len` long (`min_len` is the least work worth handing
    /// to another thread); each thread takes ranges in order until none is
    /// left, so a slow range is made up for by the others. With one
    /// thread, or `len < 2 * min_len`, `job(0..len, 0)` runs on the calling
    /// thread alone, handing nothing out. The cut depends on the thread
    /// count: for output that must not, write each index's result to its
    /// own place, or cut the work yourself and use
    /// [`for_each_mut`](JobSystem::for_each_mut). Allocates nothing once
    /// the system is warm.
    ///
    /// # Errors
    ///
    /// - [`JobError::Panicked`] if `job` panicked (the other ranges still
    ///   ran; `count` is how many calls panicked).
    /// - [`JobError::WaitInsideJob`] if called from inside a job, where
    ///   waiting could block a thread the loop needs; nothing runs.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// let jobs = JobSystem::new(2);
    /// let values: Vec<u64> = (0..100_000).collect();
    /// let sum = AtomicU64::new(0);
    /// jobs.for_each(values.len(), 4096, |range, _worker| {
    ///     sum.fetch_add(values[range].iter().sum(), Ordering::Relaxed);
    /// })?;
    /// assert_eq!(sum.into_inner(), 4_999_950_000);
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn for_each<F>(&self, len: usize, min_len: usize, job: F) -> Result<(), JobError>
    where
        F: Fn(Range<usize>, usize) + Sync,
    {
        let split = Split::new(len, min_len, self.threads());
        self.run_loop(split.chunks(), &ForEach { ranges: Ranges::new(split), job })
    }

    /// Cuts `slice` into contiguous chunks as [`for_each`](JobSystem::for_each)
    /// cuts `0..slice.len()`, and runs `job(range, chunk)` on each, where
    /// `chunk` is `&mut slice[range]`, on every thread; returns when all
    /// have run. Each chunk goes to one job: the `&mut` is the job's
    /// alone, with no lock held while it runs.
    ///
    /// # Errors
    ///
    /// As [`for_each`](JobSystem::for_each): [`JobError::Panicked`] (the
    /// other chunks still ran; the slice may be part written) or
    /// [`JobError::WaitInsideJob`].
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    ///
    /// let jobs = JobSystem::new(2);
    /// let input: Vec<u32> = (0..10_000).collect();
    /// let mut squares = vec![0u32; input.len()];
    /// jobs.for_each_chunk_mut(&mut squares, 1024, |range, out| {
    ///     for (square, &x) in out.iter_mut().zip(&input[range]) {
    ///         *square = x * x;
    ///     }
    /// })?;
    /// assert_eq!(squares[99], 99 * 99);
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn for_each_chunk_mut<T, F>(
        &self,
        slice: &mut [T],
        min_len: usize,
        job: F,
    ) -> Result<(), JobError>
    where
        T: Send,
        F: Fn(Range<usize>, &mut [T]) + Sync,
    {
        let split = Split::new(slice.len(), min_len, self.threads());
        self.run_loop(split.chunks(), &ForEachChunk { chunks: Chunks::new(split, slice), job })
    }

    /// Runs `job(index, &mut items[index])` for every item, each its own
    /// piece of work, on every thread; returns when all have run. For a
    /// few large items cut by the caller: one output buffer per part of a
    /// pass, a set of `&mut` slices split at the same boundaries, a part's
    /// kept state. The cut is the caller's, so it can be the same on any
    /// thread count. One item, or one thread, runs on the calling thread
    /// alone. (For many small items, use
    /// [`for_each_chunk_mut`](JobSystem::for_each_chunk_mut).)
    ///
    /// # Errors
    ///
    /// As [`for_each`](JobSystem::for_each): [`JobError::Panicked`] (the
    /// other items still ran) or [`JobError::WaitInsideJob`].
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    ///
    /// let jobs = JobSystem::new(2);
    /// let input: Vec<u32> = (0..1000).collect();
    /// // One kept buffer per part: the evens of that part's input.
    /// let mut parts = vec![Vec::new(); 4];
    /// jobs.for_each_mut(&mut parts, |part, evens: &mut Vec<u32>| {
    ///     evens.clear();
    ///     evens.extend(input[part * 250..][..250].iter().filter(|&&x| x % 2 == 0));
    /// })?;
    /// assert_eq!(parts[1][0], 250);
    /// assert_eq!(parts.iter().map(Vec::len).sum::<usize>(), 500);
    /// # Ok::<(), broadphase_jobs::JobError>(())
    /// ```
    pub fn for_each_mut<T, F>(&self, items: &mut [T], job: F) -> Result<(), JobError>
    where
        T: Send,
        F: Fn(usize, &mut T) + Sync,
    {
        let split = Split::each(items.len());
        self.run_loop(split.chunks(), &ForEachItem { items: Chunks::new(split, items), job })
    }

    /// Runs a loop of `chunks` chunks: on the calling thread alone when
    /// there is one chunk or one thread (and no other thread is waiting on
    /// the system as participant 0), else as one job per thread (at most
    /// one per chunk) in a scope, each draining the chunks.
    fn run_loop<B: Body>(&self, chunks: usize, body: &B) -> Result<(), JobError> {
        if in_job() {
            return Err(JobError::WaitInsideJob);
        }
        if chunks == 0 {
            return Ok(());
        }
        let log = PanicLog::default();
        if chunks == 1 || self.threads() == 1 {
            // As participant 0, so that no job of another waiter's group
            // runs under the same worker index meanwhile.
            if let Some(_caller) = self.caller.try_lock() {
                as_job(|| body.drain(0, &log));
                return log.outcome();
            }
        }
        let spawned = chunks.min(self.threads());
        // Room for the loop's jobs, so a warm loop never grows the queue.
        self.shared.reserve_more(spawned);
        let job = LoopJob { body, log: &log };
        self.scope(|s| (0..spawned).for_each(|_| s.spawn_indexed(&job, 0)))?;
        log.outcome()
    }
}

#[cfg(test)]
mod tests {
    use super::{CHUNKS_PER_THREAD, Split};

    /// The chunks of `split`, in order.
    fn ranges(split: Split) -> Vec<core::ops::Range<usize>> {
        (0..split.chunks()).map(|c| split.range(c)).collect()
    }

    #[test]
    fn a_split_covers_the_loop_in_order_with_chunks_of_at_least_min_len() {
        for len in [0, 1, 5, 63, 64, 100, 1000, 4097, 100_003] {
            for min_len in [0, 1, 7, 64, 1000] {
                for threads in [1, 2, 3, 16] {
                    let split = Split::new(len, min_len, threads);
                    let chunks = ranges(split);
                    let at = chunks.iter().try_fold(0, |at, r| (r.start == at).then_some(r.end));
                    assert_eq!(at, Some(len), "{len} {min_len} {threads}: {chunks:?}");
                    assert!(chunks.len() <= threads * CHUNKS_PER_THREAD);
                    if chunks.len() > 1 {
                        assert!(chunks.iter().all(|r| r.len() >= min_len.max(1)));
                        let (lo, hi) = (
                            chunks.iter().map(|r| r.len()).min(),
                            chunks.iter().map(|r| r.len()).max(),
                        );
                        assert!(hi.zip(lo).is_some_and(|(hi, lo)| hi - lo <= 1), "{chunks:?}");
                    }
                    if threads == 1 || len < 2 * min_len.max(1) {
                        assert!(chunks.len() <= 1, "{len} {min_len} {threads}: {chunks:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn one_chunk_per_item() {
        assert_eq!(ranges(Split::each(3)), [0..1, 1..2, 2..3]);
        assert!(ranges(Split::each(0)).is_empty());
    }
}
