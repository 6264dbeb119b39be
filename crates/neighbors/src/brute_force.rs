//! The neighbor oracles: every pair tested, obviously correct, O(n²).
//!
//! They compute distances exactly as the structures' scan kernel does
//! (`dx·dx + dy·dy + dz·dz` left to right in `f32`, `dx = x_j - x_i`, no fused
//! multiply-add) and compare inclusively, so a structure that is right
//! agrees with them bit for bit, even for particles exactly at the radius.

use super::points::{PointError, check_point, check_radius, validate_points, validate_spheres};
use glam::Vec3;

/// Squared distance in the order every neighbor structure uses.
#[inline(always)]
pub(crate) fn distance2(from: Vec3, to: Vec3) -> f32 {
    let (dx, dy, dz) = (to.x - from.x, to.y - from.y, to.z - from.z);
    dx * dx + dy * dy + dz * dz
}

/// Every pair of `points` at most `radius` apart, by testing all of them:
/// the oracle for [`NeighborSearch`](crate::NeighborSearch) built from points.
///
/// Validates like a build (on error `out` is untouched), then replaces `out`
/// with each pair once as `[a, b]`, `a < b`, in increasing order.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::brute_force_neighbor_pairs;
/// use glam::Vec3;
/// let points = [Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0), Vec3::new(1.0, 0.0, 0.0)];
/// let mut pairs = Vec::new();
/// brute_force_neighbor_pairs(&points, 1.0, &mut pairs)?; // exactly 1 apart counts
/// assert_eq!(pairs, [[0, 2], [1, 2]]);
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
pub fn brute_force_neighbor_pairs(
    points: &[Vec3],
    radius: f32,
    out: &mut Vec<[u32; 2]>,
) -> Result<(), PointError> {
    check_radius(radius)?;
    validate_points(points)?;
    out.clear();
    let r2 = radius * radius;
    for (a, &pa) in points.iter().enumerate() {
        for (b, &pb) in points.iter().enumerate().skip(a + 1) {
            if distance2(pa, pb) <= r2 {
                // validate_points bounds the count by u32::MAX.
                out.push([a as u32, b as u32]);
            }
        }
    }
    Ok(())
}

/// The points at most `radius` from `point`, by testing every one: the
/// oracle for [`NeighborSearch::query`](crate::NeighborSearch::query) on
/// points. Replaces `out` with their indices in increasing order (a point
/// of the set equal to `point` is included).
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::brute_force_neighbors_within;
/// use glam::Vec3;
/// let points = [Vec3::ZERO, Vec3::new(3.0, 0.0, 0.0), Vec3::new(0.0, -1.0, 0.0)];
/// let mut hits = Vec::new();
/// brute_force_neighbors_within(&points, Vec3::ZERO, 1.0, &mut hits)?;
/// assert_eq!(hits, [0, 2]);
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
pub fn brute_force_neighbors_within(
    points: &[Vec3],
    point: Vec3,
    radius: f32,
    out: &mut Vec<u32>,
) -> Result<(), PointError> {
    validate_points(points)?;
    check_point(point)?;
    check_radius(radius)?;
    out.clear();
    let r2 = radius * radius;
    out.extend(
        points
            .iter()
            .enumerate()
            .filter(|&(_, &p)| distance2(point, p) <= r2)
            .map(|(i, _)| i as u32),
    );
    Ok(())
}

/// Every pair of spheres in contact (`distance <= r_a + r_b`), by testing
/// all of them: the oracle for
/// [`NeighborSearch::build_spheres`](crate::NeighborSearch::build_spheres).
/// Replaces `out` with each pair once as `[a, b]`, `a < b`, in increasing order.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::brute_force_sphere_contacts;
/// use glam::Vec3;
/// let centers = [Vec3::ZERO, Vec3::new(3.0, 0.0, 0.0), Vec3::new(0.0, 5.0, 0.0)];
/// let mut contacts = Vec::new();
/// brute_force_sphere_contacts(&centers, &[1.0, 2.0, 1.0], &mut contacts)?;
/// assert_eq!(contacts, [[0, 1]]); // touching counts
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
pub fn brute_force_sphere_contacts(
    centers: &[Vec3],
    radii: &[f32],
    out: &mut Vec<[u32; 2]>,
) -> Result<(), PointError> {
    validate_spheres(centers, radii)?;
    out.clear();
    for (a, (&ca, &ra)) in centers.iter().zip(radii).enumerate() {
        for (b, (&cb, &rb)) in centers.iter().zip(radii).enumerate().skip(a + 1) {
            let t = ra + rb;
            if distance2(ca, cb) <= t * t {
                out.push([a as u32, b as u32]);
            }
        }
    }
    Ok(())
}

/// The spheres touching the ball of `radius` around `point`
/// (`distance <= radius + r_i`), by testing every one: the oracle for
/// [`NeighborSearch::query`](crate::NeighborSearch::query) on spheres.
/// Replaces `out` with their indices in increasing order.
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::brute_force_spheres_touching;
/// use glam::Vec3;
/// let centers = [Vec3::ZERO, Vec3::new(4.0, 0.0, 0.0)];
/// let mut hits = Vec::new();
/// brute_force_spheres_touching(&centers, &[1.0, 1.0], Vec3::new(2.0, 0.0, 0.0), 1.0, &mut hits)?;
/// assert_eq!(hits, [0, 1]);
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
pub fn brute_force_spheres_touching(
    centers: &[Vec3],
    radii: &[f32],
    point: Vec3,
    radius: f32,
    out: &mut Vec<u32>,
) -> Result<(), PointError> {
    validate_spheres(centers, radii)?;
    check_point(point)?;
    check_radius(radius)?;
    out.clear();
    for (i, (&c, &r)) in centers.iter().zip(radii).enumerate() {
        let t = radius + r;
        if distance2(point, c) <= t * t {
            out.push(i as u32);
        }
    }
    Ok(())
}

/// Every particle's neighbors as sorted rows (`rows[i]` increasing, never
/// `i`), from [`brute_force_neighbor_pairs`]' pairs: the oracle for
/// [`NeighborSearch::neighbor_lists`](crate::NeighborSearch::neighbor_lists).
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::brute_force_neighbor_rows;
/// let rows = brute_force_neighbor_rows(3, &[[0, 2], [1, 2]]);
/// assert_eq!(rows, [vec![2], vec![2], vec![0, 1]]);
/// ```
pub fn brute_force_neighbor_rows(count: usize, pairs: &[[u32; 2]]) -> Vec<Vec<u32>> {
    let mut rows = vec![Vec::new(); count];
    for &[a, b] in pairs {
        rows[a as usize].push(b);
        rows[b as usize].push(a);
    }
    for row in &mut rows {
        row.sort_unstable();
    }
    rows
}
