//! The sets of entities gathered again only when they change — the static
//! entities and the sleeping ones — so that a frame costs nothing per
//! entity of them that did not.

use crate::gather::{Gathered, Kind, count};
use crate::{Position, SleepChanges, StaticChanges};
use broadphase_jobs::{JobError, JobSystem};
use core::marker::PhantomData;
use hecs::World;

/// How a kept set finds out, each run, whether it must be gathered again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) enum Watch {
    /// Compares every entity, box and layer with the world's.
    Everything,
    /// Compares the entities (id and generation), not their boxes.
    Entities,
    /// Compares how many entities the set's archetypes hold.
    Count,
    /// Trusts the set until told otherwise.
    Nothing,
}

impl From<StaticChanges> for Watch {
    fn from(mode: StaticChanges) -> Self {
        match mode {
            StaticChanges::Detect => Watch::Everything,
            StaticChanges::Notify => Watch::Nothing,
        }
    }
}

impl From<SleepChanges> for Watch {
    fn from(mode: SleepChanges) -> Self {
        match mode {
            SleepChanges::Detect => Watch::Entities,
            SleepChanges::Notify => Watch::Count,
        }
    }
}

/// The entities of kind `K` as last gathered.
#[derive(Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct KeptSet<K> {
    pub(crate) set: Gathered,
    watch: Watch,
    /// `set` was gathered without error and no change was reported since.
    /// False before the first frame, after a failed frame, and after a
    /// reported change, so the next run gathers again.
    valid: bool,
    /// How many times the set was gathered and its proxies updated.
    pub(crate) rebuilds: u64,
    #[cfg_attr(feature = "serde", serde(skip))]
    _kind: PhantomData<fn() -> K>,
}

/// A snapshot's copy, into the set already there. How changes are
/// watched is the plugin's tuning: a copy keeps its own.
impl<K> Clone for KeptSet<K> {
    fn clone(&self) -> Self {
        let mut copy = Self { set: Gathered::default(), ..*self };
        copy.set.clone_from(&self.set);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.set.clone_from(&source.set);
        self.valid = source.valid;
        self.rebuilds = source.rebuilds;
    }
}

impl<K: Kind> KeptSet<K> {
    pub(crate) fn new(watch: Watch) -> Self {
        Self { set: Gathered::default(), watch, valid: false, rebuilds: 0, _kind: PhantomData }
    }

    /// Makes the next `gather_if_changed` gather.
    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Whether the set is trusted until a change is reported.
    pub(crate) fn notified(&self) -> bool {
        self.watch == Watch::Nothing
    }

    /// Whether the set's own watch may miss an entity that moved between
    /// it and the dynamic set (a count that stays the same, or no watch).
    pub(crate) fn notified_or_counted(&self) -> bool {
        matches!(self.watch, Watch::Count | Watch::Nothing)
    }

    /// Gathers the set again if it changed since the last gather (as its
    /// [`Watch`] sees it) or `stale`; returns whether it did. The caller
    /// calls [`confirm`](Self::confirm) once their proxies are updated.
    ///
    /// # Errors
    /// [`JobError`] if a job of the gather panicked; the set is then
    /// gathered again next time.
    pub(crate) fn gather_if_changed<P: Position>(
        &mut self,
        world: &mut World,
        jobs: &JobSystem,
        stale: bool,
    ) -> Result<bool, JobError> {
        let unchanged = self.valid
            && !stale
            && match self.watch {
                Watch::Everything => self.set.same_as::<K, P>(world),
                Watch::Entities => self.set.same_entities_as::<K, P>(world),
                Watch::Count => count::<K, P>(world) == self.set.len(),
                Watch::Nothing => true,
            };
        if unchanged {
            return Ok(false);
        }
        self.valid = false;
        self.set.gather::<K, P>(world, jobs)?;
        Ok(true)
    }

    /// The gathered set is in the broad phase.
    pub(crate) fn confirm(&mut self) {
        self.valid = true;
        self.rebuilds += 1;
    }
}
