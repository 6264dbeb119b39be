//! Building the hierarchy: quantize once, then depth first, one counting
//! sort per node, each leaf handed on the moment it exists.
//!
//! The root covers the input's bounds, so no finite box is ever outside
//! it. A node's children take their items from the item stack right above
//! their parent's, and a finished node's space is reused by its next
//! sibling: the working set under a node stays in cache, and a leaf's boxes
//! are still there when its pairs are tested.

use super::PairsError;
use super::cpu::Kernel;
use super::hierarchy::{AdaptiveGrid, Builder, Node};
use super::leaf::{
    Fallible, Growing, LeafContext, PairOut, SMALL_LEAF, TINY_LEAF, leaf_pairs, small_leaf_pairs,
    tiny_leaf_pairs,
};
use super::quantize::{Cell, Item, Quantizer};
use super::split::SplitParams;
use broadphase_storage::{Aabb, InputError};

/// What happens to each leaf as the walk reaches it.
pub(crate) trait LeafSink {
    type Error;
    /// `items` are the leaf's boxes (the sink may reorder them); `node` is
    /// the leaf's node, whose `first` the sink may set.
    fn leaf(&mut self, items: &mut [Item], node: &mut Node) -> Result<(), Self::Error>;
}

impl Builder {
    /// Quantizes `boxes` and walks the whole hierarchy, handing every leaf to
    /// `sink`. `boxes` must be valid.
    pub(crate) fn run<S: LeafSink>(
        &mut self,
        boxes: &[Aabb],
        quantizer: &Quantizer,
        config: &super::GridConfig,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let kernel = Kernel::resolve(config.kernel);
        self.run_filled(boxes.len(), Cell::ROOT, config, sink, |items| {
            quantizer.quantize(boxes, 0, items, kernel);
        })
    }

    /// Walks everything under a node in `cell` holding `count` items, which
    /// `fill` writes onto the bottom of the item stack, handing every leaf
    /// to `sink`.
    pub(crate) fn run_filled<S: LeafSink>(
        &mut self,
        count: usize,
        cell: Cell,
        config: &super::GridConfig,
        sink: &mut S,
        fill: impl FnOnce(&mut [Item]),
    ) -> Result<(), S::Error> {
        self.nodes.reset();
        if count == 0 {
            return Ok(());
        }
        self.grow_items(count);
        fill(&mut self.items[..count]);
        self.walk_root(count, cell, config, sink)
    }

    /// Makes the item stack at least `len` deep.
    #[inline]
    fn grow_items(&mut self, len: usize) {
        if let Some(more) = len.checked_sub(self.items.len()) {
            self.items.allocate(more, Item::default());
        }
    }

    /// Walks from a first node of `count` items at the bottom of the stack.
    fn walk_root<S: LeafSink>(
        &mut self,
        count: usize,
        cell: Cell,
        config: &super::GridConfig,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        self.nodes.push(Node { count: count as u32, cell, ..Node::default() });
        let budget = (f64::from(config.copy_budget.max(1.0)) * count as f64) as usize;
        let budget = budget.saturating_add(4096);
        let kernel = Kernel::resolve(config.kernel);
        let params = |room: usize| split_params(config, kernel, room);
        self.walk(0, count, budget, &params, sink)
    }

    /// Splits node `index` (items at its `start`), writing children's items
    /// from `top`, and walks each child in turn; or hands it to `sink`.
    fn walk<S: LeafSink>(
        &mut self,
        index: usize,
        top: usize,
        budget: usize,
        limits: &impl Fn(usize) -> SplitParams,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        let node = self.nodes[index];
        let (start, count) = (node.start as usize, node.count as usize);
        let plan = {
            let items = &self.items[start..start + count];
            self.splitter.plan(items, node.cell, &limits(budget.saturating_sub(top)))
        };
        let Some(split) = plan else {
            let mut node = node;
            sink.leaf(&mut self.items[start..start + count], &mut node)?;
            self.nodes[index] = node;
            return Ok(());
        };
        let end = top + split.total;
        self.grow_items(end);
        let (below, above) = self.items.split_at_mut(top);
        let first =
            self.splitter.scatter(&below[start..start + count], &split, &mut above[..split.total]);

        let first_child = self.nodes.len();
        let occupancy = split.occupancy();
        for cell in (0..64).filter(|&c| occupancy >> c & 1 == 1) {
            self.nodes.push(Node {
                start: (top as u32) + first[cell],
                count: split.counts[cell],
                cell: split.child_cell(cell),
                ..Node::default()
            });
        }
        let parent = &mut self.nodes[index];
        parent.occupancy = occupancy;
        parent.first = first_child as u32;
        parent.block = split.block;
        for child in first_child..first_child + occupancy.count_ones() as usize {
            self.walk(child, end, budget, limits, sink)?;
        }
        Ok(())
    }
}

/// The split parameters of `config` for the resolved `kernel`, with `room`
/// items left to write.
pub(crate) fn split_params(config: &super::GridConfig, kernel: Kernel, room: usize) -> SplitParams {
    SplitParams {
        kernel,
        leaf_capacity: config.leaf_capacity,
        max_replication: config.max_replication,
        room,
    }
}

/// Sorts a leaf too big to tile by low x, for the sweep. Ties by id, so the
/// order (and the pair order) is the same on every run.
fn sort_for_sweep(items: &mut [Item], sweep_above: usize) {
    if items.len() > sweep_above {
        items.sort_unstable_by_key(|item| (item.lo[0], item.id));
    }
}

/// Keeps every leaf in the grid's leaf columns.
struct Keep<'a> {
    leaves: &'a mut super::leaf::LeafColumns,
    sweep_above: usize,
}

impl LeafSink for Keep<'_> {
    type Error = core::convert::Infallible;
    fn leaf(&mut self, items: &mut [Item], node: &mut Node) -> Result<(), Self::Error> {
        sort_for_sweep(items, self.sweep_above);
        node.first = self.leaves.push_leaf(items, node.cell) as u32;
        Ok(())
    }
}

/// Finds each leaf's pairs at once, through one reused leaf buffer.
struct FindPairs<'a, O> {
    context: LeafContext<'a>,
    leaf: &'a mut super::leaf::LeafColumns,
    sweep: &'a mut super::leaf::SweepScratch,
    out: O,
    /// Whether a leaf reports only the pairs whose reference point it
    /// holds (each pair once over the hierarchy) or every pair it finds.
    owned_only: bool,
}

impl<O: PairOut> LeafSink for FindPairs<'_, O> {
    type Error = O::Error;
    // Inlined into the walk, where every leaf of a find goes: left to the
    // heuristics, whether it is depends on what else shares the caller's
    // codegen unit (1% of a frame on uniform1m when it is not).
    #[inline]
    fn leaf(&mut self, items: &mut [Item], node: &mut Node) -> Result<(), Self::Error> {
        if items.len() < 2 {
            return Ok(());
        }
        // The leaf's kernels drop a pair unless the cell they are given holds
        // its reference point; the root holds every point.
        let cell = if self.owned_only { node.cell } else { Cell::ROOT };
        if items.len() <= TINY_LEAF {
            return tiny_leaf_pairs(
                self.context.kernel,
                items,
                cell,
                self.context.boxes,
                &mut self.out,
            );
        }
        if items.len() <= SMALL_LEAF {
            return small_leaf_pairs(
                self.context.kernel,
                items,
                cell,
                self.context.boxes,
                &mut self.out,
            );
        }
        sort_for_sweep(items, self.context.sweep_above);
        self.leaf.set_only_leaf(items, cell);
        let view = self.leaf.view(0, items.len());
        leaf_pairs(&view, &self.context, self.sweep, &mut self.out)
    }
}

/// Why [`AdaptiveGrid::try_find_pairs`] failed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum FindPairsError {
    /// The input breaks the contract; names the first bad box. No pair was
    /// written.
    Input(InputError),
    /// The output could not grow; it holds the pairs found so far.
    Pairs(PairsError),
}

impl core::fmt::Display for FindPairsError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            FindPairsError::Input(e) => e.fmt(f),
            FindPairsError::Pairs(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for FindPairsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FindPairsError::Input(e) => Some(e),
            FindPairsError::Pairs(e) => Some(e),
        }
    }
}

impl From<InputError> for FindPairsError {
    fn from(e: InputError) -> Self {
        FindPairsError::Input(e)
    }
}

impl AdaptiveGrid {
    /// Indexes `boxes` and keeps the build, replacing what the grid held,
    /// for [`pairs`](Self::pairs) and the queries
    /// ([`query_aabb`](Self::query_aabb) and the others). The grid keeps a
    /// copy of the boxes for the exact tests.
    ///
    /// Bounds come from the data: boxes may lie anywhere in `f32` range. On
    /// an error the grid is left empty.
    ///
    /// # Errors
    /// [`InputError`] naming the first box with a NaN or infinite coordinate
    /// or `min > max`, or more than [`MAX_BOXES`](broadphase_storage::MAX_BOXES) boxes.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb, InputError};
    /// use glam::Vec3;
    /// let mut grid = AdaptiveGrid::default();
    /// let bad = [Aabb::new(Vec3::ZERO, Vec3::ONE), Aabb::new(Vec3::ONE, Vec3::ZERO)];
    /// assert!(matches!(grid.build(&bad), Err(InputError::Inverted { index: 1, .. })));
    /// assert!(grid.is_empty());
    /// ```
    pub fn build(&mut self, boxes: &[Aabb]) -> Result<(), InputError> {
        let checked = self.start_frame(boxes);
        // On an error, what is kept is the build of no box.
        self.kept = true;
        checked?;
        self.boxes.extend_from_slice(boxes);
        let mut keep = Keep { leaves: &mut self.leaves, sweep_above: self.config.sweep_above };
        let Ok(()) = self.builder.run(boxes, &self.quantizer, &self.config, &mut keep);
        Ok(())
    }

    /// One frame: writes every overlapping pair of `boxes` into `out`
    /// (cleared first), each exactly once as `[a, b]` with `a < b`, indices
    /// into `boxes`. Keeps nothing: afterwards the grid is empty.
    ///
    /// The fastest way to the pairs of a frame: each leaf's pairs are found
    /// the moment the build reaches the leaf. The order is deterministic for
    /// a given input and config but otherwise unspecified.
    ///
    /// # Errors
    /// [`InputError`] naming the first bad box (see [`build`](Self::build));
    /// `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use glam::Vec3;
    /// // Touching faces overlap.
    /// let boxes = [Aabb::new(Vec3::ZERO, Vec3::ONE), Aabb::new(Vec3::X, Vec3::new(2.0, 1.0, 1.0))];
    /// let mut pairs = Vec::new();
    /// AdaptiveGrid::default().find_pairs(&boxes, &mut pairs)?;
    /// assert_eq!(pairs, [[0, 1]]);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn find_pairs(
        &mut self,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), InputError> {
        out.clear();
        self.start_frame(boxes)?;
        let Ok(()) = self.frame_pairs(boxes, Growing(out));
        Ok(())
    }

    /// [`find_pairs`](Self::find_pairs), but running out of memory for the
    /// output is an error instead of an abort: the output grows with
    /// `try_reserve`, and on failure `out` holds the pairs found so far
    /// (each still once).
    ///
    /// A frame's pair count is the caller's to bound; this is for callers
    /// that take arbitrary input (a pile of n boxes has n(n-1)/2 pairs: 100k
    /// coincident boxes are 5·10⁹ pairs, 40 GB of output).
    ///
    /// # Errors
    /// [`FindPairsError::Input`] for bad input, [`FindPairsError::Pairs`]
    /// when the output could not grow.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// let mut pairs = Vec::new();
    /// AdaptiveGrid::default().try_find_pairs(&[Aabb::default(); 3], &mut pairs)?;
    /// assert_eq!(pairs.len(), 3); // three coincident boxes
    /// # Ok::<(), broadphase_kernel::FindPairsError>(())
    /// ```
    pub fn try_find_pairs(
        &mut self,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), FindPairsError> {
        out.clear();
        self.start_frame(boxes)?;
        self.frame_pairs(boxes, Fallible(out)).map_err(FindPairsError::Pairs)
    }

    fn start_frame(&mut self, boxes: &[Aabb]) -> Result<(), InputError> {
        self.kept = false;
        self.ray_tree.forget();
        self.builder.nodes.reset();
        self.leaves.clear();
        self.boxes.reset();
        self.quantizer = Quantizer::covering(boxes)?;
        Ok(())
    }

    /// The pairs under one node, for a caller that splits the top of the
    /// hierarchy itself (see [`parts`](crate::parts)): the node in `cell`
    /// holding `items`, quantized by the frame's quantizer from `boxes`.
    /// Appends to `out` (not cleared) every pair the leaves under the node
    /// own, each once; keeps nothing. Over the children of a split, these
    /// are exactly the pairs of their parent.
    ///
    /// # Errors
    /// [`PairsError::OutOfMemory`] when `out` could not grow; it then holds
    /// the pairs found so far.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{Aabb, AdaptiveGrid, PairKernel, parts::{Bounds, Cell, Quantizer}};
    /// let boxes = [Aabb::default(); 3];
    /// let quantizer = Quantizer::new(&Bounds::of(&boxes), &boxes)?;
    /// let mut items = vec![Default::default(); 3];
    /// quantizer.quantize_chunk(&boxes, 0, &mut items, PairKernel::Auto);
    /// let mut pairs = Vec::new();
    /// AdaptiveGrid::default().find_node_pairs(&items, Cell::ROOT, &boxes, &mut pairs).unwrap();
    /// assert_eq!(pairs.len(), 3);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn find_node_pairs(
        &mut self,
        items: &[Item],
        cell: Cell,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), PairsError> {
        self.find_node_pairs_with(items.len(), cell, boxes, out, |stack| {
            stack.copy_from_slice(items);
        })
    }

    /// [`find_node_pairs`](Self::find_node_pairs) for a node whose
    /// `count` items are not in one slice: `fill` writes them straight into
    /// the walk's item stack (it is given exactly `count` slots and must
    /// write every one), saving a copy.
    ///
    /// # Errors
    /// [`PairsError::OutOfMemory`] when `out` could not grow.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{Aabb, AdaptiveGrid, PairKernel, parts::{Bounds, Cell, Item, Quantizer}};
    /// let boxes = [Aabb::default(); 4];
    /// let quantizer = Quantizer::new(&Bounds::of(&boxes), &boxes)?;
    /// let (mut first, mut second) = ([Item::default(); 2], [Item::default(); 2]);
    /// quantizer.quantize_chunk(&boxes[..2], 0, &mut first, PairKernel::Auto);
    /// quantizer.quantize_chunk(&boxes[2..], 2, &mut second, PairKernel::Auto);
    /// let mut pairs = Vec::new();
    /// AdaptiveGrid::default()
    ///     .find_node_pairs_with(4, Cell::ROOT, &boxes, &mut pairs, |stack| {
    ///         stack[..2].copy_from_slice(&first);
    ///         stack[2..].copy_from_slice(&second);
    ///     })
    ///     .unwrap();
    /// assert_eq!(pairs.len(), 6);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn find_node_pairs_with(
        &mut self,
        count: usize,
        cell: Cell,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
        fill: impl FnOnce(&mut [Item]),
    ) -> Result<(), PairsError> {
        self.node_walk(count, cell, boxes, out, fill, true)
    }

    /// [`find_node_pairs_with`](Self::find_node_pairs_with) without
    /// the reference-point rule: every leaf reports every overlapping pair
    /// of its boxes, so a pair whose boxes share several leaves is appended
    /// once per shared leaf (each time as `[a, b]` with `a < b`). For a
    /// caller that removes the repeats itself; every pair under the node is
    /// there at least once.
    ///
    /// # Errors
    /// [`PairsError::OutOfMemory`] when `out` could not grow.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, PairKernel, parts::{Bounds, Cell, Quantizer}};
    /// use glam::Vec3;
    /// // Two long boxes along x crossing many small ones: with leaves of at
    /// // most 2 boxes, the long pair is found in several leaves.
    /// let mut boxes = vec![Aabb::new(Vec3::ZERO, Vec3::new(100.0, 1.0, 1.0)); 2];
    /// boxes.extend((0..40).map(|i| {
    ///     let x = Vec3::new(i as f32 * 2.5, 0.0, 0.0);
    ///     Aabb::new(x, x + Vec3::splat(0.5))
    /// }));
    /// let quantizer = Quantizer::new(&Bounds::of(&boxes), &boxes)?;
    /// let mut items = vec![Default::default(); boxes.len()];
    /// quantizer.quantize_chunk(&boxes, 0, &mut items, PairKernel::Auto);
    /// let mut grid = AdaptiveGrid::with_config(GridConfig { leaf_capacity: 2, ..Default::default() });
    /// let mut all = Vec::new();
    /// grid.find_node_overlaps_with(items.len(), Cell::ROOT, &boxes, &mut all, |stack| {
    ///     stack.copy_from_slice(&items);
    /// })
    /// .unwrap();
    /// assert!(all.iter().filter(|&&pair| pair == [0, 1]).count() > 1);
    /// all.sort_unstable();
    /// all.dedup();
    /// let mut once = Vec::new();
    /// grid.find_node_pairs(&items, Cell::ROOT, &boxes, &mut once).unwrap();
    /// once.sort_unstable();
    /// assert_eq!(all, once);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn find_node_overlaps_with(
        &mut self,
        count: usize,
        cell: Cell,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
        fill: impl FnOnce(&mut [Item]),
    ) -> Result<(), PairsError> {
        self.node_walk(count, cell, boxes, out, fill, false)
    }

    /// The old name of [`find_node_pairs`](Self::find_node_pairs), kept
    /// one release.
    ///
    /// # Errors
    /// As [`find_node_pairs`](Self::find_node_pairs).
    #[deprecated(since = "0.1.0", note = "renamed to `find_node_pairs`")]
    pub fn find_subtree_pairs(
        &mut self,
        items: &[Item],
        cell: Cell,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), PairsError> {
        self.find_node_pairs(items, cell, boxes, out)
    }

    /// The old name of [`find_node_pairs_with`](Self::find_node_pairs_with),
    /// kept one release.
    ///
    /// # Errors
    /// As [`find_node_pairs_with`](Self::find_node_pairs_with).
    #[deprecated(since = "0.1.0", note = "renamed to `find_node_pairs_with`")]
    pub fn find_subtree_pairs_with(
        &mut self,
        count: usize,
        cell: Cell,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
        fill: impl FnOnce(&mut [Item]),
    ) -> Result<(), PairsError> {
        self.find_node_pairs_with(count, cell, boxes, out, fill)
    }

    /// The old name of
    /// [`find_node_overlaps_with`](Self::find_node_overlaps_with), kept one
    /// release.
    ///
    /// # Errors
    /// As [`find_node_overlaps_with`](Self::find_node_overlaps_with).
    #[deprecated(since = "0.1.0", note = "renamed to `find_node_overlaps_with`")]
    pub fn find_subtree_overlaps_with(
        &mut self,
        count: usize,
        cell: Cell,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
        fill: impl FnOnce(&mut [Item]),
    ) -> Result<(), PairsError> {
        self.find_node_overlaps_with(count, cell, boxes, out, fill)
    }

    /// The walk under one node for a parallel caller, on a grid that keeps
    /// nothing of it: with `owned_only`, each pair is reported by the one
    /// leaf holding its reference point; without, by every leaf it shares.
    fn node_walk(
        &mut self,
        count: usize,
        cell: Cell,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
        fill: impl FnOnce(&mut [Item]),
        owned_only: bool,
    ) -> Result<(), PairsError> {
        self.kept = false;
        self.ray_tree.forget();
        self.leaves.clear();
        self.boxes.reset();
        self.walk_pairs(count, cell, boxes, Fallible(out), fill, owned_only)
    }

    /// A frame's pairs: the whole input, quantized onto the item stack.
    fn frame_pairs<O: PairOut>(&mut self, boxes: &[Aabb], out: O) -> Result<(), O::Error> {
        let (quantizer, kernel) = (self.quantizer, self.kernel);
        let quantize = |items: &mut [Item]| quantizer.quantize(boxes, 0, items, kernel);
        self.walk_pairs(boxes.len(), Cell::ROOT, boxes, out, quantize, true)
    }

    /// Walks everything under the node of `count` items in `cell`, which `fill` writes
    /// onto the item stack, finding each leaf's pairs as it is reached:
    /// only those whose reference point the leaf holds if `owned_only`,
    /// else all of them.
    fn walk_pairs<O: PairOut>(
        &mut self,
        count: usize,
        cell: Cell,
        boxes: &[Aabb],
        out: O,
        fill: impl FnOnce(&mut [Item]),
        owned_only: bool,
    ) -> Result<(), O::Error> {
        let mut sink = FindPairs {
            context: LeafContext {
                kernel: self.kernel,
                boxes,
                sweep_above: self.config.sweep_above,
            },
            leaf: &mut self.leaf_scratch,
            sweep: &mut self.sweep,
            out,
            owned_only,
        };
        self.builder.run_filled(count, cell, &self.config, &mut sink, fill)
    }
}
