//! The broad phase's pairs as entity pairs, on all threads when there are
//! many: at 1M particles the lookups (one entity per proxy, from a table
//! of 8 MB) took 3.8 ms on one thread.

use crate::proxies::EntityProxies;
use broadphase_jobs::{JobError, JobSystem};
use broadphase_persistent::Proxy;
use broadphase_storage::Pool;
use hecs::Entity;

/// Pairs a job maps at least: below twice this, one thread maps them all.
const MIN_PIECE: usize = 32 * 1024;

/// How many pairs ahead a mapping of pairs to entities asks for the
/// proxies' entities: 64, where 16 left the sparse event lists' lookups
/// waiting (the 1M-particle game loop's publish 4.8–4.9 → 4.5–4.6 ms;
/// 128 no better).
pub(crate) const AHEAD: usize = 64;

/// Replaces `to` with the entities of `from`, whose proxies are all live;
/// `to` is empty on error.
pub(crate) fn live_pairs(
    jobs: &JobSystem,
    proxies: &EntityProxies,
    from: &[[Proxy; 2]],
    to: &mut Pool<(Entity, Entity)>,
) -> Result<(), JobError> {
    // Every entry is overwritten: only those past the old length need a
    // value first (clearing and filling them all is one more pass).
    to.truncate(from.len());
    to.resize(from.len(), (Entity::DANGLING, Entity::DANGLING));
    let owners = proxies.live_entities();
    let mapped = jobs.for_each_chunk_mut(to, MIN_PIECE, |range, to| {
        let from = &from[range];
        for (i, (out, &[a, b])) in to.iter_mut().zip(from).enumerate() {
            // The pairs ascend by their first proxy: the second's owner is
            // the random read, asked for a few pairs ahead; so is the
            // first's, which is random too in a sparse list (the events).
            if let Some(&[first, later]) = from.get(i + AHEAD) {
                broadphase_storage::prefetch(owners.as_ptr().wrapping_add(first.index() as usize));
                broadphase_storage::prefetch(owners.as_ptr().wrapping_add(later.index() as usize));
            }
            *out = (proxies.live_entity(a), proxies.live_entity(b));
        }
    });
    if mapped.is_err() {
        to.reset();
    }
    mapped
}

/// `first` and `second`, both sorted and with no pair in common, as one
/// sorted list: either itself when the other is empty, else their merge
/// in `scratch`.
pub(crate) fn union_into<'a, T: Copy + Ord>(
    first: &'a [T],
    second: &'a [T],
    scratch: &'a mut Pool<T>,
) -> &'a [T] {
    if second.is_empty() {
        return first;
    }
    if first.is_empty() {
        return second;
    }
    broadphase_storage::merge_sorted_into(first, second, scratch);
    scratch
}
