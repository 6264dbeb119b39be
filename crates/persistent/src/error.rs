//! How a call to the persistent broad phase fails.

use core::fmt;

use super::Proxy;
use broadphase_jobs::JobError;
use broadphase_partition::PartitionError;
use broadphase_storage::InputError;

/// Why a call to [`PersistentBroadPhase`](super::PersistentBroadPhase)
/// failed. A failed call changes nothing: a bulk call checks every item
/// before it applies any.
///
/// # Examples
///
/// ```
/// use broadphase_persistent::{PersistentBroadPhase, ProxyError, ProxyKind};
/// use broadphase_storage::{Aabb, InputError};
/// use glam::Vec3;
/// let mut world = PersistentBroadPhase::default();
/// let inverted = Aabb { min: Vec3::ONE, max: Vec3::ZERO };
/// let err = world.insert(inverted, ProxyKind::Dynamic).unwrap_err();
/// assert!(matches!(err, ProxyError::Input(InputError::Inverted { index: 0, .. })));
/// assert!(world.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ProxyError {
    /// A box breaks the input contract (NaN, infinite, or `min > max`).
    /// Its `index` is the box's position in the call's slice (0 for a
    /// single box).
    Input(InputError),
    /// A handle names no live proxy: it was removed (by this call, if it
    /// appears twice in it), or it comes from another broad phase.
    /// `position` is its place in the call's slice (0 for a single handle).
    Stale {
        /// The handle.
        proxy: Proxy,
        /// Its position in the call's slice.
        position: usize,
    },
    /// [`insert_at`](super::PersistentBroadPhase::insert_at) was given a
    /// slot that holds a live proxy.
    SlotTaken {
        /// The slot.
        index: u32,
    },
    /// A bulk call's handles and boxes differ in number.
    LengthMismatch {
        /// Handles given.
        proxies: usize,
        /// Boxes given.
        boxes: usize,
    },
    /// More proxies than `u32` slots can name.
    TooManyProxies {
        /// Slots the call would have needed.
        count: usize,
    },
    /// An update's parallel pass failed: a job panicked (a bug), or a pair
    /// list could not grow. The update's results are cleared; the proxies
    /// are as the calls left them, and the next update recomputes every
    /// pair.
    Partition(PartitionError),
}

impl fmt::Display for ProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProxyError::Input(e) => e.fmt(f),
            ProxyError::Stale { proxy, position } => write!(
                f,
                "proxy {} (generation {}) at position {position} is not live",
                proxy.index(),
                proxy.generation()
            ),
            ProxyError::SlotTaken { index } => write!(f, "slot {index} holds a live proxy"),
            ProxyError::LengthMismatch { proxies, boxes } => {
                write!(f, "{proxies} proxies but {boxes} boxes")
            }
            ProxyError::TooManyProxies { count } => {
                write!(f, "{count} proxies exceed the u32 slot range")
            }
            ProxyError::Partition(e) => write!(f, "update failed: {e}"),
        }
    }
}

impl std::error::Error for ProxyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ProxyError::Input(e) => Some(e),
            ProxyError::Partition(e) => Some(e),
            _ => None,
        }
    }
}

impl From<JobError> for ProxyError {
    fn from(e: JobError) -> Self {
        ProxyError::Partition(PartitionError::Job(e))
    }
}

impl From<PartitionError> for ProxyError {
    fn from(e: PartitionError) -> Self {
        ProxyError::Partition(e)
    }
}
