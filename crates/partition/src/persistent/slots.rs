//! Proxy slots: stable handles over structure-of-arrays storage.
//!
//! A slot is reused only after the update that ends the pairs of the proxy
//! it held, and each reuse bumps its generation, so a handle to a removed
//! proxy never names its successor.

use broadphase_storage::Aabb;
use glam::Vec3;

/// A stable handle to one proxy of a
/// [`PersistentBroadPhase`](super::PersistentBroadPhase): its slot and the
/// slot's generation when it was inserted.
///
/// Handles order by slot first, which is the order of every pair list.
///
/// # Examples
///
/// ```
/// use broadphase_partition::{PersistentBroadPhase, ProxyKind};
/// use broadphase_storage::Aabb;
/// let mut world = PersistentBroadPhase::default();
/// let a = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
/// let b = world.insert(Aabb::default(), ProxyKind::Dynamic)?;
/// assert!(a < b);
/// assert_eq!((a.index(), a.generation()), (0, 0));
/// # Ok::<(), broadphase_partition::ProxyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Proxy {
    index: u32,
    generation: u32,
}

impl Proxy {
    /// The proxy's slot: dense from 0, reused after removal.
    pub fn index(self) -> u32 {
        self.index
    }

    /// How many proxies held this slot before this one.
    pub fn generation(self) -> u32 {
        self.generation
    }
}

/// Whether a proxy moves.
///
/// # Examples
///
/// ```
/// use broadphase_partition::{PersistentBroadPhase, ProxyKind};
/// use broadphase_storage::Aabb;
/// let mut world = PersistentBroadPhase::default();
/// let wall = world.insert(Aabb::default(), ProxyKind::Static)?;
/// assert_eq!(world.kind(wall)?, ProxyKind::Static);
/// # Ok::<(), broadphase_partition::ProxyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProxyKind {
    /// Moves: indexed by an enlarged box, so small moves cost nothing.
    Dynamic,
    /// Does not move (a wall, the ground): indexed by its own box, never
    /// re-examined unless changed, and never paired with another static
    /// proxy.
    Static,
}

/// What a slot holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SlotState {
    Free,
    Dynamic,
    Static,
    /// Removed since the last update: its pairs end at the next one, which
    /// frees the slot.
    Removed,
}

impl SlotState {
    #[inline]
    pub(crate) fn is_live(self) -> bool {
        matches!(self, SlotState::Dynamic | SlotState::Static)
    }

    fn of(kind: ProxyKind) -> SlotState {
        match kind {
            ProxyKind::Dynamic => SlotState::Dynamic,
            ProxyKind::Static => SlotState::Static,
        }
    }
}

/// Every slot's data, one array per field.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    /// The true boxes.
    pub(crate) boxes: Vec<Aabb>,
    /// The enlarged boxes the index holds (a static proxy's is its box).
    pub(crate) fat: Vec<Aabb>,
    pub(crate) generation: Vec<u32>,
    pub(crate) state: Vec<SlotState>,
    /// Epoch of the update in which the true box last changed.
    pub(crate) changed: Vec<u32>,
    /// Epoch of the update for which the slot is queued for re-indexing.
    pub(crate) queued: Vec<u32>,
    /// Number of the index build since which the slot's entry in it is
    /// stale (see `index.rs`).
    pub(crate) dirty: Vec<u32>,
    /// Freed slots, reused last freed first.
    free: Vec<u32>,
    /// Live proxies (dynamic and static).
    pub(crate) live: usize,
    /// Live dynamic proxies.
    pub(crate) dynamic: usize,
}

impl Slots {
    /// Slots ever used (the bound of every slot index).
    pub(crate) fn len(&self) -> usize {
        self.state.len()
    }

    /// The handle of slot `slot` as it stands.
    #[inline]
    pub(crate) fn handle(&self, slot: u32) -> Proxy {
        Proxy { index: slot, generation: self.generation[slot as usize] }
    }

    /// The slot of `proxy` if it names a live proxy.
    #[inline]
    pub(crate) fn live_slot(&self, proxy: Proxy) -> Option<usize> {
        let slot = proxy.index as usize;
        (slot < self.len()
            && self.generation[slot] == proxy.generation
            && self.state[slot].is_live())
        .then_some(slot)
    }

    /// Slots that a call inserting `count` proxies would need beyond the
    /// free ones, if any.
    pub(crate) fn room_for(&self, count: usize) -> Result<(), usize> {
        let total = self.len() + count.saturating_sub(self.free.len());
        if total <= MAX_PROXIES { Ok(()) } else { Err(total) }
    }

    /// Takes a slot for a new proxy; the caller checked
    /// [`room_for`](Self::room_for).
    pub(crate) fn insert(&mut self, aabb: Aabb, kind: ProxyKind) -> u32 {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                let slot = self.len() as u32;
                self.boxes.push(aabb);
                self.fat.push(aabb);
                self.generation.push(0);
                self.state.push(SlotState::Free);
                self.changed.push(0);
                self.queued.push(0);
                self.dirty.push(0);
                slot
            }
        };
        let s = slot as usize;
        self.boxes[s] = aabb;
        self.fat[s] = aabb;
        self.state[s] = SlotState::of(kind);
        self.live += 1;
        self.dynamic += usize::from(kind == ProxyKind::Dynamic);
        slot
    }

    /// Marks a live slot removed; it is freed by [`free`](Self::free).
    pub(crate) fn remove(&mut self, slot: usize) {
        self.dynamic -= usize::from(self.state[slot] == SlotState::Dynamic);
        self.live -= 1;
        self.state[slot] = SlotState::Removed;
    }

    /// Frees a removed slot for reuse, so its old handle goes stale.
    pub(crate) fn free(&mut self, slot: u32) {
        let s = slot as usize;
        debug_assert_eq!(self.state[s], SlotState::Removed);
        self.state[s] = SlotState::Free;
        self.generation[s] = self.generation[s].wrapping_add(1);
        self.free.push(slot);
    }

    /// Changes a live slot's kind.
    pub(crate) fn set_kind(&mut self, slot: usize, kind: ProxyKind) {
        self.dynamic -= usize::from(self.state[slot] == SlotState::Dynamic);
        self.dynamic += usize::from(kind == ProxyKind::Dynamic);
        self.state[slot] = SlotState::of(kind);
    }

    /// Resets every epoch mark, for when the epoch counter wraps.
    pub(crate) fn clear_epoch_marks(&mut self) {
        self.changed.fill(0);
        self.queued.fill(0);
    }
}

/// The most proxies one broad phase holds: slots are `u32` indices.
pub(crate) const MAX_PROXIES: usize = u32::MAX as usize;

/// `aabb` enlarged on every side by `relative` times its largest extent,
/// and at least `absolute`, clamped to finite `f32` so that a box near the
/// end of the range stays a valid box.
#[inline]
pub(crate) fn enlarge(aabb: &Aabb, relative: f32, absolute: f32) -> Aabb {
    // An extent can overflow to +inf (a box from -MAX to MAX); times a
    // relative margin of 0 that is NaN, and `max` then keeps `absolute`.
    let extent = (aabb.max - aabb.min).max_element();
    let margin = Vec3::splat((extent * relative).max(absolute));
    Aabb {
        min: (aabb.min - margin).max(Vec3::splat(f32::MIN)),
        max: (aabb.max + margin).min(Vec3::splat(f32::MAX)),
    }
}

/// Whether `inner` lies inside `outer` (faces may touch).
#[inline]
pub(crate) fn contains(outer: &Aabb, inner: &Aabb) -> bool {
    outer.min.cmple(inner.min).all() && inner.max.cmple(outer.max).all()
}
