//! Invariants of capture classification on arbitrary bytes (shared by the fuzz target and
//! `fuzz_replay::capture`).

use rea::session::capture::{
    CAPTURE_SCHEMA, CaptureValidity, Stream, ValidCapture, classify_capture,
};
use serde_json::Value;

/// Checks one input; panics when an invariant breaks.
pub fn check(data: &[u8]) {
    let Ok(document) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let class = classify_capture(&document);
    assert_eq!(classify_capture(&document), class);
    match class {
        CaptureValidity::ValidV4 => {
            let capture = ValidCapture::new(&document).expect("valid captures have a view");
            assert!(capture.exit().is_some());
            assert!(capture.stream(Stream::Stdout).is_some());
            assert!(capture.stream(Stream::Stderr).is_some());
            assert_eq!(document["schema"], CAPTURE_SCHEMA);
        }
        CaptureValidity::OtherVersion(found) => {
            assert!(ValidCapture::new(&document).is_none());
            assert_eq!(document["schema"], CAPTURE_SCHEMA);
            assert_eq!(document["version"], Value::Number(found.clone()));
            assert_ne!(found.as_f64(), Some(4.0));
        }
        CaptureValidity::Invalid(invalid) => {
            assert!(ValidCapture::new(&document).is_none());
            assert!(document.pointer(&invalid.violation.pointer).is_some());
            assert!(!invalid.violation.message.is_empty());
        }
    }
}
