//! What one frame of the plugin did and how long each stage took.

use broadphase_persistent::{UpdateStats, UpdateTimes};
use std::time::Duration;

/// Wall time of each stage of one [`run`](crate::BroadPhasePlugin::run),
/// in order. Each is also a Tracy zone (and a plot in ms) with the
/// `profile` feature.
///
/// # Examples
///
/// ```
/// use broadphase_ecs::StageTimes;
/// use std::time::Duration;
/// let t = StageTimes { update: Duration::from_millis(2), ..Default::default() };
/// assert_eq!(t.as_ms()[3], ("update", 2.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct StageTimes {
    /// Reading the dynamic boxes, their entities and layers from the world.
    pub gather: Duration,
    /// Checking the static entities for changes, and reading them again if
    /// they changed.
    pub statics: Duration,
    /// Checking the boxes, inserting and removing proxies for spawned and
    /// despawned entities, and setting every box in one bulk call.
    pub proxies: Duration,
    /// The persistent broad phase's update: re-indexing what left its
    /// enlarged box and testing the kept candidate pairs.
    pub update: Duration,
    /// The pairs and events mapped to entities, filtered by layers.
    pub publish: Duration,
    /// The whole `run`.
    pub total: Duration,
}

impl StageTimes {
    /// The stage names (as in Tracy) with their times in milliseconds, in
    /// order, `total` last.
    ///
    /// # Examples
    ///
    /// ```
    /// let names: Vec<&str> =
    ///     broadphase_ecs::StageTimes::default().as_ms().iter().map(|(n, _)| *n).collect();
    /// assert_eq!(names, ["gather", "statics", "proxies", "update", "publish", "total"]);
    /// ```
    pub fn as_ms(&self) -> [(&'static str, f64); 6] {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        [
            ("gather", ms(self.gather)),
            ("statics", ms(self.statics)),
            ("proxies", ms(self.proxies)),
            ("update", ms(self.update)),
            ("publish", ms(self.publish)),
            ("total", ms(self.total)),
        ]
    }
}

/// Counts and stage times of the last successful
/// [`run`](crate::BroadPhasePlugin::run).
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, BroadPhasePlugin, Static};
/// use glam::Vec3;
/// use std::time::Duration;
///
/// let mut world = hecs::World::new();
/// world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
/// world.spawn((Aabb::new(Vec3::ZERO, Vec3::splat(9.0)), Static));
/// let mut plugin = BroadPhasePlugin::new();
/// plugin.run(&mut world)?;
/// let stats = plugin.stats();
/// assert_eq!((stats.frame, stats.dynamic_boxes, stats.static_boxes, stats.pairs), (1, 1, 1, 1));
/// assert!(stats.static_rebuilt);
/// // The update stage's two parts, timed inside it.
/// let update = stats.update_times;
/// assert!(update.total > Duration::ZERO && update.total <= stats.times.update);
/// assert!(update.candidates + update.merge <= update.total);
/// plugin.run(&mut world)?;
/// assert!(!plugin.stats().static_rebuilt); // nothing static changed
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FrameStats {
    /// How many runs have succeeded, this one included (1 after the first).
    pub frame: u64,
    /// Boxes of entities with neither [`Static`](crate::Static) nor
    /// [`Sleeping`](crate::Sleeping): read this frame.
    pub dynamic_boxes: usize,
    /// Boxes of entities with [`Sleeping`](crate::Sleeping) (and not
    /// `Static`), as last read.
    pub sleeping_boxes: usize,
    /// Boxes of entities with [`Static`](crate::Static).
    pub static_boxes: usize,
    /// Pairs published this frame.
    pub pairs: usize,
    /// Pairs that started this frame.
    pub started: usize,
    /// Pairs that ended this frame.
    pub ended: usize,
    /// Whether the static entities were read again this frame (one was
    /// added, removed or changed, or the game said so).
    pub static_rebuilt: bool,
    /// How many times the static entities have been read in all.
    pub static_rebuilds: u64,
    /// Whether the sleeping entities were read again this frame (one
    /// fell asleep, woke, was spawned or despawned, or the game said so).
    pub sleeping_rebuilt: bool,
    /// Threads of the plugin's job system.
    pub threads: usize,
    /// What the persistent broad phase's update did: proxies re-indexed,
    /// the path it took, candidate pairs kept.
    pub broad_phase: UpdateStats,
    /// Per-stage wall time.
    pub times: StageTimes,
    /// The `update` stage split in two: finding the candidate pairs and
    /// merging them with the kept ones (of the run's last update, when a
    /// run updates twice).
    pub update_times: UpdateTimes,
}

/// How the per-entity contact lists of a frame were made, by the first
/// [`touching`](crate::BroadPhasePlugin::touching) (or
/// [`touching_count`](crate::BroadPhasePlugin::touching_count),
/// [`is_touching`](crate::BroadPhasePlugin::is_touching)) after its run:
/// see [`BroadPhasePlugin::contact_list_stats`](crate::BroadPhasePlugin::contact_list_stats).
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, BroadPhasePlugin};
/// use glam::Vec3;
/// let mut world = hecs::World::new();
/// let a = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
/// world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
/// let mut plugin = BroadPhasePlugin::new();
/// plugin.run(&mut world)?;
/// assert_eq!(plugin.contact_list_stats(), None); // not read yet: not made
/// assert_eq!(plugin.touching(a).len(), 1);
/// let made = plugin.contact_list_stats().expect("made by the read");
/// assert!(!made.patched); // the first frame's lists are built
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ContactListStats {
    /// Whether the lists were the frame before's changed by this frame's
    /// started and ended pairs (few changed, and the frame before's lists
    /// were made) rather than built anew from every pair.
    pub patched: bool,
    /// Wall time of making them, spent in the read that made them.
    pub time: Duration,
}
