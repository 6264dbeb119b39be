//! Stencils: the disjoint slot ranges a walk scans around one cell, and
//! the 8- or 16-lane steps that cover them.

use super::sorted::MAX_K;

/// Most ranges a stencil can have: one per cell of a `(2·MAX_K + 1)³` box.
pub(crate) const MAX_RANGES: usize = ((2 * MAX_K + 1) * (2 * MAX_K + 1) * (2 * MAX_K + 1)) as usize;

/// Disjoint slot ranges to scan, with their total length.
#[derive(Clone, Debug)]
pub(crate) struct Stencil {
    ranges: [[u32; 2]; MAX_RANGES],
    len: usize,
    total: usize,
}

impl Default for Stencil {
    fn default() -> Self {
        Self { ranges: [[0; 2]; MAX_RANGES], len: 0, total: 0 }
    }
}

impl Stencil {
    #[inline(always)]
    pub(crate) fn clear(&mut self) {
        self.len = 0;
        self.total = 0;
    }

    /// Adds `start..end` if it is not empty.
    #[inline(always)]
    pub(crate) fn push(&mut self, start: u32, end: u32) {
        if start < end {
            self.ranges[self.len] = [start, end];
            self.len += 1;
            self.total += (end - start) as usize;
        }
    }

    /// Slots over all the ranges.
    #[inline(always)]
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    #[inline(always)]
    pub(crate) fn ranges(&self) -> &[[u32; 2]] {
        &self.ranges[..self.len]
    }

    /// Adds `[a, b]` as it is (even empty), not counted in the total: for
    /// structures that build their ranges in place (see
    /// [`truncate_recount`](Self::truncate_recount)).
    #[inline(always)]
    pub(crate) fn push_raw(&mut self, a: u32, b: u32) {
        self.ranges[self.len] = [a, b];
        self.len += 1;
    }

    #[inline(always)]
    pub(crate) fn ranges_mut(&mut self) -> &mut [[u32; 2]] {
        &mut self.ranges[..self.len]
    }

    /// Keeps the first `len` entries, which must be non-empty, disjoint slot
    /// ranges, and recomputes the total.
    pub(crate) fn truncate_recount(&mut self, len: usize) {
        self.len = len;
        self.total = self.ranges().iter().map(|r| (r[1] - r[0]) as usize).sum();
    }
}

/// Most steps a walk lists up front for one run of particles; a stencil
/// with more (thousands of particles around one cell) is scanned range by
/// range instead.
pub(crate) const MAX_STEPS: usize = 1024;

/// The kernel steps `[at, end]` that cover a list of ranges, computed once
/// per run and replayed for every particle of the run: one loop whose trip
/// count repeats, instead of one short loop per range whose exits the
/// branch predictor cannot guess.
#[derive(Clone, Debug)]
pub(crate) struct Steps {
    steps: [[u32; 2]; MAX_STEPS],
    len: usize,
}

impl Default for Steps {
    fn default() -> Self {
        Self { steps: [[0; 2]; MAX_STEPS], len: 0 }
    }
}

impl Steps {
    /// Lists the steps of `ranges`; false (and empty) if they do not fit.
    #[inline(always)]
    pub(crate) fn cover(&mut self, ranges: &[[u32; 2]], lanes: usize) -> bool {
        self.len = 0;
        for &[lo, hi] in ranges {
            let mut at = lo;
            while at < hi {
                if self.len == MAX_STEPS {
                    self.len = 0;
                    return false;
                }
                self.steps[self.len] = [at, hi];
                self.len += 1;
                at += lanes as u32;
            }
        }
        true
    }

    #[inline(always)]
    pub(crate) fn as_slice(&self) -> &[[u32; 2]] {
        &self.steps[..self.len]
    }
}

/// An inclusive box of cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CellBox {
    pub(crate) lo: [i32; 3],
    pub(crate) hi: [i32; 3],
}

/// The box of cells `±k` (per axis) around `cell`.
#[inline(always)]
pub(crate) fn around(cell: [i32; 3], k: [i32; 3]) -> CellBox {
    spanning(cell, cell, k)
}

/// The box of cells from `first - k` to `last + k` (per axis): the cells
/// within reach of any cell between `first` and `last`.
#[inline(always)]
pub(crate) fn spanning(first: [i32; 3], last: [i32; 3], k: [i32; 3]) -> CellBox {
    CellBox {
        lo: [0, 1, 2].map(|a| first[a].saturating_sub(k[a])),
        hi: [0, 1, 2].map(|a| last[a].saturating_add(k[a])),
    }
}
