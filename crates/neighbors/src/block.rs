//! Neighbor rows of a dense grid, eight particles at a time.
//!
//! The per-particle walk (`search.rs`) tests one particle against its
//! stencil eight candidates a step and writes each step's hits at once, so
//! every store waits on the previous step's hit count for its address. On
//! AVX2 those stores, not the distance tests, took half the time of a
//! dense search (sph1m: 162 ms for the rows, 82 ms with the writes
//! removed). Here the roles turn:
//!
//! 1. Eight consecutive particles of one row of cells (a *block*) sit in
//!    the lanes. Every candidate of the block's stencil (the union of its
//!    particles' stencils: one row of cells a cell or two longer) is
//!    broadcast against them, and its hit mask (bit `l`: lane `l`'s
//!    particle) goes to a fixed place in a small buffer. Nothing in this
//!    loop waits on a write position.
//! 2. Each particle's row is then read out of the masks: one shift and one
//!    byte `movemask` give its bits for 32 candidates, and each group of
//!    eight is compacted into the row with one table lookup and one
//!    permute. (Skipping the groups without a hit measured slower: the
//!    bookkeeping cost more than the stores it saved.)
//!
//! On sph1m (AVX2, one thread) the rows took 108 ms this way against 169
//! ms for the per-particle walk, the same entries in the same order.
//! The portable twin of this walk is slower than the portable
//! per-particle walk (a scalar `lane_bits` costs 32 steps), so only the
//! AVX2 kernel runs it; the twin is what the AVX2 kernel is tested against.
//!
//! The candidates are tested in slot order, so rows come out in increasing
//! slot order, exactly as the per-particle walk writes them; the test is
//! the same expression in the same order, so the rows are the same bit
//! for bit.

use super::csr::NeighborLists;
use super::scan::{COMPRESS, Columns, HITS, Kernel, LANES, Portable, Test};
use super::search::{Cells, Stencil, rows_walk};
use super::sorted::Shape;
use super::stencil::spanning;
use std::ops::Range;

/// Particles per block: the lanes of one test.
pub(crate) const BLOCK: usize = LANES;

/// Most candidates one block tests from its buffers; a block whose stencil
/// holds more (a very crowded cell) takes the per-particle walk.
pub(crate) const MAX_CANDIDATES: usize = 2048;

/// Candidates per group read out of the masks at once.
const GROUP: usize = 32;

/// A block's particles prepared for the tests, and the tests' outputs.
///
/// A kernel as a type, like [`Kernel`]: the block walk is compiled once per
/// implementation, with its CPU feature enabled.
pub(crate) trait BlockKernel: Copy {
    /// The block's particles broadcast into lanes.
    type Lanes: Copy;

    /// Slots `from..from + n` (`n <= BLOCK`) in lanes, with their test
    /// values (`r²` for points, each particle's radius for spheres); the
    /// lanes past `n` never hit.
    fn lanes(self, c: &Columns<'_>, from: usize, n: usize, values: [f32; BLOCK]) -> Self::Lanes;

    /// The lanes within reach of the candidate at `p` (radius `r`, read for
    /// spheres only), as bits.
    fn test<T: Test>(self, lanes: &Self::Lanes, p: [f32; 3], r: f32) -> u32;

    /// Bit `i`: bit `lane` of `masks[i]`.
    fn lane_bits(self, masks: &[u8; GROUP], lane: u32) -> u32;

    /// Writes `slots[l]` for each set bit `l` of `mask` (an 8-bit mask),
    /// lowest first, into `out[pos..]`; returns the new end. Stores
    /// `BLOCK` entries: `out` must have room for `pos + BLOCK`.
    fn emit_slots(self, mask: u32, slots: &[u32; BLOCK], out: &mut [u32], pos: usize) -> usize;
}

/// The per-block buffers (on the stack: about 10 KB).
struct Buffers {
    /// Hit masks by candidate, padded with zeros to a whole group.
    masks: [u8; MAX_CANDIDATES + GROUP],
    /// The slot of each candidate.
    slots: [u32; MAX_CANDIDATES + GROUP],
}

impl Buffers {
    fn new() -> Self {
        Self { masks: [0; MAX_CANDIDATES + GROUP], slots: [0; MAX_CANDIDATES + GROUP] }
    }
}

/// Fills `offsets` (pushed, after its first entry) and `indices` (from
/// the last offset) with the sorted-order rows of `slots`, block by
/// block. `c` must number its slots along rows of cells (see
/// [`Cells::ROWS`]).
#[inline(always)]
pub(crate) fn rows_by_blocks<C: Cells, K: Kernel + BlockKernel, T: Test>(
    kernel: K,
    c: &C,
    slots: Range<usize>,
    test_for: impl Fn(usize) -> T + Copy,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
) {
    let sorted = c.sorted();
    let cols = Columns::new(sorted);
    let k = c.k();
    let values = |s: usize| match sorted.shape {
        Shape::Points { radius } => radius * radius,
        Shape::Spheres { .. } => sorted.r[s],
    };
    let mut buffers = Buffers::new();
    let mut stencil = Stencil::default();
    let mut finger = C::Finger::default();
    let mut pos = *offsets.last().unwrap_or(&0);
    let mut s = slots.start;
    while s < slots.end {
        // A block never leaves its row of cells, so its stencil is one box.
        let row_end = c.row_end(s).clamp(s + 1, slots.end);
        while s < row_end {
            let e = (s + BLOCK).min(row_end);
            let first = c.cell_of(sorted.position(s).map(f64::from));
            let last = c.cell_of(sorted.position(e - 1).map(f64::from));
            c.ranges(spanning(first, last, k), &mut finger, &mut stencil);
            if stencil.total() > MAX_CANDIDATES {
                pos = rows_walk(kernel, c, s..e, test_for, offsets, indices, pos);
            } else {
                let values = std::array::from_fn(|l| if s + l < e { values(s + l) } else { 0.0 });
                let lanes = kernel.lanes(&cols, s, e - s, values);
                pos = block_rows::<K, T>(
                    kernel,
                    &cols,
                    &stencil,
                    Block { len: e - s, own: Some(s) },
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
    let value = if T::SPHERES { radius } else { radius * radius };
    let mut buffers = Buffers::new();
    let mut stencil = Stencil::default();
    let mut finger = C::Finger::default();
    let mut pos = *offsets.last().unwrap_or(&0);
    let mut s = 0;
    while s < cells.len() {
        // A block never leaves its row of cells, so its stencil is one box.
        let [_, y, z] = cells[s];
        let mut e = s + 1;
        while e < cells.len() && e - s < BLOCK && cells[e][1] == y && cells[e][2] == z {
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
                let lanes = kernel.lanes(queries, q, 1, [value; BLOCK]);
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
            let lanes = kernel.lanes(queries, s, e - s, [value; BLOCK]);
            pos = block_rows::<K, T>(
                kernel,
                &data,
                &stencil,
                block,
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
    lanes: &K::Lanes,
    buffers: &mut Buffers,
    offsets: &mut Vec<usize>,
    indices: &mut Vec<u32>,
    mut pos: usize,
) -> usize {
    let mut count = 0;
    let mut own = None;
    for &[lo, hi] in stencil.ranges() {
        let (lo, hi) = (lo as usize, hi as usize);
        if let Some(first) = block.own.filter(|first| (lo..hi).contains(first)) {
            own = Some(count + first - lo);
        }
        let masks = &mut buffers.masks[count..count + hi - lo];
        let (xs, ys, zs) = (&cols.x[lo..hi], &cols.y[lo..hi], &cols.z[lo..hi]);
        if T::SPHERES {
            let rs = &cols.r[lo..hi];
            for (i, mask) in masks.iter_mut().enumerate() {
                *mask = kernel.test::<T>(lanes, [xs[i], ys[i], zs[i]], rs[i]) as u8;
            }
        } else {
            for (i, mask) in masks.iter_mut().enumerate() {
                *mask = kernel.test::<T>(lanes, [xs[i], ys[i], zs[i]], 0.0) as u8;
            }
        }
        for (slot, at) in buffers.slots[count..count + hi - lo].iter_mut().zip(lo..) {
            // Slots fit u32 (MAX_POINTS).
            *slot = at as u32;
        }
        count += hi - lo;
    }
    // The block's particles lie in its own row's range, and are not their
    // own neighbors.
    if let Some(own) = own {
        for (lane, mask) in buffers.masks[own..own + block.len].iter_mut().enumerate() {
            *mask &= !(1 << lane);
        }
    }
    let groups = count.div_ceil(GROUP) * GROUP;
    buffers.masks[count..groups].fill(0);
    NeighborLists::reserve_entries(indices, pos + block.len * count);
    for lane in 0..block.len as u32 {
        for (group, masks) in buffers.masks[..groups].chunks_exact(GROUP).enumerate() {
            let bits = kernel.lane_bits(masks.try_into().expect("a whole group"), lane);
            for part in 0..GROUP / BLOCK {
                let mask = (bits >> (part * BLOCK)) & 0xff;
                let first = group * GROUP + part * BLOCK;
                let slots = buffers.slots[first..first + BLOCK].try_into().expect("padded slots");
                pos = kernel.emit_slots(mask, slots, indices, pos);
            }
        }
        offsets.push(pos);
    }
    pos
}

/// Lanes of the portable block kernel.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PortableLanes {
    p: [[f32; BLOCK]; 3],
    values: [f32; BLOCK],
}

impl BlockKernel for Portable {
    type Lanes = PortableLanes;

    #[inline(always)]
    fn lanes(self, c: &Columns<'_>, from: usize, n: usize, values: [f32; BLOCK]) -> PortableLanes {
        // NaN lanes fail every comparison.
        let lane = |column: &[f32], l: usize| if l < n { column[from + l] } else { f32::NAN };
        PortableLanes {
            p: [c.x, c.y, c.z].map(|column| std::array::from_fn(|l| lane(column, l))),
            values,
        }
    }

    #[inline(always)]
    fn test<T: Test>(self, lanes: &PortableLanes, p: [f32; 3], r: f32) -> u32 {
        let mut mask = 0;
        for l in 0..BLOCK {
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
            mask |= u32::from(d2 <= limit) << l;
        }
        mask
    }

    #[inline(always)]
    fn lane_bits(self, masks: &[u8; GROUP], lane: u32) -> u32 {
        let mut bits = 0;
        for (i, &mask) in masks.iter().enumerate() {
            bits |= u32::from((mask >> lane) & 1) << i;
        }
        bits
    }

    #[inline(always)]
    fn emit_slots(self, mask: u32, slots: &[u32; BLOCK], out: &mut [u32], pos: usize) -> usize {
        let out: &mut [u32; BLOCK] = (&mut out[pos..pos + BLOCK]).try_into().expect("room");
        let lanes = &COMPRESS[mask as usize & 0xff];
        for l in 0..BLOCK {
            out[l] = slots[usize::from(lanes[l])];
        }
        pos + usize::from(HITS[mask as usize & 0xff])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
                let end = rows_walk(Portable, grid, slots.clone(), test, o, i, 0);
                i.truncate(end);
                rows_by_blocks(kernel, grid, slots, test, bo, bi);
            }
            Shape::Spheres { .. } => {
                let test = |s: usize| crate::scan::Contact { rp: r[s] };
                let [(o, i), (bo, bi)] = &mut out;
                let end = rows_walk(Portable, grid, slots.clone(), test, o, i, 0);
                i.truncate(end);
                rows_by_blocks(kernel, grid, slots, test, bo, bi);
            }
        }
        let end = *out[1].0.last().expect("one offset at least");
        out[1].1.truncate(end);
        out
    }

    /// Every block kernel this CPU runs.
    fn check_all_kernels(grid: &CountingSortGrid, slots: Range<usize>, what: &str) {
        let [want, got] = both(Portable, grid, slots.clone());
        assert!(want == got, "portable blocks differ on {what}");
        #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
        if let Some(avx2) = crate::scan::Avx2::detect() {
            let [want, got] = both(avx2, grid, slots);
            assert!(want == got, "AVX2 blocks differ on {what}");
        }
    }

    /// The block walk writes the per-particle walk's rows, entry for entry
    /// and in the same order, over whole sets and slot ranges, for points
    /// and spheres, dense and crowded past the candidate buffer.
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

    /// The AVX2 block kernel's steps give the portable twin's bits.
    #[test]
    #[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
    fn block_kernels_agree() {
        let Some(avx2) = crate::scan::Avx2::detect() else { return };
        let mut rng = 0x1234_5678_u64;
        let column: Vec<f32> = (0..64).map(|_| next(&mut rng) * 3.0).collect();
        let c = Columns { x: &column[..32], y: &column[16..48], z: &column[32..], r: &[] };
        for round in 0..500 {
            let n = 1 + round % BLOCK;
            let from = (next(&mut rng) * 20.0) as usize;
            let values: [f32; BLOCK] = std::array::from_fn(|_| next(&mut rng) * 2.0);
            let (want_lanes, got_lanes) =
                (Portable.lanes(&c, from, n, values), avx2.lanes(&c, from, n, values));
            let p = [next(&mut rng) * 3.0, next(&mut rng) * 3.0, next(&mut rng) * 3.0];
            let r = next(&mut rng);
            let want = Portable.test::<Within>(&want_lanes, p, r);
            assert_eq!(avx2.test::<Within>(&got_lanes, p, r), want, "round {round}");
            assert_eq!(want >> n, 0, "empty lanes hit");
            let want = Portable.test::<crate::scan::Contact>(&want_lanes, p, r);
            assert_eq!(avx2.test::<crate::scan::Contact>(&got_lanes, p, r), want);

            let masks: [u8; GROUP] = std::array::from_fn(|_| (next(&mut rng) * 256.0) as u8);
            let lane = round as u32 % 8;
            assert_eq!(avx2.lane_bits(&masks, lane), Portable.lane_bits(&masks, lane));

            let slots: [u32; BLOCK] = std::array::from_fn(|_| (next(&mut rng) * 1e6) as u32);
            let mask = (next(&mut rng) * 256.0) as u32;
            let (mut want, mut got) = (vec![7u32; 20], vec![7u32; 20]);
            let end = Portable.emit_slots(mask, &slots, &mut want, 3);
            assert_eq!(avx2.emit_slots(mask, &slots, &mut got, 3), end);
            assert_eq!(got[..end], want[..end]);
        }
    }
}
