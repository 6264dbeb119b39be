//! [`NeighborSearch`], the one interface of the three structures.

use super::checked_points::CheckedPoints;
use super::csr::NeighborLists;
use super::points::PointError;
use super::search::NeighborRule;
use glam::Vec3;
use std::ops::Range;

/// Fixed-radius neighbor search over points, or contact search over
/// spheres: the interface shared by [`CountingSortGrid`](crate::CountingSortGrid),
/// [`SpatialHash`](crate::SpatialHash) and [`SpatialIndex`](crate::SpatialIndex).
///
/// **The rule.** Built with [`build`](Self::build)`(points, radius)`, two
/// points are neighbors when `distance <= radius` (inclusive, like box
/// overlap). Built with [`build_spheres`](Self::build_spheres), two spheres
/// are in contact when `distance <= r_i + r_j` (touching counts). Distances
/// are compared squared in `f32`, `dx·dx + dy·dy + dz·dz <= t·t`, exactly as
/// the brute-force oracles compute them.
///
/// **Indices.** Every result is in the caller's indices unless the method
/// says *sorted*: structures keep the particles sorted by cell, and
/// [`sorted_order`](Self::sorted_order) maps a sorted slot to the caller's
/// index, so a simulation can reorder its own arrays the same way (and read
/// [`sorted_neighbor_lists`](Self::sorted_neighbor_lists) with no remapping).
///
/// **Memory.** A structure keeps its buffers across builds; once they have
/// grown to a scene, rebuilding allocates nothing.
///
/// **Threads.** Every read method takes `&self`. The `_in` / `slots`
/// variants do the work of a range of sorted slots only, so the work splits
/// across threads by slot ranges; their results over a partition of
/// `0..len()` are exactly the whole.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{
///     CountingSortGrid, NeighborLists, NeighborSearch, SpatialHash, SpatialIndex,
///     brute_force_neighbor_pairs,
/// };
/// use glam::Vec3;
///
/// fn pairs_with(search: &mut impl NeighborSearch, points: &[Vec3]) -> Vec<[u32; 2]> {
///     search.build(points, 1.0).unwrap();
///     let mut pairs = Vec::new();
///     search.neighbor_pairs(&mut pairs);
///     pairs.sort_unstable();
///     pairs
/// }
///
/// let points: Vec<Vec3> = (0..500)
///     .map(|i| Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32) * 0.9)
///     .collect();
/// let mut expected = Vec::new();
/// brute_force_neighbor_pairs(&points, 1.0, &mut expected)?;
/// assert_eq!(pairs_with(&mut CountingSortGrid::default(), &points), expected);
/// assert_eq!(pairs_with(&mut SpatialHash::default(), &points), expected);
/// assert_eq!(pairs_with(&mut SpatialIndex::default(), &points), expected);
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
pub trait NeighborSearch {
    /// Indexes `points` for neighbors within `radius` (inclusive).
    ///
    /// # Errors
    ///
    /// [`PointError::InvalidRadius`] unless `radius` is finite and `>= 0`;
    /// [`PointError::NotFinite`] naming the first point with a NaN or
    /// infinite coordinate; [`PointError::TooManyPoints`] beyond `u32` ids.
    /// On error the structure is left empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborSearch, SpatialIndex};
    /// use glam::Vec3;
    /// let mut index = SpatialIndex::default();
    /// index.build(&[Vec3::ZERO, Vec3::splat(-7.0)], 0.5)?;
    /// assert_eq!(index.len(), 2);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn build(&mut self, points: &[Vec3], radius: f32) -> Result<(), PointError>;

    /// [`build`](Self::build) over points already checked: the same
    /// structure, without reading the points once more to check them and
    /// take their bounds (a pass over 12 MB at a million points).
    ///
    /// # Errors
    ///
    /// [`PointError::InvalidRadius`] for a bad radius; the points cannot
    /// be refused. On error the structure is left empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CheckedPoints, NeighborSearch, SpatialHash};
    /// let mut points = CheckedPoints::default();
    /// points.copy_from_xyz(&[[0.0, 0.0, 0.0], [0.0, 0.9, 0.0]])?;
    /// let mut hash = SpatialHash::default();
    /// hash.build_checked(&points, 1.0)?;
    /// assert_eq!(hash.len(), 2);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn build_checked(&mut self, points: &CheckedPoints, radius: f32) -> Result<(), PointError> {
        self.build(points, radius)
    }

    /// Indexes spheres (`centers[i]`, `radii[i]`) for contact:
    /// `distance <= r_i + r_j`. Cells are sized for the largest radius, so
    /// radii should not spread over orders of magnitude.
    ///
    /// # Errors
    ///
    /// [`PointError::LengthMismatch`]; otherwise the first bad center
    /// ([`PointError::NotFinite`]) or radius
    /// ([`PointError::InvalidSphereRadius`]: NaN, infinite or negative) in
    /// index order. On error the structure is left empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborSearch};
    /// use glam::Vec3;
    /// let mut grid = CountingSortGrid::default();
    /// let centers = [Vec3::ZERO, Vec3::new(3.0, 0.0, 0.0), Vec3::new(9.0, 0.0, 0.0)];
    /// grid.build_spheres(&centers, &[1.0, 2.0, 1.0])?; // 0 and 1 touch
    /// let mut contacts = Vec::new();
    /// grid.neighbor_pairs(&mut contacts);
    /// assert_eq!(contacts, [[0, 1]]);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn build_spheres(&mut self, centers: &[Vec3], radii: &[f32]) -> Result<(), PointError>;

    /// Number of particles indexed.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborSearch, SpatialHash};
    /// assert_eq!(SpatialHash::default().len(), 0);
    /// ```
    fn len(&self) -> usize;

    /// Whether nothing is indexed.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborSearch, SpatialHash};
    /// assert!(SpatialHash::default().is_empty());
    /// ```
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What the last build indexed, and so what "neighbor" means.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborRule, NeighborSearch, SpatialIndex};
    /// use glam::Vec3;
    /// let mut index = SpatialIndex::default();
    /// index.build(&[Vec3::ZERO], 2.0)?;
    /// assert_eq!(index.rule(), NeighborRule::Within { radius: 2.0 });
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn rule(&self) -> NeighborRule;

    /// The caller's index of the particle in each sorted slot: particles
    /// sorted by cell, so neighbors sit close together in memory. Reorder
    /// per-particle arrays by it for cache locality.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborSearch};
    /// use glam::Vec3;
    /// let points = [Vec3::new(9.0, 0.0, 0.0), Vec3::ZERO, Vec3::new(4.5, 0.0, 0.0)];
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&points, 1.0)?;
    /// let reordered: Vec<Vec3> = grid.sorted_order().iter().map(|&i| points[i as usize]).collect();
    /// assert_eq!(reordered, [points[1], points[2], points[0]]);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn sorted_order(&self) -> &[u32];

    /// Replaces `out` with the particles within `radius` of `point`
    /// (points), or touching the ball of `radius` around it (spheres:
    /// `distance <= radius + r_i`), as caller indices in unspecified order.
    ///
    /// # Errors
    ///
    /// [`PointError::NotFinite`] (index 0) for a bad `point`,
    /// [`PointError::InvalidRadius`] for a bad `radius`,
    /// [`PointError::QueryRadiusTooLarge`] when `radius` exceeds the build
    /// radius (points) or the largest sphere radius (spheres). `out` is then
    /// left untouched.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborSearch, SpatialHash};
    /// use glam::Vec3;
    /// let points = [Vec3::ZERO, Vec3::new(1.0, 0.0, 0.0), Vec3::new(2.0, 0.0, 0.0)];
    /// let mut hash = SpatialHash::default();
    /// hash.build(&points, 1.0)?;
    /// let mut hits = Vec::new();
    /// hash.query(Vec3::new(1.5, 0.0, 0.0), 0.5, &mut hits)?; // inclusive: both ends
    /// hits.sort_unstable();
    /// assert_eq!(hits, [1, 2]);
    /// assert!(hash.query(Vec3::ZERO, 2.0, &mut hits).is_err()); // beyond the build radius
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn query(&self, point: Vec3, radius: f32, out: &mut Vec<u32>) -> Result<(), PointError>;

    /// Calls `f(a, b)` once for every neighbor (or contact) pair, caller
    /// indices with `a < b`, in unspecified order.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborSearch, SpatialIndex};
    /// use glam::Vec3;
    /// let points = [Vec3::ZERO, Vec3::X, Vec3::new(0.0, 0.0, 5.0)];
    /// let mut index = SpatialIndex::default();
    /// index.build(&points, 1.0)?;
    /// let mut count = 0;
    /// index.for_each_neighbor_pair(|a, b| {
    ///     assert_eq!((a, b), (0, 1));
    ///     count += 1;
    /// });
    /// assert_eq!(count, 1);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn for_each_neighbor_pair(&self, f: impl FnMut(u32, u32)) {
        self.for_each_neighbor_pair_in(0..self.len(), f);
    }

    /// Like [`for_each_neighbor_pair`](Self::for_each_neighbor_pair), for
    /// the pairs whose lower *sorted slot* is in `slots` (clamped to
    /// `0..len()`): over a partition of `0..len()` into ranges, every pair
    /// is reported exactly once. The unit of work for a parallel walk.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborSearch, SpatialHash};
    /// use glam::Vec3;
    /// let points: Vec<Vec3> = (0..100).map(|i| Vec3::new(i as f32 * 0.5, 0.0, 0.0)).collect();
    /// let mut hash = SpatialHash::default();
    /// hash.build(&points, 1.0)?;
    /// let (mut first, mut second) = (0, 0);
    /// hash.for_each_neighbor_pair_in(0..37, |_, _| first += 1);
    /// hash.for_each_neighbor_pair_in(37..100, |_, _| second += 1);
    /// assert_eq!(first + second, 99 + 98); // pairs 0.5 and 1.0 apart
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn for_each_neighbor_pair_in(&self, slots: Range<usize>, f: impl FnMut(u32, u32));

    /// [`for_each_neighbor_pair_in`](Self::for_each_neighbor_pair_in)'s
    /// pairs, `[a, b]` with `a < b`, handed to `f` a slice at a time, in the
    /// same order: up to 256 pairs at once from the structures here, one
    /// from the default. `f` can append a whole slice at a time
    /// (`Vec::extend_from_slice`).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborSearch};
    /// use glam::Vec3;
    /// let points: Vec<Vec3> = (0..100).map(|i| Vec3::new(i as f32 * 0.5, 0.0, 0.0)).collect();
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&points, 1.0)?;
    /// let mut pairs = Vec::new();
    /// grid.for_each_neighbor_pair_batch_in(0..grid.len(), |batch| pairs.extend_from_slice(batch));
    /// assert_eq!(pairs.len(), 99 + 98); // pairs 0.5 and 1.0 apart
    /// assert!(pairs.iter().all(|&[a, b]| a < b));
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn for_each_neighbor_pair_batch_in(&self, slots: Range<usize>, mut f: impl FnMut(&[[u32; 2]])) {
        self.for_each_neighbor_pair_in(slots, |a, b| f(&[[a, b]]));
    }

    /// Replaces `out` with every neighbor (or contact) pair once, `[a, b]`
    /// with `a < b`, in unspecified order.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborSearch};
    /// use glam::Vec3;
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&[Vec3::X, Vec3::ZERO, Vec3::Y], 1.0)?;
    /// let mut pairs = Vec::new();
    /// grid.neighbor_pairs(&mut pairs);
    /// pairs.sort_unstable();
    /// assert_eq!(pairs, [[0, 1], [1, 2]]);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn neighbor_pairs(&self, out: &mut Vec<[u32; 2]>) {
        out.clear();
        self.for_each_neighbor_pair(|a, b| out.push([a, b]));
    }

    /// Replaces `out` with every particle's neighbors in CSR form, rows and
    /// entries in caller indices (row `i` is particle `i`; it never lists
    /// itself). Computed in sorted order, then remapped: the remap is a
    /// second pass over the entries, which
    /// [`sorted_neighbor_lists`](Self::sorted_neighbor_lists) avoids.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborLists, NeighborSearch, SpatialIndex};
    /// use glam::Vec3;
    /// let points = [Vec3::ZERO, Vec3::new(0.0, 0.0, 9.0), Vec3::new(0.0, 0.5, 0.0)];
    /// let mut index = SpatialIndex::default();
    /// index.build(&points, 1.0)?;
    /// let mut lists = NeighborLists::default();
    /// index.neighbor_lists(&mut lists);
    /// assert_eq!(lists.neighbors(0), [2]);
    /// assert!(lists.neighbors(1).is_empty());
    /// assert_eq!(lists.neighbors(2), [0]);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn neighbor_lists(&self, out: &mut NeighborLists);

    /// Replaces `out` with the neighbor lists of the sorted slots in
    /// `slots` (clamped to `0..len()`): row `i` is slot `slots.start + i`,
    /// entries are sorted slots. With per-particle arrays reordered by
    /// [`sorted_order`](Self::sorted_order) this is the SPH loop's layout,
    /// with no remapping; a range of slots is the unit of work for a
    /// parallel fill.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch};
    /// use glam::Vec3;
    /// let points = [Vec3::new(5.0, 0.0, 0.0), Vec3::ZERO, Vec3::new(0.5, 0.0, 0.0)];
    /// let mut grid = CountingSortGrid::default();
    /// grid.build(&points, 1.0)?;
    /// let mut lists = NeighborLists::default();
    /// grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
    /// let order = grid.sorted_order();
    /// for (slot, row) in lists.rows().enumerate() {
    ///     for &other in row {
    ///         let (a, b) = (order[slot] as usize, order[other as usize] as usize);
    ///         assert!(points[a].distance(points[b]) <= 1.0);
    ///     }
    /// }
    /// assert_eq!(lists.total(), 2);
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn sorted_neighbor_lists(&self, slots: Range<usize>, out: &mut NeighborLists);

    /// [`sorted_neighbor_lists`](Self::sorted_neighbor_lists) appended to
    /// `out`'s rows instead of replacing them, as
    /// [`NeighborLists::append_rows`] joins them: what lets a parallel fill
    /// write rows straight into the answer. The structures here override
    /// it; this default fills a fresh list and appends it.
    #[doc(hidden)]
    fn append_sorted_neighbor_lists(&self, slots: Range<usize>, out: &mut NeighborLists) {
        let mut part = NeighborLists::default();
        self.sorted_neighbor_lists(slots, &mut part);
        out.append_rows(&part);
    }

    /// [`append_sorted_neighbor_lists`](Self::append_sorted_neighbor_lists)
    /// with each entry the caller's index of its particle (rows still in
    /// sorted order): what a parallel fill of the caller-order lists moves
    /// into place. The structures here read the entries out as caller
    /// indices in their walk; this default maps the sorted rows' entries.
    #[doc(hidden)]
    fn append_caller_entry_rows(&self, slots: Range<usize>, out: &mut NeighborLists) {
        let from = out.total();
        self.append_sorted_neighbor_lists(slots, out);
        let end = out.total();
        crate::search::to_ids(&mut out.indices[from..end], self.sorted_order());
    }

    /// The work behind [`neighbors_of`](crate::neighbors_of), which checks
    /// the queries and the radius first: replaces `out` with one row per
    /// query, the particles [`query`](Self::query) finds, ascending. The
    /// structures here override it (the counting-sort grid visits the
    /// queries in cell order); this default queries one point at a time.
    #[doc(hidden)]
    fn query_rows(&self, queries: &[Vec3], radius: f32, out: &mut NeighborLists) {
        crate::cross::one_query_at_a_time(queries, out, |q, hits| {
            // Checked by the caller: the query cannot refuse.
            self.query(q, radius, hits).unwrap_or_default();
        });
    }
}

/// Implements [`NeighborSearch`] for a structure that implements
/// [`Cells`](super::search::Cells) and [`Index`].
macro_rules! impl_neighbor_search {
    ($ty:ty) => {
        impl $crate::api::NeighborSearch for $ty {
            fn build(
                &mut self,
                points: &[glam::Vec3],
                radius: f32,
            ) -> Result<(), $crate::points::PointError> {
                $crate::api::Index::reset(self);
                $crate::points::check_radius(radius)?;
                let bounds = $crate::points::validate_points(points)?;
                let shape = $crate::sorted::Shape::Points { radius };
                $crate::api::Index::index(self, points, None, bounds, shape);
                Ok(())
            }

            fn build_checked(
                &mut self,
                points: &$crate::CheckedPoints,
                radius: f32,
            ) -> Result<(), $crate::points::PointError> {
                $crate::api::Index::reset(self);
                $crate::points::check_radius(radius)?;
                let shape = $crate::sorted::Shape::Points { radius };
                $crate::api::Index::index(self, points, None, points.bounds(), shape);
                Ok(())
            }

            fn build_spheres(
                &mut self,
                centers: &[glam::Vec3],
                radii: &[f32],
            ) -> Result<(), $crate::points::PointError> {
                $crate::api::Index::reset(self);
                let (bounds, max_radius) = $crate::points::validate_spheres(centers, radii)?;
                let shape = $crate::sorted::Shape::Spheres { max_radius };
                $crate::api::Index::index(self, centers, Some(radii), bounds, shape);
                Ok(())
            }

            fn len(&self) -> usize {
                $crate::search::Cells::sorted(self).len()
            }

            fn rule(&self) -> $crate::search::NeighborRule {
                $crate::search::Cells::sorted(self).shape.into()
            }

            fn sorted_order(&self) -> &[u32] {
                &$crate::search::Cells::sorted(self).order
            }

            fn query(
                &self,
                point: glam::Vec3,
                radius: f32,
                out: &mut Vec<u32>,
            ) -> Result<(), $crate::points::PointError> {
                $crate::search::query(self, point, radius, out)
            }

            fn for_each_neighbor_pair_in(
                &self,
                slots: std::ops::Range<usize>,
                f: impl FnMut(u32, u32),
            ) {
                $crate::search::pairs_in(self, slots, f);
            }

            fn for_each_neighbor_pair_batch_in(
                &self,
                slots: std::ops::Range<usize>,
                f: impl FnMut(&[[u32; 2]]),
            ) {
                $crate::search::pair_batches_in(self, slots, f);
            }

            fn neighbor_pairs(&self, out: &mut Vec<[u32; 2]>) {
                out.clear();
                $crate::search::pairs_into(self, out);
            }

            fn neighbor_lists(&self, out: &mut $crate::csr::NeighborLists) {
                $crate::search::caller_rows(self, out);
            }

            fn sorted_neighbor_lists(
                &self,
                slots: std::ops::Range<usize>,
                out: &mut $crate::csr::NeighborLists,
            ) {
                $crate::search::sorted_rows(self, slots, out);
            }

            fn append_sorted_neighbor_lists(
                &self,
                slots: std::ops::Range<usize>,
                out: &mut $crate::csr::NeighborLists,
            ) {
                $crate::search::append_sorted_rows(self, slots, out);
            }

            fn append_caller_entry_rows(
                &self,
                slots: std::ops::Range<usize>,
                out: &mut $crate::csr::NeighborLists,
            ) {
                $crate::search::append_caller_entry_rows(self, slots, out);
            }

            fn query_rows(
                &self,
                queries: &[glam::Vec3],
                radius: f32,
                out: &mut $crate::csr::NeighborLists,
            ) {
                $crate::cross::query_rows(self, queries, radius, out);
            }
        }
    };
}
pub(crate) use impl_neighbor_search;

/// The build steps a structure implements; validation and the public entry
/// points are shared ([`impl_neighbor_search`]).
pub(crate) trait Index {
    /// Forgets every particle (keeping memory): the state after a failed build.
    fn reset(&mut self);

    /// Indexes validated particles; `bounds` is `None` for an empty set.
    fn index(
        &mut self,
        points: &[Vec3],
        radii: Option<&[f32]>,
        bounds: Option<(Vec3, Vec3)>,
        shape: super::sorted::Shape,
    );
}
