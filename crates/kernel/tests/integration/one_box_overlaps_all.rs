//! Regression: one huge box over 20,000 sparse boxes. The huge box lands in
//! every cell, so a split copying it everywhere must neither lose nor repeat
//! any of its 20,000 pairs, nor disturb the sparse pairs.

use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, PairKernel, SortAndSweep};
use broadphase_scenes::uniform;
use glam::Vec3;

/// Exactly the sparse pairs plus one pair per sparse box with the huge box,
/// with the huge box first, in the middle and last.
#[test]
fn huge_box_pairs_with_every_sparse_box_once() {
    let sparse = uniform(20_000, 4242).boxes;
    let mut sparse_pairs = Vec::new();
    SortAndSweep::default().find_pairs(&sparse, &mut sparse_pairs).unwrap();
    assert!(!sparse_pairs.is_empty());
    let huge = Aabb::new(Vec3::splat(-10.0), Vec3::splat(1e4));
    assert!(sparse.iter().all(|b| b.overlaps(&huge)));

    for at in [0usize, 10_000, 20_000] {
        let mut boxes = sparse.clone();
        boxes.insert(at, huge);
        let id = |i: u32| if (i as usize) < at { i } else { i + 1 };
        let mut expected: Vec<[u32; 2]> =
            sparse_pairs.iter().map(|&[a, b]| [id(a), id(b)]).collect();
        for i in 0..sparse.len() as u32 {
            let other = id(i);
            let h = at as u32;
            expected.push(if other < h { [other, h] } else { [h, other] });
        }
        expected.sort_unstable();
        assert_eq!(expected.len(), sparse_pairs.len() + 20_000);

        for kernel in PairKernel::available() {
            let config = GridConfig { kernel, ..GridConfig::default() };
            let mut grid = AdaptiveGrid::with_config(config);
            let mut pairs = Vec::new();
            grid.find_pairs(&boxes, &mut pairs).unwrap();
            pairs.sort_unstable();
            assert!(
                pairs == expected,
                "huge box at {at}, {kernel:?}: find_pairs: {} pairs, expected {}",
                pairs.len(),
                expected.len()
            );

            grid.build(&boxes).unwrap();
            grid.validate(&boxes).unwrap_or_else(|e| panic!("huge box at {at}, {kernel:?}: {e}"));
            grid.pairs(&mut pairs);
            pairs.sort_unstable();
            assert!(
                pairs == expected,
                "huge box at {at}, {kernel:?}: build + pairs: {} pairs, expected {}",
                pairs.len(),
                expected.len()
            );
            let mut hits = Vec::new();
            grid.query_aabb(&huge, &mut hits).unwrap();
            assert_eq!(hits.len(), boxes.len(), "the huge box as a query hits everything");
        }
    }
}
