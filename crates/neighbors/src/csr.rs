//! Per-particle neighbor lists in compressed sparse row (CSR) form, the
//! layout SPH loops read: one `offsets` array and one flat `indices` array.

use super::scan::MAX_LANES;
use broadphase_jobs::{JobError, JobSystem};

/// Most jobs a parallel move of rows is cut into.
const MAX_MOVE_PIECES: usize = 16;

/// Neighbor lists in CSR form: row `i` is `indices[offsets[i]..offsets[i + 1]]`.
///
/// Filled by [`NeighborSearch::neighbor_lists`](crate::NeighborSearch::neighbor_lists)
/// (rows and entries are the caller's indices) or
/// [`NeighborSearch::sorted_neighbor_lists`](crate::NeighborSearch::sorted_neighbor_lists)
/// (rows and entries are sorted slots). A row never holds its own particle;
/// the order of the entries within a row is unspecified but deterministic.
///
/// Keep one across frames: its buffers grow to the largest frame and are
/// reused, so a warm fill allocates nothing (the entry buffer is not
/// shrunk, and its tail past [`total`](Self::total) is scratch).
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch};
/// use glam::Vec3;
///
/// let points = [Vec3::ZERO, Vec3::X, Vec3::new(5.0, 0.0, 0.0)];
/// let mut grid = CountingSortGrid::default();
/// grid.build(&points, 1.5)?;
/// let mut lists = NeighborLists::default();
/// grid.neighbor_lists(&mut lists);
/// assert_eq!(lists.len(), 3);
/// assert_eq!(lists.neighbors(0), [1]);
/// assert_eq!(lists.neighbors(1), [0]);
/// assert!(lists.neighbors(2).is_empty());
/// assert_eq!(lists.offsets(), [0, 1, 2, 2]);
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct NeighborLists {
    /// `rows + 1` entries once filled; empty when never filled.
    pub(crate) offsets: Vec<usize>,
    /// Entries, then scratch up to the buffer's length.
    pub(crate) indices: Vec<u32>,
    /// The lists in sorted order, kept to remap them into caller order.
    pub(crate) scratch_offsets: Vec<usize>,
    pub(crate) scratch_indices: Vec<u32>,
    /// The query sets' sort (see `cross.rs`).
    #[cfg_attr(not(simd), allow(dead_code))]
    pub(crate) queries: crate::cross::QueryScratch,
}

impl NeighborLists {
    /// Number of rows (particles).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(broadphase_neighbors::NeighborLists::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether there are no rows.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(broadphase_neighbors::NeighborLists::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Total number of entries over all rows (each neighbor pair counts
    /// twice, once in each row).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborLists, NeighborSearch, SpatialHash};
    /// use glam::Vec3;
    /// let mut hash = SpatialHash::default();
    /// hash.build(&[Vec3::ZERO, Vec3::X, Vec3::Y], 1.0)?;
    /// let mut lists = NeighborLists::default();
    /// hash.neighbor_lists(&mut lists);
    /// assert_eq!(lists.total(), 4); // 0-1 and 0-2, both ways; 1-2 is √2 apart
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    pub fn total(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }

    /// The neighbors of row `row`.
    ///
    /// # Panics
    ///
    /// If `row >= self.len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborLists, NeighborSearch, SpatialIndex};
    /// use glam::Vec3;
    /// let mut index = SpatialIndex::default();
    /// index.build(&[Vec3::ZERO, Vec3::X], 1.0)?;
    /// let mut lists = NeighborLists::default();
    /// index.neighbor_lists(&mut lists);
    /// assert_eq!(lists.neighbors(1), [0]);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    pub fn neighbors(&self, row: usize) -> &[u32] {
        &self.indices[self.offsets[row]..self.offsets[row + 1]]
    }

    /// The row offsets: `len() + 1` entries, starting at 0.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch};
    /// use glam::Vec3;
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&[Vec3::ZERO, Vec3::X], 1.0)?;
    /// let mut lists = NeighborLists::default();
    /// grid.neighbor_lists(&mut lists);
    /// assert_eq!(lists.offsets(), [0, 1, 2]);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Every entry, row after row: `total()` of them.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch};
    /// use glam::Vec3;
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&[Vec3::ZERO, Vec3::X], 1.0)?;
    /// let mut lists = NeighborLists::default();
    /// grid.neighbor_lists(&mut lists);
    /// assert_eq!(lists.indices(), [1, 0]);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    pub fn indices(&self) -> &[u32] {
        &self.indices[..self.total()]
    }

    /// The rows in order.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch};
    /// use glam::Vec3;
    /// let points = [Vec3::ZERO, Vec3::X, Vec3::new(0.5, 0.0, 0.0)];
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&points, 1.0)?;
    /// let mut lists = NeighborLists::default();
    /// grid.neighbor_lists(&mut lists);
    /// let counts: Vec<usize> = lists.rows().map(<[u32]>::len).collect();
    /// assert_eq!(counts, [2, 2, 2]);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    pub fn rows(&self) -> impl ExactSizeIterator<Item = &[u32]> + '_ {
        self.offsets.windows(2).map(|w| &self.indices[w[0]..w[1]])
    }

    /// Empties the lists (no rows), keeping every buffer for the next fill.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch};
    /// use glam::Vec3;
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&[Vec3::ZERO, Vec3::X], 1.0)?;
    /// let mut lists = NeighborLists::default();
    /// grid.neighbor_lists(&mut lists);
    /// lists.clear();
    /// assert!(lists.is_empty());
    /// assert_eq!(lists.total(), 0);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    pub fn clear(&mut self) {
        self.offsets.clear();
    }

    /// Appends the rows of `other` after this one's: how lists of
    /// consecutive slot ranges, filled in parallel, become one list equal to
    /// a single fill of the whole range. Buffers only grow.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch};
    /// use glam::Vec3;
    /// let points: Vec<Vec3> = (0..10).map(|i| Vec3::new(i as f32, 0.0, 0.0)).collect();
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&points, 1.0)?;
    /// let (mut whole, mut head, mut tail) = Default::default();
    /// grid.sorted_neighbor_lists(0..10, &mut whole);
    /// grid.sorted_neighbor_lists(0..4, &mut head);
    /// grid.sorted_neighbor_lists(4..10, &mut tail);
    /// let mut joined = NeighborLists::default();
    /// joined.append_rows(&head);
    /// joined.append_rows(&tail);
    /// let whole: NeighborLists = whole;
    /// assert_eq!(joined.offsets(), whole.offsets());
    /// assert_eq!(joined.indices(), whole.indices());
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    pub fn append_rows(&mut self, other: &NeighborLists) {
        self.append_rows_by(other, <[u32]>::copy_from_slice);
    }

    /// [`append_rows`](Self::append_rows) with the entries written around
    /// the cache ([`broadphase_storage::copy_streaming`]): for a parallel
    /// fill placing a buffered chunk in an answer the caller reads later.
    pub(crate) fn append_rows_streaming(&mut self, other: &NeighborLists) {
        self.append_rows_by(other, broadphase_storage::copy_streaming);
    }

    /// Appends `other`'s rows, its entries moved by `copy(to, from)`.
    fn append_rows_by(&mut self, other: &NeighborLists, copy: impl FnOnce(&mut [u32], &[u32])) {
        let base = self.total();
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        self.offsets.extend(other.offsets.iter().skip(1).map(|&offset| base + offset));
        let added = other.indices();
        if self.indices.len() < base + added.len() {
            self.indices.resize(base + added.len(), 0);
        }
        copy(&mut self.indices[base..base + added.len()], added);
    }

    /// Sorts the entries of every row in increasing order: the canonical
    /// form [`NeighborListSearch`](crate::NeighborListSearch) returns, the
    /// same whichever structure (or device) filled the lists.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::NeighborLists;
    /// let mut lists = NeighborLists::default();
    /// lists.copy_from_csr(&[0, 2, 3], &[7, 3, 1]);
    /// lists.sort_rows();
    /// assert_eq!(lists.indices(), [3, 7, 1]);
    /// ```
    pub fn sort_rows(&mut self) {
        for w in self.offsets.windows(2) {
            self.indices[w[0]..w[1]].sort_unstable();
        }
    }

    /// Replaces the lists with the CSR `offsets` (`rows + 1` of them, from
    /// 0, never decreasing) and the entries `indices`, reusing the buffers:
    /// how lists computed elsewhere (read back from a GPU, say) become a
    /// [`NeighborLists`]. Empty `offsets` means no rows.
    ///
    /// # Panics
    ///
    /// If `offsets` is not a CSR of `indices`: it does not start at 0,
    /// decreases, or does not end at `indices.len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::NeighborLists;
    /// let mut lists = NeighborLists::default();
    /// lists.copy_from_csr(&[0, 1, 1, 2], &[2, 0]);
    /// assert_eq!(lists.len(), 3);
    /// assert_eq!(lists.neighbors(0), [2]);
    /// assert!(lists.neighbors(1).is_empty());
    /// assert_eq!(lists.neighbors(2), [0]);
    /// ```
    pub fn copy_from_csr(&mut self, offsets: &[u32], indices: &[u32]) {
        let valid = offsets.is_empty() && indices.is_empty()
            || offsets.first() == Some(&0)
                && offsets.windows(2).all(|w| w[0] <= w[1])
                && offsets.last().map(|&end| end as usize) == Some(indices.len());
        assert!(
            valid,
            "offsets of {} rows are not a CSR of {} entries",
            offsets.len(),
            indices.len()
        );
        self.offsets.clear();
        self.offsets.extend(offsets.iter().map(|&o| o as usize));
        Self::reserve_entries(&mut self.indices, indices.len());
        self.indices[..indices.len()].copy_from_slice(indices);
    }

    /// Makes the entry buffer at least `needed + MAX_LANES` long (the scan
    /// kernel stores whole steps), growing geometrically.
    #[inline]
    pub(crate) fn reserve_entries(indices: &mut Vec<u32>, needed: usize) {
        let want = needed + MAX_LANES;
        if indices.len() < want {
            let grown = want.max(indices.len() * 2);
            broadphase_storage::reserve_huge(indices, grown);
            indices.resize(grown, 0);
        }
    }

    /// Rewrites the lists kept in sorted order (rows and entries are slots,
    /// in `scratch_*`) into caller order in `offsets`/`indices`, through
    /// `order` (slot → caller index).
    pub(crate) fn remap_from_scratch(&mut self, order: &[u32]) {
        self.remap_rows_from_scratch(order, Some(order), false);
    }

    /// Rewrites the rows kept in `scratch_*` into `offsets`/`indices`:
    /// scratch row `r` becomes row `rows[r]`, each entry `e` becomes
    /// `entries[e]` (or stays `e` without `entries`: already mapped), and
    /// with `sort` each row is sorted.
    ///
    /// Rows are read in scratch order and written to scattered places: the
    /// destination offset and every line of the row [`MOVE_AHEAD`] later are
    /// prefetched (and each row's length, placed first, a few rows
    /// ahead), so the misses overlap instead of stalling each row. Only
    /// the first line of a row, as it was, left sph1m's caller-order lists
    /// 15-20 ms slower (120-127 ms against 104-109).
    pub(crate) fn remap_rows_from_scratch(
        &mut self,
        rows: &[u32],
        entries: Option<&[u32]>,
        sort: bool,
    ) {
        debug_assert_eq!(self.scratch_offsets.len(), rows.len() + 1);
        let total = place_moved_rows(&mut self.offsets, rows, &self.scratch_offsets);
        Self::reserve_entries(&mut self.indices, total);
        for (from, &to) in rows.iter().enumerate() {
            if let Some(&later) = rows.get(from + 2 * MOVE_AHEAD) {
                broadphase_storage::prefetch(&self.offsets[later as usize]);
            }
            if let Some(&soon) = rows.get(from + MOVE_AHEAD) {
                let soon = soon as usize;
                prefetch_lines(&self.indices, self.offsets[soon]..self.offsets[soon + 1]);
            }
            let (start, end) = (self.scratch_offsets[from], self.scratch_offsets[from + 1]);
            let at = self.offsets[to as usize];
            let row = &mut self.indices[at..at + (end - start)];
            let from = &self.scratch_indices[start..end];
            match entries {
                Some(entries) => {
                    for (dst, &e) in row.iter_mut().zip(from) {
                        *dst = entries[e as usize];
                    }
                }
                None => row.copy_from_slice(from),
            }
            if sort {
                row.sort_unstable();
            }
        }
    }

    /// Replaces these lists with `source`'s rows moved on `jobs`: row `r`
    /// of `source` becomes row `rows[r]` (`rows` a permutation), entries
    /// unchanged. Each job writes the rows of one range of destinations,
    /// its own part of the entries: it reads every source row's place and
    /// copies those bound for its range, asking for their lines ahead as
    /// [`remap_rows_from_scratch`](Self::remap_rows_from_scratch) does.
    ///
    /// # Errors
    /// [`JobError`] if a job panicked; the lists are then half written
    /// (the caller empties them).
    pub(crate) fn move_rows_from(
        &mut self,
        jobs: &JobSystem,
        source: &NeighborLists,
        rows: &[u32],
    ) -> Result<(), JobError> {
        let n = rows.len();
        debug_assert_eq!(source.len(), n);
        let sum = place_moved_rows(&mut self.offsets, rows, &source.offsets);
        Self::reserve_entries(&mut self.indices, sum);
        // One range of destination rows a job, its entries split off.
        let pieces = jobs.threads().clamp(1, MAX_MOVE_PIECES);
        let offsets = self.offsets.as_slice();
        let mut parts: [Option<(core::ops::Range<usize>, &mut [u32])>; MAX_MOVE_PIECES] =
            [const { None }; MAX_MOVE_PIECES];
        let mut rest = &mut self.indices[..sum];
        for (k, part) in parts[..pieces].iter_mut().enumerate() {
            let (first, end) = (n * k / pieces, n * (k + 1) / pieces);
            let (mine, after) = rest.split_at_mut(offsets[end] - offsets[first]);
            rest = after;
            *part = Some((first..end, mine));
        }
        jobs.for_each_mut(&mut parts[..pieces], |_, part| {
            let Some((mine, out)) = part.take() else { return };
            let base = offsets[mine.start];
            let bound_here = |to: u32| mine.contains(&(to as usize));
            for (from, &to) in rows.iter().enumerate() {
                if let Some(&later) = rows.get(from + 2 * MOVE_AHEAD).filter(|&&r| bound_here(r)) {
                    broadphase_storage::prefetch(&offsets[later as usize]);
                }
                if let Some(&soon) = rows.get(from + MOVE_AHEAD).filter(|&&r| bound_here(r)) {
                    let soon = soon as usize;
                    prefetch_lines(out, offsets[soon] - base..offsets[soon + 1] - base);
                }
                if !bound_here(to) {
                    continue;
                }
                let at = offsets[to as usize] - base;
                let row = &source.indices[source.offsets[from]..source.offsets[from + 1]];
                out[at..at + row.len()].copy_from_slice(row);
            }
        })
    }
}

/// Rows ahead a move of rows asks for the lines of the row it will write.
const MOVE_AHEAD: usize = 8;

/// Sets `offsets` to the starts of rows moved by `rows` (row `r` becomes
/// row `rows[r]`, a permutation) from rows starting at `from_offsets`;
/// returns the entries in all. The lengths land at scattered places, each
/// asked for a few rows ahead.
fn place_moved_rows(offsets: &mut Vec<usize>, rows: &[u32], from_offsets: &[usize]) -> usize {
    let n = rows.len();
    offsets.clear();
    broadphase_storage::reserve_huge(offsets, n + 1);
    offsets.resize(n + 1, 0);
    for (from, &to) in rows.iter().enumerate() {
        if let Some(&later) = rows.get(from + 4 * MOVE_AHEAD) {
            broadphase_storage::prefetch(offsets.as_ptr().wrapping_add(later as usize + 1));
        }
        offsets[to as usize + 1] = from_offsets[from + 1] - from_offsets[from];
    }
    let mut sum = 0;
    for offset in offsets.iter_mut() {
        sum += *offset;
        *offset = sum;
    }
    sum
}

/// Asks for every cache line of `entries[range]` (a row about to be
/// written: rows of ~30 entries span two or three lines).
fn prefetch_lines(entries: &[u32], range: core::ops::Range<usize>) {
    const LINE: usize = 64 / size_of::<u32>();
    let mut line = range.start & !(LINE - 1);
    while line < range.end {
        broadphase_storage::prefetch(entries.as_ptr().wrapping_add(line));
        line += LINE;
    }
}
