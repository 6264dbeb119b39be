//! [`SpatialHash`]: spatial hashing, cells of the search radius hashed into
//! a fixed power-of-two table of buckets.

use super::api::{Index, impl_neighbor_search};
use super::counting_sort_grid::wide;
use super::scan::ScanKernel;
use super::search::{CellBox, Cells, MAX_RANGES, Stencil};
use super::sorted::{Shape, Sorted, cell_size, clamped_cell, counting_sort, stencil_k, widest};
use glam::Vec3;

/// How a cell's integer coordinates pick a bucket.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{CellHash, SpatialHash, SpatialHashConfig};
/// let hash = SpatialHash::with_config(SpatialHashConfig {
///     hash: CellHash::Teschner,
///     ..SpatialHashConfig::default()
/// });
/// assert_eq!(hash.config().hash, CellHash::Teschner);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CellHash {
    /// The classic per-cell hash of three large primes:
    /// `(x·73856093 ⊕ y·19349663 ⊕ z·83492791) mod buckets`. With a
    /// power-of-two table the low bits of a product depend only on the low
    /// bits of the coordinate, so this mixes poorly; kept to measure
    /// against.
    Teschner,
    /// The coordinates packed 21 bits each, multiplied by 2⁶⁴/φ, high bits
    /// kept (Fibonacci hashing): every input bit reaches the bucket index.
    Fibonacci,
    /// Row-preserving: `(x + h(y, z)) mod buckets`, with `h` the Fibonacci
    /// hash of `(y, z)`. Cells next to each other along x land in
    /// consecutive buckets, so a row of 3 cells is one range of slots, as
    /// in the grid: 9 lookups per search instead of 27. The default
    /// (measured in `benches/neighbors.rs`).
    #[default]
    Rows,
}

/// Tuning of [`SpatialHash`]. Every field is safe to change.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{SpatialHash, SpatialHashConfig};
/// let hash = SpatialHash::with_config(SpatialHashConfig {
///     buckets_per_point: 4,
///     ..SpatialHashConfig::default()
/// });
/// assert_eq!(hash.config().buckets_per_point, 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpatialHashConfig {
    /// Cells per search radius, 1 to 3 (see
    /// [`CountingSortGridConfig::cells_per_radius`](crate::CountingSortGridConfig::cells_per_radius)).
    pub cells_per_radius: u32,
    /// The table has the next power of two at or above
    /// `buckets_per_point · n` buckets (at least 64): more buckets, fewer
    /// cells sharing one.
    pub buckets_per_point: u32,
    /// The hash function.
    pub hash: CellHash,
    /// Which scan kernel runs (every kernel gives the same results).
    pub kernel: ScanKernel,
}

impl Default for SpatialHashConfig {
    fn default() -> Self {
        Self {
            cells_per_radius: 1,
            buckets_per_point: 2,
            hash: CellHash::default(),
            kernel: ScanKernel::Auto,
        }
    }
}

/// Cell coordinates are clamped to this magnitude, so they fit `i32` with
/// room for a stencil around them. Only a query far outside the build's
/// bounds reaches it: built particles lie within [`CELL_SPAN`].
const CELL_LIMIT: i64 = 1 << 30;

/// Most cells along an axis of the build's bounds. A radius tiny against
/// the spread (duplicates within 10⁻¹² in a unit cube) gets cells of the
/// bounds' extent / `CELL_SPAN` instead: cells larger than the radius lose
/// no pair (the distance test decides), while a cell size the coordinates
/// cannot count to would clamp every particle into one edge cell and make
/// the search quadratic.
const CELL_SPAN: f64 = (1u64 << 29) as f64;

/// Fixed-radius neighbor search by spatial hashing.
///
/// Space is cut into cells of about the search radius, with no bounds:
/// cell `(x, y, z)` goes to bucket `hash(x, y, z) mod buckets` of a table
/// whose size is fixed by the particle count. The build is O(n): a bucket
/// and a slot per particle, then the same stable counting sort as
/// [`CountingSortGrid`](crate::CountingSortGrid), over buckets. A search
/// looks up the buckets of the 27 cells around a particle and scans them;
/// particles of other cells in the same bucket are rejected by the distance
/// test. With the default row-preserving hash ([`CellHash::Rows`]) the 3
/// cells of a row along x sit in consecutive buckets, so a search is 9
/// ranges as in the grid; with the classic per-cell hashes it is 27 (a
/// bucket two cells share is scanned once).
///
/// Best when the particles are spread over a large or unbounded space:
/// memory follows the particle count, not the volume.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{NeighborSearch, SpatialHash, brute_force_neighbor_pairs};
/// use glam::Vec3;
///
/// // Two far-apart clusters: no grid over the empty space between them.
/// let points: Vec<Vec3> = (0..200)
///     .map(|i| Vec3::new((i % 10) as f32 * 0.3, (i / 20) as f32 * 0.3, 0.0)
///         + if i % 2 == 0 { Vec3::ZERO } else { Vec3::splat(1e7) })
///     .collect();
/// let mut hash = SpatialHash::default();
/// hash.build(&points, 0.5)?;
/// let (mut pairs, mut expected) = (Vec::new(), Vec::new());
/// hash.neighbor_pairs(&mut pairs);
/// brute_force_neighbor_pairs(&points, 0.5, &mut expected)?;
/// pairs.sort_unstable();
/// assert_eq!(pairs, expected);
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct SpatialHash {
    config: SpatialHashConfig,
    sorted: Sorted,
    /// `offsets[b]..offsets[b + 1]` are the slots of bucket `b`.
    offsets: Vec<u32>,
    /// Buckets - 1 (a power of two minus one).
    mask: u32,
    /// log2 of the bucket count.
    bits: u32,
    inv_cell: f64,
    /// The low corner of the build's bounds: cells count from it, so data
    /// far from the origin keeps the full [`CELL_SPAN`].
    origin: [f64; 3],
    k: i32,
    /// The cell of each sorted slot.
    cells: Vec<[i32; 3]>,
    /// Per particle (caller order): its cell, its bucket, its sorted slot.
    caller_cells: Vec<[i32; 3]>,
    keys: Vec<u32>,
    dst: Vec<u32>,
}

impl SpatialHash {
    /// An empty hash with `config`.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborSearch, SpatialHash, SpatialHashConfig};
    /// assert!(SpatialHash::with_config(SpatialHashConfig::default()).is_empty());
    /// ```
    pub fn with_config(config: SpatialHashConfig) -> Self {
        Self { config, ..Self::default() }
    }

    /// The configuration.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::SpatialHash;
    /// assert_eq!(SpatialHash::default().config().buckets_per_point, 2);
    /// ```
    pub fn config(&self) -> &SpatialHashConfig {
        &self.config
    }

    /// Number of buckets of the last build (0 when empty).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborSearch, SpatialHash};
    /// use glam::Vec3;
    /// let mut hash = SpatialHash::default();
    /// hash.build(&vec![Vec3::ZERO; 100], 1.0)?;
    /// assert_eq!(hash.buckets(), 256);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    pub fn buckets(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The bucket of a cell.
    #[inline(always)]
    fn bucket(&self, [x, y, z]: [i32; 3]) -> u32 {
        match self.config.hash {
            CellHash::Teschner => {
                let h = (x as u32).wrapping_mul(73_856_093)
                    ^ (y as u32).wrapping_mul(19_349_663)
                    ^ (z as u32).wrapping_mul(83_492_791);
                h & self.mask
            }
            CellHash::Fibonacci => self.fibonacci(x, y, z),
            CellHash::Rows => (x as u32).wrapping_add(self.fibonacci(0, y, z)) & self.mask,
        }
    }

    /// The Fibonacci hash of a cell, below the bucket count.
    #[inline(always)]
    fn fibonacci(&self, x: i32, y: i32, z: i32) -> u32 {
        const FIELD: u64 = (1 << 21) - 1;
        let key = (x as u64 & FIELD) | (y as u64 & FIELD) << 21 | (z as u64 & FIELD) << 42;
        // `bits` >= 6, so the shift is at most 58; the result fits the mask.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as u32
    }

    /// The slot ranges of the rows of `cells` under [`CellHash::Rows`]: each
    /// row is a run of consecutive buckets (two where it wraps around the
    /// table); runs that overlap (rows sharing buckets) are merged, so each
    /// bucket is scanned once.
    fn row_ranges(&self, cells: CellBox, out: &mut Stencil) {
        let buckets = self.mask as u64 + 1;
        let width = (i64::from(cells.hi[0]) - i64::from(cells.lo[0]) + 1) as u64;
        // Bucket runs first, in `out` itself (no scratch to clear per call).
        for z in cells.lo[2]..=cells.hi[2] {
            for y in cells.lo[1]..=cells.hi[1] {
                if width >= buckets {
                    out.push_raw(0, self.mask + 1);
                    continue;
                }
                let first = u64::from(self.bucket([cells.lo[0], y, z]));
                let end = first + width;
                if end <= buckets {
                    out.push_raw(first as u32, end as u32);
                } else {
                    out.push_raw(first as u32, self.mask + 1);
                    out.push_raw(0, (end - buckets) as u32);
                }
            }
        }
        // Sorted by first bucket, overlapping runs merged, then to slots.
        let runs = out.ranges_mut();
        for i in 1..runs.len() {
            let run = runs[i];
            let mut j = i;
            while j > 0 && runs[j - 1][0] > run[0] {
                runs[j] = runs[j - 1];
                j -= 1;
            }
            runs[j] = run;
        }
        let mut merged = 0;
        for i in 0..runs.len() {
            if merged > 0 && runs[i][0] <= runs[merged - 1][1] {
                runs[merged - 1][1] = runs[merged - 1][1].max(runs[i][1]);
            } else {
                runs[merged] = runs[i];
                merged += 1;
            }
        }
        let mut kept = 0;
        for i in 0..merged {
            let [first, end] = runs[i];
            let slots = [self.offsets[first as usize], self.offsets[end as usize]];
            if slots[0] < slots[1] {
                runs[kept] = slots;
                kept += 1;
            }
        }
        out.truncate_recount(kept);
    }
}

impl Index for SpatialHash {
    fn reset(&mut self) {
        self.sorted.clear();
        self.offsets.clear();
        self.cells.clear();
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
        let k = stencil_k(self.config.cells_per_radius);
        let spread = widest(lo, hi);
        let cell = cell_size(shape.reach(), k, spread, n).max(spread / CELL_SPAN);
        self.k = k as i32;
        self.inv_cell = 1.0 / cell;
        self.origin = wide(lo);
        let wanted = n.saturating_mul(self.config.buckets_per_point.max(1) as usize);
        let buckets = wanted.clamp(64, 1 << 31).next_power_of_two();
        self.bits = buckets.trailing_zeros();
        self.mask = (buckets - 1) as u32;

        let mut caller_cells = std::mem::take(&mut self.caller_cells);
        caller_cells.clear();
        caller_cells.extend(points.iter().map(|p| self.cell_of(wide(*p))));
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        keys.extend(caller_cells.iter().map(|&c| self.bucket(c)));
        counting_sort(&keys, buckets, &mut self.offsets, &mut self.dst);
        self.sorted.scatter(points, radii, &self.dst, shape);
        self.sorted.estimate_rows(lo, hi, cell, self.k);
        self.cells.clear();
        self.cells.resize(n, [0; 3]);
        for (&cell, &slot) in caller_cells.iter().zip(&self.dst) {
            self.cells[slot as usize] = cell;
        }
        self.caller_cells = caller_cells;
        self.keys = keys;
    }
}

impl Cells for SpatialHash {
    type Finger = ();

    fn sorted(&self) -> &Sorted {
        &self.sorted
    }

    fn kernel(&self) -> ScanKernel {
        self.config.kernel
    }

    fn k(&self) -> [i32; 3] {
        [self.k; 3]
    }

    #[inline(always)]
    fn cell_of(&self, p: [f64; 3]) -> [i32; 3] {
        clamped_cell(p, self.origin, self.inv_cell, [-CELL_LIMIT as f64, CELL_LIMIT as f64])
    }

    type Runs = usize;

    fn runs_from(&self, from: usize) -> usize {
        from
    }

    #[inline]
    fn next_run(&self, at: &mut usize, to: usize) -> Option<(usize, usize, [i32; 3])> {
        let start = *at;
        if start >= to {
            return None;
        }
        let cell = self.cells[start];
        let mut end = start + 1;
        while end < to && self.cells[end] == cell {
            end += 1;
        }
        *at = end;
        Some((start, end, cell))
    }

    fn ranges(&self, cells: CellBox, _: &mut (), out: &mut Stencil) {
        out.clear();
        let count: i64 =
            (0..3).map(|a| i64::from(cells.hi[a]) - i64::from(cells.lo[a]) + 1).product();
        if count > MAX_RANGES as i64 {
            // Never for a stencil or a query within the build radius; kept
            // so any box is answered (by scanning everything).
            out.push(0, self.sorted.len() as u32);
            return;
        }
        if self.config.hash == CellHash::Rows {
            return self.row_ranges(cells, out);
        }
        for z in cells.lo[2]..=cells.hi[2] {
            for y in cells.lo[1]..=cells.hi[1] {
                for x in cells.lo[0]..=cells.hi[0] {
                    let b = self.bucket([x, y, z]) as usize;
                    let (start, end) = (self.offsets[b], self.offsets[b + 1]);
                    // A bucket two cells of the box share is scanned once
                    // (a non-empty bucket is known by its first slot).
                    if start < end && !out.ranges().iter().any(|r| r[0] == start) {
                        out.push(start, end);
                    }
                }
            }
        }
    }
}

impl_neighbor_search!(SpatialHash);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NeighborSearch;

    #[test]
    fn both_hashes_stay_in_the_table() {
        for hash in [CellHash::Teschner, CellHash::Fibonacci, CellHash::Rows] {
            let mut h = SpatialHash::with_config(SpatialHashConfig {
                hash,
                ..SpatialHashConfig::default()
            });
            h.build(&vec![Vec3::ZERO; 1000], 1.0).unwrap();
            assert_eq!(h.buckets(), 2048);
            for c in [[0, 0, 0], [-1, -1, -1], [1 << 30, -(1 << 30), 7], [i32::MAX, 0, i32::MIN]] {
                assert!(h.bucket(c) <= h.mask);
            }
        }
    }

    /// Cells of a radius far below the spread's share of the key range
    /// would clamp nearly every point into one edge cell (a quadratic
    /// search); widened cells keep spread points apart.
    #[test]
    fn tiny_radius_over_a_wide_spread_keeps_points_apart() {
        let mut seed = 5u64;
        let mut unit = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 40) as f32 / (1u64 << 24) as f32
        };
        for offset in [0.0, -300.0] {
            let points: Vec<Vec3> = (0..4000)
                .map(|_| Vec3::new(unit(), unit(), unit()) + Vec3::splat(offset))
                .collect();
            let mut h = SpatialHash::default();
            h.build(&points, 1e-12).unwrap();
            let mut widest_run = 0;
            h.for_each_run(0, points.len(), |start, end, _| {
                widest_run = widest_run.max(end - start)
            });
            assert!(widest_run <= 2, "{widest_run} points share a cell at offset {offset}");
        }
    }

    #[test]
    fn runs_follow_cells() {
        let points: Vec<Vec3> =
            (0..300).map(|i| Vec3::new((i % 7) as f32, -((i % 3) as f32), 0.0)).collect();
        let mut h = SpatialHash::default();
        h.build(&points, 0.9).unwrap();
        let mut runs = 0;
        h.for_each_run(0, points.len(), |start, end, cell| {
            runs += 1;
            for s in start..end {
                assert_eq!(h.cell_of(h.sorted.position(s).map(f64::from)), cell);
            }
        });
        assert!(runs >= 21, "{runs} runs for 21 cells");
    }
}
