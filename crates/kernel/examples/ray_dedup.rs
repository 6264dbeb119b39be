//! All-hits rays with each [`RayDedup`] strategy, for instruction counts:
//! the rays are cast in `pass`, which callgrind can count on its own.
//!
//! ```text
//! cargo build --release -p broadphase-kernel --example ray_dedup
//! valgrind --tool=callgrind --toggle-collect='ray_dedup::pass' \
//!     target/release/examples/ray_dedup mixed100k-short sort
//! ```
//!
//! Sets (10,000 rays each, from random points in random directions, drawn
//! as in `benches/queries.rs`, seed 1): `mixed100k-short` (`max_t` 40,
//! 0.3 hits a ray), `mixed100k-long` (no end, 4.6 hits), `dense20k-long`
//! (no end, through dense20k, 9.5 hits) and `big20k-long` (no end,
//! through 20,000 cubes of side 40 in a 1,000-unit cube, 21.5 hits).
//! Strategies: `sort`, `fast-unique`. `pass` runs over the first 100 rays
//! first (warm-up), then all of them; it prints the hits counted.

use broadphase_kernel::{Aabb, AdaptiveGrid, GridConfig, RayDedup};
use broadphase_scenes::{SplitMix64, dense20k, mixed100k};
use broadphase_storage::Ray;
use glam::Vec3;

fn random_point(rng: &mut SplitMix64, side: f32) -> Vec3 {
    Vec3::new(rng.range_f32(0.0, side), rng.range_f32(0.0, side), rng.range_f32(0.0, side))
}

fn random_dir(rng: &mut SplitMix64) -> Vec3 {
    loop {
        let d =
            Vec3::new(rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0), rng.range_f32(-1.0, 1.0));
        if d.length_squared() > 1e-4 && d.length_squared() <= 1.0 {
            return d.normalize();
        }
    }
}

/// 20,000 cubes of side 40 with centers uniform in `[0, 1000)³`: each
/// spans several cells, so a ray meets most boxes it hits more than once.
fn big_boxes() -> Vec<Aabb> {
    let mut rng = SplitMix64::new(7);
    (0..20_000)
        .map(|_| Aabb::from_center_half_extent(random_point(&mut rng, 1000.0), Vec3::splat(20.0)))
        .collect()
}

/// Every ray's hits; returns how many in all.
#[inline(never)]
fn pass(grid: &AdaptiveGrid, rays: &[Ray], hits: &mut Vec<(u32, f32)>) -> usize {
    rays.iter().fold(0, |n, ray| {
        grid.ray_hits(std::hint::black_box(ray), hits).expect("valid ray");
        n + hits.len()
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: ray_dedup mixed100k-short|mixed100k-long|dense20k-long|big20k-long sort|fast-unique";
    let (set, strategy) = match args.as_slice() {
        [_, set, strategy] => (set.as_str(), strategy.as_str()),
        _ => panic!("{usage}"),
    };
    let ray_dedup = match strategy {
        "sort" => RayDedup::Sort,
        "fast-unique" => RayDedup::FastUnique,
        _ => panic!("{usage}"),
    };
    let (boxes, side, max_t) = match set {
        "mixed100k-short" => (mixed100k().boxes, 2000.0, 40.0),
        "mixed100k-long" => (mixed100k().boxes, 2000.0, f32::INFINITY),
        "dense20k-long" => (dense20k().boxes, 150.0, f32::INFINITY),
        "big20k-long" => (big_boxes(), 1000.0, f32::INFINITY),
        _ => panic!("{usage}"),
    };
    let mut grid = AdaptiveGrid::with_config(GridConfig { ray_dedup, ..GridConfig::default() });
    grid.build(&boxes).expect("valid scene");
    let mut rng = SplitMix64::new(1);
    let rays: Vec<Ray> = (0..10_000)
        .map(|_| Ray::new(random_point(&mut rng, side), random_dir(&mut rng), max_t))
        .collect();
    let mut hits = Vec::new();
    let warm = pass(&grid, &rays[..100], &mut hits);
    println!(
        "{set} {strategy}: {} hits ({warm} in the first 100 rays)",
        pass(&grid, &rays, &mut hits)
    );
}
