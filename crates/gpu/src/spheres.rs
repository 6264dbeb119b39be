//! [`GpuNeighborSearch::find_sphere_contacts`]: every pair of touching
//! spheres, found on the device.

use crate::boxes::pairs_of_rows;
use crate::error::GpuError;
use crate::grid::{plan_spheres, validate_spheres};
use crate::neighbors::{GpuNeighborSearch, Items, Walk};
use crate::timing::CallClock;
use glam::Vec3;

impl GpuNeighborSearch {
    /// Replaces `out` with every pair of touching spheres once, `[a, b]`
    /// with `a < b`, sorted: the CPU's contacts of
    /// [`build_spheres`](broadphase_neighbors::NeighborSearch::build_spheres),
    /// exactly those of
    /// [`brute_force_sphere_contacts`](broadphase_neighbors::brute_force_sphere_contacts)
    /// (`(dx·dx + dy·dy) + dz·dz <= (ra + rb)·(ra + rb)` in `f32`,
    /// touching counts).
    ///
    /// The grid is the one of a point search of twice the largest radius
    /// (no contact is farther apart), the radius riding along with each
    /// center; each sphere keeps the touching spheres of a higher index in
    /// the 3×3×3 cells around its own. Like the CPU grid, one huge sphere
    /// among small ones widens every cell: still exact, slower.
    ///
    /// # Errors
    ///
    /// [`GpuError::Point`] with the CPU's error for what the CPU refuses
    /// (lengths that differ, the first non-finite center or bad radius by
    /// index, more than [`max_points`](Self::max_points) spheres);
    /// [`GpuError::SphereRadiusTooSmall`] for a radius below
    /// [`MIN_RADIUS`](crate::MIN_RADIUS), which the CPU takes;
    /// [`GpuError::TooManyNeighbors`] when the contacts outgrow one device
    /// buffer; device failures. `out` is then left untouched.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use broadphase_gpu::{GpuContext, GpuNeighborSearch};
    /// use glam::Vec3;
    /// let mut gpu = GpuNeighborSearch::new(&GpuContext::new()?);
    /// let centers = [Vec3::ZERO, Vec3::new(3.0, 0.0, 0.0), Vec3::new(10.0, 0.0, 0.0)];
    /// let mut contacts = Vec::new();
    /// gpu.find_sphere_contacts(&centers, &[1.0, 2.0, 1.0], &mut contacts)?; // 0 and 1 touch
    /// assert_eq!(contacts, [[0, 1]]);
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    pub fn find_sphere_contacts(
        &mut self,
        centers: &[Vec3],
        radii: &[f32],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), GpuError> {
        let clock = CallClock::start();
        let Some((lo, hi, largest)) = validate_spheres(centers, radii, self.max_points())? else {
            out.clear();
            return Ok(());
        };
        let params = plan_spheres(centers.len(), lo, hi, largest, self.max_cells());
        let items = Items::Spheres(centers, radii);
        self.rows(clock, params, items, Walk::Spheres, |offsets, entries| {
            pairs_of_rows(offsets, entries, out);
        })
    }
}
