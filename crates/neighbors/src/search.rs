//! The search every structure shares: stencils of slot ranges around a cell,
//! and the three walks over them (pairs, neighbor lists, one query).
//!
//! A structure only says where particles are: it sorts them into cells
//! ([`Sorted`]), lists the runs of slots that share a cell, and turns a box
//! of cells into a few disjoint slot ranges (one per row of cells for the
//! grid and the index, one per bucket for the hash). The walks here do the
//! rest: for each run, the ranges of the `±k` cells around it are computed
//! once and scanned for every particle of the run.

use super::block::{BlockKernel, pairs_by_blocks, query_rows_by_blocks, rows_by_blocks};
use super::csr::NeighborLists;
use super::pair_batch::{EachPair, Emit, PairBatches, PairSink, PairVec};
use super::points::{PointError, check_point, check_radius};
#[cfg(simd)]
use super::scan::{Avx2, Avx512, Avx512Blocks};
use super::scan::{Columns, Contact, Kernel, MAX_LANES, NO_SKIP, Scalar, ScanKernel, Test, Within};
use super::sorted::{ABSOLUTE_SLACK, Shape, Sorted};
pub(crate) use super::stencil::{CellBox, MAX_RANGES, Stencil, around, spanning};
use super::stencil::{MAX_STEPS, Steps};
use glam::Vec3;
use std::ops::Range;

/// What a structure provides to the shared walks.
pub(crate) trait Cells {
    /// State carried from one run's stencil to the next run's, in slot
    /// order (the index keeps its last binary-search answers here).
    type Finger: Default;

    /// The particles, sorted by cell.
    fn sorted(&self) -> &Sorted;

    /// Whether slots run along rows of cells: the cells of one row along x
    /// hold consecutive slots, in x order, and
    /// [`row_end`](Self::row_end) says where each row ends.
    #[cfg_attr(not(simd), allow(dead_code))]
    const ROWS: bool = false;

    /// With [`ROWS`](Self::ROWS), the end of the slots of the row of cells
    /// holding `slot`; without, `slot + 1`.
    fn row_end(&self, slot: usize) -> usize {
        slot + 1
    }

    /// With [`ROWS`](Self::ROWS), the index of `cell` (as
    /// [`cell_of`](Self::cell_of) gives it) among the structure's cells,
    /// in slot order; without, 0.
    fn cell_index(&self, _cell: [i32; 3]) -> usize {
        0
    }

    /// With [`ROWS`](Self::ROWS), how many cells
    /// [`cell_index`](Self::cell_index) numbers; without, 1.
    fn cells_len(&self) -> usize {
        1
    }

    /// The scan kernel the configuration asks for (only SIMD builds can
    /// run another than the scalar one).
    #[cfg_attr(not(simd), allow(dead_code))]
    fn kernel(&self) -> ScanKernel;

    /// The stencil half-width in cells, per axis: every particle within
    /// reach of a particle of cell `c` lies in the cells `c ± k`.
    fn k(&self) -> [i32; 3];

    /// The cell holding position `p` (computed in `f64` like the build's,
    /// clamped like it: monotone in each coordinate).
    fn cell_of(&self, p: [f64; 3]) -> [i32; 3];

    /// A position in the sequence of runs of slots that share a cell.
    type Runs: Copy;

    /// The runs starting with the one that holds slot `from` (clipped to it).
    fn runs_from(&self, from: usize) -> Self::Runs;

    /// The next maximal run `(start, end, cell)` of slots below `to` that
    /// share a cell, in slot order; `None` past `to`.
    fn next_run(&self, runs: &mut Self::Runs, to: usize) -> Option<(usize, usize, [i32; 3])>;

    /// Calls `f(start, end, cell)` for each run of `from..to`.
    fn for_each_run(&self, from: usize, to: usize, mut f: impl FnMut(usize, usize, [i32; 3])) {
        let mut runs = self.runs_from(from);
        while let Some((start, end, cell)) = self.next_run(&mut runs, to) {
            f(start, end, cell);
        }
    }

    /// Replaces `out` with disjoint slot ranges that hold every particle
    /// whose cell lies in `cells` (and possibly others).
    fn ranges(&self, cells: CellBox, finger: &mut Self::Finger, out: &mut Stencil);

    /// Like [`ranges`](Self::ranges) for the `±k` box around the cells
    /// `first` to `last` (one row of cells: they differ in x only), but may
    /// leave out ranges that lie wholly before the slots of `first`: the
    /// pair walks need only partners in later slots. Structures whose
    /// slots follow their cells' (z, y, x) order skip the rows before the
    /// cells' own.
    fn later_ranges(
        &self,
        first: [i32; 3],
        last: [i32; 3],
        finger: &mut Self::Finger,
        out: &mut Stencil,
    ) {
        self.ranges(spanning(first, last, self.k()), finger, out);
    }
}

/// What "neighbor" means for a built structure.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{NeighborRule, NeighborSearch, SpatialHash};
/// use glam::Vec3;
///
/// let mut hash = SpatialHash::default();
/// hash.build_spheres(&[Vec3::ZERO, Vec3::X], &[0.25, 0.75])?;
/// assert_eq!(hash.rule(), NeighborRule::Contact { max_radius: 0.75 });
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NeighborRule {
    /// Built from points: `i` and `j` are neighbors when
    /// `distance(p_i, p_j) <= radius` (inclusive).
    Within {
        /// The build radius.
        radius: f32,
    },
    /// Built from spheres: `i` and `j` are in contact when
    /// `distance(c_i, c_j) <= r_i + r_j` (inclusive: touching counts).
    Contact {
        /// The largest sphere radius of the build.
        max_radius: f32,
    },
}

impl From<Shape> for NeighborRule {
    fn from(shape: Shape) -> Self {
        match shape {
            Shape::Points { radius } => NeighborRule::Within { radius },
            Shape::Spheres { max_radius } => NeighborRule::Contact { max_radius },
        }
    }
}

/// Candidates scanned per flush in the walks that report through a
/// callback or a caller's `Vec` (a stack buffer, so they never allocate).
const PIECE: usize = 128;

/// Calls `f(a, b)` (caller indices, `a < b`) for every neighbor pair whose
/// lower slot is in `slots`.
pub(crate) fn pairs_in<C: Cells>(c: &C, slots: Range<usize>, f: impl FnMut(u32, u32)) {
    walk_pairs_into(c, slots, &mut EachPair(f));
}

/// Every neighbor pair, `[a, b]` with `a < b` (caller indices), appended
/// to `out` in [`pairs_in`]'s order.
pub(crate) fn pairs_into<C: Cells>(c: &C, out: &mut Vec<[u32; 2]>) {
    walk_pairs_into(c, 0..c.sorted().len(), &mut PairVec(out));
}

/// [`pairs_in`]'s pairs, `[a, b]`, handed to `f` a slice at a time (see
/// `pair_batch.rs`), in the same order.
pub(crate) fn pair_batches_in<C: Cells>(c: &C, slots: Range<usize>, f: impl FnMut(&[[u32; 2]])) {
    walk_pairs_into(c, slots, &mut PairBatches(f));
}

/// The pair walk of the kernel `c` resolves to, into `sink`.
fn walk_pairs_into<C: Cells>(c: &C, slots: Range<usize>, sink: &mut impl PairSink) {
    // Rows of cells run by blocks, each pair tested once (see `block.rs`).
    #[cfg(simd)]
    match block_simd_for(c) {
        Some(BlockSimd::Avx2(k)) => return k.walk_block_pairs(c, slots, sink),
        Some(BlockSimd::Avx512(k)) => return k.walk_block_pairs(c, slots, sink),
        None => {}
    }
    #[cfg(simd)]
    match simd_for(c) {
        Some(Simd::Avx2(k)) => return k.walk_pairs(c, slots, sink),
        Some(Simd::Avx512(k)) => return k.walk_pairs(c, slots, sink),
        None => {}
    }
    pairs_shape(Scalar, c, slots, sink);
}

/// A SIMD kernel, as a value that proves its CPU feature was detected.
#[cfg(simd)]
enum Simd {
    Avx2(Avx2),
    Avx512(Avx512),
}

/// The SIMD kernel the structure's configuration resolves to, if any.
#[cfg(simd)]
#[inline]
fn simd_for<C: Cells>(c: &C) -> Option<Simd> {
    let wanted = match c.kernel() {
        // Long rows fill 16 lanes; short ones waste half of them.
        ScanKernel::Auto if c.sorted().long_rows => ScanKernel::Avx512,
        other => other,
    };
    match wanted.resolve() {
        ScanKernel::Avx2 => Avx2::detect().map(Simd::Avx2),
        ScanKernel::Avx512 => Avx512::detect().map(Simd::Avx512),
        _ => None,
    }
}

/// A block kernel (see `block.rs`), as a value that proves its CPU
/// feature was detected.
#[cfg(simd)]
#[derive(Clone, Copy)]
pub(crate) enum BlockSimd {
    Avx2(Avx2),
    Avx512(Avx512Blocks),
}

/// The block kernel for the rows of `c`, if its slots run along rows of
/// cells and the configured kernel has a SIMD block walk on this CPU:
/// sixteen lanes where AVX-512 F, BW, VL and VBMI2 run (unless AVX2 is
/// asked for by name), else eight.
#[cfg(simd)]
#[inline]
pub(crate) fn block_simd_for<C: Cells>(c: &C) -> Option<BlockSimd> {
    if !C::ROWS {
        return None;
    }
    let avx2 = || Avx2::detect().map(BlockSimd::Avx2);
    match c.kernel() {
        ScanKernel::Scalar => None,
        ScanKernel::Avx2 => avx2(),
        ScanKernel::Auto | ScanKernel::Avx512 => {
            Avx512Blocks::detect().map(BlockSimd::Avx512).or_else(avx2)
        }
    }
}

#[inline(always)]
pub(crate) fn pairs_shape<C: Cells, K: Kernel>(
    kernel: K,
    c: &C,
    slots: Range<usize>,
    sink: &mut impl PairSink,
) {
    let sorted = c.sorted();
    let mut emit = sink.emitter();
    match sorted.shape {
        Shape::Points { radius } => {
            let r2 = radius * radius;
            pairs_walk(kernel, c, slots, |_| Within { r2 }, &mut emit);
        }
        Shape::Spheres { .. } => {
            let r = sorted.r.as_slice();
            pairs_walk(kernel, c, slots, |s| Contact { rp: r[s] }, &mut emit);
        }
    }
    emit.flush();
}

#[inline(always)]
pub(crate) fn pairs_walk<C: Cells, K: Kernel, T: Test>(
    kernel: K,
    c: &C,
    slots: Range<usize>,
    test_for: impl Fn(usize) -> T,
    emit: &mut impl Emit,
) {
    let sorted = c.sorted();
    let cols = Columns::new(sorted);
    let order = &sorted.order;
    let mut stencil = Stencil::default();
    let mut later = Stencil::default();
    let mut steps = Steps::default();
    let mut finger = C::Finger::default();
    let mut buf = [0u32; PIECE + MAX_LANES];
    let to = slots.end.min(sorted.len());
    let mut runs = c.runs_from(slots.start);
    while let Some((start, end, cell)) = c.next_run(&mut runs, to) {
        c.later_ranges(cell, cell, &mut finger, &mut stencil);
        // Each pair once, from its lower slot: ranges before the run hold
        // no partner; the range holding the run is scanned from the slot
        // after each particle; later ranges are scanned whole, by steps
        // listed once for the run.
        let mut own = [0u32; 2];
        later.clear();
        for &[lo, hi] in stencil.ranges() {
            if (lo as usize) <= start && start < hi as usize {
                own = [lo, hi];
            } else if lo as usize > start {
                later.push(lo, hi);
            }
        }
        let listed = steps.cover(later.ranges(), K::LANES);
        for s in start..end {
            let p = sorted.position(s);
            let probe = kernel.probe(test_for(s), p, NO_SKIP);
            let a = order[s];
            let mut hand_on = |buf: &[u32]| {
                for &j in buf {
                    emit.pair(a, order[j as usize]);
                }
            };
            // The own range, from s + 1, in pieces that fit the buffer.
            let mut at = s + 1;
            while at < own[1] as usize {
                let piece_end = (own[1] as usize).min(at + PIECE);
                let mut n = 0;
                while at < piece_end {
                    n = kernel.step::<T>(&cols, &probe, at, piece_end, &mut buf, n);
                    at += K::LANES;
                }
                at = piece_end;
                hand_on(&buf[..n]);
            }
            if listed {
                let mut n = 0;
                for &[at, end] in steps.as_slice() {
                    n = kernel.step::<T>(&cols, &probe, at as usize, end as usize, &mut buf, n);
                    if n > PIECE {
                        hand_on(&buf[..n]);
                        n = 0;
                    }
                }
                hand_on(&buf[..n]);
            } else {
                for &[lo, hi] in later.ranges() {
                    let mut at = lo as usize;
                    while at < hi as usize {
                        let piece_end = (hi as usize).min(at + PIECE);
                        let n =
                            kernel.scan(&cols, test_for(s), p, at, piece_end, NO_SKIP, &mut buf, 0);
                        hand_on(&buf[..n]);
                        at = piece_end;
                    }
                }
            }
        }
    }
}

/// Fills `lists` with the rows of the slots in `slots`, in sorted order:
/// row `i` is slot `slots.start + i`, entries are slots.
pub(crate) fn sorted_rows<C: Cells>(c: &C, slots: Range<usize>, lists: &mut NeighborLists) {
    let (offsets, indices) = (&mut lists.offsets, &mut lists.indices);
    rows_into(c, slots, None, offsets, indices);
}

/// Fills `offsets` and `indices` with the sorted-order rows of `slots`,
/// the entries as slots or, with `ids`, as `ids[slot]`.
pub(crate) fn rows_into<C: Cells>(
    c: &C,
    slots: Range<usize>,
    ids: Option<&[u32]>,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
) {
    offsets.clear();
    append_rows_into(c, slots, ids, offsets, indices);
}

/// Appends the sorted-order rows of `slots` to `lists`, after its rows.
pub(crate) fn append_sorted_rows<C: Cells>(c: &C, slots: Range<usize>, lists: &mut NeighborLists) {
    let (offsets, indices) = (&mut lists.offsets, &mut lists.indices);
    append_rows_into(c, slots, None, offsets, indices);
}

/// Appends the sorted-order rows of `slots` to `lists`, after its rows,
/// each entry the caller's index of its particle.
pub(crate) fn append_caller_entry_rows<C: Cells>(
    c: &C,
    slots: Range<usize>,
    lists: &mut NeighborLists,
) {
    let order = c.sorted().order.as_slice();
    let (offsets, indices) = (&mut lists.offsets, &mut lists.indices);
    append_rows_into(c, slots, Some(order), offsets, indices);
}

/// Appends the sorted-order rows of `slots` to `offsets` (its first entry
/// pushed if it has none) and `indices` (from the last offset on), the
/// entries as slots; with `ids`, as `ids[slot]` (the caller's indices,
/// for rows bound for caller order).
fn append_rows_into<C: Cells>(
    c: &C,
    slots: Range<usize>,
    ids: Option<&[u32]>,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
) {
    let sorted = c.sorted();
    let to = slots.end.min(sorted.len());
    let from = slots.start.min(to);
    if offsets.is_empty() {
        broadphase_storage::reserve_huge(offsets, to - from + 1);
        offsets.push(0);
    }
    // Rows of cells run by blocks of particles (faster at every density
    // measured, sparse ones too). The scalar twin of the block walk
    // keeps the per-particle walk. The block walk reads out the ids
    // itself; the others write slots, mapped below.
    #[cfg(simd)]
    match block_simd_for(c) {
        Some(BlockSimd::Avx2(k)) => return k.walk_block_rows(c, from..to, ids, offsets, indices),
        Some(BlockSimd::Avx512(k)) => {
            return k.walk_block_rows(c, from..to, ids, offsets, indices);
        }
        None => {}
    }
    let start = *offsets.last().unwrap_or(&0);
    append_slot_rows(c, from..to, offsets, indices);
    if let Some(ids) = ids {
        let end = *offsets.last().unwrap_or(&0);
        to_ids(&mut indices[start..end], ids);
    }
}

/// Replaces each slot of `entries` with its id.
pub(crate) fn to_ids(entries: &mut [u32], ids: &[u32]) {
    for entry in entries {
        *entry = ids[*entry as usize];
    }
}

/// [`append_rows_into`] by the per-particle walks: entries as slots.
fn append_slot_rows<C: Cells>(
    c: &C,
    slots: Range<usize>,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
) {
    let (from, to) = (slots.start, slots.end);
    #[cfg(simd)]
    match simd_for(c) {
        Some(Simd::Avx2(k)) => return k.walk_rows(c, from..to, offsets, indices),
        Some(Simd::Avx512(k)) => return k.walk_rows(c, from..to, offsets, indices),
        None => {}
    }
    rows_shape(Scalar, c, from..to, offsets, indices);
}

#[inline(always)]
pub(crate) fn rows_shape<C: Cells, K: Kernel>(
    kernel: K,
    c: &C,
    slots: Range<usize>,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
) {
    let sorted = c.sorted();
    // Rows are appended after those `offsets` already ends.
    let pos = *offsets.last().unwrap_or(&0);
    match sorted.shape {
        Shape::Points { radius } => {
            let r2 = radius * radius;
            rows_walk(kernel, c, slots, |_| Within { r2 }, offsets, indices, pos);
        }
        Shape::Spheres { .. } => {
            let r = sorted.r.as_slice();
            rows_walk(kernel, c, slots, |s| Contact { rp: r[s] }, offsets, indices, pos);
        }
    }
}

/// The rows of sorted query points (`queries`, their cells in `cells`)
/// among the particles of `c`, by blocks (see `block.rs`), into `offsets`
/// (pushed after its first entry) and `indices` as slots.
#[cfg(simd)]
pub(crate) fn query_blocks<C: Cells>(
    kernel: BlockSimd,
    c: &C,
    queries: &Columns<'_>,
    cells: &[[i32; 3]],
    radius: f32,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
) {
    match kernel {
        BlockSimd::Avx2(k) => k.walk_query_blocks(c, queries, cells, radius, offsets, indices),
        BlockSimd::Avx512(k) => k.walk_query_blocks(c, queries, cells, radius, offsets, indices),
    }
}

#[inline(always)]
#[cfg_attr(not(simd), allow(dead_code))]
pub(crate) fn query_blocks_shape<C: Cells, K: BlockKernel>(
    kernel: K,
    c: &C,
    queries: &Columns<'_>,
    cells: &[[i32; 3]],
    radius: f32,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
) {
    match c.sorted().shape {
        Shape::Points { .. } => query_rows_by_blocks::<C, K, Within>(
            kernel, c, queries, cells, radius, offsets, indices,
        ),
        Shape::Spheres { .. } => query_rows_by_blocks::<C, K, Contact>(
            kernel, c, queries, cells, radius, offsets, indices,
        ),
    }
}

/// [`pairs_shape`] by blocks of particles (see `block.rs`).
#[inline(always)]
#[cfg_attr(not(simd), allow(dead_code))]
pub(crate) fn block_pairs_shape<C: Cells, K: Kernel + BlockKernel>(
    kernel: K,
    c: &C,
    slots: Range<usize>,
    sink: &mut impl PairSink,
) {
    let sorted = c.sorted();
    match sorted.shape {
        Shape::Points { radius } => {
            let r2 = radius * radius;
            pairs_by_blocks(kernel, c, slots, |_| Within { r2 }, sink);
        }
        Shape::Spheres { .. } => {
            let r = sorted.r.as_slice();
            pairs_by_blocks(kernel, c, slots, |s| Contact { rp: r[s] }, sink);
        }
    }
}

/// [`rows_shape`] by blocks of particles (see `block.rs`).
#[inline(always)]
#[cfg_attr(not(simd), allow(dead_code))]
pub(crate) fn block_rows_shape<C: Cells, K: Kernel + BlockKernel>(
    kernel: K,
    c: &C,
    slots: Range<usize>,
    ids: Option<&[u32]>,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
) {
    let sorted = c.sorted();
    match sorted.shape {
        Shape::Points { radius } => {
            let r2 = radius * radius;
            rows_by_blocks(kernel, c, slots, |_| Within { r2 }, ids, offsets, indices);
        }
        Shape::Spheres { .. } => {
            let r = sorted.r.as_slice();
            rows_by_blocks(kernel, c, slots, |s| Contact { rp: r[s] }, ids, offsets, indices);
        }
    }
}

/// Pushes to `offsets` the row ends of `slots`, each particle's row
/// written into `indices` from `pos`; returns the end of the entries.
#[inline(always)]
pub(crate) fn rows_walk<C: Cells, K: Kernel, T: Test>(
    kernel: K,
    c: &C,
    slots: Range<usize>,
    test_for: impl Fn(usize) -> T,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
    mut pos: usize,
) -> usize {
    let sorted = c.sorted();
    let cols = Columns::new(sorted);
    let k = c.k();
    let mut stencil = Stencil::default();
    let mut steps = Steps::default();
    let mut hits = [[0u32; 2]; MAX_STEPS];
    let mut finger = C::Finger::default();
    let mut runs = c.runs_from(slots.start);
    while let Some((start, end, cell)) = c.next_run(&mut runs, slots.end) {
        c.ranges(around(cell, k), &mut finger, &mut stencil);
        let most = stencil.total();
        let listed = steps.cover(stencil.ranges(), K::LANES);
        for s in start..end {
            NeighborLists::reserve_entries(indices, pos + most);
            let p = sorted.position(s);
            if listed {
                let probe = kernel.probe(test_for(s), p, s);
                // All the tests first, keeping the steps that hit, then
                // their writes: a write's position depends on the previous
                // write's, and waiting on it stalled the tests behind it.
                let mut live = 0;
                for &[at, end] in steps.as_slice() {
                    let mask = kernel.hits::<T>(&cols, &probe, at as usize, end as usize);
                    hits[live] = [mask, at];
                    live += usize::from(mask != 0);
                }
                for &[mask, at] in &hits[..live] {
                    pos = kernel.emit(mask, at as usize, indices, pos);
                }
            } else {
                for &[lo, hi] in stencil.ranges() {
                    pos = kernel.scan(
                        &cols,
                        test_for(s),
                        p,
                        lo as usize,
                        hi as usize,
                        s,
                        indices,
                        pos,
                    );
                }
            }
            offsets.push(pos);
        }
    }
    pos
}

/// Fills `lists` with every particle's row in caller order.
pub(crate) fn caller_rows<C: Cells>(c: &C, lists: &mut NeighborLists) {
    let n = c.sorted().len();
    let order = c.sorted().order.as_slice();
    // The entries come out as caller indices: the move into caller order
    // then copies each row instead of looking every entry up.
    rows_into(c, 0..n, Some(order), &mut lists.scratch_offsets, &mut lists.scratch_indices);
    lists.remap_rows_from_scratch(order, None, false);
}

/// The particles within `radius` of `point` (points), or touching the ball
/// of `radius` around it (spheres), as caller indices in `out`.
pub(crate) fn query<C: Cells>(
    c: &C,
    point: Vec3,
    radius: f32,
    out: &mut Vec<u32>,
) -> Result<(), PointError> {
    check_point(point)?;
    check_radius(radius)?;
    let sorted = c.sorted();
    let max = match sorted.shape {
        Shape::Points { radius } | Shape::Spheres { max_radius: radius } => radius,
    };
    if radius > max {
        return Err(PointError::QueryRadiusTooLarge { radius, max });
    }
    out.clear();
    if sorted.len() == 0 {
        return Ok(());
    }
    let reach = match sorted.shape {
        Shape::Points { .. } => radius,
        Shape::Spheres { max_radius } => radius + max_radius,
    };
    // Pad the reach beyond any f32 rounding of the distance test (2⁻²¹
    // relative, and underflow of tiny squares); in f64 the bounds
    // themselves round negligibly.
    let pad = f64::from(reach) * (1.0 + 1.0 / 1_048_576.0) + ABSOLUTE_SLACK;
    let p = [f64::from(point.x), f64::from(point.y), f64::from(point.z)];
    let lo = c.cell_of([p[0] - pad, p[1] - pad, p[2] - pad]);
    let hi = c.cell_of([p[0] + pad, p[1] + pad, p[2] + pad]);
    let mut stencil = Stencil::default();
    c.ranges(CellBox { lo, hi }, &mut C::Finger::default(), &mut stencil);
    let q = point.to_array();
    #[cfg(simd)]
    match simd_for(c) {
        Some(Simd::Avx2(k)) => k.walk_query(sorted, &stencil, radius, q, out),
        Some(Simd::Avx512(k)) => k.walk_query(sorted, &stencil, radius, q, out),
        None => query_shape(Scalar, sorted, &stencil, radius, q, out),
    }
    #[cfg(not(simd))]
    query_shape(Scalar, sorted, &stencil, radius, q, out);
    Ok(())
}

#[inline(always)]
pub(crate) fn query_shape<K: Kernel>(
    kernel: K,
    sorted: &Sorted,
    stencil: &Stencil,
    radius: f32,
    q: [f32; 3],
    out: &mut Vec<u32>,
) {
    match sorted.shape {
        Shape::Points { .. } => {
            query_walk(kernel, sorted, stencil, Within { r2: radius * radius }, q, out);
        }
        Shape::Spheres { .. } => {
            query_walk(kernel, sorted, stencil, Contact { rp: radius }, q, out)
        }
    }
}

#[inline(always)]
fn query_walk<K: Kernel, T: Test>(
    kernel: K,
    sorted: &Sorted,
    stencil: &Stencil,
    test: T,
    p: [f32; 3],
    out: &mut Vec<u32>,
) {
    let cols = Columns::new(sorted);
    let mut buf = [0u32; PIECE + MAX_LANES];
    for &[lo, hi] in stencil.ranges() {
        let (mut lo, hi) = (lo as usize, hi as usize);
        while lo < hi {
            let piece_end = hi.min(lo + PIECE);
            let n = kernel.scan(&cols, test, p, lo, piece_end, NO_SKIP, &mut buf, 0);
            out.extend(buf[..n].iter().map(|&j| sorted.order[j as usize]));
            lo = piece_end;
        }
    }
}
