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
pub fn reserve_huge<T>(buffer: &mut Vec<T>, len: usize) {
    let capacity = buffer.capacity();
    if capacity >= len {
        return;
    }
    let grown = len.max(capacity.saturating_mul(2));
    if grown.saturating_mul(size_of::<T>()) < HUGE_PAGE_MIN_BYTES {
        buffer.reserve(grown - buffer.len());
        return;
    }
    let mut moved: Vec<T> = Vec::with_capacity(grown);
    advise(moved.as_ptr().cast(), moved.capacity() * size_of::<T>());
    moved.append(buffer);
    *buffer = moved;
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
pub(crate) mod tests {
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

    /// Whether the mapping holding `address` is advised huge pages (`hg`
    /// among its flags in `/proc/self/smaps`); `None` where THP is off
    /// (the advice is then ignored) or the mapping is not found.
    #[cfg(target_os = "linux")]
    pub(crate) fn advised(address: usize) -> Option<bool> {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if !mode.is_ok_and(|mode| !mode.contains("[never]")) {
            return None;
        }
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut lines = smaps.lines();
        while let Some(line) = lines.next() {
            let Some((range, _)) = line.split_once(' ') else { continue };
            let Some((from, to)) = range.split_once('-') else { continue };
            let (Ok(from), Ok(to)) =
                (usize::from_str_radix(from, 16), usize::from_str_radix(to, 16))
            else {
                continue;
            };
            if (from..to).contains(&address) {
                let flags = lines.find(|line| line.starts_with("VmFlags:"))?;
                return Some(flags.split_whitespace().any(|flag| flag == "hg"));
            }
        }
        None
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_large_buffer_is_advised_where_the_kernel_offers_it() {
        let mut buffer: Vec<u8> = Vec::new();
        reserve_huge(&mut buffer, 16 << 20);
        buffer.resize(16 << 20, 1);
        let middle = buffer.as_ptr() as usize + (8 << 20);
        assert_ne!(advised(middle), Some(false), "the buffer's mapping is not advised");
        assert!(buffer.iter().all(|&b| b == 1));
    }
}
