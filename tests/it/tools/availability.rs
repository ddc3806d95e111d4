//! Which tools a guided prompt may list: always the tools not backed by a provider; a
//! provider-backed tool when the current provider supports it; with no binary open, what the
//! native provider supports, and renderings then say that `open_binary` comes first.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::support::fixtures::fake::FakeProvider;
use crate::support::tools::{Files, closed, success, this_executable, with_catalog, with_fake};
use rea::prompts::{BinarySession, PromptRegistry};
use rea::providers::native::NativeProvider;
use rea::session::{Operation, Provider};
use serde_json::json;

const NOT_PROVIDER_BACKED: [&str; 22] = [
    "open_binary",
    "close_binary",
    "list_sessions",
    "list_providers",
    "current_document",
    "set_current_document",
    "list_evidence",
    "get_evidence",
    "register_unknown",
    "refine_unknown",
    "resolve_unknown",
    "list_unknowns",
    "annotate",
    "list_annotations",
    "undo_annotation",
    "export_annotations",
    "inventory_artifacts",
    "list_artifact_occurrences",
    "compare_inventories",
    "import_process_capture",
    "verify_reconstruction",
    "run_process_capture",
];

#[test]
fn with_no_binary_open_every_tool_the_native_provider_supports_is_offered() {
    let (_, tools) = closed();
    let availability = tools.availability();
    assert_eq!(availability.binary(), BinarySession::Closed);
    for definition in tools.definitions() {
        assert_eq!(
            availability.offers(definition.name()),
            definition.name() != "decompile",
            "{}",
            definition.name()
        );
    }
    // The assumption behind it: the native provider supports every operation but
    // `decompile`, which is offered only with a decompiler (`--provider angr`).
    let native = NativeProvider::open(&this_executable()).unwrap();
    for operation in Operation::ALL {
        assert_eq!(
            native.supports(operation),
            operation != Operation::Decompile,
            "{operation}"
        );
    }
}

#[test]
fn an_open_binary_offers_what_its_current_provider_supports() {
    let (session, tools) = with_fake();
    let availability = tools.availability();
    assert_eq!(availability.binary(), BinarySession::Open);
    let mut expected: Vec<&str> = NOT_PROVIDER_BACKED.to_vec();
    expected.extend(["list_documents", "list_procedures", "search_procedures"]);
    expected.sort_unstable();
    assert_eq!(availability.offered().collect::<Vec<_>>(), expected);

    // Switching to a provider without search_procedures changes the offer.
    let second = FakeProvider::new("second", vec![("other", vec![])]).without_search();
    session.declare_provider(Arc::new(second)).unwrap();
    assert!(tools.availability().offers("search_procedures"));
    success(
        &tools,
        "set_current_document",
        json!({"document": "other", "provider": "second"}),
    );
    assert!(!tools.availability().offers("search_procedures"));
    assert!(tools.availability().offers("list_procedures"));
}

#[test]
fn a_catalog_offers_no_strings_and_no_bytes_and_closing_restores_the_native_offer() {
    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    let availability = tools.availability();
    assert!(!availability.offers("search_strings"));
    assert!(!availability.offers("read_bytes"));
    assert!(availability.offers("procedure_info"));
    success(&tools, "close_binary", json!({}));
    let availability = tools.availability();
    assert_eq!(availability.binary(), BinarySession::Closed);
    assert!(availability.offers("read_bytes"));
}

#[test]
fn rendered_workflows_list_the_offered_tools_of_the_session() {
    let registry = PromptRegistry::with_builtin();
    let arguments = BTreeMap::from([("feature".to_owned(), "login".to_owned())]);
    let (_, tools) = closed();
    let text = registry
        .render("investigate_feature", &arguments, &tools.availability())
        .unwrap()
        .text()
        .to_owned();
    assert!(text.contains("call `open_binary` first"), "{text}");
    assert!(text.contains("`read_bytes`"));

    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    let rendered = registry
        .render("investigate_feature", &arguments, &tools.availability())
        .unwrap();
    let text = rendered.text();
    assert!(!text.contains("call `open_binary` first"), "{text}");
    let numbered = |tool: &str| text.lines().any(|l| l.contains(&format!(". `{tool}`")));
    assert!(numbered("procedure_info"), "{text}");
    assert!(
        !numbered("read_bytes"),
        "the catalog cannot read bytes: {text}"
    );
    assert!(
        text.contains("`read_bytes`"),
        "named as not offered: {text}"
    );
    assert!(!numbered("search_strings"), "{text}");
    assert!(
        numbered("register_unknown"),
        "not provider-backed, always offered: {text}"
    );
}
