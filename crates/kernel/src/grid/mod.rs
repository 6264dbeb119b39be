//! The sparse adaptive grid: quantization, the split, the build walk, the
//! leaf kernels, all pairs, single-box queries and the invariant checker.

mod build;
mod capacity;
mod config;
mod cpu;
mod hierarchy;
#[allow(unsafe_code, reason = "AVX2 tiny-leaf kernel by token; the pair output's room contract")]
mod leaf;
mod pairs;
pub mod parts;
#[allow(unsafe_code, reason = "the plane walk compiled for AVX2 by token")]
mod planes;
mod point;
#[allow(unsafe_code, reason = "the AVX2 quantizer, called with its detection token")]
mod quantize;
#[allow(unsafe_code, reason = "AVX2 walk and leaf test by token; an uninit stack of nodes")]
mod query;
#[allow(unsafe_code, reason = "AVX2 ray walk by token; an uninit stack of nodes")]
mod ray;
#[allow(unsafe_code, reason = "the rays' node tests in AVX2, called by token")]
mod ray_lanes;
#[allow(unsafe_code, reason = "the first-hit walk compiled for AVX2 by token; an uninit stack")]
mod ray_tree;
mod region;
#[cfg(feature = "serde")]
mod serialize;
mod sphere;
#[allow(unsafe_code, reason = "the SSE4.1 cell codes, called with their detection token")]
mod split;
#[allow(unsafe_code, reason = "the AVX2 sweep of big leaves, called with its detection token")]
mod sweep;
#[allow(unsafe_code, reason = "the AVX2 4x4 tile kernel, called with its detection token")]
mod tiles;
mod validate;

pub use build::FindPairsError;
pub use capacity::GridCapacity;
pub use config::{GridConfig, PairKernel, RayDedup};
pub use hierarchy::AdaptiveGrid;
pub use pairs::PairsError;
pub use validate::ValidationError;
