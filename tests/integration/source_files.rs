//! The workspace's own sources, for the tests that check rules over them.

use std::fs;
use std::path::{Path, PathBuf};

/// Appends every `.rs` file under `dir` to `out`, depth first.
pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            // A build's output (crates/gpu builds into its own target/).
            if path.file_name().is_some_and(|name| name == "target") {
                continue;
            }
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}
