//! One box against the built set, descending only into occupied cells.

use super::simd::row_hits;
use super::tree::{AdaptiveGrid, cell_of, leaf_columns};
use broadphase_storage::{Aabb, InputError};

impl AdaptiveGrid {
    /// Writes into `out` (cleared first) the index of every built box that
    /// overlaps `query`, each once, in unspecified order.
    ///
    /// # Errors
    /// [`InputError`] with index 0 when the query box itself breaks the
    /// input contract; `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use glam::Vec3;
    /// let boxes: Vec<Aabb> =
    ///     (0..100).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 0.5))).collect();
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// let mut hits = Vec::new();
    /// grid.query(&Aabb::new(Vec3::splat(10.25), Vec3::splat(11.0)), &mut hits)?;
    /// hits.sort();
    /// assert_eq!(hits, [10, 11]);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn query(&self, query: &Aabb, out: &mut Vec<u32>) -> Result<(), InputError> {
        out.clear();
        query.validate(0)?;
        if !self.nodes.is_empty() {
            self.visit(0, query, out);
        }
        Ok(())
    }

    fn visit(&self, node_index: usize, query: &Aabb, out: &mut Vec<u32>) {
        let node = &self.nodes[node_index];
        if node.is_leaf {
            let leaf = &self.leaves[node.first_child as usize];
            let (cols, ids) = leaf_columns(&self.soa, leaf);
            // The kernel appends candidate slots; keep, as ids, those whose
            // reference point this leaf owns.
            let first = out.len();
            row_hits(self.kernel, &cols, query, leaf.count as usize, out);
            let q_min = query.min.to_array();
            let mut kept = first;
            for k in first..out.len() {
                let j = out[k] as usize;
                if leaf.region.owns_pair(q_min, [cols.min[0][j], cols.min[1][j], cols.min[2][j]]) {
                    out[kept] = ids[j];
                    kept += 1;
                }
            }
            out.truncate(kept);
            return;
        }
        let mut cells = !0u64;
        for (axis, (planes, table)) in node.planes.iter().zip(&AXIS_CELLS).enumerate() {
            let first = cell_of(planes, query.min[axis]);
            let last = cell_of(planes, query.max[axis]);
            cells &= table[first][last];
        }
        let mut visit = cells & node.occupancy;
        while visit != 0 {
            let cell = visit.trailing_zeros();
            visit &= visit - 1;
            let below = node.occupancy & ((1u64 << cell) - 1);
            self.visit(node.first_child as usize + below.count_ones() as usize, query, out);
        }
    }
}

/// `AXIS_CELLS[axis][first][last]`: the 64-cell mask of every cell whose
/// coordinate on `axis` is in `first..=last`.
const AXIS_CELLS: [[[u64; 4]; 4]; 3] = {
    let mut table = [[[0u64; 4]; 4]; 3];
    let mut axis = 0;
    while axis < 3 {
        let mut first = 0;
        while first < 4 {
            let mut last = first;
            while last < 4 {
                let mut mask = 0u64;
                let mut cell = 0;
                while cell < 64 {
                    let k = (cell >> (2 * axis)) & 3;
                    if k >= first && k <= last {
                        mask |= 1 << cell;
                    }
                    cell += 1;
                }
                table[axis][first][last] = mask;
                last += 1;
            }
            first += 1;
        }
        axis += 1;
    }
    table
};
