//! [`NeighborListSearch`]: neighbor lists from points in one call, the
//! seam a structure that does not live on the CPU (the GPU backend in
//! `broadphase-gpu`) implements beside the CPU structures.

use super::api::NeighborSearch;
use super::csr::NeighborLists;
use super::points::PointError;
use glam::Vec3;

/// Fixed-radius neighbor lists in one call: index `points`, then fill
/// `out` with every point's neighbors. Every [`NeighborSearch`] structure
/// implements it (build, [`neighbor_lists`](NeighborSearch::neighbor_lists),
/// [`sort_rows`](NeighborLists::sort_rows)), and so can a backend whose
/// build and search happen elsewhere, such as on a GPU, where a callback
/// per pair or per range of slots has no place.
///
/// **The answer is canonical**, so every implementation gives the same
/// lists bit for bit: row `i` is point `i` (caller indices), its entries
/// are the points `j != i` with `dx·dx + dy·dy + dz·dz <= radius·radius`
/// in `f32` (the oracles' rule, inclusive), in increasing order.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{
///     CountingSortGrid, NeighborListSearch, NeighborLists, SpatialHash,
/// };
/// use glam::Vec3;
///
/// fn lists_of(search: &mut impl NeighborListSearch, points: &[Vec3]) -> NeighborLists {
///     let mut lists = NeighborLists::default();
///     search.find_neighbor_lists(points, 1.0, &mut lists).ok().expect("valid input");
///     lists
/// }
///
/// let points: Vec<Vec3> = (0..300).map(|i| Vec3::new((i % 7) as f32, (i / 7) as f32, 0.0) * 0.8).collect();
/// let grid = lists_of(&mut CountingSortGrid::default(), &points);
/// let hash = lists_of(&mut SpatialHash::default(), &points);
/// assert_eq!(grid.offsets(), hash.offsets());
/// assert_eq!(grid.indices(), hash.indices());
/// assert!(grid.rows().all(|row| row.is_sorted()));
/// ```
pub trait NeighborListSearch {
    /// What a call refuses with: [`PointError`] for the CPU structures.
    type Error: std::error::Error;

    /// Replaces `out` with the neighbor lists of `points` within `radius`:
    /// row `i` is point `i`, entries ascending (see the trait).
    ///
    /// # Errors
    ///
    /// The implementation's; the CPU structures refuse what
    /// [`NeighborSearch::build`] refuses, leaving `out` untouched.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::{NeighborListSearch, NeighborLists, SpatialIndex};
    /// use glam::Vec3;
    /// let points = [Vec3::new(0.5, 0.0, 0.0), Vec3::ZERO, Vec3::new(9.0, 0.0, 0.0), Vec3::X];
    /// let mut lists = NeighborLists::default();
    /// SpatialIndex::default().find_neighbor_lists(&points, 1.0, &mut lists)?;
    /// assert_eq!(lists.neighbors(0), [1, 3]);
    /// assert_eq!(lists.neighbors(1), [0, 3]);
    /// assert!(lists.neighbors(2).is_empty());
    /// # Ok::<(), broadphase_neighbors::PointError>(())
    /// ```
    fn find_neighbor_lists(
        &mut self,
        points: &[Vec3],
        radius: f32,
        out: &mut NeighborLists,
    ) -> Result<(), Self::Error>;
}

impl<S: NeighborSearch> NeighborListSearch for S {
    type Error = PointError;

    fn find_neighbor_lists(
        &mut self,
        points: &[Vec3],
        radius: f32,
        out: &mut NeighborLists,
    ) -> Result<(), PointError> {
        self.build(points, radius)?;
        self.neighbor_lists(out);
        out.sort_rows();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::brute_force_neighbor_rows;
    use crate::{CountingSortGrid, SpatialHash, SpatialIndex, brute_force_neighbor_pairs};

    fn lists(search: &mut impl NeighborListSearch, points: &[Vec3], r: f32) -> Vec<Vec<u32>> {
        let mut out = NeighborLists::default();
        assert!(search.find_neighbor_lists(points, r, &mut out).is_ok());
        out.rows().map(<[u32]>::to_vec).collect()
    }

    /// Every CPU structure gives the canonical lists: brute force's rows.
    #[test]
    fn every_structure_gives_the_brute_force_rows() {
        let points: Vec<Vec3> = (0..2000u32)
            .map(|i| {
                let h = i.wrapping_mul(2_654_435_761);
                Vec3::new((h % 97) as f32, ((h >> 8) % 89) as f32, ((h >> 16) % 83) as f32) * 0.1
            })
            .collect();
        let mut pairs = Vec::new();
        brute_force_neighbor_pairs(&points, 0.75, &mut pairs).unwrap();
        let expected = brute_force_neighbor_rows(points.len(), &pairs);
        assert_eq!(lists(&mut CountingSortGrid::default(), &points, 0.75), expected);
        assert_eq!(lists(&mut SpatialHash::default(), &points, 0.75), expected);
        assert_eq!(lists(&mut SpatialIndex::default(), &points, 0.75), expected);
    }

    #[test]
    fn refused_input_leaves_the_lists() {
        let mut out = NeighborLists::default();
        let mut grid = CountingSortGrid::default();
        grid.find_neighbor_lists(&[Vec3::ZERO, Vec3::X], 1.0, &mut out).unwrap();
        let bad = grid.find_neighbor_lists(&[Vec3::NAN], 1.0, &mut out);
        assert!(matches!(bad, Err(PointError::NotFinite { index: 0, .. })));
        assert_eq!(out.offsets(), [0, 1, 2]);
    }

    #[test]
    #[should_panic(expected = "not a CSR")]
    fn copy_from_csr_rejects_offsets_that_do_not_fit() {
        NeighborLists::default().copy_from_csr(&[0, 2, 1], &[1, 0]);
    }
}
