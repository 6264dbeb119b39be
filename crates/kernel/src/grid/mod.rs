//! The sparse adaptive grid: build, all pairs, single-box queries and the
//! invariant checker, one file each.

mod build;
mod capacity;
mod config;
mod pairs;
mod query;
mod simd;
mod tree;
mod validate;

pub use capacity::GridCapacity;
pub use config::{Dedup, GridConfig, PairKernel};
pub use pairs::PairsError;
pub use tree::AdaptiveGrid;
pub use validate::ValidationError;
