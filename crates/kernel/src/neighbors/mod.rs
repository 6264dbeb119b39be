//! Fixed-radius neighbor search over particles: the three structures of the
//! source documents behind one interface, [`NeighborSearch`], and the
//! brute-force oracles they are tested against.
//!
//! - [`CountingSortGrid`]: a dense grid over the data's bounds, filled by a
//!   stable counting sort (Fluids v3).
//! - [`SpatialHash`]: cells hashed into a fixed table of buckets
//!   (Teschner et al. 2003).
//! - [`SpatialIndex`]: particles sorted by a packed 64-bit cell key, rows of
//!   cells found by binary search or a hash map (the SpatialIndex demo).
//!
//! All three sort the particles by cell into SoA columns and share one scan
//! kernel; they differ in how a box of cells becomes ranges of slots.

mod api;
mod brute_force;
mod counting_sort_grid;
mod csr;
mod points;
mod scan;
mod search;
#[cfg(all(target_arch = "x86_64", not(feature = "scalar")))]
mod simd;
mod sorted;
mod spatial_hash;
mod spatial_index;
mod stencil;

pub use api::NeighborSearch;
pub use brute_force::{
    brute_force_neighbor_pairs, brute_force_neighbor_rows, brute_force_neighbors_within,
    brute_force_sphere_contacts, brute_force_spheres_touching,
};
pub use counting_sort_grid::{CountingSortGrid, CountingSortGridConfig};
pub use csr::NeighborLists;
pub use points::{MAX_RADIUS, PointError};
pub use scan::ScanKernel;
pub use search::NeighborRule;
pub use spatial_hash::{CellHash, SpatialHash, SpatialHashConfig};
pub use spatial_index::{RowLookup, SpatialIndex, SpatialIndexConfig};
