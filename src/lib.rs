#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub use broadphase_kernel::{
    Aabb, AdaptiveGrid, Axis, Corner, Dedup, GridConfig, InputError, MAX_BOXES, PairKernel,
    PairsError, SortAndSweep, TreeError, brute_force_pairs, brute_force_query,
};
pub use glam;

/// The storage building blocks the kernel is made of, for users who build
/// their own structures on them: memory pools, padded SoA box buffers and
/// `FastUnique`.
pub mod storage {
    pub use broadphase_storage::{
        AlignedF32, FastUnique, FastUniqueSets, LANES, Pool, SENTINEL_ID, SoaBoxes, validate_boxes,
    };
}
