//! Shared by this crate's tests: every neighbor structure in every
//! configuration and scan kernel this machine runs, behind one enum, and
//! the full comparison of one build against the brute-force oracles.

#![allow(dead_code, unreachable_pub)]

use broadphase_neighbors::{
    CellHash, CheckedPoints, CountingSortGrid, CountingSortGridConfig, NeighborLists, NeighborRule,
    NeighborSearch, PointError, RowLookup, ScanKernel, SpatialHash, SpatialHashConfig,
    SpatialIndex, SpatialIndexConfig, brute_force_neighbor_pairs, brute_force_neighbor_rows,
    brute_force_neighbors_within, brute_force_sphere_contacts, brute_force_spheres_touching,
};
use glam::Vec3;
use std::ops::Range;

/// One structure, any of the three.
#[derive(Debug)]
pub enum Any {
    Grid(CountingSortGrid),
    Hash(SpatialHash),
    Index(SpatialIndex),
}

macro_rules! dispatch {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            Any::Grid($s) => $body,
            Any::Hash($s) => $body,
            Any::Index($s) => $body,
        }
    };
}

impl Any {
    pub fn build(&mut self, points: &[Vec3], radius: f32) -> Result<(), PointError> {
        dispatch!(self, s => s.build(points, radius))
    }
    pub fn build_checked(&mut self, points: &CheckedPoints, radius: f32) -> Result<(), PointError> {
        dispatch!(self, s => s.build_checked(points, radius))
    }
    pub fn build_spheres(&mut self, centers: &[Vec3], radii: &[f32]) -> Result<(), PointError> {
        dispatch!(self, s => s.build_spheres(centers, radii))
    }
    pub fn len(&self) -> usize {
        dispatch!(self, s => s.len())
    }
    pub fn rule(&self) -> NeighborRule {
        dispatch!(self, s => s.rule())
    }
    pub fn sorted_order(&self) -> Vec<u32> {
        dispatch!(self, s => s.sorted_order().to_vec())
    }
    pub fn query(&self, p: Vec3, r: f32, out: &mut Vec<u32>) -> Result<(), PointError> {
        dispatch!(self, s => s.query(p, r, out))
    }
    pub fn pairs(&self, out: &mut Vec<[u32; 2]>) {
        dispatch!(self, s => s.neighbor_pairs(out))
    }
    pub fn pairs_in(&self, slots: Range<usize>, out: &mut Vec<[u32; 2]>) {
        dispatch!(self, s => s.for_each_neighbor_pair_in(slots, |a, b| out.push([a, b])))
    }
    pub fn pair_batches_in(&self, slots: Range<usize>, out: &mut Vec<Vec<[u32; 2]>>) {
        dispatch!(self, s => s.for_each_neighbor_pair_batch_in(slots, |batch| out.push(batch.to_vec())))
    }
    pub fn lists(&self, out: &mut NeighborLists) {
        dispatch!(self, s => s.neighbor_lists(out))
    }
    pub fn sorted_lists(&self, slots: Range<usize>, out: &mut NeighborLists) {
        dispatch!(self, s => s.sorted_neighbor_lists(slots, out))
    }
}

/// Every structure and configuration, with every scan kernel this CPU runs
/// (the scalar twin included), named for failure messages.
pub fn all_structures() -> Vec<(String, Any)> {
    let mut all = Vec::new();
    for kernel in ScanKernel::available() {
        for cells_per_radius in [1, 2] {
            let grid = CountingSortGridConfig {
                cells_per_radius,
                kernel,
                ..CountingSortGridConfig::default()
            };
            all.push((format!("grid {grid:?}"), Any::Grid(CountingSortGrid::with_config(grid))));
        }
        for hash in [CellHash::Rows, CellHash::Fibonacci, CellHash::Teschner] {
            let config = SpatialHashConfig { hash, kernel, ..SpatialHashConfig::default() };
            all.push((format!("hash {config:?}"), Any::Hash(SpatialHash::with_config(config))));
        }
        let tiny = SpatialHashConfig {
            buckets_per_point: 1, // half the default table: more cells share a bucket
            cells_per_radius: 2,
            kernel,
            ..SpatialHashConfig::default()
        };
        all.push((format!("hash {tiny:?}"), Any::Hash(SpatialHash::with_config(tiny))));
        for lookup in [RowLookup::BinarySearch, RowLookup::HashMap] {
            for cells_per_radius in [1, 3] {
                let config = SpatialIndexConfig { lookup, cells_per_radius, kernel };
                all.push((
                    format!("index {config:?}"),
                    Any::Index(SpatialIndex::with_config(config)),
                ));
            }
        }
    }
    all
}

/// Fewer structures (default configurations, each kernel) for the big scenes.
pub fn default_structures() -> Vec<(String, Any)> {
    let mut all = Vec::new();
    for kernel in ScanKernel::available() {
        all.push((
            format!("grid {kernel:?}"),
            Any::Grid(CountingSortGrid::with_config(CountingSortGridConfig {
                kernel,
                ..CountingSortGridConfig::default()
            })),
        ));
        all.push((
            format!("hash {kernel:?}"),
            Any::Hash(SpatialHash::with_config(SpatialHashConfig {
                kernel,
                ..SpatialHashConfig::default()
            })),
        ));
        all.push((
            format!("index {kernel:?}"),
            Any::Index(SpatialIndex::with_config(SpatialIndexConfig {
                kernel,
                ..SpatialIndexConfig::default()
            })),
        ));
    }
    all
}

fn sorted_pairs(mut pairs: Vec<[u32; 2]>) -> Vec<[u32; 2]> {
    pairs.sort_unstable();
    pairs
}

/// Checks pairs, slot-range pairs, caller and sorted neighbor lists of a
/// built structure against `expected` (the oracle's pairs, sorted).
pub fn check_built(name: &str, s: &Any, count: usize, expected: &[[u32; 2]]) {
    assert_eq!(s.len(), count, "{name}: len");
    let mut pairs = Vec::new();
    s.pairs(&mut pairs);
    assert!(pairs.iter().all(|&[a, b]| a < b), "{name}: pairs not ordered a < b");
    let pairs = sorted_pairs(pairs);
    assert_eq!(pairs.len(), expected.len(), "{name}: pair count");
    assert!(pairs == expected, "{name}: pairs differ from brute force");

    // The slot-range split: three uneven ranges give every pair once.
    let mut split = Vec::new();
    let cuts = [0, count / 3, count / 3 + count / 5 + 1, count + 7];
    for w in cuts.windows(2) {
        s.pairs_in(w[0].min(count)..w[1], &mut split);
    }
    assert!(sorted_pairs(split) == expected, "{name}: slot-range pairs differ");

    // Batches: the per-pair walk's pairs, in its order, no batch empty.
    for w in cuts.windows(2) {
        let slots = w[0].min(count)..w[1];
        let (mut each, mut batches) = (Vec::new(), Vec::new());
        s.pairs_in(slots.clone(), &mut each);
        s.pair_batches_in(slots, &mut batches);
        assert!(batches.iter().all(|batch| !batch.is_empty()), "{name}: an empty batch");
        assert!(batches.concat() == each, "{name}: batches differ from the pairs one by one");
    }

    // Caller-order lists.
    let rows = brute_force_neighbor_rows(count, expected);
    let mut lists = NeighborLists::default();
    s.lists(&mut lists);
    assert_eq!(lists.len(), count, "{name}: rows");
    assert_eq!(lists.total(), 2 * expected.len(), "{name}: entries");
    for (i, row) in lists.rows().enumerate() {
        let mut row = row.to_vec();
        row.sort_unstable();
        assert_eq!(row, rows[i], "{name}: row {i}");
    }

    // Sorted-order lists, in two pieces, mapped back through the order.
    let order = s.sorted_order();
    let mut seen = order.clone();
    seen.sort_unstable();
    assert!(seen.iter().copied().eq(0..count as u32), "{name}: order is not a permutation");
    let half = count / 2;
    for range in [0..half, half..count] {
        s.sorted_lists(range.clone(), &mut lists);
        assert_eq!(lists.len(), range.len(), "{name}: sorted rows");
        for (i, row) in lists.rows().enumerate() {
            let caller = order[range.start + i] as usize;
            let mut row: Vec<u32> = row.iter().map(|&slot| order[slot as usize]).collect();
            row.sort_unstable();
            assert_eq!(row, rows[caller], "{name}: sorted row of slot {}", range.start + i);
        }
    }
}

/// Builds every structure on `points` with `radius` and checks everything
/// against brute force, plus queries around `probes` at each radius of
/// `query_radii` (those above `radius` must be refused).
pub fn check_points(points: &[Vec3], radius: f32, probes: &[Vec3], query_radii: &[f32]) {
    let mut expected = Vec::new();
    brute_force_neighbor_pairs(points, radius, &mut expected).expect("valid points");
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for (name, mut s) in all_structures() {
        s.build(points, radius).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s.rule(), NeighborRule::Within { radius });
        check_built(&name, &s, points.len(), &expected);
        for &p in probes {
            for &r in query_radii {
                let result = s.query(p, r, &mut got);
                if r > radius {
                    assert!(
                        matches!(result, Err(PointError::QueryRadiusTooLarge { .. })),
                        "{name}: query radius {r} > {radius} accepted"
                    );
                    continue;
                }
                result.unwrap_or_else(|e| panic!("{name}: query {p} {r}: {e}"));
                brute_force_neighbors_within(points, p, r, &mut want).unwrap();
                got.sort_unstable();
                assert_eq!(got, want, "{name}: query at {p} radius {r}");
            }
        }
    }
}

/// Builds every structure on spheres and checks contacts, lists and queries.
pub fn check_spheres(centers: &[Vec3], radii: &[f32], probes: &[Vec3]) {
    let mut expected = Vec::new();
    brute_force_sphere_contacts(centers, radii, &mut expected).expect("valid spheres");
    let max_radius = radii.iter().fold(0.0f32, |m, &r| m.max(r));
    let (mut got, mut want) = (Vec::new(), Vec::new());
    for (name, mut s) in all_structures() {
        s.build_spheres(centers, radii).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s.rule(), NeighborRule::Contact { max_radius });
        check_built(&name, &s, centers.len(), &expected);
        for &p in probes {
            for r in [0.0, max_radius * 0.5, max_radius] {
                s.query(p, r, &mut got).unwrap_or_else(|e| panic!("{name}: {e}"));
                brute_force_spheres_touching(centers, radii, p, r, &mut want).unwrap();
                got.sort_unstable();
                assert_eq!(got, want, "{name}: sphere query at {p} radius {r}");
            }
        }
    }
}

/// A small deterministic generator (xorshift*), so tests need no crate.
#[derive(Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.unit()
    }
    pub fn point(&mut self, lo: f32, hi: f32) -> Vec3 {
        Vec3::new(self.range(lo, hi), self.range(lo, hi), self.range(lo, hi))
    }
}
