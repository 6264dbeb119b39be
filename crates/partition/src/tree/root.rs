//! The root split: a grid of up to 16 cells per axis (two 4×4×4 levels at
//! once), counted and scattered in parallel chunks of the input.
//!
//! Below the root a node job splits 4×4×4 at most, reading boxes that are
//! already in cache. The root is different: it reads the whole input from
//! memory, so each level it takes costs a full pass. At a million boxes
//! and a threshold of 10,000, a 4×4×4 root leaves 64 cells of ~15,600
//! boxes that must each split again — a second pass over every box that
//! took about a fifth of a one-thread frame. A root cut as finely as the
//! count needs (up to 16 per axis, the two levels at once) makes regions
//! of at most about `split_threshold` boxes in one pass for uniform data;
//! cells that are still too big (clusters) split further in node jobs.

use broadphase_storage::Aabb;

use super::buffers::{ChunkSplit, PartRef};
use super::plan::{Extent, Region, divisions};

/// Most cells per axis of the root grid.
const MAX_PER_AXIS: usize = 16;

/// The root's cells: `dims[a]` per axis, cell `x + dx * (y + dy * z)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RootGrid {
    pub(crate) dims: [usize; 3],
    /// `planes[a][k]` is the lower bound of cell `k` on axis `a`: `-inf`
    /// for cell 0 and `+inf` from `dims[a]` on, so the cell of a
    /// coordinate is the last `k` whose bound is at or below it.
    planes: [[f32; MAX_PER_AXIS + 1]; 3],
    /// A first guess of a coordinate's cell is `(x - origin) * inv_step`;
    /// the bounds then correct it, so the guess never decides.
    origin: [f32; 3],
    inv_step: [f32; 3],
    /// `dims - 1` per axis, as a float.
    last: [f32; 3],
    /// Bit position of each axis in a cell index (`dims` are powers of two).
    shifts: [u32; 3],
}

impl RootGrid {
    /// Cells over `extent`, about one per `threshold / 1.5` boxes (at
    /// least 2, at most `max_per_axis` per axis, itself at most 16).
    pub(crate) fn over_extent(
        extent: &Extent,
        count: usize,
        threshold: usize,
        max_per_axis: usize,
    ) -> RootGrid {
        // Aim 1.5 times finer than the count asks: cells that come out
        // just over the threshold (boxes overlapping cell faces, uneven
        // density) would each need another split pass of their own.
        let aimed = count.saturating_add(count / 2);
        let dims = divisions(extent, aimed, threshold, max_per_axis.min(MAX_PER_AXIS));
        let size: [f64; 3] =
            core::array::from_fn(|a| f64::from(extent.hi[a]) - f64::from(extent.lo[a]));
        let split = |a: usize| dims[a] > 1;
        let mut grid = RootGrid {
            dims,
            planes: [[f32::INFINITY; MAX_PER_AXIS + 1]; 3],
            // Half a cell up: rounding to nearest then cuts at whole cells.
            origin: core::array::from_fn(|a| {
                let half_cell = 0.5 * size[a] / dims[a] as f64;
                if split(a) { (f64::from(extent.lo[a]) + half_cell) as f32 } else { 0.0 }
            }),
            inv_step: core::array::from_fn(|a| {
                if split(a) { (dims[a] as f64 / size[a]) as f32 } else { 0.0 }
            }),
            last: dims.map(|d| (d - 1) as f32),
            shifts: [0, dims[0].trailing_zeros(), (dims[0] * dims[1]).trailing_zeros()],
        };
        for (axis, &cells) in dims.iter().enumerate() {
            grid.planes[axis][0] = f32::NEG_INFINITY;
            for k in 1..cells {
                grid.planes[axis][k] = grid.lowest_in_cell(axis, k);
            }
        }
        grid
    }

    /// The smallest `f32` whose cell on `axis` is at least `k` (bisection
    /// over the floats in order: `cell_of` is monotonic).
    fn lowest_in_cell(&self, axis: usize, k: usize) -> f32 {
        // Finite floats as ordered integers: flip negatives, offset positives.
        let key = |x: f32| {
            let bits = x.to_bits();
            if bits >> 31 == 1 { !bits } else { bits | 1 << 31 }
        };
        let float = |key: u32| f32::from_bits(if key >> 31 == 1 { key & !(1 << 31) } else { !key });
        // cell(lo) < k <= cell(hi) throughout.
        let (mut lo, mut hi) = (key(f32::MIN), key(f32::MAX));
        if self.cell_of(axis, f32::MIN) >= k {
            return f32::MIN;
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.cell_of(axis, float(mid)) >= k {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        float(hi)
    }

    pub(crate) fn cells(&self) -> usize {
        self.dims.iter().product()
    }

    /// Which axes have more than one cell.
    pub(crate) fn split_axes(&self) -> [bool; 3] {
        self.dims.map(|d| d > 1)
    }

    /// The same grid with the axes marked `true` cut into one cell.
    pub(crate) fn without(&self, drop: [bool; 3]) -> RootGrid {
        let mut grid = *self;
        for axis in (0..3).filter(|&a| drop[a]) {
            grid.dims[axis] = 1;
            grid.origin[axis] = 0.0;
            grid.inv_step[axis] = 0.0;
            grid.last[axis] = 0.0;
            grid.planes[axis][1..].fill(f32::INFINITY);
        }
        grid.shifts =
            [0, grid.dims[0].trailing_zeros(), (grid.dims[0] * grid.dims[1]).trailing_zeros()];
        grid
    }

    /// The cell of a coordinate on one axis, by arithmetic alone: the
    /// position in cells (offset by half a cell, see `over_extent`),
    /// clamped, rounded to the nearest integer by adding 1.5 × 2²³ (whose
    /// float spacing is 1) and read from the low mantissa bits.
    ///
    /// Every step is monotonic in `x` (float subtraction, multiplication
    /// by a positive step, clamping, rounding, and the bit patterns of
    /// positive floats), so the cells are ordered intervals;
    /// `over_extent` finds their exact bounds, which the regions use.
    /// No NaN reaches here: coordinates are validated finite, the step is
    /// finite and positive, and an unsplit axis has origin 0 and step 0.
    #[inline(always)]
    fn cell_of(&self, axis: usize, x: f32) -> usize {
        const ROUND: f32 = 12_582_912.0; // 1.5 × 2^23
        let position = (x - self.origin[axis]) * self.inv_step[axis];
        let position = if position > 0.0 { position } else { 0.0 };
        let position = if position < self.last[axis] { position } else { self.last[axis] };
        ((position + ROUND).to_bits() & 0xFF) as usize
    }

    /// The cell range of a box, 4 bits per end, 8 per axis.
    #[inline(always)]
    fn range(&self, b: &Aabb, spans: &mut [u64; 3]) -> u32 {
        let mut packed = 0u32;
        for (axis, span) in spans.iter_mut().enumerate() {
            let first = self.cell_of(axis, b.min[axis]);
            let last = self.cell_of(axis, b.max[axis]);
            *span += (last - first + 1) as u64;
            packed |= ((first | last << 4) as u32) << (8 * axis);
        }
        packed
    }

    /// Calls `visit(cell)` for every cell of a packed range.
    #[inline(always)]
    fn for_each_cell(&self, packed: u32, mut visit: impl FnMut(usize)) {
        const FIRSTS: u32 = 0x0F_0F0F;
        if packed & FIRSTS == (packed >> 4) & FIRSTS {
            // One cell, as most boxes are: x | y << sx | z << (sx + sy).
            let [x, y, z] = [packed & 15, (packed >> 8) & 15, (packed >> 16) & 15];
            visit((x | y << self.shifts[1] | z << self.shifts[2]) as usize);
            return;
        }
        let [dx, dy, _] = self.dims;
        let end = |axis: usize, shift: usize| (packed >> (8 * axis + shift)) as usize & 15;
        let (x0, x1, y0, y1, z0, z1) =
            (end(0, 0), end(0, 4), end(1, 0), end(1, 4), end(2, 0), end(2, 4));
        for z in z0..=z1 {
            for y in y0..=y1 {
                for x in x0..=x1 {
                    visit(x + dx * (y + dy * z));
                }
            }
        }
    }

    /// The region of `cell` inside `base` (the root's region, or the
    /// window being zoomed into).
    pub(crate) fn region(&self, base: &Region, cell: usize) -> Region {
        let [dx, dy, _] = self.dims;
        let k = [cell % dx, (cell / dx) % dy, cell / (dx * dy)];
        let mut region = *base;
        for (axis, &k) in k.iter().enumerate() {
            if k > 0 {
                region.lo[axis] = base.lo[axis].max(self.planes[axis][k]);
            }
            if k + 1 < self.dims[axis] {
                region.hi[axis] = base.hi[axis].min(self.planes[axis][k + 1]);
            }
        }
        region
    }
}

/// Validates one part of a node, counts it per cell of `grid` and scatters
/// it into `chunk` (speculatively: if the totals reject the grid, the parts
/// are counted again). `ranges` and `cursor` are the thread's scratch.
pub(crate) fn scatter_into(
    part: PartRef<'_>,
    grid: &RootGrid,
    chunk: &mut ChunkSplit,
    ranges: &mut Vec<u32>,
    cursor: &mut Vec<u32>,
) {
    crate::profile::zone!("partition: root scatter");
    // The loops work on local slices and counters: through the `Vec`s
    // themselves (behind references into the chunk and the thread's
    // scratch), every store of a box would make the compiler reload their
    // pointers and lengths, which measured 10% of a million-box frame.
    let ChunkSplit { storage, offsets, spans: chunk_spans, valid: chunk_valid } = chunk;
    offsets.clear();
    offsets.resize(grid.cells() + 1, 0);
    let counts = &mut offsets[..];
    let mut spans = [0u64; 3];
    let mut valid = true;
    ranges.clear();
    ranges.resize(part.boxes.len(), 0);
    let packed = &mut ranges[..];
    for (b, range_out) in part.boxes.iter().zip(packed.iter_mut()) {
        // Past a bad box the chunk is only walked to the end: its ranges
        // would be meaningless (and `min > max` would underflow).
        valid &= b.is_valid();
        if valid {
            let range = grid.range(b, &mut spans);
            grid.for_each_cell(range, |cell| counts[cell + 1] += 1);
            *range_out = range;
        }
    }
    *chunk_spans = spans;
    *chunk_valid = valid;
    if !valid {
        return;
    }
    for cell in 0..grid.cells() {
        counts[cell + 1] += counts[cell];
    }
    let copies = counts[grid.cells()] as usize;
    storage.boxes.resize(copies, Aabb::default());
    storage.ids.resize(copies, 0);
    cursor.clear();
    cursor.extend_from_slice(counts);
    let cursor = &mut cursor[..];
    let (boxes, ids) = (&mut storage.boxes[..], &mut storage.ids[..]);
    for (i, (b, &range)) in part.boxes.iter().zip(packed.iter()).enumerate() {
        let id = part.id(i);
        grid.for_each_cell(range, |cell| {
            let slot = cursor[cell] as usize;
            boxes[slot] = *b;
            ids[slot] = id;
            cursor[cell] += 1;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Vec3;

    #[test]
    fn cells_tile_space_and_ranges_agree_with_regions() {
        let mut extent = Extent::EMPTY;
        extent.add(&Aabb::new(Vec3::ZERO, Vec3::new(100.0, 50.0, 10.0)));
        let grid = RootGrid::over_extent(&extent, 1_000_000, 10_000, 16);
        assert_eq!(grid.cells(), 256);
        let mut spans = [0; 3];
        for p in [[0.0, 0.0, 0.0], [-1e30, 25.0, 9.99], [12.5, 12.5, 5.0], [99.0, 1e30, 3.0]] {
            let owners: Vec<usize> = (0..grid.cells())
                .filter(|&c| grid.region(&Region::EVERYWHERE, c).contains(p))
                .collect();
            assert_eq!(owners.len(), 1, "{p:?}");
            let point = Aabb::new(Vec3::from(p), Vec3::from(p));
            let mut cells = Vec::new();
            grid.for_each_cell(grid.range(&point, &mut spans), |c| cells.push(c));
            assert_eq!(cells, owners, "{p:?}");
        }
    }
}
