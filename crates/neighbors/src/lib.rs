//! Fixed-radius neighbor search over particles for broadphase: three
//! structures behind one trait, [`NeighborSearch`], the brute-force oracles
//! they are tested against, and [`ParallelNeighborLists`], which fills their
//! neighbor lists on the `broadphase-jobs` job system.
//!
//! # The model
//!
//! - **What is a neighbor.** Built from points and a radius
//!   ([`NeighborSearch::build`]), two points are neighbors when
//!   `distance <= radius`; built from spheres
//!   ([`NeighborSearch::build_spheres`]), two spheres are in contact when
//!   `distance <= r_i + r_j`. Both are inclusive, and distances are
//!   compared squared in `f32` exactly as the oracles
//!   ([`brute_force_neighbor_pairs`] and its siblings) compute them, so
//!   every structure agrees with them bit for bit.
//! - **Three structures, one layout.** [`CountingSortGrid`] is a dense grid
//!   over the data's bounds filled by a stable counting sort;
//!   [`SpatialHash`] hashes cells into a fixed table of buckets, with no
//!   bounds; [`SpatialIndex`] sorts the particles by a packed 64-bit cell
//!   key and finds rows of cells by binary search or a hash map. All three
//!   end with the particles sorted by cell into padded structure-of-arrays
//!   columns and share one scan kernel ([`ScanKernel`]: scalar, AVX2 or
//!   AVX-512, picked at run time; the `scalar` feature forces the scalar
//!   one); they differ only in how a box of cells becomes ranges of slots.
//! - **Indices.** Results are in the caller's indices, except the
//!   *sorted* ones: [`NeighborSearch::sorted_order`] maps a sorted slot to
//!   the caller's index, and [`NeighborSearch::sorted_neighbor_lists`]
//!   gives rows and entries as slots, with no remapping.
//! - **Memory.** A structure and a [`NeighborLists`] keep their buffers
//!   across builds, grown never shrunk: a warm frame allocates nothing.
//! - **Bad input.** Non-finite points, bad radii and the like are a
//!   [`PointError`] naming the first bad index, never a panic. A caller
//!   that copies its points anyway can check them in the same pass
//!   ([`CheckedPoints`]) and build with
//!   [`NeighborSearch::build_checked`], which does not read them again.
//! - **Threads.** Every read takes `&self`, and the per-range methods
//!   ([`NeighborSearch::for_each_neighbor_pair_in`],
//!   [`NeighborSearch::sorted_neighbor_lists`]) give exactly the whole over
//!   a partition of the slots. [`ParallelNeighborLists`] runs those ranges
//!   as scoped jobs that borrow the structure, and
//!   [`CountingSortGrid::build_parallel`] builds the grid on the same job
//!   system (the other structures build on one thread).
//!
//! `unsafe` is allowed only in the modules that say why where they are
//! declared: the SIMD kernels (`simd.rs`), the calls into walks compiled
//! for their CPU feature (`search.rs`, `periodic.rs`, `verlet.rs`), the
//! cell keys (`counting_sort_grid.rs`) and one prefetch (`csr.rs`); each
//! block says why it is sound.
//!
//! # Example
//!
//! ```
//! use broadphase_jobs::JobSystem;
//! use broadphase_neighbors::{
//!     CountingSortGrid, NeighborLists, NeighborSearch, ParallelNeighborLists,
//!     brute_force_neighbor_pairs,
//! };
//! use glam::Vec3;
//!
//! // A 20×20×20 lattice of spacing 0.9: with radius 1, the six nearest
//! // points of each point are its neighbors.
//! let points: Vec<Vec3> = (0..8000)
//!     .map(|i| Vec3::new((i % 20) as f32, ((i / 20) % 20) as f32, (i / 400) as f32) * 0.9)
//!     .collect();
//! let mut grid = CountingSortGrid::default(); // keep it: warm rebuilds allocate nothing
//! grid.build(&points, 1.0)?;
//!
//! // Every pair once, caller indices, `a < b`: the brute-force answer.
//! let (mut pairs, mut expected) = (Vec::new(), Vec::new());
//! grid.neighbor_pairs(&mut pairs);
//! brute_force_neighbor_pairs(&points, 1.0, &mut expected)?;
//! pairs.sort_unstable();
//! assert_eq!(pairs, expected);
//!
//! // Per-particle lists in sorted order, on one thread and on two.
//! let mut single = NeighborLists::default();
//! grid.sorted_neighbor_lists(0..grid.len(), &mut single);
//! assert_eq!(single.total(), 2 * pairs.len());
//! let jobs = JobSystem::new(2);
//! let (mut parallel, mut lists) = (ParallelNeighborLists::default(), NeighborLists::default());
//! parallel.fill(&jobs, &grid, &mut lists)?;
//! assert_eq!(lists.offsets(), single.offsets());
//! assert_eq!(lists.indices(), single.indices());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod api;
mod batch;
// Only the AVX2 walk runs by blocks; the scalar twin is its test.
#[cfg_attr(not(simd), allow(dead_code))]
mod block;
mod brute_force;
mod checked_points;
#[allow(unsafe_code, reason = "AVX2 cell keys, given a token; an unchecked cast of clamped floats")]
mod counting_sort_grid;
mod cross;
mod csr;
mod multilevel;
mod pair_batch;
mod parallel;
#[allow(unsafe_code, reason = "the AVX2 pair walk of the periodic grid, called with its token")]
mod periodic;
mod points;
mod scan;
mod search;
#[cfg(simd)]
#[allow(unsafe_code, reason = "the AVX2 and AVX-512 kernels and the walks compiled for them")]
mod simd;
mod sorted;
mod spatial_hash;
mod spatial_index;
mod stencil;
mod verlet;

pub use api::NeighborSearch;
pub use batch::NeighborListSearch;
/// The axis a [`PointError::NotFinite`] names.
pub use broadphase_storage::Axis;
pub use brute_force::{
    brute_force_neighbor_pairs, brute_force_neighbor_rows, brute_force_neighbors_within,
    brute_force_sphere_contacts, brute_force_spheres_touching,
};
pub use checked_points::CheckedPoints;
pub use counting_sort_grid::{BuildError, CountingSortGrid, CountingSortGridConfig};
pub use cross::{brute_force_neighbors_of, neighbors_of};
pub use csr::NeighborLists;
pub use multilevel::{LEVEL_RATIO, MultiLevelGrid};
pub use parallel::{FillError, ParallelNeighborLists};
pub use periodic::{PeriodicDomain, PeriodicError, PeriodicGrid, brute_force_periodic_pairs};
pub use points::{MAX_RADIUS, PointError, point_bounds};
pub use scan::ScanKernel;
pub use search::NeighborRule;
pub use spatial_hash::{CellHash, SpatialHash, SpatialHashConfig};
pub use spatial_index::{RowLookup, SpatialIndex, SpatialIndexConfig};
pub use verlet::{VerletError, VerletLists};
