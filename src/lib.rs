#![doc = include_str!("../README.md")]
#![forbid(unsafe_code)]

// The few names most users touch, at the root. Everything else lives in
// the module named for its capability.
pub use broadphase_jobs::JobSystem;
pub use broadphase_kernel::AdaptiveGrid;
pub use broadphase_partition::GridTree;
pub use broadphase_storage::{Aabb, InputError};
pub use glam;

/// The single-thread kernel: [`AdaptiveGrid`], a sparse
/// adaptive grid that finds every overlapping pair of a slice of boxes, or
/// every box a query box, point or sphere touches and every box a ray hits,
/// on the calling thread. See `docs/ARCHITECTURE.md` and `docs/QUERIES.md`.
pub mod grid {
    pub use broadphase_kernel::{
        AdaptiveGrid, FindPairsError, GridCapacity, GridConfig, PairKernel, PairsError, RayDedup,
        ValidationError,
    };
}

/// The query shapes and their exact tests: [`Ray`](query::Ray) (a ray or a
/// segment), [`Sphere`](query::Sphere), [`Capsule`](query::Capsule),
/// [`Frustum`](query::Frustum), and [`QueryError`](query::QueryError) for a
/// query that breaks its contract; [`RegionTest`](query::RegionTest), which
/// makes a shape of the caller's own a query (`query_with` on every
/// layer); [`cast_rays`](query::cast_rays), many rays against one grid on
/// all threads. See `docs/QUERIES.md`.
pub mod query {
    pub use broadphase_partition::{BatchError, BatchHits, cast_rays};
    pub use broadphase_storage::{
        Capsule, Frustum, QueryError, QueryPart, Ray, RegionTest, Sphere, validate_point,
    };
}

/// The same grid on all cores: [`GridTree`] runs the kernel's root split
/// in parallel chunks, walks what lies under each child node of the
/// [`AdaptiveGrid`]'s hierarchy as a job of a [`JobSystem`], and merges
/// the pairs deterministically. See `docs/PARTITION.md`.
pub mod tree {
    pub use broadphase_partition::{
        GridTree, GridTreeConfig, PairMerge, PartitionError, TreeStats,
    };
}

/// Space cut into regions for a search spread over machines:
/// [`Regions`](regions::Regions) tiles space with half-open boxes cut from
/// a sample, an [`Assignment`](regions::Assignment) sends each point to its
/// home region and its halo (each box to every region it overlaps), and an
/// ownership rule makes every pair come out of exactly one region. See
/// `docs/PARTITION.md`.
pub mod regions {
    pub use broadphase_partition::{Assignment, RegionError, Regions};
}

/// The broad phase that persists across frames:
/// [`PersistentBroadPhase`](persistent::PersistentBroadPhase) keeps proxies
/// with stable handles, indexes them by enlarged boxes, keeps candidate
/// pairs from one update to the next, and reports the pairs that started
/// and ended. A frame costs what moved; a
/// [`BroadPhaseSnapshot`](persistent::BroadPhaseSnapshot) saves and
/// restores it for rollback. See `docs/PERSISTENT.md`.
pub mod persistent {
    pub use broadphase_persistent::{
        AabbSource, BatchAnswers, BroadPhaseSnapshot, PersistentBroadPhase, PersistentConfig,
        Proxy, ProxyError, ProxyKind, QueryView, SOURCE_RUN, UpdatePath, UpdateStats, UpdateTimes,
    };
}

/// The job system the tree and the neighbor lists run on: persistent
/// workers, scoped jobs that borrow the caller's data, a wait that helps.
pub mod jobs {
    pub use broadphase_jobs::{
        IndexedJob, JobContext, JobError, JobGroup, JobSystem, JobSystemBuilder, Scope, SpawnError,
    };
}

/// Fixed-radius neighbor search over points: three structures behind one
/// [`NeighborSearch`](neighbors::NeighborSearch) trait, CSR neighbor
/// lists, and their parallel fill; neighbors by the nearest image in a box
/// that wraps ([`PeriodicGrid`](neighbors::PeriodicGrid)); sphere contacts
/// over radii of any spread ([`MultiLevelGrid`](neighbors::MultiLevelGrid));
/// lists reused across steps ([`VerletLists`](neighbors::VerletLists));
/// neighbors of a query set among the data
/// ([`neighbors_of`](neighbors::neighbors_of)).
/// See `docs/NEIGHBORS.md`.
pub mod neighbors {
    pub use broadphase_neighbors::{
        BuildError, CellHash, CheckedPoints, CountingSortGrid, CountingSortGridConfig, FillError,
        LEVEL_RATIO, MAX_RADIUS, MultiLevelGrid, NeighborListSearch, NeighborLists, NeighborRule,
        NeighborSearch, ParallelNeighborLists, PeriodicDomain, PeriodicError, PeriodicGrid,
        PointError, RowLookup, ScanKernel, SpatialHash, SpatialHashConfig, SpatialIndex,
        SpatialIndexConfig, VerletError, VerletLists, neighbors_of, point_bounds,
    };
}

/// The broad phase as a `hecs` system: [`BroadPhasePlugin`](ecs::BroadPhasePlugin),
/// its components (`Collider`, `Static`, `CollisionLayers`), its events and
/// errors, and the `hecs` it is built for. See `docs/ECS.md`.
pub mod ecs {
    pub use broadphase_ecs::*;
}

/// The building blocks the structures store their data in, for users who
/// build their own structures on them: the input contract and its limits;
/// `AlignedColumn<T>`, the 64-byte-aligned SoA column the kernel's leaves
/// (quantized `i16` corners, `u32` ids), its sweep's exact `f32` bounds and
/// the neighbor structures' sorted positions are made of; `Pool<T>`, the
/// record buffer with an O(1) reset that holds the kernel's build items,
/// the nodes of its hierarchy, kept boxes and split scratch; and
/// `FastUnique`.
pub mod storage {
    pub use broadphase_storage::{
        Aabb, AlignedColumn, Axis, Corner, FastUnique, FastUniqueSets, HUGE_PAGE_MIN_BYTES,
        InputError, LANES, Lane, MAX_BOXES, Pool, SENTINEL_ID, reserve_huge, validate_boxes,
    };
}

/// The reference answers everything is tested against: brute force for
/// pairs, queries and neighbors, and a plain sort-and-sweep. Slow by
/// design; for tests and for checking your own use.
pub mod oracle {
    pub use broadphase_kernel::{
        SortAndSweep, brute_force_pairs, brute_force_query, brute_force_ray_hits,
    };
    pub use broadphase_neighbors::{
        brute_force_neighbor_pairs, brute_force_neighbor_rows, brute_force_neighbors_of,
        brute_force_neighbors_within, brute_force_periodic_pairs, brute_force_sphere_contacts,
        brute_force_spheres_touching,
    };
}

/// `docs/NEIGHBORS.md`'s examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../docs/NEIGHBORS.md")]
pub struct NeighborsDoc;

/// `docs/QUERIES.md`'s example, compiled and run as a doc test.
#[cfg(doctest)]
#[doc = include_str!("../docs/QUERIES.md")]
pub struct QueriesDoc;
