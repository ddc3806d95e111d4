//! Directory walks that cannot be raced: links are never followed (not even one swapped in
//! while the walk runs), walks stop when cancelled, later pages come from the same walk, and
//! zip entries sharing a name are all reported.

use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rea::files::Confinement;
use rea::inventory::{Inventory, InventoryError, InventoryLimits, RejectReason};
use rea::session::Cancel;
use rea::tools::ToolBox;
use serde_json::{Map, Value, json};

use crate::support::inventory::{app_v1, sha256_hex, write_file, write_tree};
use crate::support::tools::{closed, failure, success};

const SECRET: &[u8] = b"a secret outside the root";

fn snapshot(name: &str, text: &str) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(format!("inventory_races__{name}"), text);
    });
}

/// One `inventory_artifacts` call that must succeed: the page.
fn page_of(tools: &ToolBox, arguments: Value) -> Map<String, Value> {
    success(tools, "inventory_artifacts", arguments)
}

/// One `inventory_artifacts` call that must fail: the message.
fn refusal(tools: &ToolBox, arguments: Value) -> String {
    failure(tools, "inventory_artifacts", arguments)
}

fn walk(root: &Path) -> Result<Inventory, InventoryError> {
    Inventory::open_with(
        root,
        &InventoryLimits::default(),
        &Confinement::unrestricted(),
        &Cancel::never(),
    )
}

#[test]
fn links_are_reported_never_followed() {
    let outside = tempfile::tempdir().unwrap();
    write_file(outside.path(), "secret", SECRET);
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "bin/app", b"app");
    symlink(outside.path(), dir.path().join("sub")).unwrap();
    symlink(outside.path().join("secret"), dir.path().join("file-link")).unwrap();
    symlink("bin/app", dir.path().join("inside-link")).unwrap();
    let status = std::process::Command::new("mkfifo")
        .arg(dir.path().join("fifo"))
        .status()
        .unwrap();
    assert!(status.success());
    // A FIFO as the root is refused at once, never opened for reading.
    assert!(matches!(
        walk(&dir.path().join("fifo")),
        Err(InventoryError::UnsupportedRoot { .. })
    ));
    let inventory = walk(dir.path()).unwrap();
    let paths: Vec<&str> = inventory
        .occurrences()
        .iter()
        .map(|o| o.path.as_str())
        .collect();
    assert_eq!(paths, ["bin/app"]);
    let rejected: Vec<(&str, RejectReason)> = inventory
        .rejected()
        .iter()
        .map(|r| (r.path.as_str(), r.reason))
        .collect();
    assert_eq!(
        rejected,
        [
            ("fifo", RejectReason::SpecialFile),
            ("file-link", RejectReason::Symlink),
            ("inside-link", RejectReason::Symlink),
            ("sub", RejectReason::Symlink),
        ]
    );
}

#[test]
fn a_directory_swapped_for_a_link_during_walks_is_never_followed() {
    let outside = tempfile::tempdir().unwrap();
    write_file(outside.path(), "secret", SECRET);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    write_tree(&root, &app_v1());
    write_file(&root, "sub/secret", b"the real file inside");
    let stop = Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = Arc::clone(&stop);
        let root = root.clone();
        let outside = outside.path().to_owned();
        std::thread::spawn(move || {
            let sub = root.join("sub");
            let parked = root.join("parked");
            let mut swaps = 0u32;
            while !stop.load(Ordering::Relaxed) || swaps < 2 {
                // Swap the directory for a link to the outside, then back.
                std::fs::rename(&sub, &parked).unwrap();
                symlink(&outside, &sub).unwrap();
                std::thread::yield_now();
                std::fs::remove_file(&sub).unwrap();
                std::fs::rename(&parked, &sub).unwrap();
                swaps += 1;
            }
        })
    };
    let secret = sha256_hex(SECRET);
    for _ in 0..40 {
        let inventory = walk(&root).unwrap();
        assert!(
            inventory.occurrences().iter().all(|o| o.sha256 != secret),
            "a file outside the root was hashed"
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
}

#[test]
fn a_cancelled_walk_stops_and_retains_nothing() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &app_v1());
    let cancel = Cancel::new();
    cancel.cancel();
    let error = Inventory::open_with(
        dir.path(),
        &InventoryLimits::default(),
        &Confinement::unrestricted(),
        &cancel,
    )
    .unwrap_err();
    assert!(matches!(error, InventoryError::Cancelled { .. }));
    let mut settings = crate::support::snapshots::settings();
    crate::support::snapshots::filter_path(&mut settings, dir.path(), "[dir]");
    settings.bind(|| snapshot("cancelled", &error.to_string()));
}

#[test]
fn later_pages_come_from_the_same_walk() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &app_v1());
    let root = dir.path().display().to_string();
    let (session, tools) = closed();
    let first = page_of(&tools, json!({"path": root, "page_size": 2}));
    let manifest = first["manifest_id"].as_str().unwrap().to_owned();
    // The tree changes between pages: later pages still belong to the first walk.
    write_file(dir.path(), "added/late.txt", b"late");
    std::fs::remove_file(dir.path().join("bin/app")).unwrap();
    let second = page_of(
        &tools,
        json!({"path": root, "page": 1, "page_size": 2, "manifest_id": manifest}),
    );
    let third = page_of(&tools, json!({"path": root, "page": 2, "page_size": 2}));
    for page in [&second, &third] {
        assert_eq!(page["manifest_id"], json!(manifest));
        assert_eq!(page["page"]["count"], json!(3));
    }
    assert_eq!(session.inventory_pages().len(), 3);
    // Page 0 walks anew.
    let fresh = page_of(&tools, json!({"path": root}));
    assert_ne!(fresh["manifest_id"], json!(manifest));

    let message = refusal(
        &tools,
        json!({"path": root, "page": 1, "manifest_id": "man-00000000000000000000000000000000"}),
    );
    snapshot("not_kept", &message);
}

#[test]
fn a_manifest_id_must_name_a_walk_of_the_path_given() {
    let (one, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_tree(one.path(), &app_v1());
    write_file(other.path(), "other/file", b"other content");
    let [one_root, other_root] = [&one, &other].map(|dir| dir.path().display().to_string());
    let (session, tools) = closed();
    let first = page_of(&tools, json!({"path": one_root, "page_size": 2}));
    let manifest = first["manifest_id"].as_str().unwrap().to_owned();
    page_of(&tools, json!({"path": other_root}));
    let recorded = session.evidence_count();
    // The other tree's path with the first walk's manifest ID, on a later page and on page 0.
    let later = refusal(
        &tools,
        json!({"path": other_root, "page": 1, "page_size": 2, "manifest_id": manifest}),
    );
    let first_page = refusal(&tools, json!({"path": other_root, "manifest_id": manifest}));
    // Caller text is quoted cut to 64 characters.
    let long = refusal(
        &tools,
        json!({"path": "p".repeat(4096), "page": 1, "manifest_id": manifest}),
    );
    assert!(!long.contains(&"p".repeat(65)), "{long}");
    assert_eq!(
        session.evidence_count(),
        recorded,
        "an error recorded Evidence"
    );
    let mut settings = crate::support::snapshots::settings();
    crate::support::snapshots::filter_path(&mut settings, one.path(), "[one]");
    crate::support::snapshots::filter_path(&mut settings, other.path(), "[other]");
    settings.add_filter(&regex::escape(&manifest), "[manifest]");
    settings.bind(|| snapshot("other_root", &[later, first_page, long].join("\n")));
    // The same path spelled with a trailing slash names the same walk.
    let spelled = page_of(
        &tools,
        json!({"path": format!("{one_root}/"), "page": 1, "page_size": 2, "manifest_id": manifest}),
    );
    assert_eq!(spelled["root"]["path"], json!(one_root));
}

#[test]
fn two_trees_with_one_manifest_id_keep_their_own_roots() {
    let (one, other) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_tree(one.path(), &app_v1());
    write_tree(other.path(), &app_v1());
    let [one_root, other_root] = [&one, &other].map(|dir| dir.path().display().to_string());
    let (_session, tools) = closed();
    let first = page_of(&tools, json!({"path": one_root, "page_size": 2}));
    let again = page_of(&tools, json!({"path": other_root, "page_size": 2}));
    // Same contents, same manifest ID: each root's later pages come from its own walk.
    assert_eq!(first["manifest_id"], again["manifest_id"]);
    for root in [&one_root, &other_root] {
        let page = page_of(
            &tools,
            json!({"path": root, "page": 1, "page_size": 2, "manifest_id": first["manifest_id"]}),
        );
        assert_eq!(page["root"]["path"], json!(root));
    }
}

/// A stored zip archive whose entries are written as given, duplicates included (the `zip`
/// writer refuses duplicate names).
fn raw_zip(entries: &[(&str, &[u8])]) -> Vec<u8> {
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in bytes {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in entries {
        let offset = out.len() as u32;
        let crc = crc32(data);
        let size = data.len() as u32;
        let name_len = name.len() as u16;
        out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
        out.extend_from_slice(&[20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&size.to_le_bytes());
        out.extend_from_slice(&name_len.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(data);
        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        central.extend_from_slice(&[20, 0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        central.extend_from_slice(&crc.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&size.to_le_bytes());
        central.extend_from_slice(&name_len.to_le_bytes());
        central.extend_from_slice(&[0; 12]);
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let start = out.len() as u32;
    let count = entries.len() as u16;
    out.extend_from_slice(&central);
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    out.extend_from_slice(&(central.len() as u32).to_le_bytes());
    out.extend_from_slice(&start.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

#[test]
fn zip_entries_sharing_a_name_are_all_reported() {
    let bytes = raw_zip(&[
        ("dup.txt", b"first"),
        ("other.txt", b"other"),
        ("dup.txt", b"second"),
    ]);
    let inventory = Inventory::of_zip_reader(
        std::io::Cursor::new(bytes),
        "dup.zip",
        &InventoryLimits::default(),
    )
    .unwrap();
    let paths: Vec<&str> = inventory
        .occurrences()
        .iter()
        .map(|o| o.path.as_str())
        .collect();
    assert_eq!(paths, ["other.txt"]);
    let rejected: Vec<(&str, RejectReason)> = inventory
        .rejected()
        .iter()
        .map(|r| (r.path.as_str(), r.reason))
        .collect();
    assert_eq!(
        rejected,
        [
            ("dup.txt", RejectReason::DuplicatePath),
            ("dup.txt", RejectReason::DuplicatePath),
        ]
    );
}

/// Ways of writing the entry name of `base` that all normalise to `base`: as is, `./`, repeated
/// slashes (as is for a one-component name, an exact repeat), backslashes, `.//` and `/./`,
/// and a trailing slash (a directory entry).
fn spell(base: &str, spelling: usize) -> String {
    match spelling {
        0 => base.to_owned(),
        1 => format!("./{base}"),
        2 => base.replace('/', "//"),
        3 => base.replace('/', "\\"),
        4 => format!(".//{}", base.replace('/', "/./")),
        _ => format!("{base}/"),
    }
}

/// Every way of writing a name [`spell`] knows, the directory one last.
const SPELLINGS: usize = 6;

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    /// Whatever the spellings, an inventoried path is never the normalised name of two
    /// entries: every entry of a name several entries hold (once normalised, exact repeats
    /// included) is reported as `duplicate_path`, unless all of them are directories; a name
    /// one file entry holds is inventoried.
    #[test]
    fn an_inventoried_path_is_the_name_of_one_entry(
        picks in proptest::collection::vec((0..3usize, 0..SPELLINGS), 0..8),
    ) {
        const BASES: [&str; 3] = ["a.txt", "d/b.txt", "d/e/c.txt"];
        let names: Vec<(usize, String)> = picks
            .iter()
            .map(|&(base, spelling)| (base, spell(BASES[base], spelling)))
            .collect();
        let is_dir = |name: &str| name.ends_with('/');
        let entries: Vec<(&str, &[u8])> = names
            .iter()
            .enumerate()
            .map(|(index, (_, name))| {
                let data: &[u8] = if is_dir(name) { b"" } else { &b"0123456789"[..index + 1] };
                (name.as_str(), data)
            })
            .collect();
        let inventory = Inventory::of_zip_reader(
            std::io::Cursor::new(raw_zip(&entries)),
            "p.zip",
            &InventoryLimits::default(),
        )
        .unwrap();
        let holders = |base: usize| names.iter().filter(move |(b, _)| *b == base);
        let shared = |base: usize| {
            holders(base).count() > 1 && holders(base).any(|(_, name)| !is_dir(name))
        };
        for occurrence in inventory.occurrences() {
            let base = BASES.iter().position(|b| *b == occurrence.path).unwrap();
            proptest::prop_assert_eq!(holders(base).count(), 1, "{} listed", &occurrence.path);
        }
        let mut single: Vec<&str> = (0..BASES.len())
            .filter(|&base| holders(base).count() == 1 && holders(base).all(|(_, n)| !is_dir(n)))
            .map(|base| BASES[base])
            .collect();
        single.sort_unstable();
        let listed: Vec<&str> = inventory.occurrences().iter().map(|o| o.path.as_str()).collect();
        proptest::prop_assert_eq!(listed, single);
        let mut reported: Vec<&str> = names
            .iter()
            .filter(|(base, _)| shared(*base))
            .map(|(_, name)| name.as_str())
            .collect();
        reported.sort_unstable();
        let rejected: Vec<&str> = inventory.rejected().iter().map(|r| r.path.as_str()).collect();
        proptest::prop_assert_eq!(rejected, reported);
        proptest::prop_assert!(inventory
            .rejected()
            .iter()
            .all(|r| r.reason == RejectReason::DuplicatePath));
    }
}
