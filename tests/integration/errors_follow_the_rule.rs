//! The error rule of docs/ARCHITECTURE.md ("Names"), checked: every
//! public error enum is `#[non_exhaustive]` with `Display` and
//! `std::error::Error`; a variant that wraps another error is named for
//! it (`Job(JobError)`, `Input(InputError)`, `Io(std::io::Error)`); and
//! `source()` returns the wrapped cause, which the message names.

use crate::source_files::rust_files;
use broadphase::InputError;
use broadphase::ecs::{PluginError, hecs};
use broadphase::grid::{FindPairsError, PairsError};
use broadphase::jobs::{JobError, SpawnError};
use broadphase::neighbors::{BuildError, FillError, PeriodicError, PointError, VerletError};
use broadphase::persistent::ProxyError;
use broadphase::query::{BatchError, QueryError, QueryPart};
use broadphase::storage::Axis;
use broadphase::tree::PartitionError;
use std::error::Error;
use std::fs;
use std::path::PathBuf;

/// `error.source()` is `cause`, and unless the message rewords the cause
/// for its context, the message contains the cause's.
fn wraps(error: &dyn Error, cause: &dyn Error, message_quotes_cause: bool) {
    let source = error.source().unwrap_or_else(|| panic!("{error:?} has no source"));
    assert_eq!(source.to_string(), cause.to_string(), "{error:?}");
    if message_quotes_cause {
        assert!(error.to_string().contains(&cause.to_string()), "{error} does not name {cause}");
    }
}

#[test]
fn every_wrapping_variant_returns_its_cause() {
    let input = InputError::Inverted { index: 0, axis: Axis::X, min: 1.0, max: 0.0 };
    let pairs = PairsError::OutOfMemory { found: 3 };
    let job = JobError::WaitInsideJob;
    let query = QueryError::BadLength { part: QueryPart::Radius, value: -1.0 };
    let point = PointError::InvalidRadius { value: -1.0 };
    let partition = PartitionError::Job(job.clone());
    let proxy = ProxyError::TooManyProxies { count: 7 };
    let entity = hecs::World::new().spawn(());

    wraps(&FindPairsError::Input(input), &input, true);
    wraps(&FindPairsError::Pairs(pairs), &pairs, true);
    wraps(&PartitionError::Input(input), &input, true);
    wraps(&PartitionError::Job(job.clone()), &job, true);
    wraps(&PartitionError::Pairs(pairs), &pairs, true);
    let kernel_frame = FindPairsError::Pairs(pairs);
    wraps(&PartitionError::FindPairs(kernel_frame.clone()), &kernel_frame, true);
    // The kernel's causes with a variant of their own keep it.
    assert_eq!(PartitionError::from(FindPairsError::Input(input)), PartitionError::Input(input));
    assert_eq!(PartitionError::from(kernel_frame), PartitionError::Pairs(pairs));
    wraps(&BatchError::Input { index: 4, error: input }, &input, true);
    wraps(&BatchError::Query { index: 4, error: query }, &query, true);
    wraps(&BatchError::Job(job.clone()), &job, true);
    wraps(&QueryError::Input(input), &input, true);
    wraps(&ProxyError::Input(input), &input, true);
    wraps(&ProxyError::Partition(partition.clone()), &partition, true);
    wraps(&PluginError::Input(input), &input, true);
    wraps(&PluginError::Query(query), &query, true);
    wraps(&PluginError::Job(job.clone()), &job, true);
    wraps(&PluginError::Proxy(proxy.clone()), &proxy, true);
    let batch = BatchError::Query { index: 4, error: query };
    wraps(&PluginError::Batch(batch.clone()), &batch, true);
    // The entity replaces the box index, so the message rewords the cause.
    wraps(&PluginError::InvalidBox { entity, error: input }, &input, false);
    wraps(&VerletError::Point(point), &point, true);
    wraps(&PeriodicError::Point(point), &point, true);
    wraps(&FillError::Point(point), &point, true);
    wraps(&FillError::Job(job.clone()), &job, true);
    wraps(&BuildError::Point(point), &point, true);
    wraps(&BuildError::Job(job.clone()), &job, true);
    let io = std::io::Error::other("no threads left");
    wraps(&SpawnError::Io(std::io::Error::other("no threads left")), &io, true);
}

/// Variants that carry a wrapped cause under another name, each with why:
/// the enum also wraps the same cause bare, so the variant with context is
/// named for its context.
const NAMED_FOR_CONTEXT: &[&str] = &["PluginError::InvalidBox"];

/// The error type a variant line wraps, for `Name(Type),` and for a
/// struct variant's `error: Type,` field.
fn wrapped_type(text: &str) -> Option<&str> {
    let ty = text.trim().trim_end_matches([',', ')']);
    let last = ty.rsplit("::").next()?;
    last.ends_with("Error").then_some(last)
}

/// `Job` for `JobError`, `Io` for `std::io::Error`.
fn variant_for(ty: &str) -> String {
    match ty.strip_suffix("Error") {
        Some("") => "Io".to_string(),
        Some(stem) => stem.to_string(),
        None => ty.to_string(),
    }
}

/// Checks one `pub enum NameError` whose body starts at line `at`.
fn check_enum(name: &str, lines: &[&str], at: usize, text: &str, file: &str) -> Vec<String> {
    let mut broken = Vec::new();
    let attributes =
        lines[..at].iter().rev().take_while(|l| l.trim_start().starts_with(['#', '/']));
    if !attributes.clone().any(|l| l.trim() == "#[non_exhaustive]") {
        broken.push(format!("{file}: {name} is not #[non_exhaustive]"));
    }
    if !text.contains(&format!("impl std::error::Error for {name} ")) {
        broken.push(format!("{file}: {name} does not implement std::error::Error"));
    }
    if !text.contains(&format!("Display for {name} ")) {
        broken.push(format!("{file}: {name} does not implement Display"));
    }
    let mut variant = String::new();
    for line in lines[at + 1..].iter().take_while(|l| !l.starts_with('}')) {
        let Some(body) = line.strip_prefix("    ") else { continue };
        let wrapped = if !body.starts_with(' ') && body.starts_with(char::is_uppercase) {
            variant = body.split(['(', ' ', ',']).next().unwrap_or_default().to_string();
            body.split_once('(').and_then(|(_, ty)| wrapped_type(ty))
        } else {
            body.trim_start().strip_prefix("error: ").and_then(wrapped_type)
        };
        let Some(ty) = wrapped else { continue };
        let path = format!("{name}::{variant}");
        if variant != variant_for(ty) && !NAMED_FOR_CONTEXT.contains(&path.as_str()) {
            broken.push(format!("{file}: {path} wraps {ty}: name it {}", variant_for(ty)));
        }
    }
    broken
}

#[test]
fn every_public_error_enum_is_non_exhaustive_and_names_its_causes() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "crates"] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut seen = Vec::new();
    let mut broken = Vec::new();
    for file in files.iter().filter(|f| f.components().any(|c| c.as_os_str() == "src")) {
        let text = fs::read_to_string(file).unwrap();
        let relative = file.strip_prefix(&root).unwrap().display().to_string();
        let lines: Vec<&str> = text.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            let Some(rest) = line.strip_prefix("pub enum ") else { continue };
            let name = rest.trim_end_matches(" {");
            if name.ends_with("Error") {
                seen.push(name.to_string());
                broken.extend(check_enum(name, &lines, at, &text, &relative));
            }
        }
    }
    // The scan must see the enums it checks: a layout change that hides
    // them fails here instead of passing on nothing.
    for name in ["InputError", "PluginError", "ProxyError", "SpawnError", "FillError"] {
        assert!(seen.iter().any(|s| s == name), "{name} not found; saw {seen:?}");
    }
    assert!(broken.is_empty(), "the error rule is broken:\n{}", broken.join("\n"));
}
