//! The sharded merge ([`PairMerge::ShardedFastUnique`](super::PairMerge)):
//! the subtree jobs report every pair their leaves find, repeats included,
//! into one small set per box; the merge lists the sets in box order.
//!
//! Pair `[a, b]` (`a < b`) is kept as partner `b` in box `a`'s set. Box
//! `a`'s set lives in shard `a % shards` at place `a / shards`; each shard
//! is one [`FastUniqueSets`] behind its own mutex, so jobs that report
//! into different shards never wait for each other. A job sorts its pairs
//! by shard first ([`bucket`]) and takes each shard's lock once.

use broadphase_kernel::PairsError;
use broadphase_storage::{FastUniqueSets, Pool};
use parking_lot::Mutex;

/// One shard: the sets of the boxes whose id is the shard's index modulo
/// the shard count. Aligned so that two shards' locks never share a cache
/// line.
#[derive(Debug, Default)]
#[repr(align(64))]
pub(crate) struct Shard {
    sets: FastUniqueSets,
    /// Pairs held, over all the shard's sets.
    unique: usize,
    /// The spill's `(place, partner)` keys, sorted for the merge.
    spilled: Pool<u64>,
    /// How far the merge has read `spilled`.
    read: usize,
}

/// Every box's set of partners, sharded; kept across frames.
#[derive(Debug, Default)]
pub(crate) struct ShardedSets {
    shards: Vec<Mutex<Shard>>,
    /// log2 of the shard count in use.
    bits: u32,
    boxes: usize,
    /// One box's partners, sorted, while the merge lists it.
    partners: Pool<u32>,
}

impl ShardedSets {
    /// The shard count for `threads` threads: a power of two, at least 4
    /// per thread, so that two jobs seldom want the same shard at once.
    pub(crate) fn shard_count(threads: usize) -> usize {
        (4 * threads.max(1)).next_power_of_two()
    }

    /// Empties every set and makes one per box of `boxes`, in
    /// [`shard_count(threads)`](ShardedSets::shard_count) shards.
    pub(crate) fn reset(&mut self, boxes: usize, threads: usize) {
        let count = Self::shard_count(threads);
        while self.shards.len() < count {
            self.shards.push(Mutex::default());
        }
        self.bits = count.trailing_zeros();
        self.boxes = boxes;
        for (index, shard) in self.shards[..count].iter_mut().enumerate() {
            let shard = shard.get_mut();
            shard.sets.reset((boxes + count - 1 - index) / count);
            shard.unique = 0;
        }
    }

    /// Shards in use this frame.
    pub(crate) fn count(&self) -> usize {
        1 << self.bits
    }

    /// Adds pairs `[a, b]` (`a < b`) whose first box is in shard `shard`.
    pub(crate) fn insert(&self, shard: usize, pairs: &[[u32; 2]]) {
        let mut shard = self.shards[shard].lock();
        let Shard { sets, unique, .. } = &mut *shard;
        for &[a, b] in pairs {
            debug_assert!(a < b);
            *unique += usize::from(sets.insert(a >> self.bits, b));
        }
    }

    /// Writes every set's pairs into `out` (cleared first), sorted by the
    /// first box, then the second.
    ///
    /// # Errors
    /// [`PairsError::OutOfMemory`] when `out` could not grow (then empty).
    pub(crate) fn drain_into(&mut self, out: &mut Vec<[u32; 2]>) -> Result<(), PairsError> {
        out.clear();
        let count = self.count();
        let shards = &mut self.shards[..count];
        let total = shards.iter_mut().map(|s| s.get_mut().unique).sum();
        broadphase_storage::try_reserve_huge(out, total)
            .map_err(|_| PairsError::OutOfMemory { found: 0 })?;
        for shard in shards.iter_mut() {
            let Shard { sets, spilled, read, .. } = shard.get_mut();
            spilled.reset();
            spilled.extend(sets.spilled_values().map(|(at, b)| u64::from(at) << 32 | u64::from(b)));
            spilled.sort_unstable();
            *read = 0;
        }
        for a in 0..self.boxes as u32 {
            let index = (a as usize) & (count - 1);
            let shard = shards[index].get_mut();
            let at = a >> self.bits;
            let inline = shard.sets.inline_values(at);
            if inline.is_empty() {
                continue;
            }
            self.partners.reset();
            self.partners.extend_from_slice(inline);
            // The spill is read in order of place, as the boxes come.
            while let Some(&key) = shard.spilled.get(shard.read)
                && (key >> 32) as u32 == at
            {
                self.partners.push(key as u32);
                shard.read += 1;
            }
            self.partners.sort_unstable();
            out.extend(self.partners.iter().map(|&b| [a, b]));
        }
        debug_assert_eq!(out.len(), total);
        Ok(())
    }
}

/// Sorts `pairs` into `bucketed` by the shard of their first box (`shards`
/// is a power of two), stable, and writes where each shard's run ends into
/// `ends` (`shards` entries).
///
/// # Errors
/// [`PairsError::OutOfMemory`] when `bucketed` could not grow.
pub(crate) fn bucket(
    pairs: &[[u32; 2]],
    shards: usize,
    bucketed: &mut Pool<[u32; 2]>,
    ends: &mut [usize],
) -> Result<(), PairsError> {
    debug_assert!(shards.is_power_of_two() && ends.len() == shards);
    let mask = shards - 1;
    ends.fill(0);
    for &[a, _] in pairs {
        ends[a as usize & mask] += 1;
    }
    // Starts first, then each pair moves its shard's start on to its end.
    let mut start = 0;
    for end in ends.iter_mut() {
        let len = *end;
        *end = start;
        start += len;
    }
    bucketed.reset();
    bucketed.try_reserve(pairs.len()).map_err(|_| PairsError::OutOfMemory { found: 0 })?;
    bucketed.resize(pairs.len(), [0; 2]);
    for &pair in pairs {
        let at = &mut ends[pair[0] as usize & mask];
        bucketed[*at] = pair;
        *at += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_groups_by_shard_keeping_order() {
        let pairs = [[5, 6], [0, 1], [4, 9], [3, 7], [1, 2], [8, 9]];
        let (mut bucketed, mut ends) = (Pool::new(), [0; 4]);
        bucket(&pairs, 4, &mut bucketed, &mut ends).unwrap();
        assert_eq!(bucketed[..], [[0, 1], [4, 9], [8, 9], [5, 6], [1, 2], [3, 7]]);
        assert_eq!(ends, [3, 5, 5, 6]);
    }

    #[test]
    fn sets_drop_repeats_and_list_sorted() {
        let mut sets = ShardedSets::default();
        sets.reset(40, 1);
        assert_eq!(sets.count(), 4);
        // Box 1 has 30 partners (it spills), each reported three times.
        let mut pairs: Vec<[u32; 2]> = (0..3).flat_map(|_| (2..32).rev().map(|b| [1, b])).collect();
        pairs.extend([[6, 7], [2, 39], [6, 7], [0, 1]]);
        let (mut bucketed, mut ends) = (Pool::new(), [0; 4]);
        bucket(&pairs, 4, &mut bucketed, &mut ends).unwrap();
        let mut start = 0;
        for (shard, &end) in ends.iter().enumerate() {
            sets.insert(shard, &bucketed[start..end]);
            start = end;
        }
        let mut out = vec![[9, 9]];
        sets.drain_into(&mut out).unwrap();
        let mut expected: Vec<[u32; 2]> = (2..32).map(|b| [1, b]).collect();
        expected.extend([[0, 1], [2, 39], [6, 7]]);
        expected.sort_unstable();
        assert_eq!(out, expected);
        sets.reset(40, 3);
        assert_eq!(sets.count(), 16);
        sets.drain_into(&mut out).unwrap();
        assert!(out.is_empty(), "a reset empties every set");
    }
}
