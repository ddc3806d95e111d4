//! Inventories of zip archives: entries are hashed in memory, never extracted; unsafe names,
//! links and duplicates are reported.

use std::io::Cursor;

use crate::support::inventory::{
    ELF, ZipEntry, app_v1, paths, rejections, sha256_hex, write_tree, zip_bytes, zip_of,
};
use rea::inventory::{
    ExecutableFormat, Inventory, InventoryError, InventoryLimits, PageSize, RejectReason,
    parse_page,
};

fn read(bytes: Vec<u8>, limits: &InventoryLimits) -> Result<Inventory, InventoryError> {
    Inventory::of_zip_reader(Cursor::new(bytes), "app.zip", limits)
}

#[test]
fn unsafe_entries_are_reported_and_never_extracted() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("shipped.zip");
    let nested = zip_of(&[("inner", b"inner".to_vec())]);
    std::fs::write(
        &archive,
        zip_bytes(&[
            ZipEntry::File("bin/app", ELF),
            ZipEntry::Stored("./lib//libx.so", ELF),
            ZipEntry::File("win\\tool.exe", b"MZ"),
            ZipEntry::File("../evil", b"escape"),
            ZipEntry::File("a/../../evil2", b"escape"),
            ZipEntry::File("/abs", b"absolute"),
            ZipEntry::File("C:\\windows\\evil", b"drive"),
            ZipEntry::Dir("../evil-dir/"),
            ZipEntry::Dir("docs/"),
            ZipEntry::Symlink("link", "/etc/passwd"),
            ZipEntry::File("bin//app", b"dup"),
            ZipEntry::File("nested.zip", &nested),
        ]),
    )
    .unwrap();
    let before: Vec<_> = walk(dir.path());
    let inventory = Inventory::of_zip_file(&archive, &InventoryLimits::default()).unwrap();
    // Nothing was written anywhere near the archive.
    assert_eq!(walk(dir.path()), before);
    assert!(!dir.path().parent().unwrap().join("evil").exists());

    let occurrences: Vec<(&str, ExecutableFormat)> = inventory
        .occurrences()
        .iter()
        .map(|o| (o.path.as_str(), o.format))
        .collect();
    assert_eq!(
        occurrences,
        [
            ("lib/libx.so", ExecutableFormat::Elf),
            ("nested.zip", ExecutableFormat::Zip),
            ("win/tool.exe", ExecutableFormat::Unknown),
        ]
    );
    assert_eq!(inventory.occurrences()[0].sha256, sha256_hex(ELF));
    let rejected = rejections(&inventory);
    assert_eq!(
        rejected,
        [
            ("../evil", RejectReason::ParentComponent),
            ("../evil-dir/", RejectReason::ParentComponent),
            ("/abs", RejectReason::AbsolutePath),
            ("C:\\windows\\evil", RejectReason::AbsolutePath),
            ("a/../../evil2", RejectReason::ParentComponent),
            // `bin//app` is `bin/app` once normalised: neither is inventoried.
            ("bin//app", RejectReason::DuplicatePath),
            ("bin/app", RejectReason::DuplicatePath),
            ("link", RejectReason::Symlink),
        ]
    );
    for page in inventory.pages(PageSize::default()) {
        parse_page(&serde_json::to_value(&page).unwrap()).unwrap();
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    found.sort();
    found
}

/// The archive of `entries` read, as (occurrence paths, rejected (path, reason)).
fn outcome(entries: &[ZipEntry<'_>]) -> (Vec<String>, Vec<(String, RejectReason)>) {
    let inventory = read(zip_bytes(entries), &InventoryLimits::default()).unwrap();
    let listed = paths(&inventory).into_iter().map(str::to_owned).collect();
    let rejected = rejections(&inventory)
        .into_iter()
        .map(|(path, reason)| (path.to_owned(), reason))
        .collect();
    (listed, rejected)
}

#[test]
fn every_spelling_of_one_name_is_reported_and_none_inventoried() {
    let spellings = [
        ("dup.txt", "./dup.txt"),
        ("dup.txt", ".//dup.txt"),
        ("dir/dup.txt", "dir//dup.txt"),
        ("dir/dup.txt", "./dir/./dup.txt"),
        ("dir/dup.txt", "dir\\dup.txt"),
        ("dir/dup.txt", "dir/dup.txt/"),
    ];
    for (plain, spelled) in spellings {
        for (first, second) in [(plain, spelled), (spelled, plain)] {
            let (listed, rejected) = outcome(&[
                ZipEntry::File(first, b"first"),
                ZipEntry::File("other.txt", b"other"),
                ZipEntry::Stored(second, b"second"),
            ]);
            assert_eq!(listed, ["other.txt"], "{first:?} then {second:?}");
            let mut expected = vec![
                (first.to_owned(), RejectReason::DuplicatePath),
                (second.to_owned(), RejectReason::DuplicatePath),
            ];
            expected.sort();
            assert_eq!(rejected, expected, "{first:?} then {second:?}");
        }
    }
}

#[test]
fn a_directory_entry_of_a_file_name_makes_both_duplicates() {
    let (listed, rejected) = outcome(&[
        ZipEntry::File("bin/app", ELF),
        ZipEntry::Dir("bin/app/"),
        ZipEntry::File("bin/tool", ELF),
    ]);
    assert_eq!(listed, ["bin/tool"]);
    assert_eq!(
        rejected,
        [
            ("bin/app".to_owned(), RejectReason::DuplicatePath),
            ("bin/app/".to_owned(), RejectReason::DuplicatePath),
        ]
    );
    // Directories alone sharing a name merge: nothing to report.
    let (listed, rejected) = outcome(&[
        ZipEntry::Dir("docs/"),
        ZipEntry::Dir("./docs//"),
        ZipEntry::File("docs/readme", b"read me"),
    ]);
    assert_eq!(listed, ["docs/readme"]);
    assert_eq!(rejected, []);
}

#[test]
fn a_zip_and_its_unpacked_folder_share_a_manifest() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &app_v1());
    let folder = Inventory::of_directory(dir.path(), &InventoryLimits::default()).unwrap();
    let archive = read(zip_of(&app_v1()), &InventoryLimits::default()).unwrap();
    assert_eq!(folder.manifest_id(), archive.manifest_id());
    assert_eq!(folder.occurrences(), archive.occurrences());
    assert_eq!(archive.root().path, "app.zip");
}

#[test]
fn bounds_apply_to_archives() {
    let big = vec![7u8; 5000];
    let bytes = zip_bytes(&[ZipEntry::File("big", &big), ZipEntry::File("small", b"s")]);
    let small_files = InventoryLimits {
        max_file_bytes: 4096,
        ..InventoryLimits::default()
    };
    let inventory = read(bytes.clone(), &small_files).unwrap();
    assert_eq!(inventory.occurrences().len(), 1);
    assert_eq!(inventory.rejected()[0].reason, RejectReason::TooLarge);
    assert_eq!(inventory.rejected()[0].size, Some(5000));

    let one_entry = InventoryLimits {
        max_entries: 1,
        ..InventoryLimits::default()
    };
    assert!(matches!(
        read(bytes.clone(), &one_entry),
        Err(InventoryError::TooManyEntries { limit: 1, .. })
    ));
    let few_bytes = InventoryLimits {
        max_total_bytes: 100,
        ..InventoryLimits::default()
    };
    assert!(matches!(
        read(bytes, &few_bytes),
        Err(InventoryError::TooManyBytes { limit: 100, .. })
    ));
}

#[test]
fn corrupt_archives_are_errors_or_unreadable_entries() {
    assert!(matches!(
        read(
            b"PK\x05\x06 not really".to_vec(),
            &InventoryLimits::default()
        ),
        Err(InventoryError::NotAZip { .. })
    ));
    // Damage the compressed data of the only entry: the archive opens, the entry is unreadable.
    let content = vec![b'a'; 4000];
    let mut bytes = zip_bytes(&[ZipEntry::File("data", &content)]);
    let header = 30 + "data".len();
    for byte in &mut bytes[header..header + 8] {
        *byte ^= 0x5a;
    }
    let inventory = read(bytes, &InventoryLimits::default()).unwrap();
    assert!(inventory.occurrences().is_empty());
    assert_eq!(inventory.rejected()[0].reason, RejectReason::Unreadable);
}

/// `bytes` with the little-endian `u32` at `offset` past each header `signature` set to
/// `value`.
fn patch_headers(bytes: &mut [u8], signature: &[u8; 4], offset: usize, value: u32) {
    let starts: Vec<usize> = bytes
        .windows(4)
        .enumerate()
        .filter(|(_, window)| window == signature)
        .map(|(start, _)| start)
        .collect();
    assert!(!starts.is_empty());
    for start in starts {
        bytes[start + offset..start + offset + 4].copy_from_slice(&value.to_le_bytes());
    }
}

const LOCAL_HEADER: &[u8; 4] = b"PK\x03\x04";
const CENTRAL_HEADER: &[u8; 4] = b"PK\x01\x02";

#[test]
fn an_entry_that_does_not_match_its_declared_size_or_crc_is_unreadable() {
    let content = b"ten bytes!";
    let archive = || zip_bytes(&[ZipEntry::Stored("data", content)]);
    let intact = read(archive(), &InventoryLimits::default()).unwrap();
    assert_eq!(paths(&intact), ["data"]);
    // Uncompressed size (local header offset 22, central directory offset 24) said larger or
    // smaller than the stored bytes, and a CRC (offsets 14 and 16) that does not match them.
    let cases = [
        ("size larger", 22, 24, 12),
        ("size smaller", 22, 24, 8),
        ("crc", 14, 16, 0xdead_beef),
    ];
    for (case, local, central, value) in cases {
        let mut bytes = archive();
        patch_headers(&mut bytes, LOCAL_HEADER, local, value);
        patch_headers(&mut bytes, CENTRAL_HEADER, central, value);
        let inventory = read(bytes, &InventoryLimits::default()).unwrap();
        assert_eq!(paths(&inventory), [] as [&str; 0], "{case}");
        assert_eq!(
            rejections(&inventory),
            [("data", RejectReason::Unreadable)],
            "{case}"
        );
    }
}
