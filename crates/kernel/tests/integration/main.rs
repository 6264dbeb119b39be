//! The kernel's integration tests, one binary (the refusing allocator of
//! `pair_output_out_of_memory` keeps a binary of its own). Each module is
//! named for what it checks or for the input that once broke it.

mod a_copy_answers_as_the_original;
mod a_new_shape_is_one_impl;
mod bad_input_is_a_typed_error;
mod big_leaf_sweep;
mod boxes_on_split_planes;
mod extreme_tunings_build;
mod far_away_box;
mod fast_unique_dedup;
mod first_hit_tree_is_exact;
mod frustums_decided_by_quantized_boxes;
mod grid_matches_brute_force;
mod long_thin_boxes;
mod old_names_forward;
mod one_box_overlaps_all;
mod outliers_clamp_to_the_border;
mod pile_of_identical_boxes;
mod quantized_filter_is_exact;
mod rays_and_shapes_match_brute_force;
mod regions_match_brute_force;
mod simd_kernels_agree;
mod support;
mod thin_slab_world;
