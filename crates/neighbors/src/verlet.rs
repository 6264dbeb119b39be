//! Verlet (skin) lists: neighbor lists built once with `radius + skin`,
//! reused while every particle stays within `skin / 2` of where it was,
//! and filtered to the exact `radius` for the positions of each step.
//!
//! Two particles now within `radius` moved at most `skin / 2` each since
//! the build, so they were within `radius + skin` then and are in the
//! lists. A simulation pays the search once every few steps and a cheap
//! filter in between.

use crate::api::NeighborSearch;
use crate::brute_force::distance2;
use crate::csr::NeighborLists;
use crate::points::{MAX_RADIUS, PointError, check_radius, validate_points};
use broadphase_storage::AlignedColumn;
use core::fmt;
use glam::Vec3;

/// What [`VerletLists`] refuses.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum VerletError {
    /// A point or the radius breaks the rules every structure shares.
    Point(PointError),
    /// The skin is NaN, infinite or negative, or `radius + skin` exceeds
    /// [`MAX_RADIUS`].
    BadSkin {
        /// The skin given.
        skin: f32,
    },
    /// The positions are not as many as when the lists were built.
    CountChanged {
        /// Points at the build.
        built: usize,
        /// Points given now.
        now: usize,
    },
    /// The lists were never built.
    NotBuilt,
}

impl From<PointError> for VerletError {
    fn from(error: PointError) -> Self {
        VerletError::Point(error)
    }
}

impl fmt::Display for VerletError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            VerletError::Point(error) => error.fmt(f),
            VerletError::BadSkin { skin } => write!(
                f,
                "skin {skin} is not a finite number >= 0 with radius + skin <= {MAX_RADIUS}"
            ),
            VerletError::CountChanged { built, now } => {
                write!(f, "the lists were built for {built} points, not {now}")
            }
            VerletError::NotBuilt => write!(f, "the lists were never built"),
        }
    }
}

impl std::error::Error for VerletError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            VerletError::Point(error) => Some(error),
            _ => None,
        }
    }
}

/// Neighbor lists within `radius + skin`, reused across steps (see the
/// module documentation).
///
/// Keeps its buffers: after the first build, a step (check, filter, and
/// the occasional rebuild of the same size) allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{CountingSortGrid, NeighborLists, VerletLists};
/// use glam::Vec3;
/// let mut points = vec![Vec3::ZERO, Vec3::new(1.2, 0.0, 0.0), Vec3::new(5.0, 0.0, 0.0)];
/// let mut grid = CountingSortGrid::default();
/// let mut verlet = VerletLists::new(1.0, 0.5)?; // neighbors within 1, skin 0.5
/// let mut lists = NeighborLists::default();
/// assert!(verlet.update(&mut grid, &points)?); // first call builds
/// verlet.neighbors_within(&points, &mut lists)?;
/// assert!(lists.neighbors(0).is_empty()); // 1.2 apart: only in the skin
///
/// points[1].x = 1.0; // moved 0.2 < skin / 2: the lists still hold
/// assert!(!verlet.update(&mut grid, &points)?);
/// verlet.neighbors_within(&points, &mut lists)?;
/// assert_eq!(lists.neighbors(0), [1]);
///
/// points[2].x = 1.5; // moved 3.5: rebuilt
/// assert!(verlet.update(&mut grid, &points)?);
/// # Ok::<(), broadphase_neighbors::VerletError>(())
/// ```
#[derive(Debug, Default)]
pub struct VerletLists {
    radius: f32,
    skin: f32,
    /// Positions at the last build; empty before the first.
    built_at: Vec<Vec3>,
    built: bool,
    /// Sorted-order lists within `radius + skin` at the last build: rows
    /// and entries are the structure's slots, so a row's neighbors sit
    /// near it in memory.
    lists: NeighborLists,
    /// `order[slot]`: the caller's index of the particle in that slot.
    order: Vec<u32>,
    /// Scratch of the filter: the current positions in slot order, as
    /// columns.
    current: [AlignedColumn<f32>; 3],
}

impl VerletLists {
    /// Lists for neighbors within `radius`, built with `radius + skin`.
    ///
    /// # Errors
    /// [`VerletError::Point`] for a bad radius, [`VerletError::BadSkin`]
    /// for a bad skin.
    pub fn new(radius: f32, skin: f32) -> Result<Self, VerletError> {
        check_radius(radius)?;
        if !(skin.is_finite() && skin >= 0.0 && radius + skin <= MAX_RADIUS) {
            return Err(VerletError::BadSkin { skin });
        }
        Ok(Self { radius, skin, ..Self::default() })
    }

    /// The radius neighbors are filtered to.
    pub fn radius(&self) -> f32 {
        self.radius
    }

    /// The skin the lists are built with beyond the radius.
    pub fn skin(&self) -> f32 {
        self.skin
    }

    /// Builds the lists for `points` with `search` (any structure), and
    /// remembers the positions.
    ///
    /// # Errors
    /// The structure's [`PointError`] (the first bad point); the lists are
    /// then not built.
    pub fn rebuild(
        &mut self,
        search: &mut impl NeighborSearch,
        points: &[Vec3],
    ) -> Result<(), VerletError> {
        self.built = false;
        search.build(points, self.radius + self.skin)?;
        search.sorted_neighbor_lists(0..points.len(), &mut self.lists);
        // The vector filter loads whole steps past a row's end.
        let total = self.lists.total();
        NeighborLists::reserve_entries(&mut self.lists.indices, total);
        self.order.clear();
        self.order.extend_from_slice(search.sorted_order());
        self.built_at.clear();
        self.built_at.extend_from_slice(points);
        self.built = true;
        Ok(())
    }

    /// Whether the lists still hold every pair within the radius for
    /// `points`: every point is within `skin / 2` of where it was at the
    /// build, less a margin for the rounding of the `f32` distance test
    /// (displacements are measured in `f64`), or no point moved at all.
    ///
    /// # Errors
    /// [`VerletError::NotBuilt`], [`VerletError::CountChanged`], or the
    /// first non-finite point.
    pub fn is_valid(&self, points: &[Vec3]) -> Result<bool, VerletError> {
        self.check_built_for(points)?;
        validate_points(points)?;
        // A pair in reach now is within radius·(1 + 2^-21) in exact terms;
        // it was within that plus twice the displacement at the build, and
        // the f32 test at radius + skin accepts up to (radius + skin) less
        // its own rounding. Half the skin, less a margin for both.
        let reach = f64::from(self.radius) + f64::from(self.skin);
        let allowed = f64::from(self.skin) * 0.5 - reach / f64::from(1u32 << 18);
        let allowed_sq = if allowed > 0.0 { allowed * allowed } else { 0.0 };
        let mut still = true;
        let mut moved = false;
        for (now, then) in points.iter().zip(&self.built_at) {
            let d = (0..3).map(|a| f64::from(now[a]) - f64::from(then[a]));
            let sq: f64 = d.map(|c| c * c).sum();
            still &= sq <= allowed_sq;
            moved |= sq > 0.0;
        }
        // Unmoved points give the build's pairs exactly, skin or none.
        Ok(still && (allowed > 0.0 || !moved))
    }

    /// The lists are built, for as many points as `points` has.
    fn check_built_for(&self, points: &[Vec3]) -> Result<(), VerletError> {
        if !self.built {
            return Err(VerletError::NotBuilt);
        }
        if points.len() != self.built_at.len() {
            return Err(VerletError::CountChanged {
                built: self.built_at.len(),
                now: points.len(),
            });
        }
        Ok(())
    }

    /// Rebuilds if the lists no longer hold ([`is_valid`](Self::is_valid)
    /// is false, or they were never built); returns whether it rebuilt.
    ///
    /// # Errors
    /// As [`rebuild`](Self::rebuild); a changed point count rebuilds.
    pub fn update(
        &mut self,
        search: &mut impl NeighborSearch,
        points: &[Vec3],
    ) -> Result<bool, VerletError> {
        let valid = match self.is_valid(points) {
            Ok(valid) => valid,
            Err(VerletError::NotBuilt | VerletError::CountChanged { .. }) => false,
            Err(other) => return Err(other),
        };
        if !valid {
            self.rebuild(search, points)?;
        }
        Ok(!valid)
    }

    /// The neighbors within the radius for `points`, from the kept lists:
    /// rows in caller order, entries as caller indices in the order of the
    /// structure's slots, into `out` (the same rule as
    /// [`brute_force_neighbor_pairs`](crate::brute_force_neighbor_pairs)).
    /// Exact only while [`is_valid`](Self::is_valid) holds; use
    /// [`update`](Self::update) first.
    ///
    /// The positions are first copied into the structure's slot order (one
    /// scattered read each) and the rows filtered in that order, where a
    /// row's neighbors sit near it in memory whatever the caller's order;
    /// the rows are then moved to caller order, as
    /// [`neighbor_lists`](crate::NeighborSearch::neighbor_lists) does.
    ///
    /// # Errors
    /// [`VerletError::NotBuilt`] or [`VerletError::CountChanged`].
    pub fn neighbors_within(
        &mut self,
        points: &[Vec3],
        out: &mut NeighborLists,
    ) -> Result<(), VerletError> {
        self.check_built_for(points)?;
        let r2 = self.radius * self.radius;
        // One scattered read a point, into all three columns.
        let [x, y, z] = &mut self.current;
        // Every slot is written below: only a longer column is filled.
        for column in [&mut *x, &mut *y, &mut *z] {
            column.truncate(self.order.len());
            column.resize(self.order.len(), 0.0);
        }
        for (slot, &i) in self.order.iter().enumerate() {
            let p = points[i as usize];
            (x[slot], y[slot], z[slot]) = (p.x, p.y, p.z);
        }
        let [x, y, z] = &self.current;
        let (offsets, indices) = (&mut out.scratch_offsets, &mut out.scratch_indices);
        offsets.clear();
        offsets.push(0);
        NeighborLists::reserve_entries(indices, self.lists.total());
        #[cfg(simd)]
        if let Some(avx2) = crate::scan::Avx2::detect().filter(|_| x.len() <= i32::MAX as usize) {
            crate::simd::filter_rows(avx2, [x, y, z], r2, &self.lists, offsets, indices);
            out.remap_from_scratch(&self.order);
            return Ok(());
        }
        let mut at = 0;
        for slot in 0..x.len() {
            let p = Vec3::new(x[slot], y[slot], z[slot]);
            for &j in self.lists.neighbors(slot) {
                // Written always, kept if within: a branch on it would
                // mispredict for most of the skin's pairs.
                indices[at] = j;
                let q = Vec3::new(x[j as usize], y[j as usize], z[j as usize]);
                at += usize::from(distance2(p, q) <= r2);
            }
            offsets.push(at);
        }
        out.remap_from_scratch(&self.order);
        Ok(())
    }
}
