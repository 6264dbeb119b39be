//! Regression: the 16-bit quantized boxes are only a filter. Two boxes whose
//! quantized bounds meet may still be apart in `f32` (a gap far below one
//! quantization step), and two boxes touching exactly at a face must still
//! be reported; the exact `f32` test decides.
//!
//! Every input here is built so that quantization lies: gaps of 1e-3 and of
//! one ulp in a world of extent 1e6, coordinates near ±3.0e38 (where the
//! world's extent overflows `f32`), all boxes identical but one far away
//! (everything else in one quantized cell), single points, and worlds flat
//! on one axis (extent zero). Both paths (`find_pairs`, and `build` then
//! `pairs`) are compared with `brute_force_pairs` for every available pair
//! kernel, and queries with `brute_force_query`.

use crate::support;

use broadphase_kernel::{Aabb, GridConfig, PairKernel};
use broadphase_scenes::SplitMix64;
use glam::Vec3;

/// Every available kernel with the default config, a small leaf, and a
/// small sweep threshold (so mid-sized leaves are swept, not tiled).
fn configs() -> Vec<GridConfig> {
    let mut configs = Vec::new();
    for kernel in PairKernel::available() {
        for (leaf_capacity, sweep_above) in [(128, 1024), (4, 1024), (16, 8), (128, 2)] {
            configs.push(GridConfig {
                kernel,
                leaf_capacity,
                sweep_above,
                ..GridConfig::default()
            });
        }
    }
    configs
}

/// The smallest `f32` above `x` (`f32::MAX` stays: a box may not reach
/// infinity).
fn up(x: f32) -> f32 {
    if x == f32::MAX { x } else { x.next_up() }
}

/// Queries for `boxes`: a sample of the boxes themselves, a point on each
/// sampled box's max corner (touching it), a point one ulp beyond it (missing
/// it), the box moved one ulp past its max on x (missing it), and one query
/// over all of `f32`.
fn queries_for(boxes: &[Aabb]) -> Vec<Aabb> {
    let mut queries = Vec::new();
    for b in boxes.iter().step_by(boxes.len() / 40 + 1) {
        queries.push(*b);
        queries.push(Aabb::new(b.max, b.max));
        let beyond = Vec3::new(up(b.max.x), up(b.max.y), up(b.max.z));
        queries.push(Aabb::new(beyond, beyond));
        let mut past = *b;
        past.min.x = up(b.max.x);
        past.max.x = past.max.x.max(past.min.x);
        queries.push(past);
    }
    queries.push(Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(f32::MAX)));
    queries
}

/// Both paths and the queries on `boxes`, every config, against brute force.
/// Returns the number of pairs.
fn check(what: &str, boxes: &[Aabb]) -> usize {
    support::check_against_brute_force(what, boxes, &configs(), &queries_for(boxes))
}

/// Two boxes stretching the world to `[-half, half]` on every axis, far from
/// everything else.
fn world_corners(half: f32) -> [Aabb; 2] {
    [
        Aabb::new(Vec3::splat(-half), Vec3::splat(-half + 1.0)),
        Aabb::new(Vec3::splat(half - 1.0), Vec3::splat(half)),
    ]
}

/// Pairs of unit boxes along `axis`, near the origin, in a world of extent
/// 1e6 (one quantization step is ~15): each pair either touches exactly at a
/// face (`gap` 0) or is apart by `gap` on that axis. The pairs sit on a
/// lattice of spacing 3 on the other two axes, so different pairs are apart.
fn gapped_pairs(axis: usize, gaps: &[f32], rows: usize) -> Vec<Aabb> {
    let mut boxes = world_corners(5e5).to_vec();
    let (o1, o2) = ((axis + 1) % 3, (axis + 2) % 3);
    for row in 0..rows {
        for (k, &gap) in gaps.iter().enumerate() {
            let mut min = Vec3::ZERO;
            min[axis] = 0.5 + (row % 4) as f32 * 3.0;
            min[o1] = row as f32 * 3.0;
            min[o2] = k as f32 * 3.0;
            let a = Aabb::new(min, min + Vec3::ONE);
            let mut b = a;
            b.min[axis] = if gap == 0.0 { a.max[axis] } else { a.max[axis] + gap };
            b.max[axis] = b.min[axis] + 1.0;
            boxes.push(a);
            boxes.push(b);
        }
    }
    boxes
}

/// Gaps of 1e-3, one ulp and zero (touching) between unit boxes in a world
/// of extent 1e6, on each axis: every gap is far below a quantization step.
#[test]
fn gaps_far_below_a_quantization_step_are_not_pairs() {
    for axis in 0..3 {
        let boxes = gapped_pairs(axis, &[1e-3, 0.0, 1e-3, 0.0], 60);
        let pairs = check(&format!("1e-3 gaps on axis {axis}"), &boxes);
        assert_eq!(pairs, 120, "exactly the 120 touching pairs");

        // One ulp past the face: apart in f32, equal after quantization.
        let mut boxes = world_corners(5e5).to_vec();
        for i in 0..300 {
            let mut min = Vec3::new((i % 10) as f32, ((i / 10) % 10) as f32, (i / 100) as f32);
            min *= 2.5;
            let a = Aabb::new(min, min + Vec3::ONE);
            let mut b = a;
            b.min[axis] = if i % 2 == 0 { up(a.max[axis]) } else { a.max[axis] };
            b.max[axis] = b.min[axis] + 1.0;
            boxes.push(a);
            boxes.push(b);
        }
        let pairs = check(&format!("ulp gaps on axis {axis}"), &boxes);
        assert_eq!(pairs, 150, "exactly the touching half of the 300 pairs");
    }
}

/// A dense crowd of boxes with random gaps of 0 to a few ulps and exact
/// touches in a world of extent 1e6: many candidates per quantized cell,
/// each decided by the exact test.
#[test]
fn crowd_of_near_touching_boxes_in_a_huge_world() {
    let mut rng = SplitMix64::new(0x0005_EED5);
    let mut boxes = world_corners(5e5).to_vec();
    for _ in 0..3_000 {
        // Quarter-unit lattice (exact in f32), a few ulps nudged.
        let mut min = Vec3::new(
            rng.below(40) as f32 * 0.25,
            rng.below(40) as f32 * 0.25,
            rng.below(40) as f32 * 0.25,
        );
        let mut max = min + Vec3::splat(0.25 * (1 + rng.below(3)) as f32);
        for axis in 0..3 {
            for _ in 0..rng.below(3) {
                min[axis] = up(min[axis]);
            }
            if rng.below(3) == 0 {
                max[axis] = max[axis].next_down().max(min[axis]);
            }
        }
        boxes.push(Aabb::new(min, max));
    }
    check("near-touching crowd", &boxes);
}

/// Boxes near ±3.0e38 (the world's extent, ~6e38, overflows `f32`), touching
/// and one ulp apart there, beside ordinary boxes.
#[test]
fn coordinates_near_the_ends_of_f32_are_exact() {
    let far = 3.0e38_f32;
    let mut boxes = Vec::new();
    for sign in [1.0f32, -1.0] {
        let edge = sign * far;
        // A chain along x near `edge`: box k ends where k + 1 starts, or one
        // ulp before it.
        let mut x = edge;
        for k in 0..40 {
            let width = 1e33 * (1 + k % 3) as f32;
            let end = x + width;
            boxes.push(Aabb::new(Vec3::new(x, edge, edge), Vec3::new(end, edge + 1e33, edge)));
            x = if k % 2 == 0 { end } else { up(end) };
        }
        // Points and boxes at the extreme corner.
        let limit = sign * f32::MAX;
        boxes.push(Aabb::new(Vec3::splat(limit), Vec3::splat(limit)));
        boxes.push(Aabb::new(Vec3::splat(limit), Vec3::splat(limit)));
        let near = Vec3::splat(if sign > 0.0 { limit.next_down() } else { limit.next_up() });
        boxes.push(Aabb::new(near, near));
    }
    // Ordinary boxes in between, and one spanning all of x.
    for i in 0..200 {
        let c = Vec3::new((i % 6) as f32, ((i / 6) % 6) as f32, (i / 36) as f32) * 0.8;
        boxes.push(Aabb::from_center_half_extent(c, Vec3::splat(0.5)));
    }
    boxes.push(Aabb::new(Vec3::new(-far, 0.0, 0.0), Vec3::new(far, 1.0, 1.0)));
    check("near ±3.0e38", &boxes);
}

/// All boxes identical but one far away: the identical ones share one
/// quantized cell (and one leaf). With the pile disjoint instead of
/// coincident (unit boxes two apart), every pair still looks overlapping
/// after quantization and none may be reported.
#[test]
fn identical_boxes_and_one_far_away() {
    for far in [1e6_f32, 1e30, 3.0e38] {
        let box0 = Aabb::new(Vec3::ZERO, Vec3::ONE);
        let mut boxes = vec![box0; 1_500];
        boxes.insert(700, Aabb::new(Vec3::splat(far), Vec3::splat(far)));
        let pairs = check(&format!("1,500 identical, one at {far}"), &boxes);
        assert_eq!(pairs, 1_500 * 1_499 / 2);

        let apart: Vec<Aabb> = (0..600)
            .map(|i| {
                let min = Vec3::new(2.0 * (i % 10) as f32, 2.0 * ((i / 10) % 10) as f32, 0.0);
                let min = min + Vec3::new(0.0, 0.0, 2.0 * (i / 100) as f32);
                Aabb::new(min, min + Vec3::ONE)
            })
            .chain([Aabb::new(Vec3::splat(far), Vec3::splat(far))])
            .collect();
        let pairs = check(&format!("600 disjoint, one at {far}"), &apart);
        assert_eq!(pairs, 0);

        // Touching instead of apart: unit boxes one apart share faces.
        let touching: Vec<Aabb> = (0..512)
            .map(|i| {
                let min = Vec3::new((i % 8) as f32, ((i / 8) % 8) as f32, (i / 64) as f32);
                Aabb::new(min, min + Vec3::ONE)
            })
            .chain([Aabb::new(Vec3::splat(-far), Vec3::splat(-far))])
            .collect();
        check(&format!("512 touching lattice boxes, one at -{far}"), &touching);
    }
}

/// Boxes that are single points: coincident, on box faces and corners, one
/// ulp off them, in a world stretched by a far point.
#[test]
fn single_points_are_exact() {
    let mut rng = SplitMix64::new(0x9017);
    for far in [None, Some(1e6_f32), Some(3.0e38)] {
        let mut boxes = Vec::new();
        for _ in 0..1_200 {
            let mut p = Vec3::new(rng.below(6) as f32, rng.below(6) as f32, rng.below(6) as f32);
            match rng.below(4) {
                0 => p.x = up(p.x),
                1 => p = Vec3::new(up(p.x), up(p.y), up(p.z)),
                _ => {}
            }
            boxes.push(Aabb::new(p, p));
        }
        // Unit boxes whose faces and corners the points sit on, or just miss.
        for i in 0..100 {
            let min = Vec3::new((i % 5) as f32, ((i / 5) % 5) as f32, (i / 25) as f32);
            boxes.push(Aabb::new(min, min + Vec3::ONE));
        }
        if let Some(far) = far {
            boxes.push(Aabb::new(Vec3::splat(far), Vec3::splat(far)));
        }
        check(&format!("points, far {far:?}"), &boxes);
    }
}

/// Every box on one plane (extent zero on that axis): boxes and points,
/// touching and one ulp apart within the plane, with the plane normal to
/// each axis in turn (x is the axis big leaves are swept along).
#[test]
fn all_boxes_on_one_plane() {
    let mut rng = SplitMix64::new(0x91A7E);
    for axis in 0..3 {
        for plane in [0.0f32, -7.5, 1e6] {
            let mut boxes = Vec::new();
            for i in 0..1_500 {
                let mut min = Vec3::new(
                    rng.below(30) as f32 * 0.5,
                    rng.below(30) as f32 * 0.5,
                    rng.below(30) as f32 * 0.5,
                );
                let mut max = min + Vec3::splat(0.5 * rng.below(3) as f32);
                if i % 3 == 0 {
                    let other = (axis + 1) % 3;
                    min[other] = up(min[other]);
                    max[other] = max[other].max(min[other]);
                }
                min[axis] = plane;
                max[axis] = plane;
                boxes.push(Aabb::new(min, max));
            }
            check(&format!("plane {plane} normal to axis {axis}"), &boxes);
        }
    }
    // All boxes on one line, and all at one point.
    let line: Vec<Aabb> = (0..800)
        .map(|i| {
            Aabb::new(
                Vec3::new(i as f32 * 0.5, 2.0, 3.0),
                Vec3::new(i as f32 * 0.5 + 0.5, 2.0, 3.0),
            )
        })
        .collect();
    assert_eq!(check("one line", &line), 799);
    let point = vec![Aabb::new(Vec3::splat(4.0), Vec3::splat(4.0)); 700];
    assert_eq!(check("one point", &point), 700 * 699 / 2);
}
