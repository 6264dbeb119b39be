//! Per-entity contact lists changed by a run's events instead of built
//! anew: when few pairs started or ended, only the lists of the entities
//! they name change, and a run that rebuilt every list would pay for
//! every pair and every entity id of a world that is mostly at rest.
//!
//! The events reach each shard as half-pairs (`a` gains or loses `b`, `b`
//! gains or loses `a`), through the same sharded merge a build uses (see
//! `contacts.rs`). A shard's [`Patch`] sorts its half-pairs by owner and
//! merges each owner's with its published list into a new sorted list,
//! beside the published table. Publishing appends each new list to the
//! table's partner buffer and points the owner's span at it; the old list
//! stays in the buffer, unread, until the next full build, which is due
//! once that garbage outgrows the lists themselves.

use crate::contacts::Table;
use broadphase_storage::{Pool, prefetch, radix_sort_by_key};
use hecs::Entity;

/// `(owner, partner, gained)`: one side of a started (`true`) or ended
/// (`false`) pair.
pub(crate) type Change = (Entity, Entity, bool);

/// One shard's changed lists of a run, ready to publish.
#[derive(Debug, Default)]
pub(crate) struct Patch {
    /// Each changed owner with its new list, `lists[start..end]`.
    owners: Pool<(Entity, u32, u32)>,
    lists: Pool<Entity>,
    /// The radix sort's other buffer and digit counts.
    sorting: Pool<Change>,
    digits: Pool<u32>,
}

/// Below this many changes a comparison sort is cheaper than the radix
/// passes' counts.
const RADIX_MIN: usize = 256;
/// Widest digit of the radix sort by owner id: 2,048 counts stay in L1.
const MAX_DIGIT_BITS: u32 = 11;
/// How many changes ahead a plan asks for an owner's span and owner.
const SPANS_AHEAD: usize = 32;
/// How many changes ahead a plan asks for an owner's old list, whose
/// span was asked for `SPANS_AHEAD - LIST_AHEAD` changes before.
const LIST_AHEAD: usize = 16;

impl Patch {
    /// Plans the list of every owner of `changes` (sorted here): its list
    /// in the published `table` (`local(id)`: an entity id's index in it)
    /// with the partners lost dropped and those gained merged in, sorted.
    ///
    /// The owners are few and far apart in the table: each one's span,
    /// owner and old list were three cache misses, more than half of the
    /// pass (the 1M-particle game loop's 116,000 changes a frame). They
    /// are asked for ahead: the span and owner [`SPANS_AHEAD`] changes
    /// ahead, the list (whose place the span gives) [`LIST_AHEAD`] ahead.
    pub(crate) fn plan(
        &mut self,
        changes: &mut [Change],
        table: &Table,
        local: impl Fn(u32) -> usize,
    ) {
        sort_changes(changes, &mut self.sorting, &mut self.digits);
        let Patch { owners, lists, .. } = self;
        owners.reset();
        lists.reset();
        let mut at = 0;
        for group in changes.chunk_by(|x, y| x.0 == y.0) {
            if let Some(change) = changes.get(at + SPANS_AHEAD) {
                let ahead = local(change.0.id());
                prefetch(table.spans.as_ptr().wrapping_add(ahead));
                prefetch(table.owners.as_ptr().wrapping_add(ahead));
            }
            if let Some(change) = changes.get(at + LIST_AHEAD)
                && let Some(&[start, _]) = table.spans.get(local(change.0.id()))
            {
                prefetch(table.partners.as_ptr().wrapping_add(start as usize));
            }
            at += group.len();
            let owner = group[0].0;
            let start = lists.len() as u32;
            merge(table.list(local(owner.id()), owner), group, lists);
            owners.push((owner, start, lists.len() as u32));
        }
    }

    /// Forgets the plan.
    pub(crate) fn clear(&mut self) {
        self.owners.reset();
        self.lists.reset();
    }

    /// Writes the planned lists into `table` (`local(id)`: an entity id's
    /// index in it); returns how many partners of replaced lists were left
    /// unread in the table's buffer.
    pub(crate) fn apply(&self, table: &mut Table, local: impl Fn(u32) -> usize) -> usize {
        let mut unread = 0;
        for (k, &(owner, start, end)) in self.owners.iter().enumerate() {
            // The spans and owners it writes are far apart: asked for
            // ahead, as in `plan`.
            if let Some(&(ahead, _, _)) = self.owners.get(k + SPANS_AHEAD) {
                let ahead = local(ahead.id());
                prefetch(table.spans.as_ptr().wrapping_add(ahead));
                prefetch(table.owners.as_ptr().wrapping_add(ahead));
            }
            let local = local(owner.id());
            if table.spans.len() <= local {
                table.spans.resize(local + 1, [0, 0]);
            }
            if table.owners.len() <= local {
                table.owners.resize(local + 1, Entity::DANGLING);
            }
            let held = table.owners[local] == owner;
            if held {
                let [from, to] = table.spans[local];
                unread += to.saturating_sub(from) as usize;
            }
            if start == end {
                // Another entity of the same id may hold the slot now.
                if held {
                    table.spans[local] = [0, 0];
                }
                continue;
            }
            let at = table.partners.extend_from_slice(&self.lists[start as usize..end as usize]);
            table.spans[local] = [at as u32, table.partners.len() as u32];
            table.owners[local] = owner;
        }
        unread
    }
}

/// Sorts `changes` into the order of `sort_unstable`: a stable LSD radix
/// sort by owner id (two passes of at most 11 bits below four million
/// ids), then each run of one owner id, a few changes, sorted where it is
/// not already. The events arrive in pair order, so each owner's changes
/// are two sorted runs at most (those of started pairs, then those of
/// ended ones): the comparison sort of the whole shard (about 14
/// comparisons a change at 15,000 changes) becomes two streaming passes
/// and a check per change. A run may hold owners of one id and different
/// generations (a despawned entity's ended pairs beside its successor's
/// started ones); the run's sort orders those too.
fn sort_changes(changes: &mut [Change], scratch: &mut Pool<Change>, counts: &mut Pool<u32>) {
    if changes.len() < RADIX_MIN {
        changes.sort_unstable();
        return;
    }
    let max_id = changes.iter().fold(0, |m, change| m.max(change.0.id()));
    let id_bits = u32::BITS - max_id.leading_zeros();
    let owner = |change: &Change| u64::from(change.0.id());
    radix_sort_by_key(changes, id_bits, MAX_DIGIT_BITS, owner, scratch, counts);
    for run in changes.chunk_by_mut(|x, y| x.0.id() == y.0.id()) {
        if !run.is_sorted() {
            run.sort_unstable();
        }
    }
}

/// Appends to `out` the sorted list `old` with the changes of one owner
/// (sorted by partner) applied: partners lost dropped, partners gained
/// merged in.
fn merge(old: &[Entity], changes: &[Change], out: &mut Pool<Entity>) {
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < changes.len() {
        match (old.get(i), changes.get(j)) {
            (Some(&kept), Some(&(_, partner, gained))) if kept == partner => {
                // A partner both listed and gained is listed once.
                if gained {
                    out.push(kept);
                }
                i += 1;
                j += 1;
            }
            (Some(&kept), Some(&(_, partner, _))) if kept < partner => {
                out.push(kept);
                i += 1;
            }
            (Some(&kept), None) => {
                out.push(kept);
                i += 1;
            }
            (_, Some(&(_, partner, gained))) => {
                // A partner lost that was not listed is nothing to drop.
                if gained {
                    out.push(partner);
                }
                j += 1;
            }
            (None, None) => unreachable!("the loop runs while one side has items"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entity(id: u32) -> Entity {
        Entity::from_bits((1 << 32) | u64::from(id)).expect("generation 1")
    }

    /// A change from raw parts: owner id and generation, partner id and
    /// generation, gained.
    fn change(
        (owner, owner_gen, partner, partner_gen, gained): (u32, u32, u32, u32, bool),
    ) -> Change {
        let at = |id: u32, generation: u32| {
            Entity::from_bits((u64::from(generation) << 32) | u64::from(id))
                .expect("generation > 0")
        };
        (at(owner, owner_gen), at(partner, partner_gen), gained)
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 64,
            failure_persistence: None,
            ..proptest::prelude::ProptestConfig::default()
        })]

        /// The radix sort by owner, then by run, is `sort_unstable`: on
        /// any changes, below and above the radix threshold, small ids
        /// and ids up to `u32::MAX` (three passes), owners of one id with
        /// several generations, repeated partners.
        #[test]
        fn sort_changes_is_sort_unstable(
            raw in proptest::collection::vec(
                (0u32..600, 1u32..4, 0u32..600, 1u32..3, proptest::bool::ANY),
                0..1_500,
            ),
            shift in 0u32..23,
        ) {
            let mut changes: Vec<Change> = raw
                .iter()
                .map(|&(o, og, p, pg, g)| change((o << shift, og, p << shift, pg, g)))
                .collect();
            let mut expected = changes.clone();
            expected.sort_unstable();
            let (mut scratch, mut counts) = (Pool::new(), Pool::new());
            sort_changes(&mut changes, &mut scratch, &mut counts);
            proptest::prop_assert_eq!(&changes, &expected);
            // The scratch of a longer sort is reused whole.
            let mut again: Vec<Change> = changes.iter().rev().copied().collect();
            sort_changes(&mut again, &mut scratch, &mut counts);
            proptest::prop_assert_eq!(again, expected);
        }
    }

    /// Events in pair order give each owner at most two sorted runs; the
    /// sort keeps each owner's partners in order and every change once.
    #[test]
    fn sort_changes_orders_event_halves_by_owner_then_partner() {
        let started: Vec<(Entity, Entity)> =
            (0..400u32).map(|i| (entity(i), entity(i + 1 + i % 7))).collect();
        let ended: Vec<(Entity, Entity)> =
            (0..400u32).map(|i| (entity(i), entity(i + 9 + i % 5))).collect();
        let mut changes = changes(&started, &ended);
        let mut expected = changes.clone();
        expected.sort_unstable();
        let (mut scratch, mut counts) = (Pool::new(), Pool::new());
        sort_changes(&mut changes, &mut scratch, &mut counts);
        assert_eq!(changes, expected);
    }

    #[test]
    fn merge_drops_the_lost_and_adds_the_gained_in_order() {
        let old = [entity(1), entity(3), entity(5)];
        let owner = entity(0);
        let changes = [
            (owner, entity(2), true),
            (owner, entity(3), false),
            (owner, entity(4), false), // not listed: nothing to drop
            (owner, entity(5), true),  // already listed: once
            (owner, entity(9), true),
        ];
        let mut out = Pool::new();
        merge(&old, &changes, &mut out);
        assert_eq!(out.as_slice(), [entity(1), entity(2), entity(5), entity(9)]);
    }

    /// Both sides of each pair of `started` and `ended`.
    fn changes(started: &[(Entity, Entity)], ended: &[(Entity, Entity)]) -> Vec<Change> {
        let mut out = Vec::new();
        for (pairs, gained) in [(started, true), (ended, false)] {
            for &(a, b) in pairs {
                out.extend([(a, b, gained), (b, a, gained)]);
            }
        }
        out
    }

    #[test]
    fn apply_appends_new_lists_and_empties_lost_ones() {
        let (a, b, c) = (entity(0), entity(1), entity(2));
        let mut patch = Patch::default();
        let mut table = Table::default();
        let local = |id: u32| id as usize;
        patch.plan(&mut changes(&[(a, b), (a, c)], &[]), &Table::default(), local);
        assert_eq!(patch.apply(&mut table, local), 0);
        assert_eq!(table.list(0, a), [b, c]);
        assert_eq!((table.list(1, b), table.list(2, c)), (&[a][..], &[a][..]));
        patch.plan(&mut changes(&[], &[(a, b)]), &table, local);
        // a's list and b's are replaced: 2 + 1 partners left unread.
        assert_eq!(patch.apply(&mut table, local), 3);
        assert_eq!(table.list(0, a), [c]);
        assert!(table.list(1, b).is_empty());
        assert_eq!(table.list(2, c), [a]);
    }
}
