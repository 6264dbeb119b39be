//! The sparse adaptive grid: quantization, the split, the build walk, the
//! leaf kernels, all pairs, single-box queries and the invariant checker.

mod build;
mod capacity;
mod config;
mod leaf;
mod pairs;
pub mod parts;
mod point;
mod quantize;
mod query;
mod ray;
mod sphere;
mod split;
mod sweep;
mod tiles;
mod tree;
mod validate;

pub use build::FindPairsError;
pub use capacity::GridCapacity;
pub use config::{GridConfig, PairKernel, RayDedup};
pub use pairs::PairsError;
pub use tree::AdaptiveGrid;
pub use validate::ValidationError;
