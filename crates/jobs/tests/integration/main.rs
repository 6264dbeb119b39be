//! The job system's integration tests, one binary: scoped jobs and the
//! stress runs, the parallel loops. Each module is named for what it
//! checks.

mod parallel_loops;
mod scope;
mod stress;
