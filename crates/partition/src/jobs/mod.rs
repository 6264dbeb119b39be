//! The job system: persistent workers on crossbeam-deque, groups of jobs
//! with sub-jobs, a wait that helps, panics reported as errors.

mod group;
mod scratch;
mod system;

pub(crate) use group::IndexedJob;
pub use group::{JobContext, JobError, JobGroup};
pub use system::{BuildError, JobSystem, JobSystemBuilder};
