//! Labels beside the provider's names (docs/CONTRACT.md section 17): every tool that shows a
//! procedure shows its label; a label names a procedure in tool arguments; undoing removes it;
//! two sessions never see each other's annotations.

use serde_json::{Value, json};

use crate::support::code;
use crate::support::tools::{failure, success, with_binary};

fn labels_in(value: &Value, key: &str, found: &mut Vec<String>) {
    match value {
        Value::Object(object) => {
            if let Some(Value::String(label)) = object.get(key) {
                found.push(label.clone());
            }
            object.values().for_each(|v| labels_in(v, key, found));
        }
        Value::Array(items) => items.iter().for_each(|v| labels_in(v, key, found)),
        _ => {}
    }
}

fn labels(result: &serde_json::Map<String, Value>, key: &str) -> Vec<String> {
    let mut found = Vec::new();
    labels_in(&Value::Object(result.clone()), key, &mut found);
    found
}

#[test]
fn every_tool_that_shows_a_procedure_shows_its_label() {
    let dir = tempfile::tempdir().unwrap();
    let program = code::x86_64();
    let binary = dir.path().join("app");
    std::fs::write(&binary, &program.bytes).unwrap();
    let (session, tools) = with_binary(&binary);
    let callees = success(&tools, "callees", json!({"procedure": "main"}));
    let helper = format!("{:#x}", program.helper);
    let main = format!("{:#x}", program.main);
    success(
        &tools,
        "annotate",
        json!({"edits": [
            {"kind": "name", "procedure": helper, "name": "emit_greeting", "evidence": [callees["evidence_id"]]},
            {"kind": "name", "procedure": "main", "name": "entry_logic", "evidence": [callees["evidence_id"]]},
        ]}),
    );
    let listed = success(&tools, "list_procedures", json!({}));
    let mut shown = labels(&listed, "label");
    shown.sort();
    assert_eq!(shown, ["emit_greeting", "entry_logic"]);
    // A label names the procedure in arguments, as a unique provider name does.
    let info = success(
        &tools,
        "procedure_info",
        json!({"procedure": "emit_greeting"}),
    );
    assert_eq!(info["address"], json!(helper));
    assert_eq!(info["label"], json!("emit_greeting"));
    let found = success(&tools, "search_procedures", json!({"query": "main"}));
    assert!(
        labels(&found, "label").contains(&"entry_logic".to_owned()),
        "{found:?}"
    );
    let callees = success(&tools, "callees", json!({"procedure": "entry_logic"}));
    assert!(
        labels(&callees, "label").contains(&"emit_greeting".to_owned()),
        "{callees:?}"
    );
    let callers = success(&tools, "callers", json!({"procedure": helper}));
    assert!(
        labels(&callers, "label").contains(&"entry_logic".to_owned()),
        "{callers:?}"
    );
    let code = success(&tools, "disassemble", json!({"procedure": main}));
    assert!(
        labels(&code, "target_label").contains(&"emit_greeting".to_owned()),
        "{code:?}"
    );
    let xrefs = success(&tools, "xrefs_to", json!({"address": helper}));
    assert!(
        labels(&xrefs, "label").contains(&"emit_greeting".to_owned()),
        "{xrefs:?}"
    );

    // Undone, the label is gone everywhere, and no longer names the procedure.
    let history = session.annotation_history();
    let id = history[0].0.id.to_string();
    success(&tools, "undo_annotation", json!({"annotation": id}));
    let listed = success(&tools, "list_procedures", json!({}));
    assert_eq!(labels(&listed, "label"), ["entry_logic"]);
    failure(
        &tools,
        "procedure_info",
        json!({"procedure": "emit_greeting"}),
    );
}

#[test]
fn two_sessions_never_see_each_others_annotations() {
    let dir = tempfile::tempdir().unwrap();
    let program = code::x86_64();
    let binary = dir.path().join("app");
    std::fs::write(&binary, &program.bytes).unwrap();
    let (first, first_tools) = with_binary(&binary);
    let (second, second_tools) = with_binary(&binary);
    let evidence = success(&first_tools, "list_procedures", json!({}))["evidence_id"].clone();
    success(
        &first_tools,
        "annotate",
        json!({"edits": [{"kind": "name", "procedure": "main", "name": "mine", "evidence": [evidence]}]}),
    );
    // The other session's Evidence is no Evidence here.
    let message = failure(
        &second_tools,
        "annotate",
        json!({"edits": [{"kind": "name", "procedure": "main", "name": "theirs", "evidence": [evidence]}]}),
    );
    assert!(message.starts_with("edits[0].evidence"), "{message}");
    assert!(second.annotation_history().is_empty());
    assert!(second.labels().is_empty());
    let listed = success(&second_tools, "list_procedures", json!({}));
    assert!(labels(&listed, "label").is_empty());
    let listed = success(&second_tools, "list_annotations", json!({"history": true}));
    assert_eq!(listed["total"], json!(0));
    assert_eq!(first.labels().len(), 1);
}

/// Completes `procedure` of trace_crash with `value` and, for the dossier template, its
/// `procedure` variable, through the real server; both must agree.
fn completed(server: &mut rea_testkit::server_process::ServerProcess, value: &str) -> Vec<String> {
    let mut answers = Vec::new();
    for reference in [
        json!({"type": "ref/prompt", "name": "trace_crash"}),
        json!({"type": "ref/resource",
               "uri": "rea://session/{session}/document/{document}/procedure/{procedure}"}),
    ] {
        let id = server.send(
            "completion/complete",
            json!({"ref": reference, "argument": {"name": "procedure", "value": value}}),
        );
        let answer = server.response(id);
        let values: Vec<String> =
            serde_json::from_value(answer["result"]["completion"]["values"].clone())
                .unwrap_or_else(|_| panic!("{answer}"));
        answers.push(values);
    }
    assert_eq!(answers[0], answers[1], "the prompt and the template agree");
    answers.remove(0)
}

#[test]
fn completion_offers_a_label_that_names_one_address_and_forgets_it_when_undone() {
    let dir = tempfile::tempdir().unwrap();
    let program = code::x86_64();
    let binary = dir.path().join("app");
    std::fs::write(&binary, &program.bytes).unwrap();
    let mut server =
        rea_testkit::server_process::ServerProcess::start(env!("CARGO_BIN_EXE_rea-under-test"));
    let opened = server.tool("open_binary", json!({"path": binary}));
    assert_eq!(opened["isError"], false, "{opened}");
    let evidence =
        server.tool("callees", json!({"procedure": "main"}))["structuredContent"]["evidence_id"]
            .clone();
    assert!(completed(&mut server, "emit").is_empty());
    let helper = format!("{:#x}", program.helper);
    let annotated = server.tool(
        "annotate",
        json!({"edits": [{"kind": "name", "procedure": helper, "name": "emit_greeting",
                          "evidence": [evidence]}]}),
    );
    assert_eq!(annotated["isError"], false, "{annotated}");
    assert_eq!(completed(&mut server, "emit"), ["emit_greeting"]);
    assert_eq!(
        completed(&mut server, "EMIT_G"),
        ["emit_greeting"],
        "matched as names are"
    );
    // A label equal to another procedure's provider name makes that name ambiguous: neither
    // is offered (and neither resolves), until the label is undone.
    assert_eq!(completed(&mut server, "mai"), ["main"]);
    let clash = server.tool(
        "annotate",
        json!({"edits": [{"kind": "name", "procedure": helper, "name": "main",
                          "evidence": [evidence]}]}),
    );
    assert_eq!(clash["isError"], false, "{clash}");
    assert!(completed(&mut server, "mai").is_empty());
    assert!(
        completed(&mut server, "emit").is_empty(),
        "the newest name replaced the label"
    );
    let ambiguous = server.tool("procedure_info", json!({"procedure": "main"}));
    assert_eq!(ambiguous["isError"], true, "{ambiguous}");
    let clash_id = clash["structuredContent"]["annotations"][0]["id"].clone();
    let undone = server.tool("undo_annotation", json!({"annotation": clash_id}));
    assert_eq!(undone["isError"], false, "{undone}");
    assert_eq!(completed(&mut server, "mai"), ["main"]);
    assert_eq!(completed(&mut server, "emit"), ["emit_greeting"]);
    server.finish();
}
