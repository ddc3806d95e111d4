//! Annotations are durable (docs/CONTRACT.md sections 16 and 17): a batch answered by the real
//! server is in the store, and a restart (the process killed, `--store` the same file) shows
//! the same annotations, labels and history, and numbers new ones past the old.

use std::path::Path;

use crate::support::fixtures::{Format, Spec, build};
use crate::support::server_process::ServerProcess;
use serde_json::{Value, json};

const REA: &str = env!("CARGO_BIN_EXE_rea-under-test");

fn serve(store: &Path, binary: &Path) -> ServerProcess {
    ServerProcess::start_with(
        REA,
        [
            "--store".as_ref(),
            store.as_os_str(),
            "--open".as_ref(),
            binary.as_os_str(),
        ],
    )
}

fn structured(result: &Value) -> Value {
    assert_eq!(result["isError"], json!(false), "{result}");
    result["structuredContent"].clone()
}

/// What a client sees of the annotations: the history, the effective list, the labels
/// beside the provider's names, and an export.
fn seen(server: &mut ServerProcess) -> Vec<Value> {
    let history = structured(&server.tool("list_annotations", json!({"history": true})));
    let effective = structured(&server.tool("list_annotations", json!({})));
    let info = structured(&server.tool("procedure_info", json!({"procedure": "main"})));
    let export = structured(&server.tool("export_annotations", json!({"format": "json"})));
    vec![
        history,
        effective,
        info["label"].clone(),
        export["text"].clone(),
    ]
}

#[test]
fn a_restart_gives_the_same_annotations_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("sample");
    std::fs::write(&binary, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let store = dir.path().join("store.sqlite");

    let mut first = serve(&store, &binary);
    let listed = structured(&first.tool("list_procedures", json!({})));
    let evidence = listed["evidence_id"].as_str().unwrap().to_owned();
    let annotated = structured(&first.tool(
        "annotate",
        json!({"edits": [
            {"kind": "name", "procedure": "main", "name": "parse_args", "evidence": [evidence]},
            {"kind": "name", "procedure": "api_open", "name": "open_config", "evidence": [evidence]},
            {"kind": "prototype", "procedure": "main", "declaration": "int main(int argc, char **argv)", "evidence": [evidence]},
        ]}),
    ));
    let undone = annotated["annotations"][1]["id"].clone();
    structured(&first.tool("undo_annotation", json!({"annotation": undone})));
    let before = seen(&mut first);
    assert_eq!(before[2], json!("parse_args"), "{before:?}");
    drop(first);

    let mut second = serve(&store, &binary);
    let after = seen(&mut second);
    assert_eq!(after, before);
    // Numbering continues past the store's: a new annotation never reuses an ID.
    let again = structured(&second.tool(
        "annotate",
        json!({"edits": [{"kind": "comment", "address": listed["procedures"][0]["address"], "text": "entry", "evidence": [evidence]}]}),
    ));
    let highest = before[0]["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .max()
        .unwrap();
    assert!(again["annotations"][0]["id"].as_str().unwrap() > highest.as_str());
}
