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
use broadphase_persistent::{PersistentBroadPhase, Proxy, ProxyError, ProxyKind};
use broadphase_storage::Pool;
use hecs::Entity;

/// The largest entity id the plugin accepts (2^24 - 1).
pub const MAX_ENTITY_ID: u32 = (1 << 24) - 1;

/// What the plugin knows of one entity id.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// The entity whose proxy the slot holds, if any.
    owner: Option<Entity>,
    proxy: Proxy,
    kind: ProxyKind,
    layers: CollisionLayers,
    /// The frame in which the entity was last gathered.
    seen: u64,
}

/// Entity ids mapped to proxies, and the handles of last frame's gathered
/// lists (reused while the lists stay the same).
#[derive(Debug, Default)]
pub(crate) struct EntityProxies {
    slots: Pool<Option<Slot>>,
    /// The entity each slot was last given to, by slot: a compact copy of
    /// `slots[..].owner` for publishing, where every pair names live
    /// proxies and a lookup per proxy must stay in cache.
    owners: Pool<Entity>,
    /// Last frame's dynamic entities and their proxies, in gather order.
    dynamic: Pool<Entity>,
    dynamic_handles: Pool<Proxy>,
    static_handles: Pool<Proxy>,
    /// Proxies removed this frame with their entities, by slot: ended
    /// pairs name them.
    departed: Pool<(Proxy, Entity)>,
    frame: u64,
    /// Whether a layer changed this frame.
    pub(crate) layers_changed: bool,
    /// Whether an entity known as static was gathered as dynamic.
    pub(crate) static_turned_dynamic: bool,
    /// Whether a sync inserted a proxy since the compound-body stage last
    /// saw the proxies (it clears this): a sync that fails half way may
    /// have inserted some.
    pub(crate) inserted: bool,
    /// Whether some dynamic entity had a layer component last frame.
    dynamic_had_layers: bool,
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
        self.dynamic_handles.clone_from(&source.dynamic_handles);
        self.static_handles.clone_from(&source.static_handles);
        self.departed.clone_from(&source.departed);
        self.frame = source.frame;
        self.layers_changed = source.layers_changed;
        self.static_turned_dynamic = source.static_turned_dynamic;
        self.inserted = source.inserted;
        self.dynamic_had_layers = source.dynamic_had_layers;
    }
}

/// One gathered set to sync: its entities, kind, and whether it was
/// gathered anew this frame.
pub(crate) struct Batch<'a> {
    pub(crate) set: &'a Gathered,
    pub(crate) kind: ProxyKind,
}

impl EntityProxies {
    /// Brings the broad phase's proxies in line with this frame's
    /// gathered sets: new entities inserted, entities gone removed, kinds
    /// and boxes set. `statics` is `None` when the static entities were
    /// not gathered again (unchanged). A bad box is an error naming its
    /// entity (the broad phase checks every box it is given).
    pub(crate) fn sync(
        &mut self,
        jobs: &JobSystem,
        broad_phase: &mut PersistentBroadPhase,
        dynamic: &Gathered,
        statics: Option<&Gathered>,
    ) -> Result<(), PluginError> {
        self.frame += 1;
        self.departed.reset();
        self.layers_changed = false;
        self.static_turned_dynamic = false;
        for set in core::iter::once(dynamic).chain(statics) {
            if let Some(&entity) = set.entities.iter().find(|e| e.id() > MAX_ENTITY_ID) {
                return Err(PluginError::EntityIdTooLarge { entity });
            }
        }
        let dynamic_same = dynamic.entities == self.dynamic;
        if !dynamic_same {
            self.dynamic_handles.reset();
            self.assign(broad_phase, Batch { set: dynamic, kind: ProxyKind::Dynamic })?;
            self.dynamic.reset();
            self.dynamic.extend_from_slice(&dynamic.entities);
        }
        // Layers are read only where some entity has them now or had
        // them last frame: otherwise every one is `ALL` and stays so.
        if dynamic.has_layers() || self.dynamic_had_layers {
            self.update_layers(dynamic);
        }
        self.dynamic_had_layers = dynamic.has_layers();
        if let Some(statics) = statics {
            self.static_handles.reset();
            self.assign(broad_phase, Batch { set: statics, kind: ProxyKind::Static })?;
            self.update_layers(statics);
        }
        if !dynamic_same || statics.is_some() {
            self.remove_gone(broad_phase, !dynamic_same, statics.is_some())?;
        }
        self.departed.sort_unstable_by_key(|(proxy, _)| *proxy);
        broad_phase
            .set_aabbs(jobs, &self.dynamic_handles, &dynamic.boxes)
            .map_err(|error| set_error(error, &dynamic.entities))?;
        if let Some(statics) = statics {
            broad_phase
                .set_aabbs(jobs, &self.static_handles, &statics.boxes)
                .map_err(|error| set_error(error, &statics.entities))?;
        }
        Ok(())
    }

    /// Finds or makes each entity's proxy, appending the handles.
    fn assign(
        &mut self,
        broad_phase: &mut PersistentBroadPhase,
        batch: Batch<'_>,
    ) -> Result<(), PluginError> {
        let Batch { set, kind } = batch;
        let handles = match kind {
            ProxyKind::Dynamic => &mut self.dynamic_handles,
            ProxyKind::Static => &mut self.static_handles,
        };
        for (i, &entity) in set.entities.iter().enumerate() {
            let id = entity.id() as usize;
            if self.slots.len() <= id {
                self.slots.resize(id + 1, None);
                self.owners.resize(id + 1, Entity::DANGLING);
            }
            let slot = &mut self.slots[id];
            let proxy = match slot {
                Some(known) if known.owner == Some(entity) => {
                    if known.kind != kind {
                        self.static_turned_dynamic |= known.kind == ProxyKind::Static;
                        broad_phase.set_kind(known.proxy, kind).map_err(proxy_error)?;
                        known.kind = kind;
                    }
                    known.proxy
                }
                _ => {
                    if let Some(Slot { owner: Some(old), proxy, .. }) = *slot {
                        broad_phase.remove(proxy).map_err(proxy_error)?;
                        self.departed.push((proxy, old));
                    }
                    let proxy = broad_phase
                        .insert_at(entity.id(), set.boxes[i], kind)
                        .map_err(|error| set_error(error, &[entity]))?;
                    self.owners[id] = entity;
                    self.inserted = true;
                    *slot = Some(Slot {
                        owner: Some(entity),
                        proxy,
                        kind,
                        layers: set.layers(i),
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
    fn update_layers(&mut self, set: &Gathered) {
        for (i, entity) in set.entities.iter().enumerate() {
            if let Some(known) = &mut self.slots[entity.id() as usize] {
                let layers = set.layers(i);
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
        dynamic_gathered: bool,
        statics_gathered: bool,
    ) -> Result<(), PluginError> {
        for slot in &mut self.slots {
            let Some(known) = slot else { continue };
            let Some(owner) = known.owner else { continue };
            let gathered = match known.kind {
                ProxyKind::Dynamic => dynamic_gathered,
                ProxyKind::Static => statics_gathered,
            };
            if gathered && known.seen != self.frame {
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
        self.slots[proxy.index() as usize].is_some_and(|known| known.kind == ProxyKind::Static)
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
