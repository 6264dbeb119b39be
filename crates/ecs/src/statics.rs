//! How the plugin learns that static entities changed.

use crate::{Aabb, Collider, Position, Static};
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

/// Whether `e` is alive, `Static`, and has a box.
pub(crate) fn still_static<P: Position>(world: &World, e: Entity) -> bool {
    world.entity(e).is_ok_and(|r| {
        r.has::<Static>() && (r.has::<Aabb>() || (r.has::<P>() && r.has::<Collider>()))
    })
}
