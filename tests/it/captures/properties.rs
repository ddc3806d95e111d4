//! Capture classification is total: any JSON value gets exactly one class, consistently, and a
//! valid capture always has the fields claims read.

use crate::support::capture::valid_capture;
use proptest::prelude::*;
use rea::capture::{CAPTURE_SCHEMA, CaptureValidity, Stream, ValidCapture, classify_capture};
use serde_json::{Map, Number, Value, json};

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-1e20f64..1e20).prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        Just(json!(4)),
        Just(json!(4.0)),
        Just(json!(CAPTURE_SCHEMA)),
        "[a-zA-Z0-9_ é\u{301}가\u{200b}]{0,12}".prop_map(Value::String),
        Just(Value::String("x".repeat(5000))),
    ]
}

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("schema".to_owned()),
        Just("version".to_owned()),
        Just("exit".to_owned()),
        Just("code".to_owned()),
        Just("events".to_owned()),
        "[a-z_]{1,8}",
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Every JSON Pointer into `value`.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let pointer = format!("{at}/{key}");
                out.push(pointer.clone());
                pointers(child, pointer, out);
            }
        }
        Value::Array(items) => {
            for (index, child) in items.iter().enumerate() {
                let pointer = format!("{at}/{index}");
                out.push(pointer.clone());
                pointers(child, pointer, out);
            }
        }
        _ => {}
    }
}

/// `valid_capture()` with the value at one pointer replaced or removed.
fn mutated_capture() -> impl Strategy<Value = Value> {
    let mut all = Vec::new();
    pointers(&valid_capture(), String::new(), &mut all);
    (prop::sample::select(all), prop::option::of(json_value())).prop_map(|(pointer, new)| {
        let mut capture = valid_capture();
        let (parent, last) = pointer.rsplit_once('/').unwrap();
        match (capture.pointer_mut(parent).unwrap(), new) {
            (Value::Object(map), Some(new)) => {
                map.insert(last.to_owned(), new);
            }
            (Value::Object(map), None) => {
                map.remove(last);
            }
            (Value::Array(items), Some(new)) => items[last.parse::<usize>().unwrap()] = new,
            (Value::Array(items), None) => {
                items.remove(last.parse::<usize>().unwrap());
            }
            _ => unreachable!(),
        }
        capture
    })
}

fn check_classification(document: &Value) -> Result<(), TestCaseError> {
    let class = classify_capture(document);
    prop_assert_eq!(&classify_capture(document), &class);
    match &class {
        CaptureValidity::ValidV4 => {
            let valid = ValidCapture::new(document).unwrap();
            prop_assert!(valid.exit().is_some());
            prop_assert!(valid.stream(Stream::Stdout).is_some());
            prop_assert!(valid.stream(Stream::Stderr).is_some());
        }
        CaptureValidity::OtherVersion(found) => {
            prop_assert!(ValidCapture::new(document).is_none());
            prop_assert_eq!(&document["schema"], &json!(CAPTURE_SCHEMA));
            prop_assert_eq!(&document["version"], &Value::Number(found.clone()));
            prop_assert!(found.as_f64() != Some(4.0));
        }
        CaptureValidity::Invalid(invalid) => {
            prop_assert!(ValidCapture::new(document).is_none());
            prop_assert!(document.pointer(&invalid.violation.pointer).is_some());
            prop_assert!(!invalid.violation.message.is_empty());
            prop_assert!(invalid.violation.message.chars().count() <= 301);
        }
    }
    Ok(())
}

proptest! {
    #[test]
    fn classification_is_total_on_arbitrary_json(document in json_value()) {
        check_classification(&document)?;
    }

    #[test]
    fn classification_is_total_on_damaged_captures(document in mutated_capture()) {
        check_classification(&document)?;
    }
}
