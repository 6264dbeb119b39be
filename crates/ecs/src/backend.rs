//! The seam between the plugin and the pair finder for the dynamic boxes.
//!
//! Everything the plugin knows about *how* dynamic-vs-dynamic pairs are
//! found is in this file: the partition's [`GridTree`] on the plugin's own
//! [`JobSystem`]. Inputs of at most `split_threshold` boxes (5,000 by
//! default) run the single-thread kernel on the calling thread; larger ones
//! are split into regions that run on every thread.

use crate::PluginConfig;
use broadphase_jobs::{JobError, JobSystem};
use broadphase_kernel::{Aabb, InputError};
use broadphase_partition::{GridTree, PartitionError};

/// Finds every overlapping pair among the dynamic boxes of a frame.
#[derive(Debug)]
pub(crate) struct Backend {
    jobs: JobSystem,
    tree: GridTree,
}

/// Why the dynamic pass failed.
#[derive(Debug)]
pub(crate) enum BackendError {
    /// A box breaks the input contract.
    Input(InputError),
    /// A job panicked (a bug).
    Job(JobError),
}

impl Backend {
    /// # Panics
    /// If the operating system refuses to start a worker thread.
    pub(crate) fn new(config: &PluginConfig) -> Self {
        let jobs =
            match JobSystem::builder().threads(config.threads).thread_name("broadphase").build() {
                Ok(jobs) => jobs,
                Err(e) => panic!("broadphase: could not start the plugin's job system: {e}"),
            };
        let tree = GridTree::with_config(config.partition);
        Self { jobs, tree }
    }

    /// Writes into `out` (cleared first) every overlapping pair of `boxes`
    /// once, as indices `[a, b]` with `a < b`. The tree's jobs borrow the
    /// boxes; nothing is copied.
    pub(crate) fn pairs(
        &mut self,
        boxes: &[Aabb],
        out: &mut Vec<[u32; 2]>,
    ) -> Result<(), BackendError> {
        self.tree.try_pairs(&self.jobs, boxes, out).map_err(|e| match e {
            PartitionError::Input(e) => BackendError::Input(e),
            PartitionError::Job(e) => BackendError::Job(e),
            // `PartitionError` is non-exhaustive; anything new is a failed
            // job as far as the plugin is concerned.
            other => BackendError::Job(JobError::Panicked { message: other.to_string(), count: 1 }),
        })
    }

    /// How many threads the dynamic pass may use.
    pub(crate) fn threads(&self) -> usize {
        self.jobs.threads()
    }
}
