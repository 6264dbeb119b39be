//! The persistent broad phase's integration tests, one binary: every call
//! against rebuilding from scratch and against brute force, queries, and
//! the all-hits rays with both ways of dropping a box's copies. Each module
//! is named for what it checks.

#[cfg(feature = "serde")]
#[path = "../../../../tests/support/json_numbers.rs"]
mod json_numbers;

#[path = "../../../../tests/support/corners.rs"]
mod corners;

mod fast_unique_dedup;
mod persistent_batch_queries;
mod persistent_calls;
mod persistent_matches_rebuild;
mod persistent_queries;
mod persistent_rollback;
mod persistent_serde;
