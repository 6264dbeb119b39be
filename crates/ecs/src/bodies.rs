//! Compound bodies: colliders tied to a body by [`ColliderOf`], kept apart
//! inside the broad phase, and their pairs reduced to body pairs.
//!
//! Exclusion happens where candidate pairs are made: every collider of a
//! body, and the body's own box if it has one, gets the broad phase group
//! `body id + 1` (ids are unique among live entities, so two bodies never
//! share a group), and the broad phase never pairs two proxies of one
//! group. Entities outside any compound body keep group 0, no group.
//!
//! Each run reads every `ColliderOf` (one query, and a few array reads
//! per link to check its body) before anything changes, so a bad link fails the
//! run with nothing touched. After the proxies are synced, the groups of
//! the entity ids linked this run or the last are set again (a set to the
//! same group costs a lookup and nothing else): that covers re-parenting,
//! new proxies, and colliders that left their body.
//!
//! Body pairs come from the published collider pairs: each is mapped to
//! its two bodies, counting-sorted into one bucket per first body, and
//! repeats within a bucket are dropped with [`FastUniqueSets`] (a set per
//! first body, of second bodies); each bucket, then holding each body
//! pair once, is sorted by its second body (buckets are short: a body's
//! partner bodies). Body events are the difference from the last run's
//! body pairs. With no `ColliderOf` in the world this run or the last,
//! none of this runs and the body lists are the collider lists.

use crate::events::diff;
use crate::proxies::{EntityProxies, MAX_ENTITY_ID, proxy_error};
use crate::{BroadPhasePlugin, ColliderOf, PluginError, Position};
use broadphase_persistent::PersistentBroadPhase;
use broadphase_storage::{FastUniqueSets, Pool};
use hecs::{Entity, World};

/// What the body lists of the next runs depend on: the links as last
/// applied, and the published body lists (what a snapshot copies).
#[derive(Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct BodyState {
    /// By entity id: the body of a linked collider; `Entity::DANGLING`
    /// for an entity that is its own body.
    body_of: Pool<Entity>,
    /// By entity id: the group its proxy has (0: none).
    group_of: Pool<u32>,
    /// The ids whose entries in `body_of` or `group_of` are set, each once.
    linked: Pool<u32>,
    /// Whether the links applied last had any link.
    active: bool,
    /// Whether the last published body lists had links, or followed a
    /// run that had (then they are the lists below, not the collider lists).
    own: bool,
    /// Whether the last published run had links.
    published_active: bool,
    /// Counts the times the tables were built: the links' version.
    version: u64,
    /// The links' version the published body pairs were reduced under.
    published_version: u64,
    pub(crate) pairs: Pool<(Entity, Entity)>,
    pub(crate) started: Pool<(Entity, Entity)>,
    pub(crate) ended: Pool<(Entity, Entity)>,
}

/// A snapshot's copy, into the buffers already there.
impl Clone for BodyState {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.body_of.clone_from(&source.body_of);
        self.group_of.clone_from(&source.group_of);
        self.linked.clone_from(&source.linked);
        self.active = source.active;
        self.own = source.own;
        self.published_active = source.published_active;
        self.version = source.version;
        self.published_version = source.published_version;
        self.pairs.clone_from(&source.pairs);
        self.started.clone_from(&source.started);
        self.ended.clone_from(&source.ended);
    }
}

/// The compound-body stage of the plugin: its state and its scratch.
#[derive(Debug, Default)]
pub(crate) struct Bodies {
    pub(crate) state: BodyState,
    /// This run's links, `(collider, body)`, checked, in the world's order.
    links: Pool<(Entity, Entity)>,
    /// Whether `links` waits to be applied by [`apply`](Self::apply).
    pending: bool,
    /// The links the tables hold, as `links` listed them.
    applied: Pool<(Entity, Entity)>,
    /// The tables must be built again whatever the links (after a
    /// restore, which does not keep `applied`).
    stale: bool,
    /// By entity id, while links are checked: the collider at that id
    /// (`Entity::DANGLING` otherwise).
    colliders: Pool<Entity>,
    /// The ids whose groups the last [`apply`](Self::apply) may have
    /// changed: those linked before it and after it.
    dirty: Pool<u32>,
    /// The run's body pairs being built; after it, the last run's.
    next: Pool<(Entity, Entity)>,
    /// Each collider pair's body pair, `(lo, hi)`.
    mapped: Pool<(Entity, Entity)>,
    /// Per first body id: its bucket's start (a counting sort).
    starts: Pool<u32>,
    bucketed: Pool<(Entity, Entity)>,
    unique: FastUniqueSets,
}

impl Bodies {
    /// Reads and checks this run's links; changes nothing else. A world
    /// with no `ColliderOf` costs one look at each archetype.
    pub(crate) fn prepare(&mut self, world: &mut World) -> Result<(), PluginError> {
        self.links.reset();
        self.pending = false;
        if world.archetypes().any(|a| !a.is_empty() && a.has::<ColliderOf>()) {
            let links = &mut self.links;
            world
                .query_mut::<(Entity, &ColliderOf)>()
                .into_iter()
                .for_each(|(collider, &ColliderOf(body))| _ = links.push((collider, body)));
            self.check(world)?;
        }
        self.pending = true;
        Ok(())
    }

    /// Checks every link: ids in range, a live body that is not itself a
    /// collider of another body. The colliders are marked in a table by
    /// id first, so a link costs two array reads and one look at the
    /// world's entity list, not a component lookup.
    fn check(&mut self, world: &World) -> Result<(), PluginError> {
        let Bodies { links, colliders, .. } = self;
        for &(collider, body) in links.iter() {
            for entity in [collider, body] {
                if entity.id() > MAX_ENTITY_ID {
                    return Err(PluginError::EntityIdTooLarge { entity });
                }
            }
            if collider != body {
                let id = collider.id() as usize;
                if colliders.len() <= id {
                    colliders.resize(id + 1, Entity::DANGLING);
                }
                colliders[id] = collider;
            }
        }
        let nested = |body: Entity| colliders.get(body.id() as usize) == Some(&body);
        let bad = links.iter().find_map(|&(collider, body)| {
            if collider == body {
                None
            } else if !world.contains(body) {
                Some(PluginError::DeadBody { collider, body })
            } else if nested(body) {
                Some(PluginError::NestedBody { collider, body })
            } else {
                None
            }
        });
        for &(collider, _) in links.iter() {
            if let Some(mark) = colliders.get_mut(collider.id() as usize) {
                *mark = Entity::DANGLING;
            }
        }
        bad.map_or(Ok(()), Err)
    }

    /// Makes this run's links (from [`prepare`](Self::prepare)) the
    /// current ones, once per run, then sets the group of every proxy
    /// whose entity id was linked before or is now, and when the sync
    /// inserted proxies, of every linked one. Called after each sync of
    /// the proxies, so a proxy inserted by it gets its group. Links the
    /// same as the last run's, in the same order, and no new proxy cost
    /// one comparison of the lists.
    pub(crate) fn apply(
        &mut self,
        broad_phase: &mut PersistentBroadPhase,
        proxies: &EntityProxies,
    ) -> Result<(), PluginError> {
        if self.pending {
            self.pending = false;
            if self.stale || self.links != self.applied {
                self.stale = false;
                self.relink();
                std::mem::swap(&mut self.links, &mut self.applied);
            } else {
                self.dirty.reset();
            }
        }
        let linked: &[u32] = if proxies.inserted { &self.state.linked } else { &[] };
        for &id in self.dirty.iter().chain(linked) {
            if let Some(proxy) = proxies.live_proxy(id) {
                let group = self.state.group_of[id as usize];
                broad_phase.set_group(proxy, group).map_err(proxy_error)?;
            }
        }
        Ok(())
    }

    /// Replaces the tables' links with this run's.
    fn relink(&mut self) {
        let BodyState { body_of, group_of, linked, active, .. } = &mut self.state;
        self.dirty.reset();
        for &id in linked.iter() {
            body_of[id as usize] = Entity::DANGLING;
            group_of[id as usize] = 0;
        }
        self.dirty.extend_from_slice(linked);
        linked.reset();
        for &(collider, body) in self.links.iter() {
            let bound = collider.id().max(body.id()) as usize + 1;
            if body_of.len() < bound {
                body_of.resize(bound, Entity::DANGLING);
                group_of.resize(bound, 0);
            }
            // Ids are at most `MAX_ENTITY_ID` (checked): no overflow.
            let group = body.id() + 1;
            if group_of[body.id() as usize] == 0 {
                group_of[body.id() as usize] = group;
                linked.push(body.id());
            }
            if collider != body {
                body_of[collider.id() as usize] = body;
                group_of[collider.id() as usize] = group;
                linked.push(collider.id());
            }
        }
        self.dirty.extend_from_slice(linked);
        *active = !self.links.is_empty();
        self.state.version = self.state.version.wrapping_add(1);
    }

    /// Publishes the body lists of a run whose collider pairs are `pairs`
    /// (sorted, layers applied) and whose last published ones were
    /// `last_pairs`; `ids` bounds every entity id of `pairs`. `same`: the
    /// run started and ended no collider pair, so `pairs` is `last_pairs`.
    pub(crate) fn publish(
        &mut self,
        pairs: &[(Entity, Entity)],
        last_pairs: &[(Entity, Entity)],
        ids: usize,
        same: bool,
    ) {
        let state = &mut self.state;
        let active = state.active;
        if !active && !state.published_active {
            // No body in play: the body lists are the collider lists.
            state.own = false;
            return;
        }
        if same && state.own && state.published_active && state.published_version == state.version {
            // The same collider pairs under the same links: the same body
            // pairs (a world at rest costs nothing more here).
            state.started.reset();
            state.ended.reset();
            return;
        }
        crate::profile::zone!("bodies");
        if active {
            self.reduce(pairs, ids);
        } else {
            // The run after the last link went: every body is its own.
            self.next.reset();
            self.next.extend_from_slice(pairs);
        }
        let state = &mut self.state;
        let prev = if state.own { &state.pairs[..] } else { last_pairs };
        diff(prev, &self.next, &mut state.started, &mut state.ended);
        std::mem::swap(&mut state.pairs, &mut self.next);
        state.own = true;
        state.published_active = active;
        state.published_version = state.version;
    }

    /// The body pairs of `pairs` into `next`: each once, `(a, b)` with
    /// `a < b`, sorted.
    fn reduce(&mut self, pairs: &[(Entity, Entity)], ids: usize) {
        let Bodies { state, next, mapped, starts, bucketed, unique, .. } = self;
        let body_of = &state.body_of;
        let body = |e: Entity| match body_of.get(e.id() as usize) {
            Some(&body) if body != Entity::DANGLING => body,
            _ => e,
        };
        let ids = ids.max(body_of.len());
        // Counting sort by first body: counts, then starts.
        starts.reset();
        starts.resize(ids + 1, 0);
        mapped.reset();
        for &(a, b) in pairs {
            let (x, y) = (body(a), body(b));
            // Colliders of one body share a group: the broad phase never
            // pairs them.
            debug_assert_ne!(x, y, "a pair within one body");
            let pair = if x < y { (x, y) } else { (y, x) };
            mapped.push(pair);
            starts[pair.0.id() as usize + 1] += 1;
        }
        let mut total = 0;
        for start in starts.iter_mut() {
            total += *start;
            *start = total;
        }
        bucketed.truncate(mapped.len());
        bucketed.resize(mapped.len(), (Entity::DANGLING, Entity::DANGLING));
        for &pair in mapped.iter() {
            let at = &mut starts[pair.0.id() as usize];
            bucketed[*at as usize] = pair;
            *at += 1;
        }
        // Buckets in first-body order; repeats dropped per first body.
        unique.reset(ids);
        next.reset();
        let mut bucket = 0;
        for (k, &(lo, hi)) in bucketed.iter().enumerate() {
            if k > 0 && bucketed[k - 1].0 != lo {
                next[bucket..].sort_unstable_by_key(|&(_, hi)| hi);
                bucket = next.len();
            }
            if unique.insert(lo.id(), hi.id()) {
                next.push((lo, hi));
            }
        }
        next[bucket..].sort_unstable_by_key(|&(_, hi)| hi);
    }

    /// Whether links are in play this run or were at the last publish:
    /// then [`publish`](Self::publish) reads the collider pairs.
    pub(crate) fn in_play(&self) -> bool {
        self.state.active || self.state.published_active
    }

    /// Whether the last published body lists are the plugin's own (not
    /// the collider lists).
    pub(crate) fn own(&self) -> bool {
        self.state.own
    }

    /// Makes `state` (from a snapshot) the current state; this run's
    /// pending links, if any, are dropped.
    pub(crate) fn restore(&mut self, state: &BodyState) {
        self.state.clone_from(state);
        self.pending = false;
        self.stale = true;
        self.dirty.reset();
    }
}

impl<P: Position> BroadPhasePlugin<P> {
    /// Every pair of bodies with touching colliders as of the last
    /// successful run: each body pair once, `(a, b)` with `a < b`, sorted.
    /// A collider's body is the entity its [`ColliderOf`](crate::ColliderOf)
    /// names, or the collider itself without one; each pair of
    /// [`pairs`](Self::pairs) (layers already applied, per collider) is
    /// mapped to its two bodies, and repeats are dropped.
    ///
    /// When no entity had a `ColliderOf` in the last run nor the one
    /// before, every entity is its own body and this is
    /// [`pairs`](Self::pairs) itself, the same slice, at no cost.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, ColliderOf};
    /// use glam::Vec3;
    /// let unit = |x: f32| Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0));
    /// let mut world = hecs::World::new();
    /// let cart = world.spawn((unit(0.0),)); // a body with a box of its own
    /// let wheel = world.spawn((unit(0.5), ColliderOf(cart)));
    /// let wall = world.spawn((unit(0.75),));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.pairs(), [(cart, wall), (wheel, wall)]); // cart and wheel never pair
    /// assert_eq!(plugin.body_pairs(), [(cart, wall)]);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn body_pairs(&self) -> &[(Entity, Entity)] {
        if self.bodies.own() { &self.bodies.state.pairs } else { self.pairs() }
    }

    /// The body pairs of the last successful run that were not body pairs
    /// in the run before it, sorted as [`body_pairs`](Self::body_pairs):
    /// a body pair starts when the first pair of its colliders does. With
    /// no `ColliderOf` in play (see [`body_pairs`](Self::body_pairs)),
    /// [`started`](Self::started) itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, ColliderOf};
    /// use glam::Vec3;
    /// let unit = |x: f32| Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0));
    /// let mut world = hecs::World::new();
    /// let ship = world.spawn(());
    /// let bow = world.spawn((unit(0.0), ColliderOf(ship)));
    /// let stern = world.spawn((unit(-1.0), ColliderOf(ship)));
    /// let buoy = world.spawn((unit(5.0),));
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    /// assert!(plugin.body_started().is_empty());
    ///
    /// *world.get::<&mut Aabb>(buoy).unwrap() = unit(-0.5); // touches both parts
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.started(), [(bow, buoy), (stern, buoy)]);
    /// assert_eq!(plugin.body_started(), [(ship, buoy)]); // once
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn body_started(&self) -> &[(Entity, Entity)] {
        if self.bodies.own() { &self.bodies.state.started } else { &self.started }
    }

    /// The body pairs of the run before the last successful one that are
    /// no longer body pairs, sorted as [`body_pairs`](Self::body_pairs):
    /// a body pair ends when the last pair of its colliders does, or a
    /// body is despawned, or its colliders leave it. With no `ColliderOf`
    /// in play (see [`body_pairs`](Self::body_pairs)),
    /// [`ended`](Self::ended) itself.
    ///
    /// # Examples
    ///
    /// ```
    /// use broadphase_ecs::{Aabb, BroadPhasePlugin, ColliderOf};
    /// use glam::Vec3;
    /// let unit = |x: f32| Aabb::new(Vec3::new(x, 0.0, 0.0), Vec3::new(x + 1.0, 1.0, 1.0));
    /// let mut world = hecs::World::new();
    /// let ship = world.spawn(());
    /// let bow = world.spawn((unit(0.0), ColliderOf(ship)));
    /// let stern = world.spawn((unit(-1.0), ColliderOf(ship)));
    /// let buoy = world.spawn((unit(-0.5),)); // touches both parts
    /// let mut plugin = BroadPhasePlugin::new();
    /// plugin.run(&mut world)?;
    ///
    /// *world.get::<&mut Aabb>(buoy).unwrap() = unit(0.5); // leaves the stern
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.ended(), [(stern, buoy)]);
    /// assert!(plugin.body_ended().is_empty()); // the bow still touches it
    ///
    /// *world.get::<&mut Aabb>(buoy).unwrap() = unit(5.0);
    /// plugin.run(&mut world)?;
    /// assert_eq!(plugin.body_ended(), [(ship, buoy)]);
    /// # Ok::<(), broadphase_ecs::PluginError>(())
    /// ```
    pub fn body_ended(&self) -> &[(Entity, Entity)] {
        if self.bodies.own() { &self.bodies.state.ended } else { &self.ended }
    }
}
