//! The four annotation tools through the ToolBox (docs/CONTRACT.md section 17): a batch
//! commits whole, cites Evidence and is one change record; list, undo (and undo of an undo)
//! and export; the exported scripts parse as Python.

use std::sync::Arc;

use crate::support::fixtures::{Format, Spec, build};
use crate::support::tools::{failure, success, with_binary};
use rea::session::Session;
use rea::tools::ToolBox;
use serde_json::{Value, json};

/// A session over the generated sample ELF, with one `list_procedures` Evidence record.
pub(super) struct Sample {
    pub(super) _dir: tempfile::TempDir,
    pub(super) session: Arc<Session>,
    pub(super) tools: ToolBox,
    pub(super) evidence: String,
    /// Address of each named procedure.
    pub(super) main: String,
    pub(super) api_open: String,
    pub(super) text: String,
}

pub(super) fn sample() -> Sample {
    let dir = tempfile::tempdir().unwrap();
    let built = build(&Spec::sample(), Format::Elf);
    let path = dir.path().join("sample");
    std::fs::write(&path, &built.bytes).unwrap();
    let (session, tools) = with_binary(&path);
    let listed = success(&tools, "list_procedures", json!({}));
    let address_of = |name: &str| {
        listed["procedures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == json!(name))
            .unwrap_or_else(|| panic!("{name} is listed: {listed:?}"))["address"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    Sample {
        main: address_of("main"),
        api_open: address_of("api_open"),
        text: format!("{:#x}", built.text_address + 1),
        evidence: listed["evidence_id"].as_str().unwrap().to_owned(),
        session,
        tools,
        _dir: dir,
    }
}

fn ids(result: &serde_json::Map<String, Value>) -> Vec<String> {
    result["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_batch_commits_every_edit_as_one_change_record_citing_its_evidence() {
    let s = sample();
    let before = s.session.evidence_count();
    let result = success(
        &s.tools,
        "annotate",
        json!({"edits": [
            {"kind": "name", "procedure": "main", "name": "parse_args", "evidence": [s.evidence]},
            {"kind": "comment", "address": s.text, "text": "reads argv\nline two", "evidence": [s.evidence]},
            {"kind": "prototype", "procedure": s.api_open, "declaration": "int api_open(const char *path, size_t n)", "evidence": [s.evidence]},
        ]}),
    );
    let annotated = ids(&result);
    assert_eq!(annotated.len(), 3);
    assert!(
        annotated
            .iter()
            .all(|id| id.starts_with("ann-") && id.is_ascii())
    );
    assert!(annotated.windows(2).all(|w| w[0] < w[1]), "{annotated:?}");
    assert_eq!(result["annotations"][0]["address"], json!(s.main));
    assert_eq!(result["annotations"][0]["procedure"], json!(true));
    // One change record, citing the Evidence of every edit.
    assert_eq!(s.session.evidence_count(), before + 1);
    let record = s
        .session
        .evidence(result["change_record"].as_str().unwrap())
        .unwrap();
    assert_eq!(record.operation, "annotate");
    let cited: Vec<&Value> = record.result["annotations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["evidence"][0])
        .collect();
    assert_eq!(cited, vec![&json!(s.evidence); 3]);

    let listed = success(&s.tools, "list_annotations", json!({}));
    assert_eq!(ids(&listed), annotated);
    let names = success(&s.tools, "list_annotations", json!({"kind": "name"}));
    assert_eq!(ids(&names), annotated[..1]);
    let at = success(&s.tools, "list_annotations", json!({"address": s.text}));
    assert_eq!(ids(&at), annotated[1..2]);
    let paged = success(&s.tools, "list_annotations", json!({"limit": 2}));
    assert_eq!(ids(&paged), annotated[..2]);
    let rest = success(
        &s.tools,
        "list_annotations",
        json!({"limit": 2, "cursor": paged["next_cursor"]}),
    );
    assert_eq!(ids(&rest), annotated[2..]);
    assert_eq!(rest["next_cursor"], Value::Null);
}

#[test]
fn undo_reverts_by_a_new_revision_and_undo_of_an_undo_applies_again() {
    let s = sample();
    let name = |name: &str| json!({"edits": [{"kind": "name", "procedure": "main", "name": name, "evidence": [s.evidence]}]});
    let first = ids(&success(&s.tools, "annotate", name("parse_args")))[0].clone();
    let second = ids(&success(&s.tools, "annotate", name("parse_options")))[0].clone();
    let label = || {
        s.session
            .labels()
            .values()
            .cloned()
            .collect::<Vec<String>>()
    };
    assert_eq!(label(), ["parse_options"]);

    let undo = success(&s.tools, "undo_annotation", json!({"annotation": second}));
    assert_eq!(undo["reverted"], json!(second));
    assert_eq!(undo["reapplied"], Value::Null);
    // The earlier name shows again; the history keeps all three revisions.
    assert_eq!(label(), ["parse_args"]);
    let history = success(&s.tools, "list_annotations", json!({"history": true}));
    assert_eq!(history["total"], json!(3));
    assert_eq!(history["annotations"][1]["effective"], json!(false));
    assert_eq!(
        history["annotations"][1]["undone_by"],
        undo["annotation"]["id"]
    );
    let effective = success(&s.tools, "list_annotations", json!({}));
    assert_eq!(ids(&effective), [first]);

    let undo_id = undo["annotation"]["id"].as_str().unwrap().to_owned();
    let redo = success(&s.tools, "undo_annotation", json!({"annotation": undo_id}));
    assert_eq!(redo["reapplied"], json!(second));
    assert_eq!(label(), ["parse_options"]);
    // Undoing something undone is refused, and changes nothing.
    let before = s.session.evidence_count();
    let message = failure(&s.tools, "undo_annotation", json!({"annotation": undo_id}));
    assert!(message.contains("undone already"), "{message}");
    assert_eq!(s.session.evidence_count(), before);
}

#[test]
fn export_answers_scripts_that_parse_and_writes_nothing() {
    let s = sample();
    success(
        &s.tools,
        "annotate",
        json!({"edits": [
            {"kind": "name", "procedure": "main", "name": "parse_args", "evidence": [s.evidence]},
            {"kind": "name", "address": s.text, "name": "table$1", "evidence": [s.evidence]},
            {"kind": "comment", "address": s.text, "text": "quote \" backslash \\ and\nnewline 'x' é", "evidence": [s.evidence]},
            {"kind": "prototype", "procedure": "main", "declaration": "int main(int argc, char **argv);", "evidence": [s.evidence]},
        ]}),
    );
    let dir = tempfile::tempdir().unwrap();
    for format in ["idapython", "ghidra", "radare2", "json"] {
        let listing_before: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        let result = success(&s.tools, "export_annotations", json!({"format": format}));
        assert!(listing_before.is_empty());
        assert_eq!(result["count"], json!(4));
        let text = result["text"].as_str().unwrap();
        assert!(text.contains("0x"), "{text}");
        match format {
            "idapython" | "ghidra" => {
                let script = dir.path().join(format!("{format}.py"));
                std::fs::write(&script, text).unwrap();
                let checked = std::process::Command::new("python3")
                    .args(["-c", "import ast, sys; ast.parse(open(sys.argv[1]).read())"])
                    .arg(&script)
                    .output()
                    .expect("python3 runs");
                assert!(
                    checked.status.success(),
                    "{format} does not parse: {}\n{text}",
                    String::from_utf8_lossy(&checked.stderr)
                );
                std::fs::remove_file(&script).unwrap();
                assert!(text.contains("parse_args"));
            }
            "radare2" => {
                assert!(text.contains("afn parse_args @ "), "{text}");
                assert!(text.contains("f table$1 @ "), "{text}");
                assert!(text.contains("CCu base64:"), "{text}");
            }
            _ => {
                let parsed: Value = serde_json::from_str(text).unwrap();
                assert_eq!(parsed["annotations"].as_array().unwrap().len(), 4);
            }
        }
    }
}
