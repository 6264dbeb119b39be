//! Leaves too big to tile (more than `GridConfig::sweep_above` boxes) are
//! swept along x: a node no split separates (a pile, a knot inside one
//! finest cell, boxes that overlap each other nearly everywhere) becomes
//! one big leaf, sorted by low x. The sweep must find exactly brute force's
//! pairs on both paths (`find_pairs`, and `build` then `pairs`), with every
//! available kernel, whether the big leaf is alone, beside ordinary leaves,
//! one of several, or sorted in an order that differs from the input's.

use crate::support;

use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, PairKernel};
use broadphase_scenes::SplitMix64;
use glam::Vec3;

/// Every available kernel with the default sweep threshold and small ones
/// (so the ordinary leaves beside a pile are swept too), and with the default
/// and a small leaf capacity.
fn configs() -> Vec<GridConfig> {
    let default = GridConfig::default();
    let mut configs = Vec::new();
    for kernel in PairKernel::available() {
        for (leaf_capacity, sweep_above) in [
            (default.leaf_capacity, default.sweep_above),
            (4, default.sweep_above),
            (default.leaf_capacity, 8),
            (16, 2),
        ] {
            configs.push(GridConfig { kernel, leaf_capacity, sweep_above, ..default });
        }
    }
    configs
}

/// Both paths and a sample of queries on `boxes`, every config, against
/// brute force, and a bound on the copies `find_pairs` makes. Returns the
/// number of pairs.
fn check(what: &str, boxes: &[Aabb]) -> usize {
    let mut queries: Vec<Aabb> = boxes.iter().step_by(boxes.len() / 25 + 1).copied().collect();
    queries.push(Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(f32::MAX)));
    queries.extend(boxes.iter().step_by(boxes.len() / 25 + 1).map(|b| Aabb::new(b.max, b.max)));
    // Validating the kept tree checks, among the rest, that every big leaf
    // is sorted by low x.
    let pairs = support::check_against_brute_force(what, boxes, &configs(), &queries);
    let mut found = Vec::new();
    for config in configs() {
        let mut grid = AdaptiveGrid::with_config(config);
        grid.find_pairs(boxes, &mut found).unwrap();
        let (_, _, slots) = grid.shape();
        assert!(slots <= 64 * boxes.len(), "{what}, {config:?}: find_pairs: {slots} slots");
    }
    pairs
}

/// `count` boxes scattered over `[lo, hi)³`, sizes 0.5 to 3.
fn scattered(rng: &mut SplitMix64, count: usize, lo: f32, hi: f32) -> Vec<Aabb> {
    (0..count)
        .map(|_| {
            let c = Vec3::new(rng.range_f32(lo, hi), rng.range_f32(lo, hi), rng.range_f32(lo, hi));
            Aabb::from_center_half_extent(c, Vec3::splat(rng.range_f32(0.25, 1.5)))
        })
        .collect()
}

/// Shuffles `boxes` in place (Fisher–Yates), so input order is not x order.
fn shuffle(rng: &mut SplitMix64, boxes: &mut [Aabb]) {
    for i in (1..boxes.len()).rev() {
        boxes.swap(i, rng.below(i + 1));
    }
}

/// 2,000 identical boxes: one big leaf holding every pair.
#[test]
fn pile_of_two_thousand_identical_boxes() {
    let boxes = vec![Aabb::new(Vec3::new(1.0, 2.0, 3.0), Vec3::new(2.5, 2.5, 4.0)); 2_000];
    assert_eq!(check("pile of 2,000", &boxes), 2_000 * 1_999 / 2);
}

/// A pile of 1,500 among 2,000 scattered boxes, some of which overlap it:
/// a big leaf beside ordinary ones, with pairs between them. The pile
/// straddles the middle of the world (its boxes would be copied into 8
/// cells: the root stays one big leaf) or sits inside one cell.
#[test]
fn pile_among_scattered_boxes() {
    for (at, size) in [(30.0f32, 2.0f32), (21.3, 0.5)] {
        let mut rng = SplitMix64::new(0xB16_1EAF);
        let mut boxes = scattered(&mut rng, 2_000, 0.0, 60.0);
        let pile = Aabb::new(Vec3::splat(at - size / 2.0), Vec3::splat(at + size / 2.0));
        for i in 0..1_500 {
            boxes.insert(rng.below(boxes.len() + 1), pile);
            // A few boxes touching the pile's faces from outside.
            if i % 100 == 0 {
                boxes.push(Aabb::new(pile.max, pile.max + Vec3::splat(2.0)));
                let min = Vec3::new(pile.min.x - 2.0, at, at);
                boxes.push(Aabb::new(min, Vec3::new(pile.min.x, at + 0.1, at + 0.1)));
            }
        }
        let pairs = check(&format!("pile at {at} among scattered boxes"), &boxes);
        assert!(pairs > 1_500 * 1_499 / 2);
    }
}

/// Several piles: coincident ones, ones sharing a face, ones overlapping in
/// part, ones apart; each a big leaf or a part of one.
#[test]
fn several_piles() {
    let mut rng = SplitMix64::new(0x5E7E_02A1);
    let piles = [
        Aabb::new(Vec3::ZERO, Vec3::ONE),
        Aabb::new(Vec3::new(1.0, 0.0, 0.0), Vec3::new(2.0, 1.0, 1.0)), // touches the first
        Aabb::new(Vec3::splat(0.5), Vec3::splat(1.5)),                 // overlaps both
        Aabb::new(Vec3::splat(10.0), Vec3::splat(11.0)),               // apart
        Aabb::new(Vec3::new(-20.0, 5.0, 5.0), Vec3::new(-19.0, 5.0, 6.0)), // flat
        Aabb::new(Vec3::splat(-3.0), Vec3::splat(-3.0)),               // points
    ];
    let mut boxes = Vec::new();
    for (k, pile) in piles.iter().enumerate() {
        boxes.extend(std::iter::repeat_n(*pile, 300 + 100 * k));
    }
    boxes.extend(scattered(&mut rng, 500, -25.0, 15.0));
    shuffle(&mut rng, &mut boxes);
    check("several piles", &boxes);
}

/// Boxes identical but for small offsets, in shuffled order: the big leaf's
/// sort by low x puts them in an order unlike the input's, and the sweep's
/// early stop (a later box starts after this one ends) decides pairs.
/// Offsets both many quantization steps wide (sorting reorders quantized
/// values) and far below one step (equal quantized values, different `f32`).
#[test]
fn nearly_identical_boxes_in_shuffled_order() {
    let mut rng = SplitMix64::new(0x0FF_5E75);
    for (spread, width) in [(1.0f32, 10.0f32), (1.0, 0.4), (1e-4, 1e-4), (1e-5, 2e-6)] {
        // More than the default `sweep_above` (1,024): one big leaf.
        let mut boxes: Vec<Aabb> = (0..1_200)
            .map(|_| {
                let offset = Vec3::new(
                    rng.range_f32(0.0, spread),
                    rng.range_f32(0.0, spread),
                    rng.range_f32(0.0, spread),
                );
                let min = Vec3::splat(100.0) + offset;
                Aabb::new(min, min + Vec3::new(width, width * 1.5, width))
            })
            .collect();
        // Exact touches along x within the pile.
        for i in 0..50 {
            let mut b = boxes[i];
            let w = b.max.x - b.min.x;
            b.min.x = b.max.x;
            b.max.x += w;
            boxes.push(b);
        }
        // Stretch the world, so the pile is a small part of it.
        boxes.push(Aabb::new(Vec3::splat(-1000.0), Vec3::splat(-999.0)));
        boxes.push(Aabb::new(Vec3::splat(1000.0), Vec3::splat(1001.0)));
        shuffle(&mut rng, &mut boxes);
        check(&format!("1,200 boxes offset by up to {spread}, width {width}"), &boxes);
    }
}

/// A dense knot of 3,000 boxes inside a region of side 1e-6, in a world of
/// extent 1e3 (one finest cell is ~0.015 wide): the knot lands in one finest
/// cell, which no split can divide. Widths up to a few times 1e-7, so pairs
/// inside the knot are a fraction of all, and only the exact test knows.
#[test]
fn dense_knot_in_one_finest_cell() {
    let mut rng = SplitMix64::new(0x00C0_FFEE);
    let mut boxes = scattered(&mut rng, 1_000, -500.0, 500.0);
    let corner = Vec3::splat(1e-3);
    for _ in 0..3_000 {
        let min = corner
            + Vec3::new(
                rng.range_f32(0.0, 1e-6),
                rng.range_f32(0.0, 1e-6),
                rng.range_f32(0.0, 1e-6),
            );
        let size =
            Vec3::new(rng.range_f32(0.0, 3e-7), rng.range_f32(0.0, 3e-7), rng.range_f32(0.0, 3e-7));
        boxes.insert(rng.below(boxes.len() + 1), Aabb::new(min, min + size));
    }
    // A box covering the knot, and one touching its corner.
    boxes.push(Aabb::new(corner, corner + Vec3::splat(1e-6)));
    boxes.push(Aabb::new(corner - Vec3::ONE, corner));
    let pairs = check("knot of 3,000 in 1e-6", &boxes);
    assert!(pairs > 3_000 && pairs < 3_000 * 2_999 / 2, "{pairs} pairs");
}
