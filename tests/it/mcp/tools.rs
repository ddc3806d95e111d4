//! `tools/list` and `tools/call` through the stdio loop, and the tools they make live.

use crate::support::Client;
use rea::mcp::{Server, ServerConfig};
use serde_json::{Value, json};

fn catalog() -> String {
    crate::root()
        .join("tests/clients/fixtures/notes-catalog.json")
        .display()
        .to_string()
}

async fn started() -> Client {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    let init = client.initialize("2025-11-25").await;
    assert!(init["result"]["capabilities"]["tools"].is_object());
    client
}

async fn call(client: &mut Client, name: &str, arguments: Value) -> Value {
    client
        .request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
        .await
}

#[tokio::test]
async fn tools_are_listed_with_schemas_and_annotations() {
    let mut client = started().await;
    let listed = client.request("tools/list", json!({})).await;
    let tools = listed["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for expected in [
        "open_binary",
        "list_procedures",
        "read_bytes",
        "get_evidence",
    ] {
        assert!(names.contains(&expected), "{expected} listed");
    }
    for tool in tools {
        assert_eq!(tool["inputSchema"]["type"], "object");
        assert!(tool["annotations"]["readOnlyHint"].is_boolean());
    }
    let bad_cursor = client.request("tools/list", json!({ "cursor": "x" })).await;
    assert_eq!(bad_cursor["error"]["code"], -32602);
}

#[tokio::test]
async fn opening_a_catalog_makes_documents_procedures_and_evidence_live() {
    let mut client = started().await;
    let before = client
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "investigate_feature" },
                    "argument": { "name": "document", "value": "" } }),
        )
        .await;
    assert_eq!(before["result"]["completion"]["total"], 0);

    let opened = call(&mut client, "open_binary", json!({ "path": catalog() })).await;
    assert_eq!(opened["result"]["isError"], false, "{opened}");
    let documents = call(&mut client, "list_documents", json!({})).await;
    assert_eq!(documents["result"]["isError"], false, "{documents}");
    let evidence_id = documents["result"]["structuredContent"]["evidence_id"]
        .as_str()
        .unwrap()
        .to_owned();

    let after = client
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "investigate_feature" },
                    "argument": { "name": "document", "value": "" } }),
        )
        .await;
    assert_eq!(
        after["result"]["completion"]["values"],
        json!(["Notes", "NotesHelper"])
    );
    let evidence = client
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "audit_residual_unknowns" },
                    "argument": { "name": "evidence", "value": "" } }),
        )
        .await;
    assert_eq!(
        evidence["result"]["completion"]["values"],
        json!([evidence_id])
    );

    // The rendered workflow now lists the real tool names, numbered.
    let prompt = client
        .request(
            "prompts/get",
            json!({ "name": "trace_crash", "arguments": { "symptom": "crash on open" } }),
        )
        .await;
    let text = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("1. `list_documents`"), "{text}");
    assert!(text.contains("A binary is open"));

    let closed = call(&mut client, "close_binary", json!({})).await;
    assert_eq!(closed["result"]["isError"], false);
    let gone = client
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "audit_residual_unknowns" },
                    "argument": { "name": "evidence", "value": "" } }),
        )
        .await;
    assert_eq!(
        gone["result"]["completion"]["total"], 0,
        "closing clears the ledger"
    );
}

#[tokio::test]
async fn tool_failures_are_results_and_unknown_tools_are_invalid_params() {
    let mut client = started().await;
    let unknown = call(&mut client, "format_disk", json!({})).await;
    assert_eq!(unknown["error"]["code"], -32602);
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("format_disk")
    );

    let no_binary = call(&mut client, "list_procedures", json!({})).await;
    assert_eq!(no_binary["result"]["isError"], true);
    let bad_argument = call(
        &mut client,
        "read_bytes",
        json!({ "address": 12, "length": 4 }),
    )
    .await;
    assert_eq!(bad_argument["result"]["isError"], true);
    let text = bad_argument["result"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(text.contains("address"), "{text}");
    let not_object = client
        .request(
            "tools/call",
            json!({ "name": "list_documents", "arguments": [1] }),
        )
        .await;
    assert_eq!(not_object["error"]["code"], -32602);
}
