//! `serde` for [`BroadPhaseSnapshot`] (the `serde` feature). A snapshot
//! read from bytes is untrusted: it is checked as it is read, and one that
//! breaks an invariant a later restore, update or query relies on is a
//! [`SnapshotError`], so a restore never panics or answers wrongly
//! because of the bytes.

use super::broad_phase::UpdateStats;
use super::candidates::{Events, KeptCandidates};
use super::config::PersistentConfig;
use super::index::FatIndex;
use super::slots::{Margin, Proxy, Slots};
use super::snapshot::BroadPhaseSnapshot;
use broadphase_storage::Pool;
use core::fmt;
use serde::Deserialize;

/// Why bytes do not hold a valid [`BroadPhaseSnapshot`]: the error a
/// deserializer reports (as its own error type, with this message) when
/// the snapshot's parts contradict each other.
///
/// # Examples
///
/// ```
/// use broadphase_persistent::{BroadPhaseSnapshot, PersistentBroadPhase, ProxyKind};
/// use broadphase_storage::Aabb;
/// let mut world = PersistentBroadPhase::default();
/// world.insert(Aabb::default(), ProxyKind::Dynamic)?;
/// let mut json: serde_json::Value = serde_json::to_value(world.snapshot()).unwrap();
/// json["slots"]["generation"] = serde_json::json!([]); // one slot, no generation
/// let err = serde_json::from_value::<BroadPhaseSnapshot>(json).unwrap_err();
/// assert!(err.to_string().contains("differ in length"));
/// # Ok::<(), broadphase_persistent::ProxyError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapshotError {
    what: &'static str,
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid broad phase snapshot: {}", self.what)
    }
}

impl std::error::Error for SnapshotError {}

/// A snapshot as read, before its checks.
#[derive(Deserialize)]
pub(crate) struct Unchecked {
    config: PersistentConfig,
    slots: Slots,
    queue: Pool<u32>,
    removed: Pool<u32>,
    touched: bool,
    force_full: bool,
    candidates: KeptCandidates,
    events: Events,
    stats: UpdateStats,
    index: FatIndex,
}

impl TryFrom<Unchecked> for BroadPhaseSnapshot {
    type Error = SnapshotError;

    fn try_from(read: Unchecked) -> Result<Self, SnapshotError> {
        check(&read).map_err(|what| SnapshotError { what })?;
        let Unchecked {
            config,
            slots,
            queue,
            removed,
            touched,
            force_full,
            candidates,
            events,
            stats,
            index,
        } = read;
        Ok(BroadPhaseSnapshot {
            config,
            slots,
            queue,
            removed,
            touched,
            force_full,
            candidates,
            events,
            stats,
            index,
        })
    }
}

fn check(read: &Unchecked) -> Result<(), &'static str> {
    let config = read.config;
    let slots = &read.slots;
    slots.check(Margin::new(config.margin, config.min_margin).is_zero())?;
    let n = slots.len();
    let mut seen = vec![false; n];
    for &slot in &read.queue {
        let s = slot as usize;
        if s >= n || !slots.queued.get(s) || core::mem::replace(&mut seen[s], true) {
            return Err("the re-index queue holds a slot out of range, unmarked or twice");
        }
    }
    let queued: u32 = slots.queued.words.iter().map(|w| w.count_ones()).sum();
    if queued as usize != read.queue.len() {
        return Err("the re-index queue and its marks differ");
    }
    if read.removed.iter().any(|&slot| slot as usize >= n || !slots.removed.get(slot as usize)) {
        return Err("the removed list holds a slot out of range or unmarked");
    }
    let kept = &read.candidates;
    let slot_pair = |[a, b]: &[Proxy; 2]| [a.index(), b.index()];
    for (pairs, touching) in
        [(&kept.pairs, &kept.touching), (&kept.resting, &kept.resting_touching)]
    {
        if pairs.len() != touching.len() {
            return Err("the candidate pairs and their touching marks differ in length");
        }
        if pairs.iter().any(|pair| {
            !(slot_pair(pair)[0] < slot_pair(pair)[1] && (slot_pair(pair)[1] as usize) < n)
        }) || !pairs.windows(2).all(|w| slot_pair(&w[0]) < slot_pair(&w[1]))
        {
            return Err("the candidate pairs are out of range or out of order");
        }
    }
    // A resting candidate is read again only when one of its slots is
    // disturbed, which only a slot at rest at the last update can be.
    let rested = |slot: u32| slots.rested.get(slot as usize);
    if kept.resting.iter().any(|&pair| !slot_pair(&pair).into_iter().all(rested)) {
        return Err("a resting candidate has a slot that was not at rest");
    }
    let marked =
        |s: usize| slots.queued.get(s) || slots.removed.get(s) || slots.rest_changed.get(s);
    if (0..n).any(|s| slots.rested.get(s) != slots.at_rest.get(s) && !marked(s)) {
        return Err("a slot's rest changed with no mark");
    }
    let mut awake = kept.pairs.iter().map(slot_pair).peekable();
    for pair in kept.resting.iter().map(slot_pair) {
        while awake.next_if(|&other| other < pair).is_some() {}
        if awake.peek() == Some(&pair) {
            return Err("a candidate pair is kept in both tiers");
        }
    }
    let events = [&read.events.pairs, &read.events.started, &read.events.ended];
    if events.iter().any(|list| list.iter().flatten().any(|proxy| proxy.index() as usize >= n)) {
        return Err("a published pair names a slot out of range");
    }
    read.index.check(config.tree.grid, slots)
}
