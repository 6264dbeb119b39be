//! The first-hit rays' tree (built by `prepare_rays`, or by the casts
//! once their cell walks have paid for it) skips no box the exact test
//! [`Ray::entry`] hits: on scenes spanning the whole `f32` range, from far
//! origins, along and across axes, with the AVX2 and the portable node
//! test, as does the cell walk the casts take before; and it follows the
//! build it was made for (forgotten by the next build, copied by a clone,
//! grown by `reserve`).

use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, PairKernel, brute_force_ray_hits};
use broadphase_scenes::SplitMix64;
use broadphase_storage::Ray;
use glam::Vec3;
use proptest::prelude::*;

/// Brute force's first hit among the boxes `keep` accepts.
fn first_hit(boxes: &[Aabb], ray: &Ray, keep: impl Fn(u32) -> bool) -> Option<(u32, f32)> {
    brute_force_ray_hits(boxes, ray).into_iter().find(|&(id, _)| keep(id))
}

/// A point in the cube `[0, side)³`.
fn point_in(rng: &mut SplitMix64, side: f32) -> Vec3 {
    Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side))
}

/// `count` cubes of side `size` with their low corners in `[0, side)³`.
fn cubes(rng: &mut SplitMix64, count: usize, side: f32, size: f32) -> Vec<Aabb> {
    (0..count)
        .map(|_| {
            let min = point_in(rng, side);
            Aabb::new(min, min + Vec3::splat(size))
        })
        .collect()
}

/// `count` unbounded rays from points in `[0, side)³`, in any direction.
fn rays_in(rng: &mut SplitMix64, count: usize, side: f32) -> Vec<Ray> {
    (0..count)
        .map(|_| {
            let from = point_in(rng, side);
            let dir = Vec3::new(
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
                rng.range_f32(-1.0, 1.0),
            );
            Ray::new(from, dir, f32::INFINITY)
        })
        .collect()
}

/// Grids of both node tests (the portable one, and AVX2 where the CPU
/// has it), built over `boxes`: with the rays' tree, and without it (their
/// casts walk the cells until they pay for a tree).
fn grids(boxes: &[Aabb]) -> [AdaptiveGrid; 4] {
    [
        (PairKernel::Scalar, true),
        (PairKernel::Auto, true),
        (PairKernel::Scalar, false),
        (PairKernel::Auto, false),
    ]
    .map(|(kernel, tree)| {
        let mut grid = AdaptiveGrid::with_config(GridConfig { kernel, ..GridConfig::default() });
        grid.build(boxes).unwrap();
        if tree {
            grid.prepare_rays();
            assert!(grid.has_ray_tree() || boxes.is_empty());
        }
        grid
    })
}

fn check(grids: &[AdaptiveGrid], boxes: &[Aabb], ray: &Ray) {
    let expected = first_hit(boxes, ray, |_| true);
    // Every third box left out, as a caller's filter would.
    let skip = |id: u32| id % 3 == 1;
    let expected_kept = first_hit(boxes, ray, |id| !skip(id));
    for grid in grids {
        assert_eq!(grid.cast_ray(ray).unwrap(), expected, "{:?}: {ray:?}", grid.pair_kernel());
        let kept = grid
            .cast_ray_where(ray, |id| if skip(id) { None } else { ray.entry(&boxes[id as usize]) });
        assert_eq!(kept.unwrap(), expected_kept, "{:?}, filtered: {ray:?}", grid.pair_kernel());
    }
}

/// A coordinate from anywhere in the `f32` range, often near the ends.
fn coordinate() -> impl Strategy<Value = f32> {
    prop_oneof![
        -100.0f32..100.0,
        Just(f32::MAX),
        Just(-f32::MAX),
        Just(1e30f32),
        Just(-1e30f32),
        Just(0.0f32),
        Just(f32::from_bits(1)),
        any::<f32>().prop_filter("finite", |x| x.is_finite()),
    ]
}

fn point() -> impl Strategy<Value = Vec3> {
    prop::array::uniform3(coordinate()).prop_map(Vec3::from)
}

/// A box between two points, sometimes flat or a point.
fn a_box() -> impl Strategy<Value = Aabb> {
    (point(), point(), 0..4u8).prop_map(|(a, b, shape)| {
        let (min, mut max) = (a.min(b), a.max(b));
        match shape {
            0 => max = min,
            1 => max.y = min.y,
            _ => {}
        }
        Aabb::new(min, max)
    })
}

/// A direction with components zero, tiny, huge or anything finite.
fn direction() -> impl Strategy<Value = Vec3> {
    let component = prop_oneof![
        Just(0.0f32),
        -1.0f32..1.0,
        Just(f32::from_bits(1)),
        Just(-1e-30f32),
        Just(f32::MAX),
        any::<f32>().prop_filter("finite", |x| x.is_finite()),
    ];
    prop::array::uniform3(component).prop_map(Vec3::from)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    /// Boxes and rays from the whole `f32` range: the first hit is brute
    /// force's, with and without a filter, through either node test.
    #[test]
    fn first_hits_over_the_whole_f32_range(
        boxes in prop::collection::vec(a_box(), 1..120),
        rays in prop::collection::vec(
            (point(), direction(), prop_oneof![Just(0.0f32), Just(f32::INFINITY), Just(f32::MAX), 0.0f32..1e3]),
            1..12,
        ),
    ) {
        let grids = grids(&boxes);
        for (origin, dir, max_t) in rays {
            check(&grids, &boxes, &Ray::new(origin, dir, max_t));
        }
        for grid in &grids {
            grid.validate(&boxes).unwrap();
        }
    }

    /// Rays aimed at box corners and faces (where the slab `t`s tie) from
    /// near and far, over enough boxes for several levels of the tree.
    #[test]
    fn aimed_rays_on_a_deep_tree(seed in any::<u64>(), count in 600usize..3_000, far in prop_oneof![Just(1.0f32), Just(1e6f32), Just(1e30f32)]) {
        let mut rng = SplitMix64::new(seed);
        let mut boxes: Vec<Aabb> = (0..count)
            .map(|_| {
                let min = Vec3::new(rng.range_f32(0.0, 100.0), rng.range_f32(0.0, 100.0), rng.range_f32(0.0, 100.0));
                Aabb::new(min, min + Vec3::splat(rng.range_f32(0.0, 3.0)))
            })
            .collect();
        // Copies tie on every entry: the smaller index wins.
        boxes.extend_from_within(..count / 10);
        let grids = grids(&boxes);
        for _ in 0..40 {
            let target = boxes[rng.below(boxes.len())];
            let aim = if rng.below(2) == 0 { target.min } else { target.max };
            let from = Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0)) * far
                + Vec3::splat(50.0);
            let mut dir = aim - from;
            if rng.below(3) == 0 {
                dir.z = 0.0;
            }
            check(&grids, &boxes, &Ray::new(from, dir, f32::INFINITY));
            check(&grids, &boxes, &Ray::new(aim, Vec3::X, 0.0));
        }
        for grid in &grids {
            grid.validate(&boxes).unwrap();
        }
    }
}

/// A box at each end of the range and one at the origin, rays along each
/// axis through all of them: the slab `t`s reach 1e38 and the node boxes
/// hold both ends.
#[test]
fn rays_across_the_whole_range_along_each_axis() {
    let ends = [-f32::MAX, -1e30, 0.0, 1e30, f32::MAX];
    let boxes: Vec<Aabb> = ends
        .iter()
        .flat_map(|&x| {
            ends.iter().map(move |&y| Aabb::new(Vec3::new(x, y, 0.0), Vec3::new(x, y, 1.0)))
        })
        .collect();
    let grids = grids(&boxes);
    for &x in &ends {
        for &y in &ends {
            for dir in
                [Vec3::X, -Vec3::X, Vec3::Y, -Vec3::Y, Vec3::Z, -Vec3::Z, Vec3::new(1.0, 1.0, 0.0)]
            {
                for max_t in [0.0, 1.0, f32::MAX, f32::INFINITY] {
                    check(&grids, &boxes, &Ray::new(Vec3::new(x, y, 0.5), dir, max_t));
                    check(&grids, &boxes, &Ray::new(Vec3::new(x, y, -5.0), dir + Vec3::Z, max_t));
                }
            }
        }
    }
}

/// A cast builds the tree for the build it runs on: after a new build (or
/// `find_pairs`, which keeps nothing) the old boxes are gone from the
/// answers.
#[test]
fn the_next_build_forgets_the_tree() {
    let ray = Ray::new(Vec3::new(-5.0, 0.5, 0.5), Vec3::X, f32::INFINITY);
    let near = Aabb::new(Vec3::ZERO, Vec3::ONE);
    let far = Aabb::new(Vec3::new(10.0, 0.0, 0.0), Vec3::new(11.0, 1.0, 1.0));
    let mut grid = AdaptiveGrid::default();
    grid.build(&[near, far]).unwrap();
    grid.prepare_rays();
    assert_eq!(grid.cast_ray(&ray).unwrap(), Some((0, 5.0)));
    grid.build(&[far]).unwrap();
    assert!(!grid.has_ray_tree());
    grid.prepare_rays();
    assert_eq!(grid.cast_ray(&ray).unwrap(), Some((0, 15.0)));
    grid.validate(&[far]).unwrap();
    let mut pairs = Vec::new();
    grid.find_pairs(&[near, far], &mut pairs).unwrap();
    assert_eq!(grid.cast_ray(&ray).unwrap(), None);
}

/// A copy taken after a cast answers from the copied tree; one taken
/// before builds its own; `clone_from` into a grid with a stale tree
/// replaces it.
#[test]
fn copies_answer_with_their_own_tree() {
    let mut rng = SplitMix64::new(7);
    let boxes = cubes(&mut rng, 2_000, 50.0, 0.5);
    let rays = rays_in(&mut rng, 200, 50.0);
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let before = grid.clone();
    grid.prepare_rays();
    let answers: Vec<_> = rays.iter().map(|r| grid.cast_ray(r).unwrap()).collect();
    let after = grid.clone();
    assert!(after.has_ray_tree() && !before.has_ray_tree());
    let mut stale = AdaptiveGrid::default();
    stale.build(&boxes[..100]).unwrap();
    stale.prepare_rays();
    stale.clone_from(&grid);
    assert!(stale.has_ray_tree());
    for copy in [&before, &after, &stale] {
        let got: Vec<_> = rays.iter().map(|r| copy.cast_ray(r).unwrap()).collect();
        assert_eq!(got, answers);
        copy.validate(&boxes).unwrap();
    }
    for (ray, answer) in rays.iter().zip(&answers) {
        assert_eq!(*answer, first_hit(&boxes, ray, |_| true), "{ray:?}");
    }
}

/// The tree's buffers are part of the grid's capacity: a cast grows it,
/// and `reserve` grows another grid's as far.
#[test]
fn reserve_covers_the_tree() {
    let boxes: Vec<Aabb> =
        (0..5_000).map(|i| Aabb::new(Vec3::splat(i as f32), Vec3::splat(i as f32 + 0.5))).collect();
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let built = grid.capacity();
    grid.prepare_rays();
    let cast = grid.capacity();
    assert_ne!(built, cast, "the tree's buffers count");
    let mut other = AdaptiveGrid::default();
    other.reserve(&cast);
    assert_eq!(other.capacity().max(cast), other.capacity());
}

/// Several threads on a fresh build ask for the tree and cast at once:
/// one builds it, the others wait for it, all answer as brute force.
#[test]
fn the_first_casts_from_several_threads_share_one_tree() {
    let mut rng = SplitMix64::new(11);
    let boxes = cubes(&mut rng, 20_000, 300.0, 1.0);
    let rays = rays_in(&mut rng, 64, 300.0);
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let (grid, shared) = (&grid, boxes.as_slice());
    std::thread::scope(|scope| {
        for chunk in rays.chunks(16) {
            scope.spawn(move || {
                grid.prepare_rays();
                for ray in chunk {
                    assert_eq!(grid.cast_ray(ray).unwrap(), first_hit(shared, ray, |_| true));
                }
            });
        }
    });
    grid.validate(&boxes).unwrap();
}

/// Rent or buy: a build cast through a few times walks its cells and
/// builds no tree; cast through many times, the casts build it once
/// their walks have done about the work of building it; the answers equal
/// brute force before, across and after the switch, and the next build
/// starts walking again.
#[test]
fn casts_build_the_tree_once_their_walks_paid_for_it() {
    let mut rng = SplitMix64::new(19);
    let boxes = cubes(&mut rng, 3_000, 100.0, 0.7);
    let mut ray = || {
        let from = Vec3::new(rng.range_f32(-20.0, 120.0), rng.range_f32(-20.0, 120.0), -30.0);
        let dir = Vec3::new(rng.range_f32(-0.3, 0.3), rng.range_f32(-0.3, 0.3), 1.0);
        Ray::new(from, dir, f32::INFINITY)
    };
    let mut grid = AdaptiveGrid::default();
    for round in 0..2 {
        grid.build(&boxes).unwrap();
        let mut casts = 0;
        while !grid.has_ray_tree() {
            let ray = ray();
            assert_eq!(grid.cast_ray(&ray).unwrap(), first_hit(&boxes, &ray, |_| true));
            casts += 1;
            assert!(casts < 200_000, "round {round}: the walks never paid for the tree");
        }
        assert!(casts > 20, "round {round}: the tree was built after {casts} casts");
        for _ in 0..50 {
            let ray = ray();
            assert_eq!(grid.cast_ray(&ray).unwrap(), first_hit(&boxes, &ray, |_| true));
        }
    }
}
