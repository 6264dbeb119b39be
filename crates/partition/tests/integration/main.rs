//! The grid tree's and the batch queries' integration tests, one binary. Each module is named for what it checks.

mod bad_input;
mod batched_rays;
mod batched_shapes;
mod extreme_tunings;
mod matches_kernel;
mod old_names_forward;
mod regions;
mod sharded_merge;
