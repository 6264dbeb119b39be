//! The system: gather, sync the proxies, update the persistent broad
//! phase, publish pairs and events.

use crate::backend::Backend;
use crate::bodies::Bodies;
use crate::contact_lists::ContactLists;
use crate::events::diff;
use crate::gather::{Dynamic, Gathered, Sleepers, Statics, WorldBoxes};
use crate::kept::KeptSet;
use crate::profile::{self, plot, zone};
use crate::proxies::{EntityProxies, Set, Sets};
use crate::publish::union_into;
use crate::statics::still_static;
use crate::{
    ContactListStats, FrameStats, PluginError, Position, SleepChanges, StageTimes, StaticChanges,
};
use broadphase_jobs::JobError;
use broadphase_persistent::PersistentConfig;
use broadphase_persistent::Proxy;
use broadphase_storage::{Pool, SortedUnion};
use glam::Vec3;
use hecs::{Entity, World};
use std::marker::PhantomData;
use std::time::Instant;

/// Tuning of [`BroadPhasePlugin`]. Defaults are the measured best.
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{BroadPhasePlugin, PluginConfig};
/// use broadphase_persistent::PersistentConfig;
/// let config = PluginConfig {
///     threads: 1,
///     broad_phase: PersistentConfig { margin: 1.0, ..Default::default() },
///     ..Default::default()
/// };
/// let plugin = BroadPhasePlugin::with_config(config);
/// assert_eq!(plugin.config().broad_phase.margin, 1.0);
/// assert_eq!(plugin.stats().threads, 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PluginConfig {
    /// Threads of the plugin's job system, the calling thread included;
    /// `0` (the default) means one per core. The output is the same for
    /// any count.
    pub threads: usize,
    /// Tuning of the persistent broad phase the entities live in: margins,
    /// when to recompute everything, the grid tree. The plugin's default
    /// differs from the broad phase's in one thing: a margin of 0. In the
    /// README's game loop, where every particle moves 1–25% of its size a
    /// frame, margins made a frame slower, not faster (100k particles:
    /// 4.6 ms at 0, 5.4 at 0.05, 7.9 at 0.5); a margin pays where bodies
    /// drift slowly in a sparse world, and resting or static bodies cost
    /// nothing either way.
    pub broad_phase: PersistentConfig,
    /// How changes to static entities are found.
    pub static_changes: StaticChanges,
    /// How sleeping entities spawned or despawned are found.
    pub sleep_changes: SleepChanges,
}

impl Default for PluginConfig {
    fn default() -> Self {
        Self {
            threads: 0,
            broad_phase: PersistentConfig { margin: 0.0, ..PersistentConfig::default() },
            static_changes: StaticChanges::default(),
            sleep_changes: SleepChanges::default(),
        }
    }
}

/// The broad phase as a `hecs` system: call [`run`](Self::run) once per
/// frame, then read [`pairs`](Self::pairs), [`started`](Self::started) and
/// [`ended`](Self::ended).
///
/// Each entity with a box (an [`Aabb`](crate::Aabb) component, or a
/// [`Collider`](crate::Collider) at its position component `P`) keeps a
/// proxy in a persistent broad phase
/// ([`PersistentBroadPhase`](broadphase_persistent::PersistentBroadPhase))
/// across frames: each run reads the boxes, sets them in one bulk call
/// (a box that stays inside its proxy's enlarged box costs no
/// re-indexing), inserts the proxies of new entities and removes those of
/// despawned ones, and updates. [`Static`](crate::Static) entities are
/// read again only when one is added, removed or changed. Pairs of two
/// static entities are left out, as are pairs whose
/// [`CollisionLayers`](crate::CollisionLayers) don't match and pairs of
/// two colliders of one body ([`ColliderOf`](crate::ColliderOf)), whose
/// pairs with other bodies are also published per body
/// ([`body_pairs`](Self::body_pairs)).
///
/// Pairs and events are `(Entity, Entity)` in a deterministic order: each
/// pair `(a, b)` has `a < b` (by `Entity`'s `Ord`: id, then generation),
/// and every list is sorted. The proxies live in slots numbered by entity
/// id, so the broad phase's lists come out in that order with no sort,
/// and `started`/`ended` come from the broad phase itself.
///
/// The plugin keeps its results in its own state; it never adds or removes
/// components, so it moves no entity between archetypes. Every buffer is
/// kept across frames: a warm frame allocates nothing.
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, BroadPhasePlugin, Collider, Static};
/// use glam::Vec3;
///
/// let mut world = hecs::World::new();
/// let ground = world.spawn((Aabb::new(Vec3::new(-100.0, -1.0, -100.0), Vec3::new(100.0, 0.0, 100.0)), Static));
/// let ball = world.spawn((Vec3::new(0.0, 5.0, 0.0), Collider::sphere(1.0)));
///
/// let mut plugin = BroadPhasePlugin::new();
/// plugin.run(&mut world)?;
/// assert!(plugin.pairs().is_empty());
///
/// *world.get::<&mut Vec3>(ball).unwrap() = Vec3::new(0.0, 0.5, 0.0); // falls onto the ground
/// plugin.run(&mut world)?;
/// assert_eq!(plugin.started(), [(ground, ball)]);
///
/// world.despawn(ball).unwrap();
/// plugin.run(&mut world)?;
/// assert_eq!(plugin.ended(), [(ground, ball)]);
/// assert!(plugin.pairs().is_empty());
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
pub struct BroadPhasePlugin<P: Position = Vec3> {
    pub(crate) config: PluginConfig,
    pub(crate) backend: Backend,
    pub(crate) statics: KeptSet<Statics>,
    pub(crate) sleeping: KeptSet<Sleepers>,
    dynamic: Gathered,
    pub(crate) proxies: EntityProxies,
    /// Whether the last published lists were filtered by layers.
    pub(crate) filtered: bool,
    /// The published pairs with an entity that is neither sleeping nor
    /// static, and those of two at rest: kept apart so that a run maps
    /// the resting ones only when they change.
    pub(crate) awake: Pool<(Entity, Entity)>,
    pub(crate) resting: Pool<(Entity, Entity)>,
    /// Both, merged when read ([`pairs`](Self::pairs)).
    pub(crate) all: SortedUnion<(Entity, Entity)>,
    pub(crate) started: Pool<(Entity, Entity)>,
    pub(crate) ended: Pool<(Entity, Entity)>,
    /// The lists a run builds beside the published ones, swapped in when
    /// it succeeds (reused).
    next_awake: Pool<(Entity, Entity)>,
    next_resting: Pool<(Entity, Entity)>,
    next_started: Pool<(Entity, Entity)>,
    next_ended: Pool<(Entity, Entity)>,
    /// Whether this run mapped the resting pairs again.
    remap_resting: bool,
    /// Scratch: a run's pairs merged, and last run's for the body lists.
    pub(crate) merged: Pool<(Entity, Entity)>,
    last_pairs: Pool<(Entity, Entity)>,
    /// Every entity's partners in `pairs`, for `touching`, made when
    /// first read.
    pub(crate) contacts: ContactLists,
    /// Compound bodies: the links, the groups, the body lists.
    pub(crate) bodies: Bodies,
    pub(crate) stats: FrameStats,
    /// Scratch of the single queries, kept so that they allocate nothing
    /// once warm.
    pub(crate) query_proxies: Vec<broadphase_persistent::Proxy>,
    pub(crate) query_hits: Vec<(broadphase_persistent::Proxy, f32)>,
    _position: PhantomData<fn() -> P>,
}

impl BroadPhasePlugin<Vec3> {
    /// A plugin whose colliders are placed at a `glam::Vec3` position
    /// component, with the default tuning.
    ///
    /// # Panics
    ///
    /// If the operating system refuses to start the job system's threads
    /// (as `JobSystem::new` does).
    ///
    /// # Examples
    ///
    /// ```
    /// let plugin = broadphase_ecs::BroadPhasePlugin::new();
    /// assert!(plugin.pairs().is_empty());
    /// ```
    pub fn new() -> Self {
        Self::with_position(PluginConfig::default())
    }

    /// A plugin with this tuning, colliders placed at a `glam::Vec3`
    /// position component.
    ///
    /// # Panics
    ///
    /// If the operating system refuses to start the job system's threads
    /// (as `JobSystem::new` does).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{BroadPhasePlugin, PluginConfig};
    /// let plugin = BroadPhasePlugin::with_config(PluginConfig::default());
    /// assert_eq!(plugin.config(), &PluginConfig::default());
    /// ```
    pub fn with_config(config: PluginConfig) -> Self {
        Self::with_position(config)
    }
}

impl Default for BroadPhasePlugin<Vec3> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Position> BroadPhasePlugin<P> {
    /// A plugin whose colliders are placed at the position component `P`
    /// (see [`Position`]).
    ///
    /// # Panics
    ///
    /// If the operating system refuses to start the job system's threads
    /// (as `JobSystem::new` does).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{BroadPhasePlugin, Position};
    /// use glam::Vec3;
    /// struct Pos(Vec3);
    /// impl Position for Pos {
    ///     fn position(&self) -> Vec3 {
    ///         self.0
    ///     }
    /// }
    /// let plugin = BroadPhasePlugin::<Pos>::with_position(Default::default());
    /// assert_eq!(plugin.stats().frame, 0);
    /// ```
    pub fn with_position(config: PluginConfig) -> Self {
        profile::start();
        let backend = Backend::new(&config);
        let contacts = ContactLists::new(backend.threads());
        Self {
            config,
            stats: FrameStats { threads: backend.threads(), ..FrameStats::default() },
            backend,
            statics: KeptSet::new(config.static_changes.into()),
            sleeping: KeptSet::new(config.sleep_changes.into()),
            dynamic: Gathered::default(),
            proxies: EntityProxies::default(),
            filtered: false,
            awake: Pool::new(),
            resting: Pool::new(),
            all: SortedUnion::default(),
            started: Pool::new(),
            ended: Pool::new(),
            next_awake: Pool::new(),
            next_resting: Pool::new(),
            next_started: Pool::new(),
            next_ended: Pool::new(),
            remap_resting: false,
            merged: Pool::new(),
            last_pairs: Pool::new(),
            contacts,
            bodies: Bodies::default(),
            query_proxies: Vec::new(),
            query_hits: Vec::new(),
            _position: PhantomData,
        }
    }

    /// The tuning this plugin was made with.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{BroadPhasePlugin, PluginConfig};
    /// assert_eq!(BroadPhasePlugin::new().config(), &PluginConfig::default());
    /// ```
    pub fn config(&self) -> &PluginConfig {
        &self.config
    }

    /// Reports that a static entity was added, removed, moved or
    /// re-layered: the next run re-indexes the static set. Needed only with
    /// [`StaticChanges::Notify`]; with the default
    /// [`StaticChanges::Detect`] it just forces a re-index.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, Static};
    /// let mut world = hecs::World::new();
    /// world.spawn((Aabb::default(), Static));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// plugin.statics_changed();
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.stats().static_rebuilds, 2);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn statics_changed(&mut self) {
        self.statics.invalidate();
    }

    /// Reports that an entity was spawned asleep, a sleeping entity was
    /// despawned, or a sleeping entity's box or layers changed: the next
    /// run reads the sleeping entities again. Needed only with
    /// [`SleepChanges::Notify`]; with the default [`SleepChanges::Detect`]
    /// it just forces a read (which is how a sleeping entity's moved box
    /// is picked up without waking it).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, Sleeping};
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let a = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE), Sleeping));
    /// let b = world.spawn((Aabb::new(Vec3::splat(3.0), Vec3::splat(4.0)),));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// // Moved while asleep: not read until reported (or woken).
    /// *world.get::<&mut Aabb>(a).unwrap() = Aabb::new(Vec3::splat(3.5), Vec3::splat(4.5));
    /// plugin.run(&mut world)?;
    /// assert!(plugin.pairs().is_empty());
    /// plugin.sleepers_changed();
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.pairs(), [(a, b)]);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn sleepers_changed(&mut self) {
        self.sleeping.invalidate();
    }

    /// One frame: reads the boxes from `world`, finds the pairs, and
    /// publishes them with the events since the last successful run.
    ///
    /// `&mut World` is asked for so the queries need no borrow checks at run
    /// time; the world is not changed.
    ///
    /// # Errors
    /// [`PluginError::InvalidBox`] naming an entity whose box has a NaN or
    /// infinite coordinate or `min > max`;
    /// [`PluginError::EntityIdTooLarge`] for an entity id past
    /// [`MAX_ENTITY_ID`](crate::MAX_ENTITY_ID);
    /// [`PluginError::DeadBody`] or [`PluginError::NestedBody`] naming a
    /// collider whose [`ColliderOf`](crate::ColliderOf) is bad (checked
    /// before anything else). The frame is then skipped:
    /// what the plugin publishes stays as it was (see [`PluginError`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin};
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let a = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
    /// let b = world.spawn((Aabb::new(Vec3::ONE, Vec3::splat(2.0)),)); // touches a
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.pairs(), [(a, b)]);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn run(&mut self, world: &mut World) -> Result<(), PluginError> {
        zone!("broadphase");
        let start = Instant::now();
        // Bad links fail the run before anything changes. The kept sets
        // are still read again next run: this one did not look at them,
        // and what changed in them since the last run (a static entity
        // moved, then put to sleep) must not be lost.
        if let Err(error) = self.bodies.prepare(world) {
            self.statics.invalidate();
            self.sleeping.invalidate();
            return Err(error);
        }
        let failed = |plugin: &mut Self| {
            // The kept sets are read again next run, in case a failure
            // left their proxies half set; the broad phase's events of the
            // next update may then name proxies removed in the failed run,
            // so the next run publishes the difference from the last
            // published list instead.
            plugin.statics.invalidate();
            plugin.sleeping.invalidate();
            plugin.filtered = true;
        };
        // The dynamic entities, and their boxes only where the entities
        // changed: the same entities' boxes are made from the world as
        // the broad phase sets them (`WorldBoxes`).
        let gather = {
            zone!("gather");
            let jobs = &self.backend.jobs;
            self.dynamic.gather_entities::<Dynamic, P>(world, jobs).and_then(|()| {
                self.proxies.begin_run();
                let same = self.proxies.dynamic_unchanged(jobs, &self.dynamic);
                if !same {
                    self.dynamic.gather_boxes::<Dynamic, P>(world, jobs)?;
                }
                Ok(same)
            })
        };
        let dynamic_same = match gather {
            Ok(same) => same,
            Err(error) => {
                // Nothing changed yet, and the next run gathers every box
                // again; the kept sets are read again, as after bad links.
                self.statics.invalidate();
                self.sleeping.invalidate();
                return Err(PluginError::Job(error));
            }
        };
        let gathered = Instant::now();
        let kept = {
            zone!("statics");
            // A sleeping entity that woke, or a dynamic one that fell
            // asleep, changes the dynamic set: the sleeping set is then
            // compared too, whatever its mode, or the one that fell asleep
            // would look despawned.
            let sleeping_stale = !dynamic_same && self.sleeping.notified_or_counted();
            let jobs = &self.backend.jobs;
            self.statics.gather_if_changed::<P>(world, jobs, false).and_then(|statics| {
                Ok((statics, self.sleeping.gather_if_changed::<P>(world, jobs, sleeping_stale)?))
            })
        };
        let (mut static_gathered, mut sleeping_gathered) = match kept {
            Ok(gathered) => gathered,
            Err(error) => {
                failed(self);
                return Err(PluginError::Job(error));
            }
        };
        let synced = Instant::now();
        if let Err(error) = self.sync(world, dynamic_same, sleeping_gathered, static_gathered) {
            failed(self);
            return Err(error);
        }
        let left = self.proxies.left;
        let static_stale = left[Set::Static as usize] && !static_gathered;
        let sleeping_stale = left[Set::Sleeping as usize] && !sleeping_gathered;
        if static_stale || sleeping_stale {
            // An entity of a kept set that was not read again is now in
            // another set (only a mode that trusts the set misses that):
            // its old set's list is stale, so read it again now.
            let jobs = &self.backend.jobs;
            let again = (|| -> Result<(), JobError> {
                static_gathered |=
                    static_stale && self.statics.gather_if_changed::<P>(world, jobs, true)?;
                sleeping_gathered |=
                    sleeping_stale && self.sleeping.gather_if_changed::<P>(world, jobs, true)?;
                Ok(())
            })();
            let again = again.map_err(PluginError::Job);
            if let Err(error) =
                again.and_then(|()| self.sync(world, true, sleeping_stale, static_stale))
            {
                failed(self);
                return Err(error);
            }
        }
        let proxied = Instant::now();
        if let Err(error) = self.update() {
            failed(self);
            return Err(error);
        }
        // With `Notify`, a pair may name a static entity that is gone or
        // no longer static: read them again and update once more. The
        // events are then the difference from the last published list.
        let mut redone = false;
        if self.statics.notified() && self.stale_static_partner(world) {
            let jobs = &self.backend.jobs;
            let again = self
                .statics
                .gather_if_changed::<P>(world, jobs, true)
                .map_err(PluginError::Job)
                .and_then(|gathered| {
                    static_gathered = gathered;
                    self.sync(world, true, false, true)
                })
                .and_then(|()| self.update());
            if let Err(error) = again {
                failed(self);
                return Err(error);
            }
            redone = true;
        }
        let updated = Instant::now();
        // If the pairs fail (a panicked job), the broad phase's events of
        // this update are not published: the next run publishes the
        // difference from the last published list instead, and nothing
        // published changes.
        {
            zone!("publish");
            if let Err(error) = self.publish_pairs(redone) {
                self.filtered = true;
                return Err(PluginError::Job(error));
            }
        }
        {
            zone!("publish");
            self.publish();
        }
        let published = Instant::now();

        let times = StageTimes {
            gather: gathered - start,
            statics: synced - gathered,
            proxies: proxied - synced,
            update: updated - proxied,
            publish: published - updated,
            total: published - start,
        };
        self.stats = FrameStats {
            frame: self.stats.frame + 1,
            dynamic_boxes: self.dynamic.len(),
            sleeping_boxes: self.sleeping.set.len(),
            static_boxes: self.statics.set.len(),
            pairs: self.awake.len() + self.resting.len(),
            started: self.started.len(),
            ended: self.ended.len(),
            static_rebuilt: static_gathered,
            static_rebuilds: self.statics.rebuilds,
            sleeping_rebuilt: sleeping_gathered,
            threads: self.backend.threads(),
            broad_phase: *self.backend.broad_phase.stats(),
            update_times: *self.backend.broad_phase.update_times(),
            times,
        };
        self.plot_stats();
        profile::plugin_frame_mark();
        Ok(())
    }

    /// Syncs the proxies with the gathered sets: the dynamic boxes from
    /// `world` where `dynamic_same` (they were not gathered), else as
    /// gathered; the sleeping and static ones when gathered. The broad
    /// phase checks every box.
    fn sync(
        &mut self,
        world: &World,
        dynamic_same: bool,
        sleeping_gathered: bool,
        static_gathered: bool,
    ) -> Result<(), PluginError> {
        zone!("proxies");
        let made = WorldBoxes::<Dynamic, P>::new(world, self.dynamic.len());
        let sets = Sets {
            dynamic: &self.dynamic,
            dynamic_same,
            dynamic_boxes: dynamic_same.then_some(&made),
            sleeping: sleeping_gathered.then_some(&self.sleeping.set),
            statics: static_gathered.then_some(&self.statics.set),
        };
        let Backend { jobs, broad_phase } = &mut self.backend;
        self.proxies.sync(jobs, broad_phase, sets)?;
        self.bodies.apply(broad_phase, &self.proxies)?;
        self.proxies.inserted = false;
        if sleeping_gathered {
            self.sleeping.confirm();
        }
        if static_gathered {
            self.statics.confirm();
        }
        Ok(())
    }

    /// The broad phase's update.
    fn update(&mut self) -> Result<(), PluginError> {
        zone!("update");
        let Backend { jobs, broad_phase } = &mut self.backend;
        broad_phase.update(jobs).map_err(|error| match error {
            broadphase_persistent::ProxyError::Partition(
                broadphase_partition::PartitionError::Job(e),
            ) => PluginError::Job(e),
            other => PluginError::Proxy(other),
        })
    }

    /// Whether a pair names a static entity that is gone or no longer
    /// static (only [`StaticChanges::Notify`] can miss that).
    fn stale_static_partner(&self, world: &World) -> bool {
        let broad_phase = &self.backend.broad_phase;
        let pairs = broad_phase.awake_pairs().iter().chain(broad_phase.resting_pairs());
        pairs.flatten().any(|&proxy| {
            self.proxies.is_static(proxy) && !still_static::<P>(world, self.proxies.entity(proxy))
        })
    }

    /// The broad phase's pairs as entity pairs, filtered by layers, into
    /// `next_awake` and (when the resting pairs are mapped again,
    /// `remap_resting`) `next_resting`, and this run's events into
    /// `next_started` and `next_ended`. The events are the broad phase's
    /// own, or the difference from the last published list when layers
    /// are in play (a layer can end or start a pair without a move), when
    /// the run updated twice (`force_diff`) or when the last run failed.
    fn publish_pairs(&mut self, force_diff: bool) -> Result<(), JobError> {
        let broad_phase = &self.backend.broad_phase;
        let proxies = &self.proxies;
        let jobs = &self.backend.jobs;
        let filtered =
            self.dynamic.filtered || self.statics.set.filtered || self.sleeping.set.filtered;
        let diffed = filtered || self.filtered || proxies.layers_changed || force_diff;
        // The resting pairs are mapped again only when they may have
        // changed: a world at rest pays for what is awake.
        self.remap_resting = diffed || broad_phase.stats().resting_changed;
        if !diffed {
            crate::publish::live_pairs(
                jobs,
                proxies,
                broad_phase.awake_pairs(),
                &mut self.next_awake,
            )?;
            if self.remap_resting {
                let resting = broad_phase.resting_pairs();
                crate::publish::live_pairs(jobs, proxies, resting, &mut self.next_resting)?;
            }
            // Started pairs name live proxies only, mapped as the pairs
            // are; an ended pair may name a removed one. Both lists are
            // sparse: each lookup is a miss, asked for ahead (at a million
            // particles the two took 1.1 ms on the calling thread).
            let started = broad_phase.started();
            crate::publish::live_pairs(jobs, proxies, started, &mut self.next_started)?;
            let ended = broad_phase.ended();
            self.next_ended.reset();
            self.next_ended.extend(ended.iter().enumerate().map(|(i, &[a, b])| {
                if let Some(&[first, later]) = ended.get(i + crate::publish::AHEAD) {
                    proxies.prefetch_entity(first);
                    proxies.prefetch_entity(later);
                }
                (proxies.entity(a), proxies.entity(b))
            }));
            return Ok(());
        }
        let live = |[a, b]: [Proxy; 2]| (proxies.live_entity(a), proxies.live_entity(b));
        let interacts = |[a, b]: [Proxy; 2]| proxies.layers(a).interacts_with(&proxies.layers(b));
        let kept = |pairs: &[[Proxy; 2]], out: &mut Pool<(Entity, Entity)>| {
            out.reset();
            out.extend(pairs.iter().filter(|&&pair| interacts(pair)).map(|&pair| live(pair)));
        };
        kept(broad_phase.awake_pairs(), &mut self.next_awake);
        kept(broad_phase.resting_pairs(), &mut self.next_resting);
        let last = self.all.get(&self.awake, &self.resting);
        let now = union_into(&self.next_awake, &self.next_resting, &mut self.merged);
        diff(last, now, &mut self.next_started, &mut self.next_ended);
        Ok(())
    }

    /// Makes this run's lists the published ones.
    fn publish(&mut self) {
        // The body lists need last run's collider pairs, and this run's.
        let bodies = self.bodies.in_play();
        if bodies {
            let last = self.all.get(&self.awake, &self.resting);
            self.last_pairs.reset();
            self.last_pairs.extend_from_slice(last);
        }
        std::mem::swap(&mut self.awake, &mut self.next_awake);
        if self.remap_resting {
            std::mem::swap(&mut self.resting, &mut self.next_resting);
        }
        std::mem::swap(&mut self.started, &mut self.next_started);
        std::mem::swap(&mut self.ended, &mut self.next_ended);
        self.all.reset();
        self.contacts.frame_published(self.proxies.live_entities().len());
        self.filtered =
            self.dynamic.filtered || self.statics.set.filtered || self.sleeping.set.filtered;
        if bodies {
            let ids = self.proxies.live_entities().len();
            let same = self.started.is_empty() && self.ended.is_empty();
            let pairs = self.all.get(&self.awake, &self.resting);
            self.bodies.publish(pairs, &self.last_pairs, ids, same);
        } else {
            self.bodies.publish(&[], &[], 0, true);
        }
    }

    /// Sends this frame's counts and stage times to Tracy (nothing without
    /// the `profile` feature: the arguments are not even evaluated).
    #[inline]
    fn plot_stats(&self) {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        plot!("dynamic boxes", self.stats.dynamic_boxes as f64);
        plot!("sleeping boxes", self.stats.sleeping_boxes as f64);
        plot!("static boxes", self.stats.static_boxes as f64);
        plot!("pairs", self.stats.pairs as f64);
        plot!("started", self.stats.started as f64);
        plot!("ended", self.stats.ended as f64);
        plot!("re-indexed", self.stats.broad_phase.reindexed as f64);
        plot!("gather ms", ms(self.stats.times.gather));
        plot!("statics ms", ms(self.stats.times.statics));
        plot!("proxies ms", ms(self.stats.times.proxies));
        plot!("update ms", ms(self.stats.times.update));
        plot!("update: candidates ms", ms(self.stats.update_times.candidates));
        plot!("update: merge ms", ms(self.stats.update_times.merge));
        plot!("publish ms", ms(self.stats.times.publish));
        plot!("total ms", ms(self.stats.times.total));
        let _ = ms;
    }

    /// Every overlapping pair of the last successful run whose layers
    /// match, each once as `(a, b)` with `a < b`, sorted. Pairs of two
    /// static entities are not included.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin};
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let ids: Vec<_> = (0..3).map(|_| world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),))).collect();
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.pairs(), [(ids[0], ids[1]), (ids[0], ids[2]), (ids[1], ids[2])]);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn pairs(&self) -> &[(Entity, Entity)] {
        self.all.get(&self.awake, &self.resting)
    }

    /// The pairs of the last successful run with at least one entity that
    /// is neither [`Sleeping`](crate::Sleeping) nor
    /// [`Static`](crate::Static), sorted: the pairs a physics step works
    /// on, and all of [`pairs`](Self::pairs) when nothing sleeps. A run
    /// maps the pairs of two resting entities (asleep, or one asleep and
    /// one static) to entities only when they change, and
    /// [`pairs`](Self::pairs) merges the two lists on its first call after
    /// a run: in a world that is mostly asleep, reading these costs what
    /// is awake.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, Sleeping};
    /// use glam::Vec3;
    /// let unit = Aabb::new(Vec3::ZERO, Vec3::ONE);
    /// let mut world = hecs::World::new();
    /// let a = world.spawn((unit, Sleeping));
    /// let b = world.spawn((unit, Sleeping));
    /// let c = world.spawn((unit,));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.pairs(), [(a, b), (a, c), (b, c)]);
    /// assert_eq!(plugin.awake_pairs(), [(a, c), (b, c)]); // c is awake
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn awake_pairs(&self) -> &[(Entity, Entity)] {
        &self.awake
    }

    /// The pairs of the last successful run that were not pairs in the run
    /// before it, sorted as [`pairs`](Self::pairs). On the first run, every
    /// pair.
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
    /// assert_eq!(plugin.started(), [(a, b)]);
    /// plugin.run(&mut world)?;
    /// assert!(plugin.started().is_empty()); // persisting, not starting
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn started(&self) -> &[(Entity, Entity)] {
        &self.started
    }

    /// The pairs of the run before the last successful one that are no
    /// longer pairs, sorted as [`pairs`](Self::pairs): the boxes separated,
    /// an entity lost its box, changed layers or became static too, or was
    /// despawned. A despawned entity appears here once, and never again
    /// in [`pairs`](Self::pairs) or [`started`](Self::started).
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
    /// world.despawn(b).unwrap();
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.ended(), [(a, b)]);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn ended(&self) -> &[(Entity, Entity)] {
        &self.ended
    }

    /// Every entity `entity` touches as of the last successful run, sorted
    /// by `Entity`'s `Ord` (id, then generation), as
    /// [`pairs`](Self::pairs) is: each entity `e` such that the pair of
    /// `entity` and `e` is in `pairs()`. Empty for an entity touching
    /// nothing, without a box, unknown to the plugin or despawned; a
    /// despawned entity also leaves every other list in the run that
    /// ends its pairs. Static entities have lists too (the dynamic
    /// entities on them), but two static entities never touch.
    ///
    /// The lists are made by the first call after a run, on the plugin's
    /// threads: the frame before's lists patched with the run's started
    /// and ended pairs where few changed and those lists were made, else
    /// merged from every pair (a Tracy zone `contacts`; its cost is in
    /// [`contact_list_stats`](Self::contact_list_stats)). A game that
    /// never asks pays nothing for them; after the first, a call is two
    /// lookups and a slice, O(1), so asking for every entity of the world
    /// each frame costs nothing more. Calls from several threads at once
    /// are safe: one makes the lists while the others wait.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, Collider, Static};
    /// use glam::Vec3;
    ///
    /// let mut world = hecs::World::new();
    /// let floor = world.spawn((Aabb::new(Vec3::new(-10.0, -1.0, -10.0), Vec3::new(10.0, 0.0, 10.0)), Static));
    /// let crate_a = world.spawn((Vec3::new(0.0, 0.5, 0.0), Collider::cuboid(Vec3::splat(0.5))));
    /// let crate_b = world.spawn((Vec3::new(0.0, 1.5, 0.0), Collider::cuboid(Vec3::splat(0.5))));
    /// let far = world.spawn((Vec3::new(0.0, 50.0, 0.0), Collider::sphere(1.0)));
    ///
    /// let mut broadphase = BroadPhasePlugin::new();
    /// broadphase.run(&mut world)?;
    /// assert_eq!(broadphase.touching(crate_a), [floor, crate_b]); // crate_b rests on crate_a
    /// assert_eq!(broadphase.touching(floor), [crate_a]);
    /// assert!(broadphase.touching(far).is_empty());
    ///
    /// // A "grounded" check, per entity, each frame:
    /// let grounded = |e| broadphase.touching(e).contains(&floor);
    /// assert!(grounded(crate_a) && !grounded(crate_b));
    ///
    /// world.despawn(crate_a).unwrap();
    /// broadphase.run(&mut world)?;
    /// assert!(broadphase.touching(crate_a).is_empty()); // gone
    /// assert!(broadphase.touching(floor).is_empty()); // and gone from the others' lists
    /// assert!(broadphase.touching(crate_b).is_empty());
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    #[inline]
    pub fn touching(&self, entity: Entity) -> &[Entity] {
        let events = [&self.started[..], &self.ended[..]];
        let pairs = self.awake.len() + self.resting.len();
        let lists = self.contacts.lists(&self.backend.jobs, pairs, events, || self.pairs());
        lists.touching(entity)
    }

    /// How the [`touching`](Self::touching) lists of the last successful
    /// run were made, once read: `None` until the first read after the
    /// run, which makes them (patched from the frame before's lists, or
    /// built from every pair) and pays for it.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin};
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let a = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// assert!(plugin.touching(a).is_empty());
    /// assert!(plugin.contact_list_stats().is_some());
    /// plugin.run(&mut world)?;
    /// assert!(plugin.contact_list_stats().is_none()); // due again, not read yet
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn contact_list_stats(&self) -> Option<ContactListStats> {
        self.contacts.stats()
    }

    /// How many entities `entity` touches: `touching(entity).len()`.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin};
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let pile: Vec<_> = (0..5).map(|_| world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),))).collect();
    /// let mut broadphase = BroadPhasePlugin::new();
    /// broadphase.run(&mut world)?;
    /// assert!(pile.iter().all(|&e| broadphase.touching_count(e) == 4));
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    #[inline]
    pub fn touching_count(&self, entity: Entity) -> usize {
        self.touching(entity).len()
    }

    /// Whether `a` and `b` touch as of the last successful run: whether
    /// their pair is in [`pairs`](Self::pairs), in either order. A binary
    /// search in the shorter of their two lists.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, CollisionLayers};
    /// use glam::Vec3;
    /// let mut world = hecs::World::new();
    /// let player = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE), CollisionLayers::new(1, 2)));
    /// let coin = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE), CollisionLayers::new(2, 1)));
    /// let ghost = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE), CollisionLayers::NONE));
    /// let mut broadphase = BroadPhasePlugin::new();
    /// broadphase.run(&mut world)?;
    /// assert!(broadphase.is_touching(player, coin) && broadphase.is_touching(coin, player));
    /// assert!(!broadphase.is_touching(player, ghost)); // layers say no
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn is_touching(&self, a: Entity, b: Entity) -> bool {
        let (of_a, of_b) = (self.touching(a), self.touching(b));
        if of_a.len() <= of_b.len() {
            of_a.binary_search(&b).is_ok()
        } else {
            of_b.binary_search(&a).is_ok()
        }
    }

    /// Counts and per-stage times of the last successful run.
    ///
    /// # Examples
    ///
    /// ```
    /// let plugin = broadphase_ecs::BroadPhasePlugin::new();
    /// assert_eq!(plugin.stats().pairs, 0);
    /// ```
    pub fn stats(&self) -> &FrameStats {
        &self.stats
    }
}

impl<P: Position> core::fmt::Debug for BroadPhasePlugin<P> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("BroadPhasePlugin")
            .field("config", &self.config)
            .field("position", &core::any::type_name::<P>())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}
