//! Every cargo-fuzz target has saved inputs, and a plain `cargo test` file replays them, so a
//! new target cannot go without replay.

use std::fs;
use std::path::Path;

fn root() -> &'static Path {
    crate::root()
}

fn declared_targets() -> Vec<String> {
    let manifest = fs::read_to_string(root().join("fuzz/Cargo.toml")).expect("fuzz/Cargo.toml");
    manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|section| {
            section
                .lines()
                .find_map(|line| line.strip_prefix("name = "))
        })
        .map(|name| name.trim_matches('"').to_owned())
        .collect()
}

/// The text of every Rust file under `tests/`.
fn test_sources() -> Vec<String> {
    let mut sources = Vec::new();
    let mut folders = vec![root().join("tests")];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push(fs::read_to_string(path).unwrap());
            }
        }
    }
    sources
}

#[test]
fn every_fuzz_target_has_saved_inputs_and_a_replay_test() {
    let targets = declared_targets();
    assert!(
        targets.len() >= 11,
        "the fuzz targets are declared: {targets:?}"
    );
    let sources = test_sources();
    for target in &targets {
        assert!(
            root()
                .join("fuzz/fuzz_targets")
                .join(format!("{target}.rs"))
                .exists(),
            "{target} has a source file"
        );
        let saved = root().join("fuzz/regressions").join(target);
        let count = fs::read_dir(&saved).map_or(0, |entries| entries.count());
        assert!(
            count > 0,
            "{target} has saved inputs in fuzz/regressions/{target}"
        );
        assert!(
            sources
                .iter()
                .any(|text| text.contains(target.as_str()) && text.contains("regressions")),
            "a test replays fuzz/regressions/{target}"
        );
    }
    for folder in fs::read_dir(root().join("fuzz/regressions")).unwrap() {
        let name = folder.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            targets.contains(&name),
            "regression folder {name} belongs to a declared target"
        );
    }
}
