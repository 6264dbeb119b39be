//! [`SpatialIndex`]: no stored grid, only particles sorted by a packed
//! 64-bit cell key; rows of cells are found by binary search (or an
//! optional key → slots hash map).

use super::api::{Index, impl_neighbor_search};
use super::counting_sort_grid::wide;
use super::scan::ScanKernel;
use super::search::{CellBox, Cells, Stencil};
use super::sorted::{MAX_K, Shape, Sorted, cell_size, clamped_cell, stencil_k, widest};
use ahash::AHashMap;
use glam::Vec3;

/// How [`SpatialIndex`] finds the slots of a row of cells.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{RowLookup, SpatialIndex, SpatialIndexConfig};
/// let index = SpatialIndex::with_config(SpatialIndexConfig {
///     lookup: RowLookup::HashMap,
///     ..SpatialIndexConfig::default()
/// });
/// assert_eq!(index.config().lookup, RowLookup::HashMap);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum RowLookup {
    /// Binary search of the sorted keys, two per row: no memory beyond the
    /// keys. The walks over all particles start each search from the
    /// previous cell's answer for the same row (a galloping search), since
    /// cells are visited in key order.
    #[default]
    BinarySearch,
    /// A hash map (ahash) from cell key to the cell's slots, built with the
    /// index: one lookup per cell instead of a binary search per row.
    HashMap,
}

/// Tuning of [`SpatialIndex`]. Every field is safe to change.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{SpatialIndex, SpatialIndexConfig};
/// let index = SpatialIndex::with_config(SpatialIndexConfig {
///     cells_per_radius: 2,
///     ..SpatialIndexConfig::default()
/// });
/// assert_eq!(index.config().cells_per_radius, 2);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpatialIndexConfig {
    /// Cells per search radius, 1 to 3 (see
    /// [`CountingSortGridConfig::cells_per_radius`](crate::CountingSortGridConfig::cells_per_radius)).
    pub cells_per_radius: u32,
    /// How rows of cells are found.
    pub lookup: RowLookup,
    /// Which scan kernel runs (every kernel gives the same results).
    pub kernel: ScanKernel,
}

impl Default for SpatialIndexConfig {
    fn default() -> Self {
        Self { cells_per_radius: 1, lookup: RowLookup::default(), kernel: ScanKernel::Auto }
    }
}

/// Bits per axis in a key.
const AXIS_BITS: u32 = 21;
/// Signed cell coordinates are stored as `coordinate + BIAS`.
const BIAS: i32 = 1 << (AXIS_BITS - 1);
const FIELD: u64 = (1 << AXIS_BITS) - 1;
/// Most rows a stencil of `±MAX_K` cells has.
const MAX_ROWS: usize = ((2 * MAX_K + 1) * (2 * MAX_K + 1)) as usize;
/// Bits per radix-sort digit.
const DIGIT_BITS: u32 = 11;
const RADIX: usize = 1 << DIGIT_BITS;

/// The key of a cell: z, y, x from high to low bits, 21 bits each.
#[inline(always)]
fn key([x, y, z]: [i32; 3]) -> u64 {
    let field = |c: i32| (c + BIAS) as u64;
    field(z) << (2 * AXIS_BITS) | field(y) << AXIS_BITS | field(x)
}

#[inline(always)]
fn decode(key: u64) -> [i32; 3] {
    [0, 1, 2].map(|a| ((key >> (a * AXIS_BITS)) & FIELD) as i32 - BIAS)
}

/// Fixed-radius neighbor search with an implicit spatial index: particles
/// sorted by a packed cell key, and nothing else.
///
/// A particle's cell (cells of about the search radius, signed coordinates
/// clamped to ±2²⁰) is packed into a 64-bit key, z then y then x, 21 bits
/// each; the particles are sorted by key (an LSD radix sort over only the
/// key bits that vary). A cell's particles are then one run of equal keys,
/// and a row of cells along x is one run of consecutive keys: a search
/// finds each of the 9 rows around a particle with a binary search for its
/// first and last key and scans the slots between. With
/// [`RowLookup::HashMap`] a map from key to slots replaces the binary
/// searches.
///
/// Best when memory matters or the space is unbounded: besides the sorted
/// particles it stores one key per particle. Far-out particles beyond ±2²⁰
/// cells share the edge cells, which stays exact but slower.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{NeighborSearch, SpatialIndex, brute_force_neighbors_within};
/// use glam::Vec3;
///
/// let points: Vec<Vec3> = (0..1000)
///     .map(|i| Vec3::new((i * 37 % 101) as f32, (i * 59 % 103) as f32, -((i * 13 % 97) as f32)) * 0.1)
///     .collect();
/// let mut index = SpatialIndex::default();
/// index.build(&points, 0.75)?;
/// let (mut hits, mut expected) = (Vec::new(), Vec::new());
/// index.query(Vec3::new(5.0, 5.0, -5.0), 0.75, &mut hits)?;
/// brute_force_neighbors_within(&points, Vec3::new(5.0, 5.0, -5.0), 0.75, &mut expected)?;
/// hits.sort_unstable();
/// assert_eq!(hits, expected);
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct SpatialIndex {
    config: SpatialIndexConfig,
    sorted: Sorted,
    /// The cell key of each sorted slot, increasing.
    keys: Vec<u64>,
    /// Cell key → its slots, with [`RowLookup::HashMap`].
    map: AHashMap<u64, [u32; 2]>,
    inv_cell: f64,
    /// The low corner of the build's bounds: cells count from it, so data
    /// far from the origin keeps the whole key range.
    origin: [f64; 3],
    k: i32,
    /// Radix-sort buffers.
    indices: Vec<u32>,
    spare_keys: Vec<u64>,
    spare_indices: Vec<u32>,
    /// One histogram per digit.
    counts: Vec<[u32; RADIX]>,
}

/// The last answers of the binary searches of each stencil row, where the
/// next cell's searches start.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Finger {
    starts: [usize; MAX_ROWS],
    ends: [usize; MAX_ROWS],
}

impl Default for Finger {
    fn default() -> Self {
        Self { starts: [0; MAX_ROWS], ends: [0; MAX_ROWS] }
    }
}

impl SpatialIndex {
    /// An empty index with `config`.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborSearch, SpatialIndex, SpatialIndexConfig};
    /// assert!(SpatialIndex::with_config(SpatialIndexConfig::default()).is_empty());
    /// ```
    pub fn with_config(config: SpatialIndexConfig) -> Self {
        Self { config, ..Self::default() }
    }

    /// The configuration.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{RowLookup, SpatialIndex};
    /// assert_eq!(SpatialIndex::default().config().lookup, RowLookup::BinarySearch);
    /// ```
    pub fn config(&self) -> &SpatialIndexConfig {
        &self.config
    }

    /// The packed cell key of each sorted slot (increasing): z, y, x from
    /// high to low bits, 21 bits each, coordinates biased by 2²⁰.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborSearch, SpatialIndex};
    /// use glam::Vec3;
    /// let mut index = SpatialIndex::default();
    /// index.build(&[Vec3::new(0.0, 0.0, 5.0), Vec3::new(5.0, 0.0, 0.0)], 1.0)?;
    /// assert!(index.keys()[0] < index.keys()[1]);
    /// assert_eq!(index.sorted_order(), [1, 0]); // z is the most significant
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    pub fn keys(&self) -> &[u64] {
        &self.keys
    }

    /// Sorts `self.keys` (caller order on entry) with `self.indices`
    /// (0..n), least significant digit first, over the key bits that vary.
    fn radix_sort(&mut self) {
        let n = self.keys.len();
        let (all, any) =
            self.keys.iter().fold((u64::MAX, 0u64), |(all, any), &k| (all & k, any | k));
        let mut varying = all ^ any;
        let mut shifts = [0u32; 6];
        let mut digits = 0;
        while varying != 0 {
            let shift = varying.trailing_zeros();
            shifts[digits] = shift;
            digits += 1;
            varying &= !(((1u64 << DIGIT_BITS) - 1) << shift);
        }
        let mut counts = std::mem::take(&mut self.counts);
        counts.clear();
        counts.resize(digits, [0; RADIX]);
        for &k in &self.keys {
            for (count, &shift) in counts.iter_mut().zip(&shifts[..digits]) {
                count[((k >> shift) as usize) & (RADIX - 1)] += 1;
            }
        }
        self.spare_keys.clear();
        self.spare_keys.resize(n, 0);
        self.spare_indices.clear();
        self.spare_indices.resize(n, 0);
        for (count, &shift) in counts.iter_mut().zip(&shifts[..digits]) {
            let mut sum = 0u32;
            for c in count.iter_mut() {
                let here = *c;
                *c = sum;
                sum += here;
            }
            for (&k, &i) in self.keys.iter().zip(&self.indices) {
                let slot = &mut count[((k >> shift) as usize) & (RADIX - 1)];
                self.spare_keys[*slot as usize] = k;
                self.spare_indices[*slot as usize] = i;
                *slot += 1;
            }
            std::mem::swap(&mut self.keys, &mut self.spare_keys);
            std::mem::swap(&mut self.indices, &mut self.spare_indices);
        }
        self.counts = counts;
    }

    /// The slots of the row of cells `lo_x..=hi_x` at `(y, z)`.
    #[inline(always)]
    fn row(
        &self,
        lo_x: i32,
        hi_x: i32,
        y: i32,
        z: i32,
        row: usize,
        finger: &mut Finger,
    ) -> [u32; 2] {
        let (first, last) = (key([lo_x, y, z]), key([hi_x, y, z]));
        match self.config.lookup {
            RowLookup::BinarySearch => {
                let start = lower_bound_from(&self.keys, first, finger.starts[row]);
                let end = lower_bound_from(&self.keys, last + 1, finger.ends[row].max(start));
                finger.starts[row] = start;
                finger.ends[row] = end;
                // Slots fit u32 (at most MAX_POINTS particles).
                [start as u32, end as u32]
            }
            RowLookup::HashMap => {
                let Some(start) = (lo_x..=hi_x).find_map(|x| self.map.get(&key([x, y, z]))) else {
                    return [0, 0];
                };
                let end = (lo_x..=hi_x).rev().find_map(|x| self.map.get(&key([x, y, z])));
                [start[0], end.map_or(start[1], |e| e[1])]
            }
        }
    }
}

/// The first index whose key is `>= target`, searched forward from `hint`
/// with doubling steps when `hint` is at or before the answer (the walks'
/// usual case), else by binary search below it.
#[inline]
fn lower_bound_from(keys: &[u64], target: u64, hint: usize) -> usize {
    let n = keys.len();
    let hint = hint.min(n);
    if hint > 0 && keys[hint - 1] >= target {
        return keys[..hint].partition_point(|&k| k < target);
    }
    // Every key before `lo` is below the target; keys[hi] (if any) is not.
    let (mut lo, mut hi, mut step) = (hint, hint, 1);
    while hi < n && keys[hi] < target {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    let hi = hi.min(n);
    lo + keys[lo..hi].partition_point(|&k| k < target)
}

impl Index for SpatialIndex {
    fn reset(&mut self) {
        self.sorted.clear();
        self.keys.clear();
        self.map.clear();
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
        // A radius tiny against the spread (duplicates within 10⁻¹² over a
        // unit cube) would ask for more cells than a key field counts, and
        // clamping would put nearly every point in one edge cell: cells
        // then take the spread's share of the field instead, which loses
        // no pair (the distance test decides).
        let cell = cell_size(shape.reach(), k, spread, n).max(spread / f64::from(BIAS / 2));
        self.k = k as i32;
        self.inv_cell = 1.0 / cell;
        self.origin = wide(lo);
        // Sorted relative to the lowest cell on each axis: the same order
        // (each field only loses a constant, without borrows, since every
        // field is at least the lowest), but data around 0 no longer flips
        // all 21 bits of a field, so the radix sort skips more digits.
        let base = key(self.cell_of(wide(lo)));
        let mut keys = std::mem::take(&mut self.keys);
        keys.clear();
        keys.extend(points.iter().map(|p| key(self.cell_of(wide(*p))) - base));
        self.keys = keys;
        self.indices.clear();
        // n <= MAX_POINTS, checked by validation.
        self.indices.extend(0..n as u32);
        self.radix_sort();
        for k in &mut self.keys {
            *k += base;
        }
        self.sorted.gather(points, radii, &self.indices, shape);
        self.sorted.estimate_rows(lo, hi, cell, self.k);
        if self.config.lookup == RowLookup::HashMap {
            let mut map = std::mem::take(&mut self.map);
            self.for_each_run(0, n, |start, end, cell| {
                map.insert(key(cell), [start as u32, end as u32]);
            });
            self.map = map;
        }
    }
}

impl Cells for SpatialIndex {
    type Finger = Finger;

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
        clamped_cell(p, self.origin, self.inv_cell, [-f64::from(BIAS), f64::from(BIAS - 1)])
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
        let key = self.keys[start];
        let mut end = start + 1;
        while end < to && self.keys[end] == key {
            end += 1;
        }
        *at = end;
        Some((start, end, decode(key)))
    }

    fn later_ranges(&self, cell: [i32; 3], last: [i32; 3], finger: &mut Finger, out: &mut Stencil) {
        out.clear();
        let k = self.k;
        let limit = |c: i32| c.clamp(-BIAS, BIAS - 1);
        let (lo_x, hi_x) = (limit(cell[0] - k), limit(last[0].saturating_add(k)));
        let width = 2 * k + 1;
        // Keys order cells by (z, y, x): rows before the cell's hold only
        // earlier slots. Rows are numbered as in `ranges` for the fingers.
        for dz in 0..=k {
            let first_dy = if dz == 0 { 0 } else { -k };
            for dy in first_dy..=k {
                let (y, z) = (cell[1] + dy, cell[2] + dz);
                if limit(y) != y || limit(z) != z {
                    continue; // beyond the key range: clamped cells are in the edge rows
                }
                let row = ((dz + k) * width + dy + k) as usize;
                let [start, end] = self.row(lo_x, hi_x, y, z, row, finger);
                out.push(start, end);
            }
        }
    }

    fn ranges(&self, cells: CellBox, finger: &mut Finger, out: &mut Stencil) {
        out.clear();
        let lo = cells.lo.map(|c| c.clamp(-BIAS, BIAS - 1));
        let hi = cells.hi.map(|c| c.clamp(-BIAS, BIAS - 1));
        let rows =
            (i64::from(hi[1]) - i64::from(lo[1]) + 1) * (i64::from(hi[2]) - i64::from(lo[2]) + 1);
        if rows > MAX_ROWS as i64 {
            // Never for a stencil or a query within the build radius; kept
            // so any box is answered (by scanning everything).
            out.push(0, self.sorted.len() as u32);
            return;
        }
        let mut row = 0;
        for z in lo[2]..=hi[2] {
            for y in lo[1]..=hi[1] {
                let [start, end] = self.row(lo[0], hi[0], y, z, row, finger);
                out.push(start, end);
                row += 1;
            }
        }
    }
}

impl_neighbor_search!(SpatialIndex);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NeighborSearch;

    #[test]
    fn keys_pack_signed_coordinates_in_zyx_order() {
        for c in [[0, 0, 0], [-1, 2, -3], [BIAS - 1, -BIAS, 0], [-BIAS, -BIAS, -BIAS]] {
            assert_eq!(decode(key(c)), c);
        }
        assert!(key([5, 0, 0]) < key([0, 1, 0]));
        assert!(key([0, 9, 0]) < key([0, 0, 1]));
        assert!(key([-1, 0, 0]) < key([0, 0, 0]));
        assert!(key([BIAS - 1, BIAS - 1, BIAS - 1]) < 1 << 63);
    }

    /// Cells of a radius far below the spread's share of a key field would
    /// clamp nearly every point into one edge cell (a quadratic search);
    /// widened cells keep spread points apart.
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
            let mut index = SpatialIndex::default();
            index.build(&points, 1e-12).unwrap();
            let mut widest_run = 0;
            index.for_each_run(0, points.len(), |start, end, _| {
                widest_run = widest_run.max(end - start);
            });
            assert!(widest_run <= 2, "{widest_run} points share a cell at offset {offset}");
        }
    }

    #[test]
    fn galloping_search_agrees_with_binary_search() {
        let keys: Vec<u64> = (0..500u64).map(|i| i / 3 * 2).collect();
        for target in 0..340u64 {
            let expected = keys.partition_point(|&k| k < target);
            for hint in [0, 1, 7, 100, 333, 499, 500, 900] {
                assert_eq!(lower_bound_from(&keys, target, hint), expected, "{target} {hint}");
            }
        }
        assert_eq!(lower_bound_from(&[], 5, 3), 0);
    }

    #[test]
    fn radix_sort_is_stable_and_sorted() {
        let points: Vec<Vec3> = (0..5000)
            .map(|i| {
                let f = |m: i32| ((i * m) % 211 - 105) as f32 * 3.7;
                Vec3::new(f(31), f(57), f(13))
            })
            .collect();
        for lookup in [RowLookup::BinarySearch, RowLookup::HashMap] {
            let mut index = SpatialIndex::with_config(SpatialIndexConfig {
                lookup,
                ..SpatialIndexConfig::default()
            });
            index.build(&points, 1.0).unwrap();
            assert!(index.keys.windows(2).all(|w| w[0] <= w[1]));
            let order = index.sorted_order();
            for (s, w) in index.keys.windows(2).enumerate() {
                if w[0] == w[1] {
                    assert!(order[s] < order[s + 1], "unstable at slot {s}");
                }
            }
            for (s, &i) in order.iter().enumerate() {
                let p = points[i as usize];
                assert_eq!(index.keys[s], key(index.cell_of(wide(p))));
            }
        }
    }

    #[test]
    fn far_points_are_clamped_not_lost() {
        let points = [Vec3::splat(1e30), Vec3::splat(1e30), Vec3::splat(-1e30), Vec3::ZERO];
        let mut index = SpatialIndex::default();
        index.build(&points, 1.0).unwrap();
        let mut pairs = Vec::new();
        index.neighbor_pairs(&mut pairs);
        assert_eq!(pairs, [[0, 1]]);
    }
}
