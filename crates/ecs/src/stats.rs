//! What one frame of the plugin did and how long each stage took.

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
/// let t = StageTimes { partition: Duration::from_millis(2), ..Default::default() };
/// assert_eq!(t.as_ms()[2], ("partition", 2.0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// Reading the dynamic boxes, their entities and layers from the world.
    pub gather: Duration,
    /// Checking the static set for changes, and re-indexing it if it changed.
    pub statics: Duration,
    /// Dynamic-vs-dynamic pairs (build + all pairs).
    pub partition: Duration,
    /// Each dynamic box queried against the static set, layers applied.
    pub queries: Duration,
    /// Dynamic pairs filtered by layers and mapped to entities; all pairs
    /// sorted into the published order.
    pub merge: Duration,
    /// `started` / `ended` by diffing against the previous frame.
    pub events: Duration,
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
    /// assert_eq!(names, ["gather", "statics", "partition", "queries", "merge", "events", "total"]);
    /// ```
    pub fn as_ms(&self) -> [(&'static str, f64); 7] {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        [
            ("gather", ms(self.gather)),
            ("statics", ms(self.statics)),
            ("partition", ms(self.partition)),
            ("queries", ms(self.queries)),
            ("merge", ms(self.merge)),
            ("events", ms(self.events)),
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
///
/// let mut world = hecs::World::new();
/// world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
/// world.spawn((Aabb::new(Vec3::ZERO, Vec3::splat(9.0)), Static));
/// let mut plugin = BroadPhasePlugin::new();
/// plugin.run(&mut world)?;
/// let stats = plugin.stats();
/// assert_eq!((stats.frame, stats.dynamic_boxes, stats.static_boxes, stats.pairs), (1, 1, 1, 1));
/// assert!(stats.static_rebuilt);
/// plugin.run(&mut world)?;
/// assert!(!plugin.stats().static_rebuilt); // nothing static changed
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameStats {
    /// How many runs have succeeded, this one included (1 after the first).
    pub frame: u64,
    /// Boxes of entities without [`Static`](crate::Static).
    pub dynamic_boxes: usize,
    /// Boxes of entities with [`Static`](crate::Static).
    pub static_boxes: usize,
    /// Pairs published this frame.
    pub pairs: usize,
    /// Pairs that started this frame.
    pub started: usize,
    /// Pairs that ended this frame.
    pub ended: usize,
    /// Whether the static boxes joined the dynamic pass this frame instead
    /// of being queried in their index (see
    /// [`PluginConfig::small_static_ratio`](crate::PluginConfig::small_static_ratio)).
    pub statics_in_dynamic_pass: bool,
    /// Whether the static set was re-indexed this frame.
    pub static_rebuilt: bool,
    /// How many times the static set has been indexed in all.
    pub static_rebuilds: u64,
    /// Threads of the plugin's job system (the dynamic pass uses them all
    /// above the partition's split threshold, one below it).
    pub threads: usize,
    /// Per-stage wall time.
    pub times: StageTimes,
}
