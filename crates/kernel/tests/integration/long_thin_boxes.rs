//! Regression: long thin boxes spanning the whole x range. Splitting along x
//! copies every stick into every cell and separates nothing; a grid that
//! keeps doing so copies boxes without bound. Pairs must be exact and the
//! box slots in leaves must stay below 64 × the box count.

use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, PairKernel, SortAndSweep};
use broadphase_scenes::SplitMix64;
use glam::Vec3;

/// `count` sticks over x ∈ [0, 1000] at random y, z in `[0, side)`,
/// thickness in `[0, 2)` on y and z.
fn sticks(count: usize, side: f32, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    (0..count)
        .map(|_| {
            let y = rng.range_f32(0.0, side);
            let z = rng.range_f32(0.0, side);
            let (ty, tz) = (rng.range_f32(0.0, 2.0), rng.range_f32(0.0, 2.0));
            Aabb::new(Vec3::new(0.0, y, z), Vec3::new(1000.0, y + ty, z + tz))
        })
        .collect()
}

fn check(boxes: &[Aabb], what: &str) {
    let mut expected = Vec::new();
    SortAndSweep::default().find_pairs(boxes, &mut expected).unwrap();
    expected.sort_unstable();
    assert!(!expected.is_empty(), "{what}: the sticks should cross");
    for kernel in PairKernel::available() {
        for leaf_capacity in [4, 64, 512] {
            let config = GridConfig { kernel, leaf_capacity, ..GridConfig::default() };
            let mut grid = AdaptiveGrid::with_config(config);
            let mut pairs = Vec::new();
            grid.find_pairs(boxes, &mut pairs).unwrap();
            let (_, _, slots) = grid.shape();
            assert!(
                slots < 64 * boxes.len(),
                "{what} {config:?}: find_pairs: {slots} box slots for {} boxes",
                boxes.len()
            );
            pairs.sort_unstable();
            assert!(
                pairs == expected,
                "{what} {config:?}: find_pairs: {} pairs, sort-and-sweep {}",
                pairs.len(),
                expected.len()
            );

            grid.build(boxes).unwrap();
            let (_, _, slots) = grid.shape();
            assert!(
                slots < 64 * boxes.len(),
                "{what} {config:?}: {slots} box slots for {} boxes",
                boxes.len()
            );
            grid.validate(boxes).unwrap_or_else(|e| panic!("{what} {config:?}: {e}"));
            grid.pairs(&mut pairs);
            pairs.sort_unstable();
            assert!(
                pairs == expected,
                "{what} {config:?}: {} pairs, sort-and-sweep {}",
                pairs.len(),
                expected.len()
            );
        }
    }
}

/// 5,000 sticks at random y, z in a 300 × 300 square.
#[test]
fn five_thousand_sticks_are_exact_without_runaway_copying() {
    check(&sticks(5_000, 300.0, 1), "5,000 sticks");
}

/// The same sticks crowded into a 60 × 60 square (many crossings per stick),
/// and sticks along y and z too.
#[test]
fn crowded_sticks_on_every_axis_are_exact() {
    let along_x = sticks(5_000, 60.0, 2);
    check(&along_x, "crowded x sticks");
    let rotate = |b: &Aabb, k: usize| {
        Aabb::new(Vec3::from_array(rot(b.min, k)), Vec3::from_array(rot(b.max, k)))
    };
    fn rot(v: Vec3, k: usize) -> [f32; 3] {
        let a = v.to_array();
        [a[(3 - k) % 3], a[(4 - k) % 3], a[(5 - k) % 3]]
    }
    let mixed: Vec<Aabb> = along_x.iter().enumerate().map(|(i, b)| rotate(b, i % 3)).collect();
    check(&mixed, "sticks along x, y and z");
}
