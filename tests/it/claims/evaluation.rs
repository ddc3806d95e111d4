//! Claims evaluated against retained Evidence only: supported, contradicted or unverified,
//! each citing the Evidence it rests on.

use std::io::Cursor;

use crate::support::capture::{EMPTY_SHA256, HELLO_SHA256, valid_capture};
use crate::support::inventory::{app_v1, sha256_hex, zip_of};
use proptest::prelude::*;
use rea::claims::{EvidenceRecordView, VerdictStatus, evaluate, parse_claims};
use rea::inventory::{Inventory, InventoryLimits, PageSize};
use serde_json::{Value, json};

fn snapshot_json(name: &str, value: &Value) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!(format!("claims_evaluation__{name}"), value);
    });
}

/// A retained record: (ID, operation, arguments, result).
type Record = (String, &'static str, Value, Value);

/// A record from `provider`.
type ProvidedRecord = (String, &'static str, Value, Value, &'static str);

fn ledger() -> Vec<Record> {
    let inventory = Inventory::of_zip_reader(
        Cursor::new(zip_of(&app_v1())),
        "app.zip",
        &InventoryLimits::default(),
    )
    .unwrap();
    let page = serde_json::to_value(inventory.page(0, PageSize::default()).unwrap()).unwrap();
    let mut old_capture = valid_capture();
    old_capture["version"] = json!(3);
    let setup = inventory
        .occurrences()
        .iter()
        .find(|o| o.path == "tools/setup.exe")
        .unwrap();
    let records: Vec<(&'static str, Value, Value)> = vec![
        (
            "procedure_info",
            json!({"document": "app", "address": "0x1000"}),
            json!({
                "document": "app", "address": "0x1000",
                "name": {"name": "main", "raw_name": "main"},
                "aliases": [{"name": "start", "raw_name": "_start"}]
            }),
        ),
        (
            "list_procedures",
            json!({"document": "app", "limit": 2}),
            json!({
                "document": "app",
                "procedures": [{"address": "0x1000", "name": "main"}, {"address": "0x2000"}],
                "next_cursor": "page-2"
            }),
        ),
        (
            "list_procedures",
            json!({"document": "app", "cursor": "page-2", "limit": 2}),
            json!({
                "procedures": [{"address": "0x3000", "name": "helper"}],
                "next_cursor": null
            }),
        ),
        (
            "read_bytes",
            json!({"document": "app", "address": "0x1000", "length": 4}),
            json!({"document": "app", "address": "0x1000", "hex": "554889e5"}),
        ),
        (
            "read_bytes",
            json!({"document": "app", "address": "0x1004", "length": 4}),
            json!({"document": "app", "address": "0x1004", "hex": "4883EC10"}),
        ),
        ("inventory_artifacts", json!({"path": "app.zip"}), page),
        ("import_process_capture", json!({}), valid_capture()),
        ("import_process_capture", json!({}), old_capture),
        (
            "list_artifact_occurrences",
            json!({}),
            json!({"occurrences": [
                {"manifest_id": inventory.manifest_id(), "occurrence_id": setup.occurrence_id,
                 "path": setup.path, "size": setup.size, "sha256": setup.sha256, "format": "pe"}
            ]}),
        ),
        (
            "search_procedures",
            json!({"document": "lib", "query": "f"}),
            json!({
                "document": "lib",
                "procedures": [{"address": "0x10", "name": null}]
            }),
        ),
    ];
    records
        .into_iter()
        .enumerate()
        .map(|(n, (operation, arguments, result))| {
            (format!("ev-{:012}", n + 1), operation, arguments, result)
        })
        .collect()
}

fn views(records: &[Record]) -> Vec<EvidenceRecordView<'_>> {
    records
        .iter()
        .map(|(id, operation, arguments, result)| EvidenceRecordView {
            id,
            operation,
            arguments,
            result,
            provider: Some("native"),
        })
        .collect()
}

#[test]
fn a_listing_only_counts_pages_of_one_provider() {
    let records: Vec<ProvidedRecord> = vec![
        (
            "ev-1".into(),
            "list_procedures",
            json!({"document": "d"}),
            json!({"procedures": [{"address": "0x1"}], "next_cursor": "2"}),
            "native",
        ),
        (
            "ev-2".into(),
            "list_procedures",
            json!({"document": "d", "cursor": "2"}),
            json!({"procedures": [{"address": "0x2"}], "next_cursor": null}),
            "catalog",
        ),
    ];
    let views: Vec<EvidenceRecordView<'_>> = records
        .iter()
        .map(
            |(id, operation, arguments, result, provider)| EvidenceRecordView {
                id,
                operation,
                arguments,
                result,
                provider: Some(provider),
            },
        )
        .collect();
    let claims =
        parse_claims(&json!([{"kind": "procedure_exists", "document": "d", "address": "0x9"}]))
            .unwrap();
    assert_eq!(
        evaluate(&claims, &views)[0].status,
        VerdictStatus::Unverified
    );
    let same_provider: Vec<EvidenceRecordView<'_>> = views
        .iter()
        .map(|view| EvidenceRecordView {
            provider: Some("native"),
            ..*view
        })
        .collect();
    assert_eq!(
        evaluate(&claims, &same_provider)[0].status,
        VerdictStatus::Contradicted
    );
}

#[test]
fn a_listed_alias_supports_procedure_named_and_an_unlisted_name_stays_unverified() {
    let arguments = json!({"document": "libc"});
    let result = json!({
        "document": "libc",
        "procedures": [{"address": "0x100", "name": "memcmp", "aliases": ["bcmp"]}],
        "next_cursor": "more"
    });
    let views = [EvidenceRecordView {
        id: "ev-1",
        operation: "list_procedures",
        arguments: &arguments,
        result: &result,
        provider: Some("native"),
    }];
    let claims = parse_claims(&json!([
        {"kind": "procedure_named", "document": "libc", "address": "0x100", "name": "bcmp"},
        {"kind": "procedure_named", "document": "libc", "address": "0x100", "name": "memcmp"},
        {"kind": "procedure_named", "document": "libc", "address": "0x100", "name": "other"},
    ]))
    .unwrap();
    let statuses: Vec<VerdictStatus> = evaluate(&claims, &views)
        .into_iter()
        .map(|verdict| verdict.status)
        .collect();
    assert_eq!(
        statuses,
        [
            VerdictStatus::Supported,
            VerdictStatus::Supported,
            VerdictStatus::Unverified
        ]
    );
}

fn occurrence_id(path: &str) -> String {
    let inventory = Inventory::of_zip_reader(
        Cursor::new(zip_of(&app_v1())),
        "app.zip",
        &InventoryLimits::default(),
    )
    .unwrap();
    inventory
        .occurrences()
        .iter()
        .find(|o| o.path == path)
        .unwrap()
        .occurrence_id
        .clone()
}

#[test]
fn each_claim_kind_against_a_ledger() {
    let records = ledger();
    let app = occurrence_id("bin/app");
    let setup = occurrence_id("tools/setup.exe");
    let readme = occurrence_id("README.txt");
    let app_sha = sha256_hex(&app_v1()[0].1);
    let claims = parse_claims(&json!([
        {"kind": "procedure_exists", "document": "app", "address": "0x1000"},
        {"kind": "procedure_exists", "document": "app", "address": "0x4000"},
        {"kind": "procedure_exists", "document": "lib", "address": "0x20"},
        {"kind": "procedure_named", "document": "app", "address": "0x1000", "name": "main"},
        {"kind": "procedure_named", "document": "app", "address": "0x1000", "name": "_start"},
        {"kind": "procedure_named", "document": "app", "address": "0x1000", "name": "init"},
        {"kind": "procedure_named", "document": "app", "address": "0x2000", "name": "foo"},
        {"kind": "procedure_named", "document": "app", "address": "0x3000", "name": "other"},
        {"kind": "procedure_named", "document": "app", "address": "0x5000", "name": "gone"},
        {"kind": "procedure_named", "document": "lib", "address": "0x10", "name": "f"},
        {"kind": "bytes_equal", "document": "app", "address": "0x1002", "hex": "89e54883"},
        {"kind": "bytes_equal", "document": "app", "address": "0x1000", "hex": "554890"},
        {"kind": "bytes_equal", "document": "app", "address": "0x1006", "hex": "ec10ff"},
        {"kind": "bytes_equal", "document": "lib", "address": "0x1000", "hex": "55"},
        {"kind": "occurrence_digest", "occurrence_id": app, "sha256": app_sha},
        {"kind": "occurrence_digest", "occurrence_id": app, "sha256": EMPTY_SHA256},
        {"kind": "occurrence_format", "occurrence_id": setup, "format": "pe"},
        {"kind": "occurrence_format", "occurrence_id": readme, "format": "elf"},
        {"kind": "occurrence_digest", "occurrence_id": format!("occ-{}", "a".repeat(32)), "sha256": app_sha},
        {"kind": "capture_exit_code", "capture": "ev-000000000007", "code": 0},
        {"kind": "capture_exit_code", "capture": "ev-000000000007", "code": 1},
        {"kind": "capture_stdout_digest", "capture": "ev-000000000007", "sha256": HELLO_SHA256},
        {"kind": "capture_stderr_digest", "capture": "ev-000000000007", "sha256": HELLO_SHA256},
        {"kind": "capture_exit_code", "capture": "ev-000000000008", "code": 0},
        {"kind": "capture_exit_code", "capture": "ev-000000000004", "code": 0},
        {"kind": "capture_exit_code", "capture": "ev-000000000999", "code": 0},
    ]))
    .unwrap();
    let verdicts = evaluate(&claims, &views(&records));
    let statuses: Vec<VerdictStatus> = verdicts.iter().map(|v| v.status).collect();
    use VerdictStatus::{Contradicted as C, Supported as S, Unverified as U};
    assert_eq!(
        statuses,
        [
            S, C, U, S, S, C, U, U, C, U, S, C, U, U, S, C, S, C, U, S, C, S, C, U, U, U
        ]
    );
    assert_eq!(verdicts[0].evidence, ["ev-000000000001", "ev-000000000002"]);
    assert_eq!(verdicts[1].evidence, ["ev-000000000002", "ev-000000000003"]);
    assert_eq!(
        verdicts[10].evidence,
        ["ev-000000000004", "ev-000000000005"]
    );
    assert_eq!(verdicts[14].evidence, ["ev-000000000006"]);
    assert_eq!(
        verdicts[16].evidence,
        ["ev-000000000006", "ev-000000000009"]
    );
    snapshot_json("verdicts", &serde_json::to_value(&verdicts).unwrap());
}

#[test]
fn contradiction_wins_and_truncated_streams_are_unverified() {
    let mut signalled = valid_capture();
    signalled["exit"] = json!({"signal": "SIGSEGV", "timed_out": false});
    signalled["events"][3] = json!({"seq": 3, "t_ms": 4, "kind": "signal", "signal": "SIGSEGV"});
    signalled["streams"]["stdout"]["truncated"] = json!(true);
    let records: Vec<Record> = vec![
        (
            "ev-a".into(),
            "import_process_capture",
            json!({}),
            signalled,
        ),
        (
            "ev-b".into(),
            "read_bytes",
            json!({}),
            json!({"document": "d", "address": "0x10", "hex": "aa"}),
        ),
        (
            "ev-c".into(),
            "read_bytes",
            json!({}),
            json!({"document": "d", "address": "0x10", "hex": "bb"}),
        ),
    ];
    let claims = parse_claims(&json!([
        {"kind": "capture_exit_code", "capture": "ev-a", "code": 0},
        {"kind": "capture_stdout_digest", "capture": "ev-a", "sha256": EMPTY_SHA256},
        {"kind": "bytes_equal", "document": "d", "address": "0x10", "hex": "aa"},
    ]))
    .unwrap();
    let verdicts = evaluate(&claims, &views(&records));
    assert_eq!(verdicts[0].status, VerdictStatus::Contradicted);
    assert_eq!(verdicts[1].status, VerdictStatus::Unverified);
    assert_eq!(verdicts[1].evidence, ["ev-a"]);
    assert_eq!(verdicts[2].status, VerdictStatus::Contradicted);
    assert_eq!(verdicts[2].evidence, ["ev-c"]);
    snapshot_json("contradictions", &serde_json::to_value(&verdicts).unwrap());
}

#[test]
fn a_listing_with_a_cursor_cycle_or_gap_proves_nothing() {
    let records: Vec<Record> = vec![
        (
            "ev-1".into(),
            "list_procedures",
            json!({"document": "d"}),
            json!({"procedures": [{"address": "0x1"}], "next_cursor": "x"}),
        ),
        (
            "ev-2".into(),
            "list_procedures",
            json!({"document": "d", "cursor": "x"}),
            json!({"procedures": [{"address": "0x2"}], "next_cursor": "x"}),
        ),
        (
            "ev-3".into(),
            "list_procedures",
            json!({"document": "e"}),
            json!({"procedures": [], "next_cursor": "missing"}),
        ),
    ];
    let claims = parse_claims(&json!([
        {"kind": "procedure_exists", "document": "d", "address": "0x9"},
        {"kind": "procedure_exists", "document": "e", "address": "0x9"},
    ]))
    .unwrap();
    let verdicts = evaluate(&claims, &views(&records));
    assert!(
        verdicts
            .iter()
            .all(|v| v.status == VerdictStatus::Unverified)
    );
}

fn claim() -> impl Strategy<Value = Value> {
    let address = prop_oneof![
        Just("0x1000"),
        Just("0x1002"),
        Just("0x2000"),
        Just("0x4000")
    ];
    prop_oneof![
        address.clone().prop_map(|a| json!({"kind": "procedure_exists", "document": "app", "address": a})),
        (address.clone(), prop_oneof![Just("main"), Just("_start"), Just("x")])
            .prop_map(|(a, n)| json!({"kind": "procedure_named", "document": "app", "address": a, "name": n})),
        (address, "([0-9a-f]{2}){1,6}")
            .prop_map(|(a, h)| json!({"kind": "bytes_equal", "document": "app", "address": a, "hex": h})),
        prop_oneof![Just("ev-000000000007"), Just("ev-000000000002")]
            .prop_map(|c| json!({"kind": "capture_exit_code", "capture": c, "code": 0})),
    ]
}

proptest! {
    /// Verdicts cite only records that were given, one verdict per claim in order; with no
    /// Evidence every claim is unverified.
    #[test]
    fn verdicts_rest_only_on_given_evidence(
        claims in prop::collection::vec(claim(), 0..12),
        keep in prop::collection::vec(any::<bool>(), 10),
    ) {
        let claims = parse_claims(&Value::Array(claims)).unwrap();
        let records: Vec<Record> = ledger()
            .into_iter()
            .zip(&keep)
            .filter(|(_, keep)| **keep)
            .map(|(record, _)| record)
            .collect();
        let given = views(&records);
        let verdicts = evaluate(&claims, &given);
        prop_assert_eq!(verdicts.len(), claims.len());
        for (index, verdict) in verdicts.iter().enumerate() {
            prop_assert_eq!(verdict.index, index);
            prop_assert_eq!(verdict.kind, claims[index].kind());
            for cited in &verdict.evidence {
                prop_assert!(given.iter().any(|record| record.id == cited));
            }
            if verdict.status != VerdictStatus::Unverified {
                prop_assert!(!verdict.evidence.is_empty());
            }
        }
        prop_assert_eq!(evaluate(&claims, &given), verdicts);
        for verdict in evaluate(&claims, &[]) {
            prop_assert_eq!(verdict.status, VerdictStatus::Unverified);
            prop_assert!(verdict.evidence.is_empty());
        }
    }
}
