//! Regression: a pile of identical boxes. Every pair overlaps, so a leaf
//! limit, a per-box partner limit or a split that separates nothing would
//! overflow, recurse forever, drop pairs or repeat them. Each pair must be
//! reported exactly once, for each dedup mode and leaf capacity.

use broadphase_kernel::{Aabb, AdaptiveGrid, Dedup, GridConfig};
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

fn check_pile(boxes: &[Aabb], what: &str) {
    let n = boxes.len() as u32;
    for dedup in [Dedup::ReferencePoint, Dedup::FastUnique] {
        for leaf_capacity in [1, 64, 512] {
            let config = GridConfig { dedup, leaf_capacity, ..GridConfig::default() };
            let mut grid = AdaptiveGrid::with_config(config);
            grid.build(boxes).unwrap();
            grid.validate(boxes).unwrap_or_else(|e| panic!("{what} {config:?}: {e}"));
            let (_, _, slots) = grid.shape();
            assert!(slots <= 64 * boxes.len(), "{what} {config:?}: {slots} slots");
            let mut pairs = Vec::new();
            grid.pairs(&mut pairs);
            assert_complete(&mut pairs, n, &format!("{what} {config:?}"));

            let mut hits = Vec::new();
            grid.query(&boxes[0], &mut hits).unwrap();
            hits.sort_unstable();
            assert!(hits.iter().copied().eq(0..n), "{what} {config:?}: query");
        }
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
