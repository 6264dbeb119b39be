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
use broadphase_storage::Pool;
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
}

impl Patch {
    /// Plans the list of every owner of `changes` (sorted here): its list
    /// in the published table (`published(owner)`) with the partners lost
    /// dropped and those gained merged in, sorted.
    pub(crate) fn plan<'a>(
        &mut self,
        changes: &mut [Change],
        published: impl Fn(Entity) -> &'a [Entity],
    ) {
        changes.sort_unstable();
        let Patch { owners, lists } = self;
        owners.reset();
        lists.reset();
        for group in changes.chunk_by(|x, y| x.0 == y.0) {
            let owner = group[0].0;
            let start = lists.len() as u32;
            merge(published(owner), group, lists);
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
        for &(owner, start, end) in self.owners.iter() {
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
        patch.plan(&mut changes(&[(a, b), (a, c)], &[]), |_| &[]);
        assert_eq!(patch.apply(&mut table, local), 0);
        assert_eq!(table.list(0, a), [b, c]);
        assert_eq!((table.list(1, b), table.list(2, c)), (&[a][..], &[a][..]));
        let lists =
            [table.list(0, a).to_vec(), table.list(1, b).to_vec(), table.list(2, c).to_vec()];
        patch.plan(&mut changes(&[], &[(a, b)]), |e| &lists[e.id() as usize]);
        // a's list and b's are replaced: 2 + 1 partners left unread.
        assert_eq!(patch.apply(&mut table, local), 3);
        assert_eq!(table.list(0, a), [c]);
        assert!(table.list(1, b).is_empty());
        assert_eq!(table.list(2, c), [a]);
    }
}
