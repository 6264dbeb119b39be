//! What a region split or an assignment refuses.

use core::fmt;

use broadphase_neighbors::{PeriodicError, PointError};
use broadphase_storage::{Axis, InputError};

/// Why [`Regions`](super::Regions) refused its cuts, a sample, or the
/// points or boxes given to an assignment.
///
/// # Examples
///
/// ```
/// use broadphase_partition::{RegionError, Regions};
/// use broadphase_storage::Axis;
///
/// let err = Regions::new([vec![2.0, 1.0], vec![], vec![]]).unwrap_err();
/// assert!(matches!(err, RegionError::BadCut { axis: Axis::X, index: 1, .. }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum RegionError {
    /// A cut is NaN or infinite, or lower than the cut before it on its
    /// axis.
    BadCut {
        /// The axis of the cut.
        axis: Axis,
        /// Its place among that axis's cuts.
        index: usize,
        /// The cut itself.
        value: f32,
    },
    /// Zero regions were asked for, or more than `u32` ids can name.
    RegionCount {
        /// How many regions the call would have made.
        count: usize,
    },
    /// A point of a sample or an assignment is not finite, or the radius
    /// is NaN, negative or above `MAX_RADIUS`; names the first bad point.
    Point(PointError),
    /// A point lies outside the periodic box, or the radius exceeds half
    /// the box on a wrapping axis.
    Periodic(PeriodicError),
    /// A box breaks the input contract; names the first bad box.
    Input(InputError),
}

impl fmt::Display for RegionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegionError::BadCut { axis, index, value } => write!(
                f,
                "cut {index} on axis {axis:?} is {value}: cuts must be finite and ascending"
            ),
            RegionError::RegionCount { count } => {
                write!(f, "{count} regions: there must be 1 to {} of them", u32::MAX)
            }
            RegionError::Point(e) => e.fmt(f),
            RegionError::Periodic(e) => e.fmt(f),
            RegionError::Input(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for RegionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RegionError::Point(e) => Some(e),
            RegionError::Periodic(e) => Some(e),
            RegionError::Input(e) => Some(e),
            _ => None,
        }
    }
}

impl From<PointError> for RegionError {
    fn from(e: PointError) -> Self {
        RegionError::Point(e)
    }
}

impl From<PeriodicError> for RegionError {
    fn from(e: PeriodicError) -> Self {
        RegionError::Periodic(e)
    }
}

impl From<InputError> for RegionError {
    fn from(e: InputError) -> Self {
        RegionError::Input(e)
    }
}
