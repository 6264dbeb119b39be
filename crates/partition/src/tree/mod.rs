//! The load-balancer grid tree: the root split in parallel chunks, one job
//! per node below it, one kernel job per region, a deterministic merge.

mod buffers;
mod config;
mod error;
mod frame;
mod merge;
mod node;
mod pass;
mod plan;
mod planner;
mod root;

pub use config::{GridTreeConfig, RegionDedup};
pub use error::PartitionError;
pub use frame::{GridTree, TreeStats};
