//! Replays the saved inputs of the `capture_parser` fuzz target through the same invariant
//! checks the target runs.

use rea::capture::{CaptureValidity, classify_capture};
use serde_json::Value;

#[test]
fn capture_parser_regressions_hold_their_invariants() {
    let dir = crate::root()
        .to_path_buf()
        .join("fuzz/regressions/capture_parser");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        rea::fuzzing::session::check_capture(&data);
        let document: Value = serde_json::from_slice(&data).unwrap();
        let class = match classify_capture(&document) {
            CaptureValidity::ValidV4 => "valid".to_owned(),
            CaptureValidity::OtherVersion(found) => format!("version {found}"),
            CaptureValidity::Invalid(invalid) => format!("invalid {}", invalid.violation.pointer),
        };
        names.push(format!(
            "{}: {class}",
            path.file_name().unwrap().to_string_lossy()
        ));
    }
    names.sort();
    assert_eq!(
        names,
        [
            "code_and_signal.json: invalid /exit",
            "events_out_of_order.json: invalid /events/2/seq",
            "long_env_key.json: invalid /command/env/kkkkkkkkkkkkkkkkkkkkkkkkEEEEEEEEEEEEEEEEEEEEEEEEEEE...",
            "signalled.json: valid",
            "valid_v4.json: valid",
            "version_3.json: version 3",
            "version_4_float.json: valid",
        ]
    );
}
