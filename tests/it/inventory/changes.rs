//! Files that change while they are hashed: a file whose size or modification time moves
//! while it is read (truncated, grown, rewritten in place) is reported `changed_while_reading`,
//! never listed with a digest of a state it never had; an archive that changes while it is
//! read fails the whole inventory; an archive entry whose bytes do not add up to its declared
//! size or CRC is `unreadable`.
//!
//! The races are driven, not hoped for: the file is large and sparse, the inventory runs in a
//! thread, and the change is made once `/proc/self/fdinfo` shows the inventory's descriptor of
//! that file partway through it. Each case is retried until the change landed mid-read at least
//! once; every attempt, raced or not, must give an answer that is true of some state the file
//! had.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rea::inventory::{Inventory, InventoryError, InventoryLimits, RejectReason};
use sha2::{Digest, Sha256};

use crate::support::inventory::{rejections, write_file};

/// Size of the file changed while it is hashed (sparse: it costs no disk).
const LARGE: u64 = 64 << 20;

/// Attempts at landing a change mid-read before the test gives up.
const ATTEMPTS: usize = 12;

/// How far this process's first open descriptor of `file` has read, from `/proc/self/fdinfo`.
fn read_position(file: &Path) -> Option<u64> {
    for entry in std::fs::read_dir("/proc/self/fd").ok()?.flatten() {
        if std::fs::read_link(entry.path()).ok().as_deref() != Some(file) {
            continue;
        }
        let info = std::fs::read_to_string(Path::new("/proc/self/fdinfo").join(entry.file_name()));
        let position = info.ok().and_then(|info| {
            info.lines()
                .find_map(|line| line.strip_prefix("pos:"))
                .and_then(|pos| pos.trim().parse().ok())
        });
        if position.is_some() {
            return position;
        }
    }
    None
}

/// Runs `inventory` in a thread and applies `change` once that thread's reader of `file` is
/// past its start and short of its middle. Says whether the change surely landed mid-read: the
/// inventory still held the file open after it (the last check is made before the file is
/// closed, the first once the file was opened).
fn change_mid_read<T: Send>(
    file: &Path,
    size: u64,
    inventory: impl FnOnce() -> T + Send,
    change: impl FnOnce(),
) -> (T, bool) {
    std::thread::scope(|scope| {
        let running = scope.spawn(inventory);
        let mut raced = false;
        while !running.is_finished() {
            if read_position(file).is_some_and(|pos| pos > 0 && pos < size / 2) {
                change();
                raced = read_position(file).is_some();
                break;
            }
            std::thread::yield_now();
        }
        (running.join().unwrap(), raced)
    })
}

/// The SHA-256 of `zeros` zero bytes then `tail`, lowercase hexadecimal.
fn digest(zeros: u64, tail: &[u8]) -> String {
    let mut hasher = Sha256::new();
    let chunk = vec![0u8; 1 << 20];
    let mut left = zeros;
    while left > 0 {
        let take = left.min(chunk.len() as u64);
        hasher.update(&chunk[..take as usize]);
        left -= take;
    }
    hasher.update(tail);
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A state a file may be listed with: its size and digest.
type State = (u64, String);

/// A tree holding `small` and a sparse file `large` of [`LARGE`] zero bytes, dated in the past
/// so that any write moves its modification time.
fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    write_file(dir.path(), "small", b"small");
    let large = dir.path().join("large");
    let file = File::create(&large).unwrap();
    file.set_len(LARGE).unwrap();
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000))
        .unwrap();
    let canonical = std::fs::canonicalize(&large).unwrap();
    (dir, canonical)
}

/// Walks a fresh [`tree`] while `change` alters its large file, until the change lands
/// mid-read; every walk must list `small`, and list `large` only with one of `states`.
fn walk_while(change: impl Fn(&Path), states: &[State]) {
    let mut raced_attempts = 0;
    for _ in 0..ATTEMPTS {
        let (dir, large) = tree();
        let (inventory, raced) = change_mid_read(
            &large,
            LARGE,
            || Inventory::open(dir.path(), &InventoryLimits::default()),
            || change(&large),
        );
        let inventory = inventory.unwrap();
        let listed: Vec<(&str, State)> = inventory
            .occurrences()
            .iter()
            .map(|o| (o.path.as_str(), (o.size, o.sha256.clone())))
            .collect();
        assert_eq!(listed[listed.len() - 1].0, "small");
        match (&listed[..], &rejections(&inventory)[..]) {
            ([_small], [("large", RejectReason::ChangedWhileReading)]) => raced_attempts += 1,
            ([("large", state), _small], []) => {
                assert!(
                    states.contains(state),
                    "large listed as no state it had: {state:?}"
                );
                // A change made mid-read is always seen.
                assert!(!raced, "a change made mid-read went unseen");
            }
            other => panic!("unexpected inventory {other:?}"),
        }
        if raced_attempts > 0 {
            return;
        }
    }
    panic!("no change landed mid-read in {ATTEMPTS} attempts");
}

#[test]
fn a_file_truncated_while_it_is_hashed_is_reported_changed() {
    walk_while(
        |large| {
            OpenOptions::new()
                .write(true)
                .open(large)
                .unwrap()
                .set_len(0)
                .unwrap()
        },
        &[(LARGE, digest(LARGE, b"")), (0, digest(0, b""))],
    );
}

#[test]
fn a_file_grown_while_it_is_hashed_is_reported_changed() {
    walk_while(
        |large| {
            let mut file = OpenOptions::new().append(true).open(large).unwrap();
            file.write_all(b"more").unwrap();
        },
        &[
            (LARGE, digest(LARGE, b"")),
            (LARGE + 4, digest(LARGE, b"more")),
        ],
    );
}

#[test]
fn a_file_rewritten_in_place_while_it_is_hashed_is_reported_changed() {
    // Same size: only the modification time tells.
    walk_while(
        |large| {
            let mut file = OpenOptions::new().write(true).open(large).unwrap();
            file.seek(SeekFrom::Start(LARGE - 1)).unwrap();
            file.write_all(b"x").unwrap();
        },
        &[
            (LARGE, digest(LARGE, b"")),
            (LARGE, digest(LARGE - 1, b"x")),
        ],
    );
}

#[test]
fn an_archive_that_changes_while_it_is_read_fails_the_inventory() {
    let dir = tempfile::tempdir().unwrap();
    let archive = dir.path().join("big.zip");
    {
        let mut writer = zip::ZipWriter::new(File::create(&archive).unwrap());
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored)
            .large_file(true);
        writer.start_file("zeros", stored).unwrap();
        let chunk = vec![0u8; 1 << 20];
        for _ in 0..(LARGE >> 20) / 2 {
            writer.write_all(&chunk).unwrap();
        }
        writer.start_file("small", stored).unwrap();
        writer.write_all(b"small").unwrap();
        writer.finish().unwrap();
    }
    let archive = std::fs::canonicalize(&archive).unwrap();
    let size = std::fs::metadata(&archive).unwrap().len();
    let inventory = || Inventory::open(&archive, &InventoryLimits::default());
    let unchanged = inventory().unwrap();
    assert_eq!(unchanged.occurrences().len(), 2);
    for attempt in 0..ATTEMPTS {
        // Only the modification time moves: the archive stays readable and the same.
        let touch = || {
            let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + attempt as u64);
            File::options()
                .write(true)
                .open(&archive)
                .unwrap()
                .set_modified(when)
                .unwrap();
        };
        let (result, raced) = change_mid_read(&archive, size, inventory, touch);
        match result {
            Err(error @ InventoryError::ChangedWhileReading { .. }) => {
                let mut settings = crate::support::snapshots::settings();
                crate::support::snapshots::filter_path(&mut settings, &archive, "[archive]");
                settings.bind(|| {
                    insta::assert_snapshot!(
                        "inventory_changes__archive_changed",
                        error.to_string()
                    );
                });
                return;
            }
            Ok(inventory) => {
                assert_eq!(inventory, unchanged);
                assert!(!raced, "a change made mid-read went unseen");
            }
            Err(other) => panic!("unexpected error {other}"),
        }
    }
    panic!("no change landed mid-read in {ATTEMPTS} attempts");
}
