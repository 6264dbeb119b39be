//! Storage for broadphase: the [`Aabb`] type and its input contract, the
//! query shapes ([`Ray`], [`Sphere`], [`Capsule`], [`Frustum`]) with their
//! exact tests, [`RegionTest`], the seam that makes a shape of the user's
//! own a query, and the two
//! buffer types every structure keeps its data in, plus [`FastUnique`].
//!
//! - [`AlignedColumn<T>`](AlignedColumn): one structure-of-arrays column of
//!   `i16`, `u16`, `u32` or `f32`, 64-byte aligned, grown in whole 64-byte
//!   blocks, dereferencing to a plain slice. The kernel's leaves are such
//!   columns (quantized low and high corners as `i16`, owned axes as `i16`,
//!   ids as `u32`), and so are the exact `f32` bounds its sweep gathers per
//!   big leaf; the neighbor structures keep their particles' sorted
//!   positions (and sphere radii) as `f32` columns.
//! - [`Pool<T>`](Pool): a typed buffer of records whose
//!   [`reset`](Pool::reset) is O(1) and keeps the capacity. The kernel keeps
//!   its arrays of structs in pools (the build's quantized items, the
//!   hierarchy's nodes, the kept boxes) and its per-node split scratch
//!   (each item's child-range code, the items that span several cells);
//!   the grid tree, the persistent broad phase and the ECS plugin keep their
//!   records (boxes, candidate pairs, entities) and per-frame scratch
//!   (shares, queues, staging, sort buffers) in pools too.
//!
//! Both are cleared, never freed, so a warm frame of the same size
//! allocates nothing, and [`radix_sort_by_key`] sorts records in them;
//! [`copy_streaming`] moves a large block into a buffer nobody reads soon
//! without passing it through the cache.
//! Nothing here knows about grids or threads.
//!
//! The `serde` feature (off by default) implements `Serialize` and
//! `Deserialize` for [`Aabb`], [`InputError`] and the two buffers, which
//! are written as their elements (no capacity, no padding) and rebuilt by
//! appends when read, so a column read from bytes is as aligned and
//! padded as any other.

mod aabb;
mod capsule;
#[allow(unsafe_code, reason = "the aligned column is viewed as a slice of its lanes")]
mod column;
mod fast_unique;
mod frustum;
#[allow(unsafe_code, reason = "advice to the kernel on how to back a buffer's pages")]
mod huge_pages;
mod pool;
#[allow(unsafe_code, reason = "a cache prefetch, which never faults")]
mod prefetch;
mod radix;
mod ray;
mod region;
#[cfg(feature = "serde")]
mod serialize;
mod sorted_union;
#[allow(unsafe_code, reason = "non-temporal stores through raw pointers")]
mod stream_copy;

pub use aabb::{Aabb, Axis, Corner, InputError, MAX_BOXES, validate_boxes};
pub use capsule::Capsule;
pub use column::{AlignedColumn, LANES, Lane, SENTINEL_ID};
pub use fast_unique::{FastUnique, FastUniqueSets};
pub use frustum::Frustum;
pub use glam;
pub use huge_pages::{HUGE_PAGE_MIN_BYTES, reserve_huge, try_reserve_huge};
pub use pool::Pool;
pub use prefetch::prefetch;
pub use radix::radix_sort_by_key;
pub use ray::{QueryError, QueryPart, Ray, Sphere, validate_point};
pub use region::{RegionTest, planes_hold};
pub use sorted_union::{SortedUnion, merge_sorted_into};
pub use stream_copy::{STREAM_MIN_BYTES, copy_streaming};
