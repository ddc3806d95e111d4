//! Replays the saved inputs of the `inventory_parser` and `zip_reader` fuzz targets through the
//! same invariant checks the targets run.

use std::io::Cursor;

use rea::inventory::{Inventory, InventoryLimits, RejectReason, parse_page};

fn regressions(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = crate::root()
        .to_path_buf()
        .join("fuzz/regressions")
        .join(target);
    let mut inputs: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty(), "no saved inputs in {}", dir.display());
    inputs
}

fn input(target: &str, name: &str) -> Vec<u8> {
    regressions(target)
        .into_iter()
        .find(|(file, _)| file == name)
        .unwrap()
        .1
}

#[test]
fn inventory_parser_regressions_hold_their_invariants() {
    for (_, data) in regressions("inventory_parser") {
        rea::fuzzing::session::check_inventory_page(&data);
    }
    // The seed page was written by an independent script: its IDs agree with ours.
    let page: serde_json::Value =
        serde_json::from_slice(&input("inventory_parser", "valid_page.json")).unwrap();
    assert_eq!(parse_page(&page).unwrap().occurrences.len(), 3);
}

#[test]
fn zip_reader_regressions_hold_their_invariants() {
    for (_, data) in regressions("zip_reader") {
        rea::fuzzing::session::check_zip(&data);
    }
    let inventory = Inventory::of_zip_reader(
        Cursor::new(input("zip_reader", "unsafe_names.zip")),
        "unsafe_names.zip",
        &InventoryLimits::default(),
    )
    .unwrap();
    let paths: Vec<&str> = inventory
        .occurrences()
        .iter()
        .map(|o| o.path.as_str())
        .collect();
    // `bin/app` and `./bin//app` name one path: neither is inventoried.
    assert_eq!(paths, [] as [&str; 0]);
    let reasons: Vec<(&str, RejectReason)> = inventory
        .rejected()
        .iter()
        .map(|r| (r.path.as_str(), r.reason))
        .collect();
    assert_eq!(
        reasons,
        [
            ("../evil", RejectReason::ParentComponent),
            ("./bin//app", RejectReason::DuplicatePath),
            ("/abs", RejectReason::AbsolutePath),
            ("C:\\win", RejectReason::AbsolutePath),
            ("a/../../b", RejectReason::ParentComponent),
            ("bin/app", RejectReason::DuplicatePath),
            ("link", RejectReason::Symlink),
        ]
    );
}
