//! Contacts between spheres whose radii span orders of magnitude.
//!
//! One grid has one cell size, set by the largest sphere: with radii from
//! 0.1 to 10, a sphere of radius 0.1 scans cells sized for 10, around a
//! thousand times the volume it needs. [`MultiLevelGrid`] sorts the
//! spheres into levels of radii within a factor [`LEVEL_RATIO`] of each
//! other, each level a [`CountingSortGrid`] sized for its own spheres.
//! Contacts within a level come from its grid; a contact between two
//! levels is found by the smaller sphere querying the larger level's grid
//! (its query radius never exceeds that level's spheres, so the query
//! stays within the level's stencil).

use crate::api::NeighborSearch;
use crate::counting_sort_grid::CountingSortGrid;
use crate::points::{PointError, validate_spheres};
use glam::Vec3;

/// The largest ratio between two radii of one level.
pub const LEVEL_RATIO: f32 = 4.0;

/// Levels at most: radii from `MAX_RADIUS / 2` down to the smallest
/// positive `f32` span about 200 factors of 2, so 100 factors of 4 (and
/// a level of zero radii) cover every valid input.
const MAX_LEVELS: usize = 102;

/// One level: its spheres, their caller indices, and their grid.
#[derive(Debug, Default)]
struct Level {
    ids: Vec<u32>,
    centers: Vec<Vec3>,
    radii: Vec<f32>,
    grid: CountingSortGrid,
}

/// Sphere contacts (`distance <= r_a + r_b`, the rule of
/// [`brute_force_sphere_contacts`](crate::brute_force_sphere_contacts)) for
/// radii of any spread, one grid per level of radii.
///
/// Keeps its levels, grids and buffers across builds: a warm build with
/// the same levels allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{MultiLevelGrid, brute_force_sphere_contacts};
/// use glam::Vec3;
/// // A boulder of radius 10 among pebbles of radius 0.1.
/// let centers = [Vec3::ZERO, Vec3::new(10.05, 0.0, 0.0), Vec3::new(10.3, 0.0, 0.0)];
/// let radii = [10.0, 0.1, 0.1];
/// let mut grid = MultiLevelGrid::default();
/// grid.build_spheres(&centers, &radii)?;
/// assert_eq!(grid.levels(), 2);
/// let mut contacts = Vec::new();
/// grid.contacts(&mut contacts);
/// // 10.05 <= 10 + 0.1 touches; 10.3 does not, nor do the pebbles (0.25 apart).
/// assert_eq!(contacts, [[0, 1]]);
/// let mut expected = Vec::new();
/// brute_force_sphere_contacts(&centers, &radii, &mut expected)?;
/// assert_eq!(contacts, expected);
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
#[derive(Debug, Default)]
pub struct MultiLevelGrid {
    /// Levels in use first, smallest radii first; the rest kept for reuse.
    levels: Vec<Level>,
    used: usize,
    /// Each sphere's level, in caller order (scratch of the build).
    level_of: Vec<u8>,
    /// A query's hits (scratch of `contacts`).
    hits: Vec<u32>,
}

impl MultiLevelGrid {
    /// Sorts the spheres into levels and builds each level's grid.
    ///
    /// # Errors
    /// As [`NeighborSearch::build_spheres`]: the first bad center or
    /// radius by index, or a length mismatch. The grid is then empty.
    pub fn build_spheres(&mut self, centers: &[Vec3], radii: &[f32]) -> Result<(), PointError> {
        self.used = 0;
        let (_, max_radius) = validate_spheres(centers, radii)?;
        if centers.len() > u32::MAX as usize {
            return Err(PointError::TooManyPoints { count: centers.len() });
        }
        // Level k holds radii in (top / 4^(k+1), top / 4^k], counted down
        // from the largest; the last level in use also holds the zeros.
        let smallest = radii.iter().fold(f32::INFINITY, |m, &r| if r > 0.0 { m.min(r) } else { m });
        let level = |r: f32| -> usize {
            if r <= 0.0 || max_radius <= 0.0 {
                return usize::MAX;
            }
            let mut k = 0;
            let mut floor = max_radius / LEVEL_RATIO;
            while r <= floor && k + 1 < MAX_LEVELS - 1 {
                k += 1;
                floor /= LEVEL_RATIO;
            }
            k
        };
        let deepest = if smallest.is_finite() { level(smallest) } else { 0 };
        self.level_of.clear();
        self.level_of.extend(radii.iter().map(|&r| level(r).min(deepest) as u8));
        // Only the levels that hold spheres, smallest radii first (level
        // numbers count from the largest).
        let mut dense = [u8::MAX; MAX_LEVELS];
        for &k in &self.level_of {
            dense[usize::from(k)] = 0;
        }
        let mut count = 0;
        for k in (0..=deepest).rev() {
            if dense[k] == 0 {
                dense[k] = count as u8;
                count += 1;
            }
        }
        let count = count.max(1);
        if self.levels.len() < count {
            self.levels.resize_with(count, Level::default);
        }
        for level in &mut self.levels[..count] {
            level.ids.clear();
            level.centers.clear();
            level.radii.clear();
        }
        for (index, ((&k, &center), &radius)) in
            self.level_of.iter().zip(centers).zip(radii).enumerate()
        {
            let level = &mut self.levels[usize::from(dense[usize::from(k)])];
            level.ids.push(index as u32);
            level.centers.push(center);
            level.radii.push(radius);
        }
        for level in &mut self.levels[..count] {
            let Level { centers, radii, grid, .. } = level;
            grid.build_spheres(centers, radii)?;
        }
        self.used = count;
        Ok(())
    }

    /// How many levels of radii the last build holds: 1 when every radius
    /// is within [`LEVEL_RATIO`] of the largest (or there is no sphere), 0
    /// after a refused build.
    pub fn levels(&self) -> usize {
        self.used
    }

    /// Every contact pair once into `out` (cleared first), `[a, b]` with
    /// `a < b`, caller indices, in unspecified order (the same for the
    /// same input).
    pub fn contacts(&mut self, out: &mut Vec<[u32; 2]>) {
        out.clear();
        let levels = &self.levels[..self.used];
        let mut push = |a: u32, b: u32| out.push(if a < b { [a, b] } else { [b, a] });
        for (at, level) in levels.iter().enumerate() {
            level
                .grid
                .for_each_neighbor_pair(|a, b| push(level.ids[a as usize], level.ids[b as usize]));
            // Each of this level's spheres against every level of larger
            // radii: its radius is at most theirs, as a query requires.
            for larger in &levels[at + 1..] {
                for ((&id, &center), &radius) in
                    level.ids.iter().zip(&level.centers).zip(&level.radii)
                {
                    larger
                        .grid
                        .query(center, radius, &mut self.hits)
                        .expect("a radius of a smaller level is within a larger level's radii");
                    for &hit in &self.hits {
                        push(id, larger.ids[hit as usize]);
                    }
                }
            }
        }
    }
}
