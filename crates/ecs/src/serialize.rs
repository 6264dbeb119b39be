//! `serde` for [`PluginSnapshot`] (the `serde` feature). A snapshot read
//! from bytes is untrusted: its broad-phase part is checked as
//! [`BroadPhaseSnapshot`] is, and the plugin's own parts are checked
//! against it as they are read; one that breaks an invariant a later
//! restore or run relies on is a [`PluginSnapshotError`].

use crate::FrameStats;
use crate::bodies::BodyState;
use crate::gather::{Sleepers, Statics};
use crate::kept::KeptSet;
use crate::proxies::EntityProxies;
use crate::snapshot::PluginSnapshot;
use broadphase_persistent::BroadPhaseSnapshot;
use broadphase_storage::Pool;
use core::fmt;
use hecs::Entity;
use serde::Deserialize;

/// Why bytes do not hold a valid [`PluginSnapshot`]: the error a
/// deserializer reports (as its own error type, with this message) when
/// the plugin's parts of the snapshot contradict each other or its broad
/// phase's. (A broken broad-phase part is the broad phase's
/// `SnapshotError`.)
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, BroadPhasePlugin, PluginSnapshot};
/// let mut world = hecs::World::new();
/// world.spawn((Aabb::default(),));
/// let mut plugin = BroadPhasePlugin::new();
/// plugin.run(&mut world)?;
/// let mut json = serde_json::to_value(plugin.snapshot()).unwrap();
/// json["proxies"]["owners"] = serde_json::json!([]); // the entity is gone
/// let err = serde_json::from_value::<PluginSnapshot>(json).unwrap_err();
/// assert!(err.to_string().contains("entity table"));
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PluginSnapshotError {
    what: &'static str,
}

impl fmt::Display for PluginSnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid plugin snapshot: {}", self.what)
    }
}

impl std::error::Error for PluginSnapshotError {}

/// A snapshot as read, before its checks.
#[derive(Deserialize)]
pub(crate) struct Unchecked {
    broad_phase: BroadPhaseSnapshot,
    proxies: EntityProxies,
    statics: KeptSet<Statics>,
    sleeping: KeptSet<Sleepers>,
    filtered: bool,
    awake: Pool<(Entity, Entity)>,
    resting: Pool<(Entity, Entity)>,
    started: Pool<(Entity, Entity)>,
    ended: Pool<(Entity, Entity)>,
    bodies: BodyState,
    stats: FrameStats,
}

impl TryFrom<Unchecked> for PluginSnapshot {
    type Error = PluginSnapshotError;

    fn try_from(read: Unchecked) -> Result<Self, PluginSnapshotError> {
        read.proxies.check(&read.broad_phase).map_err(|what| PluginSnapshotError { what })?;
        let lists = [&read.awake, &read.resting, &read.started, &read.ended];
        let sorted = |list: &&Pool<(Entity, Entity)>| {
            list.iter().all(|(a, b)| a < b) && list.windows(2).all(|w| w[0] < w[1])
        };
        if !lists.iter().all(sorted) {
            let what = "a published list is out of order or has a pair twice";
            return Err(PluginSnapshotError { what });
        }
        let Unchecked {
            broad_phase,
            proxies,
            statics,
            sleeping,
            filtered,
            awake,
            resting,
            started,
            ended,
            bodies,
            stats,
        } = read;
        Ok(PluginSnapshot {
            broad_phase,
            proxies,
            statics,
            sleeping,
            filtered,
            awake,
            resting,
            started,
            ended,
            bodies,
            stats,
        })
    }
}
