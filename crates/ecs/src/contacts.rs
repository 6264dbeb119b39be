//! Per-entity contact lists: every frame's pairs merged into one list of
//! partners per entity, on the plugin's job system, under sharded
//! mutexes, and laid out as sorted slices for
//! [`touching`](crate::BroadPhasePlugin::touching).
//!
//! **Shards.** Each shard owns the lists of some entity ids and sits
//! behind its own `parking_lot::Mutex`, `SHARDS_PER_THREAD` shards per
//! thread (a power of two, at most `MAX_SHARDS`). The ids are dealt to
//! the shards in runs of 8 ([`Sharding`]): ids spawned together (a pile, a
//! batch) spread over every shard.
//!
//! **Merge.** The pair list is cut into one piece per thread. A job
//! buckets its piece's half-pairs (`a` touches `b`, `b` touches `a`) by
//! shard, a counting sort into one buffer of its own, then takes the
//! shards one by one, starting at a different shard per piece, locking
//! each once to add its whole bucket to the shard's count of half-pairs
//! per id: first every shard it can lock without waiting (`try_lock`),
//! then, waiting, those that were busy. A lock per pair would cost more
//! than the work it guards.
//!
//! **Layout.** Then one job per shard, on every thread, lays its shard
//! out: the counts summed into an offset per id, and the shard's buckets,
//! the pieces' in the order of the pieces, scattered into one partner
//! buffer (a counting sort by owner), the owner's entity beside each
//! offset. [`Contacts::touching`] is the lookup of one range. (Laying a
//! shard out in the merge, by the last piece to hand it a bucket, left it
//! all to the piece that started last.)
//!
//! **Repeats.** The plugin's pairs are sorted and free of repeats, and a
//! job tests that of its piece while it counts: strictly increasing pairs
//! with `a < b` give distinct half-pairs, and the counting sort keeps
//! each list sorted (an entity `x`'s partners `y < x` come from pairs
//! `(y, x)`, which precede its pairs `(x, z)`). If any piece finds
//! otherwise, the calling thread merges again in one piece, whose shards
//! drop repeated half-pairs with a [`FastUniqueSets`] set per id before
//! they count them, then sort each list.
//!
//! The tables are built beside the published ones and swapped in when
//! complete. A run does not make them: the first read after it does
//! (`contact_lists.rs`), from the published pairs, so a failed run
//! leaves what `touching` answers as it was, like every other output.
//! With no job system (`None`) every pass runs on the calling thread
//! and none can fail: the fallback of a read from inside a job.

use crate::contact_patch::{Change, Patch};
use broadphase_jobs::{JobError, JobSystem};
use broadphase_storage::{FastUniqueSets, Pool};
use core::sync::atomic::{AtomicBool, Ordering};
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

/// How entity ids are dealt to shards: runs of `1 << RUN_BITS` ids go to
/// the shards in turn, and number a shard's lists in order.
const RUN_BITS: u32 = 3;

/// `(owner, partner)`: one side of a pair, a partner for the owner's list.
type HalfPair = (Entity, Entity);

/// Which shard, and which list there, an entity id belongs to.
#[derive(Clone, Copy, Debug, Default)]
struct Sharding {
    /// log2 of the shard count.
    bits: u32,
}

impl Sharding {
    const RUN_MASK: u32 = (1 << RUN_BITS) - 1;

    #[inline]
    fn shard(self, id: u32) -> usize {
        ((id >> RUN_BITS) & ((1 << self.bits) - 1)) as usize
    }

    /// The id's list (local index) in its shard.
    #[inline]
    fn local(self, id: u32) -> usize {
        (((id >> (RUN_BITS + self.bits)) << RUN_BITS) | (id & Self::RUN_MASK)) as usize
    }

    /// The id of list `local` of shard `shard`.
    #[cfg(test)]
    fn id(self, shard: u32, local: u32) -> u32 {
        ((local >> RUN_BITS) << (RUN_BITS + self.bits))
            | (shard << RUN_BITS)
            | (local & Self::RUN_MASK)
    }

    /// Lists per shard for ids below `ids`: whole runs.
    fn locals(self, ids: usize) -> usize {
        ids.div_ceil(1 << (RUN_BITS + self.bits)) << RUN_BITS
    }
}

/// Keeps each mutex and what it guards on cache lines of its own.
#[repr(align(128))]
#[derive(Default)]
struct Padded<T>(T);

/// One shard's published lists: the entity of local index `l`
/// ([`Sharding::local`]) touches `partners[spans[l][0]..spans[l][1]]` if
/// that range is not empty and `owners[l]` is that entity.
#[derive(Debug, Default)]
pub(crate) struct Table {
    /// By local index, where the list starts and ends in `partners`.
    pub(crate) spans: Pool<[u32; 2]>,
    /// By local index, the entity whose list it is; written for the
    /// lists that are not empty, stale for the others (never read).
    pub(crate) owners: Pool<Entity>,
    /// Every list, each sorted: one after another when built; a patch
    /// appends the lists it changes, and the old ones stay unread.
    pub(crate) partners: Pool<Entity>,
}

impl Table {
    /// The list of `owner`, local index `local`: empty unless the table
    /// holds one for this entity.
    #[inline]
    pub(crate) fn list(&self, local: usize, owner: Entity) -> &[Entity] {
        match self.spans.get(local) {
            Some(&[start, end]) if start < end && self.owners[local] == owner => {
                &self.partners[start as usize..end as usize]
            }
            _ => &[],
        }
    }
}

/// One shard: its counts of what the pieces found for it, and the table
/// built from them.
#[derive(Default)]
struct Shard {
    /// By local index, how many half-pairs of this build are the list's;
    /// in the layout, where its next partner goes. All 0 between builds
    /// once `counts_zeroed`.
    counts: Pool<u32>,
    /// Whether the last layout left `counts` all 0 (a build cut short by
    /// a panic does not).
    counts_zeroed: bool,
    /// One set per list, to drop repeats from lists that may have them.
    sets: FastUniqueSets,
    /// Whether this build's half-pairs went through `sets`: then each
    /// list is sorted after the scatter.
    dropped_repeats: bool,
    building: Table,
    /// A patch's half-pairs of this shard, handed in by the pieces.
    changes: Pool<Change>,
    /// The shard's lists a patch changes, for the published table.
    patch: Patch,
}

impl Shard {
    /// Empties the shard for a build of `locals` lists.
    fn reset(&mut self, locals: usize) {
        if !self.counts_zeroed {
            self.counts.reset();
            self.counts_zeroed = true;
        }
        // Zeros past the old length; the rest are 0 already.
        self.counts.resize(locals, 0);
        self.dropped_repeats = false;
    }

    /// Counts a piece's half-pairs of this shard per list; with
    /// `drop_repeats`, first drops from `bucket` (moving the rest to its
    /// front) those seen before in this build, and returns how many it
    /// kept.
    fn hand_in(
        &mut self,
        sharding: Sharding,
        bucket: &mut [HalfPair],
        drop_repeats: bool,
    ) -> usize {
        let mut kept = bucket.len();
        if drop_repeats {
            if !self.dropped_repeats {
                self.sets.reset(self.counts.len());
                self.dropped_repeats = true;
            }
            kept = 0;
            for at in 0..bucket.len() {
                let (owner, partner) = bucket[at];
                if self.sets.insert(sharding.local(owner.id()) as u32, partner.id()) {
                    bucket[kept] = (owner, partner);
                    kept += 1;
                }
            }
        }
        self.counts_zeroed &= kept == 0;
        let counts = &mut self.counts[..];
        for &(owner, _) in &bucket[..kept] {
            counts[sharding.local(owner.id())] += 1;
        }
        kept
    }

    /// Lays shard `shard` out as its table: the counts summed into
    /// offsets, then a counting sort by owner of the pieces' buckets for
    /// it, in the order of the pieces (so each list comes out in the order
    /// of the pairs); lists that went through `sets` are sorted after.
    fn lay_out(&mut self, sharding: Sharding, shard: usize, pieces: &[Padded<Piece>]) {
        let Shard { counts, counts_zeroed, building, dropped_repeats, .. } = self;
        let Table { spans, owners, partners } = building;
        let locals = counts.len();
        // `spans[l]` is where list `l` starts and ends, and `counts[l]`
        // becomes where it starts, the scatter's cursor.
        let mut sum = 0;
        spans.reset();
        spans.extend(counts.iter_mut().map(|count| {
            let start = sum;
            sum += *count;
            *count = start;
            [start, sum]
        }));
        if owners.len() < locals {
            owners.resize(locals, Entity::DANGLING);
        }
        // Every place below `sum` is written (the cursors are the counts'
        // prefix sums): only places past the old length need a value first.
        partners.truncate(sum as usize);
        partners.resize(sum as usize, Entity::DANGLING);
        let (owners, partners, cursors) = (&mut owners[..], &mut partners[..], &mut counts[..]);
        let buckets = pieces.iter().map(|piece| piece.0.bucket(shard));
        for &(owner, partner) in buckets.flatten() {
            let local = sharding.local(owner.id());
            let at = &mut cursors[local];
            partners[*at as usize] = partner;
            *at += 1;
            owners[local] = owner;
        }
        counts.fill(0);
        *counts_zeroed = true;
        if *dropped_repeats {
            for &[start, end] in spans.iter() {
                partners[start as usize..end as usize].sort_unstable();
            }
        }
    }
}

/// A piece's scratch: its half-pairs bucketed by shard, in one buffer.
/// (A buffer per shard would have the bucketing write to 8 or more
/// streams that the allocator, mapping big buffers whole pages at a time,
/// starts at the same offset in a page: they then evict each other from
/// the cache, and the stage took 20% longer.)
struct Piece {
    /// Shard `s`'s bucket is `half_pairs[starts[s]..ends[s]]` (in a
    /// patch, `changes[..]`).
    starts: [usize; MAX_SHARDS],
    ends: [usize; MAX_SHARDS],
    /// The buffer only grows; past the last bucket it holds stale values.
    half_pairs: Pool<HalfPair>,
    /// A patch's half-pairs, bucketed by shard as `half_pairs` are.
    changes: Pool<Change>,
}

impl Default for Piece {
    fn default() -> Self {
        Piece {
            starts: [0; MAX_SHARDS],
            ends: [0; MAX_SHARDS],
            half_pairs: Pool::default(),
            changes: Pool::default(),
        }
    }
}

impl Piece {
    /// The piece's half-pairs of shard `shard` in this build.
    fn bucket(&self, shard: usize) -> &[HalfPair] {
        &self.half_pairs[self.starts[shard]..self.ends[shard]]
    }
}

/// What [`Contacts::publish`] makes current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pending {
    Nothing,
    /// The tables of the last [`Contacts::build`].
    Build,
    /// The lists of the last [`Contacts::plan_patch`].
    Patch,
}

/// A patch is planned while the half-pairs it changes are at most this
/// share of what a build would read (see [`Contacts::plan_patch`]).
const PATCH_SHARE: usize = 8;

/// Partners left unread in the tables beyond the listed ones, at least,
/// before a build is due.
const UNREAD_SLACK: usize = 4096;

/// Every entity's partners of the last published frame.
pub(crate) struct Contacts {
    sharding: Sharding,
    shards: Box<[Padded<Mutex<Shard>>]>,
    pieces: Box<[Padded<Piece>]>,
    /// The tables `touching` reads, by shard.
    published: Box<[Table]>,
    pending: Pending,
    /// Partners of replaced lists still in the published tables' buffers.
    unread: usize,
    /// Half-pairs the last planned patch changes.
    patched: usize,
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
            sharding: Sharding { bits: shards.trailing_zeros() },
            shards: (0..shards).map(|_| Padded::default()).collect(),
            pieces: (0..pieces).map(|_| Padded::default()).collect(),
            published: (0..shards).map(|_| Table::default()).collect(),
            pending: Pending::Nothing,
            unread: 0,
            patched: 0,
        }
    }

    /// Plans this run's lists as the published ones changed by the run's
    /// events, `started` and `ended` (the difference between the
    /// published pairs and this run's `pairs` pairs over `ids` entity
    /// ids), if that is cheaper than a build: while the half-pairs they
    /// change are at most 1/8 of what a build reads (two per pair and a
    /// quarter per id), and the partners left unread by earlier patches
    /// are no more than the listed ones. Returns whether it planned one;
    /// [`publish`](Self::publish) then applies it.
    ///
    /// The plan runs as a build does: the events are cut into one piece
    /// per thread, each piece bucketing its half-pairs by shard and
    /// handing each bucket to its shard under the shard's lock, then one
    /// job per shard merges its half-pairs into its lists.
    pub(crate) fn plan_patch(
        &mut self,
        jobs: Option<&JobSystem>,
        events: [&[(Entity, Entity)]; 2],
        pairs: usize,
        ids: usize,
    ) -> Result<bool, JobError> {
        self.pending = Pending::Nothing;
        let changes = 2 * (events[0].len() + events[1].len());
        let listed = 2 * pairs;
        if changes * PATCH_SHARE > listed + ids / 4 || self.unread > listed + UNREAD_SLACK {
            return Ok(false);
        }
        let split = split_over(jobs, changes);
        let pieces = if split.is_some() { self.pieces.len() } else { 1 };
        let Contacts { sharding, shards, pieces: scratch, published, .. } = self;
        shards.iter_mut().for_each(|cell| cell.0.get_mut().changes.reset());
        let pass = PatchPass::new(*sharding, shards, pieces, events);
        let hand_in = |piece, scratch: &mut Padded<Piece>| pass.hand_in(piece, &mut scratch.0);
        match split {
            Some(jobs) => jobs.for_each_mut(&mut scratch[..pieces], hand_in)?,
            None => hand_in(0, &mut scratch[0]),
        }
        let sharding = *sharding;
        let plan = |at: usize, cell: &mut Padded<Mutex<Shard>>| {
            let Shard { changes, patch, .. } = cell.0.get_mut();
            patch.plan(changes, &published[at], |id| sharding.local(id));
        };
        match split {
            Some(jobs) => jobs.for_each_mut(shards, plan)?,
            None => shards.iter_mut().enumerate().for_each(|(at, cell)| plan(at, cell)),
        }
        self.pending = Pending::Patch;
        self.patched = changes;
        Ok(true)
    }

    /// How many shards the lists are split into.
    #[cfg(test)]
    fn shard_count(&self) -> usize {
        self.shards.len()
    }

    /// Builds every entity's partner list from `pairs` beside the
    /// published lists, on `jobs` (or this thread alone with `None`);
    /// [`publish`](Self::publish) then makes them current. The pairs name
    /// entity ids below `ids`. They are meant sorted and free of repeats
    /// (and are then merged faster), but any list gives exact lists.
    ///
    /// # Errors
    /// A job's error (a panic, or a call from inside a job); never with
    /// `None`.
    pub(crate) fn build(
        &mut self,
        jobs: Option<&JobSystem>,
        ids: usize,
        pairs: &[(Entity, Entity)],
    ) -> Result<(), JobError> {
        self.pending = Pending::Build;
        let locals = self.sharding.locals(ids);
        let split = split_over(jobs, pairs.len());
        let pieces = if split.is_some() { self.pieces.len() } else { 1 };
        self.reset(locals);
        let Contacts { sharding, shards, pieces: scratch, .. } = self;
        let pass = Pass::new(*sharding, shards, pieces, pairs);
        let merge = |piece, scratch: &mut Padded<Piece>| pass.merge(piece, &mut scratch.0);
        match split {
            Some(jobs) => jobs.for_each_mut(&mut scratch[..pieces], merge)?,
            None => merge(0, &mut scratch[0]),
        }
        let split = if pass.repeats.load(Ordering::Relaxed) {
            // Some pair is out of order or repeated: a list may hold a
            // partner twice, or out of order. Merge again on this thread,
            // in one piece, which finds it out and drops the repeats.
            shards.iter_mut().for_each(|cell| cell.0.get_mut().reset(locals));
            Pass::new(*sharding, shards, 1, pairs).merge(0, &mut scratch[0].0);
            None
        } else {
            split
        };
        let pieces = if split.is_some() { pieces } else { 1 };
        let (sharding, scratch) = (*sharding, &scratch[..pieces]);
        let lay_out = |shard: usize, cell: &mut Padded<Mutex<Shard>>| {
            cell.0.get_mut().lay_out(sharding, shard, scratch);
        };
        match split {
            Some(jobs) => jobs.for_each_mut(shards, lay_out),
            None => {
                shards.iter_mut().enumerate().for_each(|(shard, cell)| lay_out(shard, cell));
                Ok(())
            }
        }
    }

    /// Empties every shard for a build of `locals` lists per shard.
    fn reset(&mut self, locals: usize) {
        self.shards.iter_mut().for_each(|cell| cell.0.get_mut().reset(locals));
    }

    /// Makes the lists of the last [`build`](Self::build) or
    /// [`plan_patch`](Self::plan_patch) the ones
    /// [`touching`](Self::touching) reads. A big patch is written one
    /// shard per job on `jobs`; if a job fails, the shards it left are
    /// written on this thread (each shard's patch is cleared once
    /// written, and writing one again gives the same lists).
    pub(crate) fn publish(&mut self, jobs: Option<&JobSystem>) {
        match core::mem::replace(&mut self.pending, Pending::Nothing) {
            Pending::Build => {
                for (shard, table) in self.shards.iter_mut().zip(&mut self.published) {
                    core::mem::swap(&mut shard.0.get_mut().building, table);
                }
                self.unread = 0;
            }
            Pending::Patch => {
                let (sharding, shards) = (self.sharding, &self.shards);
                let unread = core::sync::atomic::AtomicUsize::new(0);
                let apply = |at: usize, table: &mut Table| {
                    let mut shard = shards[at].0.lock();
                    let left = shard.patch.apply(table, |id| sharding.local(id));
                    shard.patch.clear();
                    unread.fetch_add(left, Ordering::Relaxed);
                };
                let split = split_over(jobs, self.patched);
                if split.is_none_or(|jobs| jobs.for_each_mut(&mut self.published, apply).is_err()) {
                    self.published.iter_mut().enumerate().for_each(|(at, t)| apply(at, t));
                }
                self.unread += unread.into_inner();
            }
            Pending::Nothing => {}
        }
    }

    /// The entities `entity` touches in the published lists, sorted;
    /// empty for an entity in no pair, unknown or despawned.
    #[cfg(test)]
    fn touching(&self, entity: Entity) -> &[Entity] {
        list_of(&self.published, self.sharding, entity)
    }

    /// Hands the published lists over to be read; [`put_lists`](Self::put_lists)
    /// gives them back before the next build or patch.
    pub(crate) fn take_lists(&mut self) -> Lists {
        Lists { sharding: self.sharding, tables: core::mem::take(&mut self.published) }
    }

    /// Takes back the lists [`take_lists`](Self::take_lists) handed over.
    pub(crate) fn put_lists(&mut self, lists: Lists) {
        self.published = lists.tables;
    }
}

/// Published contact lists, handed over to be read.
#[derive(Debug, Default)]
pub(crate) struct Lists {
    sharding: Sharding,
    tables: Box<[Table]>,
}

impl Lists {
    /// The entities `entity` touches, sorted; empty for an entity in no
    /// pair, unknown or despawned.
    #[inline]
    pub(crate) fn touching(&self, entity: Entity) -> &[Entity] {
        list_of(&self.tables, self.sharding, entity)
    }
}

/// The job system to cut `items` over: `jobs`, when there is one of two
/// threads or more and the items are enough for jobs to pay; `None`: the
/// calling thread does it all.
fn split_over(jobs: Option<&JobSystem>, items: usize) -> Option<&JobSystem> {
    jobs.filter(|jobs| items >= PARALLEL_MIN && jobs.threads() >= 2)
}

/// `entity`'s list in `tables`, sharded by `sharding`.
#[inline]
fn list_of(tables: &[Table], sharding: Sharding, entity: Entity) -> &[Entity] {
    let id = entity.id();
    tables.get(sharding.shard(id)).map_or(&[], |table| table.list(sharding.local(id), entity))
}

/// What a build's pieces read.
struct Pass<'a> {
    sharding: Sharding,
    shards: &'a [Padded<Mutex<Shard>>],
    pieces: usize,
    pairs: &'a [(Entity, Entity)],
    piece_len: usize,
    /// Set by a piece whose pairs (with the one before them) are not
    /// strictly increasing: then half-pairs may repeat.
    repeats: AtomicBool,
}

impl<'a> Pass<'a> {
    /// The merge of `pairs` in `pieces` pieces into `shards`.
    fn new(
        sharding: Sharding,
        shards: &'a [Padded<Mutex<Shard>>],
        pieces: usize,
        pairs: &'a [(Entity, Entity)],
    ) -> Self {
        let piece_len = pairs.len().div_ceil(pieces).max(1);
        Pass { sharding, shards, pieces, pairs, piece_len, repeats: AtomicBool::new(false) }
    }
}

impl Pass<'_> {
    /// Merges piece `piece` of the pairs into the shards.
    ///
    /// While it counts, the piece tests that its pairs, and the one
    /// before them, are strictly increasing by entity ids with `a < b`:
    /// with every piece's test passed the whole list is, and no half-pair
    /// repeats. If not, it says so in `repeats` (then `build` merges
    /// again in one piece, and that piece has its shards drop repeats).
    fn merge(&self, piece: usize, scratch: &mut Piece) {
        let start = (piece * self.piece_len).min(self.pairs.len());
        let end = (start + self.piece_len).min(self.pairs.len());
        let pairs = &self.pairs[start..end];
        let Piece { starts, ends, half_pairs, .. } = scratch;
        let (sharding, shards) = (self.sharding, self.shards.len());
        let key = |(a, b): (Entity, Entity)| (u64::from(a.id()) << 32) | u64::from(b.id());
        // 0 is below every pair with a < b.
        let mut last = start.checked_sub(1).map_or(0, |before| key(self.pairs[before]));
        let mut distinct = true;
        // Counting sort by shard: counts, starts, then each half-pair at its
        // bucket's cursor (which ends at the bucket's end).
        let cursors = &mut ends[..shards];
        cursors.fill(0);
        for &(a, b) in pairs {
            cursors[sharding.shard(a.id())] += 1;
            cursors[sharding.shard(b.id())] += 1;
            let next = key((a, b));
            distinct &= (next > last) & (a.id() < b.id());
            last = next;
        }
        if !distinct {
            self.repeats.store(true, Ordering::Relaxed);
        }
        let mut sum = 0;
        for (start, cursor) in starts.iter_mut().zip(cursors.iter_mut()) {
            (*start, *cursor, sum) = (sum, sum, sum + *cursor);
        }
        // Every place below `sum` is written: the buffer only grows.
        if half_pairs.len() < sum {
            half_pairs.resize(sum, (Entity::DANGLING, Entity::DANGLING));
        }
        let buffer = &mut half_pairs[..sum];
        for &(a, b) in pairs {
            for half_pair in [(a, b), (b, a)] {
                let cursor = &mut cursors[sharding.shard(half_pair.0.id())];
                buffer[*cursor] = half_pair;
                *cursor += 1;
            }
        }
        // One piece alone merges again if its pairs repeat: its shards
        // then drop repeats.
        let drop_repeats = !distinct && self.pieces == 1;
        // The bucket's end moves back where repeats were dropped.
        let mut hand_in = |shard: usize, end: &mut usize, locked: &mut Shard| {
            let bucket = &mut buffer[starts[shard]..*end];
            *end = starts[shard] + locked.hand_in(sharding, bucket, drop_repeats);
        };
        // Each piece starts at its own shard; a busy shard waits for the
        // second round.
        let filled = filled_buckets(&starts[..shards], &ends[..shards]);
        lock_each(self.shards, piece * shards / self.pieces, filled, |shard, locked| {
            hand_in(shard, &mut ends[shard], locked);
        });
    }
}

/// A bit per shard whose bucket (`starts[s]..ends[s]`) holds something.
fn filled_buckets(starts: &[usize], ends: &[usize]) -> u64 {
    starts
        .iter()
        .zip(ends)
        .enumerate()
        .fold(0, |mask, (s, (start, end))| mask | (u64::from(start != end) << s))
}

/// Calls `hand_in(shard, locked)` once for each shard of the `filled`
/// mask, under the shard's lock, starting at shard `first` and wrapping:
/// first every shard it can lock without waiting (`try_lock`), then,
/// waiting, the busy ones. A piece locks each shard once for its whole
/// bucket; a lock per pair would cost more than the work it guards.
fn lock_each(
    shards: &[Padded<Mutex<Shard>>],
    first: usize,
    filled: u64,
    mut hand_in: impl FnMut(usize, &mut Shard),
) {
    let mut busy = 0u64;
    for k in 0..shards.len() {
        let shard = (first + k) & (shards.len() - 1);
        if filled >> shard & 1 == 0 {
            continue;
        }
        match shards[shard].0.try_lock() {
            Some(mut locked) => hand_in(shard, &mut locked),
            None => busy |= 1 << shard,
        }
    }
    while busy != 0 {
        let shard = busy.trailing_zeros() as usize;
        busy &= busy - 1;
        hand_in(shard, &mut shards[shard].0.lock());
    }
}

/// What a patch's pieces read.
struct PatchPass<'a> {
    sharding: Sharding,
    shards: &'a [Padded<Mutex<Shard>>],
    /// The started pairs (gained), then the ended ones (lost).
    events: [&'a [(Entity, Entity)]; 2],
    piece_len: usize,
    pieces: usize,
}

impl<'a> PatchPass<'a> {
    fn new(
        sharding: Sharding,
        shards: &'a [Padded<Mutex<Shard>>],
        pieces: usize,
        events: [&'a [(Entity, Entity)]; 2],
    ) -> Self {
        let piece_len = (events[0].len() + events[1].len()).div_ceil(pieces).max(1);
        PatchPass { sharding, shards, events, piece_len, pieces }
    }

    /// Event `at` of the started-then-ended list, and whether it started.
    #[inline]
    fn event(&self, at: usize) -> ((Entity, Entity), bool) {
        let started = self.events[0];
        match started.get(at) {
            Some(&pair) => (pair, true),
            None => (self.events[1][at - started.len()], false),
        }
    }

    /// Hands piece `piece`'s half-pairs to their shards: bucketed by shard
    /// (a counting sort into the piece's buffer), then each bucket added
    /// to its shard's under the shard's lock, first the shards free now,
    /// then, waiting, the busy ones.
    fn hand_in(&self, piece: usize, scratch: &mut Piece) {
        let total = self.events[0].len() + self.events[1].len();
        let start = (piece * self.piece_len).min(total);
        let end = (start + self.piece_len).min(total);
        let Piece { starts, ends, changes, .. } = scratch;
        let (sharding, shards) = (self.sharding, self.shards.len());
        let cursors = &mut ends[..shards];
        cursors.fill(0);
        for at in start..end {
            let ((a, b), _) = self.event(at);
            cursors[sharding.shard(a.id())] += 1;
            cursors[sharding.shard(b.id())] += 1;
        }
        let mut sum = 0;
        for (start, cursor) in starts.iter_mut().zip(cursors.iter_mut()) {
            (*start, *cursor, sum) = (sum, sum, sum + *cursor);
        }
        if changes.len() < sum {
            changes.resize(sum, (Entity::DANGLING, Entity::DANGLING, false));
        }
        for at in start..end {
            let ((a, b), gained) = self.event(at);
            for change in [(a, b, gained), (b, a, gained)] {
                let cursor = &mut cursors[sharding.shard(change.0.id())];
                changes[*cursor] = change;
                *cursor += 1;
            }
        }
        let filled = filled_buckets(&starts[..shards], &ends[..shards]);
        lock_each(self.shards, piece * shards / self.pieces, filled, |shard, locked| {
            locked.changes.extend_from_slice(&changes[starts[shard]..ends[shard]]);
        });
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
            assert_eq!(1 << contacts.sharding.bits, shards);
        }
    }

    /// Every id has one shard and set, below the shard's set count, and
    /// they lead back to it; runs of 8 ids share a shard.
    #[test]
    fn sharding_deals_runs_of_ids_and_inverts() {
        for bits in 0..=6 {
            let sharding = Sharding { bits };
            for ids in [0usize, 1, 7, 8, 9, 1000, 4099] {
                let locals = sharding.locals(ids);
                for id in 0..ids as u32 {
                    let (shard, local) = (sharding.shard(id), sharding.local(id));
                    assert!(shard < 1 << bits && local < locals, "{bits} {id}");
                    assert_eq!(sharding.id(shard as u32, local as u32), id, "{bits} {id}");
                    assert_eq!(shard, sharding.shard(id & !7), "{bits} {id}");
                }
            }
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
        contacts.build(Some(jobs), owners.len(), pairs).expect("no job panics");
        contacts.publish(Some(jobs));
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

    /// The pairs of `a` not in `b` (both sorted).
    fn minus(a: &[(Entity, Entity)], b: &[(Entity, Entity)]) -> Vec<(Entity, Entity)> {
        a.iter().filter(|p| b.binary_search(p).is_err()).copied().collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

        /// Frame after frame, a few pairs start and end (some with a
        /// despawned id taken again by a new generation): the lists
        /// patched from the events equal brute force, on one thread and in
        /// pieces on several (events past the parallel threshold), and a
        /// build follows once the unread partners pile up.
        #[test]
        fn patched_lists_equal_brute_force(
            seed in any::<u64>(),
            ids in 200u32..6000,
            churn in 1usize..40,
            threads in prop_oneof![Just(1usize), Just(2), Just(4)],
            big in any::<bool>(),
        ) {
            let jobs = JobSystem::new(threads);
            let mut contacts = Contacts::new(threads);
            let count = if big { 12 * PARALLEL_MIN } else { ids as usize * 2 };
            // Not more pairs than there are.
            let count = count.min(ids as usize * (ids as usize - 1) / 4);
            let (mut owners, mut pairs) = draw(seed, ids, count, Shape::Promised);
            pairs.sort_unstable();
            check(&mut contacts, &jobs, &owners, &pairs);
            let mut state = seed;
            let (mut patched, mut built) = (0, 0);
            for _frame in 0..12 {
                let mut now: Vec<(Entity, Entity)> = pairs
                    .iter()
                    .filter(|_| next(&mut state) % 1000 >= churn as u64)
                    .copied()
                    .collect();
                // One id despawned and taken again: its pairs end, the new
                // entity's start.
                let reborn = (next(&mut state) % u64::from(ids)) as usize;
                let old = owners[reborn];
                owners[reborn] = entity(old.id(), (old.to_bits().get() >> 32) as u32 + 1);
                now.retain(|&(a, b)| a != old && b != old);
                let fresh = (next(&mut state) % u64::from(ids)) as usize;
                for k in 0..3 {
                    let other = owners[(fresh + 1 + k) % ids as usize];
                    let mine = owners[reborn];
                    if other != mine {
                        now.push(if mine < other { (mine, other) } else { (other, mine) });
                    }
                }
                now.sort_unstable();
                now.dedup();
                let (started, ended) = (minus(&now, &pairs), minus(&pairs, &now));
                let events = [&started[..], &ended[..]];
                if contacts.plan_patch(Some(&jobs), events, now.len(), owners.len()).expect("no panic") {
                    patched += 1;
                    contacts.publish(Some(&jobs));
                    for (want, &owner) in brute_force(&owners, &now).iter().zip(&owners) {
                        prop_assert_eq!(contacts.touching(owner), &want[..]);
                    }
                    prop_assert!(contacts.touching(old).is_empty());
                } else {
                    built += 1;
                    check(&mut contacts, &jobs, &owners, &now);
                }
                pairs = now;
            }
            prop_assert!(patched > 0, "{} built", built);
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

    /// A build cut short by a panicking job (here a pair naming an id
    /// past the entity table, which the plugin never passes) leaves
    /// counts behind in some shards; the next build starts from zero
    /// anyway and is exact.
    #[test]
    fn a_build_cut_short_leaves_the_next_one_exact() {
        let jobs = JobSystem::new(2);
        let mut contacts = Contacts::new(2);
        let (owners, pairs) = draw(5, 3000, 2 * PARALLEL_MIN, Shape::Promised);
        check(&mut contacts, &jobs, &owners, &pairs);
        let mut broken = pairs.clone();
        let past_the_table = entity(5000, 1);
        broken.push((owners[2999], past_the_table));
        assert!(contacts.build(Some(&jobs), owners.len(), &broken).is_err());
        check(&mut contacts, &jobs, &owners, &pairs);
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
        contacts.build(Some(&jobs), owners.len(), &[]).expect("no job panics");
        assert!(owners.iter().zip(&before).all(|(&e, list)| contacts.touching(e) == list));
        contacts.publish(Some(&jobs));
        assert!(owners.iter().all(|&e| contacts.touching(e).is_empty()));
    }
}
