//! Two processes on one store (docs/CONTRACT.md section 16): Claude Desktop and Claude Code
//! each start a `rea serve` on the default store. Both serve; a session is served by one of
//! them at a time, the other is told which pid serves it; a SIGKILLed holder's sessions are
//! taken over with every answered record; no ID is ever issued twice.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::fixtures::{Format, Spec, build};
use crate::support::server_process::ServerProcess;
use serde_json::{Value, json};

const REA: &str = env!("CARGO_BIN_EXE_rea-under-test");

fn serve(store: &Path) -> ServerProcess {
    ServerProcess::start_with(REA, ["--store".as_ref(), store.as_os_str()])
}

fn structured(result: &Value) -> &Value {
    assert_eq!(result["isError"], json!(false), "{result}");
    &result["structuredContent"]
}

fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], json!(true), "{result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

/// Opens `binary` in a new session and makes three observations there; returns the handle.
fn open_and_observe(server: &mut ServerProcess, binary: &Path) -> String {
    let opened = server.tool("open_binary", json!({"path": binary, "new_session": true}));
    let handle = structured(&opened)["session"].as_str().unwrap().to_owned();
    observe(server, &handle, 3);
    handle
}

/// `count` observations in session `handle`.
fn observe(server: &mut ServerProcess, handle: &str, count: usize) {
    for _ in 0..count {
        let listed = server.tool("list_documents", json!({"session": handle}));
        structured(&listed);
    }
}

/// The Evidence IDs of session `handle`, oldest first.
fn evidence(server: &mut ServerProcess, handle: &str) -> Vec<String> {
    let listed = server.tool("list_evidence", json!({"session": handle, "limit": 100}));
    structured(&listed)["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| record["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn two_servers_on_one_store_serve_each_session_from_one_of_them_and_never_reuse_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store.db");
    let binary = dir.path().join("sample");
    std::fs::write(&binary, build(&Spec::sample(), Format::Elf).bytes).unwrap();

    let mut first = serve(&store);
    let held_by_first = open_and_observe(&mut first, &binary);
    // The second starts after the first opened its session, so it loads that session too.
    let mut second = serve(&store);
    let held_by_second = open_and_observe(&mut second, &binary);

    // Each is told who serves the other's session (the first never loaded the second's).
    let refused = error_text(&second.tool("list_evidence", json!({"session": held_by_first})));
    assert!(
        refused.contains(&format!("(pid {})", first.id())) && refused.contains(&held_by_first),
        "{refused}"
    );
    let refused = error_text(&first.tool("list_documents", json!({"session": held_by_second})));
    assert!(
        refused.contains(&format!("(pid {})", second.id())),
        "{refused}"
    );

    // Both go on recording in their own sessions at the same time.
    observe(&mut first, &held_by_first, 5);
    observe(&mut second, &held_by_second, 5);
    let answered_by_first = evidence(&mut first, &held_by_first);
    assert_eq!(answered_by_first.len(), 8);

    // The first is killed: the second takes its session over with every answered record.
    drop(first);
    let taken = evidence(&mut second, &held_by_first);
    assert_eq!(taken, answered_by_first, "every record the first answered");
    observe(&mut second, &held_by_first, 2);
    let after = evidence(&mut second, &held_by_first);
    assert_eq!(after.len(), 10);
    assert!(after.is_sorted(), "IDs sort in creation order: {after:?}");
    let own = evidence(&mut second, &held_by_second);
    drop(second);

    // A third finds both sessions, every record, and no ID twice.
    let mut third = serve(&store);
    let kept = evidence(&mut third, &held_by_first);
    assert_eq!(kept, after);
    assert_eq!(evidence(&mut third, &held_by_second), own);
    let all: BTreeSet<&String> = kept.iter().chain(&own).collect();
    assert_eq!(all.len(), kept.len() + own.len(), "no ID issued twice");
    assert!(third.finish().success());
}
