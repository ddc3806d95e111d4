//! One quoting rule everywhere: a tool error quotes at most 64 consecutive characters of what
//! the caller sent (`text::cut`), whichever argument of whichever tool held it, in whatever
//! form, with or without a binary open.

use std::collections::BTreeMap;

use crate::support::caller_text::{Echoes, LONG_CHARS, QUOTED_CHARS, cases, long_value, matching};
use crate::support::fixtures::{self, Format, Spec};
use crate::support::tools::{Files, call, closed, success, with_binary};
use rea::tools::ToolBox;
use serde_json::json;

/// Whether the walk runs with a binary open.
#[derive(Clone, Copy, Debug)]
enum Binary {
    Closed,
    Open,
}

/// A session for one tool's cases, and the free text its required arguments are filled with:
/// with a binary open, values the session knows (a procedure's address, the current document,
/// a registered unknown, a retained inventory, an Evidence ID, the fixture's folder) so that a
/// call gets past its other arguments to the hostile one.
fn session(binary: Binary, files: &Files) -> (ToolBox, Vec<String>) {
    let folder = files.dir.path().display().to_string();
    match binary {
        Binary::Closed => (closed().1, vec!["x".to_owned(), folder]),
        Binary::Open => {
            let (_, tools) = with_binary(&files.dir.path().join("sample.elf"));
            let first = success(&tools, "list_procedures", json!({"limit": 1}));
            let procedure = first["procedures"][0]["address"]
                .as_str()
                .unwrap()
                .to_owned();
            let document = success(&tools, "current_document", json!({}))["document"]
                .as_str()
                .unwrap()
                .to_owned();
            let unknown = success(&tools, "register_unknown", json!({"question": "Why?"}));
            let inventory = success(&tools, "inventory_artifacts", json!({"path": folder}));
            let fillers = vec![
                procedure,
                document,
                unknown["id"].as_str().unwrap().to_owned(),
                inventory["manifest_id"].as_str().unwrap().to_owned(),
                first["evidence_id"].as_str().unwrap().to_owned(),
                folder,
                "x".to_owned(),
            ];
            (tools, fillers)
        }
    }
}

#[test]
fn no_tool_error_quotes_more_than_64_characters_of_any_argument() {
    let files = Files::new();
    let built = fixtures::build(&Spec::sample(), Format::Elf);
    std::fs::write(files.dir.path().join("sample.elf"), &built.bytes).unwrap();
    let value = long_value(15);
    let echoes = Echoes::of(&value);
    // (tool, binary) -> (calls, errors): the walk reaches every tool in both states.
    let mut seen: BTreeMap<(&str, String), (usize, usize)> = BTreeMap::new();
    let mut accepted = Vec::new();
    let mut problems = Vec::new();
    for binary in [Binary::Closed, Binary::Open] {
        let definitions = closed().1.definitions().to_vec();
        for definition in &definitions {
            let (tools, fillers) = session(binary, &files);
            let name = definition.name();
            for case in cases(name, definition.input_schema(), &value, &fillers) {
                let outcome = call(&tools, name, json!(case.arguments));
                let what = format!("{} with the binary {binary:?}", case.describe());
                let count = seen.entry((name, format!("{binary:?}"))).or_default();
                count.0 += 1;
                if outcome.is_error() {
                    count.1 += 1;
                    problems.extend(echoes.problem(&what, outcome.text()));
                } else if echoes.first_in(outcome.text()).is_some() {
                    accepted.push(what);
                }
            }
        }
        // Every tool of the catalog was walked, and at least once per argument and form.
        for definition in &definitions {
            let (calls, _) = seen[&(definition.name(), format!("{binary:?}"))];
            let arguments = definition.input_schema()["properties"]
                .as_object()
                .unwrap()
                .len();
            assert!(
                calls > arguments * 4,
                "{}: {calls} calls",
                definition.name()
            );
        }
    }
    assert!(
        problems.is_empty(),
        "{} answers quote too much:\n{}",
        problems.len(),
        problems.join("\n")
    );
    // Both outcomes occur: errors (most calls) and tools that keep a long value as given.
    let errors: usize = seen.values().map(|(_, errors)| errors).sum();
    assert!(errors > 1000, "{errors} errors");
    assert!(!accepted.is_empty());
}

#[test]
fn the_walk_helpers_do_what_they_say() {
    let value = long_value(1);
    assert_eq!(value.chars().count(), LONG_CHARS);
    assert_ne!(long_value(2), value);
    let echoes = Echoes::of(&value);
    let cut = format!("x \"{}...\" y", &value[100..100 + QUOTED_CHARS]);
    assert_eq!(echoes.first_in(&cut), None, "64 characters are allowed");
    let echoed = format!("x {} y", &value[100..=100 + QUOTED_CHARS]);
    assert_eq!(echoes.first_in(&echoed), Some(2), "65 are not");
    assert_eq!(matching("^0x[0-9a-f]{1,16}$"), "0x0");
    assert_eq!(matching("^ev-[0-9]{12}$"), "ev-000000000000");
}

/// `verify_reconstruction` accepts claims whose text fields hold 4,096 characters; the reason
/// of each verdict quotes them by the same rule as errors do.
#[test]
fn verdict_reasons_quote_claim_text_by_the_same_rule() {
    let files = Files::new();
    let built = fixtures::build(&Spec::sample(), Format::Elf);
    std::fs::write(files.dir.path().join("sample.elf"), &built.bytes).unwrap();
    let (_, tools) = with_binary(&files.dir.path().join("sample.elf"));
    let value = long_value(17);
    let echoes = Echoes::of(&value);
    let digest = "0".repeat(64);
    let claims = json!([
        {"kind": "procedure_exists", "document": value, "address": "0x1000"},
        {"kind": "procedure_named", "document": value, "address": "0x1000", "name": value},
        {"kind": "bytes_equal", "document": value, "address": "0x1000", "hex": "00"},
        {"kind": "capture_exit_code", "capture": value, "code": 0},
        {"kind": "capture_stdout_digest", "capture": value, "sha256": digest},
        {"kind": "capture_stderr_digest", "capture": value, "sha256": digest},
        {"kind": "calls", "caller": value, "callee": value, "document": value},
        {"kind": "calls", "caller": value, "callee": "0x1000"},
    ]);
    let result = success(&tools, "verify_reconstruction", json!({"claims": claims}));
    let verdicts = result["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 8);
    for verdict in verdicts {
        let reason = verdict["reason"].as_str().unwrap();
        assert_eq!(echoes.problem("a verdict reason", reason), None);
        assert!(
            reason.contains(&format!("{}...", &value[..QUOTED_CHARS])),
            "{reason}"
        );
    }
}
