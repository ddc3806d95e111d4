//! Properties of inventories: manifest IDs independent of order, pages that cover everything and
//! validate, and comparison symmetric in its arguments.

use std::collections::BTreeMap;
use std::io::Cursor;

use crate::support::inventory::{ZipEntry, write_file, zip_bytes};
use proptest::prelude::*;
use rea::inventory::{
    Inventory, InventoryLimits, PageSize, compare_inventories, manifest_id_of, parse_page,
};

/// Path components with the hard cases: combining marks, Hangul, case variants, dots that are
/// not `.` or `..`, and long names.
fn component() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-zA-Z0-9_-]{1,8}",
        "[eé\u{301}가각A-Z]{1,4}",
        Just("...".to_owned()),
        Just(".hidden".to_owned()),
        Just("x".repeat(200)),
    ]
}

fn path() -> impl Strategy<Value = String> {
    prop::collection::vec(component(), 1..4).prop_map(|parts| parts.join("/"))
}

/// Files keyed by path; contents short and often shared between paths.
fn files() -> impl Strategy<Value = BTreeMap<String, Vec<u8>>> {
    prop::collection::btree_map(path(), prop::collection::vec(0u8..4, 0..6), 0..24)
}

fn zip_inventory(files: &[(&String, &Vec<u8>)]) -> Inventory {
    let entries: Vec<ZipEntry<'_>> = files
        .iter()
        .map(|(path, bytes)| ZipEntry::File(path, bytes))
        .collect();
    Inventory::of_zip_reader(
        Cursor::new(zip_bytes(&entries)),
        "test.zip",
        &InventoryLimits::default(),
    )
    .unwrap()
}

proptest! {
    #[test]
    fn manifest_id_ignores_order(
        pairs in prop::collection::btree_map(path(), "[0-9a-f]{64}", 0..30),
        seed in any::<u64>(),
    ) {
        let mut shuffled: Vec<(&str, &str)> =
            pairs.iter().map(|(p, s)| (p.as_str(), s.as_str())).collect();
        let sorted = manifest_id_of(shuffled.iter().copied());
        shuffled.sort_by_key(|(path, _)| {
            path.bytes().fold(seed, |h, b| h.rotate_left(5) ^ u64::from(b))
        });
        prop_assert_eq!(manifest_id_of(shuffled.iter().copied()), sorted);
    }

    #[test]
    fn archive_order_does_not_change_the_inventory(files in files(), seed in any::<u64>()) {
        let mut entries: Vec<(&String, &Vec<u8>)> = files.iter().collect();
        let forward = zip_inventory(&entries);
        entries.sort_by_key(|(path, _)| {
            path.bytes().fold(seed, |h, b| h.rotate_left(7) ^ u64::from(b))
        });
        let shuffled = zip_inventory(&entries);
        prop_assert_eq!(forward.manifest_id(), shuffled.manifest_id());
        prop_assert_eq!(forward.occurrences(), shuffled.occurrences());
        let paths: Vec<&str> = forward.occurrences().iter().map(|o| o.path.as_str()).collect();
        let expected: Vec<&str> = files.keys().map(String::as_str).collect();
        prop_assert_eq!(paths, expected);
    }

    #[test]
    fn pages_cover_the_inventory_and_validate(files in files(), size in 1usize..8) {
        let inventory = zip_inventory(&files.iter().collect::<Vec<_>>());
        let size = PageSize::new(size).unwrap();
        let pages: Vec<_> = inventory.pages(size).collect();
        prop_assert_eq!(pages.len(), inventory.occurrences().len().div_ceil(size.get()).max(1));
        let mut all = Vec::new();
        for page in &pages {
            let document = serde_json::to_value(page).unwrap();
            prop_assert_eq!(&parse_page(&document).unwrap(), page);
            all.extend(page.occurrences.iter().cloned());
        }
        prop_assert_eq!(all, inventory.occurrences());
    }

    #[test]
    fn comparison_is_symmetric(
        before in files(),
        after in files(),
        shared in prop::collection::btree_map(path(), prop::collection::vec(0u8..4, 0..6), 0..8),
        sizes in (1usize..6, 1usize..6),
    ) {
        // Paths in `shared` are in both, with the second version's content sometimes changed.
        let mut old = before.clone();
        let mut new = after.clone();
        for (path, bytes) in &shared {
            old.insert(path.clone(), bytes.clone());
            let mut changed = bytes.clone();
            if bytes.len() % 2 == 0 { changed.push(9); }
            new.insert(path.clone(), changed);
        }
        let old_pages: Vec<_> = zip_inventory(&old.iter().collect::<Vec<_>>())
            .pages(PageSize::new(sizes.0).unwrap()).collect();
        let new_pages: Vec<_> = zip_inventory(&new.iter().collect::<Vec<_>>())
            .pages(PageSize::new(sizes.1).unwrap()).collect();
        let forward = compare_inventories(&old_pages, &new_pages).unwrap();
        let backward = compare_inventories(&new_pages, &old_pages).unwrap();
        prop_assert_eq!(&forward.added, &backward.removed);
        prop_assert_eq!(&forward.removed, &backward.added);
        prop_assert_eq!(forward.unchanged, backward.unchanged);
        prop_assert_eq!(forward.changed.len(), backward.changed.len());
        for (f, b) in forward.changed.iter().zip(&backward.changed) {
            prop_assert_eq!(&f.before, &b.after);
            prop_assert_eq!(&f.after, &b.before);
        }
        // Every path is accounted for exactly once.
        let old_paths = old.len();
        prop_assert_eq!(
            forward.removed.len() + forward.changed.len() + forward.unchanged,
            old_paths
        );
        prop_assert!(forward.added.iter().all(|o| !old.contains_key(&o.path)));
        let self_diff = compare_inventories(&old_pages, &old_pages).unwrap();
        prop_assert_eq!(self_diff.unchanged, old_paths);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Real directories written in different orders give the same manifest.
    #[test]
    fn directory_walk_order_does_not_matter(
        leaves in prop::collection::btree_map("[a-z]{1,6}", prop::collection::vec(any::<u8>(), 0..16), 1..12),
        seed in any::<u64>(),
    ) {
        let files: Vec<(String, Vec<u8>)> = leaves
            .into_iter()
            .enumerate()
            .map(|(n, (leaf, bytes))| (format!("d{}/f{leaf}", n % 3), bytes))
            .collect();
        let first = tempfile::tempdir().unwrap();
        let second = tempfile::tempdir().unwrap();
        for (path, bytes) in &files {
            write_file(first.path(), path, bytes);
        }
        let mut reordered = files.clone();
        reordered.sort_by_key(|(path, _)| path.bytes().fold(seed, |h, b| h.rotate_left(3) ^ u64::from(b)));
        for (path, bytes) in &reordered {
            write_file(second.path(), path, bytes);
        }
        let limits = InventoryLimits::default();
        let a = Inventory::of_directory(first.path(), &limits).unwrap();
        let b = Inventory::of_directory(second.path(), &limits).unwrap();
        prop_assert_eq!(a.manifest_id(), b.manifest_id());
        prop_assert_eq!(a.occurrences(), b.occurrences());
    }
}
