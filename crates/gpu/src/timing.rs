//! [`GpuTimings`]: where the last call's time went (upload, the device's
//! passes, read-back), and the timestamp queries that time the passes on
//! the device where the adapter has them.

use crate::buffer::read_back;
use crate::context::GpuContext;
use crate::error::GpuError;
use std::time::{Duration, Instant};

/// Which clock measured [`GpuTimings::passes`].
///
/// # Examples
///
/// ```
/// use broadphase_gpu::{GpuTimings, PassClock};
/// assert_eq!(GpuTimings::default().passes_clock, PassClock::HostWait);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum PassClock {
    /// The device's own timestamps, written at the start and end of each
    /// compute pass (the adapter has `TIMESTAMP_QUERY`): the passes alone.
    DeviceTimestamps,
    /// The host's wall clock from submitting the passes to the device
    /// finishing them (the adapter has no timestamps): the passes plus
    /// the submission and the wait.
    #[default]
    HostWait,
}

/// Where one call's time went, filled by the last call that reached the
/// device ([`GpuNeighborSearch::timings`](crate::GpuNeighborSearch::timings),
/// [`GpuBoxPairs::timings`](crate::GpuBoxPairs::timings)). A call refused
/// for its input, or given no points, leaves it as it was.
///
/// Each part is measured with the others finished (the call waits for the
/// device between them), so they do not overlap: `upload + passes +
/// readback` is at most `total` when the passes are timed on the host; the
/// rest of `total` is checking the input and planning the grid.
///
/// # Examples
///
/// ```no_run
/// use broadphase_gpu::{GpuContext, GpuNeighborSearch};
/// use broadphase_neighbors::{NeighborListSearch, NeighborLists};
/// use glam::Vec3;
/// let mut gpu = GpuNeighborSearch::new(&GpuContext::new()?);
/// let mut lists = NeighborLists::default();
/// gpu.find_neighbor_lists(&[Vec3::ZERO, Vec3::X], 1.0, &mut lists)?;
/// let t = gpu.timings();
/// println!("upload {:?}, passes {:?} ({:?}), read-back {:?}", t.upload, t.passes, t.passes_clock, t.readback);
/// assert!(t.passes > std::time::Duration::ZERO);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuTimings {
    /// Host to device: growing buffers the call outgrew, writing the
    /// input and the grid's parameters, and waiting until they are on the
    /// device.
    pub upload: Duration,
    /// The compute passes (insert, prefix sums, scatter, count, fill), by
    /// [`passes_clock`](Self::passes_clock).
    pub passes: Duration,
    /// How [`passes`](Self::passes) was measured.
    pub passes_clock: PassClock,
    /// Device to host: copying the results into mappable buffers, mapping
    /// them and handing them to the caller (for box pairs, turning the
    /// rows into pairs); the 4-byte total that sizes the lists included.
    pub readback: Duration,
    /// The whole call, as the caller waited for it.
    pub total: Duration,
}

/// Times one call's parts as they run.
#[derive(Debug)]
pub(crate) struct CallClock {
    start: Instant,
    timings: GpuTimings,
}

impl CallClock {
    pub(crate) fn start() -> Self {
        Self { start: Instant::now(), timings: GpuTimings::default() }
    }

    /// Runs `part` and adds its wall time to the upload.
    pub(crate) fn upload<T>(&mut self, part: impl FnOnce() -> T) -> T {
        timed(&mut self.timings.upload, part)
    }

    /// Runs `part` (submit passes, wait for them) and adds its wall time
    /// to the passes.
    pub(crate) fn passes<T>(&mut self, part: impl FnOnce() -> T) -> T {
        timed(&mut self.timings.passes, part)
    }

    /// Runs `part` and adds its wall time to the read-back.
    pub(crate) fn readback<T>(&mut self, part: impl FnOnce() -> T) -> T {
        timed(&mut self.timings.readback, part)
    }

    /// The call's timings; `device_passes` replaces the host's wait where
    /// the device timed its passes. The total stops here.
    pub(crate) fn finish(self, device_passes: Option<Duration>) -> GpuTimings {
        let mut timings = self.timings;
        timings.total = self.start.elapsed();
        if let Some(passes) = device_passes {
            timings.passes = passes;
            timings.passes_clock = PassClock::DeviceTimestamps;
        }
        timings
    }
}

fn timed<T>(into: &mut Duration, part: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = part();
    *into += start.elapsed();
    out
}

/// The most compute passes one call runs (the counts, then the fill).
pub(crate) const MAX_PASSES: u32 = 2;

/// Where pass `k`'s two timestamps are resolved: resolving needs offsets
/// aligned to `QUERY_RESOLVE_BUFFER_ALIGNMENT`.
const fn resolve_offset(pass: u32) -> u64 {
    pass as u64 * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT
}

const RESOLVE_BYTES: u64 = resolve_offset(MAX_PASSES);

/// A start and an end timestamp per compute pass of a call, and the
/// buffers they are resolved and read through.
#[derive(Debug)]
pub(crate) struct Timestamps {
    set: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    read: wgpu::Buffer,
    /// Nanoseconds per timestamp tick.
    period: f32,
}

impl Timestamps {
    /// `None` where the device was opened without `TIMESTAMP_QUERY`.
    pub(crate) fn new(context: &GpuContext) -> Option<Self> {
        if !context.has_timestamps() {
            return None;
        }
        let device = &context.device;
        let set = device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("pass timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2 * MAX_PASSES,
        });
        let buffer = |label, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: RESOLVE_BYTES,
                usage,
                mapped_at_creation: false,
            })
        };
        let resolved = buffer(
            "resolved timestamps",
            wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
        );
        let read =
            buffer("read timestamps", wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        Some(Self { set, resolved, read, period: context.queue.get_timestamp_period() })
    }

    /// The device buffers this made.
    pub(crate) const BUFFERS: u64 = 2;

    /// Pass `pass`'s timestamp writes, for its descriptor.
    pub(crate) fn writes(&self, pass: u32) -> wgpu::ComputePassTimestampWrites<'_> {
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(2 * pass),
            end_of_pass_write_index: Some(2 * pass + 1),
        }
    }

    /// Records the resolve of pass `pass`'s timestamps (after the pass).
    pub(crate) fn resolve(&self, encoder: &mut wgpu::CommandEncoder, pass: u32) {
        encoder.resolve_query_set(
            &self.set,
            2 * pass..2 * pass + 2,
            &self.resolved,
            resolve_offset(pass),
        );
    }

    /// Reads back the first `passes` passes' timestamps (resolved by the
    /// work already submitted) and returns their summed durations.
    pub(crate) fn read(&self, context: &GpuContext, passes: u32) -> Result<Duration, GpuError> {
        let mut encoder = context.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.read, 0, RESOLVE_BYTES);
        context.queue.submit([encoder.finish()]);
        let mut ticks = 0u64;
        read_back(context, [(&self.read, RESOLVE_BYTES)], |[words]| {
            let at = |i: usize| u64::from(words[2 * i]) | (u64::from(words[2 * i + 1]) << 32);
            let per_pass = (wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT / 8) as usize;
            for pass in 0..passes as usize {
                let (begin, end) = (at(pass * per_pass), at(pass * per_pass + 1));
                ticks += end.saturating_sub(begin);
            }
        })?;
        Ok(Duration::from_secs_f64(ticks as f64 * f64::from(self.period) * 1e-9))
    }
}

/// The passes' descriptor: timestamps for pass `pass` where there are any.
pub(crate) fn pass_descriptor(
    timestamps: Option<&Timestamps>,
    pass: u32,
) -> wgpu::ComputePassDescriptor<'_> {
    wgpu::ComputePassDescriptor {
        label: None,
        timestamp_writes: timestamps.map(|t| t.writes(pass)),
    }
}
