//! Binary and target tools (`tools::binary`): open_binary, close_binary, list_providers, list_documents,
//! current_document and set_current_document on a catalog, the fake provider and real binaries.

use std::sync::Arc;

use crate::support::fixtures::fake::{FakeProvider, entry};
use crate::support::tools::{
    Files, call, closed, failure, real_binaries, snapshot, success, with_binary, with_catalog,
    with_fake,
};
use rea::tools::OPEN_SUMMARY_DOCUMENTS;
use serde_json::{Value, json};

#[test]
fn open_binary_opens_a_catalog_and_selects_its_first_document() {
    let files = Files::new();
    let (session, tools) = closed();
    let opened = success(&tools, "open_binary", json!({"path": files.catalog()}));
    assert_eq!(opened["label"], json!(files.catalog()));
    assert_eq!(opened["providers"], json!(["catalog"]));
    assert_eq!(
        opened["documents"],
        json!([
            {"name": "app", "format": "elf", "architecture": "x86_64"},
            {"name": "lib", "format": null, "architecture": null}
        ])
    );
    assert_eq!(opened["current_document"], "app");
    assert_eq!(session.evidence_count(), 0, "opening is not an observation");
    assert_eq!(session.label(), Some(files.catalog()));
}

#[test]
fn open_binary_opens_real_binaries_with_the_native_provider() {
    for path in real_binaries() {
        let (session, tools) = closed();
        let opened = success(
            &tools,
            "open_binary",
            json!({"path": path.display().to_string()}),
        );
        assert_eq!(opened["providers"], json!(["native"]), "{}", path.display());
        let documents = opened["documents"].as_array().unwrap();
        assert_eq!(documents.len(), 1);
        let file_name = path.file_name().unwrap().to_string_lossy();
        assert_eq!(documents[0]["name"], json!(file_name));
        assert!(documents[0]["format"].is_string());
        assert_eq!(opened["current_document"], json!(file_name));
        assert_eq!(session.evidence_count(), 0);
    }
}

#[test]
fn opening_in_a_session_with_a_binary_open_is_refused_and_discards_nothing() {
    let files = Files::new();
    let (session, tools) = with_catalog(&files);
    success(&tools, "list_procedures", json!({}));
    success(&tools, "list_segments", json!({}));
    assert_eq!(session.evidence_count(), 2);
    let binary = real_binaries().remove(0);
    // Naming the session whose binary is open: refused, so opening never discards anything
    // (without `session`, the binary opens in a new session beside it: see tools::sessions).
    let handle = tools.session_handle().unwrap();
    let refused = failure(
        &tools,
        "open_binary",
        json!({"path": binary.display().to_string(), "session": handle.as_str()}),
    );
    snapshot(
        "tools_binary__open_in_a_session_with_a_binary",
        &refused,
        Some(&files),
    );
    assert_eq!(session.evidence_count(), 2, "nothing was discarded");
    assert_eq!(session.label(), Some(files.catalog()));
    // Closed first, the path opens (in a new session).
    success(&tools, "close_binary", json!({}));
    let opened = success(
        &tools,
        "open_binary",
        json!({"path": binary.display().to_string()}),
    );
    assert_ne!(opened["session"], json!(handle.as_str()));
}

#[test]
fn close_binary_closes_and_discards_the_ledger() {
    let files = Files::new();
    let (session, tools) = with_catalog(&files);
    success(&tools, "list_documents", json!({}));
    let handle = tools.session_handle().unwrap();
    let closed = success(&tools, "close_binary", json!({}));
    assert_eq!(
        closed,
        *json!({"label": files.catalog(), "evidence_discarded": 1, "session": handle.as_str()})
            .as_object()
            .unwrap()
    );
    assert_eq!(session.evidence_count(), 0);
    assert!(session.label().is_none());
    let providers = success(&tools, "list_providers", json!({}));
    assert_eq!(providers["providers"], json!([]));
    assert_eq!(providers["label"], json!(null));
}

#[test]
fn list_providers_shows_declared_providers_their_operations_and_the_current_one() {
    let (session, tools) = with_fake();
    let second = FakeProvider::new("second", vec![("other", vec![entry("0x10", Some("f"))])])
        .without_search();
    session.declare_provider(Arc::new(second)).unwrap();
    let listed = success(&tools, "list_providers", json!({}));
    assert_eq!(
        listed,
        *json!({
            "label": "fake-target",
            "providers": [
                {"id": "fake", "operations": ["list_documents", "list_procedures", "search_procedures"], "current": true},
                {"id": "second", "operations": ["list_documents", "list_procedures"], "current": false}
            ]
        })
        .as_object()
        .unwrap()
    );
    assert_eq!(session.evidence_count(), 0, "list_providers is a read");

    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    let listed = success(&tools, "list_providers", json!({}));
    assert_eq!(
        listed["providers"][0]["operations"],
        json!([
            "list_documents",
            "list_procedures",
            "procedure_info",
            "search_procedures",
            "list_segments"
        ])
    );
    for path in real_binaries() {
        let (_, tools) = with_binary(&path);
        let listed = success(&tools, "list_providers", json!({}));
        assert_eq!(
            listed["providers"][0]["operations"]
                .as_array()
                .unwrap()
                .len(),
            rea::session::Operation::ALL.len() - 1,
            "every operation but decompile"
        );
    }
}

#[test]
fn list_documents_lists_the_documents_of_the_current_or_named_provider() {
    let (session, tools) = with_fake();
    let listed = success(&tools, "list_documents", json!({}));
    assert_eq!(listed["provider"], "fake");
    assert_eq!(
        listed["documents"],
        json!([
            {"name": "app", "format": null, "architecture": null},
            {"name": "lib", "format": null, "architecture": null}
        ])
    );
    let second = FakeProvider::new("second", vec![("other", vec![])]);
    session.declare_provider(Arc::new(second)).unwrap();
    let named = success(&tools, "list_documents", json!({"provider": "second"}));
    assert_eq!(named["provider"], "second");
    assert_eq!(named["documents"][0]["name"], "other");

    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    let listed = success(&tools, "list_documents", json!({"provider": "catalog"}));
    assert_eq!(listed["documents"].as_array().unwrap().len(), 2);

    for path in real_binaries() {
        let (_, tools) = with_binary(&path);
        let listed = success(&tools, "list_documents", json!({}));
        assert_eq!(listed["provider"], "native");
        let documents = listed["documents"].as_array().unwrap();
        assert_eq!(documents.len(), 1, "{}", path.display());
        assert!(documents[0]["architecture"].is_string());
    }
}

#[test]
fn current_document_reports_the_open_target_or_nulls() {
    let (_, tools) = closed();
    let nothing = success(&tools, "current_document", json!({}));
    assert_eq!(
        nothing,
        *json!({"label": null, "provider": null, "document": null})
            .as_object()
            .unwrap()
    );
    let (session, tools) = with_fake();
    let current = success(&tools, "current_document", json!({}));
    assert_eq!(
        current,
        *json!({"label": "fake-target", "provider": "fake", "document": "app"})
            .as_object()
            .unwrap()
    );
    assert_eq!(session.evidence_count(), 0, "current_document is a read");
}

#[test]
fn set_current_document_changes_what_later_calls_use() {
    let files = Files::new();
    let (session, tools) = with_catalog(&files);
    let selected = success(&tools, "set_current_document", json!({"document": "lib"}));
    assert_eq!(
        selected,
        *json!({"provider": "catalog", "document": "lib"})
            .as_object()
            .unwrap()
    );
    assert_eq!(session.current_document().as_deref(), Some("lib"));
    let page = success(&tools, "list_procedures", json!({}));
    assert_eq!(page["document"], "lib");
    assert_eq!(
        page["procedures"],
        json!([{"address": "0x2000", "name": "init"}])
    );
    assert_eq!(
        session.evidence_count(),
        1,
        "only list_procedures was recorded"
    );
}

#[test]
fn set_current_document_can_switch_the_current_provider() {
    let (session, tools) = with_fake();
    let second = FakeProvider::new("second", vec![("other", vec![entry("0x10", Some("f"))])]);
    session.declare_provider(Arc::new(second)).unwrap();
    success(
        &tools,
        "set_current_document",
        json!({"document": "other", "provider": "second"}),
    );
    let current = success(&tools, "current_document", json!({}));
    assert_eq!(current["provider"], "second");
    assert_eq!(current["document"], "other");
    let page = success(&tools, "list_procedures", json!({}));
    assert_eq!(
        page["procedures"],
        json!([{"address": "0x10", "name": "f"}])
    );
}

#[test]
fn set_current_document_on_a_real_binary_keeps_its_only_document() {
    for path in real_binaries() {
        let (session, tools) = with_binary(&path);
        let document = session.current_document().unwrap();
        let selected = success(
            &tools,
            "set_current_document",
            json!({"document": document, "provider": "native"}),
        );
        assert_eq!(selected["document"], json!(document));
        assert_eq!(session.evidence_count(), 0);
    }
}

/// A catalog of `count` documents, one procedure each.
fn many_documents(count: usize) -> Value {
    let documents: Vec<Value> = (0..count)
        .map(|n| json!({"name": format!("doc-{n:05}"), "procedures": [{"address": "0x1000", "name": "main"}]}))
        .collect();
    json!({"schema": "rea.catalog", "version": 1, "documents": documents})
}

#[test]
fn a_catalog_of_thirty_thousand_documents_opens_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("many.json");
    std::fs::write(&path, many_documents(30_000).to_string()).unwrap();
    let (session, tools) = closed();
    let opened = success(&tools, "open_binary", json!({"path": path}));
    assert_eq!(opened["document_count"], 30_000);
    assert_eq!(opened["more_documents"], true);
    assert_eq!(
        opened["documents"].as_array().unwrap().len(),
        OPEN_SUMMARY_DOCUMENTS
    );
    assert_eq!(opened["current_document"], "doc-00000");

    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"limit": 500});
        if let Some(cursor) = &cursor {
            args["cursor"] = json!(cursor);
        }
        let page = success(&tools, "list_documents", args);
        assert_eq!(page["total"], 30_000);
        for document in page["documents"].as_array().unwrap() {
            names.push(document["name"].as_str().unwrap().to_owned());
        }
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    let expected: Vec<String> = (0..30_000).map(|n| format!("doc-{n:05}")).collect();
    assert_eq!(names, expected);
    assert_eq!(session.evidence_count(), 60, "one Evidence record per page");
    let default_page = success(&tools, "list_documents", json!({}));
    assert_eq!(default_page["documents"].as_array().unwrap().len(), 100);
    assert_eq!(default_page["next_cursor"], "100");

    let refused = failure(&tools, "list_documents", json!({"cursor": "30000"}));
    snapshot(
        "tools_binary__list_documents_invalid_cursor",
        &refused,
        None,
    );
    let refused = failure(&tools, "list_documents", json!({"cursor": "007"}));
    assert!(refused.contains("invalid cursor"), "{refused}");
}

#[test]
fn a_failed_open_leaves_the_open_binary_its_ledger_and_its_unknowns() {
    let files = Files::new();
    let (session, tools) = with_catalog(&files);
    success(&tools, "list_documents", json!({}));
    success(&tools, "register_unknown", json!({"question": "kept?"}));
    let before = (
        session.label(),
        session.evidence_ids(),
        session.unresolved_unknown_ids(),
    );
    for bad in ["notes.txt", "broken.json", "missing"] {
        let refused = call(&tools, "open_binary", json!({"path": files.path(bad)}));
        assert!(refused.is_error(), "{bad}");
        let after = (
            session.label(),
            session.evidence_ids(),
            session.unresolved_unknown_ids(),
        );
        assert_eq!(after, before, "{bad}");
    }
}
