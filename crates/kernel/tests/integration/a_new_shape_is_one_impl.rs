//! A shape of the caller's own is one `impl RegionTest`: a half-space cut
//! to a world box, which skips the cells below its plane, answers exactly
//! as brute force over its own test.

use super::rays_and_shapes_match_brute_force::scene;
use broadphase_kernel::{Aabb, AdaptiveGrid, RegionTest};
use broadphase_scenes::SplitMix64;
use glam::Vec3;

/// The points of `world` with `normal · p >= offset`.
struct HalfSpace {
    normal: Vec3,
    offset: f32,
    world: Aabb,
}

impl HalfSpace {
    /// The largest `normal · p` over a box, in `f64`.
    fn reach(&self, b: &Aabb) -> f64 {
        let furthest = Vec3::select(self.normal.cmpge(Vec3::ZERO), b.max, b.min);
        self.normal.as_dvec3().dot(furthest.as_dvec3())
    }
}

impl RegionTest for HalfSpace {
    fn bounds(&self) -> Aabb {
        self.world
    }
    fn may_meet(&self, cell: &Aabb) -> bool {
        self.reach(cell) >= f64::from(self.offset)
    }
    fn meets(&self, b: &Aabb) -> bool {
        // The part of the box inside the world must reach the plane: the
        // box shares a point with the region, as skipping cells needs.
        let inside = Aabb::new(b.min.max(self.world.min), b.max.min(self.world.max));
        b.overlaps(&self.world) && self.reach(&inside) >= f64::from(self.offset)
    }
}

#[test]
fn a_half_space_answers_as_brute_force() {
    let mut boxes = scene(31, 3_000, 100.0, 3.0);
    // Long boxes whose reference points lie below the plane.
    boxes.extend((0..50).map(|i| {
        let x = i as f32 * 2.0;
        Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 0.5, 100.0, 0.5))
    }));
    let mut grid = AdaptiveGrid::default();
    grid.build(&boxes).unwrap();
    let mut rng = SplitMix64::new(4);
    let mut hits = Vec::new();
    for _ in 0..100 {
        let normal =
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0));
        let region = HalfSpace {
            normal,
            offset: rng.range_f32(-100.0, 100.0),
            world: Aabb::new(Vec3::splat(-10.0), Vec3::splat(rng.range_f32(20.0, 110.0))),
        };
        grid.query_with(&region, &mut hits).unwrap();
        hits.sort_unstable();
        let expected: Vec<u32> =
            (0..boxes.len() as u32).filter(|&i| region.meets(&boxes[i as usize])).collect();
        assert_eq!(hits, expected, "{:?} {} {:?}", region.normal, region.offset, region.world);
    }
}
