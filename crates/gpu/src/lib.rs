//! The GPU backend of broadphase, on wgpu (Vulkan, WGSL shaders): the
//! counting-sort neighbor search built and searched on the device, giving
//! the same neighbor lists as the CPU structures, bit for bit, and the
//! overlapping pairs of boxes.
//!
//! - [`GpuContext`] opens a device ([`GpuError::NoAdapter`] where there is
//!   none: no GPU and no software Vulkan such as lavapipe).
//! - [`GpuNeighborSearch`] implements
//!   [`NeighborListSearch`](broadphase_neighbors::NeighborListSearch), the
//!   one-call interface the CPU structures implement too, so the same
//!   oracle tests run on both; and [`GpuNeighborSearch::neighbor_counts`]
//!   reads back the counts alone.
//! - [`GpuBoxPairs`] finds every overlapping pair of boxes, the same set as
//!   the CPU grid's; [`GpuNeighborSearch::find_sphere_contacts`] every
//!   pair of touching spheres, the CPU's contacts.
//! - [`GpuTimings`] says where a call's time went: upload, the passes
//!   (timed by the device where it can), read-back.
//!
//! This crate is its own cargo workspace: the main workspace's build and
//! tests never compile wgpu. `docs/GPU.md` says how the device stays exact
//! and how to run the tests on a machine without a GPU.
//!
//! # Example
//!
//! ```no_run
//! use broadphase_gpu::{GpuContext, GpuNeighborSearch};
//! use broadphase_neighbors::{NeighborListSearch, NeighborLists, SpatialHash};
//! use glam::Vec3;
//!
//! let points: Vec<Vec3> = (0..4096)
//!     .map(|i| Vec3::new((i % 16) as f32, ((i / 16) % 16) as f32, (i / 256) as f32) * 0.7)
//!     .collect();
//! let context = GpuContext::new()?;
//! let mut gpu = GpuNeighborSearch::new(&context); // keep it: buffers are reused
//! let mut lists = NeighborLists::default();
//! gpu.find_neighbor_lists(&points, 1.0, &mut lists)?;
//!
//! let mut expected = NeighborLists::default();
//! SpatialHash::default().find_neighbor_lists(&points, 1.0, &mut expected)?;
//! assert_eq!(lists.offsets(), expected.offsets());
//! assert_eq!(lists.indices(), expected.indices());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![forbid(unsafe_code)]

mod boxes;
mod buffer;
mod context;
mod error;
mod grid;
mod neighbors;
mod spheres;
mod timing;

pub use boxes::GpuBoxPairs;
pub use context::{GpuContext, GpuContextConfig};
pub use error::GpuError;
pub use grid::MIN_RADIUS;
pub use neighbors::{GpuNeighborSearch, GpuSearchConfig};
pub use timing::{GpuTimings, PassClock, Stage};
/// The wgpu this crate is built on (for [`GpuContextConfig::backends`]).
pub use wgpu;
