//! The single-thread kernel of broadphase: the sparse adaptive grid, and the
//! reference oracles everything is checked against.
//!
//! The kernel never knows about threads. [`parts`] exposes its steps —
//! bounds, quantization, a node's split, the walk under a node — so that
//! `broadphase-partition`'s `GridTree` can run the same grid on all cores,
//! scheduling the kernel's own decisions rather than copying them.
//!
//! # The adaptive grid
//!
//! [`AdaptiveGrid`] is a sparse linear hierarchy of 4×4×4 grids over the span
//! where the input's boxes lie. Every box is quantized once to 16 bits per axis; a cell
//! at depth `d` is the top `2d` bits of each coordinate. A node holding more
//! than [`GridConfig::leaf_capacity`] boxes is split by a counting sort
//! into the cells its boxes reach (only occupied cells get a child; levels
//! where one cell would get every box are skipped). The hierarchy is walked
//! depth first and, in [`AdaptiveGrid::find_pairs`], each leaf's pairs are
//! found the moment the leaf exists, by SIMD kernels on the 16-bit boxes
//! picked at run time ([`PairKernel`]); the exact `f32` test decides every
//! candidate the integers cannot. A pair is reported only by the leaf that
//! holds the max of the two boxes' low corners, so a pair straddling cells
//! is reported once with no hashing.
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
//! let mut grid = AdaptiveGrid::default(); // keep it: a warm frame allocates nothing
//! let mut pairs = Vec::new();
//! grid.find_pairs(&boxes, &mut pairs)?;
//!
//! let mut expected = Vec::new();
//! SortAndSweep::default().find_pairs(&boxes, &mut expected)?;
//! pairs.sort_unstable();
//! expected.sort_unstable();
//! assert_eq!(pairs, expected);
//! # Ok::<(), broadphase_kernel::InputError>(())
//! ```
//!
//! # Queries
//!
//! A kept build ([`AdaptiveGrid::build`]) answers box, point and sphere
//! queries, first-hit and all-hits rays, and queries with any region:
//! [`AdaptiveGrid::query_with`] takes a [`RegionTest`] (a box around the
//! region, a test that lets the walk skip cells, and the exact test), so a
//! query shape of the caller's own is one impl. [`Frustum`] and
//! [`Capsule`] are two such shapes. Every answer is what brute force over
//! the shape's own test gives.
//!
//! With the `serde` feature, [`GridConfig`] and [`AdaptiveGrid`]
//! serialize: a grid is written as its tuning and the boxes of its kept
//! build ([`AdaptiveGrid::kept_boxes`]), and reading it builds them again,
//! so a grid read from bytes is a valid build (bad boxes are an error).

mod grid;
mod reference;

pub use grid::parts;

pub use broadphase_storage::{
    Aabb, Axis, Capsule, Corner, Frustum, InputError, MAX_BOXES, QueryError, QueryPart, Ray,
    RegionTest, Sphere,
};
pub use grid::{
    AdaptiveGrid, FindPairsError, GridCapacity, GridConfig, PairKernel, PairsError, RayDedup,
    ValidationError,
};
pub use reference::{SortAndSweep, brute_force_pairs, brute_force_query, brute_force_ray_hits};
