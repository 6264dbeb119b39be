//! Regression: a pile of identical boxes. Every pair overlaps, so a leaf
//! limit, a per-box partner limit or a split that separates nothing would
//! overflow, recurse forever, drop pairs or repeat them. Each pair must be
//! reported exactly once, on both paths (`find_pairs`, and `build` then
//! `pairs`), for each pair kernel, leaf capacity and big-leaf sweep
//! threshold.

use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, PairKernel};
use broadphase_scenes::pile;
use glam::Vec3;

/// Asserts `pairs` is exactly every `[a, b]` with `a < b < n`, each once.
fn assert_complete(pairs: &mut [[u32; 2]], n: u32, what: &str) {
    let expected = n as usize * (n as usize - 1) / 2;
    assert_eq!(pairs.len(), expected, "{what}: pair count");
    pairs.sort_unstable();
    let mut want = (0..n).flat_map(|a| (a + 1..n).map(move |b| [a, b]));
    for (i, got) in pairs.iter().enumerate() {
        assert_eq!(Some(*got), want.next(), "{what}: pair #{i} (sorted)");
    }
}

/// Every available kernel with leaf capacities 1, 64 and 512 and the default
/// sweep threshold (a pile is one big leaf, swept), plus a threshold above
/// the pile (the pile tested all against all in tiles).
fn configs() -> Vec<(PairKernel, usize, usize)> {
    let default = GridConfig::default().sweep_above;
    let mut configs = Vec::new();
    for kernel in PairKernel::available() {
        for leaf_capacity in [1, 64, 512] {
            configs.push((kernel, leaf_capacity, default));
        }
        configs.push((kernel, 64, 4_000));
    }
    configs
}

fn check_pile(boxes: &[Aabb], what: &str) {
    let n = boxes.len() as u32;
    for (kernel, leaf_capacity, sweep_above) in configs() {
        let config = GridConfig { kernel, leaf_capacity, sweep_above, ..GridConfig::default() };
        let mut grid = AdaptiveGrid::with_config(config);
        let mut pairs = Vec::new();
        grid.find_pairs(boxes, &mut pairs).unwrap();
        assert_complete(&mut pairs, n, &format!("{what} {config:?} find_pairs"));
        let (_, _, slots) = grid.shape();
        assert!(slots <= 64 * boxes.len(), "{what} {config:?}: find_pairs: {slots} slots");

        grid.build(boxes).unwrap();
        grid.validate(boxes).unwrap_or_else(|e| panic!("{what} {config:?}: {e}"));
        let (_, _, slots) = grid.shape();
        assert!(slots <= 64 * boxes.len(), "{what} {config:?}: {slots} slots");
        grid.pairs(&mut pairs);
        assert_complete(&mut pairs, n, &format!("{what} {config:?}"));

        let mut hits = Vec::new();
        grid.query_aabb(&boxes[0], &mut hits).unwrap();
        hits.sort_unstable();
        assert!(hits.iter().copied().eq(0..n), "{what} {config:?}: query");
    }
}

/// The shared `pile` scene: 2,000 identical boxes give exactly 1,999,000 pairs.
#[test]
fn two_thousand_identical_boxes_give_every_pair_once() {
    let scene = pile();
    assert_eq!(scene.boxes.len(), 2_000);
    check_pile(&scene.boxes, "pile");
}

/// 3,000 zero-size boxes at one point give exactly 4,498,500 pairs.
#[test]
fn three_thousand_points_at_one_place_give_every_pair_once() {
    let p = Vec3::new(12.5, -3.0, 7.25);
    let boxes = vec![Aabb::new(p, p); 3_000];
    check_pile(&boxes, "3,000 points");
}
