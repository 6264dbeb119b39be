//! Neighbors in a simulation box whose faces wrap on some axes: a particle
//! near the right face neighbors one near the left face, at the distance
//! of the nearest image (the *minimum image* convention of molecular
//! dynamics and periodic SPH).
//!
//! The rule, computed in `f32` exactly as written so every structure and
//! the oracle agree bit for bit: on a periodic axis of length `L`,
//! `d = a - b`, then `d - L` if `d > L / 2`, `d + L` if `d < -L / 2`; on
//! other axes `d = a - b`; neighbors when `dx·dx + dy·dy + dz·dz <= r·r`,
//! summed left to right. The radius may not exceed half the box on a
//! periodic axis: beyond that two images of one particle could both be in
//! reach, and "the" distance is no longer one number.
//!
//! [`PeriodicGrid`] sorts the particles into cells at least `r` wide that
//! tile the box exactly (so the cells wrap with it), and tests each cell's
//! particles against the distinct cells around it, wrapped on periodic axes
//! — a box two cells wide has each neighbor cell once, not twice.

use crate::csr::NeighborLists;
use crate::points::{PointError, check_radius, validate_points};
use crate::sorted::ABSOLUTE_SLACK;
use broadphase_storage::{AlignedColumn, Axis};
use core::fmt;
use glam::Vec3;

/// The box particles live in, and which of its axes wrap.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::PeriodicDomain;
/// use glam::Vec3;
/// // A box 10 wide, wrapping on x and y, with walls on z.
/// let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(10.0), [true, true, false])?;
/// // 0.5 and 9.5 are 1 apart through the wrapping face.
/// let d2 = domain.distance_squared(Vec3::new(0.5, 0.0, 0.0), Vec3::new(9.5, 0.0, 0.0));
/// assert_eq!(d2, 1.0);
/// // Not through the wall.
/// let d2 = domain.distance_squared(Vec3::new(0.0, 0.0, 0.5), Vec3::new(0.0, 0.0, 9.5));
/// assert_eq!(d2, 81.0);
/// # Ok::<(), broadphase_neighbors::PeriodicError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PeriodicDomain {
    min: Vec3,
    max: Vec3,
    periodic: [bool; 3],
}

impl PeriodicDomain {
    /// The box `min..=max`, wrapping on the axes where `periodic` is true.
    ///
    /// # Errors
    /// [`PeriodicError::BadDomain`] if a bound is not finite or `max` is not
    /// above `min` on some axis (or the length overflows `f32`).
    pub fn new(min: Vec3, max: Vec3, periodic: [bool; 3]) -> Result<Self, PeriodicError> {
        for axis in 0..3 {
            let (lo, hi) = (min[axis], max[axis]);
            if !(lo.is_finite() && hi.is_finite() && hi > lo && (hi - lo).is_finite()) {
                return Err(PeriodicError::BadDomain { axis: AXES[axis], min: lo, max: hi });
            }
        }
        Ok(Self { min, max, periodic })
    }

    /// The low corner.
    pub fn min(&self) -> Vec3 {
        self.min
    }

    /// The high corner.
    pub fn max(&self) -> Vec3 {
        self.max
    }

    /// Which axes wrap.
    pub fn periodic(&self) -> [bool; 3] {
        self.periodic
    }

    /// The box's length per axis, `max - min` in `f32`.
    pub fn size(&self) -> Vec3 {
        self.max - self.min
    }

    /// `a - b`, through the nearest image on periodic axes (see the module
    /// documentation for the exact rule).
    #[inline]
    pub fn offset(&self, a: Vec3, b: Vec3) -> Vec3 {
        let size = self.size();
        let mut d = a - b;
        for axis in 0..3 {
            if self.periodic[axis] {
                let (length, half) = (size[axis], size[axis] * 0.5);
                if d[axis] > half {
                    d[axis] -= length;
                } else if d[axis] < -half {
                    d[axis] += length;
                }
            }
        }
        d
    }

    /// The squared distance between `a` and `b` through the nearest image,
    /// `dx·dx + dy·dy + dz·dz` in `f32`, left to right.
    #[inline]
    pub fn distance_squared(&self, a: Vec3, b: Vec3) -> f32 {
        let d = self.offset(a, b);
        d.x * d.x + d.y * d.y + d.z * d.z
    }

    /// Checks the radius and every point against the box.
    fn check(&self, points: &[Vec3], radius: f32) -> Result<(), PeriodicError> {
        check_radius(radius)?;
        validate_points(points)?;
        let size = self.size();
        for axis in 0..3 {
            let half = size[axis] * 0.5;
            if self.periodic[axis] && radius > half {
                return Err(PeriodicError::RadiusAboveHalfBox { radius, axis: AXES[axis], half });
            }
        }
        for (index, p) in points.iter().enumerate() {
            for axis in 0..3 {
                let value = p[axis];
                if value < self.min[axis] || value > self.max[axis] {
                    return Err(PeriodicError::OutsideDomain { index, axis: AXES[axis], value });
                }
            }
        }
        Ok(())
    }
}

const AXES: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

/// What a periodic build or oracle refuses.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum PeriodicError {
    /// A point or the radius breaks the rules every structure shares.
    Point(PointError),
    /// The box has a bound that is not finite, or is empty on an axis.
    BadDomain {
        /// The axis.
        axis: Axis,
        /// The low bound given.
        min: f32,
        /// The high bound given.
        max: f32,
    },
    /// A point lies outside the box (particles must be wrapped into it).
    OutsideDomain {
        /// Index of the point in the caller's slice.
        index: usize,
        /// The axis it is outside on.
        axis: Axis,
        /// Its coordinate.
        value: f32,
    },
    /// The radius exceeds half the box on a periodic axis.
    RadiusAboveHalfBox {
        /// The radius given.
        radius: f32,
        /// The periodic axis.
        axis: Axis,
        /// Half the box's length on it.
        half: f32,
    },
}

impl From<PointError> for PeriodicError {
    fn from(error: PointError) -> Self {
        PeriodicError::Point(error)
    }
}

impl fmt::Display for PeriodicError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            PeriodicError::Point(error) => error.fmt(f),
            PeriodicError::BadDomain { axis, min, max } => {
                write!(f, "domain {axis:?} bounds {min}..{max} are not a finite, non-empty range")
            }
            PeriodicError::OutsideDomain { index, axis, value } => {
                write!(f, "point {index}: {axis:?} coordinate {value} is outside the domain")
            }
            PeriodicError::RadiusAboveHalfBox { radius, axis, half } => write!(
                f,
                "radius {radius} exceeds half the periodic {axis:?} length ({half}): \
                 a particle could see two images of another"
            ),
        }
    }
}

impl std::error::Error for PeriodicError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PeriodicError::Point(error) => Some(error),
            _ => None,
        }
    }
}

/// The pairs within `radius` in `domain` by testing every pair: the oracle
/// for [`PeriodicGrid`]. Replaces `out` with `[a, b]`, `a < b`, in
/// increasing order.
///
/// # Errors
/// As [`PeriodicGrid::build`].
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{PeriodicDomain, brute_force_periodic_pairs};
/// use glam::Vec3;
/// let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(10.0), [true, false, false])?;
/// let points = [Vec3::new(0.2, 5.0, 5.0), Vec3::new(9.9, 5.0, 5.0), Vec3::new(5.0, 5.0, 5.0)];
/// let mut pairs = Vec::new();
/// brute_force_periodic_pairs(&domain, &points, 1.0, &mut pairs)?;
/// assert_eq!(pairs, [[0, 1]]);
/// # Ok::<(), broadphase_neighbors::PeriodicError>(())
/// ```
pub fn brute_force_periodic_pairs(
    domain: &PeriodicDomain,
    points: &[Vec3],
    radius: f32,
    out: &mut Vec<[u32; 2]>,
) -> Result<(), PeriodicError> {
    out.clear();
    domain.check(points, radius)?;
    let r2 = radius * radius;
    for (a, &pa) in points.iter().enumerate() {
        for (b, &pb) in points.iter().enumerate().skip(a + 1) {
            if domain.distance_squared(pa, pb) <= r2 {
                // validate_points bounds the count by u32::MAX.
                out.push([a as u32, b as u32]);
            }
        }
    }
    Ok(())
}

/// Candidates tested at once (a mask of hits per chunk).
const LANES: usize = 16;

/// Cells are this much wider than the radius (and a few units in the last
/// place of the coordinates more), so that a pair in reach is never two
/// cells apart for rounding.
const CELL_MARGIN: f64 = 1.0 + 1.0 / (1u64 << 20) as f64;

/// A cell grid over a [`PeriodicDomain`]: fixed-radius neighbors by the
/// nearest image.
///
/// Keeps its buffers across builds: a warm build of the same size
/// allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{NeighborLists, PeriodicDomain, PeriodicGrid};
/// use glam::Vec3;
/// let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(10.0), [true; 3])?;
/// // Opposite corners are neighbors through three faces at once.
/// let points = [Vec3::splat(0.1), Vec3::splat(9.9), Vec3::splat(5.0)];
/// let mut grid = PeriodicGrid::default();
/// grid.build(&domain, &points, 0.5)?;
/// let mut pairs = Vec::new();
/// grid.neighbor_pairs(&mut pairs);
/// assert_eq!(pairs, [[0, 1]]); // one pair: any order is sorted
/// let mut lists = NeighborLists::default();
/// grid.neighbor_lists(&mut lists);
/// assert_eq!(lists.neighbors(1), [0]);
/// # Ok::<(), broadphase_neighbors::PeriodicError>(())
/// ```
#[derive(Debug, Default)]
pub struct PeriodicGrid {
    domain: Option<PeriodicDomain>,
    r2: f32,
    /// Cells per axis.
    dims: [usize; 3],
    /// Per cell, its first slot; one more entry at the end.
    starts: Vec<u32>,
    /// Positions sorted by cell, one column per axis, and each slot's
    /// caller index.
    columns: [AlignedColumn<f32>; 3],
    order: Vec<u32>,
    /// Each point's cell, in caller order (scratch of the sort).
    cell_of: Vec<u32>,
}

impl PeriodicGrid {
    /// Sorts `points` into cells of `domain` for neighbors within `radius`.
    ///
    /// # Errors
    /// [`PeriodicError::Point`] for a bad radius or a non-finite point
    /// (naming the first), [`PeriodicError::OutsideDomain`] for the first
    /// point outside the box, [`PeriodicError::RadiusAboveHalfBox`] if the
    /// radius exceeds half the box on a periodic axis. The grid is then
    /// empty.
    pub fn build(
        &mut self,
        domain: &PeriodicDomain,
        points: &[Vec3],
        radius: f32,
    ) -> Result<(), PeriodicError> {
        self.domain = None;
        self.columns.iter_mut().for_each(AlignedColumn::clear);
        self.order.clear();
        domain.check(points, radius)?;
        self.domain = Some(*domain);
        self.r2 = radius * radius;
        // Cells at least the radius wide (a little more, for rounding),
        // tiling each axis exactly; no more cells in all than a few per
        // point, so a tiny radius cannot ask for a huge grid (wider cells
        // are always correct, only slower).
        let size = domain.size();
        let budget = (points.len() as f64 * 2.0).max(1.0);
        let mut dims = [0usize; 3];
        for axis in 0..3 {
            // The `f32` arithmetic of the rule and of a cell index is off
            // by a few units in the last place of the box's coordinates (a
            // wrap adds the length): cells are wider by that much too.
            let magnitude = domain.min[axis].abs().max(domain.max[axis].abs()).max(size[axis]);
            let rounding = 4.0 * f64::from(magnitude) / f64::from(1u32 << 23);
            // And a tiny absolute slack: squares below about 2^-149
            // underflow to 0, so two points 1e-36 apart are at distance 0
            // for the rule, whatever the radius.
            let reach = f64::from(radius) * CELL_MARGIN + rounding + ABSOLUTE_SLACK;
            let fit = (f64::from(size[axis]) / reach).floor();
            dims[axis] =
                if fit.is_finite() { fit.clamp(1.0, budget) as usize } else { budget as usize };
        }
        while dims.iter().map(|&d| d as f64).product::<f64>() > budget {
            let widest = (0..3).max_by_key(|&a| dims[a]).unwrap_or(0);
            dims[widest] = (dims[widest] / 2).max(1);
        }
        self.dims = dims;
        // Counting sort by cell, stable.
        let cells = dims[0] * dims[1] * dims[2];
        self.starts.clear();
        self.starts.resize(cells + 1, 0);
        self.cell_of.clear();
        for p in points {
            let cell = self.cell_index(domain, *p);
            self.cell_of.push(cell as u32);
            self.starts[cell + 1] += 1;
        }
        for cell in 0..cells {
            self.starts[cell + 1] += self.starts[cell];
        }
        // Padded, so that a chunk of LANES from any slot stays in bounds.
        self.columns.iter_mut().for_each(|column| column.resize(points.len() + LANES, 0.0));
        self.order.resize(points.len(), 0);
        // `starts[c]` walks forward as cell c fills, then is put back.
        for (index, (&cell, &p)) in self.cell_of.iter().zip(points).enumerate() {
            let slot = self.starts[cell as usize] as usize;
            self.starts[cell as usize] += 1;
            for axis in 0..3 {
                self.columns[axis][slot] = p[axis];
            }
            self.order[slot] = index as u32;
        }
        for cell in (1..=cells).rev() {
            self.starts[cell] = self.starts[cell - 1];
        }
        self.starts[0] = 0;
        Ok(())
    }

    /// The cell holding `p` (inside the domain).
    fn cell_index(&self, domain: &PeriodicDomain, p: Vec3) -> usize {
        let (size, dims) = (domain.size(), self.dims);
        let mut coords = [0usize; 3];
        for axis in 0..3 {
            let t = f64::from(p[axis] - domain.min[axis]) / f64::from(size[axis]);
            coords[axis] = ((t * dims[axis] as f64) as usize).min(dims[axis] - 1);
        }
        coords[0] + dims[0] * (coords[1] + dims[1] * coords[2])
    }

    /// How many points the last build holds.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether the last build holds no point.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// The slots of the distinct cells around cell `coords`, itself
    /// included, wrapped on periodic axes: the first `count` ranges of the
    /// array. Cells next to each other along x are next to each other in
    /// the slots too, and come as one range.
    fn around(&self, domain: &PeriodicDomain, coords: [usize; 3]) -> ([(usize, usize); 27], usize) {
        let dims = self.dims;
        let mut along = [([0usize; 3], 0usize); 3];
        for (axis, (cells, count)) in along.iter_mut().enumerate() {
            let (n, c) = (dims[axis] as isize, coords[axis] as isize);
            for step in [-1isize, 0, 1] {
                let at = if domain.periodic[axis] {
                    (c + step).rem_euclid(n)
                } else if (0..n).contains(&(c + step)) {
                    c + step
                } else {
                    continue;
                };
                // A box one or two cells wide wraps onto the same cell.
                if !cells[..*count].contains(&(at as usize)) {
                    cells[*count] = at as usize;
                    *count += 1;
                }
            }
            cells[..*count].sort_unstable();
        }
        let (mut out, mut count) = ([(0, 0); 27], 0);
        let [(xs, nx), (ys, ny), (zs, nz)] = along;
        for &z in &zs[..nz] {
            for &y in &ys[..ny] {
                let row = dims[0] * (y + dims[1] * z);
                let mut first = 0;
                while first < nx {
                    let mut last = first;
                    while last + 1 < nx && xs[last + 1] == xs[last] + 1 {
                        last += 1;
                    }
                    let (from, to) = (row + xs[first], row + xs[last] + 1);
                    out[count] = (self.starts[from] as usize, self.starts[to] as usize);
                    count += 1;
                    first = last + 1;
                }
            }
        }
        (out, count)
    }

    /// Calls `f(a, b)` for every neighbor pair once, caller indices, in
    /// unspecified order (`a` and `b` either way round).
    pub fn for_each_neighbor_pair(&self, f: impl FnMut(u32, u32)) {
        #[cfg(simd)]
        if let Some(avx2) = crate::scan::Avx2::detect() {
            // SAFETY: the token proves the CPU check passed.
            return unsafe { self.pairs_avx2(avx2, f) };
        }
        self.pairs(f);
    }

    /// [`pairs`](Self::pairs) compiled for AVX2, which the token proves: a
    /// chunk of candidates is two 8-lane vectors instead of four of SSE2's 4.
    #[cfg(simd)]
    #[target_feature(enable = "avx2")]
    fn pairs_avx2(&self, _: crate::scan::Avx2, f: impl FnMut(u32, u32)) {
        self.pairs(f);
    }

    /// The walk of [`for_each_neighbor_pair`](Self::for_each_neighbor_pair).
    #[inline(always)]
    fn pairs(&self, mut f: impl FnMut(u32, u32)) {
        let Some(domain) = self.domain else { return };
        let dims = self.dims;
        let [xs, ys, zs] = &self.columns;
        // The rule of `PeriodicDomain::offset` without its branches: an
        // axis that does not wrap has an infinite half, so it never does.
        let size = domain.size();
        let wrap = |axis: usize| {
            if domain.periodic[axis] {
                (size[axis], size[axis] * 0.5)
            } else {
                (0.0, f32::INFINITY)
            }
        };
        let (wx, wy, wz) = (wrap(0), wrap(1), wrap(2));
        // Branch-free, so that lanes vectorize: `d - L` past half the
        // box, `d + L` before minus half, else `d` (the zeros added change
        // at most the sign of a zero, which the square drops).
        let image = |d: f32, (length, half): (f32, f32)| {
            d - length * f32::from(u8::from(d > half)) + length * f32::from(u8::from(d < -half))
        };
        for z in 0..dims[2] {
            for y in 0..dims[1] {
                for x in 0..dims[0] {
                    let cell = x + dims[0] * (y + dims[1] * z);
                    let (from, to) = (self.starts[cell] as usize, self.starts[cell + 1] as usize);
                    if from == to {
                        continue;
                    }
                    let (ranges, count) = self.around(&domain, [x, y, z]);
                    for slot in from..to {
                        let (px, py, pz) = (xs[slot], ys[slot], zs[slot]);
                        for &(lo, hi) in &ranges[..count] {
                            // Each pair from the lower slot only: the cells'
                            // relation is symmetric and each is listed once.
                            let lo = lo.max(slot + 1);
                            if lo >= hi {
                                continue;
                            }
                            // LANES candidates at a time into a mask; the
                            // columns are padded so a chunk may run past
                            // `hi` (those lanes are masked off).
                            for chunk in (lo..hi).step_by(LANES) {
                                let (cx, cy, cz) = (
                                    &xs[chunk..chunk + LANES],
                                    &ys[chunk..chunk + LANES],
                                    &zs[chunk..chunk + LANES],
                                );
                                let mut hits = 0u32;
                                for lane in 0..LANES {
                                    let dx = image(px - cx[lane], wx);
                                    let dy = image(py - cy[lane], wy);
                                    let dz = image(pz - cz[lane], wz);
                                    let within = dx * dx + dy * dy + dz * dz <= self.r2;
                                    hits |= u32::from(within) << lane;
                                }
                                if hi - chunk < LANES {
                                    hits &= (1 << (hi - chunk)) - 1;
                                }
                                while hits != 0 {
                                    let lane = hits.trailing_zeros() as usize;
                                    hits &= hits - 1;
                                    f(self.order[slot], self.order[chunk + lane]);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// Every neighbor pair once into `out` (cleared first), `[a, b]` with
    /// `a < b`, caller indices, in unspecified order (the same for the
    /// same input).
    pub fn neighbor_pairs(&self, out: &mut Vec<[u32; 2]>) {
        out.clear();
        self.for_each_neighbor_pair(|a, b| out.push(if a < b { [a, b] } else { [b, a] }));
    }

    /// Every point's neighbors as CSR rows in caller order, each row sorted
    /// ascending.
    pub fn neighbor_lists(&self, out: &mut NeighborLists) {
        let n = self.len();
        let offsets = &mut out.offsets;
        offsets.clear();
        offsets.resize(n + 1, 0);
        self.for_each_neighbor_pair(|a, b| {
            offsets[a as usize + 1] += 1;
            offsets[b as usize + 1] += 1;
        });
        for row in 0..n {
            offsets[row + 1] += offsets[row];
        }
        let total = offsets[n];
        let indices = &mut out.indices;
        if indices.len() < total {
            indices.resize(total, 0);
        }
        // `scratch_offsets[row]` walks forward as the row fills.
        let cursor = &mut out.scratch_offsets;
        cursor.clear();
        cursor.extend_from_slice(&offsets[..n]);
        self.for_each_neighbor_pair(|a, b| {
            indices[cursor[a as usize]] = b;
            cursor[a as usize] += 1;
            indices[cursor[b as usize]] = a;
            cursor[b as usize] += 1;
        });
        for row in 0..n {
            indices[offsets[row]..offsets[row + 1]].sort_unstable();
        }
    }
}
