//! The grid's hierarchy of nodes, its storage, and the type users hold.

use super::config::{GridConfig, PairKernel};
use super::cpu::Kernel;
use super::leaf::{LeafColumns, SweepScratch};
use super::quantize::{Cell, Item, Quantizer};
use super::ray_tree::RayTreeCell;
use super::split::Splitter;
use broadphase_storage::{Aabb, Pool};

/// An inner node or a leaf of the grid's linear hierarchy.
///
/// Children of an inner node are stored contiguously, one per occupied cell
/// in cell order, so the child of cell `c` is at
/// `first + popcount(occupancy & ((1 << c) - 1))`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Node {
    /// Bit `x + 4y + 16z` is set when that cell of `block` has a child;
    /// 0 for a leaf.
    pub(crate) occupancy: u64,
    /// First child node; for a leaf of a kept build, its first slot in the
    /// leaf columns.
    pub(crate) first: u32,
    /// The node's items in the build's item stack (only while building).
    pub(crate) start: u32,
    /// Boxes in the node.
    pub(crate) count: u32,
    /// The node's cell.
    pub(crate) cell: Cell,
    /// The block of the children's cells (see [`Split`](super::split::Split)).
    pub(crate) block: Cell,
}

impl Node {
    #[inline(always)]
    pub(crate) fn is_leaf(&self) -> bool {
        self.occupancy == 0
    }
}

/// Build state kept across frames so a warm build allocates nothing: the
/// records, in storage's [`Pool`]s.
#[derive(Debug, Default)]
pub(crate) struct Builder {
    /// The item stack: the root's items, then each open node's children
    /// above its own; a finished node's space is reused by its sibling.
    /// Never reset: its length is the deepest the stack has been, and a
    /// frame writes every item before reading it.
    pub(crate) items: Pool<Item>,
    /// The hierarchy's nodes, reset every frame.
    pub(crate) nodes: Pool<Node>,
    pub(crate) splitter: Splitter,
}

/// The single-thread sparse adaptive grid.
///
/// Two ways to use it:
/// - [`find_pairs`](Self::find_pairs): one frame, boxes in, pairs out, the
///   fastest path. Each leaf's pairs are found the moment the leaf exists,
///   while its boxes are in cache, and nothing is kept.
/// - [`build`](Self::build), then [`pairs`](Self::pairs) and
///   [`query_aabb`](Self::query_aabb) as often as needed: the build is
///   kept, with a copy of the boxes for the exact tests.
///
/// All memory lives in buffers that are cleared, not freed, so a frame of
/// the same size allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{AdaptiveGrid, Aabb};
/// use glam::Vec3;
///
/// let boxes = [
///     Aabb::new(Vec3::ZERO, Vec3::ONE),
///     Aabb::new(Vec3::splat(0.5), Vec3::splat(2.0)),
///     Aabb::new(Vec3::splat(10.0), Vec3::splat(11.0)),
/// ];
/// let mut grid = AdaptiveGrid::default();
/// let mut pairs = Vec::new();
/// grid.find_pairs(&boxes, &mut pairs)?;
/// assert_eq!(pairs, vec![[0, 1]]);
///
/// grid.build(&boxes)?;
/// let mut hits = Vec::new();
/// grid.query_aabb(&Aabb::new(Vec3::splat(10.5), Vec3::splat(20.0)), &mut hits)?;
/// assert_eq!(hits, vec![2]);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
#[derive(Debug)]
pub struct AdaptiveGrid {
    pub(crate) config: GridConfig,
    /// The leaf kernel that runs, resolved once from the configuration.
    pub(crate) kernel: Kernel,
    pub(crate) quantizer: Quantizer,
    pub(crate) builder: Builder,
    /// The kept build's leaves, slot by slot.
    pub(crate) leaves: LeafColumns,
    /// The kept build's boxes, for the exact tests.
    pub(crate) boxes: Pool<Aabb>,
    /// One leaf at a time, for [`find_pairs`](Self::find_pairs).
    pub(crate) leaf_scratch: LeafColumns,
    pub(crate) sweep: SweepScratch,
    /// Whether `nodes`, `leaves` and `boxes` hold a kept build.
    pub(crate) kept: bool,
    /// The first-hit rays' tree over the kept boxes, built by the first
    /// cast after a build.
    pub(crate) ray_tree: RayTreeCell,
}

/// A copy answers [`pairs`](AdaptiveGrid::pairs) and every query as the
/// original does: it holds the same configuration and kept build (nodes,
/// leaves and boxes, and the rays' tree if the original has built it; else
/// the copy builds its own when its casts pay for it). The build's scratch (the item stack, the split's
/// lists, the one-leaf columns) is not copied: a build writes it before
/// reading it.
///
/// `clone_from` copies into the grid's own buffers, each first grown to
/// the source's room: a copy taken every frame (a snapshot kept in a
/// ring) allocates nothing once the source itself stops growing, and
/// copying back into the grid the build came from allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{AdaptiveGrid, Aabb};
/// use glam::Vec3;
/// let boxes = [Aabb::new(Vec3::ZERO, Vec3::ONE), Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0))];
/// let mut grid = AdaptiveGrid::default();
/// grid.build(&boxes)?;
/// let saved = grid.clone();
/// grid.build(&boxes[..1])?;
///
/// grid.clone_from(&saved); // back to the build of both boxes
/// let mut hits = Vec::new();
/// grid.query_aabb(&Aabb::new(Vec3::splat(5.5), Vec3::splat(7.0)), &mut hits)?;
/// assert_eq!(hits, [1]);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
impl Clone for AdaptiveGrid {
    fn clone(&self) -> Self {
        let mut copy = Self::with_config(self.config);
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.config = source.config;
        self.kernel = source.kernel;
        self.quantizer = source.quantizer;
        copy_pool(&mut self.builder.nodes, &source.builder.nodes);
        self.leaves.clone_from(&source.leaves);
        copy_pool(&mut self.boxes, &source.boxes);
        self.ray_tree.clone_from(&source.ray_tree);
        self.kept = source.kept;
    }
}

/// Copies `from` into `to`, growing `to` to `from`'s room first.
fn copy_pool<T: Copy>(to: &mut Pool<T>, from: &Pool<T>) {
    if to.capacity() < from.capacity() {
        to.reset();
        to.reserve_exact(from.capacity());
    }
    to.clone_from(from);
}

impl Default for AdaptiveGrid {
    fn default() -> Self {
        Self::with_config(GridConfig::default())
    }
}

impl AdaptiveGrid {
    /// An empty grid with the given tuning.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, GridConfig};
    /// let grid = AdaptiveGrid::with_config(GridConfig { leaf_capacity: 32, ..Default::default() });
    /// assert_eq!(grid.config().leaf_capacity, 32);
    /// ```
    pub fn with_config(config: GridConfig) -> Self {
        Self {
            config,
            kernel: Kernel::resolve(config.kernel),
            quantizer: Quantizer::default(),
            builder: Builder::default(),
            leaves: LeafColumns::default(),
            boxes: Pool::new(),
            leaf_scratch: LeafColumns::default(),
            sweep: SweepScratch::default(),
            kept: false,
            ray_tree: RayTreeCell::default(),
        }
    }

    /// The tuning this grid was made with.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, GridConfig};
    /// assert_eq!(AdaptiveGrid::default().config(), &GridConfig::default());
    /// ```
    pub fn config(&self) -> &GridConfig {
        &self.config
    }

    /// The leaf kernel that runs on this CPU (never `Auto`).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, PairKernel};
    /// assert_ne!(AdaptiveGrid::default().pair_kernel(), PairKernel::Auto);
    /// ```
    pub fn pair_kernel(&self) -> PairKernel {
        self.kernel.name()
    }

    /// How many boxes the kept build indexes (0 after
    /// [`find_pairs`](Self::find_pairs), which keeps nothing).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&[Aabb::default(); 3])?;
    /// assert_eq!(grid.len(), 3);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn len(&self) -> usize {
        if self.kept { self.boxes.len() } else { 0 }
    }

    /// The boxes of the kept build, as [`build`](Self::build) was given
    /// them (the answers' ids index them); empty when no build is kept.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use glam::Vec3;
    /// let boxes = [Aabb::new(Vec3::ZERO, Vec3::ONE), Aabb::default()];
    /// let mut grid = AdaptiveGrid::default();
    /// assert!(grid.kept_boxes().is_empty());
    /// grid.build(&boxes)?;
    /// assert_eq!(grid.kept_boxes(), boxes);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn kept_boxes(&self) -> &[Aabb] {
        if self.kept { &self.boxes } else { &[] }
    }

    /// Whether the grid holds no box.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::AdaptiveGrid;
    /// assert!(AdaptiveGrid::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Shape of the last build, kept or not: (inner and leaf nodes, leaves,
    /// box slots in leaves). Slots over the box count measure how often
    /// boxes were copied into several cells.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&[Aabb::default(); 3])?;
    /// assert_eq!(grid.shape(), (1, 1, 3));
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn shape(&self) -> (usize, usize, usize) {
        let nodes = &self.builder.nodes;
        let leaves = nodes.iter().filter(|n| n.is_leaf());
        let slots = leaves.clone().map(|n| n.count as usize).sum();
        (nodes.len(), leaves.count(), slots)
    }
}
