//! Neighbor rows of a grid, a block of particles at a time (eight on
//! AVX2, sixteen on AVX-512).
//!
//! The per-particle walk (`search.rs`) tests one particle against its
//! stencil eight candidates a step and writes each step's hits at once, so
//! every store waits on the previous step's hit count for its address. On
//! AVX2 those stores, not the distance tests, took half the time of a
//! dense search (sph1m: 162 ms for the rows, 82 ms with the writes
//! removed). Here the roles turn:
//!
//! 1. Eight (AVX2) or sixteen (AVX-512) consecutive particles of one row
//!    of cells (a *block*) sit in the lanes. Every candidate of the block's stencil (the union of its
//!    particles' stencils: one row of cells a cell or two longer) is
//!    broadcast against them, and its hit mask (bit `l`: lane `l`'s
//!    particle) goes to a fixed place in a small buffer. Nothing in this
//!    loop waits on a write position.
//! 2. Each particle's row is then read out of the masks, 32 candidates at
//!    a time. AVX2: one shift and one byte `movemask` give the particle's
//!    bits, and each eight candidates are compacted into the row with one
//!    table lookup and one permute. AVX-512: one `vptestmw` gives the bits
//!    of all 32, `vpcompressb` packs the hits' places as bytes, and one
//!    two-table `vpermt2d` turns sixteen places into slots, written by a
//!    half-width store (a second store only past eight hits, a third past
//!    sixteen). (Skipping the groups without a hit measured slower on
//!    AVX2: the bookkeeping cost more than the stores it saved.)
//!
//! On sph1m (one thread) the rows took 108 ms this way against 169 ms for
//! the per-particle walk on a Zen 3 with AVX2; on a Zen 5, 40.6 ms with
//! AVX-512 blocks against 58 ms with AVX2 blocks and 65 ms for the
//! per-particle AVX-512 walk: the same entries in the same order. The
//! grid's pairs run the same walk over each block's later candidates
//! only, each pair tested once ([`pairs_by_blocks`]).
//! The scalar twin of this walk is slower than the scalar
//! per-particle walk (a scalar bit gather costs 32 steps), so only the
//! SIMD kernels run it; the twin, and lane-by-lane expectations, are what
//! they are tested against.
//!
//! The candidates are tested in slot order, so rows come out in increasing
//! slot order, exactly as the per-particle walk writes them; the test is
//! the same expression in the same order, so the rows are the same bit
//! for bit.

use super::csr::NeighborLists;
use super::pair_batch::{Emit, PairSink};
use super::scan::{COMPRESS, Columns, HITS, Kernel, LANES, Scalar, Test};
use super::search::{Cells, Stencil, rows_walk};
use super::sorted::Shape;
use super::stencil::spanning;
use std::ops::Range;

/// The most particles a block holds: the widest kernel's lanes.
pub(crate) const MAX_BLOCK: usize = 16;

/// Most candidates one block tests from its buffers; a block whose stencil
/// holds more (a very crowded cell) takes the per-particle walk.
pub(crate) const MAX_CANDIDATES: usize = 2048;

/// Candidates per group read out of the masks at once.
pub(crate) const GROUP: usize = 32;

/// One candidate's hits: bit `l` for lane `l` (`u8` for eight lanes,
/// `u16` for sixteen).
pub(crate) trait LaneMask:
    Copy + Default + std::ops::BitOr<Output = Self> + Into<u32>
{
    /// The mask without lane `lane`'s bit.
    fn without_lane(self, lane: usize) -> Self;

    /// The bits of the lanes below `lane` only.
    fn below(self, lane: usize) -> Self;
}

impl LaneMask for u8 {
    #[inline(always)]
    fn without_lane(self, lane: usize) -> u8 {
        self & !(1 << lane)
    }

    #[inline(always)]
    fn below(self, lane: usize) -> u8 {
        // `lane < 8`: the shift is in range.
        self & ((1u16 << lane) - 1) as u8
    }
}

impl LaneMask for u16 {
    #[inline(always)]
    fn without_lane(self, lane: usize) -> u16 {
        self & !(1 << lane)
    }

    #[inline(always)]
    fn below(self, lane: usize) -> u16 {
        // `lane < 16`: the shift is in range.
        self & ((1u32 << lane) - 1) as u16
    }
}

/// A block's particles prepared for the tests, and the tests' outputs.
///
/// A kernel as a type, like [`Kernel`]: the block walk is compiled once per
/// implementation, with its CPU feature enabled.
pub(crate) trait BlockKernel: Copy {
    /// Particles per block: the lanes of one test (at most [`MAX_BLOCK`]).
    const WIDTH: usize;

    /// One candidate's hit mask.
    type Mask: LaneMask;

    /// The block's particles broadcast into lanes.
    type Lanes: Copy;

    /// Slots `from..from + n` (`n <= WIDTH`) in lanes, with their test
    /// values; the lanes past `n` never hit.
    fn lanes(self, c: &Columns<'_>, from: usize, n: usize, values: LaneValues) -> Self::Lanes;

    /// The lanes within reach of the candidate at `p` (radius `r`, read for
    /// spheres only).
    fn test<T: Test>(self, lanes: &Self::Lanes, p: [f32; 3], r: f32) -> Self::Mask;

    /// Writes `slots[i]` for each `i` whose mask has bit `lane` set, lowest
    /// first, into `out[pos..]`; returns the new end. Stores up to
    /// [`MAX_BLOCK`] entries past each write position: `out` must have
    /// room for the new end plus `MAX_BLOCK` (asserted).
    fn emit_lane(
        self,
        masks: &[Self::Mask; GROUP],
        lane: u32,
        slots: &[u32; GROUP],
        out: &mut [u32],
        pos: usize,
    ) -> usize;
}

/// The test values of a block's lanes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LaneValues {
    /// The same in every lane: `r²` for points, or a query's radius
    /// against spheres.
    Same(f32),
    /// Each data sphere's radius, from the columns' `r`.
    Radii,
}

impl LaneValues {
    /// A data block's values for particles of `shape`: `r²` for points,
    /// each sphere's radius for spheres.
    #[inline(always)]
    fn of(shape: Shape) -> Self {
        match shape {
            Shape::Points { radius } => LaneValues::Same(radius * radius),
            Shape::Spheres { .. } => LaneValues::Radii,
        }
    }

    /// The values of lanes `0..W` for slots `from..from + n`, 0 past `n`.
    #[inline(always)]
    pub(crate) fn array<const W: usize>(self, c: &Columns<'_>, from: usize, n: usize) -> [f32; W] {
        match self {
            LaneValues::Same(value) => [value; W],
            LaneValues::Radii => std::array::from_fn(|l| if l < n { c.r[from + l] } else { 0.0 }),
        }
    }
}

/// The per-block buffers (on the stack: 10–13 KB).
struct Buffers<M> {
    /// Hit masks by candidate, padded with zeros to a whole group.
    masks: [M; MAX_CANDIDATES + GROUP],
    /// The slot of each candidate, or its id where the rows are read out
    /// as ids (the caller's indices).
    slots: [u32; MAX_CANDIDATES + GROUP],
}

impl<M: LaneMask> Buffers<M> {
    fn new() -> Self {
        Self { masks: [M::default(); MAX_CANDIDATES + GROUP], slots: [0; MAX_CANDIDATES + GROUP] }
    }
}

/// The blocks of a range of slots: up to `width` consecutive slots in
/// one row of cells, each with the stencil of its cells (one box, as a
/// block never leaves its row). A loop over [`next`](Self::next), not a
/// callback: a closure is not always inlined into the walks' functions,
/// and out of them the kernels' intrinsics are calls.
struct Blocks<'a, C: Cells> {
    c: &'a C,
    width: usize,
    /// Whether only the stencil's ranges from the block's own on are
    /// needed (a pair walk: partners in later slots).
    later: bool,
    /// The next block's first slot, its row's end, the range's end.
    at: usize,
    row_end: usize,
    to: usize,
    /// The current block's stencil.
    stencil: Stencil,
    finger: C::Finger,
}

impl<'a, C: Cells> Blocks<'a, C> {
    /// The blocks of `slots`, clamped to the particles.
    #[inline(always)]
    fn new(c: &'a C, slots: Range<usize>, width: usize, later: bool) -> Self {
        let to = slots.end.min(c.sorted().len());
        let at = slots.start.min(to);
        let (stencil, finger) = (Stencil::default(), C::Finger::default());
        Self { c, width, later, at, row_end: at, to, stencil, finger }
    }

    /// The next block's slots; its stencil is then in `self.stencil`.
    #[inline(always)]
    fn next(&mut self) -> Option<Range<usize>> {
        let (c, s) = (self.c, self.at);
        if s >= self.to {
            return None;
        }
        if s >= self.row_end {
            self.row_end = c.row_end(s).clamp(s + 1, self.to);
        }
        let e = (s + self.width).min(self.row_end);
        let sorted = c.sorted();
        let first = c.cell_of(sorted.position(s).map(f64::from));
        let last = c.cell_of(sorted.position(e - 1).map(f64::from));
        if self.later {
            c.later_ranges(first, last, &mut self.finger, &mut self.stencil);
        } else {
            c.ranges(spanning(first, last, c.k()), &mut self.finger, &mut self.stencil);
        }
        self.at = e;
        Some(s..e)
    }
}

/// Fills `offsets` (pushed, after its first entry) and `indices` (from
/// the last offset) with the sorted-order rows of `slots`, block by
/// block; the entries are slots, or with `ids` each slot's id (read out
/// as such: the candidates' ids are copied per run of candidates). `c`
/// must number its slots along rows of cells (see [`Cells::ROWS`]).
#[inline(always)]
pub(crate) fn rows_by_blocks<C: Cells, K: Kernel + BlockKernel, T: Test>(
    kernel: K,
    c: &C,
    slots: Range<usize>,
    test_for: impl Fn(usize) -> T + Copy,
    ids: Option<&[u32]>,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
) {
    let cols = Columns::new(c.sorted());
    let values = LaneValues::of(c.sorted().shape);
    let mut buffers = Buffers::new();
    let mut pos = *offsets.last().unwrap_or(&0);
    let mut blocks = Blocks::new(c, slots, K::WIDTH, false);
    while let Some(block) = blocks.next() {
        let (s, e, stencil) = (block.start, block.end, &blocks.stencil);
        if stencil.total() > MAX_CANDIDATES {
            let start = pos;
            pos = rows_walk(kernel, c, block, test_for, offsets, indices, pos);
            if let Some(ids) = ids {
                crate::search::to_ids(&mut indices[start..pos], ids);
            }
        } else {
            let lanes = kernel.lanes(&cols, s, e - s, values);
            pos = block_rows::<K, T>(
                kernel,
                &cols,
                stencil,
                Block { len: e - s, own: Some(s) },
                ids,
                &lanes,
                &mut buffers,
                offsets,
                indices,
                pos,
            );
        }
    }
}

/// A block's particles: how many, and for data particles (not queries)
/// the slot of the first, so that none is its own neighbor.
#[derive(Clone, Copy, Debug)]
struct Block {
    len: usize,
    own: Option<usize>,
}

/// Fills `offsets` (pushed, after its first entry) and `indices` with the
/// rows of query points among the particles of `c`, block by block: the
/// queries' positions in `queries` and their cells in `cells`, sorted by
/// cell (as `c` numbers them: along rows of cells, see [`Cells::ROWS`]);
/// entries are `c`'s slots. `radius` is the query radius (`T` says whether
/// it is tested against points or touches spheres).
#[inline(always)]
pub(crate) fn query_rows_by_blocks<C: Cells, K: BlockKernel, T: Test>(
    kernel: K,
    c: &C,
    queries: &Columns<'_>,
    cells: &[[i32; 3]],
    radius: f32,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
) {
    let data = Columns::new(c.sorted());
    let k = c.k();
    let value = LaneValues::Same(if T::SPHERES { radius } else { radius * radius });
    let mut buffers = Buffers::new();
    let mut stencil = Stencil::default();
    let mut finger = C::Finger::default();
    let mut pos = *offsets.last().unwrap_or(&0);
    let mut s = 0;
    while s < cells.len() {
        // A block never leaves its row of cells, so its stencil is one box.
        let [_, y, z] = cells[s];
        let mut e = s + 1;
        while e < cells.len() && e - s < K::WIDTH && cells[e][1] == y && cells[e][2] == z {
            e += 1;
        }
        c.ranges(spanning(cells[s], cells[e - 1], k), &mut finger, &mut stencil);
        let block = Block { len: e - s, own: None };
        if stencil.total() > MAX_CANDIDATES {
            // A crowded stencil: each query alone, against pieces of the
            // candidates that fit the buffers, one row across the pieces.
            let one = Block { len: 1, own: None };
            let mut piece = Stencil::default();
            for q in s..e {
                let lanes = kernel.lanes(queries, q, 1, value);
                for &[lo, hi] in stencil.ranges() {
                    let mut at = lo;
                    while at < hi {
                        let to = hi.min(at + MAX_CANDIDATES as u32);
                        piece.clear();
                        piece.push(at, to);
                        pos = block_rows::<K, T>(
                            kernel,
                            &data,
                            &piece,
                            one,
                            None,
                            &lanes,
                            &mut buffers,
                            offsets,
                            indices,
                            pos,
                        );
                        offsets.pop();
                        at = to;
                    }
                }
                offsets.push(pos);
            }
        } else {
            let lanes = kernel.lanes(queries, s, e - s, value);
            pos = block_rows::<K, T>(
                kernel,
                &data,
                &stencil,
                block,
                None,
                &lanes,
                &mut buffers,
                offsets,
                indices,
                pos,
            );
        }
        s = e;
    }
}

/// The rows of the block `block` (its lanes in `lanes`) against the
/// candidates of `stencil`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn block_rows<K: BlockKernel, T: Test>(
    kernel: K,
    cols: &Columns<'_>,
    stencil: &Stencil,
    block: Block,
    ids: Option<&[u32]>,
    lanes: &K::Lanes,
    buffers: &mut Buffers<K::Mask>,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
    mut pos: usize,
) -> usize {
    let count = test_block::<K, T>(kernel, cols, stencil, block, false, ids, lanes, buffers);
    NeighborLists::reserve_entries(indices, pos + block.len * count);
    let hit = lanes_hit(&buffers.masks[..count]);
    let out = indices.as_mut_slice();
    for lane in 0..block.len {
        pos = read_lane(kernel, buffers, count, hit, lane, out, pos);
        offsets.push(pos);
    }
    pos
}

/// The lanes with a hit among `masks`, as bits.
#[inline(always)]
fn lanes_hit<M: LaneMask>(masks: &[M]) -> u32 {
    masks.iter().fold(M::default(), |any, &mask| any | mask).into()
}

/// Writes lane `lane`'s hits among the first `count` candidates of
/// `buffers` (their slots, ascending) into `out` from `pos`; returns the
/// new end. A lane without a bit in `hit` (the lanes with any hit: most
/// lanes have none on sparse sets) skips the read-out.
#[inline(always)]
fn read_lane<K: BlockKernel>(
    kernel: K,
    buffers: &Buffers<K::Mask>,
    count: usize,
    hit: u32,
    lane: usize,
    out: &mut [u32],
    mut pos: usize,
) -> usize {
    if hit >> lane & 1 == 0 {
        return pos;
    }
    let groups = count.div_ceil(GROUP) * GROUP;
    let masks = buffers.masks[..groups].chunks_exact(GROUP);
    let slots = buffers.slots[..groups].chunks_exact(GROUP);
    for (masks, slots) in masks.zip(slots) {
        let (masks, slots) =
            (masks.try_into().expect("a group"), slots.try_into().expect("a group"));
        pos = kernel.emit_lane(masks, lane as u32, slots, out, pos);
    }
    pos
}

/// The candidates of `stencil` a block tests: all of them, or with `later`
/// only those from the block's first slot on (`block.own` must then be
/// set): every pair of a data block with a later particle.
#[inline(always)]
fn candidates(stencil: &Stencil, block: Block, later: bool) -> impl Iterator<Item = [usize; 2]> {
    let from = if later { block.own.expect("a data block") } else { 0 };
    stencil.ranges().iter().filter_map(move |&[lo, hi]| {
        let (lo, hi) = ((lo as usize).max(from), hi as usize);
        (lo < hi).then_some([lo, hi])
    })
}

/// Tests the block `block` (its lanes in `lanes`) against its
/// [`candidates`]: each candidate's hit mask and slot (with `ids`, its
/// id) go to `buffers`, the masks padded with zeros to a whole group;
/// returns the candidates'
/// count. A data block's particles are not their own neighbors, and with
/// `later` a particle keeps only the block's particles after it (each pair
/// once, from its lower slot).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn test_block<K: BlockKernel, T: Test>(
    kernel: K,
    cols: &Columns<'_>,
    stencil: &Stencil,
    block: Block,
    later: bool,
    ids: Option<&[u32]>,
    lanes: &K::Lanes,
    buffers: &mut Buffers<K::Mask>,
) -> usize {
    let mut count = 0;
    let mut own = None;
    for [lo, hi] in candidates(stencil, block, later) {
        if let Some(first) = block.own.filter(|first| (lo..hi).contains(first)) {
            own = Some(count + first - lo);
        }
        let masks = &mut buffers.masks[count..count + hi - lo];
        let (xs, ys, zs) = (&cols.x[lo..hi], &cols.y[lo..hi], &cols.z[lo..hi]);
        if T::SPHERES {
            let rs = &cols.r[lo..hi];
            for (i, mask) in masks.iter_mut().enumerate() {
                *mask = kernel.test::<T>(lanes, [xs[i], ys[i], zs[i]], rs[i]);
            }
        } else {
            for (i, mask) in masks.iter_mut().enumerate() {
                *mask = kernel.test::<T>(lanes, [xs[i], ys[i], zs[i]], 0.0);
            }
        }
        let slots = &mut buffers.slots[count..count + hi - lo];
        match ids {
            // A run of consecutive slots: a copy of the same run of ids.
            Some(ids) => slots.copy_from_slice(&ids[lo..hi]),
            None => {
                for (slot, at) in slots.iter_mut().zip(lo..) {
                    // Slots fit u32 (MAX_POINTS).
                    *slot = at as u32;
                }
            }
        }
        count += hi - lo;
    }
    // The block's particles lie in its own row's range, one after another.
    if let Some(own) = own {
        for (lane, mask) in buffers.masks[own..own + block.len].iter_mut().enumerate() {
            *mask = if later { mask.below(lane) } else { mask.without_lane(lane) };
        }
    }
    let groups = count.div_ceil(GROUP) * GROUP;
    buffers.masks[count..groups].fill(K::Mask::default());
    count
}

/// Hands `sink` every neighbor pair whose lower slot is in `slots` (caller
/// indices, lower first; one at a time or in batches, as the sink takes
/// them), block by block: each
/// block is tested against the candidates from its first slot on only, so
/// each pair is tested once. `c` must number its slots along rows of cells
/// (see [`Cells::ROWS`]).
#[inline(always)]
pub(crate) fn pairs_by_blocks<C: Cells, K: Kernel + BlockKernel, T: Test>(
    kernel: K,
    c: &C,
    slots: Range<usize>,
    test_for: impl Fn(usize) -> T + Copy,
    sink: &mut impl PairSink,
) {
    let cols = Columns::new(c.sorted());
    let order = c.sorted().order.as_slice();
    let values = LaneValues::of(c.sorted().shape);
    let mut buffers = Buffers::new();
    // One particle's partners at a time, as caller indices.
    let mut row = [0u32; MAX_CANDIDATES + MAX_BLOCK];
    let mut blocks = Blocks::new(c, slots, K::WIDTH, true);
    let mut emit = sink.emitter();
    while let Some(range) = blocks.next() {
        let (s, e, stencil) = (range.start, range.end, &blocks.stencil);
        let block = Block { len: e - s, own: Some(s) };
        let count: usize = candidates(stencil, block, true).map(|[lo, hi]| hi - lo).sum();
        if count > MAX_CANDIDATES {
            crate::search::pairs_walk(kernel, c, range, test_for, &mut emit);
            continue;
        }
        let lanes = kernel.lanes(&cols, s, e - s, values);
        // The candidates' caller indices, not their slots: what the rows
        // hand on (one sequential copy per run of candidates, where a
        // lookup per pair read them scattered).
        let ids = Some(order);
        let count =
            test_block::<K, T>(kernel, &cols, stencil, block, true, ids, &lanes, &mut buffers);
        let hit = lanes_hit(&buffers.masks[..count]);
        for lane in 0..block.len {
            let end = read_lane(kernel, &buffers, count, hit, lane, &mut row, 0);
            emit.row(order[s + lane], &row[..end]);
        }
    }
    emit.flush();
}

/// The columns' slots `from..from + n` in `W` lanes, NaN past `n` (NaN
/// lanes fail every comparison).
#[inline(always)]
pub(crate) fn block_columns<const W: usize>(
    c: &Columns<'_>,
    from: usize,
    n: usize,
) -> [[f32; W]; 3] {
    let lane = |column: &[f32], l: usize| if l < n { column[from + l] } else { f32::NAN };
    [c.x, c.y, c.z].map(|column| std::array::from_fn(|l| lane(column, l)))
}

/// Lanes of the scalar block kernel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ScalarLanes {
    p: [[f32; LANES]; 3],
    values: [f32; LANES],
}

impl BlockKernel for Scalar {
    const WIDTH: usize = LANES;
    type Mask = u8;
    type Lanes = ScalarLanes;

    #[inline(always)]
    fn lanes(self, c: &Columns<'_>, from: usize, n: usize, values: LaneValues) -> ScalarLanes {
        ScalarLanes { p: block_columns::<LANES>(c, from, n), values: values.array(c, from, n) }
    }

    #[inline(always)]
    fn test<T: Test>(self, lanes: &ScalarLanes, p: [f32; 3], r: f32) -> u8 {
        let mut mask = 0;
        for l in 0..LANES {
            // The oracles' expression: squares of the differences, summed
            // left to right, no fused multiply-add.
            let (dx, dy, dz) = (p[0] - lanes.p[0][l], p[1] - lanes.p[1][l], p[2] - lanes.p[2][l]);
            let d2 = dx * dx + dy * dy + dz * dz;
            let limit = if T::SPHERES {
                let t = lanes.values[l] + r;
                t * t
            } else {
                lanes.values[l]
            };
            mask |= u8::from(d2 <= limit) << l;
        }
        mask
    }

    #[inline(always)]
    fn emit_lane(
        self,
        masks: &[u8; GROUP],
        lane: u32,
        slots: &[u32; GROUP],
        out: &mut [u32],
        mut pos: usize,
    ) -> usize {
        let mut bits = 0u32;
        for (i, &mask) in masks.iter().enumerate() {
            bits |= u32::from((mask >> lane) & 1) << i;
        }
        for (part, slots) in slots.chunks_exact(LANES).enumerate() {
            let mask = (bits >> (part * LANES)) as usize & 0xff;
            let out: &mut [u32; LANES] = (&mut out[pos..pos + LANES]).try_into().expect("room");
            let lanes = &COMPRESS[mask];
            for l in 0..LANES {
                out[l] = slots[usize::from(lanes[l])];
            }
            pos += usize::from(HITS[mask]);
        }
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pair_batch::EachPair;
    use crate::scan::Within;
    use crate::{CountingSortGrid, NeighborSearch};
    use glam::Vec3;

    fn next(state: &mut u64) -> f32 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        (*state >> 40) as f32 / (1u64 << 24) as f32
    }

    /// Rows of `slots` by the per-particle walk and by blocks with `kernel`.
    fn both<K: Kernel + BlockKernel>(
        kernel: K,
        grid: &CountingSortGrid,
        slots: Range<usize>,
    ) -> [(Vec<usize>, Vec<u32>); 2] {
        let sorted = grid.sorted();
        let r = sorted.r.as_slice();
        let mut out = [(vec![0], Vec::new()), (vec![0], Vec::new())];
        match sorted.shape {
            Shape::Points { radius } => {
                let test = |_| Within { r2: radius * radius };
                let [(o, i), (bo, bi)] = &mut out;
                let end = rows_walk(Scalar, grid, slots.clone(), test, o, i, 0);
                i.truncate(end);
                rows_by_blocks(kernel, grid, slots.clone(), test, None, bo, bi);
                check_ids(kernel, grid, slots, test, bo, bi);
            }
            Shape::Spheres { .. } => {
                let test = |s: usize| crate::scan::Contact { rp: r[s] };
                let [(o, i), (bo, bi)] = &mut out;
                let end = rows_walk(Scalar, grid, slots.clone(), test, o, i, 0);
                i.truncate(end);
                rows_by_blocks(kernel, grid, slots.clone(), test, None, bo, bi);
                check_ids(kernel, grid, slots, test, bo, bi);
            }
        }
        let end = *out[1].0.last().expect("one offset at least");
        out[1].1.truncate(end);
        out
    }

    /// The block rows of `slots` read out as caller indices equal the rows
    /// as slots (`offsets`, `indices`), each slot mapped to its index.
    fn check_ids<K: Kernel + BlockKernel, T: Test>(
        kernel: K,
        grid: &CountingSortGrid,
        slots: Range<usize>,
        test: impl Fn(usize) -> T + Copy,
        offsets: &[usize],
        indices: &[u32],
    ) {
        let order = grid.sorted().order.as_slice();
        let (mut id_offsets, mut ids) = (vec![0], Vec::new());
        rows_by_blocks(kernel, grid, slots, test, Some(order), &mut id_offsets, &mut ids);
        assert_eq!(id_offsets, offsets, "rows as ids: other row lengths");
        let end = *offsets.last().expect("one offset at least");
        let mapped: Vec<u32> = indices[..end].iter().map(|&s| order[s as usize]).collect();
        assert_eq!(ids[..end], mapped[..], "rows as ids: other entries");
    }

    /// Pairs of `slots` by the per-particle walk and by blocks with
    /// `kernel`, each sorted.
    fn both_pairs<K: Kernel + BlockKernel>(
        kernel: K,
        grid: &CountingSortGrid,
        slots: Range<usize>,
    ) -> [Vec<[u32; 2]>; 2] {
        let sorted = grid.sorted();
        let r = sorted.r.as_slice();
        let mut out = [Vec::new(), Vec::new()];
        let [walk, blocks] = &mut out;
        let mut to_walk = EachPair(|a, b| walk.push([a, b]));
        let mut to_blocks = EachPair(|a, b| blocks.push([a, b]));
        let mut walk_emit = to_walk.emitter();
        match sorted.shape {
            Shape::Points { radius } => {
                let test = |_| Within { r2: radius * radius };
                crate::search::pairs_walk(Scalar, grid, slots.clone(), test, &mut walk_emit);
                pairs_by_blocks(kernel, grid, slots, test, &mut to_blocks);
            }
            Shape::Spheres { .. } => {
                let test = |s: usize| crate::scan::Contact { rp: r[s] };
                crate::search::pairs_walk(Scalar, grid, slots.clone(), test, &mut walk_emit);
                pairs_by_blocks(kernel, grid, slots, test, &mut to_blocks);
            }
        }
        out.iter_mut().for_each(|pairs| pairs.sort_unstable());
        out
    }

    /// Every block kernel this CPU runs, rows and pairs.
    fn check_all_kernels(grid: &CountingSortGrid, slots: Range<usize>, what: &str) {
        let [want, got] = both(Scalar, grid, slots.clone());
        assert!(want == got, "scalar blocks differ on {what}");
        let [want, got] = both_pairs(Scalar, grid, slots.clone());
        assert!(want == got, "scalar block pairs differ on {what}");
        #[cfg(simd)]
        if let Some(avx2) = crate::scan::Avx2::detect() {
            let [want, got] = both(avx2, grid, slots.clone());
            assert!(want == got, "AVX2 blocks differ on {what}");
            let [want, got] = both_pairs(avx2, grid, slots.clone());
            assert!(want == got, "AVX2 block pairs differ on {what}");
        }
        #[cfg(simd)]
        if let Some(avx512) = crate::scan::Avx512Blocks::detect() {
            let [want, got] = both(avx512, grid, slots.clone());
            assert!(want == got, "AVX-512 blocks differ on {what}");
            let [want, got] = both_pairs(avx512, grid, slots);
            assert!(want == got, "AVX-512 block pairs differ on {what}");
        }
    }

    /// The block walk writes the per-particle walk's rows, entry for entry
    /// and in the same order, and finds its pairs, over whole sets and slot
    /// ranges, for points and spheres, dense and crowded past the candidate
    /// buffer.
    #[test]
    fn blocks_write_the_per_particle_rows() {
        let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
        for round in 0..40 {
            let count = 50 + (next(&mut rng) * 900.0) as usize;
            let side = 1.0 + next(&mut rng) * 6.0;
            let points: Vec<Vec3> = (0..count)
                .map(|i| {
                    let p = Vec3::new(next(&mut rng), next(&mut rng), next(&mut rng)) * side;
                    // Every fifth point on a coarse lattice: ties and duplicates.
                    if i % 5 == 0 { (p * 2.0).round() * 0.5 } else { p }
                })
                .collect();
            let radius = 0.2 + next(&mut rng) * 1.5;
            let mut grid = CountingSortGrid::default();
            if round % 3 == 2 {
                let radii: Vec<f32> = (0..count).map(|_| next(&mut rng) * radius).collect();
                grid.build_spheres(&points, &radii).expect("valid spheres");
            } else {
                grid.build(&points, radius).expect("valid points");
            }
            let from = (next(&mut rng) * count as f32) as usize;
            let to = from + (next(&mut rng) * (count - from) as f32) as usize;
            check_all_kernels(&grid, 0..count, &format!("round {round}"));
            check_all_kernels(&grid, from..to, &format!("round {round}, slots {from}..{to}"));
        }
        // A stencil of more than MAX_CANDIDATES particles takes the
        // per-particle walk, block by block.
        let crowd: Vec<Vec3> = (0..MAX_CANDIDATES + 300)
            .map(|i| Vec3::new((i % 7) as f32 * 0.01, (i % 3) as f32 * 0.01, 0.0))
            .collect();
        let mut grid = CountingSortGrid::default();
        grid.build(&crowd, 0.05).expect("valid points");
        check_all_kernels(&grid, 0..crowd.len(), "a crowd");
    }

    /// The bits and rows a block kernel's steps should give, written out
    /// lane by lane.
    fn check_steps<K: BlockKernel>(kernel: K, rounds: usize)
    where
        K::Mask: TryFrom<u32> + Into<u32>,
    {
        let mut rng = 0x1234_5678_u64;
        let column: Vec<f32> = (0..4 * 48).map(|_| next(&mut rng) * 3.0).collect();
        let (x, y, z, radii) = (&column[..48], &column[48..96], &column[96..144], &column[144..]);
        let c = Columns { x, y, z, r: radii };
        for round in 0..rounds {
            let n = 1 + round % K::WIDTH;
            // Blocks that end at the columns' end too.
            let from = if round % 7 == 0 { 48 - n } else { (next(&mut rng) * 30.0) as usize };
            let same = next(&mut rng) * 2.0;
            let (lane_values, values): (LaneValues, [f32; MAX_BLOCK]) = if round % 2 == 0 {
                (LaneValues::Same(same), [same; MAX_BLOCK])
            } else {
                let radius = |l: usize| if l < n { radii[from + l] } else { 0.0 };
                (LaneValues::Radii, std::array::from_fn(radius))
            };
            let lanes = kernel.lanes(&c, from, n, lane_values);
            let p = [next(&mut rng) * 3.0, next(&mut rng) * 3.0, next(&mut rng) * 3.0];
            let r = next(&mut rng);
            let expected = |spheres: bool| {
                (0..n).fold(0u32, |mask, l| {
                    let q = [x[from + l], y[from + l], z[from + l]];
                    let (dx, dy, dz) = (p[0] - q[0], p[1] - q[1], p[2] - q[2]);
                    let d2 = dx * dx + dy * dy + dz * dz;
                    let limit = if spheres { (values[l] + r) * (values[l] + r) } else { values[l] };
                    mask | u32::from(d2 <= limit) << l
                })
            };
            let got: u32 = kernel.test::<Within>(&lanes, p, r).into();
            assert_eq!(got, expected(false), "round {round}: points");
            let got: u32 = kernel.test::<crate::scan::Contact>(&lanes, p, r).into();
            assert_eq!(got, expected(true), "round {round}: spheres");

            let width_mask = (1u64 << K::WIDTH) - 1;
            let masks: [K::Mask; GROUP] = std::array::from_fn(|_| {
                // Sparse and dense masks both.
                let bits = (next(&mut rng) * 65536.0) as u64 & (next(&mut rng) * 65536.0) as u64;
                let bits = if round % 2 == 0 { bits } else { !bits };
                K::Mask::try_from((bits & width_mask) as u32).ok().expect("fits the width")
            });
            let slots: [u32; GROUP] = std::array::from_fn(|_| (next(&mut rng) * 1e6) as u32);
            let lane = (round % K::WIDTH) as u32;
            let want: Vec<u32> = (0..GROUP)
                .filter(|&i| (masks[i].into() >> lane) & 1 == 1)
                .map(|i| slots[i])
                .collect();
            let mut out = vec![7u32; 3 + GROUP + MAX_BLOCK];
            let end = kernel.emit_lane(&masks, lane, &slots, &mut out, 3);
            assert_eq!(out[3..end], want[..], "round {round}: lane {lane}");
        }
    }

    /// Each block kernel's steps give the bits and rows written out lane
    /// by lane.
    #[test]
    fn block_kernel_steps() {
        check_steps(Scalar, 500);
        #[cfg(simd)]
        if let Some(avx2) = crate::scan::Avx2::detect() {
            check_steps(avx2, 500);
        }
        #[cfg(simd)]
        if let Some(avx512) = crate::scan::Avx512Blocks::detect() {
            check_steps(avx512, 500);
        }
    }
}
