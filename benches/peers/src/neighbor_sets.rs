//! Fixed-radius neighbors on the particle scenes, one run: broadphase's
//! counting-sort grid (build + CSR lists in sorted order) on one and two
//! threads, the plain grid that only counts (`peers::plain_grid`), and
//! kiddo (build + one `within` query per point). Every method's per-point
//! neighbor counts are checked equal first; rounds interleave the methods.

use crate::peers;
use broadphase::JobSystem;
use broadphase::glam::Vec3;
use broadphase::neighbors::{
    CountingSortGrid, NeighborLists, NeighborSearch, ParallelNeighborLists,
};
use broadphase_scenes::{self as scenes, SplitMix64};
use std::time::Instant;

/// One scene: ms per frame for each method, one entry per round.
#[derive(Clone, Debug)]
pub struct NeighborSet {
    pub name: String,
    pub points: usize,
    /// Neighbor entries (each pair twice).
    pub entries: usize,
    pub rows: Vec<(&'static str, Vec<f64>)>,
}

/// The name of the row every other is compared with.
pub const YARDSTICK: &str = "plain 27-cell grid, counts only (1 thread)";

fn run(
    name: &str,
    points: &[Vec3],
    radius: f32,
    radii: Option<&[f32]>,
    rounds: usize,
    two: &JobSystem,
) -> NeighborSet {
    eprintln!("neighbors {name}: {} points, {rounds} rounds", points.len());
    let build = |grid: &mut CountingSortGrid| match radii {
        Some(radii) => grid.build_spheres(points, radii).expect("valid scene"),
        None => grid.build(points, radius).expect("valid scene"),
    };
    let (mut grid, mut lists) = (CountingSortGrid::default(), NeighborLists::default());
    let (mut parallel, mut plain) =
        (ParallelNeighborLists::default(), peers::plain_grid::PlainGrid::default());
    let kiddo_points = peers::kiddo::entries(points);
    let max = radii.map_or(radius, |r| r.iter().fold(0.0f32, |m, &v| m.max(v)));
    let mut pairs = Vec::new();
    let mut counts = Vec::new();

    // Gate: the same neighbor count for every point, from every method.
    build(&mut grid);
    grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
    let mut ours = vec![0u32; points.len()];
    for (slot, &caller) in grid.sorted_order().iter().enumerate() {
        ours[caller as usize] = lists.neighbors(slot).len() as u32;
    }
    parallel.fill(two, &grid, &mut lists).expect("no job panics");
    assert_eq!(lists.total(), ours.iter().map(|&c| c as usize).sum::<usize>(), "{name}: 2 threads");
    plain.count(points, radius, radii, &mut counts);
    assert_eq!(counts, ours, "{name}: the plain grid's counts differ");
    match radii {
        Some(radii) => peers::kiddo::contacts(&kiddo_points, radii, max, &mut pairs),
        None => peers::kiddo::pairs(&kiddo_points, radius, &mut pairs),
    }
    let mut theirs = vec![0u32; points.len()];
    for &[a, b] in &pairs {
        theirs[a as usize] += 1;
        theirs[b as usize] += 1;
    }
    assert_eq!(theirs, ours, "{name}: kiddo's counts differ");
    let entries = lists.total();
    // The two-thread frame keeps its own grid and lists, as a second
    // simulation would.
    let (mut grid2, mut lists2) = (CountingSortGrid::default(), NeighborLists::default());

    type Frame<'a> = Box<dyn FnMut() + 'a>;
    let mut methods: Vec<(&'static str, Frame<'_>)> = vec![
        (
            "broadphase CountingSortGrid, build + sorted CSR lists (1 thread)",
            Box::new(|| {
                build(&mut grid);
                grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
            }),
        ),
        (
            "broadphase CountingSortGrid, build + sorted CSR lists (2 threads)",
            Box::new(|| {
                match radii {
                    Some(radii) => grid2.build_spheres_parallel(two, points, radii),
                    None => grid2.build_parallel(two, points, radius),
                }
                .expect("valid scene");
                parallel.fill(two, &grid2, &mut lists2).expect("no job panics");
            }),
        ),
        (YARDSTICK, Box::new(|| plain.count(points, radius, radii, &mut counts))),
        (
            "kiddo 6.3 ImmutableKdTree, build + within per point (1 thread)",
            Box::new(|| match radii {
                Some(radii) => peers::kiddo::contacts(&kiddo_points, radii, max, &mut pairs),
                None => peers::kiddo::pairs(&kiddo_points, radius, &mut pairs),
            }),
        ),
    ];
    let mut per = vec![Vec::new(); methods.len()];
    for _ in 0..rounds {
        for (i, (_, frame)) in methods.iter_mut().enumerate() {
            let t = Instant::now();
            frame();
            per[i].push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    let rows: Vec<(&'static str, Vec<f64>)> = methods.iter().map(|(n, _)| *n).zip(per).collect();
    for (n, v) in &rows {
        eprintln!("  {n}: {:.2} ms", crate::shapes::median(v));
    }
    NeighborSet { name: name.to_string(), points: points.len(), entries, rows }
}

/// particles5k (contacts), sph(59) (205,379 points), sph1m and sph1m in a
/// shuffled order, radius 2 for the lattices.
pub fn run_all(quick: bool) -> Vec<NeighborSet> {
    let two = JobSystem::new(2);
    let rounds = |n: usize| {
        if quick {
            2
        } else if n < 500_000 {
            9
        } else {
            5
        }
    };
    let mut sets = Vec::new();
    let spheres = scenes::particles5k();
    sets.push(run(
        "particles5k (contacts)",
        &spheres.centers,
        0.0,
        Some(&spheres.radii),
        rounds(5_000),
        &two,
    ));
    let r = scenes::SPH1M_RADIUS;
    let sph = scenes::sph(59);
    sets.push(run("sph205k (r = 2)", &sph, r, None, rounds(sph.len()), &two));
    let mut sph1m = scenes::sph1m();
    sets.push(run("sph1m (r = 2)", &sph1m, r, None, rounds(sph1m.len()), &two));
    let mut rng = SplitMix64::new(99);
    for i in (1..sph1m.len()).rev() {
        sph1m.swap(i, (rng.next_u64() % (i as u64 + 1)) as usize);
    }
    sets.push(run("sph1m shuffled (r = 2)", &sph1m, r, None, rounds(sph1m.len()), &two));
    sets
}
