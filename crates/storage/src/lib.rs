//! Storage for broadphase: the [`Aabb`] type and its input contract, the
//! query shapes ([`Ray`], [`Sphere`]) with their exact tests, typed
//! memory pools that a warm frame reuses without allocating, structure-of-
//! arrays box buffers padded for 16-wide SIMD loads, and [`FastUnique`].
//!
//! Nothing here knows about grids or threads; the kernel and partition crates
//! build on these pieces.

mod aabb;
mod fast_unique;
mod pool;
mod ray;
#[allow(unsafe_code, reason = "the aligned column is viewed as a slice of its lanes")]
mod soa;

pub use aabb::{Aabb, Axis, Corner, InputError, MAX_BOXES, validate_boxes};
pub use fast_unique::{FastUnique, FastUniqueSets};
pub use glam;
pub use pool::Pool;
pub use ray::{QueryError, QueryPart, Ray, Sphere, validate_point};
pub use soa::{AlignedF32, LANES, SENTINEL_ID, SoaBoxes};
