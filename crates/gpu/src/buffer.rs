//! Device buffers sized by capacity: grown when a call needs more, never
//! shrunk, so a warm call allocates none; the checked upload into one, and
//! the blocking read-back of a staging buffer.

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

    /// What the buffer holds, as its errors name it.
    pub(crate) fn label(&self) -> &'static str {
        self.label
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

/// Runs `write` (queue writes into device buffers) with the device's
/// validation and out-of-memory errors captured, so a refused write is a
/// [`GpuError::Upload`] naming `buffer` and `bytes` rather than wgpu's
/// default panic; `write` itself reports what it saw refused (a staging
/// view withheld, which is all a lost device gives).
fn checked_upload(
    context: &GpuContext,
    buffer: &'static str,
    bytes: u64,
    write: impl FnOnce() -> Result<(), GpuError>,
) -> Result<(), GpuError> {
    let memory = context.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let validation = context.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let written = write();
    // Scopes pop innermost first; both resolve at once on native wgpu.
    let refused = pollster::block_on(validation.pop()).or(pollster::block_on(memory.pop()));
    match (written, refused) {
        (Ok(()), None) => Ok(()),
        (_, Some(cause)) => Err(GpuError::Upload { buffer, bytes, cause: Some(cause) }),
        (Err(e), None) => Err(e),
    }
}

/// Writes `data` into `buffer` from its start (the queue copies it).
///
/// # Errors
///
/// [`GpuError::Upload`] naming the buffer when the device refuses the write.
pub(crate) fn upload_bytes(
    context: &GpuContext,
    buffer: &DeviceBuffer,
    data: &[u8],
) -> Result<(), GpuError> {
    checked_upload(context, buffer.label(), data.len() as u64, || {
        context.queue.write_buffer(&buffer.buffer, 0, data);
        Ok(())
    })
}

/// Writes `count` rows of `W` floats, row `i` made by `row(i)`, into
/// `buffer` from its start, straight into the queue's staging memory in
/// chunks of rows built on the stack: no allocation, and copies the
/// compiler turns into plain memory moves. Nothing to write is no write.
///
/// # Errors
///
/// [`GpuError::Upload`] naming the buffer when the queue withholds the
/// staging view (the write does not fit the buffer, no staging memory, a
/// lost device): the device would otherwise compute on what the buffer
/// held before.
pub(crate) fn upload_rows<const W: usize>(
    context: &GpuContext,
    buffer: &DeviceBuffer,
    count: usize,
    row: impl Fn(usize) -> [f32; W],
) -> Result<(), GpuError> {
    /// Rows built per copy: 24 KiB of boxes.
    const CHUNK: usize = 1024;
    let bytes = (count * W * 4) as u64;
    let Some(size) = wgpu::BufferSize::new(bytes) else { return Ok(()) };
    checked_upload(context, buffer.label(), bytes, || {
        let refused = GpuError::Upload { buffer: buffer.label(), bytes, cause: None };
        let mut view = context.queue.write_buffer_with(&buffer.buffer, 0, size).ok_or(refused)?;
        let mut chunk = [[0f32; W]; CHUNK];
        for first in (0..count).step_by(CHUNK) {
            let rows = CHUNK.min(count - first);
            for (k, slot) in chunk[..rows].iter_mut().enumerate() {
                *slot = row(first + k);
            }
            let src: &[u8] = bytemuck::cast_slice(&chunk[..rows]);
            let at = first * W * 4;
            view.slice(at..at + src.len()).copy_from_slice(src);
        }
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::test_context;
    use wgpu::BufferUsages as Use;

    fn read_floats(context: &GpuContext, buffer: &DeviceBuffer, bytes: u64) -> Vec<f32> {
        let mut floats = Vec::new();
        read_back(context, [(&buffer.buffer, bytes)], |[words]| {
            floats.extend(words.iter().map(|&w| f32::from_bits(w)));
        })
        .unwrap();
        floats
    }

    #[test]
    fn floats_beyond_the_buffer_are_an_upload_error_naming_it() {
        let Some(context) = test_context() else { return };
        let buffer = DeviceBuffer::new(&context, "sixteen bytes", Use::MAP_READ | Use::COPY_DST);
        let refused = upload_rows(&context, &buffer, 2, |i| [3.0 * i as f32; 3]);
        assert!(
            matches!(
                refused,
                Err(GpuError::Upload {
                    buffer: "sixteen bytes",
                    bytes: 24,
                    cause: Some(wgpu::Error::Validation { .. }),
                })
            ),
            "{refused:?}"
        );
        // Refused is not half-written: what fits is written, and reads back.
        upload_rows(&context, &buffer, 4, |i| [i as f32 + 1.0]).unwrap();
        context.queue.submit([]);
        assert_eq!(read_floats(&context, &buffer, 16), [1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn rows_arrive_whole_and_in_order_across_chunks() {
        let Some(context) = test_context() else { return };
        // 2,500 rows: two whole chunks and part of a third, into a
        // storage buffer and read through a staging one, as the searches do.
        let bytes = 2500 * 12;
        let mut rows =
            DeviceBuffer::new(&context, "rows", Use::STORAGE | Use::COPY_DST | Use::COPY_SRC);
        let mut read = DeviceBuffer::new(&context, "read rows", Use::MAP_READ | Use::COPY_DST);
        rows.reserve(&context, bytes, u64::MAX);
        read.reserve(&context, bytes, u64::MAX);
        let row = |i: usize| [i as f32, -(i as f32), 0.5 * i as f32];
        upload_rows(&context, &rows, 2500, row).unwrap();
        let mut encoder = context.device.create_command_encoder(&Default::default());
        encoder.copy_buffer_to_buffer(&rows.buffer, 0, &read.buffer, 0, bytes);
        context.queue.submit([encoder.finish()]);
        let expected: Vec<f32> = (0..2500).flat_map(row).collect();
        assert_eq!(read_floats(&context, &read, bytes), expected);
    }

    #[test]
    fn bytes_beyond_the_buffer_are_an_upload_error_naming_it() {
        let Some(context) = test_context() else { return };
        let buffer = DeviceBuffer::new(&context, "sixteen bytes", Use::MAP_READ | Use::COPY_DST);
        let refused = upload_bytes(&context, &buffer, &[7; 20]);
        assert!(
            matches!(
                refused,
                Err(GpuError::Upload { buffer: "sixteen bytes", bytes: 20, cause: Some(_) })
            ),
            "{refused:?}"
        );
    }

    #[test]
    fn a_lost_device_is_an_upload_error_not_a_silent_no_op() {
        let Some(context) = test_context() else { return };
        let buffer = DeviceBuffer::new(&context, "points", Use::STORAGE | Use::COPY_DST);
        // A lost device reports no error to a scope, nor to wgpu's default
        // handler: the queue only withholds the staging view.
        context.device.destroy();
        let refused = upload_rows(&context, &buffer, 1, |_| [1.0; 4]);
        assert!(
            matches!(refused, Err(GpuError::Upload { buffer: "points", bytes: 16, .. })),
            "{refused:?}"
        );
        assert!(refused.unwrap_err().to_string().contains("points buffer"));
    }
}
