//! The seam between the plugin and the broad phase: the persistent broad
//! phase on the plugin's own job system.

use crate::PluginConfig;
use broadphase_jobs::JobSystem;
use broadphase_persistent::PersistentBroadPhase;

/// The plugin's broad phase and the threads it runs on.
#[derive(Debug)]
pub(crate) struct Backend {
    pub(crate) jobs: JobSystem,
    pub(crate) broad_phase: PersistentBroadPhase,
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
        Self { jobs, broad_phase: PersistentBroadPhase::with_config(config.broad_phase) }
    }

    /// How many threads the broad phase may use.
    pub(crate) fn threads(&self) -> usize {
        self.jobs.threads()
    }
}
