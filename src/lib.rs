#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

pub use broadphase_kernel::{
    Aabb, AdaptiveGrid, Axis, Corner, Dedup, GridConfig, InputError, MAX_BOXES, PairKernel,
    PairsError, SortAndSweep, TreeError, brute_force_pairs, brute_force_query,
};
pub use broadphase_kernel::{
    CellHash, CountingSortGrid, CountingSortGridConfig, MAX_RADIUS, NeighborLists, NeighborRule,
    NeighborSearch, PointError, RowLookup, ScanKernel, SpatialHash, SpatialHashConfig,
    SpatialIndex, SpatialIndexConfig, brute_force_neighbor_pairs, brute_force_neighbor_rows,
    brute_force_neighbors_within, brute_force_sphere_contacts, brute_force_spheres_touching,
};
pub use broadphase_partition::{
    BuildError, GridTree, GridTreeConfig, JobContext, JobError, JobGroup, JobSystem,
    JobSystemBuilder, ParallelNeighborLists, PartitionError, RegionDedup, TreeStats,
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

/// The broad phase as a `hecs` system: [`BroadPhasePlugin`](ecs::BroadPhasePlugin),
/// its components (`Collider`, `Static`, `CollisionLayers`), its events and
/// errors, and the `hecs` it is built for. See `docs/ECS.md`.
pub mod ecs {
    pub use broadphase_ecs::*;
}
