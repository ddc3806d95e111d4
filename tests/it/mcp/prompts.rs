//! `prompts/list`, `prompts/get` and `notifications/prompts/list_changed` through the stdio loop.

use std::time::Duration;

use crate::support::Client;
use rea::core::Family;
use rea::mcp::{Server, ServerConfig};
use rea::prompts::{ArgumentDefinition, PromptDefinition, RegistryChange, builtin_prompts};
use serde_json::{Value, json};

fn snapshot(name: &str, value: &Value) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!(format!("mcp_prompts__{name}"), value);
    });
}

async fn started(server: &Server, version: &str) -> Client {
    let mut client = Client::start(server.clone());
    client.initialize(version).await;
    client
}

fn extra_prompt(description: &str) -> PromptDefinition {
    PromptDefinition {
        name: "triage_sample".into(),
        title: "Triage a sample".into(),
        description: description.into(),
        arguments: vec![ArgumentDefinition {
            name: "document".into(),
            description: "Document to triage (completed from Document).".into(),
            required: false,
            family: Some(Family::Document),
        }],
        workflow: vec!["list_documents".into(), "get_evidence".into()],
    }
}

#[tokio::test]
async fn lists_the_six_prompts_under_every_version() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let server = Server::new(ServerConfig::default());
        let mut client = started(&server, version).await;
        let answer = client.request("prompts/list", json!({})).await;
        let names: Vec<&str> = answer["result"]["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "investigate_feature",
                "compare_application_versions",
                "verify_reconstruction",
                "trace_crash",
                "audit_residual_unknowns",
                "prepare_bounded_process_capture"
            ]
        );
        assert!(answer["result"].get("nextCursor").is_none());
    }
}

#[tokio::test]
async fn invalid_cursor_is_invalid_params() {
    let server = Server::new(ServerConfig::default());
    let mut client = started(&server, "2025-11-25").await;
    let answer = client
        .request("prompts/list", json!({ "cursor": "bogus" }))
        .await;
    snapshot("invalid_cursor", &answer);
}

#[tokio::test]
async fn every_prompt_renders_one_user_message() {
    let server = Server::new(ServerConfig::default());
    let mut client = started(&server, "2025-11-25").await;
    for prompt in builtin_prompts() {
        // `session` must name an open session (mcp::sessions renders with one).
        let arguments: serde_json::Map<String, Value> = prompt
            .arguments
            .iter()
            .filter(|a| a.name != "session")
            .map(|a| (a.name.clone(), json!(format!("value of {}", a.name))))
            .collect();
        let answer = client
            .request(
                "prompts/get",
                json!({ "name": prompt.name, "arguments": arguments }),
            )
            .await;
        let messages = answer["result"]["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 1);
        assert_eq!(messages[0]["role"], "user");
        let text = messages[0]["content"]["text"].as_str().unwrap();
        assert!(
            text.contains("Observations")
                && text.contains("Inferences")
                && text.contains("Unknowns")
        );
        assert!(
            text.contains("\"value of "),
            "arguments appear in the data block"
        );
    }
}

#[tokio::test]
async fn prompt_errors_are_invalid_params_naming_prompt_and_argument() {
    let server = Server::new(ServerConfig::default());
    let mut client = started(&server, "2025-11-25").await;
    let cases = [
        ("unknown_prompt", json!({ "name": "nope" })),
        (
            "missing_required",
            json!({ "name": "trace_crash", "arguments": {} }),
        ),
        (
            "unknown_argument",
            json!({ "name": "trace_crash", "arguments": { "symptom": "x", "colour": "red" } }),
        ),
        (
            "non_string_argument",
            json!({ "name": "trace_crash", "arguments": { "symptom": ["x"] } }),
        ),
        (
            "over_long_argument",
            json!({ "name": "trace_crash", "arguments": { "symptom": "x".repeat(65_537) } }),
        ),
        ("missing_name", json!({ "arguments": {} })),
    ];
    for (name, params) in cases {
        let answer = client.request("prompts/get", params).await;
        assert_eq!(answer["error"]["code"], -32602, "{name}");
        snapshot(name, &answer);
    }
    let at_bound = client
        .request(
            "prompts/get",
            json!({ "name": "trace_crash", "arguments": { "symptom": "x".repeat(65_536) } }),
        )
        .await;
    assert!(at_bound.get("result").is_some());
}

#[tokio::test]
async fn list_changed_is_sent_when_and_only_when_the_catalog_changed() {
    let server = Server::new(ServerConfig::default());
    let mut client = started(&server, "2025-11-25").await;
    // Make sure the initialized notification was processed before registering.
    client.request("ping", json!({})).await;

    assert_eq!(
        server.register_prompt(extra_prompt("first")).unwrap(),
        RegistryChange::Added
    );
    let notification = client.recv().await;
    assert_eq!(
        notification,
        json!({ "jsonrpc": "2.0", "method": "notifications/prompts/list_changed" })
    );
    let listed = client.request("prompts/list", json!({})).await;
    assert_eq!(listed["result"]["prompts"].as_array().unwrap().len(), 7);

    assert_eq!(
        server.register_prompt(extra_prompt("first")).unwrap(),
        RegistryChange::Unchanged
    );
    assert!(
        client
            .recv_within(Duration::from_millis(300))
            .await
            .is_none()
    );

    assert_eq!(
        server.register_prompt(extra_prompt("second")).unwrap(),
        RegistryChange::Updated
    );
    assert_eq!(
        client.recv().await["method"],
        "notifications/prompts/list_changed"
    );

    assert!(server.remove_prompt("triage_sample").is_some());
    assert_eq!(
        client.recv().await["method"],
        "notifications/prompts/list_changed"
    );
    assert!(server.remove_prompt("triage_sample").is_none());
    assert!(
        client
            .recv_within(Duration::from_millis(300))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn list_changed_reaches_every_connected_client() {
    let server = Server::new(ServerConfig::default());
    let mut first = started(&server, "2025-06-18").await;
    let mut second = started(&server, "2024-11-05").await;
    first.request("ping", json!({})).await;
    second.request("ping", json!({})).await;
    server.register_prompt(extra_prompt("shared")).unwrap();
    assert_eq!(
        first.recv().await["method"],
        "notifications/prompts/list_changed"
    );
    assert_eq!(
        second.recv().await["method"],
        "notifications/prompts/list_changed"
    );
}
