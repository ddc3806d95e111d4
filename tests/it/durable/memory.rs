//! The in-memory store (docs/CONTRACT.md section 16): a store that retains gives back every
//! committed session, record and revision to a `SessionStore` resumed from it, in one process.

use std::sync::Arc;

use crate::support::fixtures::{Format, Spec, build};
use rea::session::{Durable, MemoryStore, SessionStore, StoreConfig};
use rea::tools::ToolBox;
use serde_json::{Map, Value, json};

fn call(toolbox: &ToolBox, name: &str, arguments: Value) -> Map<String, Value> {
    let outcome = toolbox.call(name, arguments.as_object().unwrap()).unwrap();
    assert!(!outcome.is_error(), "{name}: {}", outcome.text());
    outcome.structured_content().unwrap().clone()
}

fn resumed(durable: &Arc<MemoryStore>) -> ToolBox {
    let durable: Arc<dyn Durable> = Arc::clone(durable) as Arc<dyn Durable>;
    let store = Arc::new(SessionStore::with_durable(StoreConfig::default(), durable));
    rea::providers::resume(&store).unwrap();
    ToolBox::with_store(store)
}

#[test]
fn a_retaining_memory_store_resumes_what_was_committed_and_forgets_what_was_closed() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("sample");
    std::fs::write(&binary, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let durable = Arc::new(MemoryStore::retaining());

    let first = resumed(&durable);
    let opened = call(&first, "open_binary", json!({"path": binary}));
    let session = opened["session"].as_str().unwrap().to_owned();
    let listed = call(&first, "list_procedures", json!({"limit": 2}));
    let noted = call(
        &first,
        "register_unknown",
        json!({"question": "Why two helpers?"}),
    );
    let other = call(
        &first,
        "open_binary",
        json!({"path": binary, "new_session": true}),
    );
    let other = other["session"].as_str().unwrap().to_owned();
    call(&first, "close_binary", json!({"session": other}));
    drop(first);

    let second = resumed(&durable);
    let sessions = call(&second, "list_sessions", json!({}));
    let handles: Vec<&str> = sessions["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert_eq!(handles, [session.as_str()]);
    let record = call(
        &second,
        "get_evidence",
        json!({"id": listed["evidence_id"], "session": session}),
    );
    assert_eq!(record["result"]["procedures"], listed["procedures"]);
    let unknowns = call(&second, "list_unknowns", json!({"session": session}));
    assert_eq!(unknowns["unknowns"][0]["id"], noted["id"]);
    let again = call(
        &second,
        "list_procedures",
        json!({"limit": 2, "session": session}),
    );
    assert_eq!(again["procedures"], listed["procedures"]);
}

#[test]
fn a_memory_store_that_does_not_retain_resumes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("sample");
    std::fs::write(&binary, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let durable = Arc::new(MemoryStore::new());
    let first = resumed(&durable);
    call(&first, "open_binary", json!({"path": binary}));
    call(&first, "list_segments", json!({}));
    let snapshot = durable.load().unwrap();
    assert!(snapshot.sessions.is_empty());
    assert!(snapshot.next_evidence > 1, "the numbering is kept");
}
