//! Sorting fresh candidate pairs into slot order: an LSD radix sort,
//! by the whole pair or by its first slot and then each row.
//!
//! A pair `[a, b]` (`a < b`, slots) sorts as `(a, b)`, `bits` just wide
//! enough for the largest slot. Where the whole key `a << bits | b` takes
//! more than two passes of at most 14 bits and the pairs are no more than
//! the slots, the radix sort orders by `a` alone (two passes up to 28
//! bits, where the whole key took three and a copy back: an odd count of
//! passes leaves the records in the scratch), and an insertion sort over
//! the list, which moves a record only within its row, finishes the order
//! in about one read. Random pairs, one thread's run, medians:
//!
//! | slots | pairs | whole key | by rows |
//! | ---: | ---: | ---: | ---: |
//! | 1,050,000 | 282,000 (the 1M game loop) | 2.95 ms | 1.66 ms |
//! | 1,050,000 | 525,000 | 5.60 | 3.75 |
//! | 1,050,000 | 1,050,000 | 10.95 | 11.20 |
//! | 200,000 | 200,000 | 1.63 | 1.42 |
//! | 20,000 | 35,000 (the dense20k bench) | 0.18 | 0.29 |
//!
//! A list whose rows are long (one huge box touching thousands) stops the
//! insertion sort at a bound of moves and finishes with a comparison sort.

use broadphase_storage::{Pool, radix_sort_by_key};

/// Below this many pairs a comparison sort is cheaper than clearing the
/// digit histograms.
const RADIX_MIN: usize = 256;
/// Widest digit: a 16,384-entry histogram per pass (64 KB) stays in L2.
/// Slots of up to 28 bits (268 million) sort in two passes.
const MAX_DIGIT_BITS: u32 = 14;
/// Record moves per pair the row pass may make before it hands the list
/// to a comparison sort (a row of `k` pairs in random order costs about
/// `k² / 4` moves).
const MOVES_PER_PAIR: usize = 4;

/// Reusable buffers of the radix sort.
#[derive(Debug, Default)]
pub(crate) struct PairSort {
    scratch: Pool<[u32; 2]>,
    counts: Pool<u32>,
}

impl PairSort {
    /// Sorts `pairs` (each `[a, b]` with `a < b`) by `(a, b)`.
    pub(crate) fn sort(&mut self, pairs: &mut [[u32; 2]]) {
        if pairs.len() < RADIX_MIN {
            pairs.sort_unstable();
            return;
        }
        let max_slot = pairs.iter().fold(0, |m, &[_, b]| m.max(b));
        let slot_bits = (u32::BITS - max_slot.leading_zeros()).max(1);
        let (scratch, counts) = (&mut self.scratch, &mut self.counts);
        // The whole key where it takes two passes anyway, or where rows
        // average more than one pair: there the row pass costs more than
        // the third radix pass.
        if slot_bits <= MAX_DIGIT_BITS || pairs.len() > max_slot as usize + 1 {
            let key = |&[a, b]: &[u32; 2]| (u64::from(a) << slot_bits) | u64::from(b);
            radix_sort_by_key(pairs, 2 * slot_bits, MAX_DIGIT_BITS, key, scratch, counts);
            return;
        }
        radix_sort_by_key(
            pairs,
            slot_bits,
            MAX_DIGIT_BITS,
            |&[a, _]| u64::from(a),
            scratch,
            counts,
        );
        sort_rows(pairs);
    }
}

/// Puts `pairs`, sorted by their first slot, in `(a, b)` order.
fn sort_rows(pairs: &mut [[u32; 2]]) {
    let key = |[a, b]: [u32; 2]| (u64::from(a) << 32) | u64::from(b);
    let budget = MOVES_PER_PAIR * pairs.len();
    let mut moves = 0;
    for i in 1..pairs.len() {
        let pair = pairs[i];
        let pair_key = key(pair);
        if pair_key >= key(pairs[i - 1]) {
            continue;
        }
        // The list is sorted by `a`: the walk back stops inside the row.
        let mut at = i;
        while at > 0 && key(pairs[at - 1]) > pair_key {
            pairs[at] = pairs[at - 1];
            at -= 1;
        }
        pairs[at] = pair;
        moves += i - at;
        if moves > budget {
            pairs.sort_unstable();
            return;
        }
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The row pass on `pairs` sorted by their first slot, and the whole
    /// sort, both give the comparison sort's order.
    fn rows_and_whole_sort_in_order(mut pairs: Vec<[u32; 2]>) {
        let mut expected = pairs.clone();
        expected.sort_unstable();
        let mut rows = pairs.clone();
        rows.sort_by_key(|&[a, _]| a);
        sort_rows(&mut rows);
        assert_eq!(rows, expected, "the row pass");
        PairSort::default().sort(&mut pairs);
        assert_eq!(pairs, expected, "the whole sort");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// Equals a comparison sort, below and above the radix threshold,
        /// with small and large slots.
        #[test]
        fn equals_comparison_sort(
            raw in prop::collection::vec((0u32..5_000, 0u32..5_000), 0..2_000),
            shift in 0u32..16,
        ) {
            let mut pairs: Vec<[u32; 2]> = raw
                .iter()
                .filter(|(a, b)| a != b)
                .map(|&(a, b)| [a.min(b) << shift, a.max(b) << shift])
                .collect();
            let mut expected = pairs.clone();
            expected.sort_unstable();
            PairSort::default().sort(&mut pairs);
            prop_assert_eq!(pairs, expected);
        }

        /// Equals a comparison sort where rows are long (few first slots,
        /// so the row pass often runs out of moves and hands over), with
        /// repeated pairs: the row pass on its own, and the whole sort.
        #[test]
        fn long_rows_equal_comparison_sort(
            raw in prop::collection::vec((0u32..24, 0u32..100_000), 256..3_000),
        ) {
            rows_and_whole_sort_in_order(raw.iter().map(|&(a, b)| [a, a + 1 + b]).collect());
        }
    }

    /// One box touching thousands, listed in reverse: the row pass stops
    /// at its bound of moves and the comparison sort finishes.
    #[test]
    fn one_huge_row_in_reverse() {
        let mut pairs: Vec<[u32; 2]> = (1..20_000u32).rev().map(|b| [0, b]).collect();
        pairs.extend((1..500u32).map(|a| [a, a + 7]));
        rows_and_whole_sort_in_order(pairs);
    }

    /// Sparse pairs of wide slots (sorted by rows), dense ones and narrow
    /// slots (by the whole key) all come out in order.
    #[test]
    fn sparse_dense_and_narrow_lists() {
        let mut seed = 3u64;
        let mut next = |below: u32| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((seed >> 33) % u64::from(below)) as u32
        };
        for (slots, count) in
            [(1 << 20, 5_000), (1 << 20, 2_000_000), (5_000, 20_000), (1 << 16, 1_000)]
        {
            let mut pairs: Vec<[u32; 2]> = (0..count)
                .map(|_| {
                    let (a, b) = (next(slots), next(slots));
                    if a == b { [a, a + 1] } else { [a.min(b), a.max(b)] }
                })
                .collect();
            let mut expected = pairs.clone();
            expected.sort_unstable();
            PairSort::default().sort(&mut pairs);
            assert_eq!(pairs, expected, "{slots} slots, {count} pairs");
        }
    }

    /// Rows of a few pairs each in every order: the insertion sort alone.
    #[test]
    fn short_rows_within_budget() {
        let mut pairs = Vec::new();
        for a in 0..2_000u32 {
            for b in [5, 1, 4, 2, 3].into_iter().take((a % 6) as usize) {
                pairs.push([a, a + b]);
            }
        }
        rows_and_whole_sort_in_order(pairs);
    }

    #[test]
    fn largest_slots() {
        let mut pairs: Vec<[u32; 2]> =
            (0..1_000u32).map(|i| [u32::MAX - 2 * i - 1, u32::MAX - i]).collect();
        let mut expected = pairs.clone();
        expected.sort_unstable();
        PairSort::default().sort(&mut pairs);
        assert_eq!(pairs, expected);
    }
}
