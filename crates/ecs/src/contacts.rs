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
//! **Layout.** Then one job per shard turns its sets into a compressed
//! row table: partner counts, their prefix sums, every partner (inline
//! slots and spill) written as an `Entity` into its entity's range, each
//! range sorted. [`Contacts::touching`] is a lookup of two offsets.
//!
//! The tables are built beside the published ones and swapped in only
//! when the whole frame succeeds, so a failed run leaves what
//! `touching` answers as it was, like every other output.

use crate::proxies::EntityProxies;
use broadphase_jobs::{IndexedJob, JobContext, JobError, JobSystem};
use broadphase_storage::FastUniqueSets;
use hecs::Entity;
use parking_lot::Mutex;

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

/// One shard's published lists: entity id `i` of the shard, at local
/// index `l = i >> bits`, touches `partners[offsets[l]..offsets[l + 1]]`,
/// if `owners[l]` is the entity asked about.
#[derive(Debug, Default)]
struct Table {
    /// `locals + 1` entries, ascending.
    offsets: Vec<usize>,
    /// Each entity's partners, sorted.
    partners: Vec<Entity>,
    /// The entity whose partners each non-empty range holds; entries of
    /// empty ranges are stale and never read.
    owners: Vec<Entity>,
}

/// One shard: its sets being merged, and the table built from them.
#[derive(Default)]
struct Shard {
    sets: FastUniqueSets,
    /// The sets' spilled values, sorted by set (scratch of the layout).
    spilled: Vec<(u32, u32)>,
    building: Table,
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
    shards: Box<[Padded<Mutex<Shard>>]>,
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

    /// Builds every entity's partner list from `pairs` (sorted, no
    /// repeats, naming live proxies of `proxies`) beside the published
    /// lists. [`publish`](Self::publish) then makes them current.
    pub(crate) fn build(
        &mut self,
        jobs: &JobSystem,
        proxies: &EntityProxies,
        pairs: &[(Entity, Entity)],
    ) -> Result<(), JobError> {
        let locals = proxies.slot_count().div_ceil(self.shards.len());
        for shard in self.shards.iter_mut() {
            shard.0.get_mut().sets.reset(locals);
        }
        let pieces =
            if pairs.len() < PARALLEL_MIN || jobs.threads() < 2 { 1 } else { self.pieces.len() };
        let pass = Pass {
            bits: self.bits,
            blocks: locals.div_ceil(1 << BLOCK_BITS).max(1),
            shards: &self.shards,
            pieces: &self.pieces[..pieces],
            pairs,
            piece_len: pairs.len().div_ceil(pieces).max(1),
            proxies,
        };
        if pieces == 1 {
            pass.merge(0);
            (0..self.shards.len()).for_each(|shard| pass.lay_out(shard));
            return Ok(());
        }
        jobs.reserve_queue(pieces.max(self.shards.len()));
        let merge = Merge(&pass);
        jobs.scope(|s| (0..pieces).for_each(|piece| s.spawn_indexed(&merge, piece)))?;
        let lay_out = LayOut(&pass);
        jobs.scope(|s| (0..pass.shards.len()).for_each(|shard| s.spawn_indexed(&lay_out, shard)))
    }

    /// Makes the lists of the last [`build`](Self::build) the ones
    /// [`touching`](Self::touching) reads.
    pub(crate) fn publish(&mut self) {
        for (shard, table) in self.shards.iter_mut().zip(&mut self.published) {
            core::mem::swap(&mut shard.0.get_mut().building, table);
        }
    }

    /// The entities `entity` touches in the published frame, sorted;
    /// empty for an entity in no pair, unknown or despawned.
    #[inline]
    pub(crate) fn touching(&self, entity: Entity) -> &[Entity] {
        let id = entity.id() as usize;
        let table = &self.published[id & (self.published.len() - 1)];
        let local = id >> self.bits;
        let (Some(&start), Some(&end)) = (table.offsets.get(local), table.offsets.get(local + 1))
        else {
            return &[];
        };
        if start == end || table.owners[local] != entity {
            return &[];
        }
        &table.partners[start..end]
    }
}

/// What both passes read.
struct Pass<'a> {
    bits: u32,
    /// Blocks of sets per shard.
    blocks: usize,
    shards: &'a [Padded<Mutex<Shard>>],
    pieces: &'a [Padded<Mutex<Piece>>],
    pairs: &'a [(Entity, Entity)],
    piece_len: usize,
    proxies: &'a EntityProxies,
}

impl Pass<'_> {
    /// Merges piece `piece` of the pairs into the shards' sets.
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
        for &(a, b) in pairs {
            ends[bucket_of(a.id())] += 1;
            ends[bucket_of(b.id())] += 1;
        }
        let mut sum = 0;
        for cursor in ends.iter_mut() {
            let count = *cursor;
            *cursor = sum;
            sum += count;
        }
        half_pairs.clear();
        half_pairs.resize(sum, (0, 0));
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
            for &(local, partner) in bucket {
                let new = sets.insert(local, partner);
                debug_assert!(new, "a pair listed twice");
            }
        };
        // Each piece starts at its own shard; a busy shard waits for the
        // second round.
        let first = piece * shards / self.pieces.len();
        let mut busy = 0u64;
        for k in 0..shards {
            let shard = (first + k) & mask;
            if bucket(shard).is_empty() {
                continue;
            }
            match self.shards[shard].0.try_lock() {
                Some(mut locked) => insert(&mut locked.sets, bucket(shard)),
                None => busy |= 1 << shard,
            }
        }
        while busy != 0 {
            let shard = busy.trailing_zeros() as usize;
            busy &= busy - 1;
            insert(&mut self.shards[shard].0.lock().sets, bucket(shard));
        }
    }

    /// Lays shard `shard`'s sets out as its table of sorted entities: two
    /// passes over the sets (counts and their prefix sums; then each
    /// set's partners, its owner, and a sort where needed), the spill
    /// sorted by set on the side so that it needs no cursor per set.
    fn lay_out(&self, shard: usize) {
        let mut locked = self.shards[shard].0.lock();
        let Shard { sets, spilled, building } = &mut *locked;
        let Table { offsets, partners, owners } = building;
        let locals = sets.set_count();
        spilled.clear();
        spilled.extend(sets.spilled_values());
        spilled.sort_unstable();
        // offsets[l]: where set l's partners start; a set's spilled values
        // follow its 8 inline ones.
        offsets.clear();
        let mut sum = 0;
        offsets.extend(sets.inline_sets().map(|inline| {
            let start = sum;
            sum += inline.len();
            start
        }));
        offsets.push(sum);
        if !spilled.is_empty() {
            // Each start moves up by the spilled values of the sets before.
            let (mut shift, mut next) = (0, 0);
            for (local, start) in offsets.iter_mut().enumerate() {
                *start += shift;
                while spilled.get(next).is_some_and(|&(set, _)| set as usize == local) {
                    shift += 1;
                    next += 1;
                }
            }
            sum += shift;
        }
        partners.clear();
        partners.resize(sum, Entity::DANGLING);
        owners.resize(locals, Entity::DANGLING);
        let entity = |id: u32| self.proxies.live_entity_at(id);
        let mut spilled = spilled.iter().peekable();
        for (local, inline) in sets.inline_sets().enumerate() {
            if inline.is_empty() {
                continue;
            }
            let list = &mut partners[offsets[local]..offsets[local + 1]];
            let (head, tail) = list.split_at_mut(inline.len());
            for (to, &partner) in head.iter_mut().zip(inline) {
                *to = entity(partner);
            }
            for to in tail {
                let (_, partner) = spilled.next().expect("counted above");
                *to = entity(*partner);
            }
            owners[local] = entity(((local as u32) << self.bits) | shard as u32);
            if list.len() > 1 && !list.is_sorted() {
                list.sort_unstable();
            }
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

/// The layout, one job per shard.
struct LayOut<'a, 'b>(&'a Pass<'b>);

impl<'scope> IndexedJob<'scope> for LayOut<'_, '_> {
    fn run(&'scope self, _ctx: &mut JobContext<'_, 'scope>, shard: usize) {
        self.0.lay_out(shard);
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
