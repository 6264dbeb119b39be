//! The tree's storage and the type users hold.

use super::config::{GridConfig, PairKernel};
use super::simd::Columns;
use broadphase_storage::{Aabb, FastUniqueSets, LANES, Pool, SoaBoxes};

/// A half-open region of space, `lo <= p < hi` on every axis. The root's is
/// all of space, so no finite box is ever outside the tree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Region {
    pub(crate) lo: [f32; 3],
    pub(crate) hi: [f32; 3],
}

impl Region {
    pub(crate) const EVERYWHERE: Region =
        Region { lo: [f32::NEG_INFINITY; 3], hi: [f32::INFINITY; 3] };

    /// Whether the point lies in the region (min faces in, max faces out).
    #[inline(always)]
    pub(crate) fn contains(&self, p: [f32; 3]) -> bool {
        (self.lo[0] <= p[0])
            & (p[0] < self.hi[0])
            & (self.lo[1] <= p[1])
            & (p[1] < self.hi[1])
            & (self.lo[2] <= p[2])
            & (p[2] < self.hi[2])
    }

    /// The region of `cell` (index `x + 4y + 16z`) of a node with these
    /// split planes and this region.
    #[inline]
    pub(crate) fn child(&self, planes: &[[f32; 3]; 3], cell: usize) -> Region {
        let mut child = *self;
        for (axis, planes) in planes.iter().enumerate() {
            let k = (cell >> (2 * axis)) & 3;
            (child.lo[axis], child.hi[axis]) = cell_span(planes, k, self.lo[axis], self.hi[axis]);
        }
        child
    }

    /// Whether a closed box shares a point with the half-open region.
    #[inline]
    pub(crate) fn meets(&self, b: &Aabb) -> bool {
        (0..3).all(|a| b.max[a] >= self.lo[a] && b.min[a] < self.hi[a])
    }

    /// Whether the min corner of the intersection of two overlapping boxes
    /// lies here: the one leaf that reports the pair (reference-point rule).
    ///
    /// For two boxes stored in this leaf the `< hi` half always holds (a box
    /// reaches a cell only if its min is below the cell's upper plane); the
    /// `lo <=` half is the one that decides, and
    /// `tests/boxes_on_split_planes.rs` fails if it is off by one.
    #[inline(always)]
    pub(crate) fn owns_pair(&self, a_min: [f32; 3], b_min: [f32; 3]) -> bool {
        self.contains([a_min[0].max(b_min[0]), a_min[1].max(b_min[1]), a_min[2].max(b_min[2])])
    }
}

/// An inner node or a leaf of the linear tree.
///
/// Children of an inner node are stored contiguously, one per occupied cell
/// in cell order, so the child of cell `c` is at
/// `first_child + popcount(occupancy & ((1 << c) - 1))`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Node {
    /// Per axis, the three split planes of the 4 cells; `+inf` on an axis that
    /// is not split, so every coordinate falls in cell 0 there.
    pub(crate) planes: [[f32; 3]; 3],
    /// Bit `x + 4y + 16z` is set when that cell has a child.
    pub(crate) occupancy: u64,
    /// Index of the first child node, or of the leaf when `is_leaf`.
    pub(crate) first_child: u32,
    pub(crate) is_leaf: bool,
}

/// The cell index (0..4) of a coordinate on one axis.
#[inline(always)]
pub(crate) fn cell_of(planes: &[f32; 3], x: f32) -> usize {
    (x >= planes[0]) as usize + (x >= planes[1]) as usize + (x >= planes[2]) as usize
}

/// The region of cell `k` on one axis, inside the parent's `[lo, hi)`.
#[inline]
fn cell_span(planes: &[f32; 3], k: usize, lo: f32, hi: f32) -> (f32, f32) {
    let cell_lo = if k == 0 { lo } else { lo.max(planes[k - 1]) };
    let cell_hi = if k == 3 { hi } else { hi.min(planes[k]) };
    (cell_lo, cell_hi)
}

/// A leaf: its boxes are slots `start..start + count` of the SoA buffer,
/// padded with sentinels to a multiple of [`LANES`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Leaf {
    pub(crate) start: u32,
    pub(crate) count: u32,
    pub(crate) region: Region,
}

impl Default for Leaf {
    fn default() -> Self {
        Leaf { start: 0, count: 0, region: Region::EVERYWHERE }
    }
}

/// One box travelling down the build: its bounds ride along with its id so
/// every pass reads memory in order instead of gathering from the input.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Item {
    pub(crate) bounds: Aabb,
    pub(crate) id: u32,
}

/// A node waiting to be split or turned into a leaf.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Task {
    pub(crate) node: u32,
    pub(crate) start: usize,
    pub(crate) count: usize,
    pub(crate) region: Region,
    pub(crate) depth: u32,
}

/// Build scratch, kept across frames so a warm build allocates nothing.
#[derive(Debug, Default)]
pub(crate) struct BuildScratch {
    pub(crate) items: Pool<Item>,
    /// Per item of the node being split: the cell range on each axis, 2 bits
    /// per end, 4 bits per axis.
    pub(crate) ranges: Pool<u16>,
    pub(crate) tasks: Vec<Task>,
}

/// The single-thread sparse adaptive grid.
///
/// `build` indexes a slice of boxes (bounds are taken from the data, so no
/// finite box is ever dropped); `pairs` lists every overlapping pair once;
/// `query` lists the boxes overlapping one box. All memory lives in pools
/// that are reset, not freed, so rebuilding a scene of the same size
/// allocates nothing.
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
/// grid.build(&boxes)?;
/// let mut pairs = Vec::new();
/// grid.pairs(&mut pairs);
/// assert_eq!(pairs, vec![[0, 1]]);
///
/// let mut hits = Vec::new();
/// grid.query(&Aabb::new(Vec3::splat(10.5), Vec3::splat(20.0)), &mut hits)?;
/// assert_eq!(hits, vec![2]);
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
#[derive(Debug)]
pub struct AdaptiveGrid {
    pub(crate) config: GridConfig,
    pub(crate) kernel: PairKernel,
    pub(crate) nodes: Pool<Node>,
    pub(crate) leaves: Pool<Leaf>,
    pub(crate) soa: SoaBoxes,
    pub(crate) box_count: usize,
    pub(crate) scratch: BuildScratch,
    pub(crate) unique: FastUniqueSets,
    /// Slot pairs one leaf's kernel found, before de-duplication.
    pub(crate) slot_pairs: Vec<[u32; 2]>,
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
            kernel: config.kernel.resolve(),
            nodes: Pool::new(),
            leaves: Pool::new(),
            soa: SoaBoxes::new(),
            box_count: 0,
            scratch: BuildScratch::default(),
            unique: FastUniqueSets::new(),
            slot_pairs: Vec::new(),
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
        self.kernel
    }

    /// How many boxes the last successful build indexed.
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
        self.box_count
    }

    /// Whether the last build indexed no box.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::AdaptiveGrid;
    /// assert!(AdaptiveGrid::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.box_count == 0
    }

    /// Shape of the last build: (inner and leaf nodes, leaves, box slots in
    /// leaves). Slots over the box count measure how often boxes were copied
    /// into several cells.
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
        let slots = self.leaves.as_slice().iter().map(|l| l.count as usize).sum();
        (self.nodes.len(), self.leaves.len(), slots)
    }
}

/// The SoA columns and ids of one leaf, padding included.
#[inline]
pub(crate) fn leaf_columns<'a>(soa: &'a SoaBoxes, leaf: &Leaf) -> (Columns<'a>, &'a [u32]) {
    let start = leaf.start as usize;
    let end = start + (leaf.count as usize).next_multiple_of(LANES);
    let cols = Columns {
        min: [&soa.min(0)[start..end], &soa.min(1)[start..end], &soa.min(2)[start..end]],
        max: [&soa.max(0)[start..end], &soa.max(1)[start..end], &soa.max(2)[start..end]],
    };
    (cols, &soa.ids()[start..end])
}
