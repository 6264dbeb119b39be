//! What every neighbor structure ends with: the particles in cell order, as
//! padded structure-of-arrays columns, with the map back to the caller's
//! indices; and the stable counting sort two of them build it with.

use broadphase_storage::AlignedColumn;
use glam::Vec3;

/// Slots of padding after the last particle in every column, so the scan
/// kernel can load a whole chunk of lanes starting at any slot `< len`.
pub(crate) const PAD: usize = 16;

/// How many particles ahead a scatter asks for the line it will write.
pub(crate) const SCATTER_AHEAD: usize = 32;

/// Relative margin by which a cell is made larger than `reach / k`, so that
/// float rounding in the cell computation can never put a neighbor outside
/// the `±k` cells around a particle (see [`cell_size`]).
const CELL_MARGIN: f64 = 1.0 / 4096.0;

/// What "neighbor" means for the particles of one build.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Shape {
    /// Points; neighbors when `distance <= radius`.
    Points {
        /// The build radius.
        radius: f32,
    },
    /// Spheres; in contact when `distance <= r_i + r_j`.
    Spheres {
        /// The largest sphere radius.
        max_radius: f32,
    },
}

impl Shape {
    /// The largest distance at which two particles can be neighbors.
    pub(crate) fn reach(self) -> f32 {
        match self {
            Shape::Points { radius } => radius,
            // 2·r rounds exactly, and r_i + r_j <= 2·max in f32 too.
            Shape::Spheres { max_radius } => 2.0 * max_radius,
        }
    }
}

/// The particles of one build in sorted (cell) order.
///
/// The position columns are storage's [`AlignedColumn`]s: slot 0 of each
/// starts a cache line and an aligned 16-lane vector.
#[derive(Clone, Debug)]
pub(crate) struct Sorted {
    /// Coordinates by slot; `len + PAD` long, the padding NaN (never a neighbor).
    pub(crate) x: AlignedColumn<f32>,
    pub(crate) y: AlignedColumn<f32>,
    pub(crate) z: AlignedColumn<f32>,
    /// Sphere radii by slot, `len + PAD` long (padding 0); empty for points.
    pub(crate) r: AlignedColumn<f32>,
    /// `order[slot]` is the caller's index of the particle in that slot.
    pub(crate) order: AlignedColumn<u32>,
    pub(crate) shape: Shape,
    /// Whether a row of `2k + 1` cells is expected to hold at least 16
    /// particles (the particles over the cells of their bounds): where
    /// [`ScanKernel::Auto`](super::scan::ScanKernel::Auto) prefers 16 lanes.
    pub(crate) long_rows: bool,
    /// Scatter buffer: each particle's coordinates and caller index, in
    /// slot order (one scattered 16-byte write per particle instead of four).
    staging: Vec<[u32; 4]>,
}

impl Default for Sorted {
    fn default() -> Self {
        Self {
            x: AlignedColumn::new(),
            y: AlignedColumn::new(),
            z: AlignedColumn::new(),
            r: AlignedColumn::new(),
            order: AlignedColumn::new(),
            shape: Shape::Points { radius: 0.0 },
            long_rows: false,
            staging: Vec::new(),
        }
    }
}

impl Sorted {
    /// Number of particles.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    /// Forgets the particles, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.x.clear();
        self.y.clear();
        self.z.clear();
        self.r.clear();
        self.order.clear();
        self.shape = Shape::Points { radius: 0.0 };
        self.long_rows = false;
    }

    /// Sets [`long_rows`](Self::long_rows) from the bounds, the cell size and
    /// the stencil half-width.
    pub(crate) fn estimate_rows(&mut self, lo: Vec3, hi: Vec3, cell: f64, k: i32) {
        let cells: f64 =
            (0..3).map(|a| ((f64::from(hi[a]) - f64::from(lo[a])) / cell).floor() + 1.0).product();
        let per_cell = self.len() as f64 / cells.max(1.0);
        self.long_rows = rows_are_long(per_cell, k);
    }

    /// The position in `slot`.
    #[inline(always)]
    pub(crate) fn position(&self, slot: usize) -> [f32; 3] {
        [self.x[slot], self.y[slot], self.z[slot]]
    }

    /// Sizes the columns for `n` particles and records the shape. Only the
    /// padding is written: every caller overwrites all `n` slots, so the
    /// slots below `n` keep whatever the last build left there, even
    /// across a [`clear`](Self::clear) (16 MB not written per million
    /// particles).
    fn resize(&mut self, n: usize, spheres: bool, shape: Shape) {
        for column in [&mut self.x, &mut self.y, &mut self.z] {
            column.resize_for_overwrite(n);
            column.resize(n + PAD, f32::NAN);
        }
        if spheres {
            self.r.resize_for_overwrite(n);
            self.r.resize(n + PAD, 0.0);
        } else {
            self.r.clear();
        }
        self.order.resize_for_overwrite(n);
        self.shape = shape;
    }

    /// Fills the order and the columns from `dst`, the slot of each caller
    /// index (a permutation): one sequential read and one scattered 16-byte
    /// write per particle, then a sequential pass that splits the staged
    /// particles into columns.
    pub(crate) fn scatter(
        &mut self,
        points: &[Vec3],
        radii: Option<&[f32]>,
        dst: &[u32],
        shape: Shape,
    ) {
        let n = points.len();
        assert_eq!(dst.len(), n);
        self.resize(n, radii.is_some(), shape);
        // Every slot below `n` is written (`dst` is a permutation), so what
        // the last build left there need not be cleared first.
        self.staging.truncate(n);
        broadphase_storage::reserve_huge(&mut self.staging, n);
        self.staging.resize(n, [0; 4]);
        // A slice, not the `Vec`: its start and length stay in registers
        // whether or not `resize` was inlined (a store through the `Vec`
        // might otherwise change them, as far as the compiler knows).
        let staging = &mut self.staging[..n];
        for (i, (p, &slot)) in points.iter().zip(dst).enumerate() {
            // The write lands in a line the cache has not seen lately: the
            // load of the line, asked for a few particles ahead, no longer
            // holds up the stores behind it (sph1m's build 17-18 ms against
            // 14.7-15 with it).
            if let Some(&later) = dst.get(i + SCATTER_AHEAD) {
                broadphase_storage::prefetch(staging.as_ptr().wrapping_add(later as usize));
            }
            // n <= MAX_POINTS, checked by validation.
            staging[slot as usize] = [p.x.to_bits(), p.y.to_bits(), p.z.to_bits(), i as u32];
        }
        // Every slice exactly `n` long: no bounds check in the loop.
        let (x, y, z) = (&mut self.x[..n], &mut self.y[..n], &mut self.z[..n]);
        let (order, staging) = (&mut self.order[..n], &self.staging[..n]);
        for s in 0..n {
            x[s] = f32::from_bits(staging[s][0]);
            y[s] = f32::from_bits(staging[s][1]);
            z[s] = f32::from_bits(staging[s][2]);
            order[s] = staging[s][3];
        }
        if let Some(radii) = radii {
            let r = &mut self.r[..n];
            for (i, (&radius, &slot)) in radii.iter().zip(dst).enumerate() {
                if let Some(&later) = dst.get(i + SCATTER_AHEAD) {
                    broadphase_storage::prefetch(r.as_ptr().wrapping_add(later as usize));
                }
                r[slot as usize] = radius;
            }
        }
    }

    /// Sizes the columns for `n` particles (`r` for spheres only) and
    /// returns them to be filled: `x`, `y`, `z`, `r` (empty for points),
    /// each `n` long (the padding stays NaN), and `order`.
    #[allow(clippy::type_complexity)]
    pub(crate) fn columns_mut(
        &mut self,
        n: usize,
        spheres: bool,
        shape: Shape,
    ) -> (&mut [f32], &mut [f32], &mut [f32], &mut [f32], &mut [u32]) {
        self.resize(n, spheres, shape);
        let r_len = if spheres { n } else { 0 };
        (
            &mut self.x[..n],
            &mut self.y[..n],
            &mut self.z[..n],
            &mut self.r[..r_len],
            &mut self.order[..n],
        )
    }

    /// Fills the columns from `points` (and `radii` for spheres) in the
    /// order `order` (slot → caller index), copied to `self.order`:
    /// sequential writes, one random read per particle.
    pub(crate) fn gather(
        &mut self,
        points: &[Vec3],
        radii: Option<&[f32]>,
        order: &[u32],
        shape: Shape,
    ) {
        let n = points.len();
        assert_eq!(order.len(), n);
        self.resize(n, radii.is_some(), shape);
        self.order.copy_from_slice(order);
        let (x, y, z) = (&mut self.x[..n], &mut self.y[..n], &mut self.z[..n]);
        for (s, &i) in self.order.iter().enumerate() {
            let p = points[i as usize];
            x[s] = p.x;
            y[s] = p.y;
            z[s] = p.z;
        }
        if let Some(radii) = radii {
            for (r, &i) in self.r.iter_mut().zip(&self.order) {
                *r = radii[i as usize];
            }
        }
    }
}

/// `floor(v)` as an integer, saturating at the `i64` range; branch-free
/// (the x86-64 baseline has no rounding instruction, and `f64::floor`
/// becomes a library call).
#[inline(always)]
pub(crate) fn floor_i64(v: f64) -> i64 {
    let t = v as i64;
    t.saturating_sub(i64::from((t as f64) > v))
}

/// The cell of `p` in a grid of cells `1 / inv_cell` wide counted from
/// `origin`, each coordinate clamped to `limit` in floating point
/// (monotone) before it is floored, so it fits `i32`: the cell lookup of
/// the spatial hash and the spatial index.
#[inline(always)]
pub(crate) fn clamped_cell(
    p: [f64; 3],
    origin: [f64; 3],
    inv_cell: f64,
    limit: [f64; 2],
) -> [i32; 3] {
    let axis =
        |a: usize| floor_i64(((p[a] - origin[a]) * inv_cell).max(limit[0]).min(limit[1])) as i32;
    [axis(0), axis(1), axis(2)]
}

/// Stable counting sort by small keys: the insert and sort stages of the
/// grid's and the hash's builds.
///
/// Insert: one pass gives each particle its key's running count as its
/// *slot* among equal keys. Sort: an exclusive prefix sum turns counts into
/// `offsets` (`offsets[k]..offsets[k + 1]` are the slots of key `k`,
/// `buckets + 1` entries), and a second pass makes `dst[i] = offsets[key] +
/// slot`: the sorted index of particle `i`. Particles with equal keys keep
/// their input order.
pub(crate) fn counting_sort(
    keys: &[u32],
    buckets: usize,
    offsets: &mut Vec<u32>,
    dst: &mut Vec<u32>,
) {
    offsets.clear();
    offsets.resize(buckets + 1, 0);
    // The first loop writes every slot: no need to clear the last sort's.
    dst.truncate(keys.len());
    dst.resize(keys.len(), 0);
    for (slot, &key) in dst.iter_mut().zip(keys) {
        let count = &mut offsets[key as usize];
        *slot = *count;
        *count += 1;
    }
    let mut sum = 0u32;
    for offset in offsets.iter_mut() {
        let count = *offset;
        *offset = sum;
        sum += count;
    }
    for (slot, &key) in dst.iter_mut().zip(keys) {
        *slot += offsets[key as usize];
    }
}

/// Whether a row of `2k + 1` cells holding `per_cell` particles each is
/// expected to hold 16 or more: a row that fills 16 lanes.
pub(crate) fn rows_are_long(per_cell: f64, k: i32) -> bool {
    per_cell * f64::from(2 * k + 1) >= 16.0
}

/// Absolute slack added to every cell and query reach. Below about 2⁻⁷⁴
/// per axis, squares underflow in `f32` and the distance test accepts pairs
/// whose true distance exceeds the radius (two points 10⁻²³ apart are at
/// distance 0 for it); cells at least this much larger keep such pairs
/// within the stencil.
pub(crate) const ABSOLUTE_SLACK: f64 = 1.0 / (1u64 << 60) as f64;

/// The cell size for a stencil of `±k` cells to hold every particle within
/// `reach` of any particle of a cell: a little more than `reach / k`.
///
/// Cells are computed in `f64` as `floor((p - origin) / size)`. A pair that
/// passes the `f32` distance test is at most `reach · (1 + 2⁻²¹) + 2⁻⁷⁴`
/// apart on each axis (relative rounding, and underflow of tiny squares);
/// with the size `reach / k · (1 + 2⁻¹²) + 2⁻⁶⁰` that is less than
/// `k · (1 - 2⁻¹³)` cells, far more than the `f64` rounding of the cell
/// coordinates (below 2⁻²⁰ of a cell for any coordinate this crate keeps),
/// so the two cells differ by at most `k` on each axis.
///
/// A zero reach (neighbors are coincident points; any size is exact) takes
/// a size from the data instead: the widest extent over the cube root of the
/// count, so cells hold a few points each on spread data.
pub(crate) fn cell_size(reach: f32, k: u32, widest: f64, count: usize) -> f64 {
    if reach > 0.0 {
        f64::from(reach) / f64::from(k.max(1)) * (1.0 + CELL_MARGIN) + ABSOLUTE_SLACK
    } else if widest > 0.0 && widest.is_finite() {
        (widest / (count.max(1) as f64).cbrt()).max(ABSOLUTE_SLACK)
    } else {
        1.0
    }
}

/// The widest extent of bounds, in `f64` (no overflow at ±`f32::MAX`).
pub(crate) fn widest(lo: Vec3, hi: Vec3) -> f64 {
    (0..3).map(|a| f64::from(hi[a]) - f64::from(lo[a])).fold(0.0, f64::max)
}

/// The stencil half-width for the `cells_per_radius` a config asks for.
pub(crate) fn stencil_k(cells_per_radius: u32) -> u32 {
    cells_per_radius.clamp(1, MAX_K)
}

/// Largest stencil half-width any structure uses.
pub(crate) const MAX_K: u32 = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counting_sort_is_stable_and_complete() {
        let keys = [3, 1, 3, 0, 1, 3, 2];
        let (mut offsets, mut dst) = (Vec::new(), Vec::new());
        counting_sort(&keys, 5, &mut offsets, &mut dst);
        assert_eq!(offsets, [0, 1, 3, 4, 7, 7]);
        assert_eq!(dst, [4, 1, 5, 0, 2, 6, 3]);
        let points: Vec<Vec3> = (0..7).map(|i| Vec3::splat(i as f32)).collect();
        let mut sorted = Sorted::default();
        sorted.scatter(&points, None, &dst, Shape::Points { radius: 1.0 });
        assert_eq!(sorted.order[..], [3, 1, 4, 6, 0, 2, 5]);
        assert_eq!(sorted.position(2), [4.0; 3]);
        let order = vec![3, 1, 4, 6, 0, 2, 5];
        let mut gathered = Sorted::default();
        gathered.gather(&points, None, &order, Shape::Points { radius: 1.0 });
        assert_eq!(gathered.order, sorted.order);
        assert_eq!(gathered.x[..7], sorted.x[..7]);
    }

    #[test]
    fn gather_pads_with_nan() {
        let points = [Vec3::new(1.0, 2.0, 3.0), Vec3::new(4.0, 5.0, 6.0)];
        let mut sorted = Sorted::default();
        sorted.gather(&points, Some(&[0.5, 0.25]), &[1, 0], Shape::Spheres { max_radius: 0.5 });
        assert_eq!(sorted.position(0), [4.0, 5.0, 6.0]);
        assert_eq!(sorted.x.len(), 2 + PAD);
        assert!(sorted.x[2].is_nan());
        assert_eq!(&sorted.r[..3], [0.25, 0.5, 0.0]);
        assert_eq!(sorted.shape.reach(), 1.0);
    }

    #[test]
    fn a_smaller_rebuild_pads_right_after_its_last_particle() {
        let points: Vec<Vec3> = (0..40).map(|i| Vec3::splat(i as f32)).collect();
        let radii = vec![1.0; 40];
        let mut sorted = Sorted::default();
        let spheres = Shape::Spheres { max_radius: 1.0 };
        let order: Vec<u32> = (0..40).collect();
        sorted.gather(&points, Some(&radii), &order, spheres);
        let dst: Vec<u32> = (0..10).rev().collect();
        sorted.scatter(&points[..10], Some(&radii[..10]), &dst, spheres);
        assert_eq!(sorted.x.len(), 10 + PAD);
        assert_eq!(sorted.position(0), [9.0; 3]);
        for column in [&sorted.x, &sorted.y, &sorted.z] {
            assert!(column[10..].iter().all(|v| v.is_nan()), "padding must be NaN");
        }
        assert!(sorted.r[10..].iter().all(|&r| r == 0.0));
        let order: Vec<u32> = (0..12).collect();
        sorted.gather(&points[..12], None, &order, Shape::Points { radius: 1.0 });
        assert!(sorted.r.is_empty() && sorted.x[12..].iter().all(|v| v.is_nan()));
        assert_eq!(sorted.position(11), [11.0; 3]);
    }

    #[test]
    fn floor_matches_f64_floor() {
        for v in [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.999, -2.999, 1e18, -1e18, 1e300, -1e300] {
            assert_eq!(floor_i64(v), v.floor() as i64, "{v}");
        }
    }

    #[test]
    fn cells_are_a_little_larger_than_reach_over_k() {
        assert!(cell_size(2.0, 1, 9.0, 8) > 2.0 && cell_size(2.0, 1, 9.0, 8) < 2.001);
        assert!(cell_size(2.0, 2, 9.0, 8) > 1.0 && cell_size(2.0, 2, 9.0, 8) < 1.001);
        assert_eq!(cell_size(0.0, 1, 8.0, 8), 4.0);
        assert_eq!(cell_size(0.0, 1, 0.0, 8), 1.0);
        assert!(cell_size(1e-30, 1, 8.0, 8) >= ABSOLUTE_SLACK);
        assert_eq!(widest(Vec3::splat(f32::MIN), Vec3::splat(f32::MAX)), 2.0 * f64::from(f32::MAX));
        assert_eq!(stencil_k(0), 1);
        assert_eq!(stencil_k(9), MAX_K);
    }
}
