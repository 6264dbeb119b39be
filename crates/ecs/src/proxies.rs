//! Entities as proxies of the persistent broad phase: each entity with a
//! box keeps one proxy, in the slot numbered by its entity id, for as
//! long as it has a box.
//!
//! Slots by entity id make the broad phase's pair lists, which are sorted
//! by slot, come out sorted by `Entity` (id first) with no sort at all.
//! hecs hands out ids densely from 0 and reuses freed ones, so the slots
//! stay about as many as the entities; an id past [`MAX_ENTITY_ID`] (only
//! `World::spawn_at` makes those) is an error rather than a huge table.

use crate::gather::Gathered;
use crate::{CollisionLayers, PluginError};
use broadphase_jobs::JobSystem;
use broadphase_persistent::{AabbSource, PersistentBroadPhase, Proxy, ProxyError, ProxyKind};
use broadphase_storage::Pool;
use core::sync::atomic::{AtomicBool, Ordering};
use hecs::Entity;

/// The largest entity id the plugin accepts (2^24 - 1).
pub const MAX_ENTITY_ID: u32 = (1 << 24) - 1;

/// Entities compared per job at least, when the dynamic set is compared
/// with last frame's.
const COMPARE_CHUNK: usize = 64 * 1024;

/// The gathered set an entity belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) enum Set {
    /// Read every run.
    Dynamic = 0,
    /// [`Sleeping`](crate::Sleeping): read when the sleeping set changes.
    Sleeping = 1,
    /// [`Static`](crate::Static): read when the static set changes.
    Static = 2,
}

impl Set {
    /// The kind of proxy the set's entities have: sleeping entities stay
    /// dynamic proxies, marked asleep, so their pairs with each other are
    /// kept (aside, in the broad phase's resting tier).
    fn proxy_kind(self) -> ProxyKind {
        match self {
            Set::Static => ProxyKind::Static,
            Set::Dynamic | Set::Sleeping => ProxyKind::Dynamic,
        }
    }
}

/// The three sets' values of something, indexed by [`Set`].
pub(crate) type PerSet<T> = [T; 3];

/// What the plugin knows of one entity id.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct Slot {
    /// The entity whose proxy the slot holds, if any.
    owner: Option<Entity>,
    proxy: Proxy,
    set: Set,
    layers: CollisionLayers,
    /// The frame in which the entity was last gathered.
    seen: u64,
}

/// Entity ids mapped to proxies, and the handles of last frame's gathered
/// lists (reused while the lists stay the same).
#[derive(Debug, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct EntityProxies {
    slots: Pool<Option<Slot>>,
    /// The entity each slot was last given to, by slot: a compact copy of
    /// `slots[..].owner` for publishing, where every pair names live
    /// proxies and a lookup per proxy must stay in cache.
    owners: Pool<Entity>,
    /// Last frame's dynamic entities, in gather order.
    dynamic: Pool<Entity>,
    /// Each set's proxies, in the order of its last gather.
    handles: PerSet<Pool<Proxy>>,
    /// Proxies removed this frame with their entities, by slot: ended
    /// pairs name them.
    departed: Pool<(Proxy, Entity)>,
    frame: u64,
    /// Whether a layer changed this frame.
    pub(crate) layers_changed: bool,
    /// Per kept set (sleeping, static): whether an entity known in it was
    /// gathered in another set while it was not gathered again, so that
    /// its gathered list is stale.
    pub(crate) left: PerSet<bool>,
    /// Whether a sync inserted a proxy since the compound-body stage last
    /// saw the proxies (it clears this): a sync that fails half way may
    /// have inserted some.
    pub(crate) inserted: bool,
    /// Whether some dynamic entity had a layer component last frame.
    dynamic_had_layers: bool,
    /// Whether the last sync stopped at an error: its handle lists may
    /// be half made, so the next one assigns every dynamic entity again.
    interrupted: bool,
}

/// A snapshot's copy: `clone_from` copies into the tables already there.
impl Clone for EntityProxies {
    fn clone(&self) -> Self {
        let mut copy = Self::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.slots.clone_from(&source.slots);
        self.owners.clone_from(&source.owners);
        self.dynamic.clone_from(&source.dynamic);
        for (handles, source) in self.handles.iter_mut().zip(&source.handles) {
            handles.clone_from(source);
        }
        self.departed.clone_from(&source.departed);
        self.frame = source.frame;
        self.layers_changed = source.layers_changed;
        self.left = source.left;
        self.inserted = source.inserted;
        self.dynamic_had_layers = source.dynamic_had_layers;
        self.interrupted = source.interrupted;
    }
}

/// This frame's gathered sets, for [`EntityProxies::sync`].
pub(crate) struct Sets<'a, S: ?Sized> {
    pub(crate) dynamic: &'a Gathered,
    /// Whether the dynamic entities are the same as last frame's (see
    /// [`EntityProxies::dynamic_unchanged`]).
    pub(crate) dynamic_same: bool,
    /// The dynamic boxes, made from the world as they are set, when the
    /// dynamic entities are the same (their boxes were then not
    /// gathered); `None` sets the gathered boxes.
    pub(crate) dynamic_boxes: Option<&'a S>,
    /// `None` where the set was not gathered again (unchanged).
    pub(crate) sleeping: Option<&'a Gathered>,
    pub(crate) statics: Option<&'a Gathered>,
}

impl EntityProxies {
    /// Starts a run: what the run's syncs (one, or more when a kept set
    /// turns out stale) find out adds up until the next run.
    pub(crate) fn begin_run(&mut self) {
        self.departed.reset();
        self.layers_changed = false;
    }

    /// Whether `dynamic` lists the same entities as last frame's dynamic
    /// set, and the last sync finished (an interrupted one may have left
    /// its handle lists half made). Compared in pieces on all threads of
    /// `jobs`: at a million entities one thread took 1.8 ms. A job that
    /// failed (none can: a compare does not panic) counts as a change, so
    /// the set is assigned anew.
    pub(crate) fn dynamic_unchanged(&self, jobs: &JobSystem, dynamic: &Gathered) -> bool {
        let (now, last) = (&dynamic.entities[..], &self.dynamic[..]);
        if self.interrupted || now.len() != last.len() {
            return false;
        }
        let differs = AtomicBool::new(false);
        let compared = jobs.for_each(now.len(), COMPARE_CHUNK, |range, _| {
            // The entities' bits folded without a branch, which vectorizes
            // (a slice `!=` of entities compares them one at a time).
            let (now, last) = (&now[range.clone()], &last[range]);
            let any = now
                .iter()
                .zip(last)
                .fold(0u64, |any, (a, b)| any | (a.to_bits().get() ^ b.to_bits().get()));
            if any != 0 {
                differs.store(true, Ordering::Relaxed);
            }
        });
        compared.is_ok() && !differs.into_inner()
    }

    /// Brings the broad phase's proxies in line with this frame's
    /// gathered sets: new entities inserted, entities gone removed, kinds
    /// and boxes set. A bad box is an error naming its entity (the broad
    /// phase checks every box it is given).
    pub(crate) fn sync<S: AabbSource + ?Sized>(
        &mut self,
        jobs: &JobSystem,
        broad_phase: &mut PersistentBroadPhase,
        sets: Sets<'_, S>,
    ) -> Result<(), PluginError> {
        let Sets { dynamic, dynamic_same, dynamic_boxes, sleeping, statics } = sets;
        debug_assert!(dynamic_same || dynamic_boxes.is_none(), "a changed set is gathered");
        self.frame += 1;
        self.left = [false; 3];
        // The same dynamic entities as at the last finished sync passed
        // this check then.
        let checked_dynamic = (!dynamic_same).then_some(dynamic);
        for set in [checked_dynamic, sleeping, statics].into_iter().flatten() {
            if let Some(&entity) = set.entities.iter().find(|e| e.id() > MAX_ENTITY_ID) {
                return Err(PluginError::EntityIdTooLarge { entity });
            }
        }
        self.interrupted = true;
        // Set before anything can fail: an entity inserted below takes its
        // layers from the set, and a later run must read them again even
        // if this one stops at a bad box.
        self.dynamic_had_layers |= dynamic.has_layers();
        if !dynamic_same {
            self.assign(broad_phase, dynamic, Set::Dynamic)?;
            self.dynamic.reset();
            self.dynamic.extend_from_slice(&dynamic.entities);
        }
        // Layers are read only where some entity has them now or had
        // them last frame: otherwise every one is `ALL` and stays so.
        if dynamic.has_layers() || self.dynamic_had_layers {
            self.update_layers(dynamic);
        }
        self.dynamic_had_layers = dynamic.has_layers();
        for (set, gathered) in [(Set::Sleeping, sleeping), (Set::Static, statics)] {
            if let Some(gathered) = gathered {
                self.assign(broad_phase, gathered, set)?;
                self.update_layers(gathered);
            }
        }
        let gathered = [!dynamic_same, sleeping.is_some(), statics.is_some()];
        if gathered.contains(&true) {
            self.remove_gone(broad_phase, gathered)?;
        }
        self.departed.sort_unstable_by_key(|(proxy, _)| *proxy);
        let boxes = [Some(dynamic), sleeping, statics];
        for (k, (handles, set)) in self.handles.iter().zip(boxes).enumerate() {
            let Some(set) = set else { continue };
            // The dynamic boxes are set every run; the others only when
            // gathered again, and then only the changed ones re-index.
            match dynamic_boxes {
                Some(made) if k == Set::Dynamic as usize => {
                    broad_phase.set_aabbs_from(jobs, handles, made)
                }
                _ => broad_phase.set_aabbs(jobs, handles, &set.boxes),
            }
            .map_err(|error| set_error(error, &set.entities))?;
        }
        self.interrupted = false;
        Ok(())
    }

    /// Finds or makes each entity's proxy, appending the handles.
    fn assign(
        &mut self,
        broad_phase: &mut PersistentBroadPhase,
        gathered: &Gathered,
        set: Set,
    ) -> Result<(), PluginError> {
        let handles = &mut self.handles[set as usize];
        handles.reset();
        let kind = set.proxy_kind();
        for (i, &entity) in gathered.entities.iter().enumerate() {
            let id = entity.id() as usize;
            if self.slots.len() <= id {
                self.slots.resize(id + 1, None);
                self.owners.resize(id + 1, Entity::DANGLING);
            }
            let slot = &mut self.slots[id];
            let proxy = match slot {
                Some(known) if known.owner == Some(entity) => {
                    if known.set != set {
                        self.left[known.set as usize] = true;
                        if known.set.proxy_kind() != kind {
                            broad_phase.set_kind(known.proxy, kind).map_err(proxy_error)?;
                        }
                        let asleep = set == Set::Sleeping;
                        broad_phase.set_asleep(known.proxy, asleep).map_err(proxy_error)?;
                        known.set = set;
                        // Its new set's layers are read only where that set
                        // has layers: it may have none, and it must not
                        // keep the layers of the set it left.
                        let layers = gathered.layers(i);
                        self.layers_changed |= known.layers != layers;
                        known.layers = layers;
                    }
                    known.proxy
                }
                _ => {
                    if let Some(Slot { owner: Some(old), proxy, .. }) = *slot {
                        broad_phase.remove(proxy).map_err(proxy_error)?;
                        self.departed.push((proxy, old));
                        // The insert below may fail on a bad box: the slot
                        // must not name the removed proxy on the next run.
                        if let Some(known) = slot {
                            known.owner = None;
                        }
                    }
                    let proxy = broad_phase
                        .insert_at(entity.id(), gathered.boxes[i], kind)
                        .map_err(|error| set_error(error, &[entity]))?;
                    if set == Set::Sleeping {
                        // Its pairs with other resting proxies are kept
                        // aside from the next update on.
                        broad_phase.set_asleep(proxy, true).map_err(proxy_error)?;
                    }
                    self.owners[id] = entity;
                    self.inserted = true;
                    *slot = Some(Slot {
                        owner: Some(entity),
                        proxy,
                        set,
                        layers: gathered.layers(i),
                        seen: 0,
                    });
                    proxy
                }
            };
            if let Some(known) = slot {
                known.seen = self.frame;
            }
            handles.push(proxy);
        }
        Ok(())
    }

    /// Stores each entity's layers, noting whether one changed.
    fn update_layers(&mut self, gathered: &Gathered) {
        for (i, entity) in gathered.entities.iter().enumerate() {
            if let Some(known) = &mut self.slots[entity.id() as usize] {
                let layers = gathered.layers(i);
                self.layers_changed |= known.layers != layers;
                known.layers = layers;
            }
        }
    }

    /// Removes the proxy of every entity not gathered this frame in a set
    /// that was gathered anew.
    fn remove_gone(
        &mut self,
        broad_phase: &mut PersistentBroadPhase,
        gathered: PerSet<bool>,
    ) -> Result<(), PluginError> {
        for slot in &mut self.slots {
            let Some(known) = slot else { continue };
            let Some(owner) = known.owner else { continue };
            if gathered[known.set as usize] && known.seen != self.frame {
                broad_phase.remove(known.proxy).map_err(proxy_error)?;
                self.departed.push((known.proxy, owner));
                known.owner = None;
            }
        }
        Ok(())
    }

    /// The entity a proxy of the last update belongs or belonged to.
    #[inline]
    pub(crate) fn entity(&self, proxy: Proxy) -> Entity {
        match &self.slots[proxy.index() as usize] {
            Some(Slot { owner: Some(owner), proxy: current, .. }) if *current == proxy => *owner,
            _ => {
                let at = self.departed.partition_point(|(p, _)| *p < proxy);
                self.departed[at].1
            }
        }
    }

    /// Asks for what [`entity`](Self::entity) reads of `proxy` (its
    /// slot), ahead of the read.
    #[inline]
    pub(crate) fn prefetch_entity(&self, proxy: Proxy) {
        broadphase_storage::prefetch(self.slots.as_ptr().wrapping_add(proxy.index() as usize));
    }

    /// The live proxy in slot `id` (the entity id), if any.
    #[inline]
    pub(crate) fn live_proxy(&self, id: u32) -> Option<Proxy> {
        match self.slots.get(id as usize) {
            Some(Some(Slot { owner: Some(_), proxy, .. })) => Some(*proxy),
            _ => None,
        }
    }

    /// The entity of a live proxy (one the last sync inserted or kept).
    #[inline]
    pub(crate) fn live_entity(&self, proxy: Proxy) -> Entity {
        self.owners[proxy.index() as usize]
    }

    /// The entity of each slot's live proxy, by slot (its entity id):
    /// one entry per entity id that has had a slot, so every live proxy's
    /// index is below its length.
    pub(crate) fn live_entities(&self) -> &[Entity] {
        &self.owners
    }

    /// The layers of a live proxy's entity.
    #[inline]
    pub(crate) fn layers(&self, proxy: Proxy) -> CollisionLayers {
        self.slots[proxy.index() as usize].map_or(CollisionLayers::ALL, |known| known.layers)
    }

    /// Whether the proxy is static.
    #[inline]
    pub(crate) fn is_static(&self, proxy: Proxy) -> bool {
        self.slots[proxy.index() as usize].is_some_and(|known| known.set == Set::Static)
    }
}

/// A call's error naming its entity: a bad box at `index` of a call
/// whose boxes belong to `entities`.
fn set_error(error: ProxyError, entities: &[Entity]) -> PluginError {
    match error {
        ProxyError::Input(error) => PluginError::from_input(error, entities),
        other => proxy_error(other),
    }
}

/// The broad phase's errors as the plugin's; handles come from the
/// plugin's own table, so only bad boxes (see [`set_error`]) and a failed
/// update's causes can really occur.
pub(crate) fn proxy_error(error: ProxyError) -> PluginError {
    match error {
        ProxyError::Partition(broadphase_partition::PartitionError::Job(e)) => PluginError::Job(e),
        other => PluginError::Proxy(other),
    }
}

/// Checks of a table read from bytes (see `serialize.rs`).
#[cfg(feature = "serde")]
impl EntityProxies {
    /// Whether the table holds the invariants a restore and the runs
    /// after it rely on: an owner per entity id, each known entity at its
    /// own id with the proxy of that slot (the plugin inserts each
    /// entity's proxy at its id) and owning it, handle lists that name
    /// known ids, departed proxies sorted (they are looked up by binary
    /// search), and no more slots than the broad phase's snapshot could
    /// have had proxies (ids up to [`MAX_ENTITY_ID`]).
    pub(crate) fn check(
        &self,
        broad_phase: &broadphase_persistent::BroadPhaseSnapshot,
    ) -> Result<(), &'static str> {
        let n = self.slots.len();
        if self.owners.len() != n || n > MAX_ENTITY_ID as usize + 1 {
            return Err("the entity table's owners and slots differ in length");
        }
        for (id, slot) in self.slots.iter().enumerate() {
            let Some(known) = slot else { continue };
            if known.proxy.index() as usize != id {
                return Err("the entity table holds a proxy at another id");
            }
            if let Some(owner) = known.owner
                && (owner.id() as usize != id || self.owners[id] != owner)
            {
                return Err("the entity table holds an entity at another id");
            }
        }
        // A run trusts the ids of an unchanged dynamic list.
        if self.dynamic.iter().any(|entity| entity.id() > MAX_ENTITY_ID) {
            return Err("the entity table's dynamic list names an id past MAX_ENTITY_ID");
        }
        let known = |proxy: &Proxy| (proxy.index() as usize) < n;
        if !self.handles.iter().all(|list| list.iter().all(known)) {
            return Err("the entity table's handle lists name unknown ids");
        }
        if !self.departed.iter().all(|(proxy, _)| known(proxy))
            || !self.departed.windows(2).all(|w| w[0].0 < w[1].0)
        {
            return Err("the entity table's departed list is out of range or order");
        }
        if self.owned() < broad_phase.len() {
            return Err("the entity table knows fewer entities than the broad phase has proxies");
        }
        Ok(())
    }

    /// Slots with an owner.
    fn owned(&self) -> usize {
        self.slots.iter().filter(|slot| slot.is_some_and(|known| known.owner.is_some())).count()
    }
}
