//! The broad phase as a [`hecs`] system: add [`BroadPhasePlugin`] to the
//! game loop, call [`run`](BroadPhasePlugin::run) once a frame, and read
//! the collision pairs and the started / ended events back as
//! `(hecs::Entity, hecs::Entity)`.
//!
//! # Model
//!
//! - **Boxes.** An entity takes part if it has an [`Aabb`] component, or a
//!   position component plus a [`Collider`] (the box is the collider's
//!   extent around the position; `glam::Vec3` is the position by default,
//!   any type implementing [`Position`] can be). When an entity has both,
//!   the `Aabb` is used.
//! - **Persistent proxies.** Each entity with a box keeps a proxy in a
//!   persistent broad phase (`broadphase_persistent::PersistentBroadPhase`)
//!   in the slot numbered by its entity id, from the frame it gets a box to
//!   the frame it loses it. Each run sets every box in one bulk call and
//!   updates on the plugin's own `JobSystem` ([`PluginConfig::threads`],
//!   one per core by default): what moved is re-indexed, or everything on
//!   all threads when much moved.
//! - **Static and dynamic.** Entities with the [`Static`] marker are static
//!   proxies: never re-indexed unless changed, never paired with each
//!   other. Their boxes are read again only when one is added, removed or
//!   changed ([`StaticChanges`]: detected by the plugin, or reported by the
//!   game).
//! - **Sleeping.** Entities with the [`Sleeping`] marker keep their
//!   proxies and their pairs (two sleeping entities that touch are a pair)
//!   but are not read while they sleep; waking costs one read. How a run
//!   learns of sleeping entities spawned or despawned: [`SleepChanges`].
//! - **Layers.** [`CollisionLayers`] `{ member, filter }`: a pair `(a, b)`
//!   is kept iff `(a.member & b.filter) != 0 && (b.member & a.filter) != 0`.
//!   An entity without the component collides with everything. Rejected
//!   pairs are dropped before any output.
//! - **Compound bodies.** [`ColliderOf`]`(body)` ties a collider entity to
//!   its body (one level deep; an entity without it is its own body).
//!   Colliders of one body never pair: each gets the body's group in the
//!   broad phase, which never makes a candidate pair within a group.
//!   [`body_pairs`](BroadPhasePlugin::body_pairs),
//!   [`body_started`](BroadPhasePlugin::body_started) and
//!   [`body_ended`](BroadPhasePlugin::body_ended) give each body pair
//!   once; a link to a dead body or to another body's collider is a
//!   [`PluginError`]. With no `ColliderOf` in the world, the body lists
//!   are the collider lists, at no cost.
//! - **Output.** [`pairs`](BroadPhasePlugin::pairs) (this frame),
//!   [`started`](BroadPhasePlugin::started) and
//!   [`ended`](BroadPhasePlugin::ended) (from the broad phase, or by
//!   diffing against the last frame when layers are in play), each pair
//!   `(a, b)` with `a < b` by `Entity`'s `Ord`, each list
//!   sorted; [`touching`](BroadPhasePlugin::touching) gives one entity's
//!   partners, sorted, merged from the pairs on the plugin's threads by
//!   the first read after a run. Results live in the plugin; it never adds or removes
//!   components, so no entity changes archetype because of it.
//! - **Bad boxes.** A NaN, infinite or inverted box is a
//!   [`PluginError::InvalidBox`] naming the entity — never a panic, never a
//!   silently dropped box; the frame is skipped and nothing published
//!   changes.
//! - **Rollback.** [`BroadPhasePlugin::snapshot_into`] saves what the
//!   plugin's outputs and next runs depend on into a [`PluginSnapshot`]
//!   (allocating nothing once warm); [`BroadPhasePlugin::restore`] puts
//!   it back, and runs over a world the game restored to the same
//!   entities and components give the same pairs, events, `touching`
//!   lists and query answers, bit for bit. The README's "Rollback" shows
//!   the loop. With the `serde` feature a [`PluginSnapshot`] serializes;
//!   one read from bytes is checked, and a broken one is an error
//!   (`PluginSnapshotError`) rather than a panic later.
//! - **Profiling.** With the `profile` feature, every stage is a Tracy zone,
//!   every run a frame in the `broadphase` frame set, and counts and stage
//!   times are plotted; call [`frame_mark`] at the end of your own frame.
//!   Without it no Tracy code is compiled.
//!
//! # Example
//!
//! ```
//! use broadphase_ecs::{Aabb, BroadPhasePlugin, Collider, CollisionLayers, Static};
//! use glam::Vec3;
//!
//! const PLAYER: u32 = 1;
//! const PICKUP: u32 = 2;
//!
//! let mut world = hecs::World::new();
//! let wall = world.spawn((Aabb::new(Vec3::new(5.0, 0.0, -10.0), Vec3::new(6.0, 3.0, 10.0)), Static));
//! let player = world.spawn((Vec3::ZERO, Collider::cuboid(Vec3::new(0.5, 1.0, 0.5)), CollisionLayers::new(PLAYER, u32::MAX)));
//! let coin = world.spawn((Vec3::new(2.0, 0.5, 0.0), Collider::sphere(0.3), CollisionLayers::new(PICKUP, PLAYER)));
//! // A second coin overlapping the first: coins don't collide with coins.
//! world.spawn((Vec3::new(2.1, 0.5, 0.0), Collider::sphere(0.3), CollisionLayers::new(PICKUP, PLAYER)));
//!
//! let mut broadphase = BroadPhasePlugin::new();
//! for frame in 0..60 {
//!     // Game logic: the player walks along +x.
//!     world.get::<&mut Vec3>(player).unwrap().x = frame as f32 * 0.1;
//!     broadphase.run(&mut world)?;
//!     for &(a, b) in broadphase.started() {
//!         if (a, b) == (player, coin) {
//!             println!("frame {frame}: coin picked up");
//!         }
//!     }
//!     broadphase_ecs::frame_mark(); // end of the game frame (Tracy, with `profile`)
//! }
//! // At x = 5.9 the player (half width 0.5) touches the wall.
//! assert_eq!(broadphase.pairs(), [(wall, player)]);
//! # Ok::<(), broadphase_ecs::PluginError>(())
//! ```
#![forbid(unsafe_code)]

mod backend;
mod batch_queries;
mod bodies;
mod components;
mod contact_lists;
mod contact_patch;
mod contacts;
mod error;
mod events;
mod gather;
mod kept;
mod plugin;
mod profile;
mod proxies;
mod publish;
mod queries;
#[cfg(feature = "serde")]
mod serialize;
mod sleeping;
mod snapshot;
mod statics;
mod stats;

pub use broadphase_partition::BatchError;
pub use broadphase_persistent::BatchAnswers;
pub use broadphase_storage::{Aabb, InputError};
pub use components::{Collider, ColliderOf, CollisionLayers, Position, Sleeping, Static};
pub use error::PluginError;
pub use hecs;
pub use plugin::{BroadPhasePlugin, PluginConfig};
pub use profile::{frame_mark, profiling_enabled};
pub use proxies::MAX_ENTITY_ID;
#[cfg(feature = "serde")]
pub use serialize::PluginSnapshotError;
pub use sleeping::SleepChanges;
pub use snapshot::PluginSnapshot;
pub use statics::StaticChanges;
pub use stats::{ContactListStats, FrameStats, StageTimes};
