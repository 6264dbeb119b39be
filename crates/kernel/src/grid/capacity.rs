//! The room in a grid's buffers, to make one grid as roomy as others.
//!
//! A grid's buffers only grow, each to what the largest input it has seen
//! needed. Threads that each keep a grid and take regions of one scene in
//! whatever order the scheduler gives them would each keep growing until
//! they had seen the largest region, at a moment nobody can predict. A
//! caller that owns the grids can instead, after a frame, take the largest
//! capacity of every buffer over all grids ([`GridCapacity::max`]) and
//! reserve it in each ([`AdaptiveGrid::reserve`]): from then on no grid
//! allocates for any region of that frame, on any thread.

use super::hierarchy::AdaptiveGrid;

/// How many items each buffer of an [`AdaptiveGrid`] holds without
/// allocating.
///
/// # Examples
///
/// ```
/// use broadphase_kernel::{Aabb, AdaptiveGrid};
/// use glam::Vec3;
///
/// let big: Vec<Aabb> = (0..500).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 1.5))).collect();
/// let mut seen_big = AdaptiveGrid::default();
/// seen_big.build(&big)?;
/// let mut seen_small = AdaptiveGrid::default();
/// seen_small.build(&big[..10])?;
///
/// let room = seen_big.capacity().max(seen_small.capacity());
/// seen_small.reserve(&room);
/// assert_eq!(seen_small.capacity().max(room), seen_small.capacity()); // at least `room` everywhere
/// # Ok::<(), broadphase_kernel::InputError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GridCapacity {
    items: usize,
    nodes: usize,
    split_codes: usize,
    split_spanning: usize,
    leaf_slots: usize,
    boxes: usize,
    leaf_scratch: usize,
    sweep: usize,
    /// The first-hit rays' tree, in nodes.
    ray_tree: usize,
}

impl GridCapacity {
    /// The larger room of the two, buffer by buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, GridCapacity};
    /// let empty = AdaptiveGrid::default().capacity();
    /// assert_eq!(empty.max(GridCapacity::default()), empty);
    /// ```
    #[must_use]
    pub fn max(self, other: GridCapacity) -> GridCapacity {
        GridCapacity {
            items: self.items.max(other.items),
            nodes: self.nodes.max(other.nodes),
            split_codes: self.split_codes.max(other.split_codes),
            split_spanning: self.split_spanning.max(other.split_spanning),
            leaf_slots: self.leaf_slots.max(other.leaf_slots),
            boxes: self.boxes.max(other.boxes),
            leaf_scratch: self.leaf_scratch.max(other.leaf_scratch),
            sweep: self.sweep.max(other.sweep),
            ray_tree: self.ray_tree.max(other.ray_tree),
        }
    }
}

impl AdaptiveGrid {
    /// The room in every buffer of this grid.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{Aabb, AdaptiveGrid};
    /// let mut grid = AdaptiveGrid::default();
    /// let before = grid.capacity();
    /// grid.build(&[Aabb::default(); 100])?;
    /// assert_ne!(grid.capacity(), before);
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn capacity(&self) -> GridCapacity {
        let builder = &self.builder;
        let [split_codes, split_spanning] = builder.splitter.capacity();
        GridCapacity {
            // The item stack's length is its high-water mark: it is resized,
            // never cleared.
            items: builder.items.len().max(builder.items.capacity()),
            nodes: builder.nodes.capacity(),
            split_codes,
            split_spanning,
            leaf_slots: self.leaves.capacity(),
            boxes: self.boxes.capacity(),
            leaf_scratch: self.leaf_scratch.capacity(),
            sweep: self.sweep.capacity(),
            ray_tree: self.ray_tree.capacity(),
        }
    }

    /// Grows every buffer to at least the room in `capacity`: afterwards,
    /// building, listing the pairs of and casting rays through any input
    /// that a grid of that capacity handled without allocating allocates
    /// nothing here either.
    /// The grid's contents are unchanged.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{Aabb, AdaptiveGrid};
    /// let mut roomy = AdaptiveGrid::default();
    /// roomy.build(&[Aabb::default(); 300])?;
    /// let mut grid = AdaptiveGrid::default();
    /// grid.reserve(&roomy.capacity());
    /// assert_eq!(grid.capacity().max(roomy.capacity()), grid.capacity());
    /// assert!(grid.is_empty());
    /// # Ok::<(), broadphase_kernel::InputError>(())
    /// ```
    pub fn reserve(&mut self, capacity: &GridCapacity) {
        // Exact: amortised growth would overshoot the largest grid, which
        // would then be the smaller one, and grids levelled after every
        // frame would keep doubling each other.
        let builder = &mut self.builder;
        builder.items.reserve_exact(capacity.items.saturating_sub(builder.items.len()));
        builder.nodes.reserve_exact(capacity.nodes.saturating_sub(builder.nodes.len()));
        builder.splitter.reserve_exact(capacity.split_codes, capacity.split_spanning);
        self.leaves.reserve_exact(capacity.leaf_slots);
        self.boxes.reserve_exact(capacity.boxes.saturating_sub(self.boxes.len()));
        self.leaf_scratch.reserve_exact(capacity.leaf_scratch);
        self.sweep.reserve_exact(capacity.sweep);
        self.ray_tree.reserve_exact(capacity.ray_tree);
    }
}
