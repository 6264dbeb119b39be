//! The persistent broad phase: its calls, and the update that turns the
//! calls since the last update into pairs and events.

use super::bulk::{AabbSource, CHECK_CHUNK, CheckPass, MAX_RANGES, PARALLEL_MIN, SlotRange};
use super::candidates::{Candidates, Events, Marks};
use super::config::PersistentConfig;
use super::error::ProxyError;
use super::index::{FatIndex, QueryChunk, query_chunk};
use super::pair_sort::PairSort;
use super::queries::QueryScratch;
use super::slots::{Bits, MAX_PROXIES, Margin, Proxy, ProxyKind, SlotState, Slots};
use broadphase_jobs::JobSystem;
use broadphase_partition::{GridTree, PartitionError};
use broadphase_storage::{Aabb, AlignedColumn, Pool, SortedUnion};
use core::time::Duration;
use parking_lot::Mutex;
use std::time::Instant;

/// Most never-used slots a full update reads in place (they pair with
/// each other: at most about 2,000 pairs to drop).
const BLANK_IN_PLACE: usize = 64;

/// How the last update found its candidate pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum UpdatePath {
    /// Nothing was inserted, removed or changed: nothing was done.
    #[default]
    Unchanged,
    /// Only the re-indexed proxies' candidates were recomputed.
    Incremental,
    /// Every candidate pair was recomputed on all threads: more than
    /// [`PersistentConfig::full_rebuild_fraction`] of the live proxies
    /// were re-indexed, or the update before failed. Every proxy is
    /// re-indexed at the first update, so that one is full unless the
    /// fraction is 1 or more: then it is [`Incremental`](Self::Incremental)
    /// like the rest.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{PersistentBroadPhase, PersistentConfig, ProxyKind, UpdatePath};
    /// use broadphase_storage::{Aabb, AlignedColumn, Pool};
    /// let jobs = JobSystem::new(1);
    /// let mut world = PersistentBroadPhase::default(); // fraction 0.25
    /// world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// world.update(&jobs)?;
    /// assert_eq!(world.stats().path, UpdatePath::Full);
    ///
    /// let config = PersistentConfig { full_rebuild_fraction: 1.0, ..Default::default() };
    /// let mut world = PersistentBroadPhase::with_config(config);
    /// world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// world.update(&jobs)?;
    /// assert_eq!(world.stats().path, UpdatePath::Incremental);
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    Full,
}

/// Counts of the last update.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_persistent::{PersistentBroadPhase, ProxyKind, UpdatePath};
/// use broadphase_storage::{Aabb, AlignedColumn, Pool};
/// let mut world = PersistentBroadPhase::default();
/// world.insert(Aabb::default(), ProxyKind::Dynamic)?;
/// world.update(&JobSystem::new(1))?;
/// assert_eq!(world.stats().proxies, 1);
/// assert_eq!(world.stats().path, UpdatePath::Full);
/// # Ok::<(), broadphase_persistent::ProxyError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UpdateStats {
    /// Live proxies, dynamic and static.
    pub proxies: usize,
    /// Live dynamic proxies.
    pub dynamic: usize,
    /// Proxies re-indexed: inserted, changed static, or dynamic whose box
    /// left its enlarged box.
    pub reindexed: usize,
    /// How the candidates were found.
    pub path: UpdatePath,
    /// Whether the index of enlarged boxes was rebuilt.
    pub index_rebuilt: bool,
    /// Proxies whose entry in the index was stale, paired among themselves.
    pub stale: usize,
    /// Candidate pairs kept (enlarged boxes overlap).
    pub candidates: usize,
    /// Of those, the candidates of two proxies at rest (static or
    /// asleep), which the update did not read.
    pub resting: usize,
    /// Whether [`resting_pairs`](PersistentBroadPhase::resting_pairs) may
    /// differ from the update before (a candidate came to rest or woke,
    /// or the update was full); when false they are the same list.
    pub resting_changed: bool,
    /// Overlapping pairs.
    pub pairs: usize,
    /// Pairs that started overlapping.
    pub started: usize,
    /// Pairs that stopped overlapping or lost a proxy.
    pub ended: usize,
}

/// Where the last update's time went: finding the candidate pairs, then
/// merging them with the kept ones. Wall-clock times on the calling
/// thread, all zero for an update with nothing to do.
///
/// A full update's `candidates` is the grid tree's pairs over every
/// enlarged box, the work of a rebuild from scratch; its `merge` is what
/// keeping pairs across frames costs on top (the sort of the fresh pairs
/// into slot order, the diff against the kept ones that gives the events,
/// the lists).
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
/// use broadphase_storage::Aabb;
/// use glam::Vec3;
///
/// let jobs = JobSystem::new(1);
/// let mut world = PersistentBroadPhase::default();
/// world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Dynamic)?;
/// world.update(&jobs)?;
/// let times = world.update_times();
/// assert!(times.candidates + times.merge <= times.total);
/// world.update(&jobs)?; // nothing changed
/// assert_eq!(world.update_times().total, core::time::Duration::ZERO);
/// # Ok::<(), broadphase_persistent::ProxyError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UpdateTimes {
    /// Finding the candidate pairs: the grid tree over every enlarged box
    /// (a full update), or the index's queries and the stale proxies'
    /// pairs (an incremental one).
    pub candidates: Duration,
    /// Merging the fresh candidates with the kept ones: sorting them,
    /// re-testing, writing the pairs and the events.
    pub merge: Duration,
    /// The whole update.
    pub total: Duration,
}

/// A broad phase that persists across frames: proxies with stable handles,
/// indexed by enlarged boxes, with the candidate pairs kept from one
/// update to the next. A frame costs what moved.
///
/// Each frame: [`set_aabb`](Self::set_aabb) (or
/// [`set_aabbs`](Self::set_aabbs)) the proxies that moved,
/// [`insert`](Self::insert) and [`remove`](Self::remove) as the game
/// spawns and despawns, then [`update`](Self::update) and read
/// [`pairs`](Self::pairs), [`started`](Self::started) and
/// [`ended`](Self::ended).
///
/// - **Exact.** The pairs are always those a full rebuild on the true
///   boxes would report, minus the pairs of two static proxies and those
///   of two proxies of one group ([`set_group`](Self::set_group)): candidates
///   come from the enlarged boxes, and every candidate with a changed box
///   is tested on the true boxes at each update. Overlap is inclusive.
/// - **Cheap when little moves.** A dynamic proxy is indexed by its box
///   enlarged by a margin ([`PersistentConfig::margin`]); while its box
///   stays inside, only its candidates are re-tested. A proxy that leaves
///   it, a new proxy and a changed static proxy are re-indexed: queried
///   against the index, which keeps their old entries as stale until a
///   rebuild pays for itself. When many proxies are re-indexed at once,
///   the update recomputes every candidate on all threads with the grid
///   tree instead.
/// - **Deterministic.** Pair lists are sorted by slot; the same calls give
///   the same pairs and events in the same order for any number of
///   threads.
/// - **Allocation-free when warm.** Every buffer is reused; an update with
///   the same numbers of proxies and pairs allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
/// use broadphase_storage::{Aabb, AlignedColumn, Pool};
/// use glam::Vec3;
///
/// let jobs = JobSystem::new(2);
/// let mut world = PersistentBroadPhase::default();
/// let ground = world.insert(Aabb::new(Vec3::new(-50.0, -1.0, -50.0), Vec3::new(50.0, 0.0, 50.0)), ProxyKind::Static)?;
/// let ball = world.insert(Aabb::new(Vec3::new(0.0, 3.0, 0.0), Vec3::new(1.0, 4.0, 1.0)), ProxyKind::Dynamic)?;
/// world.update(&jobs)?;
/// assert!(world.pairs().is_empty());
///
/// // The ball falls onto the ground.
/// world.set_aabb(ball, Aabb::new(Vec3::new(0.0, -0.5, 0.0), Vec3::new(1.0, 0.5, 1.0)))?;
/// world.update(&jobs)?;
/// assert_eq!(world.started(), [[ground, ball]]);
/// assert_eq!(world.pairs(), [[ground, ball]]);
///
/// world.remove(ball)?;
/// world.update(&jobs)?;
/// assert_eq!(world.ended(), [[ground, ball]]);
/// assert!(world.pairs().is_empty());
/// # Ok::<(), broadphase_persistent::ProxyError>(())
/// ```
#[derive(Debug)]
pub struct PersistentBroadPhase {
    pub(super) config: PersistentConfig,
    pub(super) margin: Margin,
    pub(super) slots: Slots,
    /// Slots queued for re-indexing at the next update, each once.
    pub(super) queue: Pool<u32>,
    /// Slots removed since the last update.
    pub(super) removed: Pool<u32>,
    /// Whether any call changed anything since the last update.
    pub(super) touched: bool,
    /// The next update must recompute every candidate (after a failure).
    pub(super) force_full: bool,
    /// Per-call marks that catch a handle given twice to `remove_many`.
    call_marks: Pool<u32>,
    call: u32,
    /// Each slot range's queued slots in a parallel bulk set.
    range_queues: [Pool<u32>; MAX_RANGES],
    pub(super) index: FatIndex,
    pub(super) candidates: Candidates,
    pub(super) events: Events,
    pub(super) tree: GridTree,
    // Scratch kept across updates.
    moved: Pool<u32>,
    /// A `Vec`: a full update swaps it with `tree_pairs`, which the grid
    /// tree fills through its public `&mut Vec` interface.
    fresh: Vec<[u32; 2]>,
    pair_sort: PairSort,
    /// The live slots a query tests one by one (see `queries.rs`).
    pub(super) query_loose: Pool<u32>,
    /// A single query's scratch (see `queries.rs`).
    pub(super) query_scratch: Mutex<QueryScratch>,
    gathered: Pool<Aabb>,
    gathered_ids: AlignedColumn<u32>,
    tree_pairs: Vec<[u32; 2]>,
    query_chunks: Vec<QueryChunk>,
    /// The slots whose resting candidates an update wakes.
    disturbed: Bits,
    /// The published pairs of both tiers, merged when read.
    pub(super) all_pairs: SortedUnion<[Proxy; 2]>,
    pub(super) stats: UpdateStats,
    times: UpdateTimes,
}

impl Default for PersistentBroadPhase {
    fn default() -> Self {
        Self::with_config(PersistentConfig::default())
    }
}

impl PersistentBroadPhase {
    /// An empty broad phase with this tuning.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_persistent::{PersistentBroadPhase, PersistentConfig};
    /// let world = PersistentBroadPhase::with_config(PersistentConfig::default());
    /// assert!(world.is_empty());
    /// ```
    pub fn with_config(config: PersistentConfig) -> Self {
        Self {
            config,
            margin: Margin::new(config.margin, config.min_margin),
            slots: Slots::new(Margin::new(config.margin, config.min_margin).is_zero()),
            queue: Pool::new(),
            removed: Pool::new(),
            touched: false,
            force_full: false,
            call_marks: Pool::new(),
            call: 0,
            range_queues: [const { Pool::new() }; MAX_RANGES],
            index: FatIndex::new(config.tree.grid),
            candidates: Candidates::default(),
            events: Events::default(),
            tree: GridTree::with_config(config.tree),
            moved: Pool::new(),
            fresh: Vec::new(),
            pair_sort: PairSort::default(),
            query_loose: Pool::new(),
            query_scratch: Mutex::new(QueryScratch::default()),
            gathered: Pool::new(),
            gathered_ids: AlignedColumn::new(),
            tree_pairs: Vec::new(),
            query_chunks: Vec::new(),
            disturbed: Bits::default(),
            all_pairs: SortedUnion::default(),
            stats: UpdateStats::default(),
            times: UpdateTimes::default(),
        }
    }

    /// The tuning this broad phase was made with.
    pub fn config(&self) -> &PersistentConfig {
        &self.config
    }

    /// Live proxies (inserted and not removed).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::{Aabb, AlignedColumn, Pool};
    /// let mut world = PersistentBroadPhase::default();
    /// let p = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// assert_eq!(world.len(), 1);
    /// world.remove(p)?;
    /// assert_eq!(world.len(), 0);
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.slots.live
    }

    /// Whether no proxy is live.
    pub fn is_empty(&self) -> bool {
        self.slots.live == 0
    }

    /// Whether `proxy` names a live proxy of this broad phase.
    pub fn contains(&self, proxy: Proxy) -> bool {
        self.slots.live_slot(proxy).is_some()
    }

    /// The proxy's box, as last set.
    ///
    /// # Errors
    /// [`ProxyError::Stale`] if `proxy` is not live.
    pub fn aabb(&self, proxy: Proxy) -> Result<Aabb, ProxyError> {
        Ok(self.slots.boxes[self.slot(proxy, 0)?])
    }

    /// The box the proxy is indexed by, or will be from the next update.
    /// A dynamic proxy's is its box enlarged by its margin
    /// ([`PersistentConfig::margin`], at least
    /// [`min_margin`](PersistentConfig::min_margin)), computed when the
    /// proxy is inserted — before the first update too — and again when a
    /// set box leaves it (then without a margin if the box moved farther
    /// than the margin in one step). A static proxy's is its own box, and
    /// with `margin` and `min_margin` both 0 every proxy's is.
    ///
    /// # Errors
    /// [`ProxyError::Stale`] if `proxy` is not live.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::{Aabb, AlignedColumn, Pool};
    /// use glam::Vec3;
    /// let mut world = PersistentBroadPhase::default(); // margin 0.5
    /// let unit = Aabb::new(Vec3::ZERO, Vec3::ONE);
    /// let ball = world.insert(unit, ProxyKind::Dynamic)?;
    /// let wall = world.insert(unit, ProxyKind::Static)?;
    /// // No update yet: the ball's box grown by 0.5 × its largest extent.
    /// assert_eq!(world.enlarged_aabb(ball)?, Aabb::new(Vec3::splat(-0.5), Vec3::splat(1.5)));
    /// assert_eq!(world.enlarged_aabb(wall)?, unit);
    /// // A box that stays inside keeps the enlarged box.
    /// world.set_aabb(ball, Aabb::new(Vec3::splat(0.25), Vec3::splat(1.25)))?;
    /// assert_eq!(world.enlarged_aabb(ball)?, Aabb::new(Vec3::splat(-0.5), Vec3::splat(1.5)));
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn enlarged_aabb(&self, proxy: Proxy) -> Result<Aabb, ProxyError> {
        Ok(self.slots.indexed()[self.slot(proxy, 0)?])
    }

    /// The proxy's kind.
    ///
    /// # Errors
    /// [`ProxyError::Stale`] if `proxy` is not live.
    pub fn kind(&self, proxy: Proxy) -> Result<ProxyKind, ProxyError> {
        Ok(match self.slots.state[self.slot(proxy, 0)?] {
            SlotState::Static => ProxyKind::Static,
            _ => ProxyKind::Dynamic,
        })
    }

    /// Adds a proxy; its pairs appear at the next update.
    ///
    /// # Errors
    /// [`ProxyError::Input`] (index 0) for a NaN, infinite or inverted
    /// box; [`ProxyError::TooManyProxies`] past `u32` slots. Nothing is
    /// added then.
    pub fn insert(&mut self, aabb: Aabb, kind: ProxyKind) -> Result<Proxy, ProxyError> {
        aabb.validate(0).map_err(ProxyError::Input)?;
        self.slots.room_for(1).map_err(|count| ProxyError::TooManyProxies { count })?;
        Ok(self.insert_checked(aabb, kind))
    }

    /// Adds one proxy per box, all of `kind`, appending their handles to
    /// `out` in the boxes' order.
    ///
    /// # Errors
    /// As [`insert`](Self::insert), the box's `index` being its position in
    /// `boxes`; nothing is added then.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::{Aabb, AlignedColumn, Pool};
    /// let mut world = PersistentBroadPhase::default();
    /// let mut handles = Vec::new();
    /// world.insert_many(&[Aabb::default(); 3], ProxyKind::Static, &mut handles)?;
    /// assert_eq!(handles.len(), 3);
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn insert_many(
        &mut self,
        boxes: &[Aabb],
        kind: ProxyKind,
        out: &mut Vec<Proxy>,
    ) -> Result<(), ProxyError> {
        broadphase_storage::validate_boxes(boxes).map_err(ProxyError::Input)?;
        self.slots.room_for(boxes.len()).map_err(|count| ProxyError::TooManyProxies { count })?;
        out.reserve(boxes.len());
        for &aabb in boxes {
            out.push(self.insert_checked(aabb, kind));
        }
        Ok(())
    }

    /// Adds a proxy in slot `index`, so its handle's index is `index`: for
    /// callers that already number their objects densely (an ECS's entity
    /// ids), whose pair lists then come out in their own order. The slot
    /// may be free, past the end (the slots between become free), or hold
    /// a proxy removed since the last update: that one's pairs still end
    /// at the next update, under its old handle.
    ///
    /// # Errors
    /// [`ProxyError::Input`] (index 0) for a bad box,
    /// [`ProxyError::SlotTaken`] if the slot holds a live proxy,
    /// [`ProxyError::TooManyProxies`] for `index == u32::MAX`. Nothing is
    /// added then.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyError, ProxyKind};
    /// use broadphase_storage::{Aabb, AlignedColumn, Pool};
    /// let mut world = PersistentBroadPhase::default();
    /// let p = world.insert_at(7, Aabb::default(), ProxyKind::Dynamic)?;
    /// assert_eq!(p.index(), 7);
    /// assert!(matches!(world.insert_at(7, Aabb::default(), ProxyKind::Dynamic), Err(ProxyError::SlotTaken { index: 7 })));
    /// world.remove(p)?;
    /// let q = world.insert_at(7, Aabb::default(), ProxyKind::Dynamic)?; // before any update
    /// assert_eq!(q.generation(), p.generation() + 1);
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn insert_at(
        &mut self,
        index: u32,
        aabb: Aabb,
        kind: ProxyKind,
    ) -> Result<Proxy, ProxyError> {
        aabb.validate(0).map_err(ProxyError::Input)?;
        let slot = index as usize;
        if slot >= MAX_PROXIES {
            return Err(ProxyError::TooManyProxies { count: slot + 1 });
        }
        if slot < self.slots.len() && self.slots.state[slot].is_live() {
            return Err(ProxyError::SlotTaken { index });
        }
        self.slots.insert_at(slot, aabb, self.margin.first(&aabb, kind), kind);
        Ok(self.announce(index))
    }

    fn insert_checked(&mut self, aabb: Aabb, kind: ProxyKind) -> Proxy {
        let slot = self.slots.insert(aabb, self.margin.first(&aabb, kind), kind);
        self.announce(slot)
    }

    /// A new proxy in `slot`: changed and queued for the next update.
    fn announce(&mut self, slot: u32) -> Proxy {
        self.slots.changed.set(slot as usize);
        self.queue_slot(slot);
        self.touched = true;
        self.slots.handle(slot)
    }

    /// Removes a proxy: its handle goes stale now, and its pairs are
    /// reported in [`ended`](Self::ended) by the next update.
    ///
    /// # Errors
    /// [`ProxyError::Stale`] if `proxy` is not live.
    pub fn remove(&mut self, proxy: Proxy) -> Result<(), ProxyError> {
        let slot = self.slot(proxy, 0)?;
        self.remove_checked(slot);
        Ok(())
    }

    /// Removes every proxy of `proxies`.
    ///
    /// # Errors
    /// [`ProxyError::Stale`] naming the first handle that is not live or
    /// that appears a second time; nothing is removed then.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyError, ProxyKind};
    /// use broadphase_storage::{Aabb, AlignedColumn, Pool};
    /// let mut world = PersistentBroadPhase::default();
    /// let p = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// assert!(matches!(world.remove_many(&[p, p]), Err(ProxyError::Stale { position: 1, .. })));
    /// world.remove_many(&[p])?;
    /// assert!(world.is_empty());
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn remove_many(&mut self, proxies: &[Proxy]) -> Result<(), ProxyError> {
        self.next_call();
        for (position, &proxy) in proxies.iter().enumerate() {
            let slot = self.slot(proxy, position)?;
            if self.call_marks[slot] == self.call {
                return Err(ProxyError::Stale { proxy, position });
            }
            self.call_marks[slot] = self.call;
        }
        for &proxy in proxies {
            self.remove_checked(proxy.index() as usize);
        }
        Ok(())
    }

    fn remove_checked(&mut self, slot: usize) {
        self.slots.remove(slot);
        self.removed.push(slot as u32);
        self.touched = true;
    }

    /// Sets a proxy's box. A dynamic proxy whose box stays inside its
    /// enlarged box is not re-indexed.
    ///
    /// # Errors
    /// [`ProxyError::Input`] (index 0) for a bad box, else
    /// [`ProxyError::Stale`] if `proxy` is not live: the box is checked
    /// first, so a bad box with a stale handle is `Input`. Nothing
    /// changes then.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyError, ProxyKind};
    /// use broadphase_storage::{Aabb, AlignedColumn, Pool};
    /// use glam::Vec3;
    /// let mut world = PersistentBroadPhase::default();
    /// let ball = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// world.remove(ball)?; // the handle is stale now
    /// let inverted = Aabb::new(Vec3::ONE, Vec3::ZERO);
    /// assert!(matches!(world.set_aabb(ball, inverted), Err(ProxyError::Input(_))));
    /// assert!(matches!(world.set_aabb(ball, Aabb::default()), Err(ProxyError::Stale { .. })));
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn set_aabb(&mut self, proxy: Proxy, aabb: Aabb) -> Result<(), ProxyError> {
        aabb.validate(0).map_err(ProxyError::Input)?;
        let slot = self.slot(proxy, 0)?;
        self.set_checked(slot, aabb);
        Ok(())
    }

    /// Sets the box of each proxy of `proxies` to the box at the same
    /// position of `boxes`; a handle given twice gets its last box. Large
    /// calls (16,384 boxes or more) check and write on all threads of
    /// `jobs`; the result is the same for any number of threads.
    ///
    /// # Errors
    /// [`ProxyError::LengthMismatch`], then [`ProxyError::Input`] for
    /// the first bad box, then [`ProxyError::Stale`] for the first handle
    /// that is not live; nothing changes then. [`ProxyError::Partition`] if a
    /// job panicked (a bug).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::{Aabb, AlignedColumn, Pool};
    /// use glam::Vec3;
    /// let mut world = PersistentBroadPhase::default();
    /// let mut handles = Vec::new();
    /// world.insert_many(&[Aabb::default(); 2], ProxyKind::Dynamic, &mut handles)?;
    /// let moved = [Aabb::new(Vec3::ONE, Vec3::splat(2.0)); 2];
    /// world.set_aabbs(&JobSystem::new(2), &handles, &moved)?;
    /// assert_eq!(world.aabb(handles[1])?, moved[1]);
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn set_aabbs(
        &mut self,
        jobs: &JobSystem,
        proxies: &[Proxy],
        boxes: &[Aabb],
    ) -> Result<(), ProxyError> {
        if proxies.len() != boxes.len() {
            return Err(ProxyError::LengthMismatch { proxies: proxies.len(), boxes: boxes.len() });
        }
        if proxies.is_empty() {
            return Ok(());
        }
        self.write_boxes(jobs, proxies, boxes, Some(boxes))
    }

    /// Sets the box of each proxy of `proxies` to the box at the same
    /// position of `source`, made as it is written: a game's positions
    /// and shapes become the broad phase's boxes in one pass, with no box
    /// array written and read again between them (at a million moving
    /// proxies that array is 24 MB each way). Otherwise as
    /// [`set_aabbs`](Self::set_aabbs), but for bad boxes: each box is
    /// checked as it is written, so a bad one is found after the good ones
    /// were set.
    ///
    /// # Errors
    /// [`ProxyError::LengthMismatch`], then [`ProxyError::Stale`] for the
    /// first handle that is not live (nothing changes then), then
    /// [`ProxyError::Input`] for the first bad box: every good box of the
    /// call is set, and each bad one's proxy keeps its box.
    /// [`ProxyError::Partition`] if a job panicked (a source's `write`
    /// may): the boxes are then partly set.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{AabbSource, PersistentBroadPhase, ProxyError, ProxyKind};
    /// use broadphase_storage::{Aabb, InputError};
    /// use glam::Vec3;
    ///
    /// /// Unit cubes at their corners.
    /// struct Cubes(Vec<Vec3>);
    /// impl AabbSource for Cubes {
    ///     fn len(&self) -> usize {
    ///         self.0.len()
    ///     }
    ///     fn write(&self, first: usize, out: &mut [Aabb]) {
    ///         for (out, &c) in out.iter_mut().zip(&self.0[first..]) {
    ///             *out = Aabb::new(c, c + Vec3::ONE);
    ///         }
    ///     }
    /// }
    ///
    /// let mut world = PersistentBroadPhase::default();
    /// let mut handles = Vec::new();
    /// world.insert_many(&[Aabb::default(); 2], ProxyKind::Dynamic, &mut handles)?;
    /// let jobs = JobSystem::new(2);
    /// world.set_aabbs_from(&jobs, &handles, &Cubes(vec![Vec3::ZERO, Vec3::X]))?;
    /// assert_eq!(world.aabb(handles[1])?, Aabb::new(Vec3::X, Vec3::new(2.0, 1.0, 1.0)));
    ///
    /// // A NaN corner: the good box is set, the bad one's proxy keeps its box.
    /// let moved = Cubes(vec![Vec3::Y, Vec3::NAN]);
    /// let error = world.set_aabbs_from(&jobs, &handles, &moved).unwrap_err();
    /// assert!(matches!(error, ProxyError::Input(InputError::NotFinite { index: 1, .. })));
    /// assert_eq!(world.aabb(handles[0])?.min, Vec3::Y);
    /// assert_eq!(world.aabb(handles[1])?.min, Vec3::X);
    /// # Ok::<(), ProxyError>(())
    /// ```
    pub fn set_aabbs_from<S: AabbSource + ?Sized>(
        &mut self,
        jobs: &JobSystem,
        proxies: &[Proxy],
        source: &S,
    ) -> Result<(), ProxyError> {
        if proxies.len() != source.len() {
            return Err(ProxyError::LengthMismatch { proxies: proxies.len(), boxes: source.len() });
        }
        if proxies.is_empty() {
            return Ok(());
        }
        self.write_boxes(jobs, proxies, source, None)
    }

    /// The bulk sets' two passes: the check (the handles, and the boxes
    /// too where they are given, `checked` then being `source`), then the
    /// writes, each thread owning a range of slots.
    fn write_boxes<S: AabbSource + ?Sized>(
        &mut self,
        jobs: &JobSystem,
        proxies: &[Proxy],
        source: &S,
        checked: Option<&[Aabb]>,
    ) -> Result<(), ProxyError> {
        let parallel = proxies.len() >= PARALLEL_MIN && jobs.threads() > 1;
        let check = CheckPass::new(proxies, checked, &self.slots);
        jobs.for_each(proxies.len(), CHECK_CHUNK, |range, _| check.check(range))?;
        let sorted = !check.unsorted.into_inner();
        let (bad_box, stale) = (check.first_bad_box.into_inner(), check.first_stale.into_inner());
        if bad_box != usize::MAX {
            box_at(source, bad_box).validate(bad_box).map_err(ProxyError::Input)?;
        }
        if stale != usize::MAX {
            return Err(ProxyError::Stale { proxy: proxies[stale], position: stale });
        }

        let wanted = if parallel { jobs.threads().min(MAX_RANGES) } else { 1 };
        let range_len = self.slots.len().div_ceil(wanted).next_multiple_of(64);
        let (count, touched, words, first_bad, queue_lens) = {
            let margin = self.margin;
            let Slots { boxes: slot_boxes, fat, exact, state, changed, queued, .. } =
                &mut self.slots;
            let mut ranges: [Option<SlotRange<'_>>; MAX_RANGES] = [const { None }; MAX_RANGES];
            let mut count = 0;
            let mut fat_shares = fat.chunks_mut(range_len);
            let shares = slot_boxes
                .chunks_mut(range_len)
                .zip(exact.words.chunks_mut(range_len / 64))
                .zip(changed.words.chunks_mut(range_len / 64))
                .zip(queued.words.chunks_mut(range_len / 64))
                .zip(self.range_queues.iter_mut());
            for ((((boxes, exact), changed), queued), queue) in shares {
                let first = count * range_len;
                // No enlarged boxes kept: every range gets none.
                let fat = fat_shares.next().unwrap_or_default();
                ranges[count] = Some(SlotRange {
                    first,
                    boxes,
                    fat,
                    exact,
                    changed,
                    queued,
                    queue,
                    queue_len: 0,
                    words: 0..0,
                    first_bad: usize::MAX,
                });
                count += 1;
            }
            let state = &**state;
            jobs.for_each_mut(&mut ranges[..count], |_, range| {
                crate::profile::zone!("persistent: set boxes");
                if let Some(range) = range {
                    if checked.is_some() {
                        range.apply::<S, false>(proxies, source, sorted, state, margin);
                    } else {
                        range.apply::<S, true>(proxies, source, sorted, state, margin);
                    }
                }
            })?;
            let mut words: Option<core::ops::Range<usize>> = None;
            for range in ranges[..count].iter().flatten().filter(|range| !range.words.is_empty()) {
                let (start, end) = (range.words.start, range.words.end);
                words = Some(words.map_or(start..end, |w| w.start.min(start)..w.end.max(end)));
            }
            let first_bad =
                ranges[..count].iter().flatten().fold(usize::MAX, |b, r| b.min(r.first_bad));
            let mut queue_lens = [0; MAX_RANGES];
            for (len, range) in queue_lens.iter_mut().zip(ranges[..count].iter().flatten()) {
                *len = range.queue_len;
            }
            (count, words.is_some(), words.unwrap_or_default(), first_bad, queue_lens)
        };
        self.touched |= touched;
        self.slots.changed.note(words.clone());
        self.slots.queued.note(words);
        for (queue, &len) in self.range_queues[..count].iter().zip(&queue_lens) {
            self.queue.extend_from_slice(&queue[..len]);
        }
        if first_bad != usize::MAX {
            box_at(source, first_bad).validate(first_bad).map_err(ProxyError::Input)?;
        }
        Ok(())
    }

    #[inline]
    fn set_checked(&mut self, slot: usize, aabb: Aabb) {
        if self.slots.boxes[slot] == aabb {
            return;
        }
        let old = core::mem::replace(&mut self.slots.boxes[slot], aabb);
        self.slots.changed.set(slot);
        self.touched = true;
        let is_static = self.slots.state[slot] == SlotState::Static;
        let mut fat = if self.slots.fat_is_box { old } else { self.slots.fat[slot] };
        let reindex = self.slots.fat_is_box || self.margin.refit(is_static, &mut fat, &old, &aabb);
        self.slots.set_fat(slot, fat);
        if reindex {
            self.queue_slot(slot as u32);
        }
    }

    /// Makes a proxy static or dynamic; it is re-indexed at the next
    /// update (a static proxy's enlarged box is its box).
    ///
    /// # Errors
    /// [`ProxyError::Stale`] if `proxy` is not live.
    pub fn set_kind(&mut self, proxy: Proxy, kind: ProxyKind) -> Result<(), ProxyError> {
        let slot = self.slot(proxy, 0)?;
        let state = self.slots.state[slot];
        if (state == SlotState::Static) != (kind == ProxyKind::Static) {
            let fat = self.margin.first(&self.slots.boxes[slot], kind);
            self.slots.set_kind(slot, kind, fat);
            self.slots.changed.set(slot);
            self.queue_slot(slot as u32);
            self.touched = true;
        }
        Ok(())
    }

    /// Puts a proxy in a group: two proxies of the same non-zero group
    /// never pair (the parts of one compound body, say), as two static
    /// proxies never do. Group 0, every proxy's at insertion, is no
    /// group. A change is applied at the next update, as a change of kind
    /// is: the proxy is re-indexed, its pairs with its new group's
    /// members end, and those with its old group's members start where
    /// the boxes overlap. Setting the group it has does nothing.
    ///
    /// # Errors
    /// [`ProxyError::Stale`] if `proxy` is not live; nothing changes then.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::Aabb;
    /// let jobs = JobSystem::new(1);
    /// let mut world = PersistentBroadPhase::default();
    /// let hull = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// let turret = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// world.update(&jobs)?;
    /// assert_eq!(world.pairs(), [[hull, turret]]);
    ///
    /// world.set_group(hull, 7)?;
    /// world.set_group(turret, 7)?; // one ship: its parts never pair
    /// world.update(&jobs)?;
    /// assert_eq!((world.ended(), world.group(turret)?), (&[[hull, turret]][..], 7));
    /// assert!(world.pairs().is_empty());
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn set_group(&mut self, proxy: Proxy, group: u32) -> Result<(), ProxyError> {
        let slot = self.slot(proxy, 0)?;
        if self.slots.group[slot] != group {
            self.slots.group[slot] = group;
            self.slots.grouped |= group != 0;
            self.slots.changed.set(slot);
            self.queue_slot(slot as u32);
            self.touched = true;
        }
        Ok(())
    }

    /// The proxy's group, as last set (0, no group, unless
    /// [`set_group`](Self::set_group) set another).
    ///
    /// # Errors
    /// [`ProxyError::Stale`] if `proxy` is not live.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::Aabb;
    /// let mut world = PersistentBroadPhase::default();
    /// let p = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// assert_eq!(world.group(p)?, 0);
    /// world.set_group(p, 3)?;
    /// assert_eq!(world.group(p)?, 3); // set now, applied at the next update
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn group(&self, proxy: Proxy) -> Result<u32, ProxyError> {
        Ok(self.slots.group[self.slot(proxy, 0)?])
    }

    /// The live slot of `proxy`, or the error naming it at `position`.
    #[inline]
    fn slot(&self, proxy: Proxy, position: usize) -> Result<usize, ProxyError> {
        self.slots.live_slot(proxy).ok_or(ProxyError::Stale { proxy, position })
    }

    #[inline]
    fn queue_slot(&mut self, slot: u32) {
        if self.slots.queued.test_and_set(slot as usize) {
            self.queue.push(slot);
        }
    }

    fn next_call(&mut self) {
        self.call_marks.resize(self.slots.len(), 0);
        self.call = self.call.wrapping_add(1);
        if self.call == 0 {
            self.call_marks.fill(0);
            self.call = 1;
        }
    }

    /// Marks a proxy asleep (`true`) or awake: a hint that changes no
    /// output. Candidate pairs of two proxies that are each asleep or
    /// static are kept aside from the next update on, in a resting tier
    /// that no update reads until one of the two is disturbed — its box
    /// set to another, its kind or group changed, removed, or woken — so a
    /// world that is mostly asleep costs what is awake. Such pairs stay in
    /// [`pairs`](Self::pairs) (as [`resting_pairs`](Self::resting_pairs)),
    /// and start or end only as any pair does. A new proxy is awake.
    ///
    /// # Errors
    /// [`ProxyError::Stale`] if `proxy` is not live; nothing changes then.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::Aabb;
    /// let jobs = JobSystem::new(1);
    /// let mut world = PersistentBroadPhase::default();
    /// let a = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// let b = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// world.set_asleep(a, true)?;
    /// world.set_asleep(b, true)?;
    /// world.update(&jobs)?;
    /// assert_eq!(world.pairs(), [[a, b]]); // still a pair
    /// assert_eq!(world.resting_pairs(), [[a, b]]); // kept aside
    /// assert!(world.awake_pairs().is_empty() && world.is_asleep(a)?);
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn set_asleep(&mut self, proxy: Proxy, asleep: bool) -> Result<(), ProxyError> {
        let slot = self.slot(proxy, 0)?;
        if self.slots.asleep.get(slot) != asleep {
            if self.slots.set_asleep(slot, asleep) {
                // It moves to the index's tier of its new state.
                self.queue_slot(slot as u32);
            }
            self.touched = true;
        }
        Ok(())
    }

    /// Whether the proxy is marked asleep ([`set_asleep`](Self::set_asleep)).
    ///
    /// # Errors
    /// [`ProxyError::Stale`] if `proxy` is not live.
    pub fn is_asleep(&self, proxy: Proxy) -> Result<bool, ProxyError> {
        Ok(self.slots.asleep.get(self.slot(proxy, 0)?))
    }

    /// Every overlapping pair as of the last update, `[a, b]` with
    /// `a < b`, sorted; pairs of two static proxies, and of two proxies
    /// of one group, are left out. The union of
    /// [`awake_pairs`](Self::awake_pairs) and
    /// [`resting_pairs`](Self::resting_pairs): while both have pairs, the
    /// first call after an update merges them (once; a buffer of the broad
    /// phase's own, reused), so a caller that only needs what moved reads
    /// `awake_pairs` and the events instead.
    pub fn pairs(&self) -> &[[Proxy; 2]] {
        self.all_pairs.get(&self.events.pairs, self.candidates.resting_pairs())
    }

    /// The overlapping pairs of the last update with at least one proxy
    /// that is neither static nor asleep, sorted: the pairs a physics step
    /// works on. All of [`pairs`](Self::pairs) when nothing is asleep.
    pub fn awake_pairs(&self) -> &[[Proxy; 2]] {
        &self.events.pairs
    }

    /// The overlapping pairs of the last update of two proxies that are
    /// each asleep or static (and not both static), sorted: kept from the
    /// update they came to rest in until one is disturbed. See
    /// [`set_asleep`](Self::set_asleep).
    pub fn resting_pairs(&self) -> &[[Proxy; 2]] {
        self.candidates.resting_pairs()
    }

    /// The pairs of the last update that were not pairs before it, sorted.
    pub fn started(&self) -> &[[Proxy; 2]] {
        &self.events.started
    }

    /// The pairs before the last update that are no longer pairs, sorted:
    /// the boxes separated, a proxy was removed, both became static, or
    /// both joined one group.
    /// A removed proxy's handle appears here with the generation it had.
    pub fn ended(&self) -> &[[Proxy; 2]] {
        &self.events.ended
    }

    /// Counts of the last update.
    pub fn stats(&self) -> &UpdateStats {
        &self.stats
    }

    /// Where the last update's time went.
    pub fn update_times(&self) -> &UpdateTimes {
        &self.times
    }

    /// Turns every call since the last update into pairs and events; the
    /// parallel passes run on `jobs`. The result is the same for any
    /// number of threads.
    ///
    /// # Errors
    /// [`ProxyError::Partition`] if a job panicked (a bug) or a list could
    /// not grow. The update's lists are then empty, and the next update
    /// recomputes every candidate and reports each pair it finds as
    /// started.
    pub fn update(&mut self, jobs: &JobSystem) -> Result<(), ProxyError> {
        crate::profile::zone!("persistent: update");
        let start = Instant::now();
        self.times = UpdateTimes::default();
        // Nothing to do: `try_update` keeps the lists, and the times stay 0.
        let idle = self.idle();
        self.all_pairs.reset();
        let result = self.try_update(jobs);
        // A failed update cannot know which candidates it lost: the next
        // one starts over.
        self.force_full = result.is_err();
        if result.is_err() {
            self.events.clear();
            self.candidates.clear();
            self.index.invalidate();
        }
        let every_slot = result.is_err() || self.stats.path == UpdatePath::Full;
        self.slots.note_rested(every_slot);
        self.finish();
        if !idle {
            self.times.total = start.elapsed();
        }
        result
    }

    /// No call since the last update changed anything, and it succeeded:
    /// an update keeps its lists and reports no events.
    fn idle(&self) -> bool {
        !self.touched && !self.force_full
    }

    fn try_update(&mut self, jobs: &JobSystem) -> Result<(), ProxyError> {
        self.stats = UpdateStats {
            proxies: self.slots.live,
            dynamic: self.slots.dynamic,
            ..UpdateStats::default()
        };
        if self.idle() {
            self.events.started.reset();
            self.events.ended.reset();
            self.stats.candidates = self.candidates.len();
            self.stats.resting = self.candidates.resting_len();
            self.stats.pairs = self.events.pairs.len() + self.candidates.resting_pairs().len();
            return Ok(());
        }
        let start = Instant::now();
        let reindexed = self.live_queued();
        let full = self.force_full
            || reindexed as f64
                > f64::from(self.config.full_rebuild_fraction.max(0.0)) * self.slots.live as f64;
        self.fresh.clear();
        if full {
            self.stats.resting_changed = true;
            self.candidates.wake_all();
            self.full_candidates(jobs)?;
            self.times.candidates = start.elapsed();
            self.candidates.replace(jobs, &mut self.fresh, &self.slots, &mut self.events)?;
            if self.slots.sleeping > 0 {
                self.candidates.settle(&self.slots, &mut self.events);
            }
        } else {
            self.collect_moved();
            let woken = self.slots.disturbed(&mut self.disturbed);
            if woken {
                self.stats.resting_changed |= self.candidates.wake(&self.disturbed);
            }
            self.incremental_candidates(jobs)?;
            self.times.candidates = start.elapsed();
            self.pair_sort.sort(&mut self.fresh);
            let marks = Marks { slots: &self.slots };
            self.candidates.merge(jobs, &self.fresh, &marks, &mut self.events)?;
            if woken || self.slots.settled() {
                self.stats.resting_changed |= self.candidates.settle(&self.slots, &mut self.events);
            }
        }
        self.times.merge = start.elapsed() - self.times.candidates;
        self.stats.reindexed = reindexed;
        self.stats.path = if full { UpdatePath::Full } else { UpdatePath::Incremental };
        self.stats.candidates = self.candidates.len();
        self.stats.resting = self.candidates.resting_len();
        self.stats.pairs = self.events.pairs.len() + self.candidates.resting_pairs().len();
        self.stats.started = self.events.started.len();
        self.stats.ended = self.events.ended.len();
        Ok(())
    }

    /// How many queued slots are live: the proxies this update re-indexes.
    /// A count, not a list: a full update needs no list, and building one
    /// of a million slots took 1.3-1.4 ms.
    fn live_queued(&self) -> usize {
        let state = &self.slots.state;
        self.queue.iter().map(|&slot| usize::from(state[slot as usize].is_live())).sum()
    }

    /// Collects the live queued slots (their enlarged boxes were set with
    /// their boxes).
    fn collect_moved(&mut self) {
        self.moved.reset();
        let state = &self.slots.state;
        self.moved.extend(self.queue.iter().filter(|&&slot| state[slot as usize].is_live()));
    }

    /// Every candidate pair from scratch: the grid tree over every live
    /// enlarged box, in the tree's order (the caller sorts them, and the
    /// merge drops those of free slots and of two static proxies).
    fn full_candidates(&mut self, jobs: &JobSystem) -> Result<(), ProxyError> {
        crate::profile::zone!("persistent: full");
        self.index.invalidate();
        let slots = &self.slots;
        // While few slots are free, the tree reads the enlarged boxes in
        // place, free slots' old boxes too, and their pairs are dropped
        // by the merge: cheaper than gathering the live ones. Slots that
        // never held a proxy (an ECS's ids of entities without a box) all
        // sit at one point, and pair with each other: a few are cheap,
        // many would make the tree's pairs quadratic in their count.
        let in_place =
            (slots.len() - slots.live) * 4 <= slots.len() && slots.blank <= BLANK_IN_PLACE;
        if in_place {
            self.tree.try_find_pairs(jobs, slots.indexed(), &mut self.tree_pairs)?;
            // Slot order is the input order, so `i < j` gives `a < b`.
            core::mem::swap(&mut self.fresh, &mut self.tree_pairs);
        } else {
            slots.gather_live(&mut self.gathered, &mut self.gathered_ids);
            self.tree.try_find_pairs(jobs, &self.gathered, &mut self.tree_pairs)?;
            // Gathered in slot order: `i < j` still gives `a < b`.
            let ids = &self.gathered_ids;
            self.fresh
                .extend(self.tree_pairs.iter().map(|&[i, j]| [ids[i as usize], ids[j as usize]]));
        }
        Ok(())
    }

    /// The re-indexed proxies' candidates: against the index's current
    /// entries, then among the stale ones.
    fn incremental_candidates(&mut self, jobs: &JobSystem) -> Result<(), ProxyError> {
        crate::profile::zone!("persistent: incremental");
        if self.moved.is_empty() {
            return Ok(());
        }
        if self.index.prepare(jobs, &self.slots, &self.moved)? {
            self.stats.index_rebuilt = true;
        }
        self.query_index(jobs)?;
        self.pair_stale(jobs)
    }

    /// Each re-indexed proxy against the index, in parallel chunks.
    fn query_index(&mut self, jobs: &JobSystem) -> Result<(), ProxyError> {
        let size = query_chunk(self.moved.len(), jobs.threads());
        let chunks = self.moved.len().div_ceil(size);
        while self.query_chunks.len() < chunks {
            self.query_chunks.push(QueryChunk::default());
        }
        let (moved, slots, index) = (&self.moved, &self.slots, &self.index);
        jobs.for_each_mut(&mut self.query_chunks[..chunks], |chunk, out| {
            let first = chunk * size;
            out.query(&moved[first..(first + size).min(moved.len())], slots, index);
        })?;
        for chunk in &mut self.query_chunks[..chunks] {
            if let Some(e) = chunk.failure.take() {
                return Err(PartitionError::Input(e).into());
            }
            self.fresh.extend_from_slice(&chunk.pairs);
        }
        Ok(())
    }

    /// Pairs among the proxies whose index entry is stale, keeping those
    /// with a re-indexed proxy (the others did not change).
    fn pair_stale(&mut self, jobs: &JobSystem) -> Result<(), ProxyError> {
        self.index.gather_stale(
            &self.slots,
            &self.moved,
            &mut self.gathered,
            &mut self.gathered_ids,
        );
        self.stats.stale = self.gathered.len();
        if self.gathered.len() < 2 {
            return Ok(());
        }
        self.tree.try_find_pairs(jobs, &self.gathered, &mut self.tree_pairs)?;
        let (slots, ids) = (&self.slots, &self.gathered_ids);
        self.fresh.extend(self.tree_pairs.iter().filter_map(|&[i, j]| {
            let (a, b) = (ids[i as usize], ids[j as usize]);
            let (sa, sb) = (a as usize, b as usize);
            let moved = slots.queued.get(sa) | slots.queued.get(sb);
            let both_static =
                (slots.state[sa] == SlotState::Static) & (slots.state[sb] == SlotState::Static);
            let keep = moved & !both_static & !slots.same_group(sa, sb);
            keep.then_some(if a < b { [a, b] } else { [b, a] })
        }));
        Ok(())
    }

    /// Frees the removed slots and clears the update's marks.
    fn finish(&mut self) {
        for &slot in &self.removed {
            self.slots.free(slot);
        }
        self.removed.reset();
        self.queue.reset();
        self.slots.clear_marks();
        self.touched = false;
    }
}

/// Box `index` of `source`, made again (for its error).
fn box_at<S: AabbSource + ?Sized>(source: &S, index: usize) -> Aabb {
    let mut found = [Aabb::default()];
    source.write(index, &mut found);
    found[0]
}
