//! The persistent broad phase for broadphase: proxies with stable handles,
//! indexed by enlarged boxes, whose candidate pairs are kept from one
//! update to the next, so that an update costs what moved. A full rebuild
//! runs the partition's [`GridTree`](broadphase_partition::GridTree) on all
//! threads. See `docs/PERSISTENT.md` for the model in full.
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
//! - `bulk.rs`: setting many boxes at once, on all threads;
//! - `snapshot.rs`: snapshots of the state the next updates depend on,
//!   and restoring one, for rollback;
//! - `broad_phase.rs`: the calls and the update.

#![forbid(unsafe_code)]

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
mod slots;
mod snapshot;

pub use broad_phase::{PersistentBroadPhase, UpdatePath, UpdateStats};
pub use config::PersistentConfig;
pub use error::ProxyError;
pub use queries::QueryView;
pub use slots::{Proxy, ProxyKind};
pub use snapshot::BroadPhaseSnapshot;
