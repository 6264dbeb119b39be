//! [`CountingSortGrid`]: a dense grid over the data's bounds, filled by a
//! stable counting sort.

use super::api::{Index, impl_neighbor_search};
use super::scan::ScanKernel;
use super::search::{CellBox, Cells, Stencil};
use super::sorted::{Shape, Sorted, cell_size, counting_sort, rows_are_long, stencil_k, widest};
use glam::Vec3;

mod parallel_build;
pub use parallel_build::BuildError;

/// How many times narrower than the others a dense grid's cells are along
/// x (see [`CountingSortGrid`]'s build).
const X_SPLIT: u32 = 2;

/// Tuning of [`CountingSortGrid`]. Every field is safe to change.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{CountingSortGrid, CountingSortGridConfig};
/// let grid = CountingSortGrid::with_config(CountingSortGridConfig {
///     cells_per_radius: 2,
///     ..CountingSortGridConfig::default()
/// });
/// assert_eq!(grid.config().cells_per_radius, 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CountingSortGridConfig {
    /// Cells per search radius, 1 to 3. With 1 (the default) a cell is a
    /// little larger than the radius and a particle's search visits the
    /// 3×3×3 cells around it (9 rows of 3); with 2, cells of half the size
    /// and 5×5×5 cells (25 rows of 5). On dense data (rows of cells holding
    /// 16 particles or more) the cells are twice as narrow along x, and
    /// the rows twice as many cells long.
    pub cells_per_radius: u32,
    /// The grid never has more than this many cells per particle (and at
    /// least 4096): when the data's bounds would need more cells of the
    /// preferred size, the cells grow. This bounds the memory of a sparse
    /// or spread-out set; such sets are better served by
    /// [`SpatialHash`](crate::SpatialHash) or [`SpatialIndex`](crate::SpatialIndex).
    pub max_cells_per_point: u32,
    /// Which scan kernel runs (every kernel gives the same results).
    pub kernel: ScanKernel,
}

impl Default for CountingSortGridConfig {
    fn default() -> Self {
        Self { cells_per_radius: 1, max_cells_per_point: 8, kernel: ScanKernel::Auto }
    }
}

/// Fixed-radius neighbor search with a dense grid and a counting sort (the
/// layout of GPU fluid solvers, run on one CPU thread).
///
/// Build, in three stages: **insert** gives each particle its cell index
/// (cells of about the search radius over the data's bounds) and its slot
/// among the particles of that cell; **counting sort** turns the per-cell
/// counts into offsets with a prefix sum, so particle `i` goes to
/// `offset[cell] + slot` (stable: equal cells keep the input order); the
/// particles are then gathered into SoA columns in that order. **Search**
/// visits the `(2r/cell + 1)³` cells around a particle; cells are numbered
/// x fastest, so each row of 3 cells along x is one contiguous range of
/// slots, 9 ranges in all, scanned 8 particles a step with squared
/// distances.
///
/// With AVX2 the neighbor lists are found eight particles at a time
/// against their joint stencil, sixteen with AVX-512. On dense data (a row of cells expected to
/// hold 16 particles or more) the cells are then half as wide along x,
/// rows of 5 instead of 3 (still 9 ranges), which trims that stencil's x
/// extent (sph1m on AVX2: 5% faster than with cubic cells).
///
/// Best when the particles fill a compact box: the grid costs one offset
/// per cell of the bounds, empty or not (capped by
/// [`CountingSortGridConfig::max_cells_per_point`]). See `docs/NEIGHBORS.md`
/// for when to pick which structure.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch};
/// use glam::Vec3;
///
/// // A 10×10×10 lattice of spacing 1: with radius 1, interior points have 6 neighbors.
/// let points: Vec<Vec3> = (0..1000)
///     .map(|i| Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32))
///     .collect();
/// let mut grid = CountingSortGrid::default();
/// grid.build(&points, 1.0)?;
/// let mut lists = NeighborLists::default();
/// grid.neighbor_lists(&mut lists);
/// assert_eq!(lists.neighbors(555).len(), 6);
/// assert_eq!(lists.total(), 2 * 3 * 9 * 100); // 2,700 lattice edges, each in two rows
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct CountingSortGrid {
    config: CountingSortGridConfig,
    sorted: Sorted,
    /// `offsets[c]..offsets[c + 1]` are the slots of cell `c`; `cells + 1` entries.
    offsets: Vec<u32>,
    /// Cells per axis.
    dims: [i32; 3],
    /// The min corner of the bounds (cell (0, 0, 0) starts there).
    origin: [f64; 3],
    /// Cells per unit length, per axis (x's cells are narrower on dense data).
    inv_cell: [f64; 3],
    /// The stencil half-width per axis, in cells.
    k: [i32; 3],
    /// Per particle (caller order): its cell index, then its sorted slot.
    keys: Vec<u32>,
    dst: Vec<u32>,
    /// Scratch of [`build_parallel`](Self::build_parallel).
    parts: parallel_build::PartScratch,
}

impl CountingSortGrid {
    /// An empty grid with `config`.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, CountingSortGridConfig, NeighborSearch};
    /// let grid = CountingSortGrid::with_config(CountingSortGridConfig::default());
    /// assert!(grid.is_empty());
    /// ```
    pub fn with_config(config: CountingSortGridConfig) -> Self {
        Self { config, ..Self::default() }
    }

    /// The configuration.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::CountingSortGrid;
    /// assert_eq!(CountingSortGrid::default().config().cells_per_radius, 1);
    /// ```
    pub fn config(&self) -> &CountingSortGridConfig {
        &self.config
    }

    /// Cells per axis of the last build (`[0, 0, 0]` when empty).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborSearch};
    /// use glam::Vec3;
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&[Vec3::ZERO, Vec3::new(10.0, 0.0, 0.0)], 1.0)?;
    /// assert_eq!(grid.dims(), [10, 1, 1]); // cells a hair larger than 1
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    pub fn dims(&self) -> [u32; 3] {
        self.dims.map(|d| d as u32)
    }

    #[inline(always)]
    fn linear(&self, x: i32, y: i32, z: i32) -> usize {
        // dims are positive and their product fits u32.
        x as usize + self.dims[0] as usize * (y as usize + self.dims[1] as usize * z as usize)
    }
}

impl Index for CountingSortGrid {
    fn reset(&mut self) {
        self.sorted.clear();
        self.offsets.clear();
        self.dims = [0; 3];
    }

    fn index(
        &mut self,
        points: &[Vec3],
        radii: Option<&[f32]>,
        bounds: Option<(Vec3, Vec3)>,
        shape: Shape,
    ) {
        let Some((lo, hi)) = bounds else {
            self.sorted.shape = shape;
            return;
        };
        let n = points.len();
        let cell = self.plan(n, lo, hi, shape);
        let k = stencil_k(self.config.cells_per_radius);

        // Insert: the cell of every particle.
        // `keys_of` writes every key: no need to clear the last build's.
        let mut keys = std::mem::take(&mut self.keys);
        keys.truncate(n);
        broadphase_storage::reserve_huge(&mut keys, n);
        keys.resize(n, 0);
        self.keys_of(points, &mut keys);
        let cells = self.cell_count();
        // Counting sort: slots, prefix sum, sorted index per particle.
        counting_sort(&keys, cells, &mut self.offsets, &mut self.dst);
        self.keys = keys;
        self.sorted.scatter(points, radii, &self.dst, shape);
        self.sorted.estimate_rows(lo, hi, cell, k as i32);
    }
}

impl CountingSortGrid {
    /// Sizes the grid for `n` particles in the bounds `lo..=hi`: sets the
    /// cells per axis, their sizes, the origin and the stencil; returns the
    /// size of a cubic cell (x's may be narrower).
    pub(crate) fn plan(&mut self, n: usize, lo: Vec3, hi: Vec3, shape: Shape) -> f64 {
        let extent = [0, 1, 2].map(|a| f64::from(hi[a]) - f64::from(lo[a]));
        let max_cells = (n as f64 * f64::from(self.config.max_cells_per_point.max(1)))
            .clamp(4096.0, f64::from(u32::MAX - 1));
        let reach = shape.reach();
        let k = stencil_k(self.config.cells_per_radius);
        let mut cell = cell_size(reach, k, widest(lo, hi), n);
        // Grow the cells until the grid fits the budget.
        let mut dims = [0f64; 3];
        for _ in 0..200 {
            dims = extent.map(|e| (e / cell).floor() + 1.0);
            let count = dims[0] * dims[1] * dims[2];
            if count <= max_cells {
                break;
            }
            cell *= (count / max_cells).cbrt().max(1.01);
        }
        // Dense data: rows of cells long enough for the block walk get cells
        // X_SPLIT times narrower along x (still one range per row), which
        // trims the stencil's x extent around a block of particles.
        let per_cell = n as f64 / (dims[0] * dims[1] * dims[2]);
        let split = if rows_are_long(per_cell, k as i32)
            && dims[0] * f64::from(X_SPLIT) * dims[1] * dims[2] <= max_cells
        {
            X_SPLIT
        } else {
            1
        };
        let cells = [cell / f64::from(split), cell, cell];
        dims[0] = (extent[0] / cells[0]).floor() + 1.0;
        // A cell larger than needed lets a smaller stencil suffice.
        let needed = cell_size(reach, 1, 0.0, n);
        let most = [k * split, k, k];
        self.k = [0, 1, 2].map(|a| ((needed / cells[a]).ceil() as i32).clamp(1, most[a] as i32));
        self.dims = dims.map(|d| d as i32);
        self.origin = [0, 1, 2].map(|a| f64::from(lo[a]));
        self.inv_cell = cells.map(|c| 1.0 / c);

        cell
    }

    /// The cell index of every point, as the build and
    /// [`cell_of`](Cells::cell_of) compute it.
    #[inline]
    pub(crate) fn keys_of(&self, points: &[Vec3], keys: &mut [u32]) {
        #[cfg(simd)]
        if let Some(avx2) = crate::scan::Avx2::detect() {
            // SAFETY: the token proves the CPU check passed.
            return unsafe { self.keys_of_avx2(avx2, points, keys) };
        }
        self.keys_of_scalar(points, keys);
    }

    /// [`keys_of`](Self::keys_of) compiled with AVX2 (the token proves
    /// it), where the loop
    /// vectorizes with packed `f64` to `i32` conversions and 32-bit
    /// multiplies (SSE2 has no packed 32-bit multiply): the same code; with
    /// the unchecked conversion below, the whole build of particles5k takes
    /// 20.5 µs against 30.5, sph1m's 8.4 ms against 10.4.
    #[cfg(simd)]
    #[target_feature(enable = "avx2")]
    fn keys_of_avx2(&self, _: crate::scan::Avx2, points: &[Vec3], keys: &mut [u32]) {
        self.keys_of_scalar(points, keys);
    }

    #[inline(always)]
    fn keys_of_scalar(&self, points: &[Vec3], keys: &mut [u32]) {
        // The same map as `cell_of`, with everything hoisted: clamping in
        // floating point first makes truncation a floor.
        let (origin, inv) = (self.origin, self.inv_cell);
        let last = self.dims.map(|d| f64::from(d - 1));
        let (dx, dy) = (self.dims[0] as u32, self.dims[1] as u32);
        // Clamped to `0..dims`, which fit i32 (as in `cell_of`), by plain
        // comparisons: `f64::max`/`min` and a saturating `as i32` keep the
        // loop scalar (particles5k's build 28 µs against 20.5 this way).
        let axis = |v: f32, a: usize| {
            let cell = (f64::from(v) - origin[a]) * inv[a];
            let cell = if cell > 0.0 { cell } else { 0.0 };
            let cell = if cell < last[a] { cell } else { last[a] };
            // SAFETY: `cell` is in `0.0..=last` whatever the input: a NaN
            // fails `cell > 0.0` and becomes 0, infinities clamp to either
            // end; and `last` (dims - 1) fits i32.
            unsafe { cell.to_int_unchecked::<i32>() as u32 }
        };
        // The linear index fits u32: at most max_cells < u32::MAX cells.
        for (key, p) in keys.iter_mut().zip(points) {
            *key = axis(p.x, 0) + dx * (axis(p.y, 1) + dy * axis(p.z, 2));
        }
    }

    /// Cells in the grid.
    pub(crate) fn cell_count(&self) -> usize {
        self.dims.iter().map(|&d| d as usize).product()
    }
}

impl Cells for CountingSortGrid {
    type Finger = ();

    fn sorted(&self) -> &Sorted {
        &self.sorted
    }

    const ROWS: bool = true;

    fn cell_index(&self, cell: [i32; 3]) -> usize {
        self.linear(cell[0], cell[1], cell[2])
    }

    fn cells_len(&self) -> usize {
        self.cell_count()
    }

    fn row_end(&self, slot: usize) -> usize {
        let [_, y, z] = self.cell_of(self.sorted.position(slot).map(f64::from));
        self.offsets[self.linear(self.dims[0] - 1, y, z) + 1] as usize
    }

    fn kernel(&self) -> ScanKernel {
        self.config.kernel
    }

    fn k(&self) -> [i32; 3] {
        self.k
    }

    #[inline(always)]
    fn cell_of(&self, p: [f64; 3]) -> [i32; 3] {
        // Clamped to the grid in floating point, where truncation is then a
        // floor: monotone in each coordinate.
        let axis = |a: usize| {
            let last = f64::from(self.dims[a] - 1);
            ((p[a] - self.origin[a]) * self.inv_cell[a]).max(0.0).min(last) as i32
        };
        [axis(0), axis(1), axis(2)]
    }

    type Runs = GridRuns;

    fn runs_from(&self, from: usize) -> GridRuns {
        let cells = self.offsets.len().saturating_sub(1);
        if cells == 0 {
            return GridRuns { cell: 0, xyz: [0; 3], from };
        }
        // The cell holding slot `from`: the last cell starting at or before it.
        let cell = self.offsets[..cells].partition_point(|&o| o as usize <= from).max(1) - 1;
        let [dx, dy, _] = self.dims.map(|d| d as usize);
        let xyz = [cell % dx, (cell / dx) % dy, cell / (dx * dy)].map(|c| c as i32);
        GridRuns { cell, xyz, from }
    }

    #[inline]
    fn next_run(&self, runs: &mut GridRuns, to: usize) -> Option<(usize, usize, [i32; 3])> {
        let cells = self.offsets.len().saturating_sub(1);
        while runs.cell < cells && (self.offsets[runs.cell] as usize) < to {
            let start = (self.offsets[runs.cell] as usize).max(runs.from);
            let end = (self.offsets[runs.cell + 1] as usize).min(to);
            let xyz = runs.xyz;
            runs.cell += 1;
            runs.xyz[0] += 1;
            if runs.xyz[0] == self.dims[0] {
                runs.xyz[0] = 0;
                runs.xyz[1] += 1;
                if runs.xyz[1] == self.dims[1] {
                    runs.xyz[1] = 0;
                    runs.xyz[2] += 1;
                }
            }
            if start < end {
                return Some((start, end, xyz));
            }
        }
        None
    }

    fn later_ranges(&self, first: [i32; 3], last: [i32; 3], _: &mut (), out: &mut Stencil) {
        self.later_rows(first, last[0], out);
    }

    #[inline]
    fn ranges(&self, cells: CellBox, _: &mut (), out: &mut Stencil) {
        out.clear();
        let lo = [0, 1, 2].map(|a| cells.lo[a].max(0));
        let hi = [0, 1, 2].map(|a| cells.hi[a].min(self.dims[a] - 1));
        if (0..3).any(|a| lo[a] > hi[a]) {
            return;
        }
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                // Cells are numbered x fastest: a row of cells is one range.
                let first = self.linear(lo[0], y, z);
                let last = self.linear(hi[0], y, z);
                out.push(self.offsets[first], self.offsets[last + 1]);
            }
        }
    }
}

/// A point's coordinates in `f64`, where cells are computed.
#[inline(always)]
pub(crate) fn wide(p: Vec3) -> [f64; 3] {
    [f64::from(p.x), f64::from(p.y), f64::from(p.z)]
}

/// A position in the grid's cells (see [`Cells::next_run`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct GridRuns {
    cell: usize,
    xyz: [i32; 3],
    from: usize,
}

impl CountingSortGrid {
    /// The later half of the rows around the cells from `cell` to `last_x`
    /// along x (see [`Cells::later_ranges`]).
    fn later_rows(&self, cell: [i32; 3], last_x: i32, out: &mut Stencil) {
        out.clear();
        let [kx, ky, kz] = self.k;
        let (lo_x, hi_x) = ((cell[0] - kx).max(0), (last_x + kx).min(self.dims[0] - 1));
        for dz in 0..=kz {
            let z = cell[2] + dz;
            if z >= self.dims[2] {
                break;
            }
            let first_dy = if dz == 0 { 0 } else { -ky };
            for y in (cell[1] + first_dy).max(0)..=(cell[1] + ky).min(self.dims[1] - 1) {
                let (first, last) = (self.linear(lo_x, y, z), self.linear(hi_x, y, z));
                out.push(self.offsets[first], self.offsets[last + 1]);
            }
        }
    }
}

impl_neighbor_search!(CountingSortGrid);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NeighborSearch;

    /// The build's keys (the AVX2 twin where it runs, and the scalar
    /// loop) are `cell_of`'s cells, and any input, even one no build lets
    /// through (NaN, infinities, far outside the bounds), lands in the grid.
    #[test]
    fn keys_are_cell_of_and_stay_in_the_grid() {
        let points: Vec<Vec3> = (0..500)
            .map(|i| Vec3::new((i % 13) as f32, (i % 7) as f32 * 1.5, (i / 91) as f32))
            .collect();
        let mut grid = CountingSortGrid::default();
        grid.build(&points, 0.7).unwrap();
        let odd = [
            Vec3::new(f32::NAN, 1.0, 1.0),
            Vec3::new(1.0, f32::INFINITY, f32::NEG_INFINITY),
            Vec3::splat(-3e38),
            Vec3::splat(3e38),
            Vec3::new(12.999, -0.0, 5.0),
        ];
        let probes: Vec<Vec3> = points.iter().copied().chain(odd).collect();
        let (mut keys, mut scalar) = (vec![0; probes.len()], vec![0; probes.len()]);
        grid.keys_of(&probes, &mut keys);
        grid.keys_of_scalar(&probes, &mut scalar);
        assert_eq!(keys, scalar);
        let cells = grid.cell_count();
        for (p, &key) in probes.iter().zip(&keys) {
            assert!((key as usize) < cells, "{p} gave key {key} of {cells}");
            if p.is_finite() {
                let [x, y, z] = grid.cell_of(p.to_array().map(f64::from));
                assert_eq!(key as usize, grid.linear(x, y, z), "{p}");
            }
        }
    }

    #[test]
    fn grid_is_capped_for_spread_out_points() {
        let points = [Vec3::ZERO, Vec3::splat(1e30), Vec3::splat(-3e38)];
        let mut grid = CountingSortGrid::default();
        grid.build(&points, 0.001).unwrap();
        let cells: u64 = grid.dims().iter().map(|&d| u64::from(d)).product();
        assert!(cells <= 4096, "{:?}", grid.dims());
        let mut pairs = Vec::new();
        grid.neighbor_pairs(&mut pairs);
        assert!(pairs.is_empty());
    }

    #[test]
    fn offsets_count_every_particle_once() {
        let points: Vec<Vec3> = (0..200).map(|i| Vec3::splat((i % 17) as f32 * 0.3)).collect();
        let mut grid = CountingSortGrid::default();
        grid.build(&points, 0.5).unwrap();
        assert_eq!(*grid.offsets.last().unwrap() as usize, points.len());
        assert!(grid.offsets.windows(2).all(|w| w[0] <= w[1]));
        let mut seen = vec![false; points.len()];
        let mut runs = 0;
        grid.for_each_run(0, points.len(), |start, end, cell| {
            runs += 1;
            for (s, seen) in seen.iter_mut().enumerate().take(end).skip(start) {
                assert!(!*seen);
                *seen = true;
                let p = grid.sorted.position(s).map(f64::from);
                assert_eq!(grid.cell_of(p), cell);
            }
        });
        assert!(seen.iter().all(|&s| s));
        let mut cells: Vec<[i32; 3]> =
            points.iter().map(|p| grid.cell_of(p.to_array().map(f64::from))).collect();
        cells.sort_unstable();
        cells.dedup();
        assert_eq!(runs, cells.len());
    }

    #[test]
    fn radius_zero_finds_coincident_points() {
        let points = [Vec3::ONE, Vec3::ZERO, Vec3::ONE, Vec3::new(1.0, 1.0, 1.0 + 1e-6)];
        let mut grid = CountingSortGrid::default();
        grid.build(&points, 0.0).unwrap();
        let mut pairs = Vec::new();
        grid.neighbor_pairs(&mut pairs);
        assert_eq!(pairs, [[0, 2]]);
    }
}
