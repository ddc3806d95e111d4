//! The unknowns, artifact, capture and reconstruction tools: what each retains (inventory pages
//! and captures as Evidence, nothing else), their results, and their error messages.

use crate::support::capture::{HELLO_SHA256, valid_capture};
use crate::support::inventory::{app_v1, app_v2, write_tree, zip_of};
use crate::support::snapshots::UNKNOWN_ID;
use crate::support::tools::{Files, closed, failure, snapshot, snapshot_filtered, success};
use rea::session::INVENTORY_OPERATION;
use rea::tools::ToolBox;
use serde_json::{Map, Value, json};

/// Two versions of the sample application below `files`: a directory and a zip archive.
fn two_versions(files: &Files) -> (String, String) {
    let v1 = files.dir.path().join("app-1.0");
    write_tree(&v1, &app_v1());
    let v2 = files.dir.path().join("app-2.0.zip");
    std::fs::write(&v2, zip_of(&app_v2())).unwrap();
    (v1.display().to_string(), v2.display().to_string())
}

fn inventory(tools: &ToolBox, path: &str) -> Map<String, Value> {
    success(tools, "inventory_artifacts", json!({"path": path}))
}

fn manifest(page: &Map<String, Value>) -> String {
    page["manifest_id"].as_str().unwrap().to_owned()
}

#[test]
fn unknowns_are_registered_refined_resolved_with_evidence_and_listed() {
    let (session, tools) = closed();
    let first = success(
        &tools,
        "register_unknown",
        json!({"question": "What does 0x1000 do?", "document": "app"}),
    );
    assert_eq!(first["status"], "open");
    let head = success(
        &tools,
        "refine_unknown",
        json!({"id": first["id"], "question": "Is 0x1000 the decryptor?"}),
    );
    assert_eq!(head["revises"], first["id"]);
    assert_eq!(
        session.unresolved_unknown_ids(),
        [head["id"].as_str().unwrap()]
    );

    let missing = failure(
        &tools,
        "resolve_unknown",
        json!({"id": head["id"], "evidence": ["ev-999999999999"]}),
    );
    assert!(missing.contains("\"ev-999999999999\""), "{missing}");

    let capture = success(
        &tools,
        "import_process_capture",
        json!({"capture": valid_capture()}),
    );
    let resolved = success(
        &tools,
        "resolve_unknown",
        json!({"id": head["id"], "evidence": [capture["evidence_id"]], "note": "yes"}),
    );
    assert_eq!(resolved["status"], "resolved");
    assert_eq!(
        resolved["resolution"]["evidence"],
        json!([capture["evidence_id"]])
    );
    assert!(session.unresolved_unknown_ids().is_empty());
    // Only the import appended Evidence.
    assert_eq!(session.evidence_count(), 1);

    let heads = success(&tools, "list_unknowns", json!({}));
    assert_eq!(heads["unknowns"].as_array().unwrap().len(), 1);
    let all = success(&tools, "list_unknowns", json!({"revisions": "all"}));
    assert_eq!(all["unknowns"].as_array().unwrap().len(), 2);
    let open = success(&tools, "list_unknowns", json!({"status": "open"}));
    assert_eq!(open["unknowns"], json!([]));
    let about = success(
        &tools,
        "list_unknowns",
        json!({"revisions": "all", "document": "app"}),
    );
    assert_eq!(about["unknowns"][0]["id"], first["id"]);
}

#[test]
fn inventories_are_retained_listed_and_compared() {
    let files = Files::new();
    let (v1, v2) = two_versions(&files);
    let (session, tools) = closed();
    let before = inventory(&tools, &v1);
    let after = inventory(&tools, &v2);
    assert_eq!(before["root"]["kind"], "directory");
    assert_eq!(after["root"]["kind"], "zip");
    // The page is retained as Evidence exactly as returned (without its evidence_id).
    let record = session
        .evidence(before["evidence_id"].as_str().unwrap())
        .unwrap();
    assert_eq!(record.operation, INVENTORY_OPERATION);
    let mut page = before.clone();
    page.remove("evidence_id");
    assert_eq!(record.result, Value::Object(page));
    assert_eq!(
        session.artifact_manifest_ids(),
        [manifest(&before), manifest(&after)]
    );

    let listed = success(
        &tools,
        "list_artifact_occurrences",
        json!({"manifest_id": manifest(&before), "under": "bin", "format": "elf"}),
    );
    let occurrences = listed["occurrences"].as_array().unwrap();
    assert_eq!(occurrences.len(), 1);
    assert_eq!(occurrences[0]["path"], "bin/app");

    let diff = success(
        &tools,
        "compare_inventories",
        json!({"before": manifest(&before), "after": manifest(&after)}),
    );
    let paths = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|o| o["path"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(paths(&diff["added"]), ["lib/libnew.so"]);
    assert_eq!(paths(&diff["removed"]), ["tools/setup.exe"]);
    assert_eq!(paths(&diff["changed"]), ["bin/app"]);
    // Listing and comparing read retained pages and append nothing.
    assert_eq!(session.evidence_count(), 2);
}

#[test]
fn pages_are_retained_one_per_call() {
    let files = Files::new();
    let (v1, _) = two_versions(&files);
    let (session, tools) = closed();
    let first = success(
        &tools,
        "inventory_artifacts",
        json!({"path": v1, "page_size": 2}),
    );
    assert_eq!(first["page"]["count"], 3);
    let id = manifest(&first);
    let partial = failure(
        &tools,
        "compare_inventories",
        json!({"before": id, "after": id}),
    );
    snapshot_filtered(
        "tools_artifacts_captures__compare_missing_pages",
        &partial,
        Some(&files),
        &[(&regex::escape(&id), "[manifest]")],
    );
    for page in 1..3 {
        success(
            &tools,
            "inventory_artifacts",
            json!({"path": v1, "page": page, "page_size": 2}),
        );
    }
    let diff = success(
        &tools,
        "compare_inventories",
        json!({"before": id, "after": id}),
    );
    assert_eq!(diff["unchanged"], 5);
    assert_eq!(session.evidence_count(), 3);
}

#[test]
fn captures_are_always_retained_and_say_whether_they_are_valid() {
    let (session, tools) = closed();
    let valid = success(
        &tools,
        "import_process_capture",
        json!({"capture": valid_capture()}),
    );
    assert_eq!(valid["valid"], true);
    assert_eq!(valid["problem"], Value::Null);
    let mut old = valid_capture();
    old["version"] = json!(3);
    let other = success(&tools, "import_process_capture", json!({"capture": old}));
    assert_eq!(other["validity"], "other_version");
    let mut broken = valid_capture();
    broken.as_object_mut().unwrap().remove("approval");
    let invalid = success(&tools, "import_process_capture", json!({"capture": broken}));
    assert_eq!(invalid["validity"], "invalid");
    snapshot(
        "tools_artifacts_captures__capture_problems",
        &format!(
            "{}\n{}",
            other["problem"].as_str().unwrap(),
            invalid["problem"].as_str().unwrap()
        ),
        None,
    );
    assert_eq!(session.evidence_count(), 3);
    assert_eq!(
        session.process_capture_ids(),
        [valid["evidence_id"].as_str().unwrap()]
    );
}

#[test]
fn reconstruction_claims_are_checked_against_retained_evidence_only() {
    let files = Files::new();
    let (v1, _) = two_versions(&files);
    let (session, tools) = closed();
    let page = inventory(&tools, &v1);
    let app = page["occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["path"] == "bin/app")
        .unwrap()
        .clone();
    let capture = success(
        &tools,
        "import_process_capture",
        json!({"capture": valid_capture()}),
    );
    let count = session.evidence_count();
    let verdicts = success(
        &tools,
        "verify_reconstruction",
        json!({"claims": [
            {"kind": "occurrence_format", "occurrence_id": app["occurrence_id"], "format": "elf"},
            {"kind": "occurrence_digest", "occurrence_id": app["occurrence_id"], "sha256": HELLO_SHA256},
            {"kind": "capture_exit_code", "capture": capture["evidence_id"], "code": 0},
            {"kind": "procedure_exists", "document": "app", "address": "0x1000"},
        ]}),
    );
    let statuses: Vec<&str> = verdicts["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["supported", "contradicted", "supported", "unverified"]
    );
    assert_eq!(
        verdicts["verdicts"][0]["evidence"],
        json!([page["evidence_id"]])
    );
    assert_eq!(
        verdicts["verdicts"][2]["evidence"],
        json!([capture["evidence_id"]])
    );
    assert_eq!(
        session.evidence_count(),
        count,
        "verification records nothing"
    );
}

#[test]
fn error_messages() {
    let files = Files::new();
    let (v1, _) = two_versions(&files);
    let (_, tools) = closed();
    let head = success(&tools, "register_unknown", json!({"question": "Why?"}));
    let refined = success(
        &tools,
        "refine_unknown",
        json!({"id": head["id"], "question": "How?"}),
    );
    let page = inventory(&tools, &v1);
    let cases: Vec<(&str, Value)> = vec![
        ("register_unknown", json!({"question": "   "})),
        (
            "refine_unknown",
            json!({"id": "unk-000000000000", "question": "x"}),
        ),
        ("refine_unknown", json!({"id": head["id"], "question": "x"})),
        (
            "resolve_unknown",
            json!({"id": refined["id"], "evidence": []}),
        ),
        (
            "resolve_unknown",
            json!({"id": refined["id"], "evidence": ["ev-1"]}),
        ),
        (
            "resolve_unknown",
            json!({"id": refined["id"], "evidence": ["ev-999999999998", "ev-999999999999"]}),
        ),
        ("list_unknowns", json!({"status": "closed"})),
        (
            "inventory_artifacts",
            json!({"path": files.path("missing")}),
        ),
        (
            "inventory_artifacts",
            json!({"path": files.path("notes.txt")}),
        ),
        ("inventory_artifacts", json!({"path": v1, "page": 7})),
        ("inventory_artifacts", json!({"path": v1, "page_size": 0})),
        ("list_artifact_occurrences", json!({"manifest_id": "nope"})),
        (
            "list_artifact_occurrences",
            json!({"manifest_id": page["manifest_id"], "format": "exe"}),
        ),
        (
            "compare_inventories",
            json!({"before": page["manifest_id"], "after": "nope"}),
        ),
        ("import_process_capture", json!({"capture": [1, 2]})),
        ("import_process_capture", json!({})),
        (
            "verify_reconstruction",
            json!({"claims": {"kind": "bytes_equal"}}),
        ),
        (
            "verify_reconstruction",
            json!({"claims": [{"kind": "bytes_equal", "document": "app"}]}),
        ),
        (
            "verify_reconstruction",
            json!({"claims": [{"kind": "guess"}]}),
        ),
    ];
    let manifest_id = manifest(&page);
    let mut text = String::new();
    for (tool, arguments) in cases {
        let message = failure(&tools, tool, arguments.clone());
        text.push_str(&format!("{tool} {arguments}\n  -> {message}\n"));
    }
    snapshot_filtered(
        "tools_artifacts_captures__errors",
        &text,
        Some(&files),
        &[
            (UNKNOWN_ID, "unk-[id]"),
            (&regex::escape(&manifest_id), "[manifest]"),
        ],
    );
}
