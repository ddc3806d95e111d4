//! A cancelled call never commits: every tool of the catalog, called with a cancellation that
//! arrived before it could commit, leaves the session exactly as it was; a call that changes or
//! records anything says it was cancelled. The members come from the catalog, so a new tool
//! without an entry in the argument table fails the walk.

use std::collections::BTreeMap;
use std::sync::Arc;

use rea::session::{Cancel, Session};
use rea::tools::{ToolBox, ToolKind};
use rea::unknowns::UnknownFilter;
use serde_json::{Value, json};

use crate::support::capture::valid_capture;
use crate::support::fixtures::{Format, Spec, build};
use crate::support::tools::{arguments, call, success};

/// Everything a tool could change, as a client could see it.
fn state(session: &Session) -> Value {
    json!({
        "label": session.label(),
        "current_document": session.current_document(),
        "providers": session.provider_ids(),
        "evidence": session.evidence_ids(),
        "unknowns": session
            .list_unknowns(&UnknownFilter::default())
            .iter()
            .map(|u| json!({"id": u.id.as_str(), "status": format!("{:?}", u.status)}))
            .collect::<Vec<_>>(),
        "inventory_pages": session.inventory_pages().len(),
        "annotations": session.annotation_history().len(),
    })
}

/// A session with a binary open, Evidence, an inventory, a capture and an open unknown; and
/// valid arguments for every tool over it.
fn prepared(dir: &std::path::Path) -> (Arc<Session>, ToolBox, BTreeMap<&'static str, Value>) {
    let binary = dir.join("app");
    std::fs::write(&binary, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let tree = dir.join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("file.txt"), "content").unwrap();
    let session = Arc::new(Session::new());
    // `run_process_capture` runs under the operator's approval (`--approve-captures`).
    session.set_capture_approval(rea::capture::CaptureApproval::Operator);
    // The fake adapter beside `native`, so `decompile` has a provider.
    let adapters = rea::providers::external::Adapters::new(
        vec![crate::support::tools::fake_spec(
            "normal",
            crate::support::tools::quick_limits(),
        )],
        2,
    );
    session.set_companions(Some(Arc::new(adapters)));
    let tools = ToolBox::new(Arc::clone(&session));
    let path = binary.display().to_string();
    success(&tools, "open_binary", json!({"path": path}));
    let listed = success(&tools, "list_procedures", json!({}));
    let address = listed["procedures"][0]["address"]
        .as_str()
        .unwrap()
        .to_owned();
    let evidence = listed["evidence_id"].as_str().unwrap().to_owned();
    let inventory = success(&tools, "inventory_artifacts", json!({"path": tree}));
    let manifest = inventory["manifest_id"].as_str().unwrap().to_owned();
    success(
        &tools,
        "import_process_capture",
        json!({"capture": valid_capture()}),
    );
    let unknown = success(&tools, "register_unknown", json!({"question": "why?"}));
    let unknown = unknown["id"].as_str().unwrap().to_owned();
    let annotated = success(
        &tools,
        "annotate",
        json!({"edits": [{"kind": "name", "procedure": address, "name": "first", "evidence": [evidence]}]}),
    );
    let annotation = annotated["annotations"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let document = session.current_document().unwrap();
    // A second session with the same binary, for `compare_procedures`; then this one is the
    // client's session again.
    let own = tools.session_handle().unwrap().as_str().to_owned();
    let other = success(
        &tools,
        "open_binary",
        json!({"path": path, "new_session": true}),
    );
    let other = other["session"].as_str().unwrap().to_owned();
    success(&tools, "current_document", json!({"session": own}));
    let table = BTreeMap::from([
        ("compare_procedures", json!({"candidate": other})),
        ("open_binary", json!({"path": path})),
        ("close_binary", json!({})),
        ("list_sessions", json!({})),
        ("list_providers", json!({})),
        ("list_documents", json!({})),
        ("current_document", json!({})),
        ("set_current_document", json!({"document": document})),
        ("list_procedures", json!({})),
        ("procedure_info", json!({"procedure": address})),
        ("search_procedures", json!({"query": "main"})),
        ("list_segments", json!({})),
        ("search_strings", json!({"contains": "a"})),
        ("read_bytes", json!({"address": address, "length": 4})),
        ("list_imports", json!({})),
        ("disassemble", json!({"procedure": address})),
        ("xrefs_to", json!({"address": address})),
        ("callers", json!({"procedure": address})),
        ("callees", json!({"procedure": address})),
        (
            "decompile",
            json!({"procedure": "0x1000", "provider": "fake"}),
        ),
        ("list_evidence", json!({})),
        ("get_evidence", json!({"id": evidence})),
        ("register_unknown", json!({"question": "what?"})),
        (
            "refine_unknown",
            json!({"id": unknown, "question": "what exactly?"}),
        ),
        (
            "resolve_unknown",
            json!({"id": unknown, "evidence": [evidence]}),
        ),
        ("list_unknowns", json!({})),
        (
            "annotate",
            json!({"edits": [{"kind": "comment", "address": address, "text": "why", "evidence": [evidence]}]}),
        ),
        ("list_annotations", json!({})),
        ("undo_annotation", json!({"annotation": annotation})),
        ("export_annotations", json!({"format": "json"})),
        ("inventory_artifacts", json!({"path": tree})),
        (
            "list_artifact_occurrences",
            json!({"manifest_id": manifest}),
        ),
        (
            "compare_inventories",
            json!({"before": manifest, "after": manifest}),
        ),
        (
            "import_process_capture",
            json!({"capture": valid_capture()}),
        ),
        (
            "verify_reconstruction",
            json!({"claims": [{"kind": "procedure_exists", "document": document, "address": address}]}),
        ),
        ("run_process_capture", json!({"program": "/usr/bin/true"})),
    ]);
    (session, tools, table)
}

#[test]
fn no_tool_commits_after_its_cancellation() {
    let dir = tempfile::tempdir().unwrap();
    let (session, tools, table) = prepared(dir.path());
    let catalog: Vec<&str> = tools.definitions().iter().map(|d| d.name()).collect();
    let covered: Vec<&str> = table.keys().copied().collect();
    let mut sorted = catalog.clone();
    sorted.sort_unstable();
    assert_eq!(
        covered, sorted,
        "every tool has valid arguments in the table"
    );
    for definition in tools.definitions() {
        let name = definition.name();
        let args = arguments(table[name].clone());
        // The same call without a cancellation succeeds on a fresh copy of the state, so the
        // arguments really reach the commit.
        let dir = tempfile::tempdir().unwrap();
        let (_, fresh_tools, fresh_table) = prepared(dir.path());
        let uncancelled = fresh_tools
            .call(name, &arguments(fresh_table[name].clone()))
            .unwrap();
        assert!(!uncancelled.is_error(), "{name}: {}", uncancelled.text());

        let before = state(&session);
        let cancel = Cancel::new();
        cancel.cancel();
        let outcome = tools.call_cancellable(name, &args, &cancel).unwrap();
        assert_eq!(
            state(&session),
            before,
            "{name} changed the session after a cancel"
        );
        if definition.kind() != ToolKind::Read {
            assert!(
                outcome.is_error(),
                "{name} answered a success after a cancel"
            );
            assert!(
                outcome.text().contains("cancelled"),
                "{name}: {}",
                outcome.text()
            );
        }
    }
}

#[test]
fn a_commit_claimed_first_is_not_undone_by_a_late_cancel() {
    let (session, tools) = crate::support::tools::closed();
    let cancel = Cancel::new();
    let question = arguments(json!({"question": "late?"}));
    let outcome = tools
        .call_cancellable("register_unknown", &question, &cancel)
        .unwrap();
    cancel.cancel();
    assert!(!outcome.is_error(), "{}", outcome.text());
    assert!(cancel.is_committed() && !cancel.is_cancelled());
    assert_eq!(session.unresolved_unknown_ids().len(), 1);
    let again = call(&tools, "list_unknowns", json!({}));
    assert!(!again.is_error());
}
