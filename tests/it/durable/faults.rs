//! Faults of the store (docs/CONTRACT.md section 16): a damaged, foreign or newer store and a
//! folder that cannot be written each refuse start-up with a message naming the path and the
//! cause, never a panic; a store at `--max-store-mib` fails the call that would grow it and
//! loses nothing else.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use crate::support::fixtures::{Format, Spec, build};
use crate::support::server_process::ServerProcess;
use rea::session::{SessionStore, SqliteStore, StoreConfig, StoreOptions};
use serde_json::json;

const REA: &str = env!("CARGO_BIN_EXE_rea-under-test");

/// The stderr of `rea serve --store STORE` that must fail at start-up, with `dir` shown as
/// `[DIR]`.
fn refused(command: &mut Command, store: &Path, dir: &Path) -> String {
    let output = command
        .args(["serve", "--store"])
        .arg(store)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("rea runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "start-up must fail: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains(&store.display().to_string()), "{stderr}");
    stderr.replace(&dir.display().to_string(), "[DIR]")
}

fn snapshot(name: &str, text: String) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(name, text);
    });
}

/// A store holding one session with a kept binary of `size` bytes, closed cleanly.
fn make_store(store: &Path, size: usize) {
    let dir = store.parent().unwrap();
    let binary = dir.join("kept");
    let mut bytes = build(&Spec::sample(), Format::Elf).bytes;
    bytes.resize(size.max(bytes.len()), 0);
    std::fs::write(&binary, &bytes).unwrap();
    let durable = Arc::new(SqliteStore::open(store, StoreOptions::default()).unwrap());
    let sessions = SessionStore::with_durable(StoreConfig::default(), durable);
    let session = sessions.prepare().unwrap();
    rea::providers::open_path(&session, &binary).unwrap();
    sessions.admit(session).unwrap();
}

#[test]
fn a_file_that_is_not_a_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("notes.txt");
    std::fs::write(
        &store,
        "shopping list: eggs, flour, a better debugger\n".repeat(20),
    )
    .unwrap();
    let text = refused(&mut Command::new(REA), &store, dir.path());
    snapshot("durable_faults__not_a_store", text);
    let kept = std::fs::read_to_string(&store).unwrap();
    assert!(
        kept.starts_with("shopping list"),
        "the file is left as it was"
    );
}

#[test]
fn a_database_of_another_application_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("other.sqlite");
    let connection = rusqlite::Connection::open(&store).unwrap();
    connection
        .execute_batch("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT);")
        .unwrap();
    drop(connection);
    let text = refused(&mut Command::new(REA), &store, dir.path());
    snapshot("durable_faults__foreign_database", text);
}

#[test]
fn a_store_of_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    make_store(&store, 0);
    let connection = rusqlite::Connection::open(&store).unwrap();
    connection.pragma_update(None, "user_version", 99).unwrap();
    drop(connection);
    let text = refused(&mut Command::new(REA), &store, dir.path());
    snapshot("durable_faults__newer_schema", text);
}

/// A store of schema version 1 (before leases) is migrated to version 2 at open, its
/// session kept.
#[test]
fn a_store_of_schema_version_1_gains_its_leases_and_keeps_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    make_store(&store, 0);
    let connection = rusqlite::Connection::open(&store).unwrap();
    connection
        .execute_batch("DROP TABLE leases; PRAGMA user_version = 1;")
        .unwrap();
    drop(connection);
    let mut server = ServerProcess::start_with(REA, ["--store".as_ref(), store.as_os_str()]);
    let listed = server.tool("list_sessions", json!({}));
    assert_eq!(listed["isError"], json!(false), "{listed}");
    let sessions = listed["structuredContent"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    let handle = sessions[0]["session"].as_str().unwrap();
    let observed = server.tool("list_documents", json!({"session": handle}));
    assert_eq!(observed["isError"], json!(false), "{observed}");
    assert!(server.finish().success());
    let connection = rusqlite::Connection::open(&store).unwrap();
    let version: i64 = connection
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, rea::session::durable::SCHEMA_VERSION);
    let leases: i64 = connection
        .query_row("SELECT count(*) FROM leases", [], |row| row.get(0))
        .unwrap();
    assert_eq!(leases, 1, "the observing call took the session's lease");
}

/// A kept session no call changed for longer than `--session-retention-days` is removed at
/// start-up; a younger one, or any with a longer retention or 0, stays.
#[test]
fn a_session_past_its_retention_is_removed_at_start_up() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    make_store(&store, 0);
    let connection = rusqlite::Connection::open(&store).unwrap();
    // The session was made by this test process, which still runs and so holds its lease:
    // let it go, as the end of that process would.
    connection
        .execute_batch("UPDATE sessions SET used = used - 31 * 86400; DELETE FROM leases;")
        .unwrap();
    drop(connection);
    let kept = |days: &str| {
        let args = [
            "--store".as_ref(),
            store.as_os_str(),
            "--session-retention-days".as_ref(),
            days.as_ref(),
        ];
        let mut server = ServerProcess::start_with(REA, args);
        let listed = server.tool("list_sessions", json!({}));
        assert!(server.finish().success());
        listed["structuredContent"]["sessions"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(kept("0"), 1, "0 keeps every session");
    assert_eq!(kept("60"), 1, "31 days is within 60");
    assert_eq!(kept("30"), 0, "31 days is past 30");
    let connection = rusqlite::Connection::open(&store).unwrap();
    for table in ["sessions", "evidence", "binaries", "leases"] {
        let rows: i64 = connection
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(rows, 0, "{table} is empty");
    }
}

#[test]
fn a_truncated_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    make_store(&store, 256 << 10);
    let length = std::fs::metadata(&store).unwrap().len();
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(&store)
        .unwrap();
    file.set_len(length / 2).unwrap();
    drop(file);
    let text = refused(&mut Command::new(REA), &store, dir.path());
    assert!(text.contains("is damaged"), "{text}");
    snapshot("durable_faults__truncated", text);
}

#[test]
fn a_store_with_a_corrupted_page_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    make_store(&store, 64 << 10);
    let mut bytes = std::fs::read(&store).unwrap();
    // Page 2 onwards hold the tables' b-trees: scribble over the first pages after the header
    // page.
    for byte in &mut bytes[4096..4096 * 3] {
        *byte = 0xa5;
    }
    std::fs::write(&store, &bytes).unwrap();
    let text = refused(&mut Command::new(REA), &store, dir.path());
    assert!(text.contains("is damaged"), "{text}");
}

#[test]
fn a_folder_that_cannot_be_written_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let folder = dir.path().join("read-only");
    std::fs::create_dir(&folder).unwrap();
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o555)).unwrap();
    let store = folder.join("store.sqlite");
    // Permissions do not bind root: run the server as nobody then.
    let mut command = if rustix::process::geteuid().is_root() {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups", REA]);
        command
    } else {
        Command::new(REA)
    };
    let text = refused(&mut command, &store, dir.path());
    snapshot("durable_faults__read_only_folder", text);
    assert!(!store.exists());
}

#[test]
fn a_call_past_max_store_mib_fails_naming_it_and_loses_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.sqlite");
    let large = dir.path().join("large");
    let mut bytes = build(&Spec::sample(), Format::Elf).bytes;
    bytes.resize(3 << 20, 0);
    std::fs::write(&large, &bytes).unwrap();
    let args = [
        "--store".as_ref(),
        store.as_os_str(),
        "--max-store-mib".as_ref(),
        "1".as_ref(),
    ];
    let mut server = ServerProcess::start_with(REA, args);
    let noted = server.tool("register_unknown", json!({"question": "What is kept?"}));
    assert_eq!(noted["isError"], json!(false), "{noted}");
    let refused = server.tool("open_binary", json!({"path": large}));
    assert_eq!(refused["isError"], json!(true), "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("--max-store-mib"), "{text}");
    snapshot(
        "durable_faults__max_store_mib",
        text.replace(&dir.path().display().to_string(), "[DIR]"),
    );
    let listed = server.tool("list_unknowns", json!({}));
    assert_eq!(listed["structuredContent"]["total"], json!(1), "{listed}");
    drop(server);
    let mut again = ServerProcess::start_with(REA, args);
    let sessions = again.tool("list_sessions", json!({}));
    let sessions = sessions["structuredContent"]["sessions"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["open_unknowns"], json!(1));
}

/// A full disk (a 1 MiB tmpfs, mounted in a private user and mount namespace so no privilege
/// is needed): the call that does not fit fails naming the store and the cause, the server
/// goes on answering, and everything answered before is there, nothing of the failed call.
#[test]
fn a_full_disk_fails_the_call_that_does_not_fit_and_loses_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let mount = dir.path().join("small");
    std::fs::create_dir(&mount).unwrap();
    let binary = dir.path().join("sample");
    let built = build(&Spec::sample(), Format::Elf);
    std::fs::write(&binary, &built.bytes).unwrap();
    let text = format!("{:#x}", built.text_address);
    let mut command = Command::new("unshare");
    command
        .args(["--user", "--map-root-user", "--mount", "sh", "-c"])
        .arg(
            "mount -t tmpfs -o size=1m tmpfs \"$1\" && \
             exec \"$2\" serve --store \"$1/store.sqlite\" --store-binaries no",
        )
        .arg("sh")
        .arg(&mount)
        .arg(REA)
        .stderr(Stdio::null());
    let mut server = ServerProcess::with_command(command);
    let opened = server.tool("open_binary", json!({"path": binary}));
    assert_eq!(opened["isError"], json!(false), "{opened}");
    let mut answered = 0;
    let mut failure = None;
    // Each record holds what it read as hex: the disk fills within a few thousand calls.
    for _ in 0..20_000 {
        let read = server.tool("read_bytes", json!({"address": text, "length": 4096}));
        if read["isError"] == json!(true) {
            failure = Some(read["content"][0]["text"].as_str().unwrap().to_owned());
            break;
        }
        answered += 1;
    }
    let failure = failure.expect("a 1 MiB disk fills");
    assert!(
        failure.contains("is full") && failure.contains("store.sqlite"),
        "{failure}"
    );
    println!("{answered} calls fitted on the 1 MiB disk: {failure}");
    assert!(answered > 10, "{answered} calls fitted");
    let pong = server.request_text("ping", json!({}));
    assert!(pong.contains("\"result\""), "{pong}");
    let mut kept = 0;
    let mut cursor = None;
    loop {
        let mut arguments = json!({"limit": 100});
        if let Some(cursor) = &cursor {
            arguments["cursor"] = json!(cursor);
        }
        let page = server.tool("list_evidence", arguments);
        assert_eq!(page["isError"], json!(false), "{page}");
        let page = &page["structuredContent"];
        kept += page["evidence"].as_array().unwrap().len();
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(
        kept, answered,
        "every answered call, nothing of the failed one"
    );
}
