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
//! would cost more than the insert it guards.
//!
//! **Layout.** Then one job per shard turns its sets into a table: for
//! each set that holds a value (the sets list those), its partners (inline
//! slots and spill) written as entities into one buffer, sorted where they
//! are not already, and a row per entity id saying where they are.
//! [`Contacts::touching`] is the lookup of one row.
//!
//! The tables are built beside the published ones and swapped in only
//! when the whole frame succeeds, so a failed run leaves what
//! `touching` answers as it was, like every other output.

use broadphase_jobs::{IndexedJob, JobContext, JobError, JobSystem};
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

/// Where one entity's partners are in its shard's table.
#[derive(Clone, Copy, Debug)]
struct Row {
    /// The entity whose partners these are.
    owner: Entity,
    start: usize,
    /// At most the number of entity ids (a list holds each partner once).
    len: u32,
    /// The build of the table that wrote the row: the row is current only
    /// if it is the table's.
    stamp: u32,
}

impl Row {
    /// A row no build wrote (builds are numbered from 1).
    const EMPTY: Self = Self { owner: Entity::DANGLING, start: 0, len: 0, stamp: 0 };
}

/// One shard's published lists: entity id `i` of the shard, at local
/// index `l = i >> bits`, touches `partners[start..start + len]` of
/// `rows[l]`, if that row is of this build and its owner is the entity
/// asked about.
#[derive(Debug, Default)]
struct Table {
    /// At least one row per set of the shard; those of earlier builds are
    /// stale, and never emptied: the stamp tells them apart.
    rows: Vec<Row>,
    /// Every entity's partners, a sorted range each.
    partners: Vec<Entity>,
    /// This build's number, from 1.
    stamp: u32,
}

/// One shard: its sets being merged, and the table built from them.
#[derive(Default)]
struct Shard {
    sets: FastUniqueSets,
    /// The sets' spilled values, sorted by set (scratch of the layout).
    spilled: Vec<(u32, u32)>,
    building: Table,
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
            cell.0.shard.get_mut().sets.reset(locals);
            *cell.0.pending.get_mut() = pieces;
        }
        let pass = self.pass(pieces, locals, owners, pairs);
        if pieces == 1 {
            pass.merge(0);
            return Ok(());
        }
        jobs.reserve_queue(pieces);
        let merge = Merge(&pass);
        jobs.scope(|s| (0..pieces).for_each(|piece| s.spawn_indexed(&merge, piece)))?;
        if pass.repeats.load(Ordering::Relaxed) {
            // Some pair is out of order or repeated: pieces that trusted
            // their own pairs may have listed a partner twice. Merge (and
            // lay out) again on this thread, testing every insert.
            for cell in pass.shards {
                cell.0.shard.lock().sets.reset(locals);
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
        match table.rows.get(id >> self.bits) {
            Some(row) if row.owner == entity && row.stamp == table.stamp => {
                &table.partners[row.start..][..row.len as usize]
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
    /// Merges piece `piece` of the pairs into the shards' sets.
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
    fn merge(&self, piece: usize) {
        let start = (piece * self.piece_len).min(self.pairs.len());
        let end = (start + self.piece_len).min(self.pairs.len());
        let pairs = &self.pairs[start..end];
        let mut scratch = self.pieces[piece].0.lock();
        let Piece { ends, half_pairs } = &mut *scratch;
        let shards = self.shards.len();
        let mask = shards - 1;
        let (bits, blocks) = (self.bits, self.blocks);
        let bucket_of =
            |id: u32| (id as usize & mask) * blocks + (id >> bits >> BLOCK_BITS) as usize;
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
        let insert = |sets: &mut FastUniqueSets, bucket: &[(u32, u32)]| {
            if distinct {
                sets.extend_distinct(bucket);
            } else {
                bucket.iter().for_each(|&(local, partner)| _ = sets.insert(local, partner));
            }
        };
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
                    insert(&mut locked.sets, bucket(shard));
                    self.done_with(shard, Some(locked));
                }
                None => busy |= 1 << shard,
            }
        }
        while busy != 0 {
            let shard = busy.trailing_zeros() as usize;
            busy &= busy - 1;
            let mut locked = self.shards[shard].0.shard.lock();
            insert(&mut locked.sets, bucket(shard));
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

    /// Lays shard `shard`'s sets out as its table of sorted entities, in
    /// one pass over the sets that hold a value: each set's partners,
    /// inline then spilled, as entities at the next place of `partners`,
    /// sorted where they are not already, and the set's row, stamped with
    /// the table's new build number (the other rows are left as they
    /// are: stale). The spill is sorted by set on the side, and a full set
    /// finds its part by binary search.
    fn lay_out(&self, shard: usize, locked: &mut Shard) {
        let Shard { sets, spilled, building } = locked;
        let Table { rows, partners, stamp } = building;
        if *stamp == u32::MAX {
            // Numbers run out every 4 billion builds: forget every row.
            rows.fill(Row::EMPTY);
            *stamp = 0;
        }
        *stamp += 1;
        let stamp = *stamp;
        if rows.len() < sets.set_count() {
            rows.resize(sets.set_count(), Row::EMPTY);
        }
        spilled.clear();
        if sets.spilled() > 0 {
            spilled.extend(sets.spilled_values());
            spilled.sort_unstable();
        }
        // Every place is written below: the entities only stand in.
        partners.resize(sets.value_count(), Entity::DANGLING);
        let (rows, partners, owners) = (&mut rows[..], &mut partners[..], self.owners);
        let mut start = 0;
        for &local in sets.touched_sets() {
            let inline = sets.inline_values(local);
            let more = if inline.len() == FastUniqueSets::INLINE_SLOTS && !spilled.is_empty() {
                let from = spilled.partition_point(|&(set, _)| set < local);
                let to = from + spilled[from..].partition_point(|&(set, _)| set == local);
                &spilled[from..to]
            } else {
                &[]
            };
            let len = inline.len() + more.len();
            let list = &mut partners[start..start + len];
            let (head, tail) = list.split_at_mut(inline.len());
            head.iter_mut().zip(inline).for_each(|(to, &id)| *to = owners[id as usize]);
            tail.iter_mut().zip(more).for_each(|(to, &(_, id))| *to = owners[id as usize]);
            // Ids in order are entities in order (live entities have
            // distinct ids): the inline ones are tested as ids.
            if !(more.is_empty() && inline.is_sorted()) && !list.is_sorted() {
                list.sort_unstable();
            }
            let owner = owners[((local << self.bits) | shard as u32) as usize];
            // `len` fits: a list holds each partner once, and ids are u32.
            rows[local as usize] = Row { owner, start, len: len as u32, stamp };
            start += len;
        }
    }
}

/// The merge, one job per piece of the pair list.
struct Merge<'a, 'b>(&'a Pass<'b>);

impl<'scope> IndexedJob<'scope> for Merge<'_, '_> {
    fn run(&'scope self, _ctx: &mut JobContext<'_, 'scope>, piece: usize) {
        self.0.merge(piece);
    }
}

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
}

