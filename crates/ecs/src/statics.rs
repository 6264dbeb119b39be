//! The static entities: gathered again only when they change, so that a
//! frame costs nothing per static entity that did not.

use crate::gather::{Gathered, Statics};
use crate::{Aabb, Collider, PluginConfig, Position, Static};
use hecs::{Entity, World};

/// How the plugin learns that a static entity was added, removed or
/// changed.
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, BroadPhasePlugin, PluginConfig, Static, StaticChanges};
/// use glam::Vec3;
///
/// let mut world = hecs::World::new();
/// let wall = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE), Static));
/// let ball = world.spawn((Aabb::new(Vec3::splat(5.0), Vec3::splat(6.0)),));
/// let config = PluginConfig { static_changes: StaticChanges::Notify, ..Default::default() };
/// let mut plugin = BroadPhasePlugin::with_config(config);
/// plugin.run(&mut world)?;
///
/// // The level editor moves the wall onto the ball, and says so.
/// *world.get::<&mut Aabb>(wall).unwrap() = Aabb::new(Vec3::splat(5.5), Vec3::splat(7.0));
/// plugin.statics_changed();
/// plugin.run(&mut world)?;
/// assert_eq!(plugin.pairs(), [(wall, ball)]);
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StaticChanges {
    /// Every run compares every static entity with what was last gathered
    /// (same entities, same boxes, same layers) and, if anything differs,
    /// gathers them again and updates their proxies (only the changed ones
    /// are re-indexed). Exact, whatever the game does; costs one streaming pass
    /// over the static entities per run (about 3 ns each, measured in
    /// docs/BENCHMARKS.md).
    #[default]
    Detect,
    /// Runs trust the static proxies until
    /// [`statics_changed`](crate::BroadPhasePlugin::statics_changed) is
    /// called: the game calls it after adding, removing, moving or
    /// re-layering a static entity (level load, an editor, a door that
    /// opens). A run then costs the same whatever the static count.
    ///
    /// A change the game does not report is not seen, with one safety
    /// net: every static entity in a pair is checked (alive, still
    /// `Static`, still with a box), and if one is not, the static entities
    /// are gathered again in the same run, so a pair never names a
    /// despawned entity nor reports an entity twice.
    Notify,
}

/// The static entities as last gathered.
#[derive(Debug)]
pub(crate) struct StaticSet {
    pub(crate) set: Gathered,
    mode: StaticChanges,
    /// `set` was gathered without error and no change was reported since.
    /// False before the first frame, after a failed frame, and after
    /// `statics_changed`, so the next run gathers again.
    valid: bool,
    /// How many times the set was gathered and its proxies updated.
    pub(crate) rebuilds: u64,
}

/// A snapshot's copy, into the set already there. The mode is the
/// plugin's tuning: a copy keeps its own.
impl Clone for StaticSet {
    fn clone(&self) -> Self {
        let mut copy = Self { set: Gathered::default(), ..*self };
        copy.set.clone_from(&self.set);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.set.clone_from(&source.set);
        self.valid = source.valid;
        self.rebuilds = source.rebuilds;
    }
}

impl StaticSet {
    pub(crate) fn new(config: &PluginConfig) -> Self {
        Self { set: Gathered::default(), mode: config.static_changes, valid: false, rebuilds: 0 }
    }

    /// Makes the next `gather_if_changed` gather.
    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// The mode this set runs in.
    pub(crate) fn mode(&self) -> StaticChanges {
        self.mode
    }

    /// Gathers the static entities again if they changed since the last
    /// gather (per [`StaticChanges`]); returns whether it did. The caller
    /// calls [`confirm`](Self::confirm) once their proxies are updated.
    pub(crate) fn gather_if_changed<P: Position>(&mut self, world: &mut World) -> bool {
        let unchanged = self.valid
            && match self.mode {
                StaticChanges::Detect => self.set.same_as::<Statics, P>(world),
                StaticChanges::Notify => true,
            };
        if unchanged {
            return false;
        }
        self.valid = false;
        self.set.gather::<Statics, P>(world);
        true
    }

    /// Gathers the static entities again now, whatever the mode says
    /// (they were found stale); returns `true`.
    pub(crate) fn gather_if_stale<P: Position>(&mut self, world: &mut World) -> bool {
        self.valid = false;
        self.gather_if_changed::<P>(world)
    }

    /// The gathered set is in the broad phase.
    pub(crate) fn confirm(&mut self) {
        self.valid = true;
        self.rebuilds += 1;
    }
}

/// Whether `e` is alive, `Static`, and has a box.
pub(crate) fn still_static<P: Position>(world: &World, e: Entity) -> bool {
    world.entity(e).is_ok_and(|r| {
        r.has::<Static>() && (r.has::<Aabb>() || (r.has::<P>() && r.has::<Collider>()))
    })
}
