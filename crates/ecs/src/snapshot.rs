//! Snapshots of the plugin for rollback: the broad phase's snapshot and
//! what the plugin keeps between runs, copied out and back in.
//!
//! A snapshot holds the broad phase's state, its index of enlarged boxes
//! included ([`BroadPhaseSnapshot`]), the table of entities and their
//! proxies (with last frame's gathered dynamic entities and handles), the
//! static and sleeping sets as last gathered, the published pairs and
//! events, the compound-body links and body lists, and the frame's counts.
//! It leaves out the job system, the dynamic boxes (gathered anew each
//! run) and the per-entity contact lists: those are a function of the
//! published pairs, so the first read after a restore merges them again
//! from the snapshot's pairs.

use crate::bodies::BodyState;
use crate::gather::{Sleepers, Statics};
use crate::kept::KeptSet;
use crate::proxies::EntityProxies;
use crate::{BroadPhasePlugin, FrameStats, PluginConfig, Position};
use broadphase_persistent::BroadPhaseSnapshot;
use broadphase_storage::Pool;
use hecs::Entity;

/// The state of a [`BroadPhasePlugin`] after a run, for rollback:
/// [`restore`](BroadPhasePlugin::restore) puts it back, and the runs after
/// it over a world in the same state give the same
/// [`pairs`](BroadPhasePlugin::pairs), [`started`](BroadPhasePlugin::started),
/// [`ended`](BroadPhasePlugin::ended), [`touching`](BroadPhasePlugin::touching)
/// lists, body lists ([`body_pairs`](BroadPhasePlugin::body_pairs) and its
/// events) and query answers, bit for bit, on any number of threads.
///
/// The world is the game's to restore: the same entities (the same
/// `Entity` handles, respawned with `World::spawn_at` where needed) with
/// the same components as when the snapshot was taken. The order the
/// world lists them in does not matter. Take one with
/// [`snapshot`](BroadPhasePlugin::snapshot), or every frame with
/// [`snapshot_into`](BroadPhasePlugin::snapshot_into) into a snapshot kept
/// in a ring, which allocates nothing once its buffers are big enough.
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, BroadPhasePlugin, PluginSnapshot};
/// use glam::Vec3;
/// let mut world = hecs::World::new();
/// let a = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
/// let mut plugin = BroadPhasePlugin::new();
/// plugin.run(&mut world)?;
/// let mut saved = PluginSnapshot::default();
/// plugin.snapshot_into(&mut saved);
///
/// let b = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
/// plugin.run(&mut world)?;
/// assert_eq!(plugin.started(), [(a, b)]);
///
/// // Roll back: the game restores its world, the plugin its state.
/// world.despawn(b).unwrap();
/// plugin.restore(&saved);
/// assert!(plugin.pairs().is_empty() && plugin.touching(a).is_empty());
/// world.spawn_at(b, (Aabb::new(Vec3::ZERO, Vec3::ONE),)); // the same input again
/// plugin.run(&mut world)?;
/// assert_eq!(plugin.started(), [(a, b)]);
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
#[derive(Debug)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "crate::serialize::Unchecked")
)]
pub struct PluginSnapshot {
    pub(crate) broad_phase: BroadPhaseSnapshot,
    pub(crate) proxies: EntityProxies,
    pub(crate) statics: KeptSet<Statics>,
    pub(crate) sleeping: KeptSet<Sleepers>,
    pub(crate) filtered: bool,
    pub(crate) awake: Pool<(Entity, Entity)>,
    pub(crate) resting: Pool<(Entity, Entity)>,
    pub(crate) started: Pool<(Entity, Entity)>,
    pub(crate) ended: Pool<(Entity, Entity)>,
    pub(crate) bodies: BodyState,
    pub(crate) stats: FrameStats,
}

/// The state of a new plugin of the default tuning.
impl Default for PluginSnapshot {
    fn default() -> Self {
        let config = PluginConfig::default();
        let broad_phase =
            broadphase_persistent::PersistentBroadPhase::with_config(config.broad_phase).snapshot();
        Self {
            broad_phase,
            proxies: EntityProxies::default(),
            statics: KeptSet::new(config.static_changes.into()),
            sleeping: KeptSet::new(config.sleep_changes.into()),
            filtered: false,
            awake: Pool::new(),
            resting: Pool::new(),
            started: Pool::new(),
            ended: Pool::new(),
            bodies: BodyState::default(),
            stats: FrameStats::default(),
        }
    }
}

/// `clone_from` copies into the buffers already there, as
/// [`snapshot_into`](BroadPhasePlugin::snapshot_into) does.
impl Clone for PluginSnapshot {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.broad_phase.clone_from(&source.broad_phase);
        self.proxies.clone_from(&source.proxies);
        self.statics.clone_from(&source.statics);
        self.sleeping.clone_from(&source.sleeping);
        self.filtered = source.filtered;
        self.awake.clone_from(&source.awake);
        self.resting.clone_from(&source.resting);
        self.started.clone_from(&source.started);
        self.ended.clone_from(&source.ended);
        self.bodies.clone_from(&source.bodies);
        self.stats = source.stats;
    }
}

impl PluginSnapshot {
    /// The broad phase's part of the snapshot.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin};
    /// let mut world = hecs::World::new();
    /// world.spawn((Aabb::default(),));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.snapshot().broad_phase().len(), 1);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn broad_phase(&self) -> &BroadPhaseSnapshot {
        &self.broad_phase
    }

    /// The counts of the run the snapshot followed
    /// ([`BroadPhasePlugin::stats`] then).
    pub fn stats(&self) -> &FrameStats {
        &self.stats
    }
}

impl<P: Position> BroadPhasePlugin<P> {
    /// The plugin's state now, for [`restore`](Self::restore): a new
    /// snapshot (see [`snapshot_into`](Self::snapshot_into) to reuse one).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin};
    /// let mut world = hecs::World::new();
    /// world.spawn((Aabb::default(),));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.snapshot().stats().frame, 1);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn snapshot(&self) -> PluginSnapshot {
        let mut snapshot = PluginSnapshot::default();
        self.snapshot_into(&mut snapshot);
        snapshot
    }

    /// Writes the plugin's state now into `snapshot`, reusing its buffers:
    /// once they are as big as the state (a ring of snapshots after a few
    /// laps), this allocates nothing. It copies the broad phase's state
    /// ([`PersistentBroadPhase::snapshot_into`]), the entity table (about
    /// 48 bytes per entity id), the static set, the published lists and,
    /// with compound bodies, their links (12 bytes per entity id) and
    /// body lists.
    ///
    /// [`PersistentBroadPhase::snapshot_into`]: broadphase_persistent::PersistentBroadPhase::snapshot_into
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, PluginSnapshot};
    /// let mut world = hecs::World::new();
    /// let mut plugin = BroadPhasePlugin::new();
    /// let mut ring = vec![PluginSnapshot::default(); 4];
    /// for frame in 0..10 {
    ///     world.spawn((Aabb::default(),));
    ///     plugin.run(&mut world)?;
    ///     plugin.snapshot_into(&mut ring[frame % 4]);
    /// }
    /// assert_eq!(ring[9 % 4].stats().frame, 10);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn snapshot_into(&self, snapshot: &mut PluginSnapshot) {
        crate::profile::zone!("snapshot");
        self.backend.broad_phase.snapshot_into(&mut snapshot.broad_phase);
        snapshot.proxies.clone_from(&self.proxies);
        snapshot.statics.clone_from(&self.statics);
        snapshot.sleeping.clone_from(&self.sleeping);
        snapshot.filtered = self.filtered;
        snapshot.awake.clone_from(&self.awake);
        snapshot.resting.clone_from(&self.resting);
        snapshot.started.clone_from(&self.started);
        snapshot.ended.clone_from(&self.ended);
        snapshot.bodies.clone_from(&self.bodies.state);
        snapshot.stats = self.stats;
    }

    /// Puts the plugin back in the state `snapshot` was taken in: the same
    /// [`pairs`](Self::pairs), [`started`](Self::started),
    /// [`ended`](Self::ended), [`touching`](Self::touching) lists,
    /// [`stats`](Self::stats) and query answers, and the same state for the
    /// runs after it. Nothing of the runs since the snapshot is kept, so
    /// the world the next run reads must be the one the snapshot was taken
    /// after (the game restores it: see [`PluginSnapshot`]).
    ///
    /// The state is copied into the plugin's own buffers, the broad
    /// phase's index of enlarged boxes with it, so the next run's update
    /// is as incremental as it was the first time round (see
    /// [`PersistentBroadPhase::restore`](broadphase_persistent::PersistentBroadPhase::restore));
    /// the contact lists are merged again from the snapshot's pairs by
    /// the first [`touching`](Self::touching) after it.
    /// The snapshot's broad-phase tuning is adopted
    /// ([`PluginConfig::broad_phase`]); the thread count and
    /// [`PluginConfig::static_changes`] stay the plugin's.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin};
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let a = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
    /// let b = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// let saved = plugin.snapshot();
    ///
    /// world.despawn(b).unwrap();
    /// plugin.run(&mut world)?;
    /// assert!(plugin.touching(a).is_empty());
    ///
    /// world.spawn_at(b, (Aabb::new(Vec3::ZERO, Vec3::ONE),)); // the game's rollback
    /// plugin.restore(&saved);
    /// assert_eq!(plugin.touching(a), [b]);
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.pairs(), [(a, b)]);
    /// assert!(plugin.started().is_empty()); // still touching since the snapshot
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn restore(&mut self, snapshot: &PluginSnapshot) {
        crate::profile::zone!("restore");
        self.contacts.forget(snapshot.proxies.live_entities().len());
        self.backend.broad_phase.restore(&snapshot.broad_phase);
        self.config.broad_phase = *snapshot.broad_phase.config();
        self.proxies.clone_from(&snapshot.proxies);
        self.statics.clone_from(&snapshot.statics);
        self.sleeping.clone_from(&snapshot.sleeping);
        self.filtered = snapshot.filtered;
        self.awake.clone_from(&snapshot.awake);
        self.resting.clone_from(&snapshot.resting);
        self.all.reset();
        self.started.clone_from(&snapshot.started);
        self.ended.clone_from(&snapshot.ended);
        self.bodies.restore(&snapshot.bodies);
        self.stats = snapshot.stats;
    }
}
