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

use super::tree::AdaptiveGrid;

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
    nodes: usize,
    leaves: usize,
    slots: usize,
    items: usize,
    ranges: usize,
    tasks: usize,
    slot_pairs: usize,
    unique_sets: usize,
    unique_spill: usize,
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
            nodes: self.nodes.max(other.nodes),
            leaves: self.leaves.max(other.leaves),
            slots: self.slots.max(other.slots),
            items: self.items.max(other.items),
            ranges: self.ranges.max(other.ranges),
            tasks: self.tasks.max(other.tasks),
            slot_pairs: self.slot_pairs.max(other.slot_pairs),
            unique_sets: self.unique_sets.max(other.unique_sets),
            unique_spill: self.unique_spill.max(other.unique_spill),
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
        let [unique_sets, unique_spill] = self.unique.capacity();
        GridCapacity {
            nodes: self.nodes.capacity(),
            leaves: self.leaves.capacity(),
            slots: self.soa.capacity(),
            items: self.scratch.items.capacity(),
            ranges: self.scratch.ranges.capacity(),
            tasks: self.scratch.tasks.capacity(),
            slot_pairs: self.slot_pairs.capacity(),
            unique_sets,
            unique_spill,
        }
    }

    /// Grows every buffer to at least the room in `capacity`: afterwards,
    /// building and listing the pairs of any input that a grid of that
    /// capacity handled without allocating allocates nothing here either.
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
        self.nodes.reserve_exact(capacity.nodes.saturating_sub(self.nodes.len()));
        self.leaves.reserve_exact(capacity.leaves.saturating_sub(self.leaves.len()));
        self.soa.reserve_exact(capacity.slots.saturating_sub(self.soa.len()));
        let scratch = &mut self.scratch;
        scratch.items.reserve_exact(capacity.items.saturating_sub(scratch.items.len()));
        scratch.ranges.reserve_exact(capacity.ranges.saturating_sub(scratch.ranges.len()));
        scratch.tasks.reserve_exact(capacity.tasks.saturating_sub(scratch.tasks.len()));
        self.slot_pairs.reserve_exact(capacity.slot_pairs.saturating_sub(self.slot_pairs.len()));
        self.unique.reserve(capacity.unique_sets, capacity.unique_spill);
    }
}
