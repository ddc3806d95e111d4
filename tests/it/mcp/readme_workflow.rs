//! The worked example of the README, end to end through the stdio loop: inventory two versions
//! of an application folder, compare them, register an unknown, resolve it with Evidence, and
//! see each completion family (Artifact manifest, Artifact occurrence, Process capture,
//! Residual unknown) respond through `completion/complete`.

use crate::support::Client;
use crate::support::capture::valid_capture;
use crate::support::inventory::{app_v1, app_v2, write_tree};
use rea::mcp::{Server, ServerConfig};
use serde_json::{Value, json};

async fn call(client: &mut Client, name: &str, arguments: Value) -> Value {
    let answer = client
        .request("tools/call", json!({"name": name, "arguments": arguments}))
        .await;
    let result = &answer["result"];
    assert_eq!(result["isError"], false, "{name}: {answer}");
    result["structuredContent"].clone()
}

async fn complete(client: &mut Client, prompt: &str, argument: &str, value: &str) -> Vec<String> {
    let answer = client
        .request(
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": prompt},
                "argument": {"name": argument, "value": value},
                "context": {"arguments": {}},
            }),
        )
        .await;
    serde_json::from_value(answer["result"]["completion"]["values"].clone()).unwrap()
}

#[tokio::test]
async fn the_worked_example_runs_through_tools_and_completion() {
    let dir = tempfile::tempdir().unwrap();
    let v1 = dir.path().join("MyApp-1.0");
    let v2 = dir.path().join("MyApp-2.0");
    write_tree(&v1, &app_v1());
    write_tree(&v2, &app_v2());
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize("2025-11-25").await;

    // Nothing retained yet: the four families are empty.
    assert!(
        complete(
            &mut client,
            "compare_application_versions",
            "baseline_manifest",
            ""
        )
        .await
        .is_empty()
    );
    assert!(
        complete(&mut client, "audit_residual_unknowns", "unknown", "")
            .await
            .is_empty()
    );

    let before = call(
        &mut client,
        "inventory_artifacts",
        json!({"path": v1.display().to_string()}),
    )
    .await;
    let after = call(
        &mut client,
        "inventory_artifacts",
        json!({"path": v2.display().to_string()}),
    )
    .await;
    let diff = call(
        &mut client,
        "compare_inventories",
        json!({"before": before["manifest_id"], "after": after["manifest_id"]}),
    )
    .await;
    assert_eq!(diff["changed"][0]["path"], "bin/app");

    let manifests = complete(
        &mut client,
        "compare_application_versions",
        "baseline_manifest",
        "",
    )
    .await;
    assert_eq!(
        manifests,
        [
            before["manifest_id"].as_str().unwrap(),
            after["manifest_id"].as_str().unwrap()
        ]
    );
    let changed_app = diff["changed"][0]["after"]["occurrence_id"]
        .as_str()
        .unwrap();
    let occurrences = complete(
        &mut client,
        "compare_application_versions",
        "occurrence",
        &changed_app[..8],
    )
    .await;
    assert!(
        occurrences.iter().any(|o| o == changed_app),
        "{occurrences:?}"
    );

    let unknown = call(
        &mut client,
        "register_unknown",
        json!({"question": "Why did bin/app change between 1.0 and 2.0?"}),
    )
    .await;
    assert_eq!(
        complete(&mut client, "audit_residual_unknowns", "unknown", "unk-").await,
        [unknown["id"].as_str().unwrap()]
    );

    let capture = call(
        &mut client,
        "import_process_capture",
        json!({"capture": valid_capture()}),
    )
    .await;
    assert_eq!(capture["valid"], true);
    assert_eq!(
        complete(
            &mut client,
            "compare_application_versions",
            "capture",
            "ev-"
        )
        .await,
        [capture["evidence_id"].as_str().unwrap()]
    );

    let resolved = call(
        &mut client,
        "resolve_unknown",
        json!({"id": unknown["id"], "evidence": [after["evidence_id"], capture["evidence_id"]],
               "note": "2.0 ships a rebuilt bin/app; see the inventory and the capture"}),
    )
    .await;
    assert_eq!(resolved["status"], "resolved");
    assert!(
        complete(&mut client, "audit_residual_unknowns", "unknown", "")
            .await
            .is_empty()
    );
}
