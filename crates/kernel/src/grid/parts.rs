//! The grid's frame in parts, for a caller that runs them on several
//! threads.
//!
//! [`AdaptiveGrid::find_pairs`](super::AdaptiveGrid::find_pairs) is, in
//! order: the bounds and the input check over all boxes ([`Bounds`]), the
//! [`Quantizer`] they give, every box quantized to an [`Item`]; then per
//! node a count of its items in a block of child cells, a verdict, and a
//! counting sort into the children; and under each node a walk down to the
//! leaves. A parallel caller runs the same steps over chunks: bounds and
//! items per chunk of the input, a [`ChunkSplitter`] per chunk of a node's
//! items (count, then scatter into each child's share), one
//! [`NodeSplit`] deciding from the summed [`ChildCounts`], and
//! [`find_node_pairs`](super::AdaptiveGrid::find_node_pairs) for the
//! nodes it hands to one thread. Every cell, verdict and budget is the
//! kernel's own, so the pairs are the grid's pairs.

use super::config::GridConfig;
use super::cpu::Kernel;
use super::split::{self, SplitParams, Splitter, Verdict};

pub use super::quantize::{Bounds, Cell, Item, Quantizer};

/// Items per child cell of a block (index `x + 4y + 16z`), summed over
/// chunks.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::parts::ChildCounts;
/// let mut total = ChildCounts::default();
/// total.add(&ChildCounts::default());
/// assert_eq!(total.total(), 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChildCounts([u32; 64]);

impl Default for ChildCounts {
    fn default() -> Self {
        ChildCounts([0; 64])
    }
}

impl ChildCounts {
    /// Adds another chunk's counts.
    pub fn add(&mut self, other: &ChildCounts) {
        for (mine, theirs) in self.0.iter_mut().zip(&other.0) {
            *mine += theirs;
        }
    }

    /// Items in child cell `c`.
    pub fn get(&self, c: usize) -> u32 {
        self.0[c]
    }

    /// Items in all children (boxes that reach several cells count in
    /// each).
    pub fn total(&self) -> usize {
        self.0.iter().map(|&c| c as usize).sum()
    }
}

/// The low and high corner of a run of items, for the deeper block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Union {
    lo: [u16; 3],
    hi: [u16; 3],
}

impl Union {
    /// No item.
    pub const EMPTY: Union = Union { lo: [u16::MAX; 3], hi: [0; 3] };

    /// The union of `items`.
    pub fn of(items: &[Item]) -> Union {
        let (lo, hi) = split::union(items);
        Union { lo, hi }
    }

    /// The union of both runs.
    #[must_use]
    pub fn merge(self, other: Union) -> Union {
        Union {
            lo: core::array::from_fn(|a| self.lo[a].min(other.lo[a])),
            hi: core::array::from_fn(|a| self.hi[a].max(other.hi[a])),
        }
    }
}

/// What to do next with a node being split (see [`NodeSplit::judge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Scatter the items into the children of [`NodeSplit::block`].
    Split,
    /// Compute the [`Union`] of the node's items and call
    /// [`NodeSplit::deeper`].
    NeedUnion,
    /// The node is a leaf: hand it whole to one walk.
    Leaf,
}

/// The decision about one node, taken as the single-thread build takes it.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{Aabb, GridConfig, PairKernel, parts::*};
/// use glam::Vec3;
/// let boxes: Vec<Aabb> = (0..1000).map(|i| {
///     let c = Vec3::splat(i as f32);
///     Aabb::new(c, c + Vec3::ONE)
/// }).collect();
/// let quantizer = Quantizer::new(&Bounds::of(&boxes), &boxes)?;
/// let mut items = vec![Item::default(); boxes.len()];
/// quantizer.quantize_chunk(&boxes, 0, &mut items, PairKernel::Auto);
///
/// let config = GridConfig::default();
/// let mut split = NodeSplit::start(Cell::ROOT, items.len(), &config).expect("1000 boxes split");
/// let mut chunk = ChunkSplitter::default();
/// let counts = chunk.count(&items, &split, &config);
/// assert_eq!(split.judge(&counts, usize::MAX), Step::Split);
/// assert!(counts.total() >= 1000);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct NodeSplit {
    cell: Cell,
    count: usize,
    block: Cell,
    deeper_tried: bool,
    params: SplitParams,
}

impl NodeSplit {
    /// Starts the decision for a node of `count` items in `cell`; `None`
    /// when it is a leaf whatever its items are.
    pub fn start(cell: Cell, count: usize, config: &GridConfig) -> Option<NodeSplit> {
        let block = split::first_block(cell, count, config.leaf_capacity)?;
        let params = super::build::split_params(config, Kernel::resolve(config.kernel), usize::MAX);
        Some(NodeSplit { cell, count, block, deeper_tried: false, params })
    }

    /// The block of child cells the items are to be counted in.
    pub fn block(&self) -> Cell {
        self.block
    }

    /// The cell of child `c` of the block.
    pub fn child(&self, c: usize) -> Cell {
        split::child_cell(self.block, c)
    }

    /// Judges the node by its items' summed counts in [`block`](Self::block);
    /// `room`: the most items the split may write.
    pub fn judge(&mut self, counts: &ChildCounts, room: usize) -> Step {
        let params = SplitParams { room, ..self.params };
        match split::judge(&counts.0, counts.total(), self.count, self.deeper_tried, &params) {
            Verdict::Split => Step::Split,
            Verdict::Deeper => Step::NeedUnion,
            Verdict::Leaf => Step::Leaf,
        }
    }

    /// Moves to the block under the deepest cell holding the items'
    /// `union`: count again in the new [`block`](Self::block) and judge.
    /// `false`: there is none, the node is a leaf.
    pub fn deeper(&mut self, union: Union) -> bool {
        self.deeper_tried = true;
        match split::deeper_block((union.lo, union.hi), self.cell) {
            Some(block) => {
                self.block = block;
                true
            }
            None => false,
        }
    }
}

/// One chunk of a node's items through a split: counted, then scattered
/// into the children's shares. Keep one per chunk between the two calls.
#[derive(Debug, Default)]
pub struct ChunkSplitter {
    splitter: Splitter,
}

impl ChunkSplitter {
    /// Counts `items` (one chunk of the node) in the node's current block.
    pub fn count(&mut self, items: &[Item], split: &NodeSplit, config: &GridConfig) -> ChildCounts {
        ChildCounts(self.splitter.count(items, split.block, Kernel::resolve(config.kernel)).counts)
    }

    /// Writes the items last counted into `out[c]` for every child cell
    /// `c` they reach; `out[c]` must be exactly as long as that chunk's
    /// count of `c`. The items of child `c`, chunk after chunk, are then
    /// the child's items (in an order fixed by the chunks, not the
    /// single-thread build's, so only the order of the pairs can differ).
    pub fn scatter(&self, items: &[Item], out: &mut [&mut [Item]; 64]) {
        self.splitter.scatter_to(items, out);
    }
}
