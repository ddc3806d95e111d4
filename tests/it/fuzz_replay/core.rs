//! Replays every saved fuzz input in `fuzz/regressions/<target>/` through the same invariant
//! checks the cargo-fuzz targets run, so plain `cargo test` guards against regressions.

use std::fs;
use std::path::{Path, PathBuf};

use rea::core::invariants::{
    Violation, check_complete_bytes, check_discovery_bytes, check_key_bytes,
};

type Check = fn(&[u8]) -> Result<(), Violation>;

/// Each fuzz target and the check it runs.
const TARGETS: [(&str, Check); 3] = [
    ("key_invariants", check_key_bytes),
    ("complete_invariants", check_complete_bytes),
    ("discovery_termination", check_discovery_bytes),
];

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    files
}

fn replay(target: &str, check: Check) {
    let dir = fuzz_dir().join("regressions").join(target);
    let files = files_in(&dir);
    assert!(!files.is_empty(), "no saved inputs in {}", dir.display());
    for file in files {
        let data =
            fs::read(&file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        if let Err(violation) = check(&data) {
            panic!("{}: {violation}", file.display());
        }
    }
}

#[test]
fn key_invariants_regressions() {
    replay(TARGETS[0].0, TARGETS[0].1);
}

#[test]
fn complete_invariants_regressions() {
    replay(TARGETS[1].0, TARGETS[1].1);
}

#[test]
fn discovery_termination_regressions() {
    replay(TARGETS[2].0, TARGETS[2].1);
}
