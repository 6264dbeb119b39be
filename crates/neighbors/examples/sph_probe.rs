#![allow(unsafe_code, missing_docs)]
// throwaway: time build and sorted lists on sph1m (not committed)
use broadphase_jobs::JobSystem;
use broadphase_neighbors::{
    CountingSortGrid, NeighborLists, NeighborSearch, ParallelNeighborLists,
};
use broadphase_scenes::{SPH1M_RADIUS, sph1m};
use std::time::Instant;
#[repr(C)]
struct Timespec {
    sec: i64,
    nsec: i64,
}
unsafe extern "C" {
    fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
}
fn cpu_ms() -> f64 {
    let mut t = Timespec { sec: 0, nsec: 0 };
    unsafe { clock_gettime(2, &mut t) };
    t.sec as f64 * 1e3 + t.nsec as f64 * 1e-6
}
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(String::as_str).unwrap_or("lists");
    let reps: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    let points = sph1m();
    let mut grid = CountingSortGrid::default();
    let mut lists = NeighborLists::default();
    let jobs = JobSystem::new(2);
    let mut par = ParallelNeighborLists::default();
    grid.build(&points, SPH1M_RADIUS).unwrap();
    grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
    let total = lists.total();
    let mut times = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        let c0 = cpu_ms();
        match what {
            "build" => {
                grid.build(&points, SPH1M_RADIUS).unwrap();
            }
            "lists" => {
                grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
            }
            "both" => {
                grid.build(&points, SPH1M_RADIUS).unwrap();
                grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
            }
            "par" => {
                grid.build_parallel(&jobs, &points, SPH1M_RADIUS).unwrap();
                par.fill(&jobs, &grid, &mut lists).unwrap();
            }
            "parlists" => {
                par.fill(&jobs, &grid, &mut lists).unwrap();
            }
            _ => panic!("what"),
        }
        let _ = c0;
        let _ = c0; times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    assert_eq!(lists.total(), total);
    println!("{what}: median {:.2} ms min {:.2} ms (total {total})", times[reps / 2], times[0]);
}
