//! The sparse adaptive grid: quantization, the split, the build walk, the
//! leaf kernels, all pairs, single-box queries and the invariant checker.

mod build;
mod capacity;
mod config;
#[allow(unsafe_code, reason = "the AVX2 tile kernel for tiny leaves, called after its CPU check")]
mod leaf;
mod pairs;
pub mod parts;
mod point;
#[allow(unsafe_code, reason = "the AVX2 quantizer, called after its CPU check")]
mod quantize;
#[allow(unsafe_code, reason = "the AVX2 tree walk and leaf test, called after their CPU checks")]
mod query;
#[allow(unsafe_code, reason = "the AVX2 tree walk of a ray, called after its CPU check")]
mod ray;
mod sphere;
#[allow(unsafe_code, reason = "the SSE4.1 cell codes, called after their CPU check")]
mod split;
#[allow(unsafe_code, reason = "the AVX2 sweep of big leaves, called after its CPU check")]
mod sweep;
#[allow(unsafe_code, reason = "the AVX2 4x4 tile kernel, called after its CPU check")]
mod tiles;
mod tree;
mod validate;

pub use build::FindPairsError;
pub use capacity::GridCapacity;
pub use config::{GridConfig, PairKernel, RayDedup};
pub use pairs::PairsError;
pub use tree::AdaptiveGrid;
pub use validate::ValidationError;
