//! The job system's integration tests, one binary: scoped jobs and the
//! stress runs. Each module is named for what it checks.

mod scope;
mod stress;
