//! Comparing two versions of an application and listing occurrences from retained pages.

use std::io::Cursor;

use crate::support::inventory::{app_v1, app_v2, write_tree, zip_of};
use rea::inventory::{
    CompareError, ExecutableFormat, Inventory, InventoryLimits, InventoryPage, OccurrenceFilter,
    PageSize, compare_inventories, find_occurrence, list_occurrences, manifest_ids, valid_pages,
};
use serde_json::json;

fn snapshot_json(name: &str, value: &serde_json::Value) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!(format!("inventory_compare__{name}"), value);
    });
}

fn snapshot(name: &str, text: &str) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(format!("inventory_compare__{name}"), text);
    });
}

fn pages_of(files: &[(&str, Vec<u8>)], size: usize) -> Vec<InventoryPage> {
    let inventory = Inventory::of_zip_reader(
        Cursor::new(zip_of(files)),
        "app.zip",
        &InventoryLimits::default(),
    )
    .unwrap();
    inventory.pages(PageSize::new(size).unwrap()).collect()
}

#[test]
fn two_versions_of_an_application_folder() {
    let (old_dir, new_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_tree(old_dir.path(), &app_v1());
    write_tree(new_dir.path(), &app_v2());
    let limits = InventoryLimits::default();
    let old = Inventory::of_directory(old_dir.path(), &limits).unwrap();
    let new = Inventory::of_directory(new_dir.path(), &limits).unwrap();
    let old_pages: Vec<_> = old.pages(PageSize::new(2).unwrap()).collect();
    let new_pages: Vec<_> = new.pages(PageSize::default()).collect();
    let diff = compare_inventories(&old_pages, &new_pages).unwrap();
    let paths = |list: &[rea::inventory::Occurrence]| {
        list.iter().map(|o| o.path.clone()).collect::<Vec<_>>()
    };
    assert_eq!(paths(&diff.added), ["lib/libnew.so"]);
    assert_eq!(paths(&diff.removed), ["tools/setup.exe"]);
    assert_eq!(diff.changed.len(), 1);
    assert_eq!(diff.changed[0].path, "bin/app");
    assert_eq!(diff.unchanged, 3);
    assert_eq!(diff.before, old.manifest_id());
    assert_eq!(diff.after, new.manifest_id());

    // Swapping the arguments swaps added and removed, and before and after.
    let back = compare_inventories(&new_pages, &old_pages).unwrap();
    assert_eq!(back.added, diff.removed);
    assert_eq!(back.removed, diff.added);
    assert_eq!(back.changed[0].before, diff.changed[0].after);

    let mut value = serde_json::to_value(&diff).unwrap();
    // The tree is the same in every run, so every ID in the diff is stable.
    value["note"] = json!("manifest and occurrence IDs are content-derived");
    snapshot_json("application_diff", &value);
}

#[test]
fn pages_may_come_in_any_order_and_more_than_once() {
    let mut pages = pages_of(&app_v1(), 1);
    let same = pages_of(&app_v1(), 5);
    pages.reverse();
    pages.push(pages[0].clone());
    let diff = compare_inventories(&pages, &same).unwrap();
    assert!(diff.added.is_empty() && diff.removed.is_empty() && diff.changed.is_empty());
    assert_eq!(diff.unchanged, app_v1().len());
}

#[test]
fn comparison_errors() {
    let v1 = pages_of(&app_v1(), 2);
    let v2 = pages_of(&app_v2(), 2);
    let mut messages = Vec::new();
    let mut push = |error: CompareError| messages.push(error.to_string());
    push(compare_inventories(&[], &v2).unwrap_err());
    push(compare_inventories(&v1, &v2[..1]).unwrap_err());
    push(compare_inventories(&[v1[0].clone(), v2[1].clone()], &v2).unwrap_err());
    let mut forged = v1[1].clone();
    forged.occurrences.pop();
    push(
        compare_inventories(&[v1[0].clone(), v1[1].clone(), forged, v1[2].clone()], &v2)
            .unwrap_err(),
    );
    let mut totals = v1.clone();
    totals[1].page.total_occurrences = 4;
    push(compare_inventories(&totals, &v2).unwrap_err());
    let many: Vec<_> = pages_of(
        &(0..30)
            .map(|n| (["f", &n.to_string()].concat(), vec![n]))
            .map(|(p, b)| (p.leak() as &str, b))
            .collect::<Vec<_>>(),
        1,
    );
    push(compare_inventories(&v1, &many[..3]).unwrap_err());
    snapshot("error_messages", &messages.join("\n"));
}

#[test]
fn listing_reads_only_valid_pages() {
    let v1 = pages_of(&app_v1(), 2);
    let v2 = pages_of(&app_v2(), 10);
    let mut documents: Vec<serde_json::Value> = v1
        .iter()
        .chain(&v2)
        .map(|page| serde_json::to_value(page).unwrap())
        .collect();
    documents.push(json!({"schema": "rea.artifact-inventory", "version": 2}));
    let mut forged = documents[0].clone();
    forged["manifest_id"] = json!(format!("man-{}", "f".repeat(32)));
    documents.push(forged);

    let pages = valid_pages(&documents);
    assert_eq!(pages.len(), v1.len() + v2.len());
    assert_eq!(
        manifest_ids(&pages),
        [v1[0].manifest_id.as_str(), v2[0].manifest_id.as_str()]
    );

    let everything = list_occurrences(&pages, &OccurrenceFilter::default());
    assert_eq!(everything.len(), app_v1().len() + app_v2().len());
    let elf_in_lib = list_occurrences(
        &pages,
        &OccurrenceFilter {
            under: Some("lib/".into()),
            format: Some(ExecutableFormat::Elf),
            ..OccurrenceFilter::default()
        },
    );
    assert_eq!(elf_in_lib.len(), 1);
    assert_eq!(elf_in_lib[0].occurrence.path, "lib/libnew.so");
    assert_eq!(elf_in_lib[0].manifest_id, v2[0].manifest_id);
    let not_a_prefix = list_occurrences(
        &pages,
        &OccurrenceFilter {
            under: Some("li".into()),
            ..OccurrenceFilter::default()
        },
    );
    assert!(not_a_prefix.is_empty());
    let only_v1 = list_occurrences(
        &pages,
        &OccurrenceFilter {
            manifest_id: Some(v1[0].manifest_id.clone()),
            ..OccurrenceFilter::default()
        },
    );
    assert_eq!(only_v1.len(), app_v1().len());

    let wanted = &v2[0].occurrences[1];
    let found = find_occurrence(&pages, &wanted.occurrence_id).unwrap();
    assert_eq!(found.occurrence, wanted);
    let listed = serde_json::to_value(found).unwrap();
    assert_eq!(listed["manifest_id"], json!(v2[0].manifest_id));
    assert_eq!(listed["sha256"], json!(wanted.sha256));
    assert!(find_occurrence(&pages, "occ-0").is_none());
}
