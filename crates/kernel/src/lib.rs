//! The single-thread kernel of broadphase: the sparse adaptive grid, and the
//! reference oracles everything is checked against.
//!
//! The kernel never knows about threads. `broadphase-partition`'s
//! `GridTree` runs this same grid on all cores: it splits a frame's boxes
//! into regions and builds one `AdaptiveGrid` per region on each thread.
//!
//! # The adaptive grid
//!
//! [`AdaptiveGrid`] is a sparse linear tree of 4×4×4 grids. A node holding
//! more than [`GridConfig::leaf_capacity`] boxes is split into up to 64 cells
//! over the extent its boxes cover; a box goes into every cell it overlaps,
//! only occupied cells get a child, and a 64-bit occupancy mask per node lets
//! queries skip empty cells. Leaves keep their boxes as padded SoA columns;
//! all-pairs tests each leaf's boxes against each other with a SIMD kernel
//! picked at run time ([`PairKernel`]), and reports a pair only in the leaf
//! that owns the min corner of the two boxes' intersection, so a pair
//! straddling cells is reported once with no hashing.
//!
//! ```
//! use broadphase_kernel::{AdaptiveGrid, Aabb, SortAndSweep};
//! use glam::Vec3;
//!
//! let boxes: Vec<Aabb> = (0..1000)
//!     .map(|i| {
//!         let c = Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32) * 3.0;
//!         Aabb::new(c, c + Vec3::splat(3.0)) // neighbours touch
//!     })
//!     .collect();
//! let mut grid = AdaptiveGrid::default();
//! grid.build(&boxes)?;
//! let mut pairs = Vec::new();
//! grid.pairs(&mut pairs);
//!
//! let mut expected = Vec::new();
//! SortAndSweep::default().pairs(&boxes, &mut expected)?;
//! pairs.sort_unstable();
//! expected.sort_unstable();
//! assert_eq!(pairs, expected);
//! # Ok::<(), broadphase_kernel::InputError>(())
//! ```

mod grid;
mod reference;

pub use grid::parts;

pub use broadphase_storage::{Aabb, Axis, Corner, InputError, MAX_BOXES};
pub use grid::{
    AdaptiveGrid, FindPairsError, GridCapacity, GridConfig, PairKernel, PairsError, ValidationError,
};
pub use reference::{SortAndSweep, brute_force_pairs, brute_force_query};
