//! The system: gather, partition, query the static set, merge, events.

use crate::backend::{Backend, BackendError};
use crate::events::{diff, ordered};
use crate::gather::{Dynamic, Gathered, Statics};
use crate::profile::{self, plot, zone};
use crate::sort::PairSort;
use crate::statics::StaticSet;
use crate::{FrameStats, PluginError, Position, StageTimes, StaticChanges};
use broadphase_partition::GridTreeConfig;
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
/// use broadphase_partition::GridTreeConfig;
/// let config = PluginConfig {
///     threads: 1,
///     partition: GridTreeConfig { split_threshold: 20_000, ..Default::default() },
///     ..Default::default()
/// };
/// let plugin = BroadPhasePlugin::with_config(config);
/// assert_eq!(plugin.config().partition.split_threshold, 20_000);
/// assert_eq!(plugin.stats().threads, 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PluginConfig {
    /// Threads of the plugin's job system, the calling thread included;
    /// `0` (the default) means one per core. The output is the same for
    /// any count.
    pub threads: usize,
    /// Tuning of the dynamic pass (the partition's grid tree); its `grid`
    /// also tunes the static set's grid.
    pub partition: GridTreeConfig,
    /// How changes to static entities are found.
    pub static_changes: StaticChanges,
    /// While the static entities number at most this fraction of the
    /// dynamic ones, they are not indexed: each frame they are gathered and
    /// join the dynamic pass (static-static pairs dropped), which is
    /// cheaper than one query per dynamic box. Both ways give the same
    /// pairs. `0.0` always indexes them. The default, `0.25`, is half the
    /// measured break-even (docs/ECS.md): a query per dynamic box costs
    /// about what a dynamic box costs in the pass, so riding along wins
    /// while the statics are fewer than about half the dynamic boxes.
    pub small_static_ratio: f32,
}

impl Default for PluginConfig {
    fn default() -> Self {
        Self {
            threads: 0,
            partition: GridTreeConfig::default(),
            static_changes: StaticChanges::default(),
            small_static_ratio: 0.25,
        }
    }
}

/// The broad phase as a `hecs` system: call [`run`](Self::run) once per
/// frame, then read [`pairs`](Self::pairs), [`started`](Self::started) and
/// [`ended`](Self::ended).
///
/// Each run reads every entity's box (an [`Aabb`](crate::Aabb) component,
/// or a [`Collider`](crate::Collider) at its position component `P`),
/// finds the dynamic-vs-dynamic pairs, queries each dynamic box against
/// the static set (re-indexed only when a [`Static`](crate::Static) entity
/// is added, removed or changed), drops pairs whose
/// [`CollisionLayers`](crate::CollisionLayers) don't match, and publishes
/// the pairs and the events as `(Entity, Entity)` in a deterministic order:
/// each pair `(a, b)` has `a < b` (by `Entity`'s `Ord`: id, then
/// generation), and every list is sorted.
///
/// The plugin keeps its results in its own state; it never adds or removes
/// components, so it moves no entity between archetypes. Every buffer is
/// kept across frames: a warm frame with the same entity count allocates
/// nothing.
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
    config: PluginConfig,
    backend: Backend,
    statics: StaticSet,
    dynamic: Gathered,
    /// Dynamic-vs-dynamic pairs as indices into `dynamic`.
    index_pairs: Vec<[u32; 2]>,
    /// One query's hits in the static set.
    hits: Vec<u32>,
    sorter: PairSort,
    /// The frame being built; after `run`, last frame's pairs (reused).
    next: Vec<(Entity, Entity)>,
    pairs: Vec<(Entity, Entity)>,
    started: Vec<(Entity, Entity)>,
    ended: Vec<(Entity, Entity)>,
    stats: FrameStats,
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
        Self {
            config,
            stats: FrameStats { threads: backend.threads(), ..FrameStats::default() },
            backend,
            statics: StaticSet::new(&config),
            dynamic: Gathered::default(),
            index_pairs: Vec::new(),
            hits: Vec::new(),
            sorter: PairSort::default(),
            next: Vec::new(),
            pairs: Vec::new(),
            started: Vec::new(),
            ended: Vec::new(),
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

    /// One frame: reads the boxes from `world`, finds the pairs, and
    /// publishes them with the events since the last successful run.
    ///
    /// `&mut World` is asked for so the queries need no borrow checks at run
    /// time; the world is not changed.
    ///
    /// # Errors
    /// [`PluginError::InvalidBox`] naming an entity whose box has a NaN or
    /// infinite coordinate or `min > max`; [`PluginError::TooManyBoxes`]
    /// beyond `u32` ids. The frame is then skipped: what the plugin
    /// publishes stays as it was (see [`PluginError`]).
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
        {
            zone!("gather");
            self.dynamic.gather::<Dynamic, P>(world);
        }
        let gathered = Instant::now();
        let n_dynamic = self.dynamic.len();
        let static_count = Gathered::count::<Statics, P>(world);
        let ride_along = static_count > 0
            && static_count as f64 <= f64::from(self.config.small_static_ratio) * n_dynamic as f64;
        let mut static_rebuilt = false;
        {
            zone!("statics");
            if ride_along {
                self.statics.gather_unindexed::<P>(world);
                self.dynamic.boxes.extend_from_slice(&self.statics.set.boxes);
            } else {
                static_rebuilt = self.statics.sync::<P>(world)?;
            }
        }
        let synced = Instant::now();
        {
            zone!("partition");
            let result = self.backend.pairs(&self.dynamic.boxes, &mut self.index_pairs);
            self.dynamic.boxes.truncate(n_dynamic);
            result.map_err(|error| match error {
                BackendError::Input(error) => PluginError::from_input_split(
                    error,
                    &self.dynamic.entities,
                    &self.statics.set.entities,
                ),
                BackendError::Job(error) => PluginError::Job(error),
            })?;
        }
        let partitioned = Instant::now();
        self.next.clear();
        if !ride_along {
            zone!("queries");
            while !self.statics.query_all::<P>(
                world,
                &self.dynamic,
                &mut self.hits,
                &mut self.next,
            )? {
                // Notify mode found a stale static entity: re-index now.
                self.next.clear();
                self.statics.invalidate();
                static_rebuilt |= self.statics.sync::<P>(world)?;
            }
        }
        let queried = Instant::now();
        {
            zone!("merge");
            // Indices below `n` are dynamic entities; from `n` on (only when
            // the statics rode along), static ones. The kernel gives i < j,
            // so i >= n means two statics: dropped.
            let (d, st) = (&self.dynamic, &self.statics.set);
            let n = n_dynamic as u32;
            let entity =
                |k: u32| if k < n { d.entities[k as usize] } else { st.entities[(k - n) as usize] };
            let layers =
                |k: u32| if k < n { d.layers(k as usize) } else { st.layers((k - n) as usize) };
            let pairs = self.index_pairs.iter().filter(|&&[i, _]| i < n);
            if d.filtered || (ride_along && st.filtered) {
                self.next.extend(
                    pairs
                        .filter(|&&[i, j]| layers(i).interacts_with(&layers(j)))
                        .map(|&[i, j]| ordered(entity(i), entity(j))),
                );
            } else {
                self.next.extend(pairs.map(|&[i, j]| ordered(entity(i), entity(j))));
            }
            self.sorter.sort(&mut self.next);
        }
        let merged = Instant::now();
        {
            zone!("events");
            diff(&self.pairs, &self.next, &mut self.started, &mut self.ended);
            std::mem::swap(&mut self.pairs, &mut self.next);
        }
        let done = Instant::now();

        self.stats = FrameStats {
            frame: self.stats.frame + 1,
            dynamic_boxes: self.dynamic.len(),
            static_boxes: static_count,
            pairs: self.pairs.len(),
            started: self.started.len(),
            ended: self.ended.len(),
            statics_in_dynamic_pass: ride_along,
            static_rebuilt,
            static_rebuilds: self.statics.rebuilds,
            threads: self.backend.threads(),
            times: StageTimes {
                gather: gathered - start,
                statics: synced - gathered,
                partition: partitioned - synced,
                queries: queried - partitioned,
                merge: merged - queried,
                events: done - merged,
                total: done - start,
            },
        };
        self.plot_stats();
        profile::plugin_frame_mark();
        Ok(())
    }

    /// Sends this frame's counts and stage times to Tracy (nothing without
    /// the `profile` feature: the arguments are not even evaluated).
    #[inline]
    fn plot_stats(&self) {
        let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
        plot!("dynamic boxes", self.stats.dynamic_boxes as f64);
        plot!("static boxes", self.stats.static_boxes as f64);
        plot!("pairs", self.stats.pairs as f64);
        plot!("started", self.stats.started as f64);
        plot!("ended", self.stats.ended as f64);
        plot!("gather ms", ms(self.stats.times.gather));
        plot!("statics ms", ms(self.stats.times.statics));
        plot!("partition ms", ms(self.stats.times.partition));
        plot!("queries ms", ms(self.stats.times.queries));
        plot!("merge ms", ms(self.stats.times.merge));
        plot!("events ms", ms(self.stats.times.events));
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
        &self.pairs
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
