//! Any grid tuning runs the tree: leaf capacities of 0, NaN or huge
//! replication limits and copy budgets (a copy budget of 1e30 once
//! overflowed a subtree's room), on a tree that splits tiny inputs. A
//! tuning read from bytes (the `serde` feature) can be any of these. Every
//! frame's pairs are the brute-force pairs.

use broadphase_jobs::JobSystem;
use broadphase_kernel::{Aabb, GridConfig, brute_force_pairs};
use broadphase_partition::{GridTree, GridTreeConfig};
use glam::Vec3;

#[test]
fn extreme_grid_tunings_find_the_brute_force_pairs() {
    let boxes: Vec<Aabb> = (0..500)
        .map(|i| {
            let c = Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32);
            Aabb::new(c, c + 1.5)
        })
        .collect();
    let mut expected = Vec::new();
    brute_force_pairs(&boxes, &mut expected).unwrap();
    expected.sort_unstable();
    let base = GridConfig::default();
    let grids = [
        GridConfig { leaf_capacity: 0, ..base },
        GridConfig { max_replication: f32::NAN, copy_budget: f32::NAN, ..base },
        GridConfig { max_replication: 1e30, copy_budget: 1e30, leaf_capacity: 0, ..base },
        GridConfig { copy_budget: f32::INFINITY, ..base },
    ];
    let jobs = JobSystem::new(2);
    for grid in grids {
        let config = GridTreeConfig { split_threshold: 32, grid, ..GridTreeConfig::default() };
        let mut pairs = Vec::new();
        GridTree::with_config(config).find_pairs(&jobs, &boxes, &mut pairs).unwrap();
        pairs.sort_unstable();
        assert_eq!(pairs, expected, "{grid:?}");
    }
}
