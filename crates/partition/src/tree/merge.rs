//! Merging the subtrees' pairs into one deterministic list.
//!
//! No pair is found twice (each leaf reports only the pairs whose reference
//! point it holds), so the merge is one pass: the subtrees' lists sorted by
//! their place in the tree and concatenated.

use broadphase_storage::Pool;

/// Every subtree's pairs in one buffer, with where each subtree's run is;
/// both keep their memory from one frame to the next (a scene's pair and
/// region counts do not depend on the threads, so they settle).
#[derive(Debug)]
pub(crate) struct PairArena<K: Copy> {
    pairs: Pool<[u32; 2]>,
    /// Per subtree: its key, and its run in `pairs` (start, end).
    runs: Pool<(K, usize, usize)>,
}

impl<K: Copy> Default for PairArena<K> {
    fn default() -> Self {
        PairArena { pairs: Pool::new(), runs: Pool::new() }
    }
}

impl<K: Ord + Copy> PairArena<K> {
    /// Adds one subtree's pairs.
    pub(crate) fn push(&mut self, key: K, pairs: &[[u32; 2]]) {
        let start = self.pairs.extend_from_slice(pairs);
        self.runs.push((key, start, self.pairs.len()));
    }

    /// Writes the subtrees' pairs into `out` (cleared first) in key order,
    /// and empties the arena.
    pub(crate) fn drain_into(&mut self, out: &mut Vec<[u32; 2]>) {
        self.runs.sort_unstable_by_key(|&(key, _, _)| key);
        out.clear();
        out.reserve(self.pairs.len());
        for &(_, start, end) in &self.runs {
            out.extend_from_slice(&self.pairs[start..end]);
        }
        self.clear();
    }

    /// Empties the arena.
    pub(crate) fn clear(&mut self) {
        self.pairs.reset();
        self.runs.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
