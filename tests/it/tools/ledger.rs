//! Evidence and the ledger tools: exactly the successful observations append a record (with
//! the tool name, the arguments as given, the result, provider and document); list_evidence
//! pages the ledger and get_evidence returns a record in full; neither appends.

use crate::support::tools::{
    Files, call, closed, stripped_system_binary, success, with_binary, with_catalog, with_fake,
};
use rea::tools::{ToolBox, ToolKind};
use serde_json::{Map, Value, json};

/// Calls `name` and checks the ledger: one new record for a successful observation (matching
/// the call), none otherwise. Returns the outcome's structured result, if any.
fn call_and_check_ledger(
    tools: &ToolBox,
    name: &str,
    arguments: Value,
) -> Option<Map<String, Value>> {
    let session = tools.session().unwrap();
    let before = session.evidence_ids();
    let current = session.current_document();
    let outcome = call(tools, name, arguments.clone());
    let kind = tools.definition(name).unwrap().kind();
    let after = session.evidence_ids();
    if outcome.is_error() || kind != ToolKind::Observation {
        if kind != ToolKind::SessionChange {
            assert_eq!(after, before, "{name} appended Evidence");
        }
        assert!(outcome.evidence_id().is_none());
        return outcome.structured_content().cloned();
    }
    assert_eq!(
        after.len(),
        before.len() + 1,
        "{name} appends exactly one record"
    );
    assert_eq!(after[..before.len()], before[..]);
    let id = outcome.evidence_id().unwrap();
    assert_eq!(after.last().map(String::as_str), Some(id));
    assert!(
        before.iter().all(|old| old.as_str() < id),
        "IDs sort in creation order"
    );
    let record = session.evidence(id).unwrap();
    assert_eq!(record.operation, name);
    assert_eq!(
        record.arguments, arguments,
        "arguments are recorded as given"
    );
    let mut result = outcome.structured_content().unwrap().clone();
    result.remove("evidence_id");
    assert_eq!(
        record.result,
        Value::Object(result),
        "the record holds the result"
    );
    let provider = arguments
        .get("provider")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| {
            session
                .providers()
                .into_iter()
                .find(|p| p.current)
                .map(|p| p.id)
        });
    assert_eq!(record.provider, provider);
    let document = arguments
        .get("document")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or(current);
    assert_eq!(record.document, document);
    outcome.structured_content().cloned()
}

#[test]
fn observations_on_a_catalog_append_one_record_each() {
    let files = Files::new();
    let (session, tools) = with_catalog(&files);
    for (name, arguments) in [
        ("list_documents", json!({})),
        ("list_documents", json!({"provider": "catalog"})),
        ("list_procedures", json!({"limit": 2})),
        (
            "list_procedures",
            json!({"cursor": "at:2", "document": "app"}),
        ),
        ("procedure_info", json!({"procedure": "main"})),
        (
            "procedure_info",
            json!({"procedure": "0x2000", "document": "lib"}),
        ),
        (
            "search_procedures",
            json!({"query": "help", "match": "contains"}),
        ),
        ("list_segments", json!({})),
    ] {
        call_and_check_ledger(&tools, name, arguments);
    }
    assert_eq!(session.evidence_count(), 8);
}

#[test]
fn observations_on_a_real_binary_append_one_record_each() {
    let path = stripped_system_binary().expect("/bin/ls or similar");
    let (session, tools) = with_binary(&path);
    let page = call_and_check_ledger(&tools, "list_procedures", json!({"limit": 3})).unwrap();
    let first = page["procedures"][0]["address"].clone();
    for (name, arguments) in [
        ("list_documents", json!({})),
        ("procedure_info", json!({"procedure": first})),
        ("search_procedures", json!({"query": "a", "limit": 5})),
        ("list_segments", json!({})),
        ("search_strings", json!({"contains": "usage", "limit": 3})),
        ("read_bytes", json!({"address": first, "length": 16})),
    ] {
        call_and_check_ledger(&tools, name, arguments);
    }
    assert_eq!(session.evidence_count(), 7);
}

#[test]
fn failures_reads_and_session_changes_append_nothing() {
    let files = Files::new();
    let (session, tools) = with_fake();
    call_and_check_ledger(&tools, "list_procedures", json!({}));
    for (name, arguments) in [
        ("list_procedures", json!({"document": "missing"})),
        ("procedure_info", json!({"procedure": "main"})),
        ("search_procedures", json!({"query": "x", "limit": 0})),
        ("read_bytes", json!({"address": "0x1000", "length": 1})),
        ("list_providers", json!({})),
        ("current_document", json!({})),
        ("list_evidence", json!({})),
        ("get_evidence", json!({"id": session.evidence_ids()[0]})),
        ("set_current_document", json!({"document": "lib"})),
    ] {
        call_and_check_ledger(&tools, name, arguments);
    }
    assert_eq!(session.evidence_count(), 1);
    let handle = tools.session_handle().unwrap();
    call_and_check_ledger(
        &tools,
        "open_binary",
        json!({"path": files.catalog(), "session": handle.as_str()}),
    );
    assert_eq!(
        session.evidence_count(),
        1,
        "a refused opening discards nothing"
    );
    call_and_check_ledger(&tools, "list_segments", json!({}));
    call_and_check_ledger(&tools, "close_binary", json!({}));
    assert_eq!(session.evidence_count(), 0);
}

#[test]
fn list_documents_evidence_carries_the_current_document() {
    // The session's targets always carry the current document, so list_documents records it
    // although it observes no single document (see the tools module docs).
    let (session, tools) = with_fake();
    let listed = success(&tools, "list_documents", json!({}));
    let record = session
        .evidence(listed["evidence_id"].as_str().unwrap())
        .unwrap();
    assert_eq!(record.document.as_deref(), Some("app"));
    assert_eq!(record.provider.as_deref(), Some("fake"));
}

#[test]
fn list_evidence_pages_the_ledger_oldest_first() {
    let (session, tools) = with_fake();
    let empty = success(&tools, "list_evidence", json!({}));
    assert_eq!(
        empty,
        *json!({"evidence": [], "next_cursor": null, "total": 0})
            .as_object()
            .unwrap()
    );
    for limit in 1..=5 {
        success(&tools, "list_procedures", json!({"limit": limit}));
    }
    let ids = session.evidence_ids();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut arguments = json!({"limit": 2});
        if let Some(cursor) = &cursor {
            arguments["cursor"] = json!(cursor);
        }
        let page = success(&tools, "list_evidence", arguments);
        assert_eq!(page["total"], 5);
        for summary in page["evidence"].as_array().unwrap() {
            let id = summary["id"].as_str().unwrap();
            let record = session.evidence(id).unwrap();
            assert_eq!(
                *summary,
                json!({
                    "id": id,
                    "sequence": record.sequence,
                    "operation": "list_procedures",
                    "arguments": record.arguments,
                    "provider": "fake",
                    "document": "app",
                })
            );
            seen.push(id.to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ids);
    assert_eq!(session.evidence_count(), 5, "list_evidence appends nothing");
    let sequences: Vec<u64> = ids
        .iter()
        .map(|id| session.evidence(id).unwrap().sequence)
        .collect();
    assert_eq!(sequences, [1, 2, 3, 4, 5]);
}

#[test]
fn get_evidence_returns_the_full_record() {
    let files = Files::new();
    let (session, tools) = with_catalog(&files);
    let info = success(&tools, "procedure_info", json!({"procedure": "main"}));
    let id = info["evidence_id"].as_str().unwrap();
    let record = success(&tools, "get_evidence", json!({"id": id}));
    let mut result = info.clone();
    result.remove("evidence_id");
    assert_eq!(
        record,
        *json!({
            "id": id,
            "sequence": 1,
            "operation": "procedure_info",
            "arguments": {"procedure": "main"},
            "result": result,
            "provider": "catalog",
            "document": "app",
        })
        .as_object()
        .unwrap()
    );
    assert_eq!(session.evidence_count(), 1, "get_evidence appends nothing");
}

#[test]
fn the_ledger_tools_work_with_no_binary_open() {
    let (_, tools) = closed();
    let page = success(&tools, "list_evidence", json!({"limit": 100}));
    assert_eq!(page["evidence"], json!([]));
    assert_eq!(page["total"], 0);
}
