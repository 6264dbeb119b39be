//! The neighbor structures' integration tests, one binary. Each module is
//! named for what it checks.

mod bad_input_is_a_typed_error;
mod inclusive_at_the_radius;
mod match_brute_force;
mod multilevel_matches_brute_force;
mod parallel_build;
mod parallel_neighbor_lists;
mod periodic_matches_brute_force;
mod query_sets_match_brute_force;
mod radius_whose_square_overflows;
mod shared_scenes;
mod simd_paths_are_tested;
mod support;
mod tiny_radius_wide_spread;
mod verlet_lists_match_brute_force;
