//! Neighbors of a query set among a data set: a structure built from `N`
//! data points answers, for each of `M` query points, which data points
//! lie within a radius (probes in a fluid, sensors among particles,
//! samples against a point cloud). One CSR row per query, in the queries'
//! order.

use crate::api::NeighborSearch;
use crate::brute_force::distance2;
use crate::csr::NeighborLists;
use crate::points::{PointError, check_radius, validate_points};
#[cfg(simd)]
use crate::scan::Columns;
use crate::search::{Cells, NeighborRule};
use broadphase_storage::AlignedColumn;
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
    search.query_rows(queries, radius, out);
}

/// The queries sorted by the cell they fall in, kept across calls in the
/// output lists (only the SIMD block walks use it).
#[derive(Clone, Debug, Default)]
#[cfg_attr(not(simd), allow(dead_code))]
pub(crate) struct QueryScratch {
    /// Each query's cell index (queries in the caller's order).
    keys: Vec<u32>,
    /// Queries per cell, then each cell's first place.
    counts: Vec<u32>,
    /// `order[place]`: the query at that place in cell order.
    order: Vec<u32>,
    /// The sorted queries' coordinates and cells.
    x: AlignedColumn<f32>,
    y: AlignedColumn<f32>,
    z: AlignedColumn<f32>,
    cells: Vec<[i32; 3]>,
}

/// [`NeighborSearch::query_rows`] for the structures here: with AVX2 or
/// AVX-512, a structure whose slots run along rows of cells (the
/// counting-sort grid) sorts the queries by cell and runs them through the
/// block walk, eight or sixteen neighboring queries against each candidate
/// (`block.rs`); otherwise one query at a time.
pub(crate) fn query_rows<C: Cells>(c: &C, queries: &[Vec3], radius: f32, out: &mut NeighborLists) {
    #[cfg(simd)]
    if c.sorted().len() > 0
        && let Some(kernel) = crate::search::block_simd_for(c)
    {
        let mut scratch = std::mem::take(&mut out.queries);
        scratch.sort(c, queries);
        let q = Columns { x: &scratch.x, y: &scratch.y, z: &scratch.z, r: &[] };
        let (offsets, indices) = (&mut out.scratch_offsets, &mut out.scratch_indices);
        offsets.clear();
        offsets.push(0);
        crate::search::query_blocks(kernel, c, &q, &scratch.cells, radius, offsets, indices);
        // Rows to the queries' order, entries to the data's caller
        // indices, ascending.
        out.remap_rows_from_scratch(&scratch.order, Some(&c.sorted().order), true);
        out.queries = scratch;
        return;
    }
    one_query_at_a_time(queries, out, |q, hits| {
        // Checked by the caller: the query cannot refuse.
        crate::search::query(c, q, radius, hits).unwrap_or_default();
    });
}

/// Replaces `out` with one row per query, each what `query(q, hits)`
/// leaves in `hits`, sorted.
pub(crate) fn one_query_at_a_time(
    queries: &[Vec3],
    out: &mut NeighborLists,
    mut query: impl FnMut(Vec3, &mut Vec<u32>),
) {
    out.clear();
    out.offsets.push(0);
    let mut hits = std::mem::take(&mut out.scratch_indices);
    for &q in queries {
        query(q, &mut hits);
        hits.sort_unstable();
        let base = out.total();
        NeighborLists::reserve_entries(&mut out.indices, base + hits.len());
        out.indices[base..base + hits.len()].copy_from_slice(&hits);
        out.offsets.push(base + hits.len());
    }
    out.scratch_indices = hits;
}

impl QueryScratch {
    /// Sorts `queries` by the cell of `c` each falls in (clamped into the
    /// grid, as a query's search is), stably: a counting sort on the
    /// cells' indices.
    #[cfg_attr(not(simd), allow(dead_code))]
    fn sort<C: Cells>(&mut self, c: &C, queries: &[Vec3]) {
        let cell_of = |q: Vec3| c.cell_of([q.x, q.y, q.z].map(f64::from));
        self.keys.clear();
        self.keys.extend(queries.iter().map(|&q| c.cell_index(cell_of(q)) as u32));
        self.counts.clear();
        self.counts.resize(c.cells_len() + 1, 0);
        for &key in &self.keys {
            self.counts[key as usize] += 1;
        }
        let mut sum = 0;
        for count in self.counts.iter_mut() {
            (*count, sum) = (sum, sum + *count);
        }
        self.order.clear();
        self.order.resize(queries.len(), 0);
        for (i, &key) in self.keys.iter().enumerate() {
            let place = &mut self.counts[key as usize];
            // Queries fit u32: validated like points (MAX_POINTS).
            self.order[*place as usize] = i as u32;
            *place += 1;
        }
        let sorted = self.order.iter().map(|&i| queries[i as usize]);
        // Every place is written below: only a longer column is filled.
        for column in [&mut self.x, &mut self.y, &mut self.z] {
            column.truncate(queries.len());
            column.resize(queries.len(), 0.0);
        }
        self.cells.clear();
        for (place, q) in sorted.enumerate() {
            (self.x[place], self.y[place], self.z[place]) = (q.x, q.y, q.z);
            self.cells.push(cell_of(q));
        }
    }
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
