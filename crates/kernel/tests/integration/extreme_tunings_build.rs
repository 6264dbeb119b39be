//! Any tuning builds a valid grid: leaf capacities and sweep thresholds of
//! 0 or the largest `usize`, NaN, negative or huge replication limits and
//! copy budgets (a copy budget of 1e30 once overflowed the build's box
//! budget). A tuning read from bytes (the `serde` feature) can be any of
//! these. Every build's pairs are the brute-force pairs.

use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, brute_force_pairs};
use glam::Vec3;

#[test]
fn extreme_tunings_build_and_find_the_brute_force_pairs() {
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
    let tunings = [
        GridConfig { leaf_capacity: 0, ..base },
        GridConfig { sweep_above: 0, ..base },
        GridConfig { max_replication: f32::NAN, ..base },
        GridConfig { max_replication: 1e30, copy_budget: 1e30, leaf_capacity: 0, ..base },
        GridConfig { copy_budget: -1.0, ..base },
        GridConfig { copy_budget: f32::NAN, leaf_capacity: 1, ..base },
        GridConfig { copy_budget: f32::INFINITY, max_replication: f32::INFINITY, ..base },
        GridConfig { leaf_capacity: usize::MAX, sweep_above: usize::MAX, ..base },
    ];
    for config in tunings {
        let mut grid = AdaptiveGrid::with_config(config);
        grid.build(&boxes).unwrap();
        grid.validate(&boxes).unwrap();
        let mut pairs = Vec::new();
        grid.pairs(&mut pairs);
        pairs.sort_unstable();
        assert_eq!(pairs, expected, "{config:?}");
    }
}
