//! Replays every saved fuzz input in `fuzz/regressions/<target>/` through the same invariant
//! checks the cargo-fuzz targets run, so plain `cargo test` guards against regressions.

use std::fs;
use std::path::{Path, PathBuf};

use rea::core::SCAN_LIMIT;
use rea::fuzzing::core::{
    CompleteCase, Violation, check_complete_bytes, check_discovery_bytes, check_key_bytes,
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

/// A `complete_invariants` input that repeats its candidates past `SCAN_LIMIT` stops one list
/// length past it: the repeats beyond are never scanned, and building them made the target
/// crawl.
#[test]
fn complete_cases_stop_one_candidate_list_past_the_scan_limit() {
    let case = CompleteCase::from_bytes(&[255, 0, b'p', 0xFF, b'a', 0xFF, b'b']);
    assert_eq!(case.prefix, "p");
    assert_eq!(case.candidates.len(), SCAN_LIMIT + 2);
    assert!(
        case.candidates
            .chunks(2)
            .all(|pair| pair == ["a", "b"] || pair == ["a"])
    );
    let fewer = CompleteCase::from_bytes(&[240, 0, b'p', 0xFF, b'a', 0xFF, b'b']);
    assert_eq!(fewer.candidates.len(), 800 * 2);
}
