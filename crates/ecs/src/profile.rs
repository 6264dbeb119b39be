//! Tracy instrumentation, compiled in only with the `profile` feature.
//!
//! `zone!("name")` opens a Tracy zone that lasts until the end of the
//! enclosing block; `plot!("name", value)` sends one plot sample. Without
//! the feature both expand to nothing (their arguments are not even
//! evaluated), so an unprofiled build carries no Tracy code and no cost.
//! The zones sit on whole stages, never per box or per pair.

/// Opens a Tracy zone named `$name` until the end of the enclosing block.
#[cfg(feature = "profile")]
macro_rules! zone {
    ($name:literal) => {
        let _tracy_zone = ::tracy_client::span!($name);
    };
}

/// Opens a Tracy zone (compiled out: the `profile` feature is off).
#[cfg(not(feature = "profile"))]
macro_rules! zone {
    ($name:literal) => {};
}

/// Sends one sample of the plot `$name` to Tracy.
#[cfg(feature = "profile")]
macro_rules! plot {
    ($name:literal, $value:expr) => {
        ::tracy_client::plot!($name, $value)
    };
}

/// Sends one plot sample (compiled out: the `profile` feature is off).
#[cfg(not(feature = "profile"))]
macro_rules! plot {
    ($name:literal, $value:expr) => {};
}

pub(crate) use {plot, zone};

/// Marks the end of a game frame for Tracy (the profiler's main frame set).
///
/// Call it once per frame of your game loop, after everything the frame
/// does; [`BroadPhasePlugin::run`](crate::BroadPhasePlugin::run) marks its
/// own frames in a secondary set named `broadphase`. Without the `profile`
/// feature this is an empty function.
///
/// # Examples
///
/// ```
/// for _frame in 0..3 {
///     // ... update, run the broad phase, render ...
///     broadphase_ecs::frame_mark();
/// }
/// ```
#[inline]
pub fn frame_mark() {
    #[cfg(feature = "profile")]
    if let Some(client) = ::tracy_client::Client::running() {
        client.frame_mark();
    }
}

/// Whether this build has the Tracy instrumentation (the `profile` feature).
///
/// # Examples
///
/// ```
/// assert_eq!(broadphase_ecs::profiling_enabled(), cfg!(feature = "profile"));
/// ```
#[inline]
pub const fn profiling_enabled() -> bool {
    cfg!(feature = "profile")
}

/// Starts the Tracy client (idempotent; a no-op without the feature).
#[inline]
pub(crate) fn start() {
    #[cfg(feature = "profile")]
    {
        let _client = ::tracy_client::Client::start();
    }
}

/// Marks the end of one `run` in the secondary frame set `broadphase`.
#[inline]
pub(crate) fn plugin_frame_mark() {
    #[cfg(feature = "profile")]
    ::tracy_client::secondary_frame_mark!("broadphase");
}
