//! [`GpuError`]: everything the GPU backend can refuse or fail with.

use broadphase_neighbors::{PeriodicError, PointError};
use broadphase_storage::InputError;
use core::fmt;

/// Why a GPU context could not be made, or a search was refused.
///
/// # Examples
///
/// ```
/// use broadphase_gpu::{GpuContext, GpuContextConfig, GpuError};
/// // No backend asked for, so no adapter can be found: an error, not a panic.
/// let config = GpuContextConfig { backends: broadphase_gpu::wgpu::Backends::empty() };
/// assert!(matches!(GpuContext::with_config(config), Err(GpuError::NoAdapter { .. })));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum GpuError {
    /// No adapter of the asked-for backends exists (no GPU and no software
    /// Vulkan such as lavapipe, `mesa-vulkan-drivers`, installed).
    NoAdapter {
        /// What wgpu said.
        reason: String,
    },
    /// The adapter refused to open a device.
    RequestDevice(wgpu::RequestDeviceError),
    /// Waiting for the device failed (it was lost, or timed out).
    Poll(wgpu::PollError),
    /// Reading results back failed.
    BufferAsync(wgpu::BufferAsyncError),
    /// A mapped read-back buffer could not be viewed.
    MapRange(wgpu::MapRangeError),
    /// The queue refused to upload the input into a device buffer (no
    /// staging memory for it, a write beyond the buffer, a lost device):
    /// nothing was computed on what the buffer held before.
    Upload {
        /// The device buffer written to, by its label.
        buffer: &'static str,
        /// The bytes the write would have taken.
        bytes: u64,
        /// What the device reported, where it reported anything (a lost
        /// device only withholds the staging memory).
        cause: Option<wgpu::Error>,
    },
    /// The input breaks the neighbor-search contract: a non-finite point,
    /// a radius out of range (see [`MIN_RADIUS`](crate::MIN_RADIUS)), or
    /// more points than [`GpuNeighborSearch::max_points`](crate::GpuNeighborSearch::max_points).
    Point(PointError),
    /// A box is not finite or inverted (the first such, by index), or
    /// there are more boxes than [`GpuBoxPairs::max_boxes`](crate::GpuBoxPairs::max_boxes).
    Input(InputError),
    /// A periodic search's input breaks its contract (see
    /// [`GpuNeighborSearch::find_periodic_neighbor_lists`](crate::GpuNeighborSearch::find_periodic_neighbor_lists)).
    Periodic(PeriodicError),
    /// A sphere's radius is below [`MIN_RADIUS`](crate::MIN_RADIUS): valid on
    /// the CPU, refused here, where flushed subnormals could change a
    /// contact between two such tiny spheres.
    SphereRadiusTooSmall {
        /// Index of the sphere in the caller's slices.
        index: usize,
        /// The radius given.
        value: f32,
    },
    /// The lists (or pairs) would hold more entries than one device buffer can.
    TooManyNeighbors {
        /// Entries the lists need (`u32::MAX` or more: at least that many).
        total: u64,
        /// The most entries one buffer holds on this device.
        max: u64,
    },
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::NoAdapter { reason } => write!(
                f,
                "no GPU adapter found ({reason}); on a machine without a GPU, install a \
                 software Vulkan driver (mesa-vulkan-drivers)"
            ),
            GpuError::RequestDevice(e) => write!(f, "the GPU adapter refused a device: {e}"),
            GpuError::Poll(e) => write!(f, "waiting for the GPU failed: {e}"),
            GpuError::BufferAsync(e) => write!(f, "reading results back from the GPU failed: {e}"),
            GpuError::MapRange(e) => {
                write!(f, "viewing results read back from the GPU failed: {e}")
            }
            GpuError::Upload { buffer, bytes, cause } => {
                write!(f, "uploading {bytes} bytes into the GPU's {buffer} buffer was refused")?;
                match cause {
                    Some(cause) => write!(f, ": {cause}"),
                    None => write!(f, " (no staging memory given; the device may be lost)"),
                }
            }
            GpuError::Input(e) => write!(f, "bad box: {e}"),
            GpuError::Point(e) => write!(f, "bad input: {e}"),
            GpuError::Periodic(e) => write!(f, "bad periodic input: {e}"),
            GpuError::SphereRadiusTooSmall { index, value } => write!(
                f,
                "sphere {index}: radius {value:e} is below {:e}, the smallest the GPU takes \
                 (the CPU structures take it)",
                crate::MIN_RADIUS
            ),
            GpuError::TooManyNeighbors { total, max } => write!(
                f,
                "the neighbor lists need {total} entries; one GPU buffer holds at most {max}"
            ),
        }
    }
}

impl std::error::Error for GpuError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            GpuError::RequestDevice(e) => Some(e),
            GpuError::Poll(e) => Some(e),
            GpuError::BufferAsync(e) => Some(e),
            GpuError::MapRange(e) => Some(e),
            GpuError::Upload { cause, .. } => cause.as_ref().map(|e| e as _),
            GpuError::Input(e) => Some(e),
            GpuError::Point(e) => Some(e),
            GpuError::Periodic(e) => Some(e),
            GpuError::NoAdapter { .. }
            | GpuError::SphereRadiusTooSmall { .. }
            | GpuError::TooManyNeighbors { .. } => None,
        }
    }
}

impl From<InputError> for GpuError {
    fn from(e: InputError) -> Self {
        GpuError::Input(e)
    }
}

impl From<PeriodicError> for GpuError {
    fn from(e: PeriodicError) -> Self {
        GpuError::Periodic(e)
    }
}

impl From<PointError> for GpuError {
    fn from(e: PointError) -> Self {
        GpuError::Point(e)
    }
}
