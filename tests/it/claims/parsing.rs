//! The claim language: every kind parses; malformed claims name the claim index and field.

use proptest::prelude::*;
use rea::claims::{Claim, ClaimError, MAX_CLAIMS, parse_claims};
use rea::inventory::ExecutableFormat;
use serde_json::{Value, json};

const SHA: &str = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";
const OCC: &str = "occ-0123456789abcdef0123456789abcdef";

fn snapshot(name: &str, text: &str) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(format!("claims_parsing__{name}"), text);
    });
}

#[test]
fn every_kind_parses() {
    let claims = parse_claims(&json!([
        {"kind": "procedure_exists", "document": "app", "address": "0x1000"},
        {"kind": "procedure_named", "document": "app", "address": "0x1000", "name": "main"},
        {"kind": "bytes_equal", "document": "app", "address": "0x1000", "hex": "5548Fe"},
        {"kind": "occurrence_digest", "occurrence_id": OCC, "sha256": SHA},
        {"kind": "occurrence_format", "occurrence_id": OCC, "format": "mach-o-fat"},
        {"kind": "capture_exit_code", "capture": "ev-000000000007", "code": -11},
        {"kind": "capture_stdout_digest", "capture": "ev-000000000007", "sha256": SHA},
        {"kind": "capture_stderr_digest", "capture": "ev-000000000007", "sha256": SHA},
    ]))
    .unwrap();
    assert_eq!(
        claims,
        [
            Claim::ProcedureExists {
                document: "app".into(),
                address: 0x1000
            },
            Claim::ProcedureNamed {
                document: "app".into(),
                address: 0x1000,
                name: "main".into()
            },
            Claim::BytesEqual {
                document: "app".into(),
                address: 0x1000,
                bytes: vec![0x55, 0x48, 0xfe]
            },
            Claim::OccurrenceDigest {
                occurrence_id: OCC.into(),
                sha256: SHA.into()
            },
            Claim::OccurrenceFormat {
                occurrence_id: OCC.into(),
                format: ExecutableFormat::MachOFat
            },
            Claim::CaptureExitCode {
                capture: "ev-000000000007".into(),
                code: -11
            },
            Claim::CaptureStdoutDigest {
                capture: "ev-000000000007".into(),
                sha256: SHA.into()
            },
            Claim::CaptureStderrDigest {
                capture: "ev-000000000007".into(),
                sha256: SHA.into()
            },
        ]
    );
    let kinds: Vec<&str> = claims.iter().map(Claim::kind).collect();
    assert_eq!(kinds[0], "procedure_exists");
    assert_eq!(parse_claims(&json!([])).unwrap(), []);
    let at_limit = Value::Array(vec![
        json!({"kind": "procedure_exists", "document": "d", "address": "0x1"});
        MAX_CLAIMS
    ]);
    assert_eq!(parse_claims(&at_limit).unwrap().len(), MAX_CLAIMS);
}

#[test]
fn malformed_claims_name_index_and_field() {
    let cases: Vec<(&str, Value)> = vec![
        ("not a list", json!({"kind": "procedure_exists"})),
        ("too many", Value::Array(vec![json!({}); MAX_CLAIMS + 1])),
        (
            "not an object",
            json!([{"kind": "procedure_exists", "document": "a", "address": "0x1"}, "claim"]),
        ),
        ("missing kind", json!([{"document": "app"}])),
        ("kind not text", json!([{"kind": 3}])),
        ("unknown kind", json!([{"kind": "function_exists"}])),
        (
            "unknown field",
            json!([{"kind": "procedure_exists", "document": "app", "address": "0x1", "size": 4}]),
        ),
        (
            "missing field",
            json!([{"kind": "procedure_named", "document": "app", "address": "0x1"}]),
        ),
        (
            "empty document",
            json!([{"kind": "procedure_exists", "document": "", "address": "0x1"}]),
        ),
        (
            "long name",
            json!([{"kind": "procedure_named", "document": "app", "address": "0x1", "name": "n".repeat(4097)}]),
        ),
        (
            "upper-case address",
            json!([{"kind": "procedure_exists", "document": "app", "address": "0x1A"}]),
        ),
        (
            "address without 0x",
            json!([{"kind": "procedure_exists", "document": "app", "address": "1000"}]),
        ),
        (
            "address with a leading zero",
            json!([{"kind": "procedure_exists", "document": "app", "address": "0x01000"}]),
        ),
        (
            "address too long",
            json!([{"kind": "procedure_exists", "document": "app", "address": "0x11112222333344445"}]),
        ),
        (
            "odd hex",
            json!([{"kind": "bytes_equal", "document": "app", "address": "0x1", "hex": "abc"}]),
        ),
        (
            "empty hex",
            json!([{"kind": "bytes_equal", "document": "app", "address": "0x1", "hex": ""}]),
        ),
        (
            "hex too long",
            json!([{"kind": "bytes_equal", "document": "app", "address": "0x1", "hex": "00".repeat(4097)}]),
        ),
        (
            "not hex",
            json!([{"kind": "bytes_equal", "document": "app", "address": "0x1", "hex": "zz"}]),
        ),
        (
            "upper-case digest",
            json!([{"kind": "occurrence_digest", "occurrence_id": OCC, "sha256": SHA.to_uppercase()}]),
        ),
        (
            "bad occurrence",
            json!([{"kind": "occurrence_digest", "occurrence_id": "occ-1", "sha256": SHA}]),
        ),
        (
            "bad format",
            json!([{"kind": "occurrence_format", "occurrence_id": OCC, "format": "ELF"}]),
        ),
        (
            "fractional code",
            json!([{"kind": "capture_exit_code", "capture": "ev-1", "code": 1.5}]),
        ),
        (
            "code as text",
            json!([{"kind": "capture_exit_code", "capture": "ev-1", "code": "0"}]),
        ),
        (
            "capture not text",
            json!([{"kind": "capture_stdout_digest", "capture": 7, "sha256": SHA}]),
        ),
    ];
    let mut lines = Vec::new();
    for (label, claims) in cases {
        let error = parse_claims(&claims).expect_err(label);
        if let ClaimError::Malformed { index, .. } | ClaimError::NotAnObject { index } = &error {
            assert!(*index < claims.as_array().unwrap().len(), "{label}");
        }
        lines.push(format!("{label}: {error}"));
    }
    snapshot("error_messages", &lines.join("\n"));
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(|n| json!(n)),
        Just(json!(1.5)),
        prop_oneof![
            Just("procedure_exists".to_owned()),
            Just("bytes_equal".to_owned()),
            Just("capture_exit_code".to_owned()),
            Just("0x10".to_owned()),
            Just("00ff".to_owned()),
            "[a-z0-9_ é\u{301}]{0,10}",
        ]
        .prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 32, 6, |inner| {
        let key = prop_oneof![
            Just("kind".to_owned()),
            Just("document".to_owned()),
            Just("address".to_owned()),
            Just("hex".to_owned()),
            Just("capture".to_owned()),
            Just("code".to_owned()),
            "[a-z]{1,6}",
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(key, inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Parsing is total: a list of claims or an error naming a claim that exists.
    #[test]
    fn parsing_is_total(claims in json_value()) {
        match parse_claims(&claims) {
            Ok(parsed) => prop_assert_eq!(parsed.len(), claims.as_array().unwrap().len()),
            Err(ClaimError::Malformed { index, field, .. }) => {
                prop_assert!(index < claims.as_array().unwrap().len());
                prop_assert!(!field.is_empty());
            }
            Err(ClaimError::NotAnObject { index }) => {
                prop_assert!(!claims[index].is_object());
            }
            Err(ClaimError::NotAList) => prop_assert!(!claims.is_array()),
            Err(ClaimError::TooMany { count, .. }) => prop_assert!(count > MAX_CLAIMS),
        }
    }
}
