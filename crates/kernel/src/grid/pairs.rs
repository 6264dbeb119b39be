//! All pairs of a kept build: every leaf's boxes against each other.

use super::hierarchy::AdaptiveGrid;
use super::leaf::{Fallible, Growing, LeafContext, PairOut, leaf_pairs};

impl AdaptiveGrid {
    /// Writes every overlapping pair of the kept build into `out` (cleared
    /// first), each exactly once as `[a, b]` with `a < b`, indices into the
    /// built slice. The order is deterministic for a given input and config
    /// but otherwise unspecified. For one frame's pairs,
    /// [`find_pairs`](Self::find_pairs) is faster.
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
        let Ok(()) = self.kept_pairs(Growing(out));
    }

    /// [`pairs`](Self::pairs), but running out of memory for the output is
    /// an error instead of an abort: the output grows with `try_reserve`,
    /// and on failure `out` holds the pairs found so far (each still once)
    /// and the error says how many.
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
        out.clear();
        self.kept_pairs(Fallible(out))
    }

    fn kept_pairs<O: PairOut>(&mut self, mut out: O) -> Result<(), O::Error> {
        if !self.kept {
            return Ok(());
        }
        let AdaptiveGrid { kernel, config, builder, leaves, boxes, sweep, .. } = self;
        let context = LeafContext { kernel: *kernel, boxes, sweep_above: config.sweep_above };
        for node in builder.nodes.iter().filter(|n| n.is_leaf()) {
            let view = leaves.view(node.first as usize, node.count as usize);
            leaf_pairs(&view, &context, sweep, &mut out)?;
        }
        Ok(())
    }
}

/// The pair output could not be stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
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
