//! How a frame of the grid tree fails.

use core::fmt;

use broadphase_jobs::JobError;
use broadphase_kernel::{FindPairsError, PairsError};
use broadphase_storage::InputError;

/// Why a frame of [`GridTree`](super::GridTree) failed.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_partition::{GridTree, PartitionError};
/// use broadphase_kernel::{Aabb, InputError};
/// use glam::Vec3;
/// let bad = [Aabb::new(Vec3::ONE, Vec3::ZERO)];
/// let err = GridTree::default().try_find_pairs(&JobSystem::new(1), &bad, &mut Vec::new()).unwrap_err();
/// assert!(matches!(err, PartitionError::Input(InputError::Inverted { index: 0, .. })));
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PartitionError {
    /// The input breaks the contract; names the first bad box.
    Input(InputError),
    /// A job panicked (a bug); the frame's output is empty.
    Job(JobError),
    /// The pair output could not grow (the allocator refused); the frame's
    /// output is empty.
    Pairs(PairsError),
    /// The kernel's one-call frame (a frame below the split threshold)
    /// failed for a cause none of the variants above names; its input and
    /// output causes come as `Input` and `Pairs`.
    FindPairs(FindPairsError),
}

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionError::Input(e) => e.fmt(f),
            PartitionError::Job(e) => e.fmt(f),
            PartitionError::Pairs(e) => e.fmt(f),
            PartitionError::FindPairs(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for PartitionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PartitionError::Input(e) => Some(e),
            PartitionError::Job(e) => Some(e),
            PartitionError::Pairs(e) => Some(e),
            PartitionError::FindPairs(e) => Some(e),
        }
    }
}

impl From<InputError> for PartitionError {
    fn from(e: InputError) -> Self {
        PartitionError::Input(e)
    }
}

impl From<PairsError> for PartitionError {
    fn from(e: PairsError) -> Self {
        PartitionError::Pairs(e)
    }
}

/// The kernel's causes that have a variant of their own keep it.
impl From<FindPairsError> for PartitionError {
    fn from(e: FindPairsError) -> Self {
        match e {
            FindPairsError::Input(e) => PartitionError::Input(e),
            FindPairsError::Pairs(e) => PartitionError::Pairs(e),
            other => PartitionError::FindPairs(other),
        }
    }
}

impl From<JobError> for PartitionError {
    fn from(e: JobError) -> Self {
        PartitionError::Job(e)
    }
}
