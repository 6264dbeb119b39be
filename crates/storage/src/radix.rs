//! A stable LSD radix sort of records by an integer key, its buffers kept
//! in [`Pool`]s across calls.

use crate::Pool;

/// Sorts `items` by `key(item)`, of which only the low `key_bits` bits may
/// be set, stably (records of equal keys keep their order): least
/// significant digit first, in as few passes of at most `max_digit_bits`
/// bits as cover the key, all passes' digits counted in one read. Each
/// pass is one scattered write of every record; `scratch` is the other
/// buffer and `counts` the digits' counts, both kept by the caller so that
/// a warm sort allocates nothing.
///
/// Where the whole key space is `key_bits` wide, this beats a comparison
/// sort from a few hundred records on (the persistent broad phase's pairs
/// by slots, the ECS contacts' changes by owner).
///
/// # Panics
///
/// If `max_digit_bits` is 0 or above 24 (a digit's counts must stay in
/// cache), or `key_bits` above 64.
///
/// # Examples
///
/// ```
/// use broadphase_storage::{Pool, radix_sort_by_key};
/// let mut pairs = vec![[3u32, 9], [1, 4], [3, 2], [1, 7]];
/// let (mut scratch, mut counts) = (Pool::new(), Pool::new());
/// // By the first index only (4 bits): equal keys keep their order.
/// radix_sort_by_key(&mut pairs, 4, 11, |p| u64::from(p[0]), &mut scratch, &mut counts);
/// assert_eq!(pairs, [[1, 4], [1, 7], [3, 9], [3, 2]]);
/// ```
pub fn radix_sort_by_key<T: Copy>(
    items: &mut [T],
    key_bits: u32,
    max_digit_bits: u32,
    key: impl Fn(&T) -> u64,
    scratch: &mut Pool<T>,
    counts: &mut Pool<u32>,
) {
    assert!((1..=24).contains(&max_digit_bits), "digits of 1 to 24 bits");
    assert!(key_bits <= u64::BITS, "keys of at most 64 bits");
    let Some(&first) = items.first() else { return };
    let key_bits = key_bits.max(1);
    let passes = key_bits.div_ceil(max_digit_bits);
    let digit_bits = key_bits.div_ceil(passes);
    let radix = 1usize << digit_bits;
    let mask = (radix - 1) as u64;

    counts.reset();
    counts.resize(passes as usize * radix, 0);
    for item in items.iter() {
        let k = key(item);
        for (pass, counts) in counts.chunks_exact_mut(radix).enumerate() {
            counts[((k >> (pass as u32 * digit_bits)) & mask) as usize] += 1;
        }
    }
    for counts in counts.chunks_exact_mut(radix) {
        let mut sum = 0;
        for c in counts {
            (*c, sum) = (sum, sum + *c);
        }
    }

    // Each pass writes every place (the offsets are a permutation), so what
    // the last sort left in the scratch need not be cleared.
    scratch.truncate(items.len());
    scratch.resize(items.len(), first);
    let (mut from, mut to) = (&mut *items, &mut scratch[..]);
    for (pass, offsets) in counts.chunks_exact_mut(radix).enumerate() {
        let shift = pass as u32 * digit_bits;
        for item in from.iter() {
            let at = &mut offsets[((key(item) >> shift) & mask) as usize];
            to[*at as usize] = *item;
            *at += 1;
        }
        core::mem::swap(&mut from, &mut to);
    }
    // An odd number of passes leaves the result in the scratch.
    if passes % 2 == 1 {
        items.copy_from_slice(scratch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A splitmix64 stream: the test's own random records.
    fn random(seed: &mut u64) -> u64 {
        *seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *seed;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Equals a stable comparison sort by the same key, for keys of every
    /// width from 1 to 64 bits (one to six passes, odd and even), digits
    /// of several widths, lengths from 0 up (the narrow keys with many
    /// equal ones), and with the buffers of a longer sort reused.
    #[test]
    fn equals_a_stable_sort_by_key() {
        let mut seed = 7;
        let (mut scratch, mut counts) = (Pool::new(), Pool::new());
        for key_bits in [1u32, 3, 11, 12, 13, 23, 34, 42, 64] {
            for max_digit_bits in [1, 8, 11, 12] {
                if key_bits.div_ceil(max_digit_bits) > 8 {
                    continue;
                }
                for len in [0, 1, 2, 100, 1_000] {
                    let mask = if key_bits == 64 { u64::MAX } else { (1 << key_bits) - 1 };
                    // (key, position): equal keys are told apart by their
                    // position, which a stable sort keeps in order.
                    let mut items: Vec<(u64, u32)> =
                        (0..len).map(|i| (random(&mut seed) & mask, i)).collect();
                    let mut expected = items.clone();
                    expected.sort_by_key(|item| item.0);
                    radix_sort_by_key(
                        &mut items,
                        key_bits,
                        max_digit_bits,
                        |item| item.0,
                        &mut scratch,
                        &mut counts,
                    );
                    assert_eq!(items, expected, "{key_bits} bits, digits of {max_digit_bits}");
                }
            }
        }
    }
}
