//! Replays every saved fuzz input in `fuzz/regressions/<target>/` through the same invariant
//! checks the cargo-fuzz targets run, so plain `cargo test` guards against regressions.

use std::fs;
use std::path::{Path, PathBuf};

use rea::core::{MAX_VALUE_CHARS, SCAN_LIMIT};
use rea::fuzzing::core::{
    CompleteCase, MAX_LISTED_CANDIDATES, MAX_REPEATED_CANDIDATES, Violation, check_complete,
    check_complete_bytes, check_discovery_bytes, check_index_bytes, check_key_bytes,
};

type Check = fn(&[u8]) -> Result<(), Violation>;

/// Each fuzz target and the check it runs.
const TARGETS: [(&str, Check); 4] = [
    ("key_invariants", check_key_bytes),
    ("complete_invariants", check_complete_bytes),
    ("discovery_termination", check_discovery_bytes),
    ("index_equality", check_index_bytes),
];

fn fuzz_dir() -> PathBuf {
    crate::root().join("fuzz")
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

#[test]
fn index_equality_regressions() {
    replay(TARGETS[3].0, TARGETS[3].1);
}

/// `complete_invariants` inputs repeat their candidates at most to
/// `MAX_REPEATED_CANDIDATES`, never to `SCAN_LIMIT`: cases at that bound cost as much as
/// thousands of small ones and made the target crawl. The bound itself is checked here, with
/// the same invariant check the target runs, on lists that cross it.
#[test]
fn complete_cases_repeat_below_the_scan_limit_and_the_bound_is_checked_here() {
    let case = CompleteCase::from_bytes(&[255, 0, b'p', 0xFF, b'a', 0xFF, b'b']);
    assert_eq!(case.prefix, "p");
    assert_eq!(case.candidates.len(), 256 * 2);
    assert!(case.candidates.chunks(2).all(|pair| pair == ["a", "b"]));
    let mut long = vec![255, 0, b'p'];
    long.extend(std::iter::repeat_n([0xFF, b'p', b'x'], 100).flatten());
    let capped = CompleteCase::from_bytes(&long);
    assert_eq!(capped.candidates.len(), MAX_REPEATED_CANDIDATES);
    let once = CompleteCase::from_bytes(&[251, 0, b'p', 0xFF, b'a', 0xFF, b'b']);
    assert_eq!(once.candidates, ["a", "b"]);
    for (prefix, list) in [
        ("p", vec!["pa", "pb", "q"]),
        ("", vec!["x", "y"]),
        ("a", vec!["A", "ä", "b"]),
    ] {
        let distinct: Vec<String> = (0..150).map(|n| format!("{prefix}{n}")).collect();
        for crossing in [SCAN_LIMIT - 1, SCAN_LIMIT, SCAN_LIMIT + 1, SCAN_LIMIT + 7] {
            let mut candidates: Vec<String> = list.iter().map(|c| c.to_string()).collect();
            candidates.extend(distinct.iter().cloned());
            let candidates: Vec<String> =
                candidates.iter().cycle().take(crossing).cloned().collect();
            assert_eq!(
                check_complete(prefix, &candidates),
                Ok(()),
                "{prefix:?} {crossing}"
            );
        }
    }
}

/// One input in sixteen stretches a value to the length bound; the rest stay short and cheap.
#[test]
fn complete_cases_stretch_only_when_the_high_bits_say_so() {
    let stretched = CompleteCase::from_bytes(&[0, 0xF9, b'p']);
    assert_eq!(stretched.prefix.chars().count(), MAX_VALUE_CHARS + 1);
    let plain = CompleteCase::from_bytes(&[0, 0x09, b'p']);
    assert_eq!(plain.prefix, "p");
    let mut many = vec![0, 0, b'p'];
    many.extend(std::iter::repeat_n([0xFF, b'c'], 1_000).flatten());
    assert_eq!(
        CompleteCase::from_bytes(&many).candidates.len(),
        MAX_LISTED_CANDIDATES
    );
}
