//! The per-entity contact lists, made on the first read after a run. A
//! run only notes that the published frame's lists are due; the first
//! [`touching`](crate::BroadPhasePlugin::touching) after it patches the
//! last lists made with the frame's started and ended pairs, or builds
//! them from every pair (both in `contacts.rs`), and keeps them until the
//! next run.
//!
//! A game that never reads the lists pays nothing for them (at a million
//! particles, making and publishing them was a tenth of the frame); one
//! that reads them every frame pays in its first read what a run that
//! made them paid. A patch needs the lists of the frame just before, so
//! the read after a frame whose lists were never read (or after a
//! restore) builds them.
//!
//! `touching` returns slices from `&self`: the lists sit in a once-cell,
//! filled by the first reader while any others wait, and the maker's
//! buffers behind a mutex. A run, which holds `&mut`, takes the lists
//! back as the base of the next patch. The hand-over moves buffers and
//! allocates nothing, so a warm frame that reads the lists still
//! allocates nothing.

use crate::contacts::{Contacts, Lists};
use crate::profile::{plot, zone};
use crate::stats::ContactListStats;
use broadphase_jobs::JobSystem;
use hecs::Entity;
use parking_lot::Mutex;
use std::sync::OnceLock;
use std::time::Instant;

/// The published frame's lists, once made.
#[derive(Debug)]
struct Made {
    lists: Lists,
    /// How they were made; `None` for the empty lists before any run.
    stats: Option<ContactListStats>,
}

/// What makes the lists, and what it needs between frames.
#[derive(Debug)]
struct Maker {
    contacts: Contacts,
    /// Whether the lists `contacts` holds are those of the frame before
    /// the published one, so that the published frame's events patch
    /// them.
    base_is_last: bool,
    /// Entity ids of the published frame: its pairs name ids below.
    ids: usize,
}

/// Every entity's partners in the published frame, made when first read.
#[derive(Debug)]
pub(crate) struct ContactLists {
    made: OnceLock<Made>,
    maker: Mutex<Maker>,
}

impl ContactLists {
    /// Empty lists (no frame published), with shards and scratch for a
    /// job system of `threads` threads.
    pub(crate) fn new(threads: usize) -> Self {
        let mut contacts = Contacts::new(threads);
        let made = OnceLock::from(Made { lists: contacts.take_lists(), stats: None });
        let maker = Mutex::new(Maker { contacts, base_is_last: false, ids: 0 });
        Self { made, maker }
    }

    /// Notes a newly published frame over `ids` entity ids: its lists are
    /// due, made on the next read.
    pub(crate) fn frame_published(&mut self, ids: usize) {
        let maker = self.maker.get_mut();
        maker.base_is_last = match self.made.take() {
            Some(made) => {
                maker.contacts.put_lists(made.lists);
                true
            }
            None => false,
        };
        maker.ids = ids;
    }

    /// Forgets the lists: the next read builds them from the published
    /// pairs, over `ids` entity ids (after a restore, whose frame's lists
    /// were never made here).
    pub(crate) fn forget(&mut self, ids: usize) {
        self.frame_published(ids);
        self.maker.get_mut().base_is_last = false;
    }

    /// How the published frame's lists were made, if they were.
    pub(crate) fn stats(&self) -> Option<ContactListStats> {
        self.made.get().and_then(|made| made.stats)
    }

    /// The published frame's lists, made now on `jobs` if this is their
    /// first read: a patch from the frame's `events` (started, ended)
    /// where that is cheaper, else a build from `all` of its `pairs`
    /// pairs (sorted).
    #[inline]
    pub(crate) fn lists<'a>(
        &'a self,
        jobs: &JobSystem,
        pairs: usize,
        events: [&[(Entity, Entity)]; 2],
        all: impl FnOnce() -> &'a [(Entity, Entity)],
    ) -> &'a Lists {
        &self.made.get_or_init(|| self.make(jobs, pairs, events, all)).lists
    }

    #[cold]
    fn make<'a>(
        &self,
        jobs: &JobSystem,
        pairs: usize,
        events: [&[(Entity, Entity)]; 2],
        all: impl FnOnce() -> &'a [(Entity, Entity)],
    ) -> Made {
        zone!("contacts");
        let start = Instant::now();
        let mut maker = self.maker.lock();
        let Maker { contacts, base_is_last, ids } = &mut *maker;
        // Cleared before the work: a make cut short by a panic leaves its
        // base half patched, and the next read then builds.
        let patch = core::mem::replace(base_is_last, false);
        // A job error (a panicked job, or a read from inside a job, where
        // waiting for jobs is refused) has the work done again on this
        // thread alone, which runs no job and cannot fail.
        let patched = patch
            && match contacts.plan_patch(Some(jobs), events, pairs, *ids) {
                Ok(planned) => planned,
                Err(_) => contacts.plan_patch(None, events, pairs, *ids).unwrap_or(false),
            };
        if !patched {
            let all = all();
            if contacts.build(Some(jobs), *ids, all).is_err() {
                contacts.build(None, *ids, all).ok();
            }
        }
        contacts.publish(Some(jobs));
        let stats = ContactListStats { patched, time: start.elapsed() };
        plot!("contacts ms", stats.time.as_secs_f64() * 1e3);
        Made { lists: contacts.take_lists(), stats: Some(stats) }
    }
}
