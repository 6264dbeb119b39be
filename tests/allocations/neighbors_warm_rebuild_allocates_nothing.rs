//! Regression: a warm frame of neighbor search allocates nothing. Each
//! structure rebuilt on the same particles, with pairs, neighbor lists (both
//! orders) and queries into reused buffers, must make zero heap allocations
//! after two warm-up frames.
//!
//! The counting allocator is global to the test binary, so the test holds
//! `serial()`, and only allocations made by the counting thread
//! while counting is switched on are counted.

use broadphase::glam::Vec3;
use broadphase::neighbors::{
    CountingSortGrid, MultiLevelGrid, NeighborLists, NeighborSearch, ParallelNeighborLists,
    PeriodicDomain, PeriodicGrid, RowLookup, SpatialHash, SpatialIndex, SpatialIndexConfig,
    VerletLists, neighbors_of,
};
use broadphase_scenes::{SPH1M_RADIUS, particles5k, sph};

use broadphase_testkit::allocations_during;

const FRAMES: usize = 30;
const WARM_UP: usize = 2;

/// One frame: build, pairs, lists in both orders, a few queries. Returns
/// a fingerprint of the results so frames can be compared.
fn frame(
    s: &mut impl NeighborSearch,
    points: &[Vec3],
    radii: Option<&[f32]>,
    radius: f32,
    bufs: &mut (Vec<[u32; 2]>, NeighborLists, Vec<u32>),
) -> (usize, usize, usize) {
    match radii {
        Some(radii) => s.build_spheres(points, radii).expect("valid scene"),
        None => s.build(points, radius).expect("valid scene"),
    }
    s.neighbor_pairs(&mut bufs.0);
    s.neighbor_lists(&mut bufs.1);
    let caller_total = bufs.1.total();
    s.sorted_neighbor_lists(0..s.len() / 2, &mut bufs.1);
    let mut hits = 0;
    for p in points.iter().step_by(97) {
        s.query(*p, radius, &mut bufs.2).expect("valid query");
        hits += bufs.2.len();
    }
    (bufs.0.len(), caller_total, hits)
}

/// Allocations of each frame after the warm-up.
fn allocations_per_warm_frame(
    s: &mut impl NeighborSearch,
    points: &[Vec3],
    radii: Option<&[f32]>,
    radius: f32,
) -> Vec<usize> {
    let mut bufs = (Vec::new(), NeighborLists::default(), Vec::new());
    let mut first = None;
    let mut per_frame = Vec::new();
    for n in 0..FRAMES {
        let (result, allocations) =
            allocations_during(n >= WARM_UP, || frame(s, points, radii, radius, &mut bufs));
        assert_eq!(*first.get_or_insert(result), result, "frame {n}");
        if n >= WARM_UP {
            per_frame.push(allocations);
        }
    }
    assert!(first.is_some_and(|r| r.0 > 0));
    per_frame
}

/// Every structure on an SPH lattice and on particles5k's spheres, the
/// periodic grid on the lattice, the multi-level grid on spheres, Verlet
/// lists over a drifting lattice and a query set among the lattice (one
/// thread and two): zero allocations in every warm frame.
pub(crate) fn warm_frames_allocate_nothing() {
    let points = sph(24);
    let spheres = particles5k();
    let mut failures = Vec::new();
    let mut check = |name: &str, counts: Vec<usize>| {
        let total: usize = counts.iter().sum();
        if total != 0 {
            failures.push(format!("{name}: {total} allocations in {} warm frames", counts.len()));
        }
    };
    macro_rules! both_scenes {
        ($name:expr, $make:expr) => {
            check(
                concat!($name, " sph"),
                allocations_per_warm_frame(&mut $make, &points, None, SPH1M_RADIUS),
            );
            check(
                concat!($name, " particles5k"),
                allocations_per_warm_frame(&mut $make, &spheres.centers, Some(&spheres.radii), 3.0),
            );
        };
    }
    both_scenes!("grid", CountingSortGrid::default());
    both_scenes!("hash", SpatialHash::default());
    both_scenes!("index", SpatialIndex::default());
    both_scenes!(
        "index with map",
        SpatialIndex::with_config(SpatialIndexConfig {
            lookup: RowLookup::HashMap,
            ..SpatialIndexConfig::default()
        })
    );
    // The periodic grid: sph's lattice in a box every axis of which wraps.
    let domain = PeriodicDomain::new(Vec3::splat(-0.5), Vec3::splat(23.5), [true; 3])
        .expect("a finite, non-empty box");
    let mut periodic = PeriodicGrid::default();
    let (mut pairs, mut lists) = (Vec::new(), NeighborLists::default());
    let mut counts = Vec::new();
    let mut first = None;
    for n in 0..FRAMES {
        let (result, allocations) = allocations_during(n >= WARM_UP, || {
            periodic.build(&domain, &points, SPH1M_RADIUS).expect("valid scene");
            periodic.neighbor_pairs(&mut pairs);
            periodic.neighbor_lists(&mut lists);
            (pairs.len(), lists.total())
        });
        assert_eq!(*first.get_or_insert(result), result, "periodic frame {n}");
        if n >= WARM_UP {
            counts.push(allocations);
        }
    }
    assert!(first.is_some_and(|(pairs, _)| pairs > 0));
    check("periodic sph", counts);
    // The multi-level grid on particles5k's spheres (radii 1 to 4: one or
    // two levels) and on radii spread a hundredfold.
    let spread: Vec<f32> =
        (0..spheres.radii.len()).map(|i| 0.04 * 100f32.powf((i % 97) as f32 / 97.0)).collect();
    for (name, radii) in
        [("multi-level particles5k", &spheres.radii), ("multi-level spread", &spread)]
    {
        let mut levels = MultiLevelGrid::default();
        let mut contacts = Vec::new();
        let (mut counts, mut first) = (Vec::new(), None);
        for n in 0..FRAMES {
            let (result, allocations) = allocations_during(n >= WARM_UP, || {
                levels.build_spheres(&spheres.centers, radii).expect("valid scene");
                levels.contacts(&mut contacts);
                (levels.levels(), contacts.len())
            });
            assert_eq!(*first.get_or_insert(result), result, "{name} frame {n}");
            if n >= WARM_UP {
                counts.push(allocations);
            }
        }
        assert!(first.is_some_and(|(_, contacts)| contacts > 0), "{name}");
        check(name, counts);
    }
    // Verlet lists over a lattice that breathes (every other point out
    // along x for 8 steps, then back): checks, filters and rebuilds. The
    // lists' sizes repeat from the second breath on, so from there a step
    // allocates nothing.
    let mut verlet = VerletLists::new(SPH1M_RADIUS, 0.3).expect("a valid radius and skin");
    let (mut grid, mut lists) = (CountingSortGrid::default(), NeighborLists::default());
    let mut moving = points.clone();
    let (mut counts, mut rebuilds) = (Vec::new(), 0);
    let breath = 16;
    for n in 0..breath + FRAMES {
        let warm = n >= breath;
        let (rebuilt, allocations) = allocations_during(warm, || {
            let rebuilt = verlet.update(&mut grid, &moving).expect("valid points");
            verlet.neighbors_within(&moving, &mut lists).expect("built");
            let out = if n % breath < breath / 2 { 0.04 } else { -0.04 };
            for (i, p) in moving.iter_mut().enumerate() {
                p.x += if i % 2 == 0 { out } else { -out };
            }
            rebuilt
        });
        rebuilds += usize::from(rebuilt && warm);
        if warm {
            counts.push(allocations);
        }
    }
    assert!(rebuilds > 2, "the drift must rebuild a few times, not {rebuilds}");
    check("verlet sph", counts);
    // A query set among the lattice, on one thread and on two.
    let probes: Vec<Vec3> = points.iter().step_by(3).map(|p| *p + 0.25).collect();
    let jobs = broadphase::JobSystem::new(2);
    let mut parallel = ParallelNeighborLists::default();
    let (mut rows, mut rows2) = (NeighborLists::default(), NeighborLists::default());
    grid.build(&points, SPH1M_RADIUS).expect("valid scene");
    let mut counts = Vec::new();
    for n in 0..FRAMES {
        let ((), allocations) = allocations_during(n >= WARM_UP, || {
            neighbors_of(&grid, &probes, SPH1M_RADIUS, &mut rows).expect("valid probes");
            parallel
                .fill_queries(&jobs, &grid, &probes, SPH1M_RADIUS, &mut rows2)
                .expect("valid probes");
        });
        if n >= WARM_UP {
            counts.push(allocations);
        }
    }
    assert_eq!(rows.indices(), rows2.indices());
    check("query sets sph", counts);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
