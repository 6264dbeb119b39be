//! Points copied and checked in one pass, for a build that need not check
//! them again.
//!
//! A caller that converts its points anyway (the Python package copies
//! every array it is given into float32 points) would otherwise read them
//! twice more before the build's own work: once for its check and once
//! for the build's. At a million points each pass reads 12 MB, about 4 ms
//! from memory; here the copy computes what the build's check would.

use crate::points::{
    BOUND_LANES, LaneBounds, MAX_POINTS, PointError, first_not_finite, validate_points,
};
use core::ops::Deref;
use glam::Vec3;

/// Points that passed the neighbor searches' input check (every coordinate
/// finite, at most `u32::MAX` points), with their bounds: what
/// [`NeighborSearch::build_checked`](crate::NeighborSearch::build_checked)
/// takes instead of checking the points again.
///
/// The only ways in check the points: [`copy_from_xyz`](Self::copy_from_xyz)
/// in the same pass as the copy, [`check`](Self::check) over a buffer of
/// points. It dereferences to the points; the buffer is kept for reuse by
/// the next copy (and can be taken back with
/// [`into_buffer`](Self::into_buffer)).
///
/// # Examples
///
/// ```
/// use broadphase_neighbors::{CheckedPoints, CountingSortGrid, NeighborSearch};
/// let xyz = [[0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [9.0, 9.0, 9.0]];
/// let mut points = CheckedPoints::default();
/// points.copy_from_xyz(&xyz)?;
/// assert_eq!(points.len(), 3);
/// let mut grid = CountingSortGrid::default();
/// grid.build_checked(&points, 1.0)?;
/// let mut pairs = Vec::new();
/// grid.neighbor_pairs(&mut pairs);
/// assert_eq!(pairs, [[0, 1]]);
///
/// // A bad coordinate is refused as a build refuses it.
/// assert!(points.copy_from_xyz(&[[0.0, f32::NAN, 0.0]]).is_err());
/// assert!(points.is_empty());
/// # Ok::<(), broadphase_neighbors::PointError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct CheckedPoints {
    points: Vec<Vec3>,
    bounds: Option<(Vec3, Vec3)>,
}

impl CheckedPoints {
    /// Replaces the points with `xyz`, one `[x, y, z]` a point, checking
    /// them and taking their bounds in the same pass as the copy.
    ///
    /// # Errors
    ///
    /// What a build would return for these points:
    /// [`PointError::NotFinite`] naming the first bad coordinate, or
    /// [`PointError::TooManyPoints`]. The points are then empty.
    pub fn copy_from_xyz(&mut self, xyz: &[[f32; 3]]) -> Result<(), PointError> {
        self.points.clear();
        self.bounds = None;
        if xyz.len() > MAX_POINTS {
            return Err(PointError::TooManyPoints { count: xyz.len() });
        }
        let Some(&first) = xyz.first() else { return Ok(()) };
        // The bounds as the build's check takes them, in the copy's pass.
        let mut bounds = LaneBounds::new(Vec3::from_array(first));
        self.points.reserve(xyz.len());
        let chunks = xyz.chunks_exact(BOUND_LANES);
        let rest = chunks.remainder();
        for chunk in chunks {
            for (lane, &p) in chunk.iter().enumerate() {
                bounds.take(lane, Vec3::from_array(p));
            }
            self.points.extend(chunk.iter().map(|&p| Vec3::from_array(p)));
        }
        for (lane, &p) in rest.iter().enumerate() {
            bounds.take(lane, Vec3::from_array(p));
        }
        self.points.extend(rest.iter().map(|&p| Vec3::from_array(p)));
        let Some(bounds) = bounds.finish() else {
            let error = first_not_finite(&self.points);
            self.points.clear();
            return Err(error);
        };
        self.bounds = Some(bounds);
        Ok(())
    }

    /// No points, with `buffer`'s room for the next
    /// [`copy_from_xyz`](Self::copy_from_xyz) (its points are dropped).
    pub fn with_buffer(mut buffer: Vec<Vec3>) -> Self {
        buffer.clear();
        Self { points: buffer, bounds: None }
    }

    /// Takes `points` as they are, checking them (one pass, which a build
    /// would otherwise make).
    ///
    /// # Errors
    ///
    /// As [`copy_from_xyz`](Self::copy_from_xyz); the buffer is then
    /// returned with the error, so it can be reused.
    pub fn check(points: Vec<Vec3>) -> Result<Self, (PointError, Vec<Vec3>)> {
        match validate_points(&points) {
            Ok(bounds) => Ok(Self { points, bounds }),
            Err(error) => Err((error, points)),
        }
    }

    /// The bounds of the points (`None` when there are none): the smallest
    /// and largest coordinate on each axis.
    pub fn bounds(&self) -> Option<(Vec3, Vec3)> {
        self.bounds
    }

    /// The points' buffer, for a later [`check`](Self::check) or for any
    /// other use.
    pub fn into_buffer(self) -> Vec<Vec3> {
        self.points
    }
}

impl Deref for CheckedPoints {
    type Target = [Vec3];

    fn deref(&self) -> &[Vec3] {
        &self.points
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::point_bounds;

    /// The copy's bounds and errors are the build's check's, on sets with
    /// negative zeros, equal coordinates, and a bad value in each place.
    #[test]
    fn copy_checks_as_the_build_does() {
        let sets: [&[[f32; 3]]; 4] = [
            &[[0.0, -0.0, 1.0], [-0.0, 0.0, 1.0], [3.0, -2.0, 1.0]],
            &[[5.0, 5.0, 5.0]],
            &[[1.0, 2.0, 3.0], [-1.0, 7.0, -3.0], [0.5, 0.5, 0.5], [2.0, -8.0, 4.0]],
            &[],
        ];
        let mut checked = CheckedPoints::default();
        for xyz in sets {
            let points: Vec<Vec3> = xyz.iter().map(|&p| Vec3::from_array(p)).collect();
            checked.copy_from_xyz(xyz).unwrap();
            assert_eq!(&*checked, &points[..]);
            // Equal as numbers (a zero's sign may differ, which moves no
            // point to another cell).
            assert_eq!(checked.bounds(), point_bounds(&points).unwrap(), "{xyz:?}");
        }
        for at in 0..4 {
            for axis in 0..3 {
                for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
                    let mut xyz = vec![[1.0f32, 2.0, 3.0]; 4];
                    xyz[at][axis] = bad;
                    xyz[3][0] = f32::NAN; // a later bad value is not the one named
                    let points: Vec<Vec3> = xyz.iter().map(|&p| Vec3::from_array(p)).collect();
                    let error = checked.copy_from_xyz(&xyz).unwrap_err();
                    assert_eq!(
                        format!("{error:?}"),
                        format!("{:?}", point_bounds(&points).unwrap_err())
                    );
                    assert!(checked.is_empty() && checked.bounds().is_none());
                }
            }
        }
    }

    #[test]
    fn check_keeps_the_buffer_either_way() {
        let reused = CheckedPoints::with_buffer(vec![Vec3::ONE; 10]);
        assert!(reused.is_empty() && reused.bounds().is_none());
        assert!(reused.into_buffer().capacity() >= 10);
        let good = vec![Vec3::ONE, Vec3::ZERO];
        let checked = CheckedPoints::check(good.clone()).unwrap();
        assert_eq!(checked.bounds(), Some((Vec3::ZERO, Vec3::ONE)));
        assert_eq!(checked.into_buffer(), good);
        let bad = vec![Vec3::ONE, Vec3::splat(f32::NAN)];
        let (error, buffer) = CheckedPoints::check(bad).unwrap_err();
        assert!(matches!(error, PointError::NotFinite { index: 1, .. }));
        assert_eq!(buffer.len(), 2);
    }
}
