//! Every tool's declared output schema against its real results: one investigation that calls
//! each tool of the catalog successfully at least once, each result validated against the
//! tool's `outputSchema` (by [`crate::support::tools::call`]), so a result type and the schema
//! declared beside it cannot drift apart unnoticed.

use std::collections::BTreeSet;
use std::sync::Mutex;

use serde_json::{Map, Value, json};

use crate::support::capture::valid_capture;
use crate::support::code;
use crate::support::inventory::{app_v1, app_v2, write_tree, zip_of};
use crate::support::tools::{Files, closed, fake_spec, quick_limits, success};
use rea::tools::ToolBox;

/// Calls `name` (which must succeed; its result is validated against its output schema) and
/// notes it as covered.
fn covered(
    tools: &ToolBox,
    seen: &Mutex<BTreeSet<String>>,
    name: &str,
    arguments: Value,
) -> Map<String, Value> {
    let result = success(tools, name, arguments);
    seen.lock().unwrap().insert(name.to_owned());
    result
}

fn text(result: &Map<String, Value>, field: &str) -> String {
    result[field].as_str().unwrap().to_owned()
}

#[test]
fn every_tool_returns_results_that_fit_its_declared_output_schema() {
    let files = Files::new();
    let program = code::x86_64();
    let binary = files.dir.path().join("app");
    std::fs::write(&binary, &program.bytes).unwrap();
    let v1 = files.dir.path().join("app-1.0");
    write_tree(&v1, &app_v1());
    let v2 = files.dir.path().join("app-2.0.zip");
    std::fs::write(&v2, zip_of(&app_v2())).unwrap();

    let (session, tools) = closed();
    // The fake adapter beside `native`, for `decompile`.
    let adapters =
        rea::providers::external::Adapters::new(vec![fake_spec("normal", quick_limits())], 1);
    session.set_companions(Some(std::sync::Arc::new(adapters)));
    let seen = Mutex::new(BTreeSet::new());
    let call = |name: &str, arguments: Value| covered(&tools, &seen, name, arguments);

    // No binary open: the session reads answer nulls and empty lists.
    call("list_sessions", json!({}));
    call("list_providers", json!({}));
    call("current_document", json!({}));

    // The binary session and every observation on a generated x86-64 program.
    call("open_binary", json!({"path": binary.display().to_string()}));
    call("list_providers", json!({}));
    let documents = call("list_documents", json!({}));
    let document = documents["documents"][0]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    call("set_current_document", json!({"document": document}));
    call("current_document", json!({}));
    call("list_procedures", json!({"limit": 2}));
    let main = call("procedure_info", json!({"procedure": "main"}));
    call(
        "decompile",
        json!({"provider": "fake", "procedure": "0x1000"}),
    );
    call(
        "search_procedures",
        json!({"query": "main", "match": "exact"}),
    );
    call("list_segments", json!({}));
    call("search_strings", json!({"min_chars": 4, "limit": 5}));
    call(
        "read_bytes",
        json!({"address": text(&main, "address"), "length": 16}),
    );
    call("list_imports", json!({}));
    call("disassemble", json!({"procedure": "main"}));
    call(
        "disassemble",
        json!({"address": format!("{:#x}", program.main), "length": 8}),
    );
    call(
        "xrefs_to",
        json!({"address": format!("{:#x}", program.helper)}),
    );
    call("callers", json!({"procedure": "helper"}));
    let callees = call("callees", json!({"procedure": "main"}));

    // The ledger.
    let page = call("list_evidence", json!({"limit": 3}));
    call("get_evidence", json!({"id": page["evidence"][0]["id"]}));

    // Residual unknowns.
    let first = call(
        "register_unknown",
        json!({"question": "What does main print?", "procedure": "main"}),
    );
    let head = call(
        "refine_unknown",
        json!({"id": first["id"], "question": "Which string does main print?"}),
    );
    call("list_unknowns", json!({"revisions": "all"}));
    call(
        "resolve_unknown",
        json!({"id": head["id"], "evidence": [callees["evidence_id"]], "note": "the greeting"}),
    );
    call("list_unknowns", json!({"status": "resolved"}));

    // Annotations.
    let annotated = call(
        "annotate",
        json!({"edits": [
            {"kind": "name", "procedure": "main", "name": "greet", "evidence": [callees["evidence_id"]]},
            {"kind": "comment", "address": text(&main, "address"), "text": "prints", "evidence": [callees["evidence_id"]]},
        ]}),
    );
    call("list_annotations", json!({}));
    let undo = call(
        "undo_annotation",
        json!({"annotation": annotated["annotations"][0]["id"]}),
    );
    call(
        "undo_annotation",
        json!({"annotation": undo["annotation"]["id"]}),
    );
    call("list_annotations", json!({"history": true}));
    call("export_annotations", json!({"format": "ghidra"}));

    // Artifacts, captures and claims.
    let before = call(
        "inventory_artifacts",
        json!({"path": v1.display().to_string()}),
    );
    let after = call(
        "inventory_artifacts",
        json!({"path": v2.display().to_string(), "page_size": 1000}),
    );
    call(
        "list_artifact_occurrences",
        json!({"manifest_id": before["manifest_id"], "format": "elf"}),
    );
    call(
        "compare_inventories",
        json!({"before": before["manifest_id"], "after": after["manifest_id"]}),
    );
    let capture = call(
        "import_process_capture",
        json!({"capture": valid_capture()}),
    );
    call(
        "import_process_capture",
        json!({"capture": {"schema": "rea.process-capture", "version": 3}}),
    );
    call(
        "verify_reconstruction",
        json!({"claims": [
            {"kind": "procedure_exists", "document": document, "address": main["address"]},
            {"kind": "capture_exit_code", "capture": capture["evidence_id"], "code": 0},
            {"kind": "calls", "document": document, "caller": "main", "callee": "helper"},
        ]}),
    );

    crate::support::capture::sandboxed::require_sandbox();
    session.set_capture_approval(rea::capture::CaptureApproval::Operator);
    call("run_process_capture", json!({"program": "/usr/bin/true"}));
    call(
        "run_process_capture",
        json!({"program": "/usr/bin/sleep", "arguments": ["5"], "timeout_secs": 1}),
    );

    // Two versions, procedure by procedure: the same program in a second session.
    let first = tools.session_handle().unwrap().as_str().to_owned();
    let second = call(
        "open_binary",
        json!({"path": binary.display().to_string(), "new_session": true}),
    );
    call(
        "compare_procedures",
        json!({"baseline": first, "candidate": second["session"], "limit": 2}),
    );

    call("close_binary", json!({}));
    call("close_binary", json!({"session": first}));

    let catalog: BTreeSet<String> = tools
        .definitions()
        .iter()
        .map(|definition| definition.name().to_owned())
        .collect();
    assert_eq!(seen.into_inner().unwrap(), catalog);
}
