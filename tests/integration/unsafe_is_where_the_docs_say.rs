//! Where `unsafe` may live is checked, not kept in prose: the workspace
//! denies `unsafe_code`, each module that needs it says so where it is
//! declared (`#[allow(unsafe_code, reason = "..")]`), and the table in
//! docs/ARCHITECTURE.md lists exactly those modules with exactly those
//! reasons. A new `allow` without its row, or a row whose module no longer
//! allows it, fails here.

use crate::source_files::rust_files;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

const START: &str = "<!-- unsafe-modules:start -->";
const END: &str = "<!-- unsafe-modules:end -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `(place, reason)` for each `allow(unsafe_code, ..)` in the code: the
/// declared module's file (or `file::module` for an inline module), or the
/// file itself for an inner attribute.
fn allows_in_code() -> BTreeSet<(String, String)> {
    let root = root();
    let mut files = Vec::new();
    for dir in ["src", "crates", "tests", "benches", "examples"] {
        rust_files(&root.join(dir), &mut files);
    }
    let mut found = BTreeSet::new();
    for file in files {
        if file.ends_with(file!().rsplit('/').next().unwrap()) {
            continue; // this file names the attribute in its strings
        }
        let text = fs::read_to_string(&file).unwrap();
        let relative = file.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        let lines: Vec<&str> = text.lines().collect();
        for (at, line) in lines.iter().enumerate() {
            let line = line.trim();
            let inner = line.starts_with("#![allow(unsafe_code");
            if !inner && !line.starts_with("#[allow(unsafe_code") {
                continue;
            }
            let reason = line
                .split("reason = \"")
                .nth(1)
                .and_then(|rest| rest.rsplit_once("\")]"))
                .map(|(reason, _)| reason.to_string())
                .unwrap_or_else(|| {
                    panic!("{relative}:{}: an allow of unsafe_code without a reason", at + 1)
                });
            let place = if inner {
                relative.clone()
            } else {
                let declaration = lines[at + 1].trim();
                let name = declaration
                    .trim_start_matches("pub(crate) ")
                    .trim_start_matches("pub ")
                    .strip_prefix("mod ")
                    .unwrap_or_else(|| panic!("{relative}:{}: allow not on a module", at + 1));
                if let Some(name) = name.strip_suffix(" {") {
                    format!("{relative}::{name}")
                } else {
                    let name = name.trim_end_matches(';');
                    let dir = Path::new(&relative).parent().unwrap();
                    let stem = Path::new(&relative).file_stem().unwrap().to_string_lossy();
                    // `mod x;` in lib.rs / mod.rs / main.rs is a sibling file; in
                    // `a.rs` it is `a/x.rs`.
                    let base = if ["lib", "mod", "main"].contains(&stem.as_ref()) {
                        dir.to_path_buf()
                    } else {
                        dir.join(stem.as_ref())
                    };
                    let file = base.join(format!("{name}.rs"));
                    let file = if root.join(&file).exists() {
                        file
                    } else {
                        base.join(name).join("mod.rs")
                    };
                    file.to_string_lossy().replace('\\', "/")
                }
            };
            found.insert((place, reason));
        }
    }
    found
}

/// `(place, reason)` rows of the table in docs/ARCHITECTURE.md.
fn allows_in_docs() -> BTreeSet<(String, String)> {
    let doc = fs::read_to_string(root().join("docs/ARCHITECTURE.md")).unwrap();
    let start = doc.find(START).expect("docs/ARCHITECTURE.md has the unsafe-modules table");
    let end = doc.find(END).expect("the unsafe-modules table ends");
    doc[start + START.len()..end]
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            (cells[1].trim_matches('`').to_string(), cells[2].to_string())
        })
        .collect()
}

#[test]
fn the_workspace_denies_unsafe_code() {
    let manifest = fs::read_to_string(root().join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("\nunsafe_code = \"deny\""),
        "[workspace.lints.rust] denies unsafe_code"
    );
    let mut manifests = vec![root().join("Cargo.toml"), root().join("benches/Cargo.toml")];
    for entry in fs::read_dir(root().join("crates")).unwrap().flatten() {
        manifests.push(entry.path().join("Cargo.toml"));
    }
    for manifest in manifests {
        let text = fs::read_to_string(&manifest).unwrap();
        assert!(
            text.contains("[lints]\nworkspace = true"),
            "{} takes the workspace lints",
            manifest.display()
        );
    }
}

#[test]
fn every_module_allowed_unsafe_is_listed_with_its_reason() {
    let code = allows_in_code();
    let docs = allows_in_docs();
    assert!(!code.is_empty());
    let missing: Vec<_> = code.difference(&docs).collect();
    let stale: Vec<_> = docs.difference(&code).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "docs/ARCHITECTURE.md's unsafe table differs from the code.\nIn the code, not the table: {missing:#?}\nIn the table, not the code: {stale:#?}"
    );
}
