//! Process Capture v4: valid captures, other versions and invalid documents, with messages that
//! name the field.

use crate::support::capture::{EMPTY_SHA256, HELLO_SHA256, valid_capture};
use rea::capture::{
    CAPTURE_OPERATION, CaptureExit, CaptureValidity, Stream, ValidCapture, classify_capture,
    is_capture_candidate,
};
use serde_json::{Value, json};

fn snapshot(name: &str, text: &str) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(format!("capture_classification__{name}"), text);
    });
}

#[test]
fn a_valid_capture_is_a_candidate_with_typed_fields() {
    let capture = valid_capture();
    assert_eq!(classify_capture(&capture), CaptureValidity::ValidV4);
    assert!(is_capture_candidate(CAPTURE_OPERATION, &capture));
    assert!(!is_capture_candidate("read_bytes", &capture));
    let valid = ValidCapture::new(&capture).unwrap();
    assert_eq!(valid.exit(), Some(CaptureExit::Code(0)));
    assert!(!valid.timed_out());
    let stdout = valid.stream(Stream::Stdout).unwrap();
    assert_eq!(
        (stdout.sha256, stdout.bytes, stdout.truncated),
        (HELLO_SHA256, 6, false)
    );
    assert_eq!(valid.stream(Stream::Stderr).unwrap().sha256, EMPTY_SHA256);
    assert_eq!(
        valid.subject_occurrence(),
        Some("occ-0123456789abcdef0123456789abcdef")
    );
    assert_eq!(valid.subject_document(), Some("app"));
}

#[test]
fn a_timed_out_capture_ended_by_a_signal() {
    let mut capture = valid_capture();
    capture["exit"] = json!({"signal": "SIGKILL", "timed_out": true});
    capture["events"][3] = json!({"seq": 3, "t_ms": 5000, "kind": "signal", "signal": "SIGKILL"});
    let valid = ValidCapture::new(&capture).unwrap();
    assert_eq!(valid.exit(), Some(CaptureExit::Signal("SIGKILL")));
    assert!(valid.timed_out());
    // A subject may name only a document; integers may carry a zero fraction.
    capture["subject"] = json!({"document": "app"});
    capture["version"] = json!(4.0);
    capture["bounds"]["wall_time_ms"] = json!(5000.0);
    assert_eq!(classify_capture(&capture), CaptureValidity::ValidV4);
}

#[test]
fn other_versions_are_recognised_and_not_candidates() {
    for version in [json!(3), json!(5), json!(4.5), json!(-1)] {
        let mut capture = valid_capture();
        capture["version"] = version.clone();
        let Value::Number(number) = version else {
            unreachable!()
        };
        assert_eq!(
            classify_capture(&capture),
            CaptureValidity::OtherVersion(number)
        );
        assert!(!is_capture_candidate(CAPTURE_OPERATION, &capture));
        assert!(ValidCapture::new(&capture).is_none());
    }
    // Another version of something that is not a capture is simply invalid.
    let mut other = valid_capture();
    other["schema"] = json!("rea.other");
    other["version"] = json!(3);
    assert!(matches!(
        classify_capture(&other),
        CaptureValidity::Invalid(_)
    ));
}

#[test]
fn invalid_captures_name_the_field() {
    type Mutation = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Mutation)> = vec![
        ("not an object", Box::new(|c| *c = json!("capture"))),
        ("version as text", Box::new(|c| c["version"] = json!("4"))),
        (
            "missing approval",
            Box::new(|c| {
                c.as_object_mut().unwrap().remove("approval");
            }),
        ),
        (
            "empty approver",
            Box::new(|c| c["approval"]["approved_by"] = json!("")),
        ),
        (
            "bad timestamp",
            Box::new(|c| c["approval"]["approved_at"] = json!("yesterday")),
        ),
        ("empty argv", Box::new(|c| c["command"]["argv"] = json!([]))),
        (
            "bad env name",
            Box::new(|c| c["command"]["env"] = json!({"1BAD": "x"})),
        ),
        (
            "network",
            Box::new(|c| c["bounds"]["network"] = json!("internet")),
        ),
        (
            "zero wall time",
            Box::new(|c| c["bounds"]["wall_time_ms"] = json!(0)),
        ),
        (
            "code and signal",
            Box::new(|c| c["exit"]["signal"] = json!("SIGTERM")),
        ),
        (
            "neither code nor signal",
            Box::new(|c| c["exit"] = json!({"timed_out": false})),
        ),
        (
            "subject without target",
            Box::new(|c| c["subject"] = json!({"sha256": EMPTY_SHA256})),
        ),
        (
            "short stream digest",
            Box::new(|c| c["streams"]["stdout"]["sha256"] = json!("00")),
        ),
        (
            "unknown event kind",
            Box::new(|c| c["events"][1]["kind"] = json!("syscall")),
        ),
        (
            "spawn without pid",
            Box::new(|c| {
                c["events"][0].as_object_mut().unwrap().remove("pid");
            }),
        ),
        (
            "events out of order",
            Box::new(|c| c["events"][2]["seq"] = json!(1)),
        ),
        (
            "time going back",
            Box::new(|c| c["events"][3]["t_ms"] = json!(1)),
        ),
        (
            "extra field",
            Box::new(|c| c["executed_by_rea"] = json!(true)),
        ),
        (
            "huge argv item",
            Box::new(|c| c["command"]["argv"][0] = json!("a".repeat(5000))),
        ),
    ];
    let mut lines = Vec::new();
    for (label, mutate) in cases {
        let mut capture = valid_capture();
        mutate(&mut capture);
        let CaptureValidity::Invalid(invalid) = classify_capture(&capture) else {
            panic!("{label}: expected Invalid");
        };
        assert!(
            capture.pointer(&invalid.violation.pointer).is_some(),
            "{label}"
        );
        assert!(!is_capture_candidate(CAPTURE_OPERATION, &capture));
        lines.push(format!("{label}: {invalid}"));
    }
    snapshot("invalid_capture_messages", &lines.join("\n"));
}
