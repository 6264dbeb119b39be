//! A few boxes far from the rest do not stretch the quantization over empty
//! space: the steps cover where the bulk of the boxes lies, and the far
//! boxes clamp to the border cells. Clamping keeps quantization monotone,
//! so every answer stays exact; these inputs check it, and check that the
//! tree over the bulk is the one it would be without the far boxes.

use crate::support;

use broadphase_kernel::parts::{Bounds, Cell, ChunkSplitter, Item, NodeSplit, Quantizer};
use broadphase_kernel::{Aabb, GridConfig, PairKernel};
use broadphase_scenes::SplitMix64;
use glam::Vec3;

fn cube(count: usize, side: f32, seed: u64) -> Vec<Aabb> {
    let mut rng = SplitMix64::new(seed);
    (0..count)
        .map(|_| {
            let c = Vec3::new(
                rng.range_f32(0.0, side),
                rng.range_f32(0.0, side),
                rng.range_f32(0.0, side),
            );
            Aabb::new(c, c + Vec3::splat(rng.range_f32(0.5, 4.0)))
        })
        .collect()
}

/// Both paths on every kernel equal brute force; queries around the far
/// boxes too; the kept tree validates.
fn assert_exact(boxes: &[Aabb], queries: &[Aabb]) {
    let configs: Vec<GridConfig> = PairKernel::available()
        .into_iter()
        .map(|kernel| GridConfig { kernel, ..GridConfig::default() })
        .collect();
    support::check_against_brute_force("outliers", boxes, &configs, queries);
}

#[test]
fn far_boxes_beside_a_cube_are_exact_and_leave_the_cube_tree_alone() {
    let bulk = cube(6_000, 600.0, 1);
    let mut boxes = bulk.clone();
    // Three overlapping "teapots" far away, one lonely box farther still.
    for k in 0..3 {
        let c = Vec3::splat(9_000.0 + k as f32);
        boxes.push(Aabb::new(c, c + Vec3::splat(4.0)));
    }
    boxes.push(Aabb::new(Vec3::splat(-1e7), Vec3::splat(-1e7 + 1.0)));
    let queries = [
        Aabb::new(Vec3::splat(9_001.0), Vec3::splat(9_002.0)),
        Aabb::new(Vec3::splat(-2e7), Vec3::splat(-9e6)),
        Aabb::new(Vec3::splat(599.0), Vec3::splat(10_000.0)),
        Aabb::new(Vec3::splat(300.0), Vec3::splat(310.0)),
    ];
    assert_exact(&boxes, &queries);

    // The steps are spent on the cube, not on the empty space out to
    // 9,000: the root's first split spreads the cube over most of its 64
    // child cells (stretched to the far boxes, the whole cube would fall in
    // one child, the far boxes in another).
    let config = GridConfig::default();
    let quantizer = Quantizer::new(&Bounds::of(&boxes), &boxes).unwrap();
    let mut items = vec![Item::default(); boxes.len()];
    quantizer.quantize_chunk(&boxes, 0, &mut items, PairKernel::Auto);
    let split = NodeSplit::start(Cell::ROOT, boxes.len(), &config).expect("6,004 boxes split");
    let counts = ChunkSplitter::default().count(&items, &split, &config);
    let occupied = (0..64).filter(|&c| counts.get(c) > 0).count();
    assert!(occupied >= 27, "the root's split puts the boxes in {occupied} of 64 cells");
}

#[test]
fn many_far_boxes_in_a_line_stay_exact() {
    // 40 far boxes chained along x, all clamping to the same border cells
    // on y and z: they share a leaf, and the f32 test sorts them out.
    let mut boxes = cube(3_000, 200.0, 2);
    for k in 0..40 {
        let x = 50_000.0 + 3.0 * k as f32;
        boxes.push(Aabb::new(Vec3::new(x, 1e5, 1e5), Vec3::new(x + 4.0, 1e5 + 1.0, 1e5 + 1.0)));
    }
    let queries = [
        Aabb::new(Vec3::new(50_010.0, 1e5, 1e5), Vec3::new(50_020.0, 1e5 + 0.5, 1e5 + 0.5)),
        Aabb::new(Vec3::splat(199.0), Vec3::splat(1e6)),
    ];
    assert_exact(&boxes, &queries);
}

#[test]
fn boxes_on_the_border_of_the_bulk_meet_clamped_ones_exactly() {
    // Bulk boxes reaching the top of the cube, and far boxes that clamp to
    // the same top cells: candidates in the quantized space, decided by the
    // exact test (touching faces overlap, a gap does not).
    let mut boxes = cube(2_000, 100.0, 3);
    boxes.push(Aabb::new(Vec3::splat(100.0), Vec3::splat(8_000.0))); // reaches out from the cube
    boxes.push(Aabb::new(Vec3::splat(8_000.0), Vec3::splat(8_001.0))); // touches it
    boxes.push(Aabb::new(Vec3::splat(8_001.5), Vec3::splat(8_002.0))); // a gap away
    assert_exact(&boxes, &[Aabb::new(Vec3::splat(8_000.5), Vec3::splat(8_001.75))]);
}

#[test]
fn periodic_input_does_not_fool_the_sample() {
    // Every 16th box is the same box at the origin and the rest fill a cube:
    // a sample taken at a fixed stride of 16 would see only the repeated
    // box and squeeze the span to a point, clamping every other box into
    // the border cells.
    let spread = cube(4_096, 300.0, 4);
    let boxes: Vec<Aabb> = spread
        .iter()
        .enumerate()
        .map(|(i, b)| if i % 16 == 0 { Aabb::new(Vec3::ZERO, Vec3::ONE) } else { *b })
        .collect();
    assert_exact(&boxes, &[Aabb::new(Vec3::splat(100.0), Vec3::splat(120.0))]);

    let config = GridConfig::default();
    let quantizer = Quantizer::new(&Bounds::of(&boxes), &boxes).unwrap();
    let mut items = vec![Item::default(); boxes.len()];
    quantizer.quantize_chunk(&boxes, 0, &mut items, PairKernel::Auto);
    let split = NodeSplit::start(Cell::ROOT, boxes.len(), &config).expect("4,096 boxes split");
    let counts = ChunkSplitter::default().count(&items, &split, &config);
    let occupied = (0..64).filter(|&c| counts.get(c) > 0).count();
    assert!(occupied >= 27, "the root's split puts the boxes in {occupied} of 64 cells");
}
