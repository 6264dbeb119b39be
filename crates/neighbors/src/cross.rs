//! Neighbors of a query set among a data set: a structure built from `N`
//! data points answers, for each of `M` query points, which data points
//! lie within a radius (probes in a fluid, sensors among particles,
//! samples against a point cloud). One CSR row per query, in the queries'
//! order.

use crate::api::NeighborSearch;
use crate::brute_force::distance2;
use crate::csr::NeighborLists;
use crate::points::{PointError, check_radius, validate_points};
use crate::search::NeighborRule;
use glam::Vec3;

/// The largest radius a query may use on a structure with this rule.
fn largest(rule: NeighborRule) -> f32 {
    match rule {
        NeighborRule::Within { radius } => radius,
        NeighborRule::Contact { max_radius } => max_radius,
    }
}

/// Checks the radius against the structure and every query point, so a
/// refusal names the first bad query before any row is written.
pub(crate) fn check_queries(
    search: &impl NeighborSearch,
    queries: &[Vec3],
    radius: f32,
) -> Result<(), PointError> {
    check_radius(radius)?;
    let max = largest(search.rule());
    if radius > max {
        return Err(PointError::QueryRadiusTooLarge { radius, max });
    }
    validate_points(queries)?;
    Ok(())
}

/// Appends one row per query of `queries` to `out` (whose offsets already
/// hold at least the leading 0): the data points within `radius` of it
/// (spheres: touching the ball), ascending. The queries are checked.
fn append_rows(
    search: &impl NeighborSearch,
    queries: &[Vec3],
    radius: f32,
    hits: &mut Vec<u32>,
    out: &mut NeighborLists,
) {
    for &q in queries {
        // Checked by the caller: the query cannot refuse.
        search.query(q, radius, hits).unwrap_or_default();
        hits.sort_unstable();
        let base = out.total();
        NeighborLists::reserve_entries(&mut out.indices, base + hits.len());
        out.indices[base..base + hits.len()].copy_from_slice(hits);
        out.offsets.push(base + hits.len());
    }
}

/// The neighbors among `search`'s points of each of `queries`: row `q` of
/// `out` (cleared first) holds the caller indices of the data points
/// within `radius` of `queries[q]` — for a structure built from spheres,
/// those touching the ball of `radius` — in ascending order, the answer of
/// [`NeighborSearch::query`] for that point. Either set may be empty.
///
/// # Errors
/// [`PointError::InvalidRadius`] or [`PointError::QueryRadiusTooLarge`]
/// (the radius must not exceed the build radius, or the largest sphere
/// radius), [`PointError::NotFinite`] naming the first bad query by its
/// index in `queries`. `out` is then empty.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{CountingSortGrid, NeighborLists, NeighborSearch, neighbors_of};
/// use glam::Vec3;
/// let data = [Vec3::ZERO, Vec3::X, Vec3::new(5.0, 0.0, 0.0)];
/// let mut grid = CountingSortGrid::default();
/// grid.build(&data, 1.0)?;
/// let probes = [Vec3::new(0.5, 0.0, 0.0), Vec3::new(9.0, 9.0, 9.0)];
/// let mut rows = NeighborLists::default();
/// neighbors_of(&grid, &probes, 1.0, &mut rows)?;
/// assert_eq!(rows.neighbors(0), [0, 1]);
/// assert!(rows.neighbors(1).is_empty());
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
pub fn neighbors_of(
    search: &impl NeighborSearch,
    queries: &[Vec3],
    radius: f32,
    out: &mut NeighborLists,
) -> Result<(), PointError> {
    out.clear();
    check_queries(search, queries, radius)?;
    neighbors_of_range(search, queries, radius, out);
    Ok(())
}

/// [`neighbors_of`] without the checks, into `out` (cleared first): the
/// whole answer, or a job's range of the queries in the parallel fill.
pub(crate) fn neighbors_of_range(
    search: &impl NeighborSearch,
    queries: &[Vec3],
    radius: f32,
    out: &mut NeighborLists,
) {
    out.clear();
    out.offsets.push(0);
    let mut hits = std::mem::take(&mut out.scratch_indices);
    append_rows(search, queries, radius, &mut hits, out);
    out.scratch_indices = hits;
}

/// The data points within `radius` of each query, by testing every pair:
/// the oracle for [`neighbors_of`] on a structure built from points. Row
/// `q` of `out` (cleared first) holds the indices into `data`, ascending.
///
/// # Errors
/// A bad radius, the first non-finite data point, then the first
/// non-finite query (by its index in `queries`).
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{NeighborLists, brute_force_neighbors_of};
/// use glam::Vec3;
/// let mut rows = NeighborLists::default();
/// brute_force_neighbors_of(&[Vec3::ZERO, Vec3::X], &[Vec3::splat(0.5)], 1.0, &mut rows)?;
/// assert_eq!(rows.neighbors(0), [0, 1]);
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
pub fn brute_force_neighbors_of(
    data: &[Vec3],
    queries: &[Vec3],
    radius: f32,
    out: &mut NeighborLists,
) -> Result<(), PointError> {
    out.clear();
    check_radius(radius)?;
    validate_points(data)?;
    validate_points(queries)?;
    let r2 = radius * radius;
    out.offsets.push(0);
    let mut at = 0;
    for &q in queries {
        for (i, &p) in data.iter().enumerate() {
            if distance2(q, p) <= r2 {
                NeighborLists::reserve_entries(&mut out.indices, at + 1);
                out.indices[at] = i as u32;
                at += 1;
            }
        }
        out.offsets.push(at);
    }
    Ok(())
}
