//! Device buffers sized by capacity: grown when a call needs more, never
//! shrunk, so a warm call allocates none; and the blocking read-back of a
//! staging buffer.

use crate::context::GpuContext;
use crate::error::GpuError;
use std::sync::mpsc;

/// One device buffer and what it was made with, so it can be remade larger.
#[derive(Debug)]
pub(crate) struct DeviceBuffer {
    pub(crate) buffer: wgpu::Buffer,
    label: &'static str,
    usage: wgpu::BufferUsages,
}

/// The smallest buffer made: a binding must not be empty, and an array of
/// `vec4<f32>` needs 16 bytes.
const MIN_BYTES: u64 = 16;

impl DeviceBuffer {
    pub(crate) fn new(
        context: &GpuContext,
        label: &'static str,
        usage: wgpu::BufferUsages,
    ) -> Self {
        let buffer = make(context, label, usage, MIN_BYTES);
        Self { buffer, label, usage }
    }

    /// The capacity in bytes.
    pub(crate) fn bytes(&self) -> u64 {
        self.buffer.size()
    }

    /// Makes the buffer hold at least `bytes` (growing by half again at
    /// least, up to `most`); returns whether it was remade (its contents
    /// are then lost, and bind groups naming it are stale).
    pub(crate) fn reserve(&mut self, context: &GpuContext, bytes: u64, most: u64) -> bool {
        if bytes <= self.bytes() {
            return false;
        }
        let grown = (self.bytes() + self.bytes() / 2).min(most).max(bytes);
        self.buffer = make(context, self.label, self.usage, grown.next_multiple_of(4));
        true
    }
}

fn make(context: &GpuContext, label: &str, usage: wgpu::BufferUsages, bytes: u64) -> wgpu::Buffer {
    context.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(MIN_BYTES),
        usage,
        mapped_at_creation: false,
    })
}

/// Maps the first `bytes` of each staging buffer in `reads` (after the
/// copies into them were submitted), waits, and hands the mapped ranges,
/// as `u32`s and in order, to `take`: read straight from the mapping, with
/// no copy on the host.
pub(crate) fn read_back<const N: usize>(
    context: &GpuContext,
    reads: [(&wgpu::Buffer, u64); N],
    take: impl FnOnce([&[u32]; N]),
) -> Result<(), GpuError> {
    let (done, results) = mpsc::channel();
    for &(buffer, bytes) in reads.iter().filter(|r| r.1 > 0) {
        let done = done.clone();
        buffer.slice(..bytes).map_async(wgpu::MapMode::Read, move |r| {
            // The receiver lives until every callback ran (the wait below).
            let _ = done.send(r);
        });
    }
    drop(done);
    let outcome = context.wait().and_then(|()| {
        if let Some(Err(e)) = results.try_iter().find(Result::is_err) {
            return Err(GpuError::BufferAsync(e));
        }
        let views = reads.map(|(buffer, bytes)| {
            (bytes > 0).then(|| buffer.slice(..bytes).get_mapped_range()).transpose()
        });
        let mut failure = None;
        let views = views.map(|v| {
            v.unwrap_or_else(|e| {
                failure.get_or_insert(e);
                None
            })
        });
        if let Some(e) = failure {
            return Err(GpuError::MapRange(e));
        }
        take(views.each_ref().map(|v| v.as_deref().map_or(&[][..], bytemuck::cast_slice)));
        Ok(())
    });
    for (buffer, bytes) in reads {
        if bytes > 0 {
            buffer.unmap();
        }
    }
    outcome
}
