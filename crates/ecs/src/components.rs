//! The components the plugin reads: a box, or a position plus a collider
//! extent; the `Static` marker; collision layers; the body a collider
//! belongs to.

use broadphase_storage::Aabb;
use glam::Vec3;

/// The extent of an entity's box around its position, for entities that
/// have a position component instead of an [`Aabb`].
///
/// The box is `position + offset ± half_extents`. Half extents must be
/// `>= 0`: a negative one makes an inverted box, which the plugin reports as
/// [`PluginError::InvalidBox`](crate::PluginError::InvalidBox).
///
/// # Examples
///
/// ```
/// use broadphase_ecs::Collider;
/// use glam::Vec3;
///
/// let ball = Collider::sphere(0.5);
/// let b = ball.aabb_at(Vec3::new(1.0, 2.0, 3.0));
/// assert_eq!(b.min, Vec3::new(0.5, 1.5, 2.5));
/// assert_eq!(b.max, Vec3::new(1.5, 2.5, 3.5));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Collider {
    /// Half the box's size on each axis.
    pub half_extents: Vec3,
    /// The box's center relative to the entity's position.
    pub offset: Vec3,
}

impl Collider {
    /// A box of these half extents centred on the position.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::Collider;
    /// use glam::Vec3;
    /// let crate_box = Collider::cuboid(Vec3::new(1.0, 0.5, 1.0));
    /// assert_eq!(crate_box.aabb_at(Vec3::ZERO).max, Vec3::new(1.0, 0.5, 1.0));
    /// ```
    pub const fn cuboid(half_extents: Vec3) -> Self {
        Self { half_extents, offset: Vec3::ZERO }
    }

    /// The box around a sphere of this radius centred on the position.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::Collider;
    /// use glam::Vec3;
    /// assert_eq!(Collider::sphere(2.0).half_extents, Vec3::splat(2.0));
    /// ```
    pub const fn sphere(radius: f32) -> Self {
        Self { half_extents: Vec3::splat(radius), offset: Vec3::ZERO }
    }

    /// The world-space box of this collider at `position`.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::Collider;
    /// use glam::Vec3;
    /// let c = Collider { half_extents: Vec3::ONE, offset: Vec3::X };
    /// assert_eq!(c.aabb_at(Vec3::ZERO).min, Vec3::new(0.0, -1.0, -1.0));
    /// ```
    #[inline]
    pub fn aabb_at(&self, position: Vec3) -> Aabb {
        Aabb::from_center_half_extent(position + self.offset, self.half_extents)
    }
}

/// Where a [`Collider`]'s box is centred: the position component the plugin
/// reads.
///
/// Implemented for `glam::Vec3`, used as the position component by
/// [`BroadPhasePlugin::new`](crate::BroadPhasePlugin::new). A game with its
/// own position type implements this one method and builds the plugin with
/// [`BroadPhasePlugin::with_position`](crate::BroadPhasePlugin::with_position).
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{BroadPhasePlugin, Collider, Position, hecs};
/// use glam::Vec3;
///
/// struct Transform {
///     translation: Vec3,
/// }
/// impl Position for Transform {
///     fn position(&self) -> Vec3 {
///         self.translation
///     }
/// }
///
/// let mut world = hecs::World::new();
/// let a = world.spawn((Transform { translation: Vec3::ZERO }, Collider::sphere(1.0)));
/// let b = world.spawn((Transform { translation: Vec3::X }, Collider::sphere(1.0)));
/// let mut plugin = BroadPhasePlugin::<Transform>::with_position(Default::default());
/// plugin.run(&mut world)?;
/// assert_eq!(plugin.pairs(), [(a, b)]);
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
pub trait Position: hecs::Component {
    /// The point the collider's box is centred on (before its offset).
    fn position(&self) -> Vec3;
}

impl Position for Vec3 {
    #[inline]
    fn position(&self) -> Vec3 {
        *self
    }
}

/// Marker: this entity does not move.
///
/// Static entities are indexed once, in a grid of their own, and re-indexed
/// only when one is added, removed or changed; each frame the dynamic boxes
/// are queried against it. Two static entities are never reported as a
/// pair (neither moves, so they are not a collision to resolve).
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, Static};
/// use glam::Vec3;
/// let mut world = hecs::World::new();
/// world.spawn((Aabb::new(Vec3::ZERO, Vec3::splat(100.0)), Static));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Static;

/// Marker: this entity is asleep (set by the game, or by its physics step
/// when a body comes to rest; removed to wake it).
///
/// A sleeping entity keeps its proxy and its pairs, but its box is not
/// read again while it sleeps: with
/// [`SleepChanges::Notify`](crate::SleepChanges::Notify) the frame costs
/// nothing per sleeping entity, and the default
/// [`SleepChanges::Detect`](crate::SleepChanges::Detect) costs one
/// streaming compare of the sleeping entities (about a nanosecond each)
/// to see which fell asleep, woke, were spawned or despawned. A sleeping
/// entity moved without waking it is seen only when reported. Its pairs stay
/// reported, and none of them ends while it sleeps unless the other side
/// moves away or one of the two is despawned. Unlike two [`Static`]
/// entities, two sleeping ones that touch are a pair: a pile that falls
/// asleep keeps its contacts. Waking (removing the marker) costs one read
/// of its box. An entity with both markers is static.
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, BroadPhasePlugin, Sleeping};
/// use glam::Vec3;
/// let mut world = hecs::World::new();
/// let a = world.spawn((Aabb::new(Vec3::ZERO, Vec3::ONE),));
/// let b = world.spawn((Aabb::new(Vec3::splat(0.5), Vec3::splat(1.5)),));
/// let mut plugin = BroadPhasePlugin::new();
/// plugin.run(&mut world)?;
///
/// world.insert_one(a, Sleeping).unwrap(); // both come to rest
/// world.insert_one(b, Sleeping).unwrap();
/// plugin.run(&mut world)?;
/// assert_eq!(plugin.pairs(), [(a, b)]); // still touching
/// assert!(plugin.ended().is_empty());
/// assert_eq!(plugin.stats().sleeping_boxes, 2);
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Sleeping;

/// Which layers an entity is on (`member`) and which layers it collides
/// with (`filter`), as bitmasks.
///
/// A pair `(a, b)` is kept iff `(a.member & b.filter) != 0 && (b.member &
/// a.filter) != 0`: each must be on a layer the other accepts. An entity
/// without this component collides with everything ([`CollisionLayers::ALL`]).
/// Pairs that fail the test are dropped inside the broad phase, before they
/// are output or turned into events.
///
/// # Examples
///
/// ```
/// use broadphase_ecs::CollisionLayers;
///
/// const PLAYER: u32 = 1 << 0;
/// const ENEMY: u32 = 1 << 1;
/// const BULLET: u32 = 1 << 2;
/// let player = CollisionLayers::new(PLAYER, ENEMY | BULLET);
/// let enemy = CollisionLayers::new(ENEMY, PLAYER | BULLET);
/// let bullet = CollisionLayers::new(BULLET, PLAYER | ENEMY);
/// assert!(player.interacts_with(&enemy));
/// assert!(bullet.interacts_with(&enemy));
/// assert!(!bullet.interacts_with(&bullet));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CollisionLayers {
    /// The layers this entity is on.
    pub member: u32,
    /// The layers this entity collides with.
    pub filter: u32,
}

impl CollisionLayers {
    /// On every layer, colliding with every layer: what an entity without
    /// the component gets.
    pub const ALL: CollisionLayers = CollisionLayers { member: u32::MAX, filter: u32::MAX };
    /// On no layer: collides with nothing.
    pub const NONE: CollisionLayers = CollisionLayers { member: 0, filter: 0 };

    /// Layers from a membership and a filter mask.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::CollisionLayers;
    /// let l = CollisionLayers::new(0b01, 0b10);
    /// assert_eq!((l.member, l.filter), (1, 2));
    /// ```
    pub const fn new(member: u32, filter: u32) -> Self {
        Self { member, filter }
    }

    /// The pair rule: whether entities on these two layer sets collide.
    /// Symmetric.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::CollisionLayers;
    /// let a = CollisionLayers::new(0b01, 0b10);
    /// let b = CollisionLayers::new(0b10, 0b01);
    /// assert!(a.interacts_with(&b) && b.interacts_with(&a));
    /// assert!(!a.interacts_with(&a));
    /// assert!(CollisionLayers::ALL.interacts_with(&a));
    /// ```
    #[inline]
    pub const fn interacts_with(&self, other: &CollisionLayers) -> bool {
        (self.member & other.filter) != 0 && (other.member & self.filter) != 0
    }
}

impl Default for CollisionLayers {
    /// [`CollisionLayers::ALL`].
    fn default() -> Self {
        Self::ALL
    }
}

/// Ties a collider entity to the body it is part of: colliders of one body
/// never pair with each other, and their pairs with other bodies are also
/// reported once per body pair
/// ([`body_pairs`](crate::BroadPhasePlugin::body_pairs)).
///
/// hecs has no hierarchy, so the link is this component on each collider,
/// naming its body. The hierarchy is one level deep:
///
/// - an entity without `ColliderOf` is its own body (and so is one whose
///   `ColliderOf` names itself);
/// - the body entity may have a box of its own, which is then one more
///   collider of the body, or none;
/// - the body must be alive, and must not be a collider of another body
///   itself: either is a [`PluginError`](crate::PluginError)
///   ([`DeadBody`](crate::PluginError::DeadBody),
///   [`NestedBody`](crate::PluginError::NestedBody)) naming the collider,
///   never a panic or a collider silently dropped.
///
/// Adding, changing or removing the component takes effect at the next
/// [`run`](crate::BroadPhasePlugin::run). Layers
/// ([`CollisionLayers`]) apply per collider.
///
/// # Examples
///
/// ```
/// use broadphase_ecs::{Aabb, BroadPhasePlugin, ColliderOf};
/// use glam::Vec3;
///
/// let mut world = hecs::World::new();
/// let ship = world.spawn(()); // a body with no box of its own
/// let hull = world.spawn((Aabb::new(Vec3::ZERO, Vec3::splat(2.0)), ColliderOf(ship)));
/// let wing = world.spawn((Aabb::new(Vec3::ONE, Vec3::splat(3.0)), ColliderOf(ship)));
/// let rock = world.spawn((Aabb::new(Vec3::splat(1.5), Vec3::splat(2.5)),));
///
/// let mut plugin = BroadPhasePlugin::new();
/// plugin.run(&mut world)?;
/// assert_eq!(plugin.pairs(), [(hull, rock), (wing, rock)]); // hull and wing overlap, but never pair
/// assert_eq!(plugin.body_pairs(), [(ship, rock)]); // once per body pair
/// # Ok::<(), broadphase_ecs::PluginError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColliderOf(pub hecs::Entity);
