//! Snapshots for rollback: the state the next updates depend on, copied
//! out and back in.
//!
//! A snapshot holds every slot (boxes, enlarged boxes, kinds, groups, generations,
//! the free list), the calls queued since the last update (re-index queue,
//! removals, the marks), the kept candidates with whether each touched,
//! the published pairs and events, the flags and the last update's counts,
//! and the index of enlarged boxes as it stands: its grids, each tier's
//! stale list and marks, and what each tier has paid towards its next
//! rebuild. It leaves out every scratch buffer and the grid tree, which
//! keeps nothing from one call to the next but its buffers.
//!
//! With the index in it, a restore copies the state back and rebuilds
//! nothing: the update after it finds the index as the update after the
//! snapshot did, so it is incremental where that one was, rebuilds the
//! index only where that one did, and costs what it cost.

use super::broad_phase::{PersistentBroadPhase, UpdateStats};
use super::candidates::{Events, KeptCandidates};
use super::config::PersistentConfig;
use super::index::FatIndex;
use super::slots::{Margin, Slots};
use broadphase_partition::GridTree;
use broadphase_storage::Pool;

/// The state of a [`PersistentBroadPhase`] at one moment, for rollback:
/// [`restore`](PersistentBroadPhase::restore) puts it back, and the same
/// calls after it give the same pairs, events and query answers, bit for
/// bit, on any number of threads.
///
/// Take one with [`snapshot`](PersistentBroadPhase::snapshot), or, every
/// frame, with [`snapshot_into`](PersistentBroadPhase::snapshot_into) into
/// a snapshot kept in a ring: that copies into the snapshot's own
/// buffers, and allocates nothing once they are big enough. A snapshot
/// carries the broad phase's [`PersistentConfig`] and its index of
/// enlarged boxes, built under that tuning; the default snapshot is the
/// state of [`PersistentBroadPhase::default`].
///
/// # Examples
///
/// ```
/// use broadphase_jobs::JobSystem;
/// use broadphase_persistent::{BroadPhaseSnapshot, PersistentBroadPhase, ProxyKind};
/// use broadphase_storage::Aabb;
/// use glam::Vec3;
/// let jobs = JobSystem::new(2);
/// let mut world = PersistentBroadPhase::default();
/// let a = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Dynamic)?;
/// world.update(&jobs)?;
///
/// let mut ring = vec![BroadPhaseSnapshot::default(); 8];
/// world.snapshot_into(&mut ring[0]); // frame 0
/// let b = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Dynamic)?;
/// world.update(&jobs)?;
/// assert_eq!(world.started(), [[a, b]]);
///
/// world.restore(&ring[0]); // back to frame 0: `b` was never inserted
/// assert!(world.contains(a) && !world.contains(b));
/// let again = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Dynamic)?;
/// world.update(&jobs)?;
/// assert_eq!((again, world.started()), (b, &[[a, b]][..])); // the same replay
/// # Ok::<(), broadphase_persistent::ProxyError>(())
/// ```
#[derive(Debug)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "crate::serialize::Unchecked")
)]
pub struct BroadPhaseSnapshot {
    pub(crate) config: PersistentConfig,
    pub(crate) slots: Slots,
    pub(crate) queue: Pool<u32>,
    pub(crate) removed: Pool<u32>,
    pub(crate) touched: bool,
    pub(crate) force_full: bool,
    pub(crate) candidates: KeptCandidates,
    pub(crate) events: Events,
    pub(crate) stats: UpdateStats,
    pub(crate) index: FatIndex,
}

impl Default for BroadPhaseSnapshot {
    fn default() -> Self {
        let config = PersistentConfig::default();
        Self {
            config,
            slots: Slots::new(Margin::new(config.margin, config.min_margin).is_zero()),
            queue: Pool::new(),
            removed: Pool::new(),
            touched: false,
            force_full: false,
            candidates: KeptCandidates::default(),
            events: Events::default(),
            stats: UpdateStats::default(),
            index: FatIndex::new(config.tree.grid),
        }
    }
}

/// `clone_from` copies into the buffers already there, as
/// [`snapshot_into`](PersistentBroadPhase::snapshot_into) does.
impl Clone for BroadPhaseSnapshot {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.config = source.config;
        self.slots.clone_from(&source.slots);
        self.queue.clone_from(&source.queue);
        self.removed.clone_from(&source.removed);
        self.touched = source.touched;
        self.force_full = source.force_full;
        self.candidates.clone_from(&source.candidates);
        self.events.clone_from(&source.events);
        self.stats = source.stats;
        self.index.clone_from(&source.index);
    }
}

impl BroadPhaseSnapshot {
    /// Live proxies when the snapshot was taken.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_persistent::{BroadPhaseSnapshot, PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::Aabb;
    /// let mut world = PersistentBroadPhase::default();
    /// world.insert(Aabb::default(), ProxyKind::Static)?;
    /// assert_eq!(world.snapshot().len(), 1);
    /// assert_eq!(BroadPhaseSnapshot::default().len(), 0);
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn len(&self) -> usize {
        self.slots.live
    }

    /// Whether no proxy was live when the snapshot was taken.
    pub fn is_empty(&self) -> bool {
        self.slots.live == 0
    }

    /// The tuning of the broad phase the snapshot was taken of; a restore
    /// adopts it.
    pub fn config(&self) -> &PersistentConfig {
        &self.config
    }
}

/// Copies `from` into `to`, growing `to` with room to spare: these lists'
/// lengths vary from frame to frame, and each new longest one should not
/// cost an allocation in every snapshot of a ring.
pub(crate) fn copy<T: Copy>(to: &mut Pool<T>, from: &Pool<T>) {
    if to.capacity() < from.len() {
        to.reset();
        to.reserve(from.len() + from.len() / 4 + ROOM);
    }
    to.clone_from(from);
}

/// Items a snapshot's list has room for beyond its longest, at least.
const ROOM: usize = 64;

impl PersistentBroadPhase {
    /// The broad phase's state now, for [`restore`](Self::restore): a new
    /// snapshot (see [`snapshot_into`](Self::snapshot_into) to reuse one).
    /// Calls since the last update are part of it: a restore brings them
    /// back pending.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::Aabb;
    /// use glam::Vec3;
    /// let jobs = JobSystem::new(1);
    /// let mut world = PersistentBroadPhase::default();
    /// let ball = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Dynamic)?;
    /// world.update(&jobs)?;
    /// let saved = world.snapshot();
    /// world.remove(ball)?;
    /// world.update(&jobs)?;
    /// world.restore(&saved);
    /// assert_eq!(world.aabb(ball)?, Aabb::new(Vec3::ZERO, Vec3::ONE));
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn snapshot(&self) -> BroadPhaseSnapshot {
        let mut snapshot = BroadPhaseSnapshot::default();
        self.snapshot_into(&mut snapshot);
        snapshot
    }

    /// Writes the broad phase's state now into `snapshot`, reusing its
    /// buffers, which grow with room to spare: once they are as big as
    /// the state (a ring of snapshots after a few laps), this allocates
    /// nothing. It copies every slot's boxes and marks (about 58 bytes a
    /// slot, 34 with no margin), the kept candidates (17 bytes each), the
    /// published lists and the index of enlarged boxes (about 60 bytes a
    /// proxy when built: the grids' boxes, leaves and nodes, and per slot
    /// each tier's marks; nearly nothing after a full update, which drops
    /// it). A grid the snapshot holds already — the same build, as in a
    /// ring of snapshots taken between two rebuilds of the index — is not
    /// copied again, and neither is it by a restore into a broad phase
    /// that still has it.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_persistent::{BroadPhaseSnapshot, PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::Aabb;
    /// let mut world = PersistentBroadPhase::default();
    /// let mut saved = BroadPhaseSnapshot::default();
    /// world.insert(Aabb::default(), ProxyKind::Dynamic)?;
    /// world.snapshot_into(&mut saved);
    /// assert_eq!(saved.len(), 1);
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn snapshot_into(&self, snapshot: &mut BroadPhaseSnapshot) {
        crate::profile::zone!("persistent: snapshot");
        snapshot.config = self.config;
        snapshot.slots.clone_from(&self.slots);
        copy(&mut snapshot.queue, &self.queue);
        copy(&mut snapshot.removed, &self.removed);
        snapshot.touched = self.touched;
        snapshot.force_full = self.force_full;
        self.candidates.kept_into(&mut snapshot.candidates);
        copy(&mut snapshot.events.pairs, &self.events.pairs);
        copy(&mut snapshot.events.started, &self.events.started);
        copy(&mut snapshot.events.ended, &self.events.ended);
        snapshot.stats = self.stats;
        snapshot.index.clone_from(&self.index);
    }

    /// Puts the broad phase back in the state `snapshot` was taken in:
    /// the same proxies, boxes, kinds and pending calls, the same
    /// [`pairs`](Self::pairs), [`started`](Self::started),
    /// [`ended`](Self::ended) and [`stats`](Self::stats), and the same
    /// tuning (the snapshot's). Handles are as they were then: one live at
    /// the snapshot is live again, one stale then is stale, and a handle
    /// given out after the snapshot is stale until the same calls give it
    /// out again. The same calls from here give the same outputs, bit for
    /// bit, on any number of threads.
    ///
    /// The state is copied into the broad phase's own buffers, the index
    /// of enlarged boxes with it: a restore costs about what
    /// [`snapshot_into`](Self::snapshot_into) does, and the update after
    /// it does what the update after the snapshot did: incremental where
    /// that one was, with the same [`UpdateStats`], counts of the index
    /// ([`UpdateStats::index_rebuilt`], [`UpdateStats::stale`]) included.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_jobs::JobSystem;
    /// use broadphase_persistent::{PersistentBroadPhase, ProxyKind};
    /// use broadphase_storage::Aabb;
    /// use glam::Vec3;
    /// let jobs = JobSystem::new(2);
    /// let mut world = PersistentBroadPhase::default();
    /// let wall = world.insert(Aabb::new(Vec3::ZERO, Vec3::ONE), ProxyKind::Static)?;
    /// let ball = world.insert(Aabb::new(Vec3::splat(3.0), Vec3::splat(4.0)), ProxyKind::Dynamic)?;
    /// world.update(&jobs)?;
    /// let saved = world.snapshot();
    ///
    /// let hit = Aabb::new(Vec3::splat(0.5), Vec3::splat(1.5));
    /// world.set_aabb(ball, hit)?;
    /// world.update(&jobs)?;
    /// let first = world.started().to_vec();
    ///
    /// world.restore(&saved);
    /// assert!(world.pairs().is_empty());
    /// world.set_aabb(ball, hit)?; // the same input again
    /// world.update(&jobs)?;
    /// assert_eq!(world.started(), first);
    /// assert_eq!(first, [[wall, ball]]);
    /// # Ok::<(), broadphase_persistent::ProxyError>(())
    /// ```
    pub fn restore(&mut self, snapshot: &BroadPhaseSnapshot) {
        crate::profile::zone!("persistent: restore");
        if snapshot.config.tree != self.config.tree {
            // The tree keeps nothing from one call to the next but its
            // buffers: only its tuning must be the snapshot's.
            self.tree = GridTree::with_config(snapshot.config.tree);
        }
        // Built under the snapshot's tuning, which the broad phase adopts.
        self.index.clone_from(&snapshot.index);
        self.config = snapshot.config;
        self.margin = Margin::new(snapshot.config.margin, snapshot.config.min_margin);
        self.slots.clone_from(&snapshot.slots);
        self.queue.clone_from(&snapshot.queue);
        self.removed.clone_from(&snapshot.removed);
        self.touched = snapshot.touched;
        self.force_full = snapshot.force_full;
        self.candidates.restore(&snapshot.candidates);
        self.all_pairs.reset();
        self.events.clone_from(&snapshot.events);
        self.stats = snapshot.stats;
    }
}
