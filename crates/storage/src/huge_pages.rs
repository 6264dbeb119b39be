//! Large buffers backed by transparent huge pages where the kernel offers
//! them on request.
//!
//! Most Linux distributions ship transparent huge pages in `madvise` mode:
//! a process gets 2 MiB pages only for memory it has advised. A neighbor
//! search over a million particles walks 16 MB of sorted columns and
//! writes 120 MB of lists; with 4 KiB pages its loads and stores miss the
//! TLB often enough to cost about a tenth of the search. Buffers of at
//! least [`HUGE_PAGE_MIN_BYTES`] are therefore advised when they grow,
//! before the new memory is first touched. Elsewhere (other systems, or
//! THP off) the advice is a no-op, and it never changes what a buffer holds.

/// Buffers smaller than this are not advised: two huge pages, so that at
/// least one whole 2 MiB page lies inside any allocation of this size.
pub const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// Grows `buffer`'s capacity to at least `len` elements (amortised, as
/// [`Vec::reserve`] does). When the grown allocation is at least
/// [`HUGE_PAGE_MIN_BYTES`], it is a new one, advised huge pages before
/// anything is written to it, and the elements move there: a reallocation
/// in place would keep the old part on small pages. Call it before a
/// `resize` or `extend` that touches the new memory.
///
/// # Examples
///
/// ```
/// let mut entries: Vec<u32> = vec![1, 2];
/// broadphase_storage::reserve_huge(&mut entries, 3_000_000);
/// assert!(entries.capacity() >= 3_000_000);
/// assert_eq!(entries, [1, 2]);
/// entries.resize(3_000_000, 7);
/// assert_eq!(entries[2_999_999], 7);
/// ```
#[inline]
pub fn reserve_huge<T>(buffer: &mut Vec<T>, len: usize) {
    if buffer.capacity() < len && try_reserve_huge(buffer, len).is_err() {
        // Out of memory, or more than a `Vec` can hold: fail as `Vec` does.
        buffer.reserve(len - buffer.len());
    }
}

/// [`reserve_huge`] that reports an allocation failure instead of
/// aborting, as [`Vec::try_reserve`] does; `buffer` is then unchanged.
///
/// # Errors
///
/// [`TryReserveError`](std::collections::TryReserveError) when the grown
/// buffer cannot be allocated.
///
/// # Examples
///
/// ```
/// let mut pairs: Vec<[u32; 2]> = vec![[0, 1]];
/// broadphase_storage::try_reserve_huge(&mut pairs, 1_000_000).unwrap();
/// assert!(pairs.capacity() >= 1_000_000 && pairs == [[0, 1]]);
/// assert!(broadphase_storage::try_reserve_huge(&mut pairs, usize::MAX).is_err());
/// assert_eq!(pairs, [[0, 1]]);
/// ```
pub fn try_reserve_huge<T>(
    buffer: &mut Vec<T>,
    len: usize,
) -> Result<(), std::collections::TryReserveError> {
    let capacity = buffer.capacity();
    if capacity >= len {
        return Ok(());
    }
    let grown = len.max(capacity.saturating_mul(2));
    if grown.saturating_mul(size_of::<T>()) < HUGE_PAGE_MIN_BYTES {
        return buffer.try_reserve(grown - buffer.len()).or_else(|_| {
            // The doubled room may be what failed: the room asked for.
            buffer.try_reserve(len - buffer.len())
        });
    }
    let mut moved: Vec<T> = Vec::new();
    if moved.try_reserve_exact(grown).is_err() {
        moved.try_reserve_exact(len)?;
    }
    advise(moved.as_ptr().cast(), moved.capacity() * size_of::<T>());
    moved.append(buffer);
    *buffer = moved;
    Ok(())
}

/// Advises huge pages for the whole 2 MiB pages inside the `bytes` bytes
/// at `start` (an allocation this process owns), if at least
/// [`HUGE_PAGE_MIN_BYTES`].
fn advise(start: *const u8, bytes: usize) {
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    advise_linux(start, bytes);
    #[cfg(not(target_os = "linux"))]
    let _ = start;
}

#[cfg(target_os = "linux")]
fn advise_linux(start: *const u8, bytes: usize) {
    const HUGE_PAGE: usize = 2 << 20;
    let first = (start as usize).next_multiple_of(HUGE_PAGE);
    let end = (start as usize + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > first {
        // SAFETY: `first..end` lies inside an allocation the caller owns
        // (a live `Vec`'s capacity), page-aligned as madvise requires.
        // MADV_HUGEPAGE is advice about how to back those pages: it
        // neither reads nor changes their contents, and a kernel without
        // THP refuses it with an error that changes nothing (ignored).
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reserve_huge_grows_small_and_large_buffers_and_keeps_contents() {
        for len in [10, HUGE_PAGE_MIN_BYTES / 4 + 1, 3 * HUGE_PAGE_MIN_BYTES / 4] {
            let mut buffer: Vec<u32> = vec![1, 2, 3];
            reserve_huge(&mut buffer, len);
            assert!(buffer.capacity() >= len);
            assert_eq!(buffer, [1, 2, 3]);
            let capacity = buffer.capacity();
            reserve_huge(&mut buffer, len - 1);
            assert_eq!(buffer.capacity(), capacity, "no growth when it fits");
            buffer.resize(len, 9);
            assert_eq!(buffer[len - 1], 9);
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_large_buffer_is_advised_where_the_kernel_offers_it() {
        let mut buffer: Vec<u8> = Vec::new();
        reserve_huge(&mut buffer, 16 << 20);
        buffer.resize(16 << 20, 1);
        let middle = buffer.as_ptr() as usize + (8 << 20);
        assert_ne!(
            broadphase_testkit::huge_pages_advised(middle),
            Some(false),
            "the buffer's mapping is not advised"
        );
        assert!(buffer.iter().all(|&b| b == 1));
    }
}
