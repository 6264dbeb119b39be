//! Putting results in the order the Python API promises: pair lists
//! sorted by row, and CSR tables (`indptr`, `indices`) whose rows are
//! caller indices, each row ascending.

use crate::threads::failed;
use broadphase::JobSystem;
use numpy::PyArray1;
use pyo3::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// A pair list with at least one pair per this many indices is sorted by
/// a counting sort on the first index (one pass to count, one to place,
/// then each run of equal first index sorted on its own); a sparser one by
/// a comparison sort, which does not pay for a count per index.
const COUNTING_SORT_FROM: usize = 8;

/// `pairs` as they are, or with `sort` ordered by `(a, b)`. Indices are
/// below `n`.
pub(crate) fn pairs_ordered(pairs: Vec<[u32; 2]>, n: usize, sort: bool) -> Vec<[u32; 2]> {
    let m = pairs.len();
    if !sort {
        return pairs;
    }
    // The counts are u32 (half the cache footprint of the random
    // increments), so a list they cannot count is sorted by comparison.
    if m.saturating_mul(COUNTING_SORT_FROM) < n || m > u32::MAX as usize {
        let mut pairs = pairs;
        pairs.sort_unstable_by_key(|&[a, b]| (u64::from(a) << 32) | u64::from(b));
        return pairs;
    }
    // `start[a]` is where the pairs of first index `a` begin.
    let mut start = vec![0u32; n + 1];
    for &[a, _] in &pairs {
        start[a as usize + 1] += 1;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let mut next = start.clone();
    let mut out = crate::pool::take_for(m);
    out.resize(m, [0; 2]);
    for &pair in &pairs {
        let slot = &mut next[pair[0] as usize];
        out[*slot as usize] = pair;
        *slot += 1;
    }
    crate::pool::give_back(pairs);
    for run in start.windows(2) {
        let (from, to) = (run[0] as usize, run[1] as usize);
        if to - from > 1 {
            out[from..to].sort_unstable_by_key(|p| p[1]);
        }
    }
    out
}

/// Pairs of `chunks` chunks found on `jobs` (`walk(chunk, pairs)` appends
/// a chunk's pairs to `pairs`), in chunk order: the answer of one thread
/// walking every chunk in turn.
///
/// Each job claims the next chunk and walks it into a buffer of its own,
/// small enough to stay in cache when the chunks are; a chunk is copied
/// into the answer as soon as every chunk before it is in, by whichever
/// job places the one before it. The pairs thus reach memory once, where
/// pieces joined at the end would be written, read and written again.
pub(crate) fn pairs_in_chunk_order(
    jobs: &JobSystem,
    chunks: usize,
    walk: impl Fn(usize, &mut Vec<[u32; 2]>) + Sync,
) -> PyResult<Vec<[u32; 2]>> {
    let placing = Mutex::new(Placing {
        answer: crate::pool::take(),
        next: 0,
        waiting: (0..chunks).map(|_| None).collect(),
        spare: Vec::new(),
    });
    let claimed = AtomicUsize::new(0);
    let mut buffers: Vec<_> = (0..jobs.threads()).map(|_| crate::pool::take_piece()).collect();
    jobs.for_each_mut(&mut buffers, |_, buffer| {
        loop {
            let chunk = claimed.fetch_add(1, Ordering::Relaxed);
            if chunk >= chunks {
                return;
            }
            walk(chunk, buffer);
            let mut placing = placing.lock().unwrap_or_else(PoisonError::into_inner);
            if chunk == placing.next {
                placing.place(buffer);
            } else {
                // A chunk before it is still being walked.
                let next = placing.spare.pop().unwrap_or_else(crate::pool::take_piece);
                placing.waiting[chunk] = Some(std::mem::replace(buffer, next));
            }
        }
    })
    .map_err(failed)?;
    let Placing { answer, spare, .. } =
        placing.into_inner().unwrap_or_else(PoisonError::into_inner);
    spare.into_iter().chain(buffers).for_each(crate::pool::give_back);
    Ok(answer)
}

/// The answer of [`pairs_in_chunk_order`] while it is being placed.
struct Placing {
    /// The chunks placed so far, in order.
    answer: Vec<[u32; 2]>,
    /// The first chunk not yet placed.
    next: usize,
    /// Chunks walked before one of the chunks before them.
    waiting: Vec<Option<Vec<[u32; 2]>>>,
    /// Emptied buffers of waiting chunks, for the jobs to walk into again.
    spare: Vec<Vec<[u32; 2]>>,
}

impl Placing {
    /// Places `pairs`, the pairs of chunk `next`, and every waiting chunk
    /// that then follows; empties `pairs`.
    fn place(&mut self, pairs: &mut Vec<[u32; 2]>) {
        self.answer.extend_from_slice(pairs);
        pairs.clear();
        self.next += 1;
        while let Some(mut pairs) = self.waiting.get_mut(self.next).and_then(Option::take) {
            self.answer.extend_from_slice(&pairs);
            pairs.clear();
            self.spare.push(pairs);
            self.next += 1;
        }
    }
}

/// An integer type CSR arrays are written in.
pub(crate) trait Index:
    Copy + Ord + Default + Send + Sync + numpy::Element + 'static
{
    /// `v` in this type (the caller checked it fits).
    fn of(v: usize) -> Self;
}

impl Index for i32 {
    fn of(v: usize) -> Self {
        v as i32
    }
}

impl Index for i64 {
    fn of(v: usize) -> Self {
        v as i64
    }
}

/// Rows of caller indices a CSR table is filled from.
pub(crate) trait RowSource: Sync {
    /// Rows in the table.
    fn rows(&self) -> usize;
    /// Entries of row `row`.
    fn row_len(&self, row: usize) -> usize;
    /// Writes row `row`'s entries into `out` (exactly `row_len` of them).
    fn write_row<I: Index>(&self, row: usize, out: &mut [I]);
}

/// `indptr` and `indices` of a CSR table, both int32 where every count and
/// index fits (as scipy.sparse picks, so it takes them without a copy),
/// else both int64.
#[derive(Debug)]
pub(crate) enum Csr {
    /// Fits int32.
    Narrow(Vec<i32>, Vec<i32>),
    /// Does not.
    Wide(Vec<i64>, Vec<i64>),
}

impl Csr {
    /// The two arrays, handed to numpy without a copy.
    pub(crate) fn into_arrays(self, py: Python<'_>) -> (Bound<'_, PyAny>, Bound<'_, PyAny>) {
        match self {
            Csr::Narrow(p, i) => {
                (PyArray1::from_vec(py, p).into_any(), PyArray1::from_vec(py, i).into_any())
            }
            Csr::Wide(p, i) => {
                (PyArray1::from_vec(py, p).into_any(), PyArray1::from_vec(py, i).into_any())
            }
        }
    }
}

/// Rows per job at least, so a job outweighs handing it out.
const ROWS_PER_JOB: usize = 4096;

/// The CSR table of `source`'s rows, whose entries are below `columns`;
/// with `sort`, each row ascending. Rows are filled on `jobs`, each job a
/// run of rows with about the same number of entries, writing its own
/// piece of `indices`.
pub(crate) fn build_csr<S: RowSource>(
    jobs: &JobSystem,
    source: &S,
    columns: usize,
    sort: bool,
) -> PyResult<Csr> {
    let n = source.rows();
    let mut offsets = Vec::with_capacity(n + 1);
    let mut total = 0usize;
    offsets.push(0);
    for row in 0..n {
        total += source.row_len(row);
        offsets.push(total);
    }
    if fits_i32(total, columns) {
        let indices = fill_rows::<S, i32>(jobs, source, &offsets, sort)?;
        Ok(Csr::Narrow(offsets.into_iter().map(i32::of).collect(), indices))
    } else {
        let indices = fill_rows::<S, i64>(jobs, source, &offsets, sort)?;
        Ok(Csr::Wide(offsets.into_iter().map(i64::of).collect(), indices))
    }
}

fn fill_rows<S: RowSource, I: Index>(
    jobs: &JobSystem,
    source: &S,
    offsets: &[usize],
    sort: bool,
) -> PyResult<Vec<I>> {
    let mut indices = vec![I::default(); offsets[offsets.len() - 1]];
    for_row_runs(jobs, offsets, &mut indices, |rows, out: &mut [I]| {
        let base = offsets[rows.start];
        for row in rows {
            let piece = &mut out[offsets[row] - base..offsets[row + 1] - base];
            source.write_row(row, piece);
            if sort {
                piece.sort_unstable();
            }
        }
    })?;
    Ok(indices)
}

/// Whether every count and index of a table fits int32.
fn fits_i32(total: usize, columns: usize) -> bool {
    total.max(columns) <= i32::MAX as usize
}

/// Runs `work` over runs of rows, each with its own piece of `out` (row
/// `r` owns `out[offsets[r]..offsets[r + 1]]`), as jobs on `jobs`: a few
/// per thread, cut where the entries reach equal shares.
fn for_row_runs<I: Index, F>(
    jobs: &JobSystem,
    offsets: &[usize],
    out: &mut [I],
    work: F,
) -> PyResult<()>
where
    F: Fn(Range<usize>, &mut [I]) + Sync,
{
    let n = offsets.len() - 1;
    let total = offsets[n];
    let pieces = (jobs.threads() * 4).min(n.div_ceil(ROWS_PER_JOB));
    if jobs.threads() == 1 || pieces <= 1 {
        work(0..n, out);
        return Ok(());
    }
    let mut cuts = vec![0usize];
    for k in 1..pieces {
        let row = offsets.partition_point(|&o| o < total / pieces * k).min(n);
        if row > cuts[cuts.len() - 1] {
            cuts.push(row);
        }
    }
    if cuts[cuts.len() - 1] < n {
        cuts.push(n);
    }
    let mut rest = out;
    let mut runs = Vec::with_capacity(cuts.len());
    for w in cuts.windows(2) {
        let (here, later) = rest.split_at_mut(offsets[w[1]] - offsets[w[0]]);
        runs.push((w[0]..w[1], here));
        rest = later;
    }
    let work = &work;
    jobs.scope(|s| {
        for (rows, piece) in runs {
            s.spawn(move |_| work(rows, piece));
        }
    })
    .map_err(failed)
}
