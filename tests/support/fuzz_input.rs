//! Decoding arbitrary bytes into a box scene and a grid configuration, and
//! the check every decoded scene must pass. Shared, by `#[path]`, between
//! the cargo-fuzz target (`fuzz/fuzz_targets/grid_pairs.rs`) and the stable
//! test that replays the committed corpus (`tests/integration/fuzz_corpus_replays.rs`),
//! so a fuzz finding is a regression test as soon as its file is committed.

use broadphase::glam::Vec3;
use broadphase::{
    Aabb, AdaptiveGrid,
    grid::{FindPairsError, GridConfig, PairKernel},
    oracle::{SortAndSweep, brute_force_pairs, brute_force_query},
};

/// Most boxes one input decodes to: brute force is the oracle, and it is
/// quadratic.
pub(crate) const MAX_FUZZ_BOXES: usize = 300;

/// Coordinates that break naive grids: signed zeros, infinities, NaN, the
/// largest finite floats, subnormals, and far-apart magnitudes.
const SPECIAL: [f32; 16] = [
    0.0,
    -0.0,
    f32::INFINITY,
    f32::NEG_INFINITY,
    f32::NAN,
    f32::MAX,
    f32::MIN,
    3.0e38,
    -3.0e38,
    f32::MIN_POSITIVE,
    1.0e-40, // subnormal
    -1.0e-40,
    1.0e30,
    -1.0e30,
    9000.0,
    -9000.0,
];

/// A cursor over the fuzzer's bytes; reading past the end gives zeros, so
/// every input decodes to something.
struct Bytes<'a> {
    data: &'a [u8],
    at: usize,
}

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        let byte = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }

    fn exhausted(&self) -> bool {
        self.at >= self.data.len()
    }
}

/// One coordinate: mostly small values on a quarter grid (so boxes touch and
/// coincide), sometimes raw bits, specials, copies and large offsets.
fn coordinate(bytes: &mut Bytes<'_>, previous: f32) -> f32 {
    let tag = bytes.u8();
    match tag % 8 {
        0..=3 => f32::from(bytes.u8() as i8) / 4.0,
        4 => f32::from_le_bytes([bytes.u8(), bytes.u8(), bytes.u8(), bytes.u8()]),
        5 => SPECIAL[usize::from(bytes.u8()) % SPECIAL.len()],
        6 => previous,
        _ => f32::from(i16::from_le_bytes([bytes.u8(), bytes.u8()])) * 1000.0,
    }
}

/// Decodes bytes into a grid configuration and a list of boxes. The first
/// byte picks the config: bits 0..3 the leaf capacity, bit 3 a sweep
/// threshold of 2 (every leaf of more than two boxes swept along x) or the
/// default, bits 4.. the pair kernel. The second byte picks the mode: in *sanitized* mode every box is made valid
/// (non-finite coordinates become 0 or ±`f32::MAX`, corners ordered), so
/// half of all inputs exercise pairs on hostile but legal coordinates; in
/// *raw* mode a flag per box decides whether its corners are ordered, and
/// NaN and infinities stay, so the error path is exercised too.
pub(crate) fn decode(data: &[u8]) -> (GridConfig, Vec<Aabb>) {
    let mut bytes = Bytes { data, at: 0 };
    let config_byte = bytes.u8();
    let sanitized = bytes.u8() & 1 == 1;
    let kernels = PairKernel::available();
    let config = GridConfig {
        leaf_capacity: [1, 2, 4, 16, 64][usize::from(config_byte & 7) % 5],
        sweep_above: if config_byte & 8 == 0 { GridConfig::default().sweep_above } else { 2 },
        kernel: kernels[usize::from(config_byte >> 4) % kernels.len()],
        ..GridConfig::default()
    };
    let mut boxes = Vec::new();
    let mut previous = [0.0f32; 6];
    while !bytes.exhausted() && boxes.len() < MAX_FUZZ_BOXES {
        let flags = bytes.u8();
        let mut c = [0.0f32; 6];
        for (k, value) in c.iter_mut().enumerate() {
            *value = coordinate(&mut bytes, previous[k]);
            if sanitized && !value.is_finite() {
                *value = if value.is_nan() { 0.0 } else { value.signum() * f32::MAX };
            }
        }
        if sanitized || flags & 1 == 0 {
            for axis in 0..3 {
                if c[axis] > c[axis + 3] {
                    c.swap(axis, axis + 3);
                }
            }
        }
        previous = c;
        boxes.push(Aabb::new(Vec3::new(c[0], c[1], c[2]), Vec3::new(c[3], c[4], c[5])));
    }
    (config, boxes)
}

/// Runs the decoded scene through the grid on both paths and checks it
/// against the oracles: the same typed error as `validate_boxes` for invalid
/// input (an empty output and an empty grid after it), otherwise exactly
/// brute force's pairs from `find_pairs`, `try_find_pairs` and `build` then
/// `pairs`, brute force's query results, and a tree that passes `validate`.
/// Panics on any difference.
pub(crate) fn check_grid(data: &[u8]) {
    let (config, boxes) = decode(data);
    let mut grid = AdaptiveGrid::with_config(config);
    let mut expected = Vec::new();
    let oracle = brute_force_pairs(&boxes, &mut expected);

    // One frame, which keeps nothing.
    let mut pairs = vec![[0, 0]];
    match (grid.find_pairs(&boxes, &mut pairs), &oracle) {
        (Err(found), Err(wanted)) => {
            assert_eq!(found.to_string(), wanted.to_string());
            assert!(pairs.is_empty(), "a failed frame left pairs behind");
        }
        (Ok(()), Ok(())) => {
            pairs.sort_unstable();
            assert_eq!(pairs, expected, "find_pairs differs from brute force with {config:?}");
        }
        (found, wanted) => panic!("find_pairs said {found:?}, brute force said {wanted:?}"),
    }
    assert!(grid.is_empty(), "find_pairs keeps no tree");
    pairs.push([0, 0]);
    match (grid.try_find_pairs(&boxes, &mut pairs), &oracle) {
        (Err(FindPairsError::Input(found)), Err(wanted)) => {
            assert_eq!(found.to_string(), wanted.to_string());
            assert!(pairs.is_empty(), "a failed frame left pairs behind");
        }
        (Ok(()), Ok(())) => {
            pairs.sort_unstable();
            assert_eq!(pairs, expected, "try_find_pairs differs from brute force with {config:?}");
        }
        (found, wanted) => panic!("try_find_pairs said {found:?}, brute force said {wanted:?}"),
    }

    match (grid.build(&boxes), oracle) {
        (Err(found), Err(wanted)) => {
            // NaN != NaN, so compare the report, which names index and axis.
            assert_eq!(found.to_string(), wanted.to_string());
            assert!(grid.is_empty());
            let mut pairs = vec![[0, 0]];
            grid.pairs(&mut pairs);
            assert!(pairs.is_empty(), "a failed build left pairs behind");
        }
        (Ok(()), Ok(())) => {
            grid.validate(&boxes).unwrap_or_else(|e| panic!("{e} with {config:?}"));
            grid.pairs(&mut pairs);
            pairs.sort_unstable();
            assert_eq!(pairs, expected, "pairs differ from brute force with {config:?}");
            let mut swept = Vec::new();
            SortAndSweep::default().find_pairs(&boxes, &mut swept).expect("valid boxes");
            swept.sort_unstable();
            assert_eq!(swept, expected, "sort-and-sweep differs from brute force");
            let (mut hits, mut wanted) = (Vec::new(), Vec::new());
            for query in boxes.iter().take(8) {
                grid.query_aabb(query, &mut hits).expect("a valid box is a valid query");
                brute_force_query(&boxes, query, &mut wanted).expect("valid boxes");
                hits.sort_unstable();
                assert_eq!(hits, wanted, "query {query:?} differs with {config:?}");
            }
        }
        (found, wanted) => panic!("grid said {found:?}, brute force said {wanted:?}"),
    }
}

/// A structure's outcome against the oracle's: the same typed error (by
/// its report, which names index and axis: NaN != NaN), or both answered
/// and `same` compares the answers.
fn agree<E: core::fmt::Debug + core::fmt::Display, O: core::fmt::Debug + core::fmt::Display>(
    name: &str,
    found: Result<(), E>,
    wanted: Result<(), O>,
    same: impl FnOnce(),
) {
    match (found, wanted) {
        (Err(found), Err(wanted)) => assert_eq!(found.to_string(), wanted.to_string(), "{name}"),
        (Ok(()), Ok(())) => same(),
        (found, wanted) => panic!("{name} said {found:?}, brute force said {wanted:?}"),
    }
}

/// One job system for every input: starting threads per input would make
/// the fuzzer measure thread start-up.
fn shared_jobs() -> &'static broadphase::JobSystem {
    static JOBS: std::sync::OnceLock<broadphase::JobSystem> = std::sync::OnceLock::new();
    JOBS.get_or_init(|| broadphase::JobSystem::new(3))
}

/// The grid tree (all cores) on the same decoded scenes: the same typed
/// error as the oracle, or exactly brute force's pairs, at split thresholds
/// small enough that even a few boxes run the parallel passes.
pub(crate) fn check_grid_tree(data: &[u8]) {
    let (config, boxes) = decode(data);
    let split_threshold = [1, 3, 16, 64][config.leaf_capacity.trailing_zeros() as usize % 4];
    let tree_config =
        broadphase::tree::GridTreeConfig { split_threshold, grid: config, ..Default::default() };
    let mut tree = broadphase::GridTree::with_config(tree_config);
    let mut expected = Vec::new();
    let oracle = brute_force_pairs(&boxes, &mut expected);
    let mut pairs = Vec::new();
    let found = tree.find_pairs(shared_jobs(), &boxes, &mut pairs);
    agree("grid tree", found, oracle, || {
        pairs.sort_unstable();
        assert_eq!(pairs, expected, "grid tree differs from brute force with {tree_config:?}");
    });
}

/// The three neighbor structures on points decoded from the same bytes
/// (each box's min corner is a point; the first coordinate's magnitude,
/// when finite, is the radius): the oracle's typed error, or exactly its
/// pairs within the radius. Then the multi-level grid on spheres, the
/// periodic grid in a box, a query set and Verlet lists, all made of the
/// same boxes.
pub(crate) fn check_neighbors(data: &[u8]) {
    use broadphase::{
        neighbors::{CountingSortGrid, NeighborSearch, SpatialHash, SpatialIndex},
        oracle::brute_force_neighbor_pairs,
    };
    let (_, boxes) = decode(data);
    let points: Vec<Vec3> = boxes.iter().map(|b| b.min).collect();
    let radius = boxes.first().map_or(1.0, |b| (b.max.x - b.min.x).abs());
    let mut expected = Vec::new();
    let oracle = brute_force_neighbor_pairs(&points, radius, &mut expected);
    fn check(
        name: &str,
        structure: &mut impl NeighborSearch,
        points: &[Vec3],
        radius: f32,
        oracle: &Result<(), broadphase::neighbors::PointError>,
        expected: &[[u32; 2]],
    ) {
        let found = structure.build(points, radius);
        agree(name, found, *oracle, || {
            let mut pairs = Vec::new();
            structure.neighbor_pairs(&mut pairs);
            pairs.sort_unstable();
            assert_eq!(pairs, expected, "{name} differs from brute force, radius {radius}");
        });
    }
    check("grid", &mut CountingSortGrid::default(), &points, radius, &oracle, &expected);
    check("hash", &mut SpatialHash::default(), &points, radius, &oracle, &expected);
    check("index", &mut SpatialIndex::default(), &points, radius, &oracle, &expected);
    check_spheres_over_levels(&points, &boxes);
    check_periodic(data, &points, radius);
    check_query_set(&points, &boxes, radius);
    check_verlet(&points, &boxes, radius);
}

/// The boxes' max corners as a query set among the min corners: rows
/// equal to brute force's, or the same typed error (the max corners hold
/// the hostile values the min corners do not).
fn check_query_set(points: &[Vec3], boxes: &[Aabb], radius: f32) {
    use broadphase::{
        neighbors::{CountingSortGrid, NeighborLists, NeighborSearch, neighbors_of},
        oracle::brute_force_neighbors_of,
    };
    let mut grid = CountingSortGrid::default();
    if grid.build(points, radius).is_err() {
        return; // the points' own check is above
    }
    let queries: Vec<Vec3> = boxes.iter().map(|b| b.max).collect();
    let (mut rows, mut expected) = (NeighborLists::default(), NeighborLists::default());
    let found = neighbors_of(&grid, &queries, radius, &mut rows);
    let wanted = brute_force_neighbors_of(points, &queries, radius, &mut expected);
    agree("query set", found, wanted, || {
        assert_eq!(rows.offsets(), expected.offsets(), "query set rows, radius {radius}");
        assert_eq!(rows.indices(), expected.indices(), "query set entries, radius {radius}");
    });
}

/// Verlet lists built on the min corners with the boxes' heights as a
/// skin source, then the points moved toward their max corners by a
/// fraction: whenever the lists say they hold, the filtered rows are
/// brute force's for the moved points.
fn check_verlet(points: &[Vec3], boxes: &[Aabb], radius: f32) {
    use broadphase::{
        neighbors::{CountingSortGrid, NeighborLists, VerletLists},
        oracle::{brute_force_neighbor_pairs, brute_force_neighbor_rows},
    };
    let skin = boxes.first().map_or(0.0, |b| (b.max.y - b.min.y).abs());
    let Ok(mut verlet) = VerletLists::new(radius, skin) else { return };
    let mut grid = CountingSortGrid::default();
    if verlet.update(&mut grid, points).is_err() {
        return;
    }
    let mut lists = NeighborLists::default();
    for share in [0.0f32, 1.0e-3, 0.1, 1.0] {
        let moved: Vec<Vec3> =
            points.iter().zip(boxes).map(|(p, b)| *p + (b.max - b.min) * share).collect();
        let Ok(valid) = verlet.is_valid(&moved) else { continue };
        if !valid {
            continue;
        }
        verlet.neighbors_within(&moved, &mut lists).expect("built, same count");
        let mut pairs = Vec::new();
        brute_force_neighbor_pairs(&moved, radius, &mut pairs).expect("valid moved points");
        let expected = brute_force_neighbor_rows(moved.len(), &pairs);
        for (row, want) in expected.iter().enumerate() {
            let mut got = lists.neighbors(row).to_vec();
            got.sort_unstable();
            assert_eq!(&got, want, "verlet row {row}, share {share}, skin {skin}, radius {radius}");
        }
    }
}

/// Spheres with each box's height as its radius (any spread, zeros,
/// hostile values) through the multi-level grid, against brute force.
fn check_spheres_over_levels(centers: &[Vec3], boxes: &[Aabb]) {
    use broadphase::{neighbors::MultiLevelGrid, oracle::brute_force_sphere_contacts};
    let radii: Vec<f32> = boxes.iter().map(|b| b.max.y - b.min.y).collect();
    let mut expected = Vec::new();
    let oracle = brute_force_sphere_contacts(centers, &radii, &mut expected);
    let mut levels = MultiLevelGrid::default();
    let found = levels.build_spheres(centers, &radii);
    agree("multi-level grid", found, oracle, || {
        let mut contacts = Vec::new();
        levels.contacts(&mut contacts);
        contacts.sort_unstable();
        assert_eq!(contacts, expected, "multi-level grid differs from brute force");
    });
}

/// The points in a box made from the input (their bounds, or a box the
/// first bytes choose), wrapping on the axes the first byte says, against
/// brute force by the nearest image; every refusal must be the oracle's.
fn check_periodic(data: &[u8], points: &[Vec3], radius: f32) {
    use broadphase::{
        neighbors::{PeriodicDomain, PeriodicGrid},
        oracle::brute_force_periodic_pairs,
    };
    let bits = data.first().copied().unwrap_or(0);
    let periodic = [bits & 1 != 0, bits & 2 != 0, bits & 4 != 0];
    let finite = points.iter().filter(|p| p.is_finite());
    let lo = finite.clone().fold(Vec3::splat(f32::MAX), |m, p| m.min(*p));
    let hi = finite.fold(Vec3::splat(f32::MIN), |m, p| m.max(*p));
    // Half the time the points' own bounds (every point inside), else a
    // box half as wide (some points outside: a typed error).
    let (min, max) = if bits & 8 == 0 { (lo, hi) } else { (lo, lo + (hi - lo) * 0.5) };
    let Ok(domain) = PeriodicDomain::new(min, max, periodic) else { return };
    let mut expected = Vec::new();
    let oracle = brute_force_periodic_pairs(&domain, points, radius, &mut expected);
    let mut grid = PeriodicGrid::default();
    let found = grid.build(&domain, points, radius);
    agree("periodic grid", found, oracle, || {
        let mut pairs = Vec::new();
        grid.neighbor_pairs(&mut pairs);
        pairs.sort_unstable();
        assert_eq!(pairs, expected, "periodic grid differs from brute force, {domain:?}");
    });
}

/// The decoded scene, built once, against ray, point and sphere queries
/// made from its own boxes and the input's bytes: rays from box corners
/// and centers toward other boxes, with components zeroed, no direction at
/// all, and lengths of 0, 1, 0.5 and `+inf`; points at corners; spheres
/// around centers. Each answer must be brute force's (the same exact test
/// on every box), and a query that breaks its contract a typed error.
/// Invalid scenes are the grid check's business: skipped here.
pub(crate) fn check_rays(data: &[u8]) {
    use broadphase::query::{Ray, Sphere};
    let (config, boxes) = decode(data);
    let mut grid = AdaptiveGrid::with_config(config);
    if boxes.is_empty() || grid.build(&boxes).is_err() {
        return;
    }
    let pick = |k: usize| boxes[k % boxes.len()];
    let byte = |k: usize| data.get(k % data.len().max(1)).copied().unwrap_or(0);
    let (mut hits, mut ids) = (Vec::new(), Vec::new());
    for k in 0..12 {
        let (from_box, to_box, bits) = (pick(k * 7), pick(k * 13 + 5), byte(k));
        let origin = match bits % 3 {
            0 => from_box.min,
            1 => from_box.max,
            _ => from_box.min * 0.5 + from_box.max * 0.5,
        };
        let mut dir = match (bits >> 2) % 3 {
            0 => to_box.min - origin,
            1 => to_box.max - origin,
            _ => Vec3::ZERO,
        };
        for axis in 0..3 {
            if bits >> (4 + axis) & 1 == 1 {
                dir[axis] = 0.0;
            }
        }
        let max_t = [0.0, 1.0, 0.5, f32::INFINITY][usize::from(bits >> 7) + (k % 2) * 2];
        let ray = Ray::new(origin, dir, max_t);
        if ray.validate().is_err() {
            assert_eq!(
                grid.cast_ray(&ray).map_err(|e| e.to_string()),
                Err(ray.validate().unwrap_err().to_string())
            );
            continue;
        }
        let wanted = broadphase::oracle::brute_force_ray_hits(&boxes, &ray);
        assert_eq!(
            grid.cast_ray(&ray).expect("valid ray"),
            wanted.first().copied(),
            "{ray:?} with {config:?}"
        );
        grid.ray_hits(&ray, &mut hits).expect("valid ray");
        assert_eq!(hits, wanted, "all hits of {ray:?} with {config:?}");

        let point = to_box.max;
        grid.query_point(point, &mut ids).expect("a box corner is finite");
        ids.sort_unstable();
        let inside: Vec<u32> = (0..boxes.len() as u32)
            .filter(|&i| boxes[i as usize].overlaps(&Aabb::new(point, point)))
            .collect();
        assert_eq!(ids, inside, "point {point:?} with {config:?}");

        let sphere = Sphere::new(origin, f32::from(byte(k + 3)) / 16.0);
        if sphere.validate().is_ok() {
            grid.query_sphere(&sphere, &mut ids).expect("valid sphere");
            ids.sort_unstable();
            let met: Vec<u32> =
                (0..boxes.len() as u32).filter(|&i| sphere.overlaps(&boxes[i as usize])).collect();
            assert_eq!(ids, met, "{sphere:?} with {config:?}");
        }
    }
}
