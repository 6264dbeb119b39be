//! What `run` reports instead of panicking or dropping a box.

use broadphase_jobs::JobError;
use broadphase_partition::BatchError;
use broadphase_persistent::ProxyError;
use broadphase_storage::{InputError, MAX_BOXES, QueryError};
use core::fmt;
use hecs::Entity;

/// Why [`BroadPhasePlugin::run`](crate::BroadPhasePlugin::run) skipped a
/// frame.
///
/// On an error nothing the plugin publishes changes: [`pairs`], [`started`],
/// [`ended`] and [`stats`] still describe the last frame that succeeded, and
/// the next successful frame's events are computed against it, so no event
/// is lost. Fix the entity (or despawn it) and run again.
///
/// [`pairs`]: crate::BroadPhasePlugin::pairs
/// [`started`]: crate::BroadPhasePlugin::started
/// [`ended`]: crate::BroadPhasePlugin::ended
/// [`stats`]: crate::BroadPhasePlugin::stats
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, BroadPhasePlugin, PluginError};
/// use glam::Vec3;
///
/// let mut world = hecs::World::new();
/// world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
/// let bad = world.spawn((Aabb::new(Vec3::ZERO, Vec3::new(1.0, f32::NAN, 1.0)),));
/// let mut plugin = BroadPhasePlugin::new();
/// match plugin.run(&mut world) {
///     Err(PluginError::InvalidBox { entity, .. }) => assert_eq!(entity, bad),
///     other => panic!("expected an invalid box, got {other:?}"),
/// }
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum PluginError {
    /// An entity's box has a NaN or infinite coordinate, or `min > max` on
    /// an axis (a [`Collider`](crate::Collider) with a negative half
    /// extent, or a position that is not finite).
    ///
    /// If several boxes are bad, the first one met is named, in this
    /// order: entities new this frame (dynamic, then static), then the
    /// others (dynamic, then static), each in the world's iteration order.
    InvalidBox {
        /// The entity whose box is bad.
        entity: Entity,
        /// What is wrong with it: axis, corner and value. Its `index` field
        /// is always 0 (the entity is the name that matters).
        error: InputError,
    },
    /// More boxes of one kind (dynamic or static) than `u32` ids can name.
    TooManyBoxes {
        /// How many there were.
        count: usize,
    },
    /// A job of the broad phase panicked (a bug in broadphase, caught on
    /// its thread and reported here rather than unwinding into the game).
    Job(JobError),
    /// An entity's id is past [`MAX_ENTITY_ID`](crate::MAX_ENTITY_ID): the
    /// plugin keeps one slot per id, and hecs hands out ids densely, so
    /// only `World::spawn_at` with a large id gets here.
    EntityIdTooLarge {
        /// The entity.
        entity: Entity,
    },
    /// The broad phase refused a call: a bug in the plugin, reported rather
    /// than a panic.
    Proxy(ProxyError),
    /// A query's ray, point or sphere breaks its contract (the plugin's
    /// state is untouched).
    Query(QueryError),
    /// A query box breaks the box contract (its `index` is 0), or a box
    /// was refused for a cause that names no entity.
    Input(InputError),
    /// A batch of queries was refused: one query of it breaks its
    /// contract ([`BatchError::Query`] or [`BatchError::Input`] name its
    /// index in the batch), or a job of it panicked.
    Batch(BatchError),
    /// A collider's [`ColliderOf`](crate::ColliderOf) names an entity
    /// that is not alive. If several links are bad, the first one met in
    /// the world's iteration order is named.
    DeadBody {
        /// The entity with the `ColliderOf`.
        collider: Entity,
        /// The entity it names.
        body: Entity,
    },
    /// A collider's [`ColliderOf`](crate::ColliderOf) names an entity that
    /// is itself a collider of another body: bodies are one level deep.
    NestedBody {
        /// The entity with the `ColliderOf`.
        collider: Entity,
        /// The entity it names, which has a `ColliderOf` of its own.
        body: Entity,
    },
}

impl PluginError {
    /// Maps the kernel's error for box `index` of a gathered slice to the
    /// entity that box came from.
    pub(crate) fn from_input(error: InputError, entities: &[Entity]) -> Self {
        Self::from_input_split(error, entities, &[])
    }

    /// As [`from_input`](Self::from_input), for a slice gathered as
    /// `first` followed by `second`.
    pub(crate) fn from_input_split(error: InputError, first: &[Entity], second: &[Entity]) -> Self {
        let (index, error) = match error {
            InputError::NotFinite { index, axis, corner, value } => {
                (index, InputError::NotFinite { index: 0, axis, corner, value })
            }
            InputError::Inverted { index, axis, min, max } => {
                (index, InputError::Inverted { index: 0, axis, min, max })
            }
            InputError::TooManyBoxes { count } => return PluginError::TooManyBoxes { count },
            other => return PluginError::Input(other),
        };
        let entity = match index.checked_sub(first.len()) {
            None => first.get(index),
            Some(k) => second.get(k),
        };
        match entity {
            Some(&entity) => PluginError::InvalidBox { entity, error },
            // Unreachable with the kernel's contract; kept total, not a panic.
            None => PluginError::TooManyBoxes { count: first.len() + second.len() },
        }
    }
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            &PluginError::InvalidBox { entity, error } => match error {
                InputError::NotFinite { axis, corner, value, .. } => write!(
                    f,
                    "entity {entity:?}: {corner:?} {axis:?} coordinate of its box is {value}, not a finite number"
                ),
                InputError::Inverted { axis, min, max, .. } => write!(
                    f,
                    "entity {entity:?}: its box's min {axis:?} ({min}) is greater than its max {axis:?} ({max})"
                ),
                InputError::TooManyBoxes { count } => {
                    write!(f, "entity {entity:?}: {count} boxes, more than {MAX_BOXES}")
                }
                other => write!(f, "entity {entity:?}: {other}"),
            },
            PluginError::TooManyBoxes { count } => {
                write!(f, "{count} boxes of one kind; at most {MAX_BOXES} fit u32 ids")
            }
            PluginError::Job(error) => write!(f, "the broad phase's update failed: {error}"),
            PluginError::EntityIdTooLarge { entity } => write!(
                f,
                "entity {entity:?}: its id is past {}, the largest the plugin accepts",
                crate::MAX_ENTITY_ID
            ),
            PluginError::Proxy(error) => write!(f, "the broad phase refused a call: {error}"),
            PluginError::Query(error) => write!(f, "a query was refused: {error}"),
            PluginError::Input(error) => write!(f, "a query box was refused: {error}"),
            PluginError::Batch(error) => write!(f, "a batch of queries failed: {error}"),
            PluginError::DeadBody { collider, body } => {
                write!(f, "entity {collider:?}: its ColliderOf names {body:?}, which is not alive")
            }
            PluginError::NestedBody { collider, body } => write!(
                f,
                "entity {collider:?}: its ColliderOf names {body:?}, which is a collider of another body (bodies are one level deep)"
            ),
        }
    }
}

impl std::error::Error for PluginError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PluginError::InvalidBox { error, .. } => Some(error),
            PluginError::TooManyBoxes { .. } => None,
            PluginError::Job(error) => Some(error),
            PluginError::EntityIdTooLarge { .. } => None,
            PluginError::Proxy(error) => Some(error),
            PluginError::Query(error) => Some(error),
            PluginError::Input(error) => Some(error),
            PluginError::Batch(error) => Some(error),
            PluginError::DeadBody { .. } | PluginError::NestedBody { .. } => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use broadphase_storage::{Axis, Corner};

    #[test]
    fn maps_index_to_entity_and_zeroes_it() {
        let mut world = hecs::World::new();
        let entities: Vec<Entity> = (0..3).map(|_| world.spawn(())).collect();
        let error =
            InputError::NotFinite { index: 2, axis: Axis::Y, corner: Corner::Max, value: f32::NAN };
        let mapped = PluginError::from_input(error, &entities);
        let PluginError::InvalidBox { entity, error } = mapped else { panic!("{mapped:?}") };
        assert_eq!(entity, entities[2]);
        assert!(matches!(error, InputError::NotFinite { index: 0, axis: Axis::Y, .. }));
        assert!(mapped.to_string().contains("Max Y coordinate"), "{mapped}");
    }

    #[test]
    fn too_many_boxes_passes_through() {
        let mapped = PluginError::from_input(InputError::TooManyBoxes { count: 7 }, &[]);
        assert_eq!(mapped, PluginError::TooManyBoxes { count: 7 });
    }
}
