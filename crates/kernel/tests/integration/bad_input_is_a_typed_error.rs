//! The input contract at the grid's edge: NaN, infinities and inverted boxes
//! are typed errors naming the first bad box, never a panic or a lost pair,
//! on both paths (`build`, and one frame of `find_pairs` / `try_find_pairs`);
//! a failed build or frame leaves an empty, reusable grid and an empty
//! output; and the awkward but valid inputs (empty, one box, subnormals,
//! ±`f32::MAX`, -0.0) give exact pairs on both paths.

use broadphase_kernel::{
    Aabb, AdaptiveGrid, Axis, Corner, FindPairsError, GridConfig, InputError, PairKernel,
    brute_force_pairs, brute_force_query,
};
use glam::Vec3;

const AXES: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];

/// Twelve ordinary, valid boxes in a row, neighbours overlapping.
fn good_boxes() -> Vec<Aabb> {
    (0..12).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 1.5))).collect()
}

fn set(b: &mut Aabb, axis: Axis, corner: Corner, value: f32) {
    match corner {
        Corner::Min => b.min[axis as usize] = value,
        Corner::Max => b.max[axis as usize] = value,
    }
}

/// One default grid per pair kernel this CPU runs.
fn grids() -> Vec<AdaptiveGrid> {
    PairKernel::available()
        .into_iter()
        .map(|kernel| AdaptiveGrid::with_config(GridConfig { kernel, ..GridConfig::default() }))
        .collect()
}

/// Checks `boxes` (which must be valid) against brute force on both paths:
/// `find_pairs` and `try_find_pairs`, then `build` (leaving the grid built)
/// with validate and pairs.
fn assert_exact(grid: &mut AdaptiveGrid, boxes: &[Aabb]) {
    let mut expected = Vec::new();
    brute_force_pairs(boxes, &mut expected).unwrap();
    let config = *grid.config();
    let mut got = vec![[7, 7]];
    grid.find_pairs(boxes, &mut got).expect("valid input");
    got.sort_unstable();
    assert_eq!(got, expected, "find_pairs, {config:?}, boxes: {boxes:?}");
    got.push([7, 7]);
    grid.try_find_pairs(boxes, &mut got).expect("valid input, small output");
    got.sort_unstable();
    assert_eq!(got, expected, "try_find_pairs, {config:?}, boxes: {boxes:?}");
    assert!(grid.is_empty(), "find_pairs keeps no tree");

    grid.build(boxes).expect("valid input");
    grid.validate(boxes).expect("tree invariants");
    got.push([7, 7]);
    grid.pairs(&mut got);
    got.sort_unstable();
    assert_eq!(got, expected, "build + pairs, {config:?}, boxes: {boxes:?}");
}

/// `find_pairs` and `try_find_pairs` of bad `boxes` give `wanted` (compared
/// as text: NaN != NaN) and an empty output, and leave the grid empty and
/// reusable.
fn assert_frame_fails(grid: &mut AdaptiveGrid, boxes: &[Aabb], wanted: &InputError) {
    assert_exact(grid, &good_boxes()); // something to forget
    let mut pairs = vec![[7, 7]];
    let err = grid.find_pairs(boxes, &mut pairs).expect_err("bad input must fail");
    assert_eq!(err.to_string(), wanted.to_string());
    assert_eq!(format!("{err:?}"), format!("{wanted:?}"));
    assert!(pairs.is_empty(), "a failed frame wrote pairs: {pairs:?}");
    assert_empty_then_reusable(grid);

    pairs.push([7, 7]);
    let err = grid.try_find_pairs(boxes, &mut pairs).expect_err("bad input must fail");
    let FindPairsError::Input(input) = &err else {
        panic!("bad input reported as {err:?}");
    };
    assert_eq!(format!("{input:?}"), format!("{wanted:?}"));
    assert_eq!(err.to_string(), wanted.to_string());
    assert!(pairs.is_empty(), "a failed frame wrote pairs: {pairs:?}");
    assert_empty_then_reusable(grid);
}

/// After a failed build or frame the grid holds nothing, and a good build
/// and frame work again.
fn assert_empty_then_reusable(grid: &mut AdaptiveGrid) {
    assert_eq!(grid.len(), 0);
    assert!(grid.is_empty());
    let mut pairs = vec![[7, 7]];
    grid.pairs(&mut pairs);
    assert!(pairs.is_empty(), "a failed build left pairs: {pairs:?}");
    let mut hits = vec![7];
    grid.query_aabb(&Aabb::new(Vec3::splat(-1e30), Vec3::splat(1e30)), &mut hits).unwrap();
    assert!(hits.is_empty(), "a failed build left boxes: {hits:?}");
    grid.validate(&[]).expect("a failed build keeps the build of no box");
    assert!(grid.validate(&good_boxes()).is_err(), "no box of the bad input is kept");
    assert_exact(grid, &good_boxes());
}

/// NaN, +inf and -inf in each of the six coordinates of box 5 (box 9 also
/// bad) report box 5 with the right axis and corner, and the value.
#[test]
fn non_finite_coordinate_reports_first_bad_box() {
    for mut grid in grids() {
        for axis in AXES {
            for corner in [Corner::Min, Corner::Max] {
                for value in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                    let mut boxes = good_boxes();
                    set(&mut boxes[5], axis, corner, value);
                    set(&mut boxes[9], Axis::X, Corner::Min, f32::NAN);
                    assert_exact(&mut grid, &good_boxes()); // something to forget
                    let err = grid.build(&boxes).expect_err("non-finite input must fail");
                    match err {
                        InputError::NotFinite { index, axis: a, corner: c, value: v } => {
                            assert_eq!((index, a, c), (5, axis, corner), "{value} at {err}");
                            assert!(v.to_bits() == value.to_bits(), "{v} reported for {value}");
                        }
                        other => panic!("{value} in {axis:?} {corner:?}: {other:?}"),
                    }
                    let text = err.to_string();
                    assert!(text.contains('5'), "message does not name box 5: {text}");
                    assert!(!text.contains('9'), "message names the later box: {text}");
                    assert_empty_then_reusable(&mut grid);
                    assert_frame_fails(&mut grid, &boxes, &err);
                }
            }
        }
    }
}

/// `min > max` on each axis of box 5 (box 9 also inverted) reports box 5,
/// that axis and both values.
#[test]
fn inverted_box_reports_first_bad_box() {
    for mut grid in grids() {
        for axis in AXES {
            let mut boxes = good_boxes();
            let a = axis as usize;
            (boxes[5].min[a], boxes[5].max[a]) = (6.0, 5.5);
            (boxes[9].min[a], boxes[9].max[a]) = (1.0, 0.0);
            assert_exact(&mut grid, &good_boxes());
            let err = grid.build(&boxes).expect_err("inverted input must fail");
            assert_eq!(err, InputError::Inverted { index: 5, axis, min: 6.0, max: 5.5 });
            let text = err.to_string();
            assert!(text.contains("box 5"), "message does not name box 5: {text}");
            assert_empty_then_reusable(&mut grid);
            assert_frame_fails(&mut grid, &boxes, &err);
        }
    }
}

/// A bad box at index 0 and at the last index are found too.
#[test]
fn bad_box_at_either_end_is_found() {
    let mut grid = AdaptiveGrid::default();
    for index in [0, 11] {
        let mut boxes = good_boxes();
        boxes[index].max.z = f32::NAN;
        let err = grid.build(&boxes).expect_err("NaN must fail");
        assert!(
            matches!(err, InputError::NotFinite { index: i, axis: Axis::Z, corner: Corner::Max, .. } if i == index),
            "{err:?}"
        );
        assert_empty_then_reusable(&mut grid);
        assert_frame_fails(&mut grid, &boxes, &err);
    }
}

/// The error type is a std error with a useful message for every variant.
#[test]
fn errors_display_and_are_std_errors() {
    let errors = [
        InputError::NotFinite { index: 5, axis: Axis::Y, corner: Corner::Min, value: f32::NAN },
        InputError::Inverted { index: 5, axis: Axis::Z, min: 2.0, max: 1.0 },
        InputError::TooManyBoxes { count: 5_000_000_000 },
    ];
    for err in errors {
        let boxed: Box<dyn std::error::Error> = Box::new(err);
        let text = boxed.to_string();
        assert!(!text.is_empty());
        assert!(text.contains('5'), "{text}");
    }
}

/// Empty input and a single box are valid and give no pairs.
#[test]
fn empty_input_and_one_box_give_no_pairs() {
    for mut grid in grids() {
        let mut pairs = vec![[1, 2]];
        grid.find_pairs(&[], &mut pairs).unwrap();
        assert!(pairs.is_empty());
        pairs.push([1, 2]);
        grid.try_find_pairs(&[], &mut pairs).unwrap();
        assert!(pairs.is_empty());
        grid.build(&[]).unwrap();
        assert!(grid.is_empty());
        grid.validate(&[]).unwrap();
        grid.pairs(&mut pairs);
        assert!(pairs.is_empty());
        let mut hits = vec![3];
        grid.query_aabb(&Aabb::default(), &mut hits).unwrap();
        assert!(hits.is_empty());

        let one = [Aabb::new(Vec3::ZERO, Vec3::ONE)];
        pairs.push([1, 2]);
        grid.find_pairs(&one, &mut pairs).unwrap();
        assert!(pairs.is_empty());
        pairs.push([1, 2]);
        grid.try_find_pairs(&one, &mut pairs).unwrap();
        assert!(pairs.is_empty());
        grid.build(&one).unwrap();
        grid.validate(&one).unwrap();
        assert_eq!(grid.len(), 1);
        pairs.push([1, 2]);
        grid.pairs(&mut pairs);
        assert!(pairs.is_empty());
        grid.query_aabb(&Aabb::new(Vec3::ONE, Vec3::ONE), &mut hits).unwrap();
        assert_eq!(hits, [0]);
    }
}

/// A NaN, infinite or inverted query is an error (index 0) and leaves `out`
/// empty, also when `out` held results of an earlier query.
#[test]
fn bad_query_is_an_error_with_empty_out() {
    let boxes = good_boxes();
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let base = Aabb::new(Vec3::splat(2.0), Vec3::splat(3.0));
    for axis in AXES {
        for corner in [Corner::Min, Corner::Max] {
            for value in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                let mut q = base;
                set(&mut q, axis, corner, value);
                let mut hits = Vec::new();
                grid.query_aabb(&base, &mut hits).unwrap();
                assert!(!hits.is_empty());
                let err = grid.query_aabb(&q, &mut hits).expect_err("bad query must fail");
                assert!(
                    matches!(err, InputError::NotFinite { index: 0, axis: a, corner: c, .. } if a == axis && c == corner),
                    "{err:?}"
                );
                assert!(hits.is_empty(), "{hits:?}");
                // The oracle agrees (compared as text: NaN != NaN).
                let oracle = brute_force_query(&boxes, &q, &mut Vec::new());
                assert_eq!(format!("{oracle:?}"), format!("{:?}", Err::<(), _>(err)));
            }
        }
        let mut q = base;
        (q.min[axis as usize], q.max[axis as usize]) = (3.0, 2.0);
        let mut hits = vec![1, 2, 3];
        let err = grid.query_aabb(&q, &mut hits).expect_err("inverted query must fail");
        assert_eq!(err, InputError::Inverted { index: 0, axis, min: 3.0, max: 2.0 });
        assert!(hits.is_empty(), "{hits:?}");
    }
}

/// Subnormal coordinates and boxes reaching ±`f32::MAX` are valid and give
/// exact pairs and query hits.
#[test]
fn subnormal_and_extreme_coordinates_are_valid() {
    let tiny = f32::from_bits(1); // the smallest subnormal
    let sub = f32::MIN_POSITIVE / 4.0;
    assert!(tiny.is_subnormal() && sub.is_subnormal());
    let mut boxes = vec![
        Aabb::new(Vec3::ZERO, Vec3::splat(tiny)),
        Aabb::new(Vec3::splat(tiny), Vec3::splat(sub)),
        Aabb::new(Vec3::splat(-sub), Vec3::splat(-tiny)),
        Aabb::new(Vec3::splat(sub), Vec3::splat(sub)),
        Aabb::new(Vec3::splat(2.0 * sub), Vec3::splat(f32::MIN_POSITIVE)),
        Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(f32::MAX)),
        Aabb::new(Vec3::splat(f32::MAX), Vec3::splat(f32::MAX)),
        Aabb::new(Vec3::splat(f32::MIN), Vec3::splat(f32::MIN)),
        Aabb::new(Vec3::new(f32::MAX / 2.0, 0.0, 0.0), Vec3::new(f32::MAX, 1.0, 1.0)),
        Aabb::new(Vec3::new(f32::MIN, -1.0, -1.0), Vec3::new(f32::MIN / 2.0, 0.0, 0.0)),
        Aabb::new(Vec3::new(f32::MIN, 0.0, 0.0), Vec3::new(f32::MAX, tiny, tiny)),
    ];
    // Ordinary boxes next to them, so the tree splits.
    for i in 0..300 {
        let c = Vec3::new((i % 7) as f32, ((i / 7) % 7) as f32, (i / 49) as f32) * 0.7;
        boxes.push(Aabb::from_center_half_extent(c, Vec3::splat(0.5)));
    }
    for mut grid in grids() {
        assert_exact(&mut grid, &boxes);
        for q in &boxes[..11] {
            let mut got = Vec::new();
            grid.query_aabb(q, &mut got).unwrap();
            got.sort_unstable();
            let mut expected = Vec::new();
            brute_force_query(&boxes, q, &mut expected).unwrap();
            assert_eq!(got, expected, "query {q:?}");
        }
    }
    for leaf_capacity in [1, 4] {
        let mut grid =
            AdaptiveGrid::with_config(GridConfig { leaf_capacity, ..Default::default() });
        assert_exact(&mut grid, &boxes);
    }
}

/// A box ending at -0.0 touches a box starting at +0.0 (they compare equal),
/// on every axis, in pairs and in queries.
#[test]
fn negative_zero_touches_positive_zero() {
    for axis in AXES {
        let a = axis as usize;
        let mut left = Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0));
        left.max[a] = -0.0;
        let mut right = Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0));
        right.min[a] = 0.0;
        let mut point = Aabb::new(Vec3::ZERO, Vec3::ZERO);
        point.min[a] = -0.0;
        point.max[a] = -0.0;
        let mut boxes = vec![left, right, point];
        // And a crowd, so the zero plane may become a split plane.
        for i in 0..200 {
            let mut b = Aabb::new(Vec3::splat(-1.0), Vec3::splat(1.0));
            let x = (i as f32 - 100.0) * 0.01;
            (b.min[a], b.max[a]) = if i % 2 == 0 { (x.min(-0.0), -0.0) } else { (0.0, x.abs()) };
            boxes.push(b);
        }
        for mut grid in grids() {
            assert_exact(&mut grid, &boxes);
            let mut pairs = Vec::new();
            grid.pairs(&mut pairs);
            assert!(pairs.contains(&[0, 1]), "-0.0 and 0.0 must touch on {axis:?}");
            let mut hits = Vec::new();
            grid.query_aabb(&Aabb::new(Vec3::ZERO, Vec3::ZERO), &mut hits).unwrap();
            assert_eq!(hits.len(), boxes.len(), "a point at the origin touches every box");
        }
        for leaf_capacity in [1, 2] {
            let config = GridConfig { leaf_capacity, ..Default::default() };
            assert_exact(&mut AdaptiveGrid::with_config(config), &boxes);
        }
    }
}
