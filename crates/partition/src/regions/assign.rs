//! Sending points and boxes to regions, and the rule that says which
//! region reports a pair.

use broadphase_neighbors::{MAX_RADIUS, PeriodicDomain, PeriodicError, PointError};
use broadphase_storage::{Aabb, Axis, validate_boxes};
use glam::Vec3;

use super::{RegionError, Regions};

/// How far a halo reaches past the radius, relative to the magnitudes
/// involved: 32 units in the last place of a float32, more than the
/// rounding of any float32 distance test, so no pair in reach is missed.
const HALO_SLACK: f64 = 1.0 / (1u64 << 18) as f64;

/// Where each point or box of an input went: its home region, and every
/// region it was sent to (home and halo, ascending), as CSR rows.
///
/// Kept across calls: a warm assignment of the same size allocates
/// nothing.
///
/// # Examples
///
/// ```
/// use broadphase_partition::{Assignment, Regions};
/// use glam::Vec3;
///
/// let regions = Regions::new([vec![0.0], vec![], vec![]])?;
/// let mut assignment = Assignment::default();
/// let points = [Vec3::new(-5.0, 0.0, 0.0), Vec3::new(-0.25, 0.0, 0.0)];
/// regions.assign_points(&points, 0.5, None, &mut assignment)?;
/// assert_eq!(assignment.regions_of(0), &[0]);
/// // Within 0.5 of region 1: sent there too, as halo.
/// assert_eq!(assignment.regions_of(1), &[0, 1]);
/// assert_eq!(assignment.home(1), 0);
/// # Ok::<(), broadphase_partition::RegionError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Assignment {
    home: Vec<u32>,
    offsets: Vec<usize>,
    regions: Vec<u32>,
}

impl Assignment {
    /// Points or boxes assigned.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::{Assignment, Regions};
    /// use glam::Vec3;
    /// let mut assignment = Assignment::default();
    /// assert!(assignment.is_empty());
    /// Regions::default().assign_points(&[Vec3::ZERO; 3], 1.0, None, &mut assignment)?;
    /// assert_eq!(assignment.len(), 3);
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.home.len()
    }

    /// Whether nothing was assigned.
    pub fn is_empty(&self) -> bool {
        self.home.is_empty()
    }

    /// The home region of point `i` (for a box: the region of its min
    /// corner).
    pub fn home(&self, i: usize) -> u32 {
        self.home[i]
    }

    /// Every home region, by index.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::{Assignment, Regions};
    /// use glam::Vec3;
    /// let regions = Regions::new([vec![0.0], vec![], vec![]])?;
    /// let mut assignment = Assignment::default();
    /// regions.assign_points(&[Vec3::splat(1.0), Vec3::splat(-1.0)], 0.5, None, &mut assignment)?;
    /// assert_eq!(assignment.homes(), &[1, 0]);
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn homes(&self) -> &[u32] {
        &self.home
    }

    /// Every region point or box `i` was sent to, ascending; the home
    /// region is one of them.
    pub fn regions_of(&self, i: usize) -> &[u32] {
        &self.regions[self.offsets[i]..self.offsets[i + 1]]
    }

    /// The CSR row starts of [`regions`](Self::regions): entry `i`'s
    /// regions are `regions()[offsets()[i]..offsets()[i + 1]]`.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::{Assignment, Regions};
    /// use glam::Vec3;
    /// let regions = Regions::new([vec![0.0], vec![], vec![]])?;
    /// let mut assignment = Assignment::default();
    /// regions.assign_points(&[Vec3::splat(0.25), Vec3::splat(5.0)], 0.5, None, &mut assignment)?;
    /// assert_eq!(assignment.offsets(), &[0, 2, 3]);
    /// assert_eq!(assignment.regions(), &[0, 1, 1]);
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Every entry's regions, one row after the other.
    pub fn regions(&self) -> &[u32] {
        &self.regions
    }

    /// The region that reports the pair of points `i` and `j`: the home
    /// of the lower index. It holds the other point in its halo.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::{Assignment, Regions};
    /// use glam::Vec3;
    /// let regions = Regions::new([vec![0.0], vec![], vec![]])?;
    /// let mut assignment = Assignment::default();
    /// let points = [Vec3::new(0.25, 0.0, 0.0), Vec3::new(-0.25, 0.0, 0.0)];
    /// regions.assign_points(&points, 1.0, None, &mut assignment)?;
    /// assert_eq!(assignment.point_pair_owner(1, 0), 1);
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn point_pair_owner(&self, i: usize, j: usize) -> u32 {
        self.home[i.min(j)]
    }

    /// Empties it: no entries, one row start.
    fn clear(&mut self) {
        self.home.clear();
        self.offsets.clear();
        self.regions.clear();
        self.offsets.push(0);
    }

    /// Ends the current entry, whose regions were pushed.
    fn close(&mut self, home: u32) {
        self.home.push(home);
        self.offsets.push(self.regions.len());
    }
}

/// The slabs of one axis a point or box reaches, as inclusive ranges.
type SlabRanges = [Option<(usize, usize)>; 3];

impl Regions {
    /// Sends each point to its home region and to every region within
    /// `radius` of it along each axis (its halo), so that the home region
    /// of any point sees every point within `radius` of it. With `domain`
    /// the halo wraps across the periodic faces.
    ///
    /// # Errors
    /// [`RegionError::Point`] for a radius that is NaN, negative or above
    /// `MAX_RADIUS`, or the first point that is not finite;
    /// [`RegionError::Periodic`] for the first point outside `domain`, or a
    /// radius above half the domain on a wrapping axis. `out` is then
    /// empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_neighbors::PeriodicDomain;
    /// use broadphase_partition::{Assignment, Regions};
    /// use glam::Vec3;
    ///
    /// let regions = Regions::new([vec![2.0, 8.0], vec![], vec![]])?;
    /// let domain = PeriodicDomain::new(Vec3::ZERO, Vec3::splat(10.0), [true; 3])?;
    /// let mut assignment = Assignment::default();
    /// regions.assign_points(&[Vec3::new(0.5, 5.0, 5.0)], 1.0, Some(&domain), &mut assignment)?;
    /// // Home 0, and region 2 across the wrap (its image sits at 10.5).
    /// assert_eq!(assignment.regions_of(0), &[0, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn assign_points(
        &self,
        points: &[Vec3],
        radius: f32,
        domain: Option<&PeriodicDomain>,
        out: &mut Assignment,
    ) -> Result<(), RegionError> {
        out.clear();
        check(points, radius, domain)?;
        let r = f64::from(radius);
        for &p in points {
            let ranges = [0, 1, 2].map(|axis| self.halo(axis, p[axis], r, domain));
            self.push_product(&ranges, out);
            out.close(self.home_of_finite(p));
        }
        Ok(())
    }

    /// Sends each box to every region its closed box overlaps.
    ///
    /// # Errors
    /// [`RegionError::Input`] for the first box that is not finite or has
    /// `min > max` on an axis. `out` is then empty.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::{Assignment, Regions};
    /// use broadphase_storage::Aabb;
    /// use glam::Vec3;
    ///
    /// let regions = Regions::new([vec![0.0, 1.0], vec![], vec![]])?;
    /// let mut assignment = Assignment::default();
    /// let boxes = [Aabb::new(Vec3::splat(-1.0), Vec3::splat(0.0))];
    /// regions.assign_boxes(&boxes, &mut assignment)?;
    /// // It touches region 1 with its max face.
    /// assert_eq!(assignment.regions_of(0), &[0, 1]);
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn assign_boxes(&self, boxes: &[Aabb], out: &mut Assignment) -> Result<(), RegionError> {
        out.clear();
        validate_boxes(boxes)?;
        for b in boxes {
            let ranges = [0, 1, 2].map(|axis| {
                let lo = self.slab(axis, f64::from(b.min[axis]));
                [Some((lo, self.slab(axis, f64::from(b.max[axis])))), None, None]
            });
            self.push_product(&ranges, out);
            out.close(self.home_of_finite(b.min));
        }
        Ok(())
    }

    /// The region that reports the overlapping pair `a`, `b`: the one
    /// holding the low corner of their intersection (the per-axis max of
    /// their mins). That corner lies in both boxes, so
    /// [`assign_boxes`](Self::assign_boxes) sent both there.
    ///
    /// # Errors
    /// [`RegionError::Input`] if either box is not finite or inverted
    /// (`a` is index 0, `b` index 1).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::Regions;
    /// use broadphase_storage::Aabb;
    /// use glam::Vec3;
    ///
    /// let regions = Regions::new([vec![0.0], vec![], vec![]])?;
    /// let a = Aabb::new(Vec3::splat(-2.0), Vec3::splat(1.0));
    /// let b = Aabb::new(Vec3::splat(-1.0), Vec3::splat(2.0));
    /// assert_eq!(regions.box_pair_owner(&a, &b)?, 0);
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn box_pair_owner(&self, a: &Aabb, b: &Aabb) -> Result<u32, RegionError> {
        validate_boxes(&[*a, *b])?;
        Ok(self.home_of_finite(a.min.max(b.min)))
    }

    /// The slabs along `axis` within `r` of `v` (and of its images across a
    /// wrapping face of `domain`), widened by [`HALO_SLACK`].
    fn halo(&self, axis: usize, v: f32, r: f64, domain: Option<&PeriodicDomain>) -> SlabRanges {
        let v = f64::from(v);
        let wrap = domain.filter(|d| d.periodic()[axis]).map(|d| {
            let (lo, hi) = (f64::from(d.min()[axis]), f64::from(d.max()[axis]));
            (lo, hi, hi - lo)
        });
        let length = wrap.map_or(0.0, |(_, _, length)| length);
        let reach = r + (r + v.abs() + length) * HALO_SLACK;
        let range = |c: f64| (self.slab(axis, c - reach), self.slab(axis, c + reach));
        let mut ranges = [Some(range(v)), None, None];
        if let Some((lo, hi, length)) = wrap {
            // Images one box length away, where they come within reach of
            // the box; a radius of at most half the box needs no further.
            if v + length - reach <= hi {
                ranges[1] = Some(range(v + length));
            }
            if v - length + reach >= lo {
                ranges[2] = Some(range(v - length));
            }
        }
        ranges
    }

    /// Pushes every region made of one slab from each axis's ranges, each
    /// once, ascending.
    fn push_product(&self, ranges: &[SlabRanges; 3], out: &mut Assignment) {
        let slabs = self.slabs();
        let start = out.regions.len();
        // Marks per axis, small: slabs per axis are few next to the points.
        let mut marked: [Vec<usize>; 3] = Default::default();
        for axis in 0..3 {
            for &(from, to) in ranges[axis].iter().flatten() {
                marked[axis].extend(from..=to.min(slabs[axis] - 1));
            }
            marked[axis].sort_unstable();
            marked[axis].dedup();
        }
        for &z in &marked[2] {
            for &y in &marked[1] {
                for &x in &marked[0] {
                    out.regions.push(self.id([x, y, z]));
                }
            }
        }
        debug_assert!(out.regions[start..].is_sorted());
    }
}

/// The radius, the points, and with `domain` the points' place in it and
/// the radius against its half lengths.
fn check(points: &[Vec3], radius: f32, domain: Option<&PeriodicDomain>) -> Result<(), RegionError> {
    if !(0.0..=MAX_RADIUS).contains(&radius) {
        return Err(PointError::InvalidRadius { value: radius }.into());
    }
    if points.len() > u32::MAX as usize {
        return Err(PointError::TooManyPoints { count: points.len() }.into());
    }
    for (index, p) in points.iter().enumerate() {
        if let Some(axis) = Axis::ALL.into_iter().find(|&a| !p[a as usize].is_finite()) {
            let value = p[axis as usize];
            return Err(PointError::NotFinite { index, axis, value }.into());
        }
    }
    let Some(domain) = domain else { return Ok(()) };
    for axis in Axis::ALL {
        let half = domain.size()[axis as usize] * 0.5;
        if domain.periodic()[axis as usize] && radius > half {
            return Err(PeriodicError::RadiusAboveHalfBox { radius, axis, half }.into());
        }
    }
    for (index, p) in points.iter().enumerate() {
        for axis in Axis::ALL {
            let value = p[axis as usize];
            if value < domain.min()[axis as usize] || value > domain.max()[axis as usize] {
                return Err(PeriodicError::OutsideDomain { index, axis, value }.into());
            }
        }
    }
    Ok(())
}
