//! Copies that write around the cache.
//!
//! A parallel fill moves each chunk of rows it buffered into the answer
//! once: the answer is written here and read by the caller much later, so
//! the lines it lands on need not be read first (an ordinary store reads
//! each line before it writes it) nor kept in the cache afterwards. On two
//! threads at a million particles these copies were a tenth of the fill's
//! time with ordinary stores; non-temporal stores, which combine into whole
//! lines on their way to memory, did the same copy in about half.

/// Copies below this many bytes use ordinary stores: the lines would have
/// to be read back soon after, and the fence costs more than it saves.
pub const STREAM_MIN_BYTES: usize = 16 << 10;

/// Copies `src` into `dst`, as `dst.copy_from_slice(src)` does, with
/// non-temporal stores where the CPU has them (every x86-64 does) and the
/// copy is at least [`STREAM_MIN_BYTES`]: the destination's lines are
/// neither read first nor left in the cache. For a destination nobody
/// reads soon (a large answer filled in pieces); anything else should use
/// `copy_from_slice`.
///
/// # Panics
///
/// If the two slices differ in length, as `copy_from_slice` does.
///
/// # Examples
///
/// ```
/// let src: Vec<u32> = (0..100_000).collect();
/// let mut dst = vec![0u32; 100_000];
/// broadphase_storage::copy_streaming(&mut dst, &src);
/// assert_eq!(dst, src);
/// ```
pub fn copy_streaming(dst: &mut [u32], src: &[u32]) {
    assert_eq!(dst.len(), src.len(), "copy_streaming: slices of different lengths");
    #[cfg(target_arch = "x86_64")]
    if std::mem::size_of_val(src) >= STREAM_MIN_BYTES {
        x86::copy_streaming_sse2(dst, src);
        return;
    }
    dst.copy_from_slice(src);
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};

    /// `u32`s per 16-byte store.
    const PER_STORE: usize = 4;

    /// The copy with 16-byte non-temporal stores (SSE2, part of x86-64):
    /// ordinary stores up to the first 16-byte boundary of `dst` and for
    /// the tail, streaming stores between.
    pub(super) fn copy_streaming_sse2(dst: &mut [u32], src: &[u32]) {
        debug_assert_eq!(dst.len(), src.len());
        let len = dst.len();
        let head = dst.as_ptr().align_offset(16).min(len);
        dst[..head].copy_from_slice(&src[..head]);
        let body = (len - head) / PER_STORE * PER_STORE;
        let (dst_body, src_body) = (&mut dst[head..head + body], &src[head..head + body]);
        for (to, from) in dst_body.chunks_exact_mut(PER_STORE).zip(src_body.chunks_exact(PER_STORE))
        {
            // SAFETY: `from` and `to` are four `u32`s (16 bytes) each, in
            // bounds; the load takes any alignment, and `to` starts at a
            // multiple of 16 bytes from `dst`'s first 16-byte boundary, so
            // the streaming store's alignment holds.
            unsafe {
                let lanes = _mm_loadu_si128(from.as_ptr().cast::<__m128i>());
                _mm_stream_si128(to.as_mut_ptr().cast::<__m128i>(), lanes);
            }
        }
        dst[head + body..].copy_from_slice(&src[head + body..]);
        // Streaming stores are ordered with nothing else: the fence makes
        // them visible before any later store, such as the release of a
        // lock that hands the destination to another thread.
        // SAFETY: a fence has no memory operands.
        unsafe { _mm_sfence() };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Copies `len` values from `src_skew` into a buffer at `dst_skew`
    /// and checks them, and that nothing outside the destination changed.
    fn check(src_skew: usize, dst_skew: usize, len: usize) {
        let source: Vec<u32> = (0..len as u32 + 8).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let src = &source[src_skew..][..len];
        let mut buffer = vec![u32::MAX; len + 16];
        copy_streaming(&mut buffer[dst_skew..dst_skew + len], src);
        let at = format!("src skew {src_skew}, dst skew {dst_skew}, len {len}");
        assert_eq!(&buffer[dst_skew..dst_skew + len], src, "{at}");
        assert!(buffer[..dst_skew].iter().all(|&v| v == u32::MAX), "before, {at}");
        assert!(buffer[dst_skew + len..].iter().all(|&v| v == u32::MAX), "after, {at}");
    }

    /// Equals `copy_from_slice` at every alignment of either end, for
    /// short copies and for lengths on both sides of the streaming
    /// threshold (a body of whole stores with every remainder).
    #[test]
    fn equals_copy_from_slice() {
        let threshold = STREAM_MIN_BYTES / 4;
        let lengths = (0..40).chain(threshold - 9..threshold + 9);
        for len in lengths {
            for src_skew in 0..8 {
                for dst_skew in 0..8 {
                    check(src_skew, dst_skew, len);
                }
            }
        }
    }

    #[test]
    fn large_copy_at_each_alignment() {
        let src: Vec<u32> = (0..300_000).collect();
        for skew in 0..4 {
            let mut dst = vec![0u32; src.len() + 4];
            copy_streaming(&mut dst[skew..skew + src.len()], &src);
            assert_eq!(&dst[skew..skew + src.len()], &src[..], "skew {skew}");
        }
    }

    #[test]
    #[should_panic(expected = "different lengths")]
    fn different_lengths_panic() {
        copy_streaming(&mut [0; 3], &[1, 2]);
    }
}
