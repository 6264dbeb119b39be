//! The broad phase's pairs as entity pairs, on all threads when there are
//! many: at 1M particles the lookups (one entity per proxy, from a table
//! of 8 MB) took 3.8 ms on one thread.

use crate::proxies::EntityProxies;
use broadphase_jobs::{IndexedJob, JobContext, JobError, JobSystem};
use broadphase_partition::Proxy;
use hecs::Entity;
use parking_lot::Mutex;

/// Below this many pairs one thread maps them all.
const PARALLEL_MIN: usize = 64 * 1024;

/// Most pieces a list is cut into (one per thread).
const MAX_PIECES: usize = 16;

/// Maps one piece of a list per job.
struct MapPass<'a> {
    from: &'a [[Proxy; 2]],
    pieces: &'a [Mutex<&'a mut [(Entity, Entity)]>],
    piece_len: usize,
    proxies: &'a EntityProxies,
}

impl<'scope> IndexedJob<'scope> for MapPass<'_> {
    fn run(&'scope self, _ctx: &mut JobContext<'_, 'scope>, piece: usize) {
        let start = piece * self.piece_len;
        let mut to = self.pieces[piece].lock();
        let from = &self.from[start..start + to.len()];
        for (out, &[a, b]) in to.iter_mut().zip(from) {
            *out = (self.proxies.live_entity(a), self.proxies.live_entity(b));
        }
    }
}

/// Replaces `to` with the entities of `from`, whose proxies are all live.
pub(crate) fn live_pairs(
    jobs: &JobSystem,
    proxies: &EntityProxies,
    from: &[[Proxy; 2]],
    to: &mut Vec<(Entity, Entity)>,
) -> Result<(), JobError> {
    to.clear();
    let pieces = jobs.threads().min(MAX_PIECES);
    if from.len() < PARALLEL_MIN || pieces < 2 {
        to.extend(from.iter().map(|&[a, b]| (proxies.live_entity(a), proxies.live_entity(b))));
        return Ok(());
    }
    to.resize(from.len(), (Entity::DANGLING, Entity::DANGLING));
    let piece_len = from.len().div_ceil(pieces);
    let mut slots: [Mutex<&mut [(Entity, Entity)]>; MAX_PIECES] =
        core::array::from_fn(|_| Mutex::new(&mut [][..]));
    for (slot, piece) in slots.iter_mut().zip(to.chunks_mut(piece_len)) {
        *slot.get_mut() = piece;
    }
    let pass = MapPass { from, pieces: &slots[..pieces], piece_len, proxies };
    jobs.reserve_queue(pieces);
    jobs.scope(|s| (0..pieces).for_each(|piece| s.spawn_indexed(&pass, piece)))
}
