//! How the plugin learns of sleeping entities it has not seen fall asleep.

/// How the plugin learns that the set of [`Sleeping`](crate::Sleeping)
/// entities changed: an entity fell asleep or woke, was spawned asleep or
/// despawned asleep, or a sleeping entity's box or layers changed.
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, BroadPhasePlugin, PluginConfig, SleepChanges, Sleeping};
/// use glam::Vec3;
///
/// let mut world = hecs::World::new();
/// let ball = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
/// let config = PluginConfig { sleep_changes: SleepChanges::Notify, ..Default::default() };
/// let mut plugin = BroadPhasePlugin::with_config(config);
/// plugin.run(&mut world)?;
///
/// // A crate is loaded asleep onto the ball: the loader says so.
/// let crate_box = world.spawn((Aabb::new(Vec3::splat(0.5), Vec3::splat(2.0)), Sleeping));
/// plugin.sleepers_changed();
/// plugin.run(&mut world)?;
/// assert_eq!(plugin.pairs(), [(ball, crate_box)]);
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SleepChanges {
    /// Every run compares the sleeping entities (id and generation, one
    /// streaming pass, no box read) with the ones last gathered and, if
    /// they differ, gathers them again: exact for entities falling asleep,
    /// waking, spawned and despawned, whatever the game does; costs about
    /// a nanosecond per sleeping entity per run.
    ///
    /// In both modes a sleeping entity's box and layers are read only when
    /// the set is gathered again: an entity asleep at a run whose box or
    /// layers changed since the last run (while asleep, or before it fell
    /// asleep, or while it was static) needs waking or a call to
    /// [`sleepers_changed`](crate::BroadPhasePlugin::sleepers_changed).
    #[default]
    Detect,
    /// Runs trust the sleeping entities, and cost the same whatever their
    /// count, until
    /// [`sleepers_changed`](crate::BroadPhasePlugin::sleepers_changed) is
    /// called: the game (or its physics step, which decides who sleeps)
    /// calls it after any of the changes above. Each run where it was
    /// called reads every sleeping entity again.
    ///
    /// A change the game does not report is mostly still seen: the
    /// sleeping entities are also read again on any run where the dynamic
    /// entities or the count of sleeping entities changed. That misses
    /// changes that balance out between two runs (one entity spawned and
    /// put to sleep while another sleeping one is despawned), so report
    /// every change.
    Notify,
}
