//! Pseudo-C against what the disassembly shows: on a C program compiled here with `cc -O0`
//! (`tests/adapters/programs/claims.c`), the code angr decompiles for `summarize` names every
//! call the native provider's `callees` reports for it, the decompilation is retained as
//! Evidence marked as decompiler output, and `verify_reconstruction` rests a `calls` claim on
//! the `callees` record, never on the decompilation alone.

use serde_json::{Value, json};

use super::angr::angr_session;
use crate::support::tools::success;
use rea_testkit::angr::compile_program;

/// The name a call site shows in C: the import's symbol, else the procedure's name, without
/// a `@plt` suffix.
fn called_name(edge: &Value) -> String {
    let name = edge["import"]
        .as_str()
        .or_else(|| edge["procedure"]["name"].as_str())
        .unwrap_or_else(|| panic!("native names the callee: {edge}"));
    name.trim_end_matches("@plt").to_owned()
}

fn verdict(tools: &rea::tools::ToolBox, claim: Value) -> serde_json::Map<String, Value> {
    let verified = success(tools, "verify_reconstruction", json!({"claims": [claim]}));
    verified["verdicts"][0].as_object().unwrap().clone()
}

#[test]
fn decompiled_code_names_the_calls_native_reports_and_is_recorded_as_decompiler_output() {
    let dir = tempfile::tempdir().unwrap();
    let binary = compile_program(dir.path(), "claims");
    let (_session, tools) = angr_session(&binary);

    // A decompilation alone supports no claim about calls.
    let decompiled = success(
        &tools,
        "decompile",
        json!({"provider": "angr", "procedure": "summarize"}),
    );
    let claim = json!({"kind": "calls", "caller": "summarize", "callee": "malloc"});
    let alone = verdict(&tools, claim.clone());
    assert_eq!(alone["status"], "unverified", "{alone:?}");

    let code = decompiled["code"].as_str().unwrap();
    let callees = success(
        &tools,
        "callees",
        json!({"provider": "native", "procedure": "summarize"}),
    );
    let called: Vec<String> = callees["callees"]
        .as_array()
        .unwrap()
        .iter()
        .map(called_name)
        .collect();
    println!("native callees of summarize: {called:?}");
    for expected in ["strlen", "malloc", "memcpy", "weigh", "printf", "free"] {
        assert!(
            called.iter().any(|name| name == expected),
            "native reports the call to {expected}: {called:?}"
        );
    }
    for name in &called {
        assert!(
            code.contains(&format!("{name}(")),
            "the pseudo-C names the call to {name}:\n{code}"
        );
    }
    assert!(code.contains("summary of %s"), "its format string:\n{code}");

    // The decompilation is Evidence, marked as decompiler output.
    assert_eq!(decompiled["evidence_kind"], "decompiler_output");
    let id = decompiled["evidence_id"].as_str().unwrap();
    let record = success(&tools, "get_evidence", json!({"id": id}));
    assert_eq!(record["operation"], "decompile", "{record:?}");
    assert_eq!(record["provider"], "angr");
    assert_eq!(record["result"]["evidence_kind"], "decompiler_output");
    assert_eq!(record["result"]["code"], decompiled["code"]);

    // With the callees record retained, the claim is supported by it, and only by it.
    let supported = verdict(&tools, claim);
    assert_eq!(supported["status"], "supported", "{supported:?}");
    assert_eq!(supported["evidence"], json!([callees["evidence_id"]]));
}
