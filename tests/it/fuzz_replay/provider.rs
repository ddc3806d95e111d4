//! Replays the saved inputs of the `native_provider`, `catalog_parser` and `adapter_reply` fuzz
//! targets through their invariant checks, and runs the same checks on freshly generated binaries and catalogs.

use crate::support::fixtures::{Format, Spec, build, macho};
use rea::fuzzing::providers::{check_catalog, check_native};

/// Every saved input of `target`, with its file name.
fn saved_inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let folder = crate::root().join("fuzz/regressions").join(target);
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&folder)
        .expect("regression folder exists")
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .filter(|(name, _)| !name.ends_with(".md"))
        .collect();
    inputs.sort();
    inputs
}

#[test]
fn saved_native_provider_inputs_keep_their_invariants() {
    let inputs = saved_inputs("native_provider");
    assert!(inputs.len() >= 3, "the saved inputs are present");
    for (name, bytes) in inputs {
        println!("replaying {name}");
        check_native(&bytes);
    }
}

#[test]
fn saved_catalog_parser_inputs_keep_their_invariants() {
    let inputs = saved_inputs("catalog_parser");
    assert!(inputs.len() >= 3, "the saved inputs are present");
    for (name, bytes) in inputs {
        println!("replaying {name}");
        check_catalog(&bytes);
    }
}

#[test]
fn generated_binaries_keep_the_native_invariants() {
    for format in [Format::Elf, Format::MachO, Format::Pe] {
        for spec in [
            Spec::sample(),
            Spec::sample().stripped(),
            Spec::numbered(700),
        ] {
            check_native(&build(&spec, format).bytes);
        }
    }
    let thin = macho::build(&Spec::sample(), macho::ARM64);
    check_native(&macho::fat(&[
        (macho::ARM64, &thin.bytes),
        (macho::ARM64E, &thin.bytes),
    ]));
}

#[test]
fn saved_adapter_reply_inputs_keep_their_invariants() {
    let inputs = saved_inputs("adapter_reply");
    assert!(inputs.len() >= 3, "the saved inputs are present");
    for (name, bytes) in inputs {
        println!("replaying {name}");
        rea::fuzzing::providers::check_adapter_reply(&bytes);
    }
}
