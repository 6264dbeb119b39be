//! Merging the regions' pairs into one deterministic list.
//!
//! With the reference-point rule (the default) no pair is found twice, so
//! the merge is one pass: the regions' lists sorted by tree key and
//! concatenated. With [`RegionDedup::ShardedFastUnique`](super::RegionDedup)
//! every region first passes its pairs through [`Shards`]: per-box
//! `FastUnique` sets behind `parking_lot` mutexes, sharded by the smaller
//! box id, keeping a pair only the first time it is seen; the result is
//! then sorted, since which region kept a pair depends on timing.

use std::ops::Range;

use broadphase_storage::FastUniqueSets;
use parking_lot::Mutex;

/// Shards of the per-box partner sets (a power of two).
const SHARDS: usize = 64;
const SHARD_BITS: u32 = SHARDS.trailing_zeros();

/// Per-box `FastUnique` partner sets split over mutexes by box id: box `a`
/// lives in shard `a % 64`, as set `a / 64`.
#[derive(Debug, Default)]
pub(crate) struct Shards {
    shards: Vec<Mutex<FastUniqueSets>>,
}

impl Shards {
    /// Empties every set, sized for ids `0..box_count`.
    pub(crate) fn reset(&mut self, box_count: usize) {
        if self.shards.is_empty() {
            self.shards = (0..SHARDS).map(|_| Mutex::new(FastUniqueSets::new())).collect();
        }
        let per_shard = box_count.div_ceil(SHARDS);
        for shard in &mut self.shards {
            shard.get_mut().reset(per_shard);
        }
    }

    /// Keeps in `pairs` (each `[a, b]`, `a < b`) only those no earlier call
    /// since the last reset has kept; groups them by shard first so each
    /// shard's mutex is taken once per call. Reorders `pairs`.
    pub(crate) fn keep_first(&self, pairs: &mut Vec<[u32; 2]>) {
        pairs.sort_unstable_by_key(|p| p[0] as usize % SHARDS);
        let mut kept = 0;
        let mut start = 0;
        while start < pairs.len() {
            let shard = pairs[start][0] as usize % SHARDS;
            let end = start
                + pairs[start..].iter().take_while(|p| p[0] as usize % SHARDS == shard).count();
            let mut sets = self.shards[shard].lock();
            for i in start..end {
                let [a, b] = pairs[i];
                if sets.insert(a >> SHARD_BITS, b) {
                    pairs[kept] = [a, b];
                    kept += 1;
                }
            }
            start = end;
        }
        pairs.truncate(kept);
    }
}

/// Every region's pairs in one buffer, with where each region's run is;
/// both keep their memory from one frame to the next (a scene's pair and
/// region counts do not depend on the threads, so they settle).
#[derive(Debug)]
pub(crate) struct PairArena<K> {
    pairs: Vec<[u32; 2]>,
    /// Per region: its key, and its run in `pairs`.
    runs: Vec<(K, Range<usize>)>,
}

impl<K> Default for PairArena<K> {
    fn default() -> Self {
        PairArena { pairs: Vec::new(), runs: Vec::new() }
    }
}

impl<K: Ord + Copy> PairArena<K> {
    /// Adds one region's pairs.
    pub(crate) fn push(&mut self, key: K, pairs: &[[u32; 2]]) {
        let start = self.pairs.len();
        self.pairs.extend_from_slice(pairs);
        self.runs.push((key, start..self.pairs.len()));
    }

    /// Writes the regions' pairs into `out` (cleared first) in key order,
    /// and empties the arena.
    pub(crate) fn drain_into(&mut self, out: &mut Vec<[u32; 2]>) {
        self.runs.sort_unstable_by_key(|(key, _)| *key);
        out.clear();
        out.reserve(self.pairs.len());
        for (_, run) in self.runs.drain(..) {
            out.extend_from_slice(&self.pairs[run]);
        }
        self.pairs.clear();
    }

    /// Empties the arena.
    pub(crate) fn clear(&mut self) {
        self.pairs.clear();
        self.runs.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_is_kept_once_across_calls() {
        let mut shards = Shards::default();
        shards.reset(1000);
        let mut first = vec![[1, 2], [65, 900], [3, 4], [1, 3]];
        shards.keep_first(&mut first);
        first.sort_unstable();
        assert_eq!(first, [[1, 2], [1, 3], [3, 4], [65, 900]]);
        let mut second = vec![[3, 4], [1, 2], [129, 130], [65, 900], [1, 4]];
        shards.keep_first(&mut second);
        second.sort_unstable();
        assert_eq!(second, [[1, 4], [129, 130]]);
        shards.reset(1000);
        let mut again = vec![[1, 2]];
        shards.keep_first(&mut again);
        assert_eq!(again, [[1, 2]]);
    }

    #[test]
    fn drains_in_key_order() {
        let mut arena = PairArena::default();
        arena.push(5u128, &[[5, 6]]);
        arena.push(1, &[[1, 2], [0, 9]]);
        arena.push(3, &[]);
        let mut out = vec![[7, 7]];
        arena.drain_into(&mut out);
        assert_eq!(out, [[1, 2], [0, 9], [5, 6]]);
        arena.push(2, &[[3, 4]]);
        arena.drain_into(&mut out);
        assert_eq!(out, [[3, 4]], "a drained arena starts empty");
    }
}
