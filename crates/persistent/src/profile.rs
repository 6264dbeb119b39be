//! Tracy zones on the partition's stages, compiled in only with the
//! `profile` feature.
//!
//! `zone!("name")` opens a zone until the end of the enclosing block, on
//! whichever thread runs it, so each worker's subtree walks show on that
//! worker's timeline. Zones are recorded only while a Tracy client runs
//! (the ECS plugin starts one); a program using the partition alone with
//! the feature on records nothing rather than failing. Without the feature
//! the macro expands to nothing.

/// Opens a Tracy zone named `$name` until the end of the enclosing block.
#[cfg(feature = "profile")]
macro_rules! zone {
    ($name:literal) => {
        let _tracy_zone = ::tracy_client::Client::running()
            .map(|client| client.span(::tracy_client::span_location!($name), 0));
    };
}

/// Opens a Tracy zone (compiled out: the `profile` feature is off).
#[cfg(not(feature = "profile"))]
macro_rules! zone {
    ($name:literal) => {};
}

pub(crate) use zone;
