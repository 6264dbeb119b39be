//! The boxes that contain a point: the box query with a box of one point.

use super::hierarchy::AdaptiveGrid;
use broadphase_storage::{Aabb, QueryError, validate_point};
use glam::Vec3;

impl AdaptiveGrid {
    /// Writes into `out` (cleared first) the index of every kept box that
    /// contains `point` (on its faces included), each once, in unspecified
    /// order.
    ///
    /// # Errors
    /// [`QueryError`] if the point is not finite; `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use glam::Vec3;
    /// let boxes = [Aabb::new(Vec3::ZERO, Vec3::ONE), Aabb::new(Vec3::ONE, Vec3::splat(2.0))];
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// let mut hits = Vec::new();
    /// grid.query_point(Vec3::ONE, &mut hits)?; // the corner both share
    /// hits.sort();
    /// assert_eq!(hits, [0, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_point(&self, point: Vec3, out: &mut Vec<u32>) -> Result<(), QueryError> {
        out.clear();
        validate_point(point)?;
        self.query_aabb(&Aabb::new(point, point), out)
            .expect("a finite point is a valid box: the query cannot refuse it");
        Ok(())
    }
}
