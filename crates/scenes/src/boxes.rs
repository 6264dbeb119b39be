//! Box scenes: the named sets of [`Aabb`]s of the design's "Scenes" section.
//!
//! Every generator draws from its own fixed [`SplitMix64`] seed, centers one
//! axis at a time (x, then y, then z), in slice order; changing a seed or that
//! order changes a scene, which the pinned fingerprints in the tests catch.

use broadphase_storage::Aabb;
use glam::Vec3;

use crate::SplitMix64;

/// A named set of boxes.
///
/// # Examples
///
/// ```
/// let scene = broadphase_scenes::pile();
/// assert_eq!(scene.name, "pile");
/// assert_eq!(scene.boxes.len(), 2_000);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    /// Short stable name, used in test messages and bench ids (`"sparse20k"`).
    pub name: &'static str,
    /// The boxes; indices into this slice are the ids a broad phase reports.
    pub boxes: Vec<Aabb>,
}

/// Side of the cube that sparse20k's 20,001 random centers fill.
const SPARSE_SIDE: f32 = 900.0;
/// How many random centers sparse20k has; its density is the reference.
const SPARSE_COUNT: usize = 20_001;

const SPARSE20K_SEED: u64 = 0x5EED_0000_0000_0001;
const DENSE20K_SEED: u64 = 0x5EED_0000_0000_0002;
const STRETCHED40K_SEED: u64 = 0x5EED_0000_0000_0003;
const CLUSTERS16_40K_SEED: u64 = 0x5EED_0000_0000_0004;
const UNIFORM1M_SEED: u64 = 0x5EED_0000_0000_0005;
const MIXED100K_SEED: u64 = 0x5EED_0000_0000_0006;
const QUERY10K_SEED: u64 = 0x5EED_0000_0000_0007;

/// The box of one object of the design's convention: it spans
/// `[c - 2.5, c + 1.5]` on each axis (width 4, off-centre, as the box of a
/// point cloud whose origin is not its centre).
///
/// # Examples
///
/// ```
/// use broadphase_scenes::object_box;
/// use glam::Vec3;
///
/// let b = object_box(Vec3::splat(10.0));
/// assert_eq!(b.min, Vec3::splat(7.5));
/// assert_eq!(b.max, Vec3::splat(11.5));
/// ```
pub fn object_box(center: Vec3) -> Aabb {
    Aabb::new(center - Vec3::splat(2.5), center + Vec3::splat(1.5))
}

/// A center uniform in the box `[lo, hi)`, drawn x, then y, then z.
fn uniform_point(rng: &mut SplitMix64, lo: Vec3, hi: Vec3) -> Vec3 {
    let x = rng.range_f32(lo.x, hi.x);
    let y = rng.range_f32(lo.y, hi.y);
    let z = rng.range_f32(lo.z, hi.z);
    Vec3::new(x, y, z)
}

/// Appends `count` objects with centers uniform in `[lo, hi)`.
fn push_uniform_objects(
    out: &mut Vec<Aabb>,
    rng: &mut SplitMix64,
    count: usize,
    lo: Vec3,
    hi: Vec3,
) {
    out.extend((0..count).map(|_| object_box(uniform_point(rng, lo, hi))));
}

/// Appends the three "teapots": objects centred at (9000, 9000, 9000),
/// (9001, 9001, 9001) and (9002, 9002, 9002), far from everything else and
/// overlapping each other (3 pairs).
fn push_teapots(out: &mut Vec<Aabb>) {
    out.extend((0..3u8).map(|i| object_box(Vec3::splat(9000.0 + f32::from(i)))));
}

/// Side of a cube holding `count` centers at sparse20k's density.
fn sparse_density_side(count: usize) -> f32 {
    (f64::from(SPARSE_SIDE) * (count as f64 / SPARSE_COUNT as f64).cbrt()) as f32
}

/// A random scene at a given center density: `count` objects in
/// `[0, side)³`, then the teapots.
fn cube_with_teapots(name: &'static str, seed: u64, count: usize, side: f32) -> Scene {
    let mut rng = SplitMix64::new(seed);
    let mut boxes = Vec::with_capacity(count + 3);
    push_uniform_objects(&mut boxes, &mut rng, count, Vec3::ZERO, Vec3::splat(side));
    push_teapots(&mut boxes);
    Scene { name, boxes }
}

/// sparse20k: 20,001 objects with centers uniform in `[0, 900)³`, then the 3
/// teapots (20,004 boxes). The classic sparse 20k benchmark; few pairs.
///
/// # Examples
///
/// ```
/// assert_eq!(broadphase_scenes::sparse20k().boxes.len(), 20_004);
/// ```
pub fn sparse20k() -> Scene {
    cube_with_teapots("sparse20k", SPARSE20K_SEED, SPARSE_COUNT, SPARSE_SIDE)
}

/// dense20k: as [`sparse20k`] with centers in `[0, 150)³` (20,004 boxes,
/// tens of thousands of pairs).
///
/// # Examples
///
/// ```
/// assert_eq!(broadphase_scenes::dense20k().boxes.len(), 20_004);
/// ```
pub fn dense20k() -> Scene {
    cube_with_teapots("dense20k", DENSE20K_SEED, SPARSE_COUNT, 150.0)
}

/// stretched40k: 40,001 objects with centers uniform in
/// `[0, 1500) × [0, 150) × [0, 150)`, then the 3 teapots (40,004 boxes).
/// Long along x: a grid with cubic cells wastes most of them.
///
/// # Examples
///
/// ```
/// assert_eq!(broadphase_scenes::stretched40k().boxes.len(), 40_004);
/// ```
pub fn stretched40k() -> Scene {
    let mut rng = SplitMix64::new(STRETCHED40K_SEED);
    let mut boxes = Vec::with_capacity(40_004);
    let hi = Vec3::new(1500.0, 150.0, 150.0);
    push_uniform_objects(&mut boxes, &mut rng, 40_001, Vec3::ZERO, hi);
    push_teapots(&mut boxes);
    Scene { name: "stretched40k", boxes }
}

/// clusters16_40k: 16 clusters of 2,500 objects, then the 3 teapots (40,003
/// boxes). Cluster `j` (0..16, in order) has centers uniform in
/// `offset_j + [0, 150)³` with
/// `offset_j = ((j % 2)·5000, ((j / 2) % 2)·5000, (j / 4)·2500)`: dense
/// islands in mostly empty space.
///
/// # Examples
///
/// ```
/// assert_eq!(broadphase_scenes::clusters16_40k().boxes.len(), 40_003);
/// ```
pub fn clusters16_40k() -> Scene {
    let mut rng = SplitMix64::new(CLUSTERS16_40K_SEED);
    let mut boxes = Vec::with_capacity(40_003);
    for j in 0..16u16 {
        let offset = Vec3::new(
            f32::from(j % 2) * 5000.0,
            f32::from((j / 2) % 2) * 5000.0,
            f32::from(j / 4) * 2500.0,
        );
        push_uniform_objects(&mut boxes, &mut rng, 2_500, offset, offset + Vec3::splat(150.0));
    }
    push_teapots(&mut boxes);
    Scene { name: "clusters16_40k", boxes }
}

/// `count` objects with centers uniform in `[0, side)³`, where the cube is
/// sized for sparse20k's density: `side = 900 · (count / 20,001)^(1/3)`. No
/// teapots. The scene is named `"uniform"`.
///
/// # Examples
///
/// ```
/// let scene = broadphase_scenes::uniform(1_000, 7);
/// assert_eq!(scene.boxes.len(), 1_000);
/// assert!(scene.boxes.iter().all(|b| b.max.x < 900.0));
/// ```
pub fn uniform(count: usize, seed: u64) -> Scene {
    let side = sparse_density_side(count);
    let mut rng = SplitMix64::new(seed);
    let mut boxes = Vec::with_capacity(count);
    push_uniform_objects(&mut boxes, &mut rng, count, Vec3::ZERO, Vec3::splat(side));
    Scene { name: "uniform", boxes }
}

/// uniform1m: 1,000,000 objects at sparse20k's density (centers uniform in a
/// cube of side `900 · (1,000,000 / 20,001)^(1/3) ≈ 3316`), no teapots. The
/// memory-bound scale test; named `"uniform1m"`.
///
/// # Examples
///
/// ```
/// assert_eq!(broadphase_scenes::uniform1m().boxes.len(), 1_000_000);
/// ```
pub fn uniform1m() -> Scene {
    Scene { name: "uniform1m", ..uniform(1_000_000, UNIFORM1M_SEED) }
}

/// mixed100k: 100,000 cubes of mixed sizes. Each box draws its center
/// uniform in `[0, 2000)³`, then one width `w` log-uniform in `[0.5, 50)`
/// (`w = 0.5 · 100^u`, `u` uniform in `[0, 1)`), and spans `center ± w / 2`
/// on every axis. Widths measured as `max - min` carry the `f32` rounding of
/// the corners (below 2.5·10⁻⁴ at these coordinates).
///
/// # Examples
///
/// ```
/// let scene = broadphase_scenes::mixed100k();
/// assert_eq!(scene.boxes.len(), 100_000);
/// ```
pub fn mixed100k() -> Scene {
    let mut rng = SplitMix64::new(MIXED100K_SEED);
    let ln_100 = 100.0_f64.ln();
    let boxes = (0..100_000)
        .map(|_| {
            let center = uniform_point(&mut rng, Vec3::ZERO, Vec3::splat(2000.0));
            let u = f64::from(rng.next_f32());
            let width = (0.5 * (u * ln_100).exp()) as f32;
            Aabb::from_center_half_extent(center, Vec3::splat(width * 0.5))
        })
        .collect();
    Scene { name: "mixed100k", boxes }
}

/// pile: 2,000 identical objects centred at the origin; every pair overlaps
/// (1,999,000 pairs). Breaks anything with a fixed leaf or partner capacity.
///
/// # Examples
///
/// ```
/// let scene = broadphase_scenes::pile();
/// assert!(scene.boxes.iter().all(|b| *b == scene.boxes[0]));
/// ```
pub fn pile() -> Scene {
    Scene { name: "pile", boxes: vec![object_box(Vec3::ZERO); 2_000] }
}

/// Unit cubes touching face to face, `n` a side, from the origin: every
/// cube meets its neighbours on whole faces (inclusive overlap), and a ray
/// along a row of cells crosses `n` of them.
///
/// # Examples
///
/// ```
/// let cubes = broadphase_scenes::touching_cubes(3);
/// assert_eq!(cubes.len(), 27);
/// // Neighbours along z share a face.
/// assert_eq!(cubes[1].min, glam::Vec3::new(0.0, 0.0, 1.0));
/// assert_eq!(cubes[0].max.z, cubes[1].min.z);
/// ```
pub fn touching_cubes(n: usize) -> Vec<Aabb> {
    let mut boxes = Vec::with_capacity(n * n * n);
    for x in 0..n {
        for y in 0..n {
            for z in 0..n {
                let min = Vec3::new(x as f32, y as f32, z as f32);
                boxes.push(Aabb::new(min, min + Vec3::ONE));
            }
        }
    }
    boxes
}

/// 4,096 small cubes on a lattice with gaps, and at index `at` one box
/// over them all: with small leaves it lies in every leaf of the grid.
///
/// # Examples
///
/// ```
/// let boxes = broadphase_scenes::cubes_under_one_box(7);
/// assert_eq!(boxes.len(), 4_097);
/// assert!(boxes.iter().all(|b| boxes[7].min.cmple(b.min).all() && b.max.cmple(boxes[7].max).all()));
/// ```
pub fn cubes_under_one_box(at: usize) -> Vec<Aabb> {
    let mut boxes: Vec<Aabb> = touching_cubes(16)
        .into_iter()
        .map(|b| Aabb::new(b.min * 4.0, b.min * 4.0 + Vec3::splat(1.5)))
        .collect();
    boxes.insert(at, Aabb::new(Vec3::splat(-1.0), Vec3::splat(70.0)));
    boxes
}

/// cluster88k: 88,000 objects, one in 11 spread over `[0, 20,000)³` and
/// the rest packed into `[0, 1,500)³`. A grid placed over the whole world
/// leaves the cluster in one cell of some 80,000 boxes, the case the grid
/// tree splits in parallel passes instead of inside one job.
///
/// # Examples
///
/// ```
/// let scene = broadphase_scenes::cluster88k();
/// assert_eq!(scene.boxes.len(), 88_000);
/// ```
pub fn cluster88k() -> Scene {
    let mut rng = SplitMix64::new(41);
    let boxes = (0..88_000)
        .map(|i| {
            let side = if i % 11 == 0 { 20_000.0 } else { 1_500.0 };
            let c = Vec3::new(
                rng.range_f32(0.0, side),
                rng.range_f32(0.0, side),
                rng.range_f32(0.0, side),
            );
            object_box(c)
        })
        .collect();
    Scene { name: "cluster88k", boxes }
}

/// Number of random static boxes in query10k (the teapots come on top).
const QUERY_COUNT: usize = 10_000;

/// query10k: the static set for query benches, 10,000 objects with centers
/// uniform in `[0, side)³` at sparse20k's density
/// (`side = 900 · (10,000 / 20,001)^(1/3) ≈ 714`), then the 3 teapots
/// (10,003 boxes). Each box is then queried alone, or use [`query_boxes`].
///
/// # Examples
///
/// ```
/// assert_eq!(broadphase_scenes::query10k().boxes.len(), 10_003);
/// ```
pub fn query10k() -> Scene {
    cube_with_teapots("query10k", QUERY10K_SEED, QUERY_COUNT, sparse_density_side(QUERY_COUNT))
}

/// `count` query boxes from the distribution of query10k's random part
/// (objects centred uniformly in the same cube), drawn from `seed`.
///
/// # Examples
///
/// ```
/// let queries = broadphase_scenes::query_boxes(100, 1);
/// assert_eq!(queries.len(), 100);
/// assert_eq!(queries, broadphase_scenes::query_boxes(100, 1));
/// ```
pub fn query_boxes(count: usize, seed: u64) -> Vec<Aabb> {
    let side = Vec3::splat(sparse_density_side(QUERY_COUNT));
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::with_capacity(count);
    push_uniform_objects(&mut out, &mut rng, count, Vec3::ZERO, side);
    out
}

/// Every box scene of at most 100,000 boxes, in this order: sparse20k,
/// dense20k, stretched40k, clusters16_40k, mixed100k, pile, query10k. What
/// oracle tests loop over; [`uniform1m`] is left out for time.
///
/// # Examples
///
/// ```
/// let names: Vec<_> =
///     broadphase_scenes::all_box_scenes_up_to_100k().iter().map(|s| s.name).collect();
/// assert_eq!(names[0], "sparse20k");
/// assert_eq!(names.len(), 7);
/// ```
pub fn all_box_scenes_up_to_100k() -> Vec<Scene> {
    vec![sparse20k(), dense20k(), stretched40k(), clusters16_40k(), mixed100k(), pile(), query10k()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use broadphase_storage::validate_boxes;

    /// FNV-1a over the bit patterns of every coordinate.
    fn fingerprint(boxes: &[Aabb]) -> u64 {
        let mut h = 0xCBF2_9CE4_8422_2325_u64;
        for b in boxes {
            for v in b.min.to_array().into_iter().chain(b.max.to_array()) {
                for byte in v.to_bits().to_le_bytes() {
                    h = (h ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01B3);
                }
            }
        }
        h
    }

    fn teapots_at_end(boxes: &[Aabb]) {
        let tail = &boxes[boxes.len() - 3..];
        for (i, b) in tail.iter().enumerate() {
            assert_eq!(*b, object_box(Vec3::splat(9000.0 + i as f32)));
        }
    }

    #[test]
    fn generators_are_deterministic() {
        for (a, b) in all_box_scenes_up_to_100k().into_iter().zip(all_box_scenes_up_to_100k()) {
            assert_eq!(a, b, "{}", a.name);
        }
        assert_eq!(uniform(5_000, 9), uniform(5_000, 9));
        assert_ne!(uniform(5_000, 9), uniform(5_000, 10));
        assert_eq!(query_boxes(500, 3), query_boxes(500, 3));
    }

    #[test]
    fn counts_and_names() {
        let expected = [
            ("sparse20k", 20_004),
            ("dense20k", 20_004),
            ("stretched40k", 40_004),
            ("clusters16_40k", 40_003),
            ("mixed100k", 100_000),
            ("pile", 2_000),
            ("query10k", 10_003),
        ];
        let scenes = all_box_scenes_up_to_100k();
        assert_eq!(scenes.len(), expected.len());
        for (scene, (name, count)) in scenes.iter().zip(expected) {
            assert_eq!(scene.name, name);
            assert_eq!(scene.boxes.len(), count, "{name}");
        }
        assert_eq!(uniform(123, 1).boxes.len(), 123);
        assert_eq!(query_boxes(77, 1).len(), 77);
    }

    #[test]
    fn every_box_is_valid() {
        for scene in all_box_scenes_up_to_100k() {
            assert_eq!(validate_boxes(&scene.boxes), Ok(()), "{}", scene.name);
        }
        assert_eq!(validate_boxes(&query_boxes(1_000, 2)), Ok(()));
    }

    #[test]
    fn uniform1m_is_valid_and_at_sparse_density() {
        let scene = uniform1m();
        assert_eq!(scene.name, "uniform1m");
        assert_eq!(scene.boxes.len(), 1_000_000);
        assert_eq!(validate_boxes(&scene.boxes), Ok(()));
        let side = sparse_density_side(1_000_000);
        assert!((side - 3315.6).abs() < 0.1, "side {side}");
        let max_center =
            scene.boxes.iter().map(|b| (b.min + 2.5).max_element()).fold(0.0, f32::max);
        assert!(max_center < side && max_center > side - 1.0);
    }

    #[test]
    fn teapots_are_last() {
        for scene in [sparse20k(), dense20k(), stretched40k(), clusters16_40k(), query10k()] {
            teapots_at_end(&scene.boxes);
        }
    }

    #[test]
    fn centers_lie_in_their_regions() {
        let center = |b: &Aabb| b.min + 2.5;
        let check = |boxes: &[Aabb], hi: Vec3| {
            for b in boxes {
                let c = center(b);
                assert!(c.cmpge(Vec3::ZERO).all() && c.cmplt(hi).all(), "{c}");
            }
        };
        check(&sparse20k().boxes[..20_001], Vec3::splat(900.0));
        check(&dense20k().boxes[..20_001], Vec3::splat(150.0));
        check(&stretched40k().boxes[..40_001], Vec3::new(1500.0, 150.0, 150.0));
        check(&query10k().boxes[..10_000], Vec3::splat(sparse_density_side(10_000)));
        check(&query_boxes(1_000, 4), Vec3::splat(sparse_density_side(10_000)));
        let clusters = clusters16_40k();
        for (j, cluster) in clusters.boxes[..40_000].chunks(2_500).enumerate() {
            let offset = Vec3::new(
                (j % 2) as f32 * 5000.0,
                ((j / 2) % 2) as f32 * 5000.0,
                (j / 4) as f32 * 2500.0,
            );
            for b in cluster {
                let c = center(b) - offset;
                assert!(c.cmpge(Vec3::splat(-1e-3)).all() && c.cmplt(Vec3::splat(150.0)).all());
            }
        }
    }

    #[test]
    fn object_boxes_have_width_four() {
        for scene in [sparse20k(), dense20k(), stretched40k(), clusters16_40k(), pile(), query10k()]
        {
            for b in &scene.boxes {
                let w = b.max - b.min;
                assert!((w - 4.0).abs().max_element() < 1e-3, "{}: {w}", scene.name);
            }
        }
    }

    #[test]
    fn mixed_widths_are_cubes_in_range() {
        // Up to the f32 rounding of corners near 2000 (ulp 1.2e-4, two corners).
        const SLACK: f32 = 2.5e-4;
        let scene = mixed100k();
        let (mut narrow, mut wide) = (0, 0);
        for b in &scene.boxes {
            let w = b.max - b.min;
            assert!(w.min_element() >= 0.5 - SLACK && w.max_element() <= 50.0 + SLACK, "{w}");
            assert!(w.max_element() - w.min_element() <= 2.0 * SLACK, "not a cube: {w}");
            narrow += usize::from(w.x < 5.0);
            wide += usize::from(w.x >= 5.0);
        }
        // Log-uniform: [0.5, 5) and [5, 50) are each one decade, half the boxes.
        assert!((narrow as f64 / 100_000.0 - 0.5).abs() < 0.01, "{narrow} narrow, {wide} wide");
    }

    #[test]
    fn pile_is_one_box() {
        let scene = pile();
        assert_eq!(scene.boxes.len(), 2_000);
        assert!(scene.boxes.iter().all(|b| *b == object_box(Vec3::ZERO)));
    }

    /// Pinned fingerprints: a scene's boxes must not change between crate
    /// versions (bench history and recorded pair counts depend on them). If
    /// one of these fails, a generator changed: that is a breaking change.
    #[test]
    fn scenes_are_pinned() {
        let got: Vec<(&str, u64)> =
            all_box_scenes_up_to_100k().iter().map(|s| (s.name, fingerprint(&s.boxes))).collect();
        let expected: [(&str, u64); 7] = [
            ("sparse20k", 14193112185948660642),
            ("dense20k", 18143457313336014828),
            ("stretched40k", 270543208994936438),
            ("clusters16_40k", 12821688470441695951),
            ("mixed100k", 4657111147376280397),
            ("pile", 3029343816604429861),
            ("query10k", 9974033134698425603),
        ];
        assert_eq!(got, expected);
        assert_eq!(fingerprint(&query_boxes(1_000, 1)), 9255463778695897725);
    }
}
