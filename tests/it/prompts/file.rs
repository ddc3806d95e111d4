//! Prompt files (`rea serve --prompt-file`): parsing, errors naming the field, and the replay
//! of the `prompt_file` fuzz target's saved inputs.

use rea::core::Family;
use rea::prompts::parse_prompt_file;

fn snapshot_error(name: &str, text: &str) {
    let error = parse_prompt_file(text).unwrap_err().to_string();
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(format!("prompt_file__{name}"), error);
    });
}

#[test]
fn a_valid_file_gives_definitions_in_file_order() {
    let text =
        std::fs::read_to_string(crate::root().join("fuzz/regressions/prompt_file/valid.json"))
            .unwrap();
    let definitions = parse_prompt_file(&text).unwrap();
    assert_eq!(definitions.len(), 1);
    assert_eq!(definitions[0].arguments[0].family, Some(Family::Evidence));
    assert!(definitions[0].arguments[0].required);
    assert_eq!(definitions[0].workflow, ["get_evidence"]);
}

#[test]
fn errors_name_the_offending_field() {
    snapshot_error("not_an_array", r#"{"name":"a"}"#);
    snapshot_error(
        "unknown_field",
        r#"[{"name":"a","title":"A","description":"d","colour":1}]"#,
    );
    snapshot_error("missing_title", r#"[{"name":"a","description":"d"}]"#);
    snapshot_error(
        "unknown_family",
        r#"[{"name":"a","title":"A","description":"d","arguments":[{"name":"x","description":"y","family":"files"}]}]"#,
    );
    snapshot_error(
        "empty_name",
        r#"[{"name":"","title":"A","description":"d"}]"#,
    );
    snapshot_error(
        "duplicate_name",
        r#"[{"name":"a","title":"A","description":"d"},{"name":"a","title":"B","description":"e"}]"#,
    );
}

#[test]
fn saved_fuzz_inputs_keep_their_invariants() {
    let folder = crate::root().join("fuzz/regressions/prompt_file");
    let mut replayed = 0;
    for entry in std::fs::read_dir(folder).unwrap() {
        rea::fuzzing::prompts::check_prompt_file(&std::fs::read(entry.unwrap().path()).unwrap());
        replayed += 1;
    }
    assert!(replayed >= 4);
}
