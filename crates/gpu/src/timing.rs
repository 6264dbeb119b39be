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

/// A stage of a call's compute passes, each a compute pass of its own so
/// the device can time it ([`GpuTimings::stage`]).
///
/// # Examples
///
/// ```
/// use broadphase_gpu::Stage;
/// assert_eq!(Stage::ALL.map(Stage::name)[5], "fill");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Each item's cell, and its slot there by an atomic count.
    Insert,
    /// The prefix sum of the cells' counts: where each cell's items start.
    CellScan,
    /// The items copied into cell order.
    Scatter,
    /// The walk over the 3x3x3 cells that counts each item's row.
    Count,
    /// The prefix sum of the rows' lengths: where each row starts.
    RowScan,
    /// The walk again, writing each row, sorted. Submitted apart, after the
    /// lists' total has been read back to size them.
    Fill,
}

impl Stage {
    /// Every stage, in the order a call runs them.
    pub const ALL: [Stage; 6] =
        [Stage::Insert, Stage::CellScan, Stage::Scatter, Stage::Count, Stage::RowScan, Stage::Fill];

    /// The stage's name, as the timing example prints it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Insert => "insert",
            Stage::CellScan => "cell scan",
            Stage::Scatter => "scatter",
            Stage::Count => "count",
            Stage::RowScan => "row scan",
            Stage::Fill => "fill",
        }
    }
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
    /// The compute passes (the [`Stage`]s), by
    /// [`passes_clock`](Self::passes_clock): with the device's timestamps,
    /// from the first stage's start to the last's end in each submission
    /// (the stages and the gaps between them).
    pub passes: Duration,
    /// How [`passes`](Self::passes) was measured.
    pub passes_clock: PassClock,
    /// Device to host: copying the results into mappable buffers, mapping
    /// them and handing them to the caller (for box pairs, turning the
    /// rows into pairs); the 4-byte total that sizes the lists included.
    pub readback: Duration,
    /// The whole call, as the caller waited for it.
    pub total: Duration,
    /// Each stage's device time, indexed by [`Stage`] (see
    /// [`stage`](Self::stage)).
    pub stages: [Option<Duration>; Stage::ALL.len()],
}

impl GpuTimings {
    /// The device's time for `stage`: `None` where the call did not run it
    /// or the passes were timed on the host ([`PassClock::HostWait`]).
    pub fn stage(&self, stage: Stage) -> Option<Duration> {
        self.stages[stage as usize]
    }
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

    /// The call's timings; `device` replaces the host's wait where the
    /// device timed its passes. The total stops here.
    pub(crate) fn finish(self, device: Option<DevicePasses>) -> GpuTimings {
        let mut timings = self.timings;
        timings.total = self.start.elapsed();
        if let Some(device) = device {
            timings.passes = device.passes;
            timings.stages = device.stages;
            timings.passes_clock = PassClock::DeviceTimestamps;
        }
        timings
    }
}

/// The device's timestamps for one call, read back.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DevicePasses {
    passes: Duration,
    stages: [Option<Duration>; Stage::ALL.len()],
}

fn timed<T>(into: &mut Duration, part: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = part();
    *into += start.elapsed();
    out
}

/// Where a stage's two timestamps are resolved: resolving needs offsets
/// aligned to `QUERY_RESOLVE_BUFFER_ALIGNMENT`.
const fn resolve_offset(stage: Stage) -> u64 {
    stage as u64 * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT
}

const RESOLVE_BYTES: u64 = Stage::ALL.len() as u64 * wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT;

/// A start and an end timestamp per stage of a call, and the buffers they
/// are resolved and read through.
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
            label: Some("stage timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2 * Stage::ALL.len() as u32,
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

    /// Stage `stage`'s timestamp writes, for its pass's descriptor.
    fn writes(&self, stage: Stage) -> wgpu::ComputePassTimestampWrites<'_> {
        let first = 2 * stage as u32;
        wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(first),
            end_of_pass_write_index: Some(first + 1),
        }
    }

    /// Records the resolve of `stages`' timestamps (after their passes).
    pub(crate) fn resolve(&self, encoder: &mut wgpu::CommandEncoder, stages: &[Stage]) {
        for &stage in stages {
            let first = 2 * stage as u32;
            encoder.resolve_query_set(
                &self.set,
                first..first + 2,
                &self.resolved,
                resolve_offset(stage),
            );
        }
    }

    /// Reads back the timestamps of `stages` (resolved by the work already
    /// submitted): each stage's time, and the passes' from the first
    /// stage's start to the last's end, [`Stage::Fill`] apart.
    pub(crate) fn read(
        &self,
        context: &GpuContext,
        stages: &[Stage],
    ) -> Result<DevicePasses, GpuError> {
        let mut encoder = context.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&self.resolved, 0, &self.read, 0, RESOLVE_BYTES);
        context.queue.submit([encoder.finish()]);
        let seconds =
            |ticks: u64| Duration::from_secs_f64(ticks as f64 * f64::from(self.period) * 1e-9);
        let mut device = DevicePasses { passes: Duration::ZERO, stages: [None; Stage::ALL.len()] };
        read_back(context, [(&self.read, RESOLVE_BYTES)], |[words]| {
            let at = |i: usize| u64::from(words[2 * i]) | (u64::from(words[2 * i + 1]) << 32);
            let per_stage = (wgpu::QUERY_RESOLVE_BUFFER_ALIGNMENT / 8) as usize;
            let mut span: Option<(u64, u64)> = None;
            for &stage in stages {
                let begin = at(stage as usize * per_stage);
                let end = at(stage as usize * per_stage + 1);
                device.stages[stage as usize] = Some(seconds(end.saturating_sub(begin)));
                if stage == Stage::Fill {
                    device.passes += seconds(end.saturating_sub(begin));
                } else {
                    let (lo, hi) = span.unwrap_or((begin, end));
                    span = Some((lo.min(begin), hi.max(end)));
                }
            }
            if let Some((lo, hi)) = span {
                device.passes += seconds(hi.saturating_sub(lo));
            }
        })?;
        Ok(device)
    }
}

/// Stage `stage`'s pass descriptor: its timestamps where there are any.
pub(crate) fn pass_descriptor(
    timestamps: Option<&Timestamps>,
    stage: Stage,
) -> wgpu::ComputePassDescriptor<'_> {
    wgpu::ComputePassDescriptor {
        label: Some(stage.name()),
        timestamp_writes: timestamps.map(|t| t.writes(stage)),
    }
}
