//! Inventories of real directory trees: digests, formats, links, bounds, pages and errors.

use std::os::unix::fs::symlink;
use std::os::unix::net::UnixListener;

use crate::support::inventory::{
    ELF, MACH_O, app_v1, paths, rejections, sha256_hex, write_file, write_tree, zip_of,
};
use rea::inventory::{
    ExecutableFormat, Inventory, InventoryError, InventoryLimits, PageSize, RejectReason, RootKind,
    manifest_id_of, occurrence_id_for, parse_page,
};
use serde_json::json;

fn snapshot(name: &str, text: &str) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(format!("inventory_directory__{name}"), text);
    });
}

fn inventory(root: &std::path::Path) -> Inventory {
    Inventory::of_directory(root, &InventoryLimits::default()).unwrap()
}

#[test]
fn files_get_size_digest_format_and_stable_ids() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &app_v1());
    let inventory = inventory(dir.path());
    let paths = paths(&inventory);
    assert_eq!(
        paths,
        [
            "README.txt",
            "bin/app",
            "lib/libcore.dylib",
            "scripts/run.sh",
            "tools/setup.exe"
        ]
    );
    let formats: Vec<ExecutableFormat> = inventory.occurrences().iter().map(|o| o.format).collect();
    assert_eq!(
        formats,
        [
            ExecutableFormat::Unknown,
            ExecutableFormat::Elf,
            ExecutableFormat::MachO,
            ExecutableFormat::Script,
            ExecutableFormat::Pe
        ]
    );
    for (path, bytes) in app_v1() {
        let occurrence = inventory
            .occurrences()
            .iter()
            .find(|o| o.path == path)
            .unwrap();
        assert_eq!(occurrence.size, bytes.len() as u64);
        assert_eq!(occurrence.sha256, sha256_hex(&bytes));
        assert_eq!(
            occurrence.occurrence_id,
            occurrence_id_for(inventory.manifest_id(), path)
        );
    }
    let expected = manifest_id_of(
        inventory
            .occurrences()
            .iter()
            .map(|o| (o.path.as_str(), o.sha256.as_str())),
    );
    assert_eq!(inventory.manifest_id(), expected);
    assert!(inventory.manifest_id().starts_with("man-") && inventory.manifest_id().len() == 36);
    assert!(inventory.rejected().is_empty());
    assert_eq!(inventory.root().path, dir.path().to_str().unwrap());
}

#[test]
fn manifest_id_depends_on_content_only() {
    let first = tempfile::tempdir().unwrap();
    let second = tempfile::tempdir().unwrap();
    write_tree(first.path(), &app_v1());
    // Same files written in the opposite order, in another place.
    let mut reversed = app_v1();
    reversed.reverse();
    write_tree(second.path(), &reversed);
    let archive = first.path().join("app.zip");
    let (a, b) = (inventory(first.path()), inventory(second.path()));
    std::fs::write(&archive, zip_of(&app_v1())).unwrap();
    let zipped = Inventory::of_zip_file(&archive, &InventoryLimits::default()).unwrap();
    assert_eq!(a.manifest_id(), b.manifest_id());
    assert_eq!(a.occurrences(), b.occurrences());
    assert_eq!(a.manifest_id(), zipped.manifest_id());

    write_file(second.path(), "README.txt", b"changed");
    assert_ne!(inventory(second.path()).manifest_id(), a.manifest_id());
}

#[test]
fn links_are_never_followed_outside_the_root() {
    let outside = tempfile::tempdir().unwrap();
    write_file(outside.path(), "secret", b"outside the root");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_file(root, "bin/app", ELF);
    write_file(root, "lib/libcore.dylib", MACH_O);
    symlink("bin/app", root.join("app-link")).unwrap();
    symlink(outside.path().join("secret"), root.join("escape")).unwrap();
    symlink("../../..", root.join("bin/up")).unwrap();
    symlink("lib", root.join("lib-link")).unwrap();
    symlink("nowhere", root.join("dangling")).unwrap();
    symlink("loop", root.join("loop")).unwrap();
    let _socket = UnixListener::bind(root.join("socket")).unwrap();

    let inventory = inventory(root);
    let paths = paths(&inventory);
    // Links are reported, never followed, not even to a file inside the root.
    assert_eq!(paths, ["bin/app", "lib/libcore.dylib"]);
    let rejected = rejections(&inventory);
    assert_eq!(
        rejected,
        [
            ("app-link", RejectReason::Symlink),
            ("bin/up", RejectReason::Symlink),
            ("dangling", RejectReason::Symlink),
            ("escape", RejectReason::Symlink),
            ("lib-link", RejectReason::Symlink),
            ("loop", RejectReason::Symlink),
            ("socket", RejectReason::SpecialFile),
        ]
    );
    for occurrence in inventory.occurrences() {
        assert_ne!(occurrence.sha256, sha256_hex(b"outside the root"));
    }
}

#[test]
fn a_root_that_is_a_link_is_inventoried_at_its_target() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(&dir.path().join("real"), &app_v1());
    symlink("real", dir.path().join("alias")).unwrap();
    let through_link = inventory(&dir.path().join("alias"));
    assert_eq!(through_link.occurrences().len(), app_v1().len());
    assert_eq!(
        through_link.manifest_id(),
        inventory(&dir.path().join("real")).manifest_id()
    );
}

#[test]
fn bounds_reject_entries_or_fail_the_inventory() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &app_v1());
    write_file(dir.path(), "a/b/c/d/deep.txt", b"deep");
    let limits = |f: fn(&mut InventoryLimits)| {
        let mut limits = InventoryLimits::default();
        f(&mut limits);
        limits
    };

    let small_files =
        Inventory::of_directory(dir.path(), &limits(|l| l.max_file_bytes = 10)).unwrap();
    let too_large: Vec<(&str, Option<u64>)> = small_files
        .rejected()
        .iter()
        .filter(|r| r.reason == RejectReason::TooLarge)
        .map(|r| (r.path.as_str(), r.size))
        .collect();
    assert_eq!(
        too_large,
        [
            ("bin/app", Some(29)),
            ("lib/libcore.dylib", Some(22)),
            ("scripts/run.sh", Some(23)),
            ("tools/setup.exe", Some(72)),
        ]
    );

    let shallow = Inventory::of_directory(dir.path(), &limits(|l| l.max_depth = 2)).unwrap();
    assert!(
        shallow
            .rejected()
            .iter()
            .any(|r| r.path == "a/b/c" && r.reason == RejectReason::TooDeep)
    );
    assert!(
        shallow
            .occurrences()
            .iter()
            .all(|o| o.path != "a/b/c/d/deep.txt")
    );

    assert!(matches!(
        Inventory::of_directory(dir.path(), &limits(|l| l.max_entries = 5)),
        Err(InventoryError::TooManyEntries { limit: 5, .. })
    ));
    assert!(matches!(
        Inventory::of_directory(dir.path(), &limits(|l| l.max_total_bytes = 100)),
        Err(InventoryError::TooManyBytes { limit: 100, .. })
    ));
}

#[test]
fn pages_cover_everything_and_validate() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &app_v1());
    symlink("/", dir.path().join("root-link")).unwrap();
    let inventory = inventory(dir.path());
    let size = PageSize::new(2).unwrap();
    assert_eq!(inventory.page_count(size), 3);
    let pages: Vec<_> = inventory.pages(size).collect();
    assert_eq!(pages.len(), 3);
    let mut all = Vec::new();
    for (index, page) in pages.iter().enumerate() {
        assert_eq!(page.page.index, index as u64);
        assert_eq!(page.page.count, 3);
        let document = serde_json::to_value(page).unwrap();
        assert_eq!(parse_page(&document).unwrap(), *page);
        all.extend(page.occurrences.iter().cloned());
    }
    assert_eq!(all, inventory.occurrences());
    assert_eq!(pages[0].rejected.len(), 1);
    assert!(inventory.page(3, size).is_none());
    assert_eq!(inventory.page_count(PageSize::default()), 1);

    let empty = tempfile::tempdir().unwrap();
    let nothing = Inventory::of_directory(empty.path(), &InventoryLimits::default()).unwrap();
    let page = nothing.page(0, PageSize::default()).unwrap();
    assert_eq!(page.page.count, 1);
    assert!(parse_page(&serde_json::to_value(&page).unwrap()).is_ok());
    assert_eq!(
        serde_json::to_value(&page).unwrap()["occurrences"],
        json!([])
    );
}

#[test]
fn open_picks_directory_or_zip() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(&dir.path().join("app"), &app_v1());
    std::fs::write(dir.path().join("app.zip"), zip_of(&app_v1())).unwrap();
    let limits = InventoryLimits::default();
    let folder = Inventory::open(&dir.path().join("app"), &limits).unwrap();
    let archive = Inventory::open(&dir.path().join("app.zip"), &limits).unwrap();
    assert_eq!(folder.root().kind, RootKind::Directory);
    assert_eq!(archive.root().kind, RootKind::Zip);
    assert_eq!(folder.manifest_id(), archive.manifest_id());
}

#[test]
fn error_messages() {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "file", b"x");
    write_file(dir.path(), "not-a-zip.zip", b"this is not an archive");
    let limits = InventoryLimits::default();
    let mut messages = vec![
        Inventory::of_directory(&dir.path().join("missing"), &limits)
            .unwrap_err()
            .to_string(),
        Inventory::of_directory(&dir.path().join("file"), &limits)
            .unwrap_err()
            .to_string(),
        Inventory::of_zip_file(&dir.path().join("not-a-zip.zip"), &limits)
            .unwrap_err()
            .to_string(),
        Inventory::of_zip_file(&dir.path().join("missing.zip"), &limits)
            .unwrap_err()
            .to_string(),
        Inventory::of_directory(
            dir.path(),
            &InventoryLimits {
                max_entries: 1,
                ..InventoryLimits::default()
            },
        )
        .unwrap_err()
        .to_string(),
        Inventory::of_directory(
            dir.path(),
            &InventoryLimits {
                max_total_bytes: 5,
                ..InventoryLimits::default()
            },
        )
        .unwrap_err()
        .to_string(),
        {
            let _socket = UnixListener::bind(dir.path().join("socket")).unwrap();
            Inventory::open(&dir.path().join("socket"), &limits)
                .unwrap_err()
                .to_string()
        },
        Inventory::open(&dir.path().join("missing"), &limits)
            .unwrap_err()
            .to_string(),
        PageSize::new(0).unwrap_err().to_string(),
        PageSize::new(1001).unwrap_err().to_string(),
    ];
    {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let bad = dir.path().join(OsStr::from_bytes(b"bad\xffname"));
        messages.push(
            Inventory::of_directory(&bad, &limits)
                .unwrap_err()
                .to_string(),
        );
    }
    let text = messages.join("\n");
    let mut settings = crate::support::snapshots::settings();
    crate::support::snapshots::filter_path(&mut settings, dir.path(), "[tmp]");
    settings.bind(|| snapshot("error_messages", &text));
}
