//! Every check that counts heap allocations or watches the heap, one binary
//! with the counting allocator installed. The counters are global to the
//! process, and the harness would spawn the next test's thread (and
//! allocate) while one counts, so the checks run in turn inside one test.

use broadphase_testkit::CountingAllocator;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

mod batch_warm_allocates_nothing;
mod ecs_snapshot_warm_allocates_nothing;
mod ecs_touching_warm_frame_allocates_nothing;
mod ecs_warm_frame_allocates_nothing;
mod jobs_indexed_jobs_allocate_nothing;
mod jobs_parallel_loops_allocate_nothing;
mod kernel_ray_hits_allocate_nothing;
mod kernel_warm_rebuild_allocates_nothing;
mod neighbors_parallel_fill_allocates_nothing;
mod neighbors_warm_rebuild_allocates_nothing;
mod partition_warm_frame_allocates_nothing;
mod persistent_snapshot_warm_allocates_nothing;
mod persistent_warm_update_allocates_nothing;
mod soak_game_loop;

/// `[(name, check)]` from `module::check` paths.
macro_rules! checks {
    ($($module:ident::$check:ident),* $(,)?) => {
        [$((concat!(stringify!($module), "::", stringify!($check)), $module::$check as fn())),*]
    };
}

/// Each module's checks, one after another, on one thread of the harness.
#[test]
fn warm_frames_allocate_nothing_and_the_heap_stays_flat() {
    let _serial = broadphase_testkit::serial();
    let checks = checks![
        batch_warm_allocates_nothing::warm_batches_allocate_nothing,
        ecs_snapshot_warm_allocates_nothing::warm_plugin_snapshots_and_restores_allocate_nothing,
        ecs_touching_warm_frame_allocates_nothing::warm_frames_with_contact_lists_allocate_nothing,
        ecs_warm_frame_allocates_nothing::warm_ecs_frames_allocate_nothing,
        jobs_indexed_jobs_allocate_nothing::a_warm_scope_of_indexed_jobs_allocates_nothing,
        jobs_parallel_loops_allocate_nothing::warm_parallel_loops_allocate_nothing,
        kernel_ray_hits_allocate_nothing::warm_all_hits_rays_allocate_nothing,
        kernel_warm_rebuild_allocates_nothing::warm_frames_allocate_nothing,
        neighbors_parallel_fill_allocates_nothing::warm_parallel_fills_allocate_nothing,
        neighbors_warm_rebuild_allocates_nothing::warm_frames_allocate_nothing,
        partition_warm_frame_allocates_nothing::warm_grid_tree_frames_allocate_nothing,
        persistent_snapshot_warm_allocates_nothing::warm_snapshots_and_restores_allocate_nothing,
        persistent_warm_update_allocates_nothing::warm_updates_allocate_nothing_over_a_long_run,
        soak_game_loop::five_thousand_frames_stay_flat_in_memory,
        soak_game_loop::the_live_heap_figure_sees_a_kept_allocation,
    ];
    for (name, check) in checks {
        let started = std::time::Instant::now();
        check();
        eprintln!("allocations: {name} ({:.1} s)", started.elapsed().as_secs_f64());
    }
}
