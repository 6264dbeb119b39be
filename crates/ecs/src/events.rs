//! Pair order and the started/ended diff.
//!
//! Pairs are `(a, b)` with `a < b` by [`Entity`]'s `Ord` (its id, then its
//! generation), and a frame's list is sorted by that order: the broad
//! phase's proxies sit in slots numbered by entity id (see `proxies.rs`).

use broadphase_storage::Pool;
use hecs::Entity;
use std::cmp::Ordering;

/// Writes the pairs of `now` not in `prev` into `started`, and those of
/// `prev` not in `now` into `ended` (both cleared first, both sorted).
///
/// Both inputs must be sorted and free of repeats. A pair whose ids match
/// but whose generations differ (an entity despawned and its id reused) is
/// a different pair: it ends and the new one starts.
pub(crate) fn diff(
    prev: &[(Entity, Entity)],
    now: &[(Entity, Entity)],
    started: &mut Pool<(Entity, Entity)>,
    ended: &mut Pool<(Entity, Entity)>,
) {
    started.reset();
    ended.reset();
    let (mut i, mut j) = (0, 0);
    while i < prev.len() && j < now.len() {
        match prev[i].cmp(&now[j]) {
            Ordering::Less => {
                ended.push(prev[i]);
                i += 1;
            }
            Ordering::Greater => {
                started.push(now[j]);
                j += 1;
            }
            Ordering::Equal => {
                i += 1;
                j += 1;
            }
        }
    }
    ended.extend_from_slice(&prev[i..]);
    started.extend_from_slice(&now[j..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ordered(a: Entity, b: Entity) -> (Entity, Entity) {
        if a < b { (a, b) } else { (b, a) }
    }
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn entity(id: u32, generation: u32) -> Entity {
        Entity::from_bits((u64::from(generation) << 32) | u64::from(id)).expect("generation > 0")
    }

    #[test]
    fn reused_id_is_a_new_pair() {
        let prev = [(entity(1, 1), entity(2, 1))];
        let now = [(entity(1, 1), entity(2, 2))];
        let (mut started, mut ended) = (Pool::new(), Pool::new());
        diff(&prev, &now, &mut started, &mut ended);
        assert_eq!(started[..], now);
        assert_eq!(ended[..], prev);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

        /// The merge equals set difference.
        #[test]
        fn diff_is_set_difference(
            prev in proptest::collection::btree_set((0u32..40, 0u32..40, 1u32..3), 0..60),
            now in proptest::collection::btree_set((0u32..40, 0u32..40, 1u32..3), 0..60),
        ) {
            // One generation per id in each frame, as in a world.
            let to_pairs = |s: &BTreeSet<(u32, u32, u32)>| {
                let mut v: Vec<(Entity, Entity)> = s
                    .iter()
                    .filter(|(a, b, _)| a != b)
                    .map(|&(a, b, g)| ordered(entity(a, g), entity(b, 1)))
                    .collect();
                // Ids must carry one generation per frame: keep id a's first.
                let mut seen = std::collections::BTreeMap::new();
                v.retain(|(x, y)| {
                    [x, y].iter().all(|e| *seen.entry(e.id()).or_insert(e.to_bits()) == e.to_bits())
                });
                v.sort_unstable();
                v.dedup();
                v
            };
            let (p, n) = (to_pairs(&prev), to_pairs(&now));
            let (mut started, mut ended) = (Pool::new(), Pool::new());
            diff(&p, &n, &mut started, &mut ended);
            let ps: BTreeSet<_> = p.iter().copied().collect();
            let ns: BTreeSet<_> = n.iter().copied().collect();
            prop_assert_eq!(started.to_vec(), ns.difference(&ps).copied().collect::<Vec<_>>());
            prop_assert_eq!(ended.to_vec(), ps.difference(&ns).copied().collect::<Vec<_>>());
        }
    }
}
