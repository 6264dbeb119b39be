//! A hint to start loading a cache line before it is needed.

/// Asks the CPU to start loading the cache line holding `p` into every
/// cache level, so that a load or store of it a little later does not
/// wait: for loops whose addresses are known some iterations ahead (a
/// scatter's destination, a lookup by the id of a pair further down the
/// list). Any address is allowed, even one past the end of an allocation
/// or null: a prefetch never faults and changes nothing a program can
/// observe but its speed. A no-op off x86-64.
///
/// # Examples
///
/// ```
/// let table: Vec<u64> = (0..1000).collect();
/// let lookups = [5usize, 900, 17];
/// let mut sum = 0;
/// for (i, &at) in lookups.iter().enumerate() {
///     if let Some(&later) = lookups.get(i + 1) {
///         broadphase_storage::prefetch(table.as_ptr().wrapping_add(later));
///     }
///     sum += table[at];
/// }
/// assert_eq!(sum, 922);
/// ```
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of the x86-64 baseline, and a prefetch reads
    // nothing architecturally: any address is allowed.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::prefetch;

    /// Any address is allowed: null, far past an allocation's end, the
    /// top of the address space.
    #[test]
    fn any_address_is_allowed() {
        let small = [1u32, 2, 3];
        prefetch(core::ptr::null::<u8>());
        prefetch(small.as_ptr().wrapping_add(1 << 40));
        prefetch(usize::MAX as *const u64);
        prefetch(small.as_ptr());
        assert_eq!(small, [1, 2, 3]);
    }
}
