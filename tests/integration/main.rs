//! The workspace's integration tests through the facade, one binary: the
//! ECS plugin, the fuzz corpus, determinism across thread counts and the
//! shared scenes. The allocation-counting tests are the `allocations`
//! binary. Each module is named for what it checks.

#[path = "../support/corners.rs"]
mod corners;
#[path = "../support/fuzz_input.rs"]
mod fuzz_input;
#[path = "../support/fuzz_world.rs"]
mod fuzz_world;
#[cfg(feature = "serde")]
#[path = "../support/json_numbers.rs"]
mod json_numbers;

mod ecs_bad_box_is_an_error;
mod ecs_batch_queries;
mod ecs_compound_bodies;
mod ecs_determinism_across_threads;
mod ecs_events;
mod ecs_fuzz_regressions;
mod ecs_layers;
mod ecs_matches_brute_force;
mod ecs_queries;
mod ecs_rollback;
mod ecs_serde;
mod ecs_sleeping;
mod ecs_static_dynamic;
mod ecs_support;
mod ecs_touching;
mod ecs_touching_determinism;
mod errors_follow_the_rule;
mod fuzz_corpus_replays;
mod partition_determinism;
mod persistent_determinism;
mod shared_scenes_vs_sort_and_sweep;
mod source_files;
mod unsafe_is_where_the_docs_say;
