//! The `list_imports` tool: paged imports of the native provider with Evidence, its output on
//! a small hand-written PE, and its errors (a catalog does not support it, a bad cursor).

use serde_json::{Value, json};

use crate::support::fixtures;
use crate::support::tools::{
    Files, failure, snapshot, stripped_system_binary, success, with_binary, with_catalog,
};

#[test]
fn list_imports_pages_a_pe_and_records_evidence() {
    let files = Files::new();
    let path = files.dir.path().join("app.exe");
    std::fs::write(&path, fixtures::pe_imports::build().0).unwrap();
    let (_, tools) = with_binary(&path);
    let whole = success(&tools, "list_imports", json!({}));
    assert!(whole["evidence_id"].is_string());
    assert_eq!(whole["next_cursor"], Value::Null);
    snapshot(
        "tools_imports__of_a_small_pe",
        &serde_json::to_string_pretty(&whole).unwrap(),
        Some(&files),
    );
    let first = success(&tools, "list_imports", json!({"limit": 2}));
    assert_eq!(first["imports"].as_array().unwrap().len(), 2);
    let cursor = first["next_cursor"].clone();
    let second = success(
        &tools,
        "list_imports",
        json!({"cursor": cursor, "limit": 2}),
    );
    assert_eq!(second["next_cursor"], Value::Null);
    let mut paged = first["imports"].as_array().unwrap().clone();
    paged.extend(second["imports"].as_array().unwrap().clone());
    assert_eq!(&Value::Array(paged), &whole["imports"]);
    // Every call is its own Evidence.
    let evidence = success(&tools, "list_evidence", json!({}));
    let operations: Vec<&str> = evidence["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|record| record["operation"].as_str())
        .filter(|operation| *operation == "list_imports")
        .collect();
    assert_eq!(operations.len(), 3);
}

#[test]
fn list_imports_of_a_system_binary_names_libraries() {
    let Some(path) = stripped_system_binary() else {
        println!("skipped: no system binary");
        return;
    };
    let (_, tools) = with_binary(&path);
    let page = success(&tools, "list_imports", json!({"limit": 500}));
    let imports = page["imports"].as_array().unwrap();
    assert!(!imports.is_empty());
    assert!(
        imports.iter().any(|import| import["library"]
            .as_str()
            .is_some_and(|l| l.starts_with("libc.so"))),
        "{page:?}"
    );
}

#[test]
fn list_imports_errors_are_clear() {
    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    snapshot(
        "tools_imports__unsupported_by_the_catalog",
        &failure(&tools, "list_imports", json!({})),
        Some(&files),
    );
    let path = files.dir.path().join("app.exe");
    std::fs::write(&path, fixtures::pe_imports::build().0).unwrap();
    let (_, tools) = with_binary(&path);
    snapshot(
        "tools_imports__bad_cursor",
        &failure(&tools, "list_imports", json!({"cursor": "import:99"})),
        Some(&files),
    );
    snapshot(
        "tools_imports__limit_over_the_page_size",
        &failure(&tools, "list_imports", json!({"limit": 501})),
        Some(&files),
    );
}
