//! The regions themselves: cuts per axis, a point's home, a region's box.

use broadphase_neighbors::PointError;
use broadphase_storage::Axis;
use glam::Vec3;

use super::RegionError;

/// A grid of regions that tiles all of space.
///
/// Axis `a` has `cuts(a).len() + 1` slabs; region `i` along it holds the
/// values `v` with `cuts[i - 1] <= v < cuts[i]` (the first slab reaches
/// down to minus infinity, the last up to plus infinity). A region is one
/// slab per axis; its id is `x + nx * (y + ny * z)` for slab indices
/// `x, y, z` and slab counts `nx, ny`. Equal cuts make empty regions,
/// which is allowed.
///
/// # Examples
///
/// ```
/// use broadphase_partition::Regions;
/// use glam::Vec3;
///
/// // Two slabs along x, split at 0: a point on the face is in the upper one.
/// let regions = Regions::new([vec![0.0], vec![], vec![]])?;
/// assert_eq!(regions.count(), 2);
/// assert_eq!(regions.home(Vec3::new(-0.5, 7.0, 7.0))?, 0);
/// assert_eq!(regions.home(Vec3::new(0.0, 7.0, 7.0))?, 1);
/// # Ok::<(), broadphase_partition::RegionError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Regions {
    cuts: [Vec<f32>; 3],
}

impl Default for Regions {
    /// One region: all of space.
    fn default() -> Self {
        Self { cuts: [Vec::new(), Vec::new(), Vec::new()] }
    }
}

impl Regions {
    /// The regions between the given cuts, per axis (x, y, z).
    ///
    /// # Errors
    /// [`RegionError::BadCut`] for the first cut that is not finite or is
    /// below the cut before it; [`RegionError::RegionCount`] if the regions
    /// would be more than `u32` ids can name.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::Regions;
    /// let regions = Regions::new([vec![0.0, 10.0], vec![5.0], vec![]])?;
    /// assert_eq!(regions.count(), 6);
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn new(cuts: [Vec<f32>; 3]) -> Result<Self, RegionError> {
        for (axis, along) in Axis::ALL.into_iter().zip(&cuts) {
            for (index, &value) in along.iter().enumerate() {
                let below = index.checked_sub(1).map_or(f32::NEG_INFINITY, |i| along[i]);
                if !value.is_finite() || value < below {
                    return Err(RegionError::BadCut { axis, index, value });
                }
            }
        }
        let count = cuts
            .iter()
            .try_fold(1usize, |count, along| count.checked_mul(along.len().checked_add(1)?));
        match count {
            Some(count) if count <= u32::MAX as usize => Ok(Self { cuts }),
            _ => Err(RegionError::RegionCount { count: count.unwrap_or(usize::MAX) }),
        }
    }

    /// `count` regions cut from a sample of the points: slabs along the
    /// axis on which the sample spreads widest, cut at the sample's
    /// quantiles, so each slab holds about as many sample points. Slabs
    /// suit a few to a few dozen regions; an empty sample cuts at 0 (all
    /// slabs between the outer two are then empty).
    ///
    /// # Errors
    /// [`RegionError::RegionCount`] if `count` is 0 or above `u32::MAX`;
    /// [`RegionError::Point`] naming the first sample point that is not
    /// finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::Regions;
    /// use broadphase_storage::Axis;
    /// use glam::Vec3;
    ///
    /// let sample: Vec<Vec3> = (0..100).map(|i| Vec3::new(0.0, i as f32, 0.0)).collect();
    /// let regions = Regions::from_sample(&sample, 4)?;
    /// assert_eq!(regions.cuts(Axis::Y), &[25.0, 50.0, 75.0]);
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn from_sample(sample: &[Vec3], count: usize) -> Result<Self, RegionError> {
        if count == 0 || count > u32::MAX as usize {
            return Err(RegionError::RegionCount { count });
        }
        let (mut lo, mut hi) = (Vec3::INFINITY, Vec3::NEG_INFINITY);
        for (index, &p) in sample.iter().enumerate() {
            if let Some(axis) = Axis::ALL.into_iter().find(|&a| !p[a as usize].is_finite()) {
                let value = p[axis as usize];
                return Err(PointError::NotFinite { index, axis, value }.into());
            }
            (lo, hi) = (lo.min(p), hi.max(p));
        }
        let spread = hi - lo;
        let axis = (0..3).fold(0, |best, a| if spread[a] > spread[best] { a } else { best });
        let mut values: Vec<f32> = sample.iter().map(|p| p[axis]).collect();
        values.sort_unstable_by(f32::total_cmp);
        let along: Vec<f32> = (1..count)
            .map(|k| match values.len() {
                0 => 0.0,
                // Within u128 the product cannot overflow.
                m => values[(k as u128 * m as u128 / count as u128) as usize],
            })
            .collect();
        let mut cuts = [Vec::new(), Vec::new(), Vec::new()];
        cuts[axis] = along;
        Self::new(cuts)
    }

    /// How many regions there are; ids run from 0 to `count() - 1`.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(broadphase_partition::Regions::default().count(), 1);
    /// ```
    pub fn count(&self) -> u32 {
        // `new` keeps the product within u32.
        self.cuts.iter().map(|c| c.len() as u32 + 1).product()
    }

    /// The cuts along `axis`, ascending.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::Regions;
    /// use broadphase_storage::Axis;
    /// let regions = Regions::new([vec![], vec![1.0, 2.0], vec![]])?;
    /// assert_eq!(regions.cuts(Axis::Y), &[1.0, 2.0]);
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn cuts(&self, axis: Axis) -> &[f32] {
        &self.cuts[axis as usize]
    }

    /// The home region of `point`: the one region whose half-open box
    /// holds it.
    ///
    /// # Errors
    /// [`RegionError::Point`] (index 0) if a coordinate is not finite.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::Regions;
    /// use glam::Vec3;
    /// let regions = Regions::new([vec![0.0], vec![0.0], vec![]])?;
    /// assert_eq!(regions.home(Vec3::new(1.0, 1.0, 0.0))?, 3);
    /// assert!(regions.home(Vec3::new(f32::NAN, 0.0, 0.0)).is_err());
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn home(&self, point: Vec3) -> Result<u32, RegionError> {
        if let Some(axis) = Axis::ALL.into_iter().find(|&a| !point[a as usize].is_finite()) {
            let value = point[axis as usize];
            return Err(PointError::NotFinite { index: 0, axis, value }.into());
        }
        Ok(self.home_of_finite(point))
    }

    /// The lower and upper corner of region `id`'s box: ±infinity where
    /// it is unbounded. It holds `lower <= v < upper` on each axis.
    /// `None` if there is no such region.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_partition::Regions;
    /// use glam::Vec3;
    /// let regions = Regions::new([vec![0.0], vec![], vec![]])?;
    /// assert_eq!(regions.bounds(1), Some((Vec3::new(0.0, f32::NEG_INFINITY, f32::NEG_INFINITY), Vec3::INFINITY)));
    /// assert_eq!(regions.bounds(2), None);
    /// # Ok::<(), broadphase_partition::RegionError>(())
    /// ```
    pub fn bounds(&self, id: u32) -> Option<(Vec3, Vec3)> {
        if id >= self.count() {
            return None;
        }
        let (mut lower, mut upper, mut rest) = (Vec3::ZERO, Vec3::ZERO, id as usize);
        for (axis, along) in self.cuts.iter().enumerate() {
            let slab = rest % (along.len() + 1);
            rest /= along.len() + 1;
            lower[axis] = slab.checked_sub(1).map_or(f32::NEG_INFINITY, |i| along[i]);
            upper[axis] = along.get(slab).copied().unwrap_or(f32::INFINITY);
        }
        Some((lower, upper))
    }

    /// Slabs per axis.
    pub(super) fn slabs(&self) -> [usize; 3] {
        [self.cuts[0].len() + 1, self.cuts[1].len() + 1, self.cuts[2].len() + 1]
    }

    /// The slab along `axis` holding `v` (any value, NaN goes to slab 0).
    pub(super) fn slab(&self, axis: usize, v: f64) -> usize {
        self.cuts[axis].partition_point(|&c| f64::from(c) <= v)
    }

    /// The id of the region made of these slabs.
    pub(super) fn id(&self, slab: [usize; 3]) -> u32 {
        let [nx, ny, _] = self.slabs();
        // Below `count()`, which fits u32.
        (slab[0] + nx * (slab[1] + ny * slab[2])) as u32
    }

    /// [`home`](Self::home) of a point known to be finite.
    pub(super) fn home_of_finite(&self, point: Vec3) -> u32 {
        self.id([0, 1, 2].map(|axis| self.slab(axis, f64::from(point[axis]))))
    }
}
