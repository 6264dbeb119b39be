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
        let Ok(()) = self.collect_pairs(out, |out, more| {
            out.reserve(more);
            Ok::<(), core::convert::Infallible>(())
        });
    }

    /// [`pairs`](Self::pairs), but running out of memory for the output is
    /// an error instead of an abort: the output grows with `try_reserve`,
    /// one batch of rows at a time, and on failure `out` holds the pairs
    /// found so far (each still once) and the error says how many.
    ///
    /// A frame's pair count is the caller's to bound; this is for callers
    /// that take arbitrary input (a pile of n boxes has n(n-1)/2 pairs: 100k
    /// coincident boxes are 5·10⁹ pairs, 40 GB of output).
    ///
    /// # Errors
    /// [`PairsError::OutOfMemory`] when the output could not grow.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&[Aabb::default(); 3])?; // three coincident boxes
    /// let mut pairs = Vec::new();
    /// grid.try_pairs(&mut pairs).expect("3 pairs fit in memory");
    /// assert_eq!(pairs.len(), 3);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn try_pairs(&mut self, out: &mut Vec<[u32; 2]>) -> Result<(), PairsError> {
        self.collect_pairs(out, |out, more| {
            out.try_reserve(more).map_err(|_| PairsError::OutOfMemory { found: out.len() })
        })
    }

    /// The all-pairs walk; `reserve` grows `out` before each batch of hits.
    fn collect_pairs<E>(
        &mut self,
        out: &mut Vec<[u32; 2]>,
        mut reserve: impl FnMut(&mut Vec<[u32; 2]>, usize) -> Result<(), E>,
    ) -> Result<(), E> {
        out.clear();
        let AdaptiveGrid { config, kernel, leaves, soa, box_count, unique, slot_pairs, .. } = self;
        if config.dedup == Dedup::FastUnique {
            unique.reset(*box_count);
        }
        for leaf in leaves.as_slice() {
            let (cols, ids) = leaf_columns(soa, leaf);
            let count = leaf.count as usize;
            // A leaf unbounded below on every axis owns every pair it holds:
            // `lo <= p` always holds, and `p < hi` holds for any two boxes in
            // the leaf (each reached it with its min below the upper plane).
            // The whole scene in one leaf (a pile) skips the test per pair.
            let owns_every_pair = leaf.region.lo == [f32::NEG_INFINITY; 3];
            // Rows in batches, so the slot-pair buffer stays bounded by
            // ROW_BATCH × leaf size even in a leaf where everything overlaps.
            for first_row in (0..count).step_by(ROW_BATCH) {
                slot_pairs.clear();
                let rows = first_row..(first_row + ROW_BATCH).min(count);
                leaf_hits(*kernel, &cols, rows, count, slot_pairs);
                reserve(out, slot_pairs.len())?;
                for &[i, j] in slot_pairs.iter() {
                    let (i, j) = (i as usize, j as usize);
                    let (a, b) = (ids[i].min(ids[j]), ids[i].max(ids[j]));
                    let keep = match config.dedup {
                        Dedup::ReferencePoint => {
                            owns_every_pair
                                || leaf.region.owns_pair(
                                    [cols.min[0][i], cols.min[1][i], cols.min[2][i]],
                                    [cols.min[0][j], cols.min[1][j], cols.min[2][j]],
                                )
                        }
                        Dedup::FastUnique => unique.insert(a, b),
                    };
                    if keep {
                        out.push([a, b]);
                    }
                }
            }
        }
        Ok(())
    }
}

/// Rows of a leaf tested per batch before their hits are filtered into the
/// output.
const ROW_BATCH: usize = 64;

/// The pair output could not be stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairsError {
    /// The allocator refused to grow the output; `found` pairs were written.
    OutOfMemory {
        /// Pairs in the output when it could not grow.
        found: usize,
    },
}

impl core::fmt::Display for PairsError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            PairsError::OutOfMemory { found } => {
                write!(f, "out of memory growing the pair output past {found} pairs")
            }
        }
    }
}

impl std::error::Error for PairsError {}
