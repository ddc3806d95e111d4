//! Bad input (docs/CONTRACT.md section 17): each a snapshot of its message, naming the edit's
//! index and field, and nothing of the batch committed (no revision, no change record).

use serde_json::{Value, json};

use super::tools::sample;
use crate::support::tools::{failure, snapshot, success, with_fake};

#[test]
fn every_bad_edit_is_named_by_index_and_field_and_nothing_commits() {
    let s = sample();
    let other = {
        let (_, tools) = with_fake();
        let listed = success(&tools, "list_documents", json!({}));
        listed["evidence_id"].as_str().unwrap().to_owned()
    };
    let good = json!({"kind": "name", "procedure": "main", "name": "ok", "evidence": [s.evidence]});
    let edit = |edit: Value| json!({"edits": [good, edit]});
    let long_name = "n".repeat(257);
    let long_comment = "c".repeat(4097);
    let cases: Vec<(&str, Value)> = vec![
        (
            "name_outside_the_set",
            edit(
                json!({"kind": "name", "procedure": "main", "name": "9lives", "evidence": [s.evidence]}),
            ),
        ),
        (
            "name_with_a_space",
            edit(
                json!({"kind": "name", "procedure": "main", "name": "parse args", "evidence": [s.evidence]}),
            ),
        ),
        (
            "name_too_long",
            edit(
                json!({"kind": "name", "procedure": "main", "name": long_name, "evidence": [s.evidence]}),
            ),
        ),
        (
            "comment_with_a_control_character",
            edit(
                json!({"kind": "comment", "address": s.text, "text": "bell\u{7}", "evidence": [s.evidence]}),
            ),
        ),
        (
            "comment_with_a_bidi_override",
            edit(
                json!({"kind": "comment", "address": s.text, "text": "admin\u{202e}txt", "evidence": [s.evidence]}),
            ),
        ),
        (
            "comment_too_long",
            edit(
                json!({"kind": "comment", "address": s.text, "text": long_comment, "evidence": [s.evidence]}),
            ),
        ),
        (
            "unmapped_address",
            edit(
                json!({"kind": "comment", "address": "0xdead0000", "text": "x", "evidence": [s.evidence]}),
            ),
        ),
        (
            "unknown_procedure",
            edit(
                json!({"kind": "name", "procedure": "no_such_procedure", "name": "x", "evidence": [s.evidence]}),
            ),
        ),
        (
            "evidence_of_another_session",
            edit(json!({"kind": "name", "procedure": "main", "name": "x", "evidence": [other]})),
        ),
        (
            "evidence_of_none",
            edit(
                json!({"kind": "name", "procedure": "main", "name": "x", "evidence": ["ev-999999999999"]}),
            ),
        ),
        (
            "no_evidence",
            edit(json!({"kind": "name", "procedure": "main", "name": "x", "evidence": []})),
        ),
        (
            "prototype_not_c",
            edit(
                json!({"kind": "prototype", "procedure": "main", "declaration": "int main(int argc,, char **argv)", "evidence": [s.evidence]}),
            ),
        ),
        (
            "prototype_not_a_function",
            edit(
                json!({"kind": "prototype", "procedure": "main", "declaration": "int x;", "evidence": [s.evidence]}),
            ),
        ),
        (
            "comment_without_text",
            edit(json!({"kind": "comment", "address": s.text, "evidence": [s.evidence]})),
        ),
        (
            "name_with_procedure_and_address",
            edit(
                json!({"kind": "name", "procedure": "main", "address": s.text, "name": "x", "evidence": [s.evidence]}),
            ),
        ),
        (
            "batch_over_256_edits",
            json!({"edits": vec![good.clone(); 257]}),
        ),
    ];
    for (name, arguments) in cases {
        let before = s.session.evidence_count();
        let message = failure(&s.tools, "annotate", arguments);
        assert_eq!(
            s.session.evidence_count(),
            before,
            "{name}: no change record"
        );
        assert!(
            s.session.annotation_history().is_empty(),
            "{name}: nothing committed"
        );
        if name != "batch_over_256_edits" {
            assert!(message.starts_with("edits[1]."), "{name}: {message}");
        }
        snapshot(&format!("annotations_errors__{name}"), &message, None);
    }
    let message = failure(
        &s.tools,
        "undo_annotation",
        json!({"annotation": "ann-999999999999"}),
    );
    snapshot("annotations_errors__undo_of_an_unknown_id", &message, None);
    assert_eq!(s.session.evidence_count(), 1);
}
