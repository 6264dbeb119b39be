//! All pairs: every leaf's boxes against each other, repeats removed.

use super::config::Dedup;
use super::simd::leaf_hits;
use super::tree::{AdaptiveGrid, leaf_columns};

impl AdaptiveGrid {
    /// Writes every overlapping pair of the last build into `out` (cleared
    /// first), each exactly once as `[a, b]` with `a < b`, indices into the
    /// built slice. The order is deterministic for a given input and config
    /// but otherwise unspecified.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use glam::Vec3;
    /// // Touching faces overlap.
    /// let boxes = [Aabb::new(Vec3::ZERO, Vec3::ONE), Aabb::new(Vec3::X, Vec3::new(2.0, 1.0, 1.0))];
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// let mut pairs = Vec::new();
    /// grid.pairs(&mut pairs);
    /// assert_eq!(pairs, [[0, 1]]);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn pairs(&mut self, out: &mut Vec<[u32; 2]>) {
        out.clear();
        let AdaptiveGrid { config, kernel, leaves, soa, box_count, unique, slot_pairs, .. } = self;
        if config.dedup == Dedup::FastUnique {
            unique.reset(*box_count);
        }
        for leaf in leaves.as_slice() {
            let (cols, ids) = leaf_columns(soa, leaf);
            slot_pairs.clear();
            leaf_hits(*kernel, &cols, leaf.count as usize, slot_pairs);
            for &[i, j] in slot_pairs.iter() {
                let (i, j) = (i as usize, j as usize);
                let (a, b) = (ids[i].min(ids[j]), ids[i].max(ids[j]));
                let keep = match config.dedup {
                    Dedup::ReferencePoint => leaf.region.owns_pair(
                        [cols.min[0][i], cols.min[1][i], cols.min[2][i]],
                        [cols.min[0][j], cols.min[1][j], cols.min[2][j]],
                    ),
                    Dedup::FastUnique => unique.insert(a, b),
                };
                if keep {
                    out.push([a, b]);
                }
            }
        }
    }
}
