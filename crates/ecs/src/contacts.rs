//! Per-entity contact lists: every frame's pairs merged into one set of
//! partners per entity, on the plugin's job system, then laid out as
//! sorted slices for [`touching`](crate::BroadPhasePlugin::touching).
//!
//! **Shards.** The sets live in `shards` (a power of two,
//! `SHARDS_PER_THREAD` per thread, at most `MAX_SHARDS`), each a
//! [`FastUniqueSets`] behind its own `parking_lot::Mutex`. Entity id `i`
//! belongs to shard `i & (shards - 1)`, as set `i >> log2(shards)` there:
//! low bits, so ids spawned together (a pile, a batch) spread over every
//! shard.
//!
//! **Merge.** The pair list is cut into one piece per thread. A job
//! buckets its piece's half-pairs (`a` touches `b`, `b` touches `a`) by
//! shard, and within a shard by block of sets (`BLOCK_BITS`), in its own
//! scratch (a counting sort), then takes the shards one
//! by one, starting at a different shard per piece, locking each once
//! for its whole bucket: first every shard it can lock without waiting
//! (`try_lock`), then, waiting, those that were busy. A lock per pair
//! would cost more than the insert it guards. While it counts, the job
//! tests that its pairs are strictly increasing with `a < b`, which
//! proves its half-pairs distinct: then it inserts without the sets'
//! membership test ([`FastUniqueSets::extend_distinct`]); if any piece
//! finds otherwise, the sets are filled again with the testing insert.
//!
//! **Layout.** The piece that is the last to merge into a shard lays the
//! shard out at once, in the same job: for each set that holds a value
//! (the sets list those), its partner ids (inline slots and spill) copied
//! into one buffer, sorted where they may not be already, then all turned
//! into entities; a record per set (its entity and where its partners
//! start, written in order) and, per entity id, the place of its record.
//! [`Contacts::touching`] is the lookup of one record.
//!
//! The tables are built beside the published ones and swapped in only
//! when the whole frame succeeds, so a failed run leaves what
//! `touching` answers as it was, like every other output.

use broadphase_jobs::{JobError, JobSystem};
use broadphase_storage::FastUniqueSets;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use hecs::Entity;
use parking_lot::{Mutex, MutexGuard};

/// Shards per thread of the job system: several, so a job seldom finds
/// the shard it wants locked.
const SHARDS_PER_THREAD: usize = 4;

/// Most shards (a bit per shard in a `u64` mask).
const MAX_SHARDS: usize = 64;

/// Most pieces the pair list is cut into.
const MAX_PIECES: usize = 16;

/// Below this many pairs the calling thread merges them all: a job
/// costs more than it saves.
const PARALLEL_MIN: usize = 8 * 1024;

/// A shard's sets are filled block by block of `1 << BLOCK_BITS` sets
/// (32 KiB of inline slots): the half-pairs are bucketed by block, not
/// just by shard, so the inserts of a bucket stay in cache instead of
/// missing it once per partner found far away.
const BLOCK_BITS: u32 = 10;

/// Keeps each mutex and what it guards on cache lines of its own.
#[repr(align(128))]
#[derive(Default)]
struct Padded<T>(T);

/// One entity's partners in its shard's table: from `start` to the next
/// record's `start`.
#[derive(Clone, Copy, Debug)]
struct Record {
    /// The entity whose partners these are (`Entity::DANGLING` for the
    /// end marker).
    owner: Entity,
    start: usize,
}

/// One shard's published lists: entity id `i` of the shard, at local
/// index `l = i >> bits`, touches the partners of record
/// `records[record_of[l]]` if that record's owner is the entity asked
/// about.
#[derive(Debug, Default)]
struct Table {
    /// By local index, the entity's record in `records`; entries of sets
    /// not laid out this build are stale, and never cleared: they lead to
    /// some other entity's record (or none), which the owner tells apart.
    record_of: Vec<u32>,
    /// One per set that holds a value, in the order laid out, then an end
    /// marker.
    records: Vec<Record>,
    /// Every entity's partners, a sorted range each.
    partners: Vec<Entity>,
}

/// One shard: its sets being merged, and the table built from them.
#[derive(Default)]
struct Shard {
    sets: FastUniqueSets,
    /// The sets' spilled values, sorted by set (scratch of the layout).
    spilled: Vec<(u32, u32)>,
    /// Every set's partner ids, laid out as the entities will be, and 8
    /// more (scratch of the layout).
    ids: Vec<u32>,
    /// 1 + the last piece that inserted this build, 0 before any.
    inserted_by: usize,
    /// Whether every insert of this build was trusted and the pieces
    /// inserted in the order of their pairs: then every set is sorted.
    in_order: bool,
    building: Table,
}

impl Shard {
    /// Empties the sets, `locals` of them, for a build.
    fn reset(&mut self, locals: usize) {
        self.sets.reset(locals);
        self.inserted_by = 0;
        self.in_order = true;
    }

    /// Adds piece `piece`'s half-pairs of this shard, `trusted` if the
    /// pairs were proven strictly increasing.
    fn insert(&mut self, piece: usize, trusted: bool, half_pairs: &[(u32, u32)]) {
        // Trusted pieces, one after another in the order of their pairs,
        // give each set its partners in ascending order (see
        // `Pass::merge`).
        self.in_order &= trusted & (piece + 1 > self.inserted_by);
        self.inserted_by = piece + 1;
        if trusted {
            self.sets.extend_distinct(half_pairs);
        } else {
            half_pairs.iter().for_each(|&(local, partner)| _ = self.sets.insert(local, partner));
        }
    }
}

/// A shard behind its lock, and how many pieces have yet to merge into
/// it this build: the piece that brings it to 0 lays the shard out.
#[derive(Default)]
struct ShardCell {
    shard: Mutex<Shard>,
    pending: AtomicUsize,
}

/// A piece's scratch: its half-pairs bucketed by shard.
#[derive(Default)]
struct Piece {
    /// After the bucketing, `ends[b]` is where bucket `b` ends; bucket
    /// `shard * blocks + block` holds the half-pairs of that block of the
    /// shard's sets.
    ends: Vec<usize>,
    /// `(local index, partner id)` by shard, then block.
    half_pairs: Vec<(u32, u32)>,
}

/// Every entity's partners of the last published frame.
pub(crate) struct Contacts {
    /// log2 of the shard count.
    bits: u32,
    shards: Box<[Padded<ShardCell>]>,
    pieces: Box<[Padded<Mutex<Piece>>]>,
    /// The tables `touching` reads, by shard.
    published: Vec<Table>,
}

impl core::fmt::Debug for Contacts {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Contacts")
            .field("shards", &self.shards.len())
            .field("pieces", &self.pieces.len())
            .finish_non_exhaustive()
    }
}

impl Contacts {
    /// Shards and scratch for a job system of `threads` threads.
    pub(crate) fn new(threads: usize) -> Self {
        let threads = threads.max(1);
        let shards = (threads * SHARDS_PER_THREAD).next_power_of_two().min(MAX_SHARDS);
        let pieces = threads.min(MAX_PIECES);
        Self {
            bits: shards.trailing_zeros(),
            shards: (0..shards).map(|_| Padded::default()).collect(),
            pieces: (0..pieces).map(|_| Padded::default()).collect(),
            published: (0..shards).map(|_| Table::default()).collect(),
        }
    }

    /// How many shards the sets are split into.
    #[cfg(test)]
    fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// Builds every entity's partner list from `pairs` beside the
    /// published lists; [`publish`](Self::publish) then makes them
    /// current. `owners[i]` is the live entity of id `i`, and the pairs
    /// name ids below `owners.len()`. They are meant sorted and free of
    /// repeats (and are then merged faster), but any list gives exact
    /// lists.
    pub(crate) fn build(
        &mut self,
        jobs: &JobSystem,
        owners: &[Entity],
        pairs: &[(Entity, Entity)],
    ) -> Result<(), JobError> {
        let locals = owners.len().div_ceil(self.shards.len());
        let pieces =
            if pairs.len() < PARALLEL_MIN || jobs.threads() < 2 { 1 } else { self.pieces.len() };
        for cell in self.shards.iter_mut() {
            cell.0.shard.get_mut().reset(locals);
            *cell.0.pending.get_mut() = pieces;
        }
        let pass = self.pass(pieces, locals, owners, pairs);
        if pieces == 1 {
            pass.merge(0);
            return Ok(());
        }
        jobs.for_each(pieces, 1, |range, _worker| range.for_each(|piece| pass.merge(piece)))?;
        if pass.repeats.load(Ordering::Relaxed) {
            // Some pair is out of order or repeated: pieces that trusted
            // their own pairs may have listed a partner twice. Merge (and
            // lay out) again on this thread, testing every insert.
            for cell in pass.shards {
                cell.0.shard.lock().reset(locals);
                cell.0.pending.store(1, Ordering::Relaxed);
            }
            self.pass(1, locals, owners, pairs).merge(0);
        }
        Ok(())
    }

    /// What a build's passes read, for `pieces` pieces of `pairs`.
    fn pass<'a>(
        &'a self,
        pieces: usize,
        locals: usize,
        owners: &'a [Entity],
        pairs: &'a [(Entity, Entity)],
    ) -> Pass<'a> {
        Pass {
            bits: self.bits,
            blocks: locals.div_ceil(1 << BLOCK_BITS).max(1),
            shards: &self.shards,
            pieces: &self.pieces[..pieces],
            pairs,
            piece_len: pairs.len().div_ceil(pieces).max(1),
            owners,
            repeats: AtomicBool::new(false),
        }
    }

    /// Makes the lists of the last [`build`](Self::build) the ones
    /// [`touching`](Self::touching) reads.
    pub(crate) fn publish(&mut self) {
        for (shard, table) in self.shards.iter_mut().zip(&mut self.published) {
            core::mem::swap(&mut shard.0.shard.get_mut().building, table);
        }
    }

    /// The entities `entity` touches in the published frame, sorted;
    /// empty for an entity in no pair, unknown or despawned.
    #[inline]
    pub(crate) fn touching(&self, entity: Entity) -> &[Entity] {
        let id = entity.id() as usize;
        let table = &self.published[id & (self.published.len() - 1)];
        let Some(&record) = table.record_of.get(id >> self.bits) else {
            return &[];
        };
        let record = record as usize;
        match (table.records.get(record), table.records.get(record + 1)) {
            (Some(this), Some(next)) if this.owner == entity => {
                &table.partners[this.start..next.start]
            }
            _ => &[],
        }
    }
}

/// What both passes read.
struct Pass<'a> {
    bits: u32,
    /// Blocks of sets per shard.
    blocks: usize,
    shards: &'a [Padded<ShardCell>],
    pieces: &'a [Padded<Mutex<Piece>>],
    pairs: &'a [(Entity, Entity)],
    piece_len: usize,
    /// The live entity of each id.
    owners: &'a [Entity],
    /// Set by a piece whose pairs (with the one before them) are not
    /// strictly increasing: then half-pairs may repeat.
    repeats: AtomicBool,
}

impl Pass<'_> {
    /// Merges piece `piece` of the pairs into the shards' sets, and lays
    /// out each shard it is the last to merge into.
    ///
    /// **Trusted inserts.** If the pairs, by entity ids, are strictly
    /// increasing and each has `a < b`, no half-pair repeats: those with
    /// owner < partner are the `a`-halves of distinct pairs, the others
    /// the `b`-halves. The piece tests that on its own pairs and the one
    /// before them while it counts, and if it holds inserts with
    /// [`FastUniqueSets::extend_distinct`] (no membership test); if not,
    /// with the testing insert, and it says so in `repeats`: then the
    /// other pieces' trust was not earned, and `build` merges again. With
    /// every piece's test passed, the whole list is strictly increasing.
    ///
    /// **Sorted sets.** A trusted piece also gives each set its partners
    /// in ascending order: the counting sort keeps the pairs' order within
    /// a bucket, an entity `x`'s partners `y < x` come from pairs `(y, x)`,
    /// which precede its pairs `(x, z)`, and each kind comes in ascending
    /// order of the partner. Trusted pieces that take a shard in the order
    /// of their pairs keep every set sorted, and the layout then skips the
    /// test ([`Shard::insert`] keeps track).
    fn merge(&self, piece: usize) {
        let start = (piece * self.piece_len).min(self.pairs.len());
        let end = (start + self.piece_len).min(self.pairs.len());
        let pairs = &self.pairs[start..end];
        let mut scratch = self.pieces[piece].0.lock();
        let Piece { ends, half_pairs } = &mut *scratch;
        let shards = self.shards.len();
        let mask = shards - 1;
        let (bits, blocks) = (self.bits, self.blocks);
        // An id's block: its local index (id >> bits) >> BLOCK_BITS.
        let block_shift = bits + BLOCK_BITS;
        let bucket_of = |id: u32| (id as usize & mask) * blocks + (id >> block_shift) as usize;
        // Counting sort by shard and block: counts, starts, then each
        // half-pair at its bucket's cursor (which ends at the bucket's end).
        ends.clear();
        ends.resize(shards * blocks, 0);
        // A slice, not the Vec: its length and place stay in registers.
        let ends = &mut ends[..];
        let key = |(a, b): (Entity, Entity)| (u64::from(a.id()) << 32) | u64::from(b.id());
        // 0 is below every pair with a < b.
        let mut last = start.checked_sub(1).map_or(0, |before| key(self.pairs[before]));
        let mut distinct = true;
        for &(a, b) in pairs {
            let (a, b) = (a.id(), b.id());
            ends[bucket_of(a)] += 1;
            ends[bucket_of(b)] += 1;
            let next = (u64::from(a) << 32) | u64::from(b);
            distinct &= (next > last) & (a < b);
            last = next;
        }
        if !distinct {
            self.repeats.store(true, Ordering::Relaxed);
        }
        let mut sum = 0;
        for cursor in ends.iter_mut() {
            let count = *cursor;
            *cursor = sum;
            sum += count;
        }
        // Every place below `sum` is written: the buffer only grows.
        if half_pairs.len() < sum {
            half_pairs.resize(sum, (0, 0));
        }
        let half_pairs = &mut half_pairs[..sum];
        for &(a, b) in pairs {
            let (a, b) = (a.id(), b.id());
            for (owner, partner) in [(a, b), (b, a)] {
                let cursor = &mut ends[bucket_of(owner)];
                half_pairs[*cursor] = (owner >> bits, partner);
                *cursor += 1;
            }
        }
        // A shard's buckets are adjacent: it is locked once for them all.
        let bucket = |shard: usize| {
            let start = if shard == 0 { 0 } else { ends[shard * blocks - 1] };
            &half_pairs[start..ends[shard * blocks + blocks - 1]]
        };
        let insert =
            |shard: &mut Shard, bucket: &[(u32, u32)]| shard.insert(piece, distinct, bucket);
        // Each piece starts at its own shard; a busy shard waits for the
        // second round. The last piece done with a shard lays it out, at
        // once, while its sets are in this core's cache.
        let first = piece * shards / self.pieces.len();
        let mut busy = 0u64;
        for k in 0..shards {
            let shard = (first + k) & mask;
            let cell = &self.shards[shard].0;
            if bucket(shard).is_empty() {
                self.done_with(shard, None);
                continue;
            }
            match cell.shard.try_lock() {
                Some(mut locked) => {
                    insert(&mut locked, bucket(shard));
                    self.done_with(shard, Some(locked));
                }
                None => busy |= 1 << shard,
            }
        }
        while busy != 0 {
            let shard = busy.trailing_zeros() as usize;
            busy &= busy - 1;
            let mut locked = self.shards[shard].0.shard.lock();
            insert(&mut locked, bucket(shard));
            self.done_with(shard, Some(locked));
        }
    }

    /// Counts one more piece done with shard `shard` (whose lock it may
    /// hold); the last lays the shard out.
    fn done_with(&self, shard: usize, locked: Option<MutexGuard<'_, Shard>>) {
        let cell = &self.shards[shard].0;
        // AcqRel: the last piece sees every other piece's inserts (the
        // lock orders them too).
        if cell.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            let mut locked = locked.unwrap_or_else(|| cell.shard.lock());
            self.lay_out(shard, &mut locked);
        }
    }

    /// Lays shard `shard`'s sets out as its table of sorted entities.
    ///
    /// One pass over the sets that hold a value puts each set's partner
    /// ids, inline then spilled, at the next place of `ids`, sorts them
    /// where they are not already (ids in order are entities in order:
    /// live entities have distinct ids), and writes the set's record and
    /// its place under the set's local index. A second pass turns every
    /// id into its entity. The spill is sorted by set on the side, and a
    /// full set finds its part by binary search.
    ///
    /// A set's 8 inline slots are copied whole, whatever its count (the
    /// next set's ids overwrite the leftovers), and its order tested by
    /// masks: counts vary from set to set, and a branch on them would be
    /// guessed wrong about once a set. The writes go to the end of `ids`,
    /// `records` and `partners`, and 4 bytes per set to `record_of`.
    fn lay_out(&self, shard: usize, locked: &mut Shard) {
        const SLOTS: usize = FastUniqueSets::INLINE_SLOTS;
        let Shard { sets, spilled, ids, in_order, building, .. } = locked;
        let Table { record_of, records, partners } = building;
        if record_of.len() < sets.set_count() {
            record_of.resize(sets.set_count(), 0);
        }
        spilled.clear();
        if sets.spilled() > 0 {
            spilled.extend(sets.spilled_values());
            spilled.sort_unstable();
        }
        // Every place is written below: the ids and records only stand in.
        let values = sets.value_count();
        ids.resize(values + SLOTS, 0);
        let touched = sets.touched_sets();
        records.resize(touched.len() + 1, Record { owner: Entity::DANGLING, start: 0 });
        let owner_ids = OwnerIds { owners: self.owners, bits: self.bits, shard: shard as u32 };
        let (records, in_order) = (&mut records[..], *in_order);
        let start = lay_out_ids(sets, spilled, in_order, owner_ids, ids, records, record_of);
        records[touched.len()].start = start;
        // The entities: one tight pass.
        partners.resize(values, Entity::DANGLING);
        let owners = self.owners;
        partners.iter_mut().zip(&ids[..values]).for_each(|(to, &id)| *to = owners[id as usize]);
    }
}

/// The entity of each id, and how a shard's local index becomes an id.
#[derive(Clone, Copy)]
struct OwnerIds<'a> {
    owners: &'a [Entity],
    bits: u32,
    shard: u32,
}

/// The first pass of [`Pass::lay_out`]: every touched set's partner ids
/// into `ids`, its record and the record's place; returns where the ids
/// end. A function of its own so that its slices are known not to overlap
/// (else every write would make the compiler reload every slice's place).
#[inline(never)]
fn lay_out_ids(
    sets: &FastUniqueSets,
    spilled: &[(u32, u32)],
    in_order: bool,
    owners: OwnerIds<'_>,
    ids: &mut [u32],
    records: &mut [Record],
    record_of: &mut [u32],
) -> usize {
    const SLOTS: usize = FastUniqueSets::INLINE_SLOTS;
    let has_spill = !spilled.is_empty();
    let mut start = 0;
    for ((record, &local), place) in records.iter_mut().zip(sets.touched_sets()).zip(0u32..) {
        let (slots, len) = sets.inline_slots(local);
        let list = if has_spill && len == SLOTS {
            let from = spilled.partition_point(|&(set, _)| set < local);
            let more = &spilled[from..];
            let more = &more[..more.partition_point(|&(set, _)| set == local)];
            let list = &mut ids[start..start + SLOTS + more.len()];
            list[..SLOTS].copy_from_slice(slots);
            list[SLOTS..].iter_mut().zip(more).for_each(|(to, &(_, id))| *to = id);
            if !list.is_sorted() {
                sort_ids(list);
            }
            list
        } else {
            let list = &mut ids[start..start + SLOTS];
            list.copy_from_slice(slots);
            let list = &mut list[..len];
            if !in_order {
                // Bit j: slots j - 1 and j out of order; only those below
                // the count matter.
                let disorder = (1..SLOTS)
                    .fold(0u32, |bits, j| bits | (u32::from(slots[j - 1] >= slots[j]) << j));
                if disorder & ((1 << len) - 1) != 0 {
                    sort_ids(list);
                }
            }
            list
        };
        let owner = owners.owners[((local << owners.bits) | owners.shard) as usize];
        *record = Record { owner, start };
        // `place` fits: fewer records than sets, numbered by u32.
        record_of[local as usize] = place;
        start += list.len();
    }
    start
}

/// Sorts a set's partner ids, out of line: inlined, its early return for
/// fewer than 2 ids would become a branch on every set's count (guessed
/// wrong about once a set) ahead of the test that calls it.
#[cold]
#[inline(never)]
fn sort_ids(ids: &mut [u32]) {
    ids.sort_unstable();
}

/// The merge, one job per piece of the pair list.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_counts_are_powers_of_two_several_per_thread() {
        for threads in [0, 1, 2, 3, 4, 8, 16, 64] {
            let contacts = Contacts::new(threads);
            let shards = contacts.shard_count();
            assert!(shards.is_power_of_two(), "{threads} threads: {shards}");
            assert!(shards >= SHARDS_PER_THREAD.min(MAX_SHARDS));
            assert!(shards >= (threads * SHARDS_PER_THREAD).min(MAX_SHARDS), "{threads}");
            assert_eq!(1 << contacts.bits, shards);
        }
    }

    #[test]
    fn nothing_touches_before_a_build() {
        let contacts = Contacts::new(2);
        let entity = Entity::from_bits(1 << 32).expect("generation 1");
        assert!(contacts.touching(entity).is_empty());
    }

    use proptest::prelude::*;
    use std::collections::BTreeSet;

    /// Entity `id` of generation `generation` (from 1).
    fn entity(id: u32, generation: u32) -> Entity {
        Entity::from_bits((u64::from(generation) << 32) | u64::from(id)).expect("generation >= 1")
    }

    /// SplitMix64, for pair lists too long to draw one by one.
    fn next(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// How a drawn pair list breaks (or keeps) the plugin's promise:
    /// sorted, no repeats, `a < b`.
    #[derive(Clone, Copy, Debug)]
    enum Shape {
        Promised,
        /// Promised, with one pair repeated somewhere later.
        OneRepeat,
        /// Promised, with one pair's ends swapped.
        OneSwapped,
        /// Any order, repeats, swapped ends and entities paired with
        /// themselves.
        Anything,
    }

    /// `count` pairs over ids `0..ids` (generation 1 + id % 3), of shape
    /// `shape`.
    fn draw(
        seed: u64,
        ids: u32,
        count: usize,
        shape: Shape,
    ) -> (Vec<Entity>, Vec<(Entity, Entity)>) {
        let owners: Vec<Entity> = (0..ids).map(|id| entity(id, 1 + id % 3)).collect();
        let mut state = seed;
        let id = |state: &mut u64| (next(state) % u64::from(ids)) as u32;
        let mut pairs: Vec<(u32, u32)> = Vec::with_capacity(count + 1);
        match shape {
            Shape::Anything => {
                pairs.extend((0..count).map(|_| (id(&mut state), id(&mut state))));
                // Some repeats for sure.
                let repeats: Vec<_> = pairs.iter().step_by(7).copied().collect();
                pairs.extend(repeats);
            }
            _ => {
                let mut set = BTreeSet::new();
                while set.len() < count && ids > 1 {
                    let (a, b) = (id(&mut state), id(&mut state));
                    if a != b {
                        set.insert((a.min(b), a.max(b)));
                    }
                }
                pairs.extend(set);
                if !pairs.is_empty() {
                    let at = (next(&mut state) % pairs.len() as u64) as usize;
                    match shape {
                        Shape::OneRepeat => {
                            // Later in the list (in a later piece when the
                            // list is long), so that earlier pieces trust
                            // their own pairs.
                            let to = at + (next(&mut state) % (pairs.len() - at) as u64) as usize;
                            pairs.insert(to + 1, pairs[at]);
                        }
                        Shape::OneSwapped => pairs[at] = (pairs[at].1, pairs[at].0),
                        _ => {}
                    }
                }
            }
        }
        let pairs =
            pairs.into_iter().map(|(a, b)| (owners[a as usize], owners[b as usize])).collect();
        (owners, pairs)
    }

    /// Every id's partners in `pairs`, as sorted entities.
    fn brute_force(owners: &[Entity], pairs: &[(Entity, Entity)]) -> Vec<Vec<Entity>> {
        let mut sets = vec![BTreeSet::new(); owners.len()];
        for &(a, b) in pairs {
            sets[a.id() as usize].insert(b);
            sets[b.id() as usize].insert(a);
        }
        sets.into_iter().map(|set| set.into_iter().collect()).collect()
    }

    /// Builds and publishes, then checks every id's list (and a stale
    /// handle of every id) against brute force.
    fn check(
        contacts: &mut Contacts,
        jobs: &JobSystem,
        owners: &[Entity],
        pairs: &[(Entity, Entity)],
    ) {
        contacts.build(jobs, owners, pairs).expect("no job panics");
        contacts.publish();
        for (expected, &owner) in brute_force(owners, pairs).iter().zip(owners) {
            assert_eq!(contacts.touching(owner), expected, "{owner:?}, {} pairs", pairs.len());
            let stale = entity(owner.id(), (owner.to_bits().get() >> 32) as u32 + 7);
            assert!(contacts.touching(stale).is_empty());
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

        /// The lists are exact for any pair list, the promised one or not,
        /// on the calling thread (short lists) and in pieces on every
        /// thread (long ones: a repeat in a late piece makes the earlier,
        /// trusting pieces merge again), frame after frame on the same
        /// buffers.
        #[test]
        fn lists_are_exact_for_any_pair_list(
            seed in any::<u64>(),
            ids in 1u32..4000,
            long in any::<bool>(),
            shapes in proptest::collection::vec(0usize..4, 1..4),
            threads in prop_oneof![Just(1usize), Just(2), Just(4)],
        ) {
            let jobs = JobSystem::new(threads);
            let mut contacts = Contacts::new(threads);
            for (frame, &shape) in shapes.iter().enumerate() {
                let shape = [Shape::Promised, Shape::OneRepeat, Shape::OneSwapped, Shape::Anything][shape];
                let count = if long { PARALLEL_MIN + ids as usize } else { ids as usize / 2 };
                // Not more pairs than there are.
                let count = count.min((ids as usize * (ids as usize - 1) / 2).saturating_sub(1));
                let (owners, pairs) = draw(seed ^ frame as u64, ids, count, shape);
                check(&mut contacts, &jobs, &owners, &pairs);
            }
        }
    }

    /// Long lists where one piece breaks the promise and another keeps
    /// it: a copy of a late pair at the front (the first piece tests its
    /// inserts, the piece with the original trusts its own: without the
    /// second merge, whichever inserts second would list the partner
    /// twice), or a repeat at the end. The lists come out exact, every
    /// time, on 2 and 4 threads.
    #[test]
    fn a_broken_piece_makes_the_trusting_ones_merge_again() {
        for threads in [2, 4] {
            let jobs = JobSystem::new(threads);
            let mut contacts = Contacts::new(threads);
            let (owners, pairs) = draw(3, 3000, 4 * PARALLEL_MIN, Shape::Promised);
            for late in [pairs.len() - 1, pairs.len() * 3 / 4, pairs.len() / 2] {
                for _ in 0..20 {
                    let mut broken = pairs.clone();
                    broken.insert(0, pairs[late]);
                    check(&mut contacts, &jobs, &owners, &broken);
                    let mut broken = pairs.clone();
                    broken.push(pairs[late - 1]);
                    check(&mut contacts, &jobs, &owners, &broken);
                }
            }
        }
    }

    /// Lists of a build are read only once published; a build with no
    /// pairs empties every list.
    #[test]
    fn lists_change_on_publish() {
        let jobs = JobSystem::new(2);
        let mut contacts = Contacts::new(2);
        let (owners, pairs) = draw(9, 50, 40, Shape::Promised);
        check(&mut contacts, &jobs, &owners, &pairs);
        let before: Vec<Vec<Entity>> =
            owners.iter().map(|&e| contacts.touching(e).to_vec()).collect();
        contacts.build(&jobs, &owners, &[]).expect("no job panics");
        assert!(owners.iter().zip(&before).all(|(&e, list)| contacts.touching(e) == list));
        contacts.publish();
        assert!(owners.iter().all(|&e| contacts.touching(e).is_empty()));
    }
}
