//! The single-thread kernel of broadphase: the sparse adaptive grid, and the
//! reference oracles everything is checked against.
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
mod neighbors;
mod reference;

pub use broadphase_storage::{Aabb, Axis, Corner, InputError, MAX_BOXES};
pub use grid::{AdaptiveGrid, Dedup, GridCapacity, GridConfig, PairKernel, PairsError, TreeError};
pub use neighbors::{
    CellHash, CountingSortGrid, CountingSortGridConfig, MAX_RADIUS, NeighborLists, NeighborRule,
    NeighborSearch, PointError, RowLookup, ScanKernel, SpatialHash, SpatialHashConfig,
    SpatialIndex, SpatialIndexConfig, brute_force_neighbor_pairs, brute_force_neighbor_rows,
    brute_force_neighbors_within, brute_force_sphere_contacts, brute_force_spheres_touching,
};
pub use reference::{SortAndSweep, brute_force_pairs, brute_force_query};
