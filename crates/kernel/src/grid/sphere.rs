//! The boxes a sphere meets: the box query with the sphere's bounds, then
//! the exact sphere–box test on each candidate.

use super::tree::AdaptiveGrid;
use broadphase_storage::{QueryError, Sphere};

impl AdaptiveGrid {
    /// Writes into `out` (cleared first) the index of every kept box that
    /// `sphere` meets ([`Sphere::overlaps`]: touching counts), each once,
    /// in unspecified order.
    ///
    /// # Errors
    /// [`QueryError`] if the sphere breaks its contract
    /// ([`Sphere::validate`]); `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_kernel::{AdaptiveGrid, Aabb};
    /// use broadphase_storage::Sphere;
    /// use glam::Vec3;
    /// let boxes = [
    ///     Aabb::new(Vec3::splat(1.0), Vec3::splat(2.0)), // corner 1.73 from the origin
    ///     Aabb::new(Vec3::new(1.5, 0.0, 0.0), Vec3::new(2.0, 0.5, 0.5)), // face 1.5 away
    /// ];
    /// let mut grid = AdaptiveGrid::default();
    /// grid.build(&boxes)?;
    /// let mut hits = Vec::new();
    /// grid.query_sphere(&Sphere::new(Vec3::ZERO, 1.6), &mut hits)?;
    /// assert_eq!(hits, [1]); // the first box's bounds meet, its corner does not
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn query_sphere(&self, sphere: &Sphere, out: &mut Vec<u32>) -> Result<(), QueryError> {
        out.clear();
        sphere.validate()?;
        self.query(&sphere.bounds(), out)
            .expect("a valid sphere's bounds are a valid box: the query cannot refuse it");
        // The box query's hits overlap the bounds: the distance is left.
        out.retain(|&id| sphere.reaches(&self.boxes[id as usize]));
        Ok(())
    }
}
