//! Neighbor-search benchmarks: the three structures (and brute force where
//! it fits) on the shared particle scenes, one thread unless an id says
//! `2_threads`.
//!
//! Every timed loop reuses its structure and output buffers across
//! iterations, as a simulation does from one step to the next (warm
//! frames). Scenes are generated once, outside the timing. Before anything
//! is timed its answer is checked: on particles5k every structure's
//! contacts must equal brute force; on the SPH lattices every structure
//! must find the same pairs and neighbor-list total as the grid.
//!
//! Groups (criterion ids are `group/function`):
//!
//! - `particles5k` (5,000 spheres, radii 1–4, contact `d <= r_i + r_j`):
//!   `STRUCT/build+contacts` (one frame: build, then every contact pair into
//!   a reused `Vec`), `STRUCT/contacts` (pairs of a built structure), and
//!   `brute_force/contacts` (10 samples);
//! - `sph125k` and `sph1m` (jittered lattices of 50³ and 100³ points,
//!   radius [`SPH1M_RADIUS`], ~31 neighbors each): `STRUCT/build`,
//!   `STRUCT/sorted_lists` (CSR neighbor lists in sorted order, the SPH
//!   loop's layout), `STRUCT/lists` (CSR in caller order: sorted, then
//!   remapped), `STRUCT/build+sorted_lists` (one frame),
//!   `STRUCT/build+sorted_lists_2_threads` (the build, then the lists in two
//!   slot ranges on two scoped threads) and `STRUCT/pairs`; sph125k also
//!   `STRUCT/query_each` (one `query` per point, as a kd-tree is used);
//! - `scan_kernel`: grid `build+sorted_lists` on sph125k and `build+contacts`
//!   on particles5k for every [`ScanKernel`] this CPU runs;
//! - `cell_hash`: spatial hash `build+pairs` on sph125k with
//!   [`CellHash::Teschner`] and [`CellHash::Fibonacci`];
//! - `cells_per_radius`: grid and index `build+sorted_lists` on sph125k with
//!   1 and 2 cells per radius;
//! - `job_system`: the grid's `build+sorted_lists` on sph1m with the lists
//!   filled by [`ParallelNeighborLists`] on a 2-thread [`JobSystem`], with
//!   the build on the calling thread and with `build_parallel` on the
//!   same job system, the caller-order lists on the job system
//!   (`fill_caller_order`, beside `sph1m/grid/lists` on one thread), and
//!   the two builds alone;
//! - `periodic`: [`PeriodicGrid`] `build+pairs` on sph125k in a box every
//!   axis of which wraps, beside the counting-sort grid's `build+pairs` on
//!   the same points without the wrap;
//! - `radii_spread`: 100,000 spheres with radii from 0.1 to 10 (grains
//!   and boulders), [`MultiLevelGrid`] against one counting-sort grid,
//!   `build+contacts`;
//! - `query_sets`: 100,000 probes among sph125k's points, [`neighbors_of`]
//!   on one thread and `ParallelNeighborLists::fill_queries` on two;
//! - `sparse_lists`: the grid's `sorted_lists` (built once) on 100,000
//!   uniform points in a cube of side 1000 at radius 5 and 20 (about 0.1
//!   and 3 neighbors a point), and on particles5k's spheres.
//!
//! `STRUCT` is `grid` ([`CountingSortGrid`]), `hash` ([`SpatialHash`]),
//! `index` ([`SpatialIndex`], binary search) or `index_map` (with the
//! hash map). Peers (kiddo) are in `benches/neighbors-peers`, run
//! separately.
//!
//! # Running
//!
//! ```text
//! cargo bench --bench neighbors                 # everything, ~10 minutes on 2 cores
//! cargo bench --bench neighbors -- particles5k/ # one group
//! ```
//!
//! Criterion prints each estimate as `[low median high]`; the middle value
//! is the one recorded in `docs/BENCHMARKS.md`.

use std::hint::black_box;
use std::time::Duration;

use broadphase::glam::Vec3;
use broadphase::{
    JobSystem,
    neighbors::{
        CellHash, CountingSortGrid, CountingSortGridConfig, MultiLevelGrid, NeighborLists,
        NeighborSearch, ParallelNeighborLists, PeriodicDomain, PeriodicGrid, RowLookup, ScanKernel,
        SpatialHash, SpatialHashConfig, SpatialIndex, SpatialIndexConfig, neighbors_of,
    },
    oracle::brute_force_sphere_contacts,
};
use broadphase_scenes::{SPH1M_RADIUS, Spheres, particles5k, sph, sph1m};
use criterion::{BenchmarkGroup, Criterion, SamplingMode, criterion_main, measurement::WallTime};

/// Short settings for sub-millisecond work.
fn configure_fast(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
}

/// Settings for frames of tens to hundreds of milliseconds.
fn configure_slow(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
}

/// Makes one structure, empty.
type Maker = fn() -> Structure;

/// The structures compared, by id.
fn structures() -> Vec<(&'static str, Maker)> {
    vec![
        ("grid", || Structure::Grid(CountingSortGrid::default())),
        ("hash", || Structure::Hash(SpatialHash::default())),
        ("index", || Structure::Index(SpatialIndex::default())),
        ("index_map", || {
            Structure::Index(SpatialIndex::with_config(SpatialIndexConfig {
                lookup: RowLookup::HashMap,
                ..SpatialIndexConfig::default()
            }))
        }),
    ]
}

/// One of the structures (the trait has generic methods, so no `dyn`).
#[derive(Debug)]
enum Structure {
    Grid(CountingSortGrid),
    Hash(SpatialHash),
    Index(SpatialIndex),
}

macro_rules! with {
    ($s:expr, $v:ident => $body:expr) => {
        match $s {
            Structure::Grid($v) => $body,
            Structure::Hash($v) => $body,
            Structure::Index($v) => $body,
        }
    };
}

/// Contacts of a built structure, sorted: for checking.
fn sorted_pairs(s: &Structure) -> Vec<[u32; 2]> {
    let mut pairs = Vec::new();
    with!(s, v => v.neighbor_pairs(&mut pairs));
    pairs.sort_unstable();
    pairs
}

/// The sorted-order lists of all particles, in two slot ranges on two threads.
fn sorted_lists_2_threads(s: &(impl NeighborSearch + Sync), parts: &mut [NeighborLists; 2]) {
    let (n, mid) = (s.len(), s.len() / 2);
    let [first, second] = parts;
    std::thread::scope(|scope| {
        scope.spawn(|| s.sorted_neighbor_lists(0..mid, first));
        s.sorted_neighbor_lists(mid..n, second);
    });
}

fn particles(c: &mut Criterion) {
    let scene = particles5k();
    let Spheres { centers, radii } = &scene;
    let mut expected = Vec::new();
    brute_force_sphere_contacts(centers, radii, &mut expected).expect("valid scene");

    let mut group = c.benchmark_group("particles5k");
    configure_fast(&mut group);
    let mut out = Vec::with_capacity(2 * expected.len());
    for (name, make) in structures() {
        let mut s = make();
        with!(&mut s, v => v.build_spheres(centers, radii).expect("valid scene"));
        assert!(
            sorted_pairs(&s) == expected,
            "particles5k: {name} contacts differ from brute force"
        );
        group.bench_function(format!("{name}/build+contacts"), |b| {
            b.iter(|| {
                with!(&mut s, v => {
                    v.build_spheres(black_box(centers), radii).expect("valid scene");
                    v.neighbor_pairs(&mut out);
                });
                black_box(out.len())
            });
        });
        group.bench_function(format!("{name}/contacts"), |b| {
            b.iter(|| {
                with!(&s, v => v.neighbor_pairs(&mut out));
                black_box(out.len())
            });
        });
    }
    group.sample_size(10).sampling_mode(SamplingMode::Flat);
    group.bench_function("brute_force/contacts", |b| {
        b.iter(|| {
            brute_force_sphere_contacts(black_box(centers), radii, &mut out).expect("valid scene");
            black_box(out.len())
        });
    });
    group.finish();
}

/// One SPH scene group.
fn sph_group(c: &mut Criterion, name: &str, points: &[Vec3], query_each: bool) {
    let mut group = c.benchmark_group(name);
    configure_slow(&mut group);
    let mut lists = NeighborLists::default();
    let mut parts = [NeighborLists::default(), NeighborLists::default()];
    let mut pairs = Vec::new();
    let mut reference: Option<(usize, usize)> = None;
    for (id, make) in structures() {
        let mut s = make();
        with!(&mut s, v => {
            v.build(points, SPH1M_RADIUS).expect("valid scene");
            v.neighbor_pairs(&mut pairs);
            v.sorted_neighbor_lists(0..v.len(), &mut lists);
            sorted_lists_2_threads(v, &mut parts);
        });
        let got = (pairs.len(), lists.total());
        assert_eq!(got.1, 2 * got.0, "{name}: {id} lists and pairs disagree");
        assert_eq!(parts[0].total() + parts[1].total(), got.1, "{name}: {id} 2 threads");
        assert_eq!(*reference.get_or_insert(got), got, "{name}: {id} differs from the grid");

        group.bench_function(format!("{id}/build"), |b| {
            b.iter(|| with!(&mut s, v => v.build(black_box(points), SPH1M_RADIUS).expect("valid")));
        });
        group.bench_function(format!("{id}/sorted_lists"), |b| {
            b.iter(|| {
                with!(&s, v => v.sorted_neighbor_lists(0..v.len(), &mut lists));
                black_box(lists.total())
            });
        });
        group.bench_function(format!("{id}/lists"), |b| {
            b.iter(|| {
                with!(&s, v => v.neighbor_lists(&mut lists));
                black_box(lists.total())
            });
        });
        group.bench_function(format!("{id}/build+sorted_lists"), |b| {
            b.iter(|| {
                with!(&mut s, v => {
                    v.build(black_box(points), SPH1M_RADIUS).expect("valid");
                    v.sorted_neighbor_lists(0..v.len(), &mut lists);
                });
                black_box(lists.total())
            });
        });
        group.bench_function(format!("{id}/build+sorted_lists_2_threads"), |b| {
            b.iter(|| {
                with!(&mut s, v => {
                    v.build(black_box(points), SPH1M_RADIUS).expect("valid");
                    sorted_lists_2_threads(v, &mut parts);
                });
                black_box(parts[0].total() + parts[1].total())
            });
        });
        group.bench_function(format!("{id}/pairs"), |b| {
            b.iter(|| {
                with!(&s, v => v.neighbor_pairs(&mut pairs));
                black_box(pairs.len())
            });
        });
        if query_each {
            let mut hits = Vec::new();
            group.bench_function(format!("{id}/query_each"), |b| {
                b.iter(|| {
                    let mut total = 0;
                    for &p in points {
                        with!(&s, v => v.query(p, SPH1M_RADIUS, &mut hits).expect("valid"));
                        total += hits.len();
                    }
                    black_box(total)
                });
            });
        }
    }
    group.finish();
}

fn sph_scenes(c: &mut Criterion) {
    sph_group(c, "sph125k", &sph(50), true);
    sph_group(c, "sph1m", &sph1m(), false);
}

/// Scan kernels, cell hashes and cell sizes: the choices behind the defaults.
fn choices(c: &mut Criterion) {
    let points = sph(50);
    let scene = particles5k();
    let mut lists = NeighborLists::default();
    let mut pairs = Vec::new();

    let mut group = c.benchmark_group("scan_kernel");
    configure_slow(&mut group);
    for kernel in ScanKernel::available() {
        let config = CountingSortGridConfig { kernel, ..CountingSortGridConfig::default() };
        let mut grid = CountingSortGrid::with_config(config);
        group.bench_function(format!("sph125k/{kernel:?}"), |b| {
            b.iter(|| {
                grid.build(black_box(&points), SPH1M_RADIUS).expect("valid");
                grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
                black_box(lists.total())
            });
        });
        group.bench_function(format!("particles5k/{kernel:?}"), |b| {
            b.iter(|| {
                grid.build_spheres(black_box(&scene.centers), &scene.radii).expect("valid");
                grid.neighbor_pairs(&mut pairs);
                black_box(pairs.len())
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("cell_hash");
    configure_slow(&mut group);
    for hash in [CellHash::Teschner, CellHash::Fibonacci, CellHash::Rows] {
        let mut s =
            SpatialHash::with_config(SpatialHashConfig { hash, ..SpatialHashConfig::default() });
        group.bench_function(format!("sph125k/{hash:?}"), |b| {
            b.iter(|| {
                s.build(black_box(&points), SPH1M_RADIUS).expect("valid");
                s.neighbor_pairs(&mut pairs);
                black_box(pairs.len())
            });
        });
    }
    group.finish();

    let mut group = c.benchmark_group("cells_per_radius");
    configure_slow(&mut group);
    for cells_per_radius in [1, 2] {
        let mut grid = CountingSortGrid::with_config(CountingSortGridConfig {
            cells_per_radius,
            ..CountingSortGridConfig::default()
        });
        let mut index = SpatialIndex::with_config(SpatialIndexConfig {
            cells_per_radius,
            ..SpatialIndexConfig::default()
        });
        group.bench_function(format!("grid/{cells_per_radius}"), |b| {
            b.iter(|| {
                grid.build(black_box(&points), SPH1M_RADIUS).expect("valid");
                grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
                black_box(lists.total())
            });
        });
        group.bench_function(format!("index/{cells_per_radius}"), |b| {
            b.iter(|| {
                index.build(black_box(&points), SPH1M_RADIUS).expect("valid");
                index.sorted_neighbor_lists(0..index.len(), &mut lists);
                black_box(lists.total())
            });
        });
    }
    group.finish();
}

/// The library's parallel fill: grid build, then the lists on the job system.
fn job_system(c: &mut Criterion) {
    let points = sph1m();
    let jobs = JobSystem::new(2);
    let mut grid = CountingSortGrid::default();
    let mut parallel = ParallelNeighborLists::default();
    let (mut lists, mut single) = (NeighborLists::default(), NeighborLists::default());
    grid.build(&points, SPH1M_RADIUS).expect("valid");
    parallel.fill(&jobs, &grid, &mut lists).expect("no job panics");
    grid.sorted_neighbor_lists(0..grid.len(), &mut single);
    assert_eq!(lists.indices(), single.indices(), "parallel lists differ from one thread's");
    parallel.fill_caller_order(&jobs, &grid, &mut lists).expect("no job panics");
    grid.neighbor_lists(&mut single);
    assert_eq!(lists.indices(), single.indices(), "caller-order lists differ from one thread's");

    let mut group = c.benchmark_group("job_system");
    configure_slow(&mut group);
    group.bench_function("sph1m/grid/build+sorted_lists_2_threads", |b| {
        b.iter(|| {
            grid.build(black_box(&points), SPH1M_RADIUS).expect("valid");
            parallel.fill(&jobs, &grid, &mut lists).expect("no job panics");
            black_box(lists.total())
        });
    });
    group.bench_function("sph1m/grid/build_parallel+sorted_lists_2_threads", |b| {
        b.iter(|| {
            grid.build_parallel(&jobs, black_box(&points), SPH1M_RADIUS).expect("valid");
            parallel.fill(&jobs, &grid, &mut lists).expect("no job panics");
            black_box(lists.total())
        });
    });
    // Beside `sph1m/grid/lists`, the one-thread call on the same grid.
    grid.build(&points, SPH1M_RADIUS).expect("valid");
    group.bench_function("sph1m/grid/lists_2_threads", |b| {
        b.iter(|| {
            parallel.fill_caller_order(&jobs, &grid, &mut lists).expect("no job panics");
            black_box(lists.total())
        });
    });
    group.bench_function("sph1m/grid/build", |b| {
        b.iter(|| grid.build(black_box(&points), SPH1M_RADIUS).expect("valid"));
    });
    group.bench_function("sph1m/grid/build_parallel_2_threads", |b| {
        b.iter(|| grid.build_parallel(&jobs, black_box(&points), SPH1M_RADIUS).expect("valid"));
    });
    group.finish();
}

/// Nearest-image neighbors in a wrapping box: the periodic grid on sph125k
/// in a box the lattice tiles (every axis wrapping), against the
/// counting-sort grid's pairs on the same points without the wrap.
fn periodic(c: &mut Criterion) {
    let points = sph(50);
    let domain = PeriodicDomain::new(Vec3::splat(-0.5), Vec3::splat(49.5), [true; 3])
        .expect("a finite, non-empty box");
    let (mut periodic, mut grid) = (PeriodicGrid::default(), CountingSortGrid::default());
    let (mut pairs, mut expected) = (Vec::new(), Vec::new());
    periodic.build(&domain, &points, SPH1M_RADIUS).expect("valid scene");
    periodic.neighbor_pairs(&mut pairs);
    grid.build(&points, SPH1M_RADIUS).expect("valid scene");
    grid.neighbor_pairs(&mut expected);
    assert!(pairs.len() > expected.len(), "the wrap adds the pairs across the faces");

    let mut group = c.benchmark_group("periodic");
    configure_slow(&mut group);
    group.bench_function("sph125k/periodic_grid/build+pairs", |b| {
        b.iter(|| {
            periodic.build(&domain, black_box(&points), SPH1M_RADIUS).expect("valid");
            periodic.neighbor_pairs(&mut pairs);
            black_box(pairs.len())
        });
    });
    group.bench_function("sph125k/grid/build+pairs", |b| {
        b.iter(|| {
            grid.build(black_box(&points), SPH1M_RADIUS).expect("valid");
            grid.neighbor_pairs(&mut expected);
            black_box(expected.len())
        });
    });
    group.finish();
}

/// Spheres whose radii span two orders of magnitude, as grains around
/// boulders: in a cube of side 100, 98,000 spheres of radii 0.1–0.4 and
/// 2,000 of radii 2.5–10 (log-uniform each). One counting-sort grid sizes
/// its cells for the largest sphere, so every grain scans hundreds of
/// others; the multi-level grid sizes each level's cells for its own.
fn radii_spread(c: &mut Criterion) {
    let mut rng = broadphase_scenes::SplitMix64::new(77);
    let centers: Vec<Vec3> = (0..100_000)
        .map(|_| {
            Vec3::new(
                rng.range_f32(0.0, 100.0),
                rng.range_f32(0.0, 100.0),
                rng.range_f32(0.0, 100.0),
            )
        })
        .collect();
    let radii: Vec<f32> = (0..100_000)
        .map(|i| {
            let (lo, hi) = if i % 50 == 0 { (2.5f32, 10.0f32) } else { (0.1, 0.4) };
            lo * (hi / lo).powf(rng.next_f32())
        })
        .collect();
    let (mut levels, mut grid) = (MultiLevelGrid::default(), CountingSortGrid::default());
    let (mut contacts, mut expected) = (Vec::new(), Vec::new());
    levels.build_spheres(&centers, &radii).expect("valid scene");
    levels.contacts(&mut contacts);
    grid.build_spheres(&centers, &radii).expect("valid scene");
    grid.neighbor_pairs(&mut expected);
    contacts.sort_unstable();
    expected.sort_unstable();
    assert_eq!(contacts, expected, "the levels and one grid disagree");

    let mut group = c.benchmark_group("radii_spread");
    configure_slow(&mut group);
    group.bench_function("spheres100k/multi_level/build+contacts", |b| {
        b.iter(|| {
            levels.build_spheres(black_box(&centers), &radii).expect("valid");
            levels.contacts(&mut contacts);
            black_box(contacts.len())
        });
    });
    group.bench_function("spheres100k/grid/build+contacts", |b| {
        b.iter(|| {
            grid.build_spheres(black_box(&centers), &radii).expect("valid");
            grid.neighbor_pairs(&mut expected);
            black_box(expected.len())
        });
    });
    group.finish();
}

/// A query set among a data set: 100,000 probes (every point of sph125k
/// shifted by a quarter, the first 100,000) among sph125k's points, radius
/// 2, on one thread and on a 2-thread job system.
fn query_sets(c: &mut Criterion) {
    let points = sph(50);
    let probes: Vec<Vec3> = points.iter().take(100_000).map(|p| *p + 0.25).collect();
    let mut grid = CountingSortGrid::default();
    grid.build(&points, SPH1M_RADIUS).expect("valid scene");
    let jobs = JobSystem::new(2);
    let mut parallel = ParallelNeighborLists::default();
    let (mut rows, mut rows2) = (NeighborLists::default(), NeighborLists::default());
    neighbors_of(&grid, &probes, SPH1M_RADIUS, &mut rows).expect("valid probes");
    parallel.fill_queries(&jobs, &grid, &probes, SPH1M_RADIUS, &mut rows2).expect("valid probes");
    assert_eq!(rows.indices(), rows2.indices(), "parallel rows differ from one thread's");

    let mut group = c.benchmark_group("query_sets");
    configure_slow(&mut group);
    group.bench_function("sph125k/100k_probes/grid/neighbors_of", |b| {
        b.iter(|| {
            neighbors_of(&grid, black_box(&probes), SPH1M_RADIUS, &mut rows).expect("valid");
            black_box(rows.total())
        });
    });
    group.bench_function("sph125k/100k_probes/grid/neighbors_of_2_threads", |b| {
        b.iter(|| {
            parallel
                .fill_queries(&jobs, &grid, black_box(&probes), SPH1M_RADIUS, &mut rows2)
                .expect("valid");
            black_box(rows2.total())
        });
    });
    group.finish();
}

/// The grid's lists where rows of cells hold few particles.
fn sparse_lists(c: &mut Criterion) {
    let mut state = 0x1234_5678_9abc_def0_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let uniform: Vec<Vec3> =
        (0..100_000).map(|_| Vec3::new(next(), next(), next()) * 1000.0).collect();
    let spheres = particles5k();
    let mut lists = NeighborLists::default();
    let mut group = c.benchmark_group("sparse_lists");
    configure_slow(&mut group);
    for radius in [5.0, 20.0] {
        let mut grid = CountingSortGrid::default();
        grid.build(&uniform, radius).expect("valid");
        group.bench_function(format!("uniform100k_r{radius}/grid/sorted_lists"), |b| {
            b.iter(|| {
                grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
                black_box(lists.total())
            });
        });
    }
    let mut grid = CountingSortGrid::default();
    grid.build_spheres(&spheres.centers, &spheres.radii).expect("valid");
    group.bench_function("particles5k/grid/sorted_lists", |b| {
        b.iter(|| {
            grid.sorted_neighbor_lists(0..grid.len(), &mut lists);
            black_box(lists.total())
        });
    });
    group.finish();
}

/// The benchmark groups, in run order (a private module: the `pub fn` that
/// `criterion_group!` generates cannot carry a doc comment).
mod groups {
    use super::{
        choices, job_system, particles, periodic, query_sets, radii_spread, sparse_lists,
        sph_scenes,
    };
    use criterion::criterion_group;

    criterion_group!(
        benches,
        particles,
        sph_scenes,
        choices,
        job_system,
        periodic,
        radii_spread,
        query_sets,
        sparse_lists
    );
}

criterion_main!(groups::benches);
