//! Every check that counts heap allocations or watches the heap, one binary
//! with the counting allocator installed. The counters are global to the
//! process, and the harness would spawn the next test's thread (and
//! allocate) while one counts, so within a process the checks run in turn
//! inside one test; the test deals them to two child processes of this
//! binary, which run side by side.

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
mod persistent_batch_warm_allocates_nothing;
mod persistent_snapshot_warm_allocates_nothing;
mod persistent_warm_update_allocates_nothing;
mod soak_game_loop;

/// `[(name, check, process)]` from `module::check => process` entries.
macro_rules! checks {
    ($($module:ident::$check:ident => $process:literal),* $(,)?) => {
        [$((concat!(stringify!($module), "::", stringify!($check)), $module::$check as fn(), $process)),*]
    };
}

/// Names the share of the checks a child process runs.
const PROCESS_VAR: &str = "BROADPHASE_ALLOCATION_CHECKS_PROCESS";

/// Child processes the checks are dealt to: the counters are global to a
/// process, so checks run in turn within one, and side by side in two.
const PROCESSES: usize = 2;

/// Every check, in one of [`PROCESSES`] child processes of this binary
/// (dealt so that each takes about half the time), one after another
/// there, on one thread of its harness.
#[test]
fn warm_frames_allocate_nothing_and_the_heap_stays_flat() {
    let checks = checks![
        batch_warm_allocates_nothing::warm_batches_allocate_nothing => 0,
        ecs_snapshot_warm_allocates_nothing::warm_plugin_snapshots_and_restores_allocate_nothing => 0,
        ecs_touching_warm_frame_allocates_nothing::warm_frames_with_contact_lists_allocate_nothing => 1,
        ecs_warm_frame_allocates_nothing::warm_ecs_frames_allocate_nothing => 0,
        jobs_indexed_jobs_allocate_nothing::a_warm_scope_of_indexed_jobs_allocates_nothing => 0,
        jobs_parallel_loops_allocate_nothing::warm_parallel_loops_allocate_nothing => 0,
        kernel_ray_hits_allocate_nothing::warm_all_hits_rays_allocate_nothing => 1,
        kernel_warm_rebuild_allocates_nothing::warm_frames_allocate_nothing => 0,
        kernel_warm_rebuild_allocates_nothing::warm_copies_allocate_nothing => 1,
        neighbors_parallel_fill_allocates_nothing::warm_parallel_fills_allocate_nothing => 1,
        neighbors_warm_rebuild_allocates_nothing::warm_frames_allocate_nothing => 0,
        partition_warm_frame_allocates_nothing::warm_grid_tree_frames_allocate_nothing => 0,
        persistent_batch_warm_allocates_nothing::warm_persistent_and_plugin_batches_allocate_nothing => 0,
        persistent_snapshot_warm_allocates_nothing::warm_snapshots_and_restores_allocate_nothing => 1,
        persistent_warm_update_allocates_nothing::warm_updates_allocate_nothing_over_a_long_run => 1,
        soak_game_loop::five_thousand_frames_stay_flat_in_memory => 1,
        soak_game_loop::the_live_heap_figure_sees_a_kept_allocation => 1,
    ];
    let Ok(process) = std::env::var(PROCESS_VAR) else {
        run_children();
        return;
    };
    let process: usize = process.parse().expect("a process number");
    let _serial = broadphase_testkit::serial();
    for (name, check, _) in checks.into_iter().filter(|&(_, _, p)| p == process) {
        let started = std::time::Instant::now();
        check();
        eprintln!("allocations: {name} ({:.1} s)", started.elapsed().as_secs_f64());
    }
}

/// Runs this test again in each child process, side by side, and fails
/// with a child's output if it failed.
fn run_children() {
    let exe = std::env::current_exe().expect("the test binary's path");
    let children: Vec<_> = (0..PROCESSES)
        .map(|process| {
            std::process::Command::new(&exe)
                .args(["--exact", "warm_frames_allocate_nothing_and_the_heap_stays_flat"])
                .args(["--nocapture", "--test-threads=1"])
                .env(PROCESS_VAR, process.to_string())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("a child process")
        })
        .collect();
    for (process, child) in children.into_iter().enumerate() {
        let output = child.wait_with_output().expect("the child's output");
        let stderr = String::from_utf8_lossy(&output.stderr);
        eprint!("{stderr}");
        // A child that ran no check (a filter, a changed name) must fail.
        let ran = stderr.matches("allocations: ").count();
        assert!(
            output.status.success() && ran > 0,
            "allocation checks, process {process}: {} ({ran} checks ran)\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout)
        );
    }
}
