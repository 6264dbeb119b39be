//! The grid tree's, the batch queries' and the persistent broad phase's
//! integration tests, one binary. Each module is named for what it checks.

mod bad_input;
mod batched_rays;
mod batched_shapes;
mod fast_unique_dedup;
mod matches_kernel;
mod persistent_calls;
mod persistent_matches_rebuild;
mod persistent_queries;
mod sharded_merge;
