//! Regression: a world much thinner on one axis than the others (a slab
//! as thin as its boxes are wide, like a top-down game's floor) is cut
//! into cubic cells, so a box is not copied into several cells along the
//! thin axis. Scaling each axis to its own extent did that: every box
//! spanned up to four cells in z, and the game loop's 100,000 particles
//! took six times longer. Checked here by the copies the kept build
//! makes, and the pairs against brute force.

use broadphase_kernel::{Aabb, AdaptiveGrid, brute_force_pairs};
use broadphase_scenes::SplitMix64;
use glam::Vec3;

fn slab(count: usize, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    let side = (count as f32 * 106.0).sqrt();
    (0..count)
        .map(|_| {
            let r = rng.range_f32(1.0, 4.0);
            let c = Vec3::new(
                rng.range_f32(r, side - r),
                rng.range_f32(r, side - r),
                rng.range_f32(r, 8.0 - r),
            );
            Aabb::new(c - Vec3::splat(r), c + Vec3::splat(r))
        })
        .collect()
}

#[test]
fn a_slab_world_is_not_cut_along_its_thin_axis() {
    let boxes = slab(20_000, 3);
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let (_, _, slots) = grid.shape();
    // Cubic cells: 1.1 copies per box here; cut along z as finely as
    // along x and y, 11.5.
    assert!((slots as f64) < 1.5 * boxes.len() as f64, "{slots} copies of {} boxes", boxes.len());

    let mut pairs = Vec::new();
    grid.pairs(&mut pairs);
    pairs.sort_unstable();
    let mut expected = Vec::new();
    brute_force_pairs(&boxes, &mut expected).unwrap();
    expected.sort_unstable();
    assert_eq!(pairs, expected);
}
