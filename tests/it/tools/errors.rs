//! Every failure is an `isError` result with a clear message (snapshotted here), appends no
//! Evidence and is a valid `CallToolResult`; only an unknown tool name is an `Err`.

use std::sync::Arc;

use crate::support::fixtures::fake::{Behaviour, FakeProvider};
use crate::support::tools::{
    Files, closed, failure, snapshot, snapshot_filtered, stripped_system_binary, success,
    with_binary, with_catalog, with_fake,
};
use rea::session::Provider;
use rea::tools::ToolBox;
use serde_json::{Map, Value, json};

/// Calls `tool`, expects an error result that appends nothing, and snapshots its message.
fn expect_error(tools: &ToolBox, tool: &str, arguments: Value, name: &str, files: Option<&Files>) {
    let before = tools.session().unwrap().evidence_ids();
    let message = failure(tools, tool, arguments);
    assert_eq!(
        tools.session().unwrap().evidence_ids(),
        before,
        "{name}: no Evidence"
    );
    snapshot(&format!("tools_errors__{name}"), &message, files);
}

#[test]
fn an_unknown_tool_is_the_only_err() {
    let (_, tools) = closed();
    let error = tools.call("no_such_tool", &Map::new()).unwrap_err();
    snapshot("tools_errors__unknown_tool", &error.to_string(), None);
    let hostile = format!("evil\n\u{202e}{}", "x".repeat(10_000));
    let error = tools.call(&hostile, &Map::new()).unwrap_err();
    // Cut by the one rule for quoted caller text: 64 characters and an ellipsis.
    assert_eq!(
        error.name,
        format!("{}...", hostile.chars().take(64).collect::<String>())
    );
    snapshot(
        "tools_errors__unknown_tool_hostile_name",
        &error.to_string(),
        None,
    );
    // Names are exact: no case folding, no trimming.
    assert!(tools.call("Open_Binary", &Map::new()).is_err());
    assert!(tools.call(" open_binary", &Map::new()).is_err());
}

#[test]
fn argument_errors_name_the_tool_and_the_argument() {
    let (_, tools) = with_fake();
    let long = "x".repeat(4097);
    let cases: [(&str, Value, &str); 17] = [
        ("list_procedures", json!({"limt": 5}), "unknown_argument"),
        (
            "close_binary",
            json!({"force": true}),
            "unknown_argument_of_a_tool_without_arguments",
        ),
        ("open_binary", json!({}), "missing_argument"),
        ("open_binary", json!({"path": 5}), "string_expected"),
        (
            "list_procedures",
            json!({"cursor": null}),
            "null_for_an_optional_argument",
        ),
        (
            "list_procedures",
            json!({"limit": "10"}),
            "integer_expected",
        ),
        ("procedure_info", json!({"procedure": ""}), "empty_text"),
        (
            "procedure_info",
            json!({"procedure": long}),
            "text_over_4096_characters",
        ),
        ("list_procedures", json!({"limit": 0}), "limit_zero"),
        (
            "list_procedures",
            json!({"limit": 501}),
            "limit_over_the_page_size",
        ),
        (
            "list_procedures",
            json!({"limit": 2.5}),
            "limit_not_an_integer",
        ),
        ("list_evidence", json!({"limit": -1}), "limit_negative"),
        (
            "read_bytes",
            json!({"address": "0x1000", "length": 4097}),
            "read_over_4096_bytes",
        ),
        (
            "read_bytes",
            json!({"address": "0x1000", "length": 0}),
            "read_zero_bytes",
        ),
        (
            "read_bytes",
            json!({"address": "0X1000", "length": 4}),
            "address_syntax",
        ),
        (
            "search_procedures",
            json!({"query": "a", "match": "fuzzy"}),
            "choice_not_an_option",
        ),
        ("get_evidence", json!({"id": "ev-1"}), "evidence_id_syntax"),
    ];
    for (tool, arguments, name) in cases {
        expect_error(&tools, tool, arguments, name, None);
    }
}

#[test]
fn integral_floats_count_as_integers() {
    let (_, tools) = with_fake();
    let page = success(&tools, "list_procedures", json!({"limit": 2.0}));
    assert_eq!(page["procedures"].as_array().unwrap().len(), 2);
}

#[test]
fn provider_tools_need_an_open_binary() {
    let (_, tools) = closed();
    let backed: Vec<&str> = tools
        .definitions()
        .iter()
        // `compare_procedures` names the side it could not read (snapshotted in `compare`).
        .filter(|d| d.operation().is_some() && d.name() != "compare_procedures")
        .map(|d| d.name())
        .collect();
    let minimal = |tool: &str| match tool {
        "procedure_info" | "callers" | "callees" | "disassemble" | "decompile" => {
            json!({"procedure": "main"})
        }
        "xrefs_to" => json!({"address": "0x0"}),
        "search_procedures" => json!({"query": "main"}),
        "read_bytes" => json!({"address": "0x0", "length": 1}),
        _ => json!({}),
    };
    let messages: Vec<String> = backed
        .iter()
        .map(|tool| failure(&tools, tool, minimal(tool)))
        .collect();
    assert!(messages.iter().all(|m| *m == messages[0]), "{messages:?}");
    snapshot("tools_errors__no_binary_open", &messages[0], None);
    expect_error(
        &tools,
        "close_binary",
        json!({}),
        "close_without_a_binary",
        None,
    );
    expect_error(
        &tools,
        "set_current_document",
        json!({"document": "app"}),
        "select_without_a_binary",
        None,
    );
}

#[test]
fn open_binary_errors_name_the_file() {
    let files = Files::new();
    let (session, tools) = closed();
    for (path, name) in [
        (files.path("missing.bin"), "open_a_missing_file"),
        (files.path("notes.txt"), "open_not_a_binary"),
        (files.path("broken.json"), "open_an_invalid_catalog"),
        (files.path(""), "open_a_directory"),
    ] {
        expect_error(
            &tools,
            "open_binary",
            json!({"path": path}),
            name,
            Some(&files),
        );
    }
    assert!(
        session.label().is_none(),
        "a failed open leaves the session closed"
    );
}

#[test]
fn a_failed_open_keeps_the_open_binary() {
    let files = Files::new();
    let (session, tools) = with_catalog(&files);
    success(&tools, "list_segments", json!({}));
    failure(
        &tools,
        "open_binary",
        json!({"path": files.path("notes.txt")}),
    );
    assert_eq!(session.label(), Some(files.catalog()));
    assert_eq!(session.evidence_count(), 1);
}

#[test]
fn unknown_providers_and_documents_are_named() {
    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    expect_error(
        &tools,
        "list_documents",
        json!({"provider": "ghidra"}),
        "unknown_provider",
        None,
    );
    expect_error(
        &tools,
        "list_procedures",
        json!({"document": "missing"}),
        "unknown_document",
        None,
    );
    expect_error(
        &tools,
        "set_current_document",
        json!({"document": "missing"}),
        "select_an_unknown_document",
        None,
    );
    expect_error(
        &tools,
        "list_procedures",
        json!({"cursor": "bogus"}),
        "invalid_cursor",
        None,
    );
}

#[test]
fn unsupported_operations_say_what_the_provider_supports() {
    let (_, tools) = with_fake();
    expect_error(
        &tools,
        "procedure_info",
        json!({"procedure": "main"}),
        "unsupported_by_the_fake",
        None,
    );
    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    expect_error(
        &tools,
        "read_bytes",
        json!({"address": "0x1000", "length": 4}),
        "unsupported_by_the_catalog",
        None,
    );
    expect_error(
        &tools,
        "search_strings",
        json!({}),
        "strings_unsupported_by_the_catalog",
        None,
    );
}

#[test]
fn procedure_arguments_resolve_to_exactly_one_address() {
    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    expect_error(
        &tools,
        "procedure_info",
        json!({"procedure": "helper"}),
        "ambiguous_procedure_name",
        None,
    );
    expect_error(
        &tools,
        "procedure_info",
        json!({"procedure": "nothing"}),
        "unknown_procedure_name",
        None,
    );
    expect_error(
        &tools,
        "procedure_info",
        json!({"procedure": "0x1001"}),
        "no_procedure_at_the_address",
        None,
    );
}

#[test]
fn reads_outside_the_file_are_refused() {
    let path = stripped_system_binary().expect("/bin/ls or similar");
    let (_, tools) = with_binary(&path);
    let message = failure(
        &tools,
        "read_bytes",
        json!({"address": "0x0", "length": 16}),
    );
    let document = path.file_name().unwrap().to_string_lossy();
    assert_eq!(
        message,
        format!(
            "provider \"native\" failed: address 0x0 is not backed by file bytes in document {document:?}"
        )
    );
    snapshot_filtered(
        "tools_errors__unmapped_read",
        &message,
        None,
        &[(&regex::escape(document.as_ref()), "[binary]")],
    );
}

#[test]
fn provider_failures_name_the_provider() {
    let (session, tools) = with_fake();
    let broken: Arc<dyn Provider> =
        Arc::new(FakeProvider::new("broken", vec![]).behaving(Behaviour::Fail));
    session.declare_provider(broken).unwrap();
    expect_error(
        &tools,
        "list_documents",
        json!({"provider": "broken"}),
        "provider_failure",
        None,
    );
}

#[test]
fn a_binary_without_documents_has_no_current_document() {
    let (session, tools) = closed();
    let empty: Arc<dyn Provider> = Arc::new(FakeProvider::new("empty", vec![]));
    session.open_providers("empty", vec![empty]).unwrap();
    expect_error(
        &tools,
        "list_procedures",
        json!({}),
        "no_current_document",
        None,
    );
}

#[test]
fn evidence_of_another_session_is_not_found() {
    let (_, tools) = with_fake();
    expect_error(
        &tools,
        "get_evidence",
        json!({"id": "ev-999999999999"}),
        "unknown_evidence",
        None,
    );
    let listed = success(&tools, "list_procedures", json!({}));
    let id = listed["evidence_id"].clone();
    success(&tools, "close_binary", json!({}));
    let message = failure(&tools, "get_evidence", json!({"id": id}));
    assert_eq!(
        message,
        format!("no Evidence with ID {id} is retained in this session")
    );
}
