//! The axis-aligned box every other crate speaks, and the input contract.

use core::fmt;
use glam::Vec3;

/// An axis-aligned bounding box.
///
/// Overlap is inclusive: boxes whose faces, edges or corners touch overlap.
/// A valid box has finite coordinates and `min <= max` on every axis; a
/// zero-size box (a point) is valid.
///
/// # Examples
///
/// ```
/// use broadphase_storage::Aabb;
/// use glam::Vec3;
///
/// let a = Aabb::new(Vec3::ZERO, Vec3::ONE);
/// let b = Aabb::new(Vec3::ONE, Vec3::splat(2.0)); // touches a at one corner
/// assert!(a.overlaps(&b));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(C)]
pub struct Aabb {
    /// The corner with the smallest coordinates.
    pub min: Vec3,
    /// The corner with the largest coordinates.
    pub max: Vec3,
}

impl Aabb {
    /// A box from its two corners (not checked: see [`validate_boxes`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::Aabb;
    /// let b = Aabb::new(glam::Vec3::ZERO, glam::Vec3::splat(4.0));
    /// assert_eq!(b.max.x, 4.0);
    /// ```
    #[inline]
    pub const fn new(min: Vec3, max: Vec3) -> Self {
        Self { min, max }
    }

    /// The box of half-extent `half_extent` centred on `center`.
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::Aabb;
    /// use glam::Vec3;
    /// let b = Aabb::from_center_half_extent(Vec3::ZERO, Vec3::ONE);
    /// assert_eq!(b.min, Vec3::splat(-1.0));
    /// ```
    #[inline]
    pub fn from_center_half_extent(center: Vec3, half_extent: Vec3) -> Self {
        Self { min: center - half_extent, max: center + half_extent }
    }

    /// Inclusive overlap test: touching boxes overlap.
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::Aabb;
    /// use glam::Vec3;
    /// let a = Aabb::new(Vec3::ZERO, Vec3::ONE);
    /// let far = Aabb::new(Vec3::splat(3.0), Vec3::splat(4.0));
    /// assert!(!a.overlaps(&far));
    /// ```
    #[inline]
    pub fn overlaps(&self, other: &Aabb) -> bool {
        self.min.cmple(other.max).all() && other.min.cmple(self.max).all()
    }

    /// Whether this box meets the input contract (finite, `min <= max` on
    /// every axis): the branch-free fast check, for hot loops that only
    /// need a yes or no. [`validate`](Aabb::validate) says what is wrong.
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::Aabb;
    /// use glam::Vec3;
    /// assert!(Aabb::new(Vec3::ZERO, Vec3::ONE).is_valid());
    /// assert!(!Aabb::new(Vec3::ONE, Vec3::ZERO).is_valid());
    /// assert!(!Aabb::new(Vec3::ZERO, Vec3::new(1.0, f32::NAN, 1.0)).is_valid());
    /// ```
    #[inline(always)]
    pub fn is_valid(&self) -> bool {
        self.min.cmple(self.max).all() && self.min.is_finite() && self.max.is_finite()
    }

    /// Checks the input contract for this one box; `index` names it in the error.
    ///
    /// # Examples
    ///
    /// ```
    /// # use broadphase_storage::{Aabb, InputError};
    /// use glam::Vec3;
    /// let inverted = Aabb::new(Vec3::ONE, Vec3::ZERO);
    /// assert!(matches!(inverted.validate(7), Err(InputError::Inverted { index: 7, .. })));
    /// ```
    #[inline]
    pub fn validate(&self, index: usize) -> Result<(), InputError> {
        for axis in Axis::ALL {
            let (min, max) = (self.min[axis as usize], self.max[axis as usize]);
            if !min.is_finite() {
                return Err(InputError::NotFinite { index, axis, corner: Corner::Min, value: min });
            }
            if !max.is_finite() {
                return Err(InputError::NotFinite { index, axis, corner: Corner::Max, value: max });
            }
            if min > max {
                return Err(InputError::Inverted { index, axis, min, max });
            }
        }
        Ok(())
    }
}

/// One of the three coordinate axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[allow(missing_docs)]
pub enum Axis {
    X = 0,
    Y = 1,
    Z = 2,
}

impl Axis {
    /// X, Y, Z in order.
    pub const ALL: [Axis; 3] = [Axis::X, Axis::Y, Axis::Z];
}

/// Which corner of a box a coordinate belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Corner {
    /// [`Aabb::min`].
    Min,
    /// [`Aabb::max`].
    Max,
}

/// Input that breaks the contract, naming the first offending box.
///
/// Every structure that takes boxes reports the *first* bad box in slice
/// order, so the same input gives the same error everywhere.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum InputError {
    /// A coordinate is NaN or infinite.
    NotFinite {
        /// Index of the box in the caller's slice (0 for a query box).
        index: usize,
        /// The axis of the bad coordinate.
        axis: Axis,
        /// The corner of the bad coordinate.
        corner: Corner,
        /// The coordinate itself.
        value: f32,
    },
    /// `min > max` on an axis.
    Inverted {
        /// Index of the box in the caller's slice (0 for a query box).
        index: usize,
        /// The axis where `min > max`.
        axis: Axis,
        /// The box's min on that axis.
        min: f32,
        /// The box's max on that axis.
        max: f32,
    },
    /// More boxes than `u32` ids can name.
    TooManyBoxes {
        /// How many boxes were given.
        count: usize,
    },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            InputError::NotFinite { index, axis, corner, value } => write!(
                f,
                "box {index}: {corner:?} {axis:?} coordinate is {value}, not a finite number"
            ),
            InputError::Inverted { index, axis, min, max } => {
                write!(f, "box {index}: min {axis:?} ({min}) is greater than max {axis:?} ({max})")
            }
            InputError::TooManyBoxes { count } => {
                write!(f, "{count} boxes given; at most {} fit u32 ids", MAX_BOXES)
            }
        }
    }
}

impl std::error::Error for InputError {}

/// The most boxes one structure accepts: ids are `u32`, and `u32::MAX` is
/// kept free as the padding sentinel.
pub const MAX_BOXES: usize = u32::MAX as usize;

/// Checks every box against the input contract, reporting the first bad one.
///
/// # Examples
///
/// ```
/// # use broadphase_storage::{validate_boxes, Aabb, Axis, InputError};
/// use glam::Vec3;
/// let mut boxes = vec![Aabb::new(Vec3::ZERO, Vec3::ONE); 3];
/// assert!(validate_boxes(&boxes).is_ok());
/// boxes[2].min.y = f32::NAN;
/// assert!(matches!(
///     validate_boxes(&boxes),
///     Err(InputError::NotFinite { index: 2, axis: Axis::Y, .. })
/// ));
/// ```
pub fn validate_boxes(boxes: &[Aabb]) -> Result<(), InputError> {
    if boxes.len() > MAX_BOXES {
        return Err(InputError::TooManyBoxes { count: boxes.len() });
    }
    // The fast check is one branch-free fold per box; only a failing slice
    // pays for the per-axis diagnosis.
    if boxes.iter().all(Aabb::is_valid) {
        return Ok(());
    }
    boxes.iter().enumerate().try_for_each(|(index, b)| b.validate(index))
}
