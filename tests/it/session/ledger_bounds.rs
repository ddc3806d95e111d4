//! The Evidence ledger and tool results are bounded: retained bytes, one record's bytes, the
//! nesting depth of retained JSON, the size of one tool result; captures are stored once and
//! `list_unknowns` pages.

use rea::session::{
    LedgerError, MAX_JSON_DEPTH, MAX_LEDGER_BYTES, MAX_RECORD_BYTES, Observation, Session,
    SessionError, record_cost,
};
use serde_json::{Value, json};

use crate::support::capture::valid_capture;
use crate::support::tools::{closed, failure, success};

fn snapshot(name: &str, text: &str) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(format!("ledger_bounds__{name}"), text);
    });
}

/// A JSON value nested `depth` levels deep: arrays in arrays around a string.
fn nested(depth: usize) -> Value {
    let mut value = json!("bottom");
    for _ in 0..depth {
        value = json!([value]);
    }
    value
}

#[test]
fn a_capture_nested_too_deep_is_rejected_at_import_and_the_ledger_stays_listable() {
    let (session, tools) = closed();
    let mut capture = valid_capture();
    capture["subject"]["extra"] = nested(122);
    let message = failure(
        &tools,
        "import_process_capture",
        json!({"capture": capture}),
    );
    assert_eq!(session.evidence_count(), 0);
    let mut shallow = valid_capture();
    shallow["subject"]["extra"] = nested(MAX_JSON_DEPTH - 3);
    success(
        &tools,
        "import_process_capture",
        json!({"capture": shallow}),
    );
    let listed = success(&tools, "list_evidence", json!({}));
    assert_eq!(listed["total"], json!(1));
    // The whole listing serializes and parses back within serde_json's 128 levels.
    let text = serde_json::to_string(&listed).unwrap();
    assert!(serde_json::from_str::<Value>(&text).is_ok());
    snapshot("too_deep", &message);
}

#[test]
fn a_capture_is_stored_once() {
    let (session, tools) = closed();
    let imported = success(
        &tools,
        "import_process_capture",
        json!({"capture": valid_capture()}),
    );
    let id = imported["evidence_id"].as_str().unwrap();
    let record = session.evidence(id).unwrap();
    assert_eq!(record.result, valid_capture());
    assert!(record.arguments["capture"].is_string());
    // The ledger counts the memory of one capture (and a small record around it), not two.
    let capture_cost = rea::session::value_heap_bytes(&valid_capture());
    assert!(session.evidence_bytes() >= capture_cost);
    assert!(session.evidence_bytes() < capture_cost + 2048);
}

#[test]
fn one_record_is_bounded() {
    let session = Session::new();
    let big = "x".repeat(MAX_RECORD_BYTES);
    let error = session
        .record_evidence(Observation::unbound("note", json!({}), json!(big)))
        .unwrap_err();
    assert!(matches!(
        error,
        SessionError::Ledger(LedgerError::RecordTooLarge { .. })
    ));
    assert_eq!(session.evidence_count(), 0);
    snapshot("record_too_large", &error.to_string());
}

#[test]
fn the_ledger_cap_is_reached_with_a_clear_error() {
    let session = Session::new();
    let chunk = "y".repeat(MAX_RECORD_BYTES - 64);
    let observation = Observation::unbound("note", json!({}), json!(chunk));
    let cost = record_cost(&observation);
    assert!(
        cost > MAX_RECORD_BYTES - 64,
        "a record costs at least its text"
    );
    let mut recorded = 0usize;
    let error = loop {
        match session.record_evidence(observation.clone()) {
            Ok(_) => recorded += 1,
            Err(error) => break error,
        }
        assert!(recorded <= MAX_LEDGER_BYTES / cost);
    };
    assert!(matches!(
        error,
        SessionError::Ledger(LedgerError::Full { .. })
    ));
    assert!(session.evidence_bytes() <= MAX_LEDGER_BYTES);
    assert_eq!(recorded, MAX_LEDGER_BYTES / cost);
    assert_eq!(session.evidence_bytes(), recorded * cost);
    snapshot("ledger_full", &error.to_string());
}

#[test]
fn a_result_over_the_limit_is_an_error_that_says_how_to_page() {
    let (session, tools) = closed();
    let arguments = json!({"note": "z".repeat(200_000)});
    for _ in 0..8 {
        session
            .record_evidence(Observation::unbound("note", arguments.clone(), json!(1)))
            .unwrap();
    }
    let message = failure(&tools, "list_evidence", json!({"limit": 8}));
    snapshot("result_too_large", &message);
    let page = success(&tools, "list_evidence", json!({"limit": 1}));
    assert!(page["next_cursor"].is_string());
}

#[test]
fn list_unknowns_pages() {
    let (_, tools) = closed();
    let mut ids = Vec::new();
    for index in 0..5 {
        let unknown = success(
            &tools,
            "register_unknown",
            json!({"question": format!("question {index}")}),
        );
        ids.push(unknown["id"].as_str().unwrap().to_owned());
    }
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut arguments = json!({"limit": 2});
        if let Some(cursor) = &cursor {
            arguments["cursor"] = json!(cursor);
        }
        let page = success(&tools, "list_unknowns", arguments);
        assert_eq!(page["total"], json!(5));
        let unknowns = page["unknowns"].as_array().unwrap();
        assert!(unknowns.len() <= 2);
        seen.extend(
            unknowns
                .iter()
                .map(|u| u["id"].as_str().unwrap().to_owned()),
        );
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ids);
    let message = failure(&tools, "list_unknowns", json!({"cursor": "page-2"}));
    snapshot("bad_unknowns_cursor", &message);
}

/// The nesting depth of `value`, recursively (the oracle for the iterative check).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn json_value() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[a-z]{0,4}".prop_map(Value::from),
    ];
    leaf.prop_recursive(12, 48, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-z]{1,3}", inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

    #[test]
    fn the_depth_check_agrees_with_the_recursive_depth(value in json_value(), limit in 0usize..14) {
        proptest::prop_assert_eq!(
            rea::session::json_depth_exceeds(&value, limit),
            depth(&value) > limit
        );
    }

    #[test]
    fn the_ledger_counts_the_cost_of_each_record_it_retains(
        values in proptest::collection::vec(json_value(), 0..12),
    ) {
        let session = Session::new();
        let mut expected = 0usize;
        for value in values {
            // The heap of the copy the record holds: a clone's capacities can be smaller than
            // those of a value proptest has shrunk.
            let retained = value.clone();
            let retained_heap = rea::session::value_heap_bytes(&retained);
            let observation = Observation::unbound("note", json!({}), retained);
            let size = record_cost(&observation);
            proptest::prop_assert!(size >= retained_heap);
            let accepted = session.record_evidence(observation).is_ok();
            proptest::prop_assert_eq!(accepted, depth(&value) <= MAX_JSON_DEPTH);
            if accepted {
                expected += size;
            }
            proptest::prop_assert_eq!(session.evidence_bytes(), expected);
        }
    }

    #[test]
    fn unknown_pages_list_every_unknown_once_in_order(count in 0usize..9, limit in 1u64..5) {
        let (_, tools) = closed();
        let ids: Vec<String> = (0..count)
            .map(|index| {
                let unknown = success(
                    &tools,
                    "register_unknown",
                    json!({"question": format!("q{index}")}),
                );
                unknown["id"].as_str().unwrap().to_owned()
            })
            .collect();
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut arguments = json!({"limit": limit});
            if let Some(cursor) = &cursor {
                arguments["cursor"] = json!(cursor);
            }
            let page = success(&tools, "list_unknowns", arguments);
            seen.extend(
                page["unknowns"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|u| u["id"].as_str().unwrap().to_owned()),
            );
            match page["next_cursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
        proptest::prop_assert_eq!(seen, ids);
    }
}
