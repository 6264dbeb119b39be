//! The static set: indexed once, re-indexed only when it changes, queried
//! by every dynamic box each frame.

use crate::events::ordered;
use crate::gather::{Gathered, Statics};
use crate::{Aabb, Collider, PluginConfig, PluginError, Position, Static};
use broadphase_kernel::AdaptiveGrid;
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
    /// Every run compares every static entity with what was indexed (same
    /// entities, same boxes, same layers) and re-indexes if anything
    /// differs. Exact, whatever the game does; costs one streaming pass
    /// over the static entities per run (about 3 ns each, measured in
    /// docs/BENCHMARKS.md).
    #[default]
    Detect,
    /// Runs trust the index until
    /// [`statics_changed`](crate::BroadPhasePlugin::statics_changed) is
    /// called: the game calls it after adding, removing, moving or
    /// re-layering a static entity (level load, an editor, a door that
    /// opens). A run then costs the same whatever the static count.
    ///
    /// A change the game does not report is not seen, with one safety
    /// net: every static entity a dynamic box hits is checked (alive,
    /// still `Static`, still with a box), and if one is not, the set is
    /// re-indexed in the same run, so a pair never names a despawned
    /// entity nor reports an entity twice.
    Notify,
}

/// The static entities as last indexed, and their grid.
#[derive(Debug)]
pub(crate) struct StaticSet {
    pub(crate) set: Gathered,
    grid: AdaptiveGrid,
    mode: StaticChanges,
    /// `set` was gathered and `grid` built from it without error, and no
    /// change was reported since. False before the first frame, after a
    /// failed build, and after `statics_changed`, so the next run gathers
    /// again.
    valid: bool,
    /// How many times the grid was built.
    pub(crate) rebuilds: u64,
}

impl StaticSet {
    pub(crate) fn new(config: &PluginConfig) -> Self {
        Self {
            set: Gathered::default(),
            grid: AdaptiveGrid::with_config(config.partition.grid),
            mode: config.static_changes,
            valid: false,
            rebuilds: 0,
        }
    }

    /// Makes the next `sync` re-index.
    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Gathers the static entities without indexing them (for a frame in
    /// which they join the dynamic pass); the next `sync` re-indexes.
    pub(crate) fn gather_unindexed<P: Position>(&mut self, world: &mut World) {
        self.valid = false;
        self.set.gather::<Statics, P>(world);
    }

    /// Re-indexes the static entities if they changed since the last build
    /// (per [`StaticChanges`]); returns whether it did.
    ///
    /// # Errors
    /// [`PluginError::InvalidBox`] naming the first bad static box; the set
    /// is then empty and the next call gathers again.
    pub(crate) fn sync<P: Position>(&mut self, world: &mut World) -> Result<bool, PluginError> {
        let unchanged = self.valid
            && match self.mode {
                StaticChanges::Detect => self.set.same_as::<Statics, P>(world),
                StaticChanges::Notify => true,
            };
        if unchanged {
            return Ok(false);
        }
        self.valid = false;
        self.set.gather::<Statics, P>(world);
        self.grid
            .build(&self.set.boxes)
            .map_err(|error| PluginError::from_input(error, &self.set.entities))?;
        self.valid = true;
        self.rebuilds += 1;
        Ok(true)
    }

    /// Appends to `out` every (dynamic, static) pair that overlaps and whose
    /// layers match, ordered within the pair. Returns `false` (with `out`
    /// partly filled) if, in [`StaticChanges::Notify`] mode, a static
    /// entity hit is stale: the caller re-indexes and queries again.
    ///
    /// # Errors
    /// Only if a dynamic box is invalid, which the dynamic pass has already
    /// ruled out; kept as an error, not a panic.
    pub(crate) fn query_all<P: Position>(
        &self,
        world: &World,
        dynamic: &Gathered,
        hits: &mut Vec<u32>,
        out: &mut Vec<(Entity, Entity)>,
    ) -> Result<bool, PluginError> {
        if self.set.len() == 0 {
            return Ok(true);
        }
        let filtered = dynamic.filtered || self.set.filtered;
        let verify = self.mode == StaticChanges::Notify;
        for (i, b) in dynamic.boxes.iter().enumerate() {
            self.grid
                .query(b, hits)
                .map_err(|error| PluginError::from_input(error, &dynamic.entities[i..=i]))?;
            if verify
                && !hits.iter().all(|&s| still_static::<P>(world, self.set.entities[s as usize]))
            {
                return Ok(false);
            }
            let d = dynamic.entities[i];
            if filtered {
                let dl = dynamic.layers(i);
                out.extend(
                    hits.iter()
                        .filter(|&&s| dl.interacts_with(&self.set.layers(s as usize)))
                        .map(|&s| ordered(d, self.set.entities[s as usize])),
                );
            } else {
                out.extend(hits.iter().map(|&s| ordered(d, self.set.entities[s as usize])));
            }
        }
        Ok(true)
    }
}

/// Whether `e` is alive, `Static`, and has a box.
fn still_static<P: Position>(world: &World, e: Entity) -> bool {
    world.entity(e).is_ok_and(|r| {
        r.has::<Static>() && (r.has::<Aabb>() || (r.has::<P>() && r.has::<Collider>()))
    })
}
