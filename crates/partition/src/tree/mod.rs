//! The grid tree: the kernel's root split on all threads, one scoped job
//! per child subtree, a deterministic merge.

mod config;
mod error;
mod frame;
mod merge;
mod passes;
mod sharded;
mod subtree;

pub use config::{GridTreeConfig, PairMerge};
pub use error::PartitionError;
pub use frame::{GridTree, TreeStats};
