//! The persistent broad phase for broadphase: proxies with stable handles,
//! indexed by enlarged boxes, whose candidate pairs are kept from one
//! update to the next, so that an update costs what moved. A full rebuild
//! runs the partition's [`GridTree`](broadphase_partition::GridTree) on all
//! threads. See `docs/PERSISTENT.md` for the model in full.
//!
//! # Rollback
//!
//! [`PersistentBroadPhase::snapshot_into`] saves the state the next
//! updates depend on into a [`BroadPhaseSnapshot`] (allocating nothing once
//! the snapshot is warm), and [`PersistentBroadPhase::restore`] puts it
//! back: the same calls after it give the same handles, pairs, events and
//! query answers, bit for bit, on any number of threads. A snapshot holds
//! the slots, pending calls, kept candidates, published lists and the
//! index of enlarged boxes, so the update after a restore is as
//! incremental as the update after the snapshot was.
//!
//! ```
//! use broadphase_jobs::JobSystem;
//! use broadphase_persistent::{BroadPhaseSnapshot, PersistentBroadPhase, ProxyKind};
//! use broadphase_storage::Aabb;
//! use glam::Vec3;
//!
//! let jobs = JobSystem::new(2);
//! let mut world = PersistentBroadPhase::default();
//! let ball = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Dynamic)?;
//! let wall = world.insert(Aabb::new(Vec3::splat(2.0), Vec3::splat(3.0)), ProxyKind::Static)?;
//! let mut ring = vec![BroadPhaseSnapshot::default(); 8];
//! let frame = |world: &mut PersistentBroadPhase, frame: usize| {
//!     let x = frame as f32 * 0.5; // the game's input for this frame
//!     world.set_aabb(ball, Aabb::new(Vec3::splat(x), Vec3::splat(x + 1.0)))?;
//!     world.update(&jobs)
//! };
//! for n in 0..6 {
//!     frame(&mut world, n)?;
//!     world.snapshot_into(&mut ring[n]);
//! }
//! assert_eq!(world.pairs(), [[ball, wall]]);
//!
//! world.restore(&ring[1]); // back to the end of frame 1
//! assert!(world.pairs().is_empty());
//! frame(&mut world, 2)?; // replayed with the same input...
//! assert_eq!(world.started(), [[ball, wall]]); // ...the same events
//! # Ok::<(), broadphase_persistent::ProxyError>(())
//! ```
//!
//! Its files:
//!
//! - `slots.rs`: handles and the per-proxy arrays;
//! - `index.rs`: the grid of enlarged boxes, its stale entries, and the
//!   parallel query pass;
//! - `candidates.rs`: the sorted candidate list and the incremental
//!   merge that turns it into pairs and events, in parts on all threads;
//! - `full_merge.rs`: the merge of a full update, in parts on all
//!   threads;
//! - `pair_sort.rs`: the radix sort that puts fresh candidates in order;
//! - `queries.rs`: rays, boxes, points and spheres against the live
//!   proxies, through the index;
//! - `batch.rs`, `batch_queries.rs`: many of those queries in one call,
//!   on all threads, answered in input order;
//! - `bulk.rs`: setting many boxes at once, on all threads;
//! - `snapshot.rs`: snapshots of the state the next updates depend on,
//!   and restoring one, for rollback; `serialize.rs` (the `serde`
//!   feature): a snapshot through bytes, checked as it is read
//!   (`SnapshotError`);
//! - `broad_phase.rs`: the calls and the update.

#![forbid(unsafe_code)]

mod batch;
mod batch_queries;
mod broad_phase;
mod bulk;
mod candidates;
mod config;
mod error;
mod full_merge;
mod index;
mod pair_sort;
mod profile;
mod queries;
#[cfg(feature = "serde")]
mod serialize;
mod slots;
mod snapshot;

pub use batch::BatchAnswers;
pub use broad_phase::{PersistentBroadPhase, UpdatePath, UpdateStats, UpdateTimes};
pub use bulk::{AabbSource, SOURCE_RUN};
pub use config::PersistentConfig;
pub use error::ProxyError;
pub use queries::QueryView;
#[cfg(feature = "serde")]
pub use serialize::SnapshotError;
pub use slots::{Proxy, ProxyKind};
pub use snapshot::BroadPhaseSnapshot;
