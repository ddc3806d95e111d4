//! Client roots: a client that declares the `roots` capability is asked for them, and every
//! path the tools touch is then confined to them.

use std::path::Path;

use rea::mcp::{Server, ServerConfig};
use serde_json::{Value, json};

use crate::support::Client;
use crate::support::fixtures::{Format, Spec, build};

/// Receives the server's `roots/list` request and answers it with `roots`.
async fn answer_roots(client: &mut Client, roots: &[&Path]) {
    let request = client.recv().await;
    assert_eq!(request["method"], "roots/list");
    let roots: Vec<Value> = roots
        .iter()
        .map(|root| json!({ "uri": format!("file://{}", root.display()) }))
        .collect();
    client
        .send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "roots": roots } }))
        .await;
}

async fn open(client: &mut Client, path: &Path) -> Value {
    let answer = client
        .request(
            "tools/call",
            json!({ "name": "open_binary", "arguments": { "path": path } }),
        )
        .await;
    answer["result"].clone()
}

#[tokio::test]
async fn paths_are_confined_to_the_roots_the_client_names() {
    let inside = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let bytes = build(&Spec::sample(), Format::Elf).bytes;
    std::fs::write(inside.path().join("app"), &bytes).unwrap();
    std::fs::write(outside.path().join("app"), &bytes).unwrap();

    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize_with_roots().await;
    let request = client.recv().await;
    assert_eq!(request["method"], "roots/list");
    // Until the client names its roots, nothing may be opened.
    let refused = open(&mut client, &inside.path().join("app")).await;
    assert_eq!(refused["isError"], true, "{refused}");

    let roots: Vec<Value> = vec![json!({ "uri": format!("file://{}", inside.path().display()) })];
    client
        .send(&json!({ "jsonrpc": "2.0", "id": request["id"], "result": { "roots": roots } }))
        .await;
    let opened = open(&mut client, &inside.path().join("app")).await;
    assert_eq!(opened["isError"], false, "{opened}");
    let refused = open(&mut client, &outside.path().join("app")).await;
    assert_eq!(refused["isError"], true, "{refused}");

    // The roots change: the server asks again and follows the new list.
    client
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }))
        .await;
    answer_roots(&mut client, &[outside.path()]).await;
    let opened = open(&mut client, &outside.path().join("app")).await;
    assert_eq!(opened["isError"], false, "{opened}");
    let refused = open(&mut client, &inside.path().join("app")).await;
    assert_eq!(refused["isError"], true, "{refused}");
}

#[tokio::test]
async fn a_client_without_the_capability_is_never_asked() {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize("2025-11-25").await;
    let pong = client.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn a_binary_left_outside_narrowed_roots_is_no_longer_read() {
    let inside = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        inside.path().join("app"),
        build(&Spec::sample(), Format::Elf).bytes,
    )
    .unwrap();
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize_with_roots().await;
    answer_roots(&mut client, &[inside.path()]).await;
    let opened = open(&mut client, &inside.path().join("app")).await;
    assert_eq!(opened["isError"], false, "{opened}");
    assert_eq!(list_one(&mut client).await["isError"], false);

    client
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }))
        .await;
    answer_roots(&mut client, &[other.path()]).await;
    let refused = list_one(&mut client).await;
    assert_eq!(refused["isError"], true, "{refused}");
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("outside the roots"), "{text}");
    for tool in ["read_bytes", "search_strings", "disassemble"] {
        let arguments = match tool {
            "read_bytes" => json!({ "address": "0x0", "length": 1 }),
            "search_strings" => json!({ "contains": "a" }),
            _ => json!({ "procedure": "main" }),
        };
        let answer = client
            .request(
                "tools/call",
                json!({ "name": tool, "arguments": arguments }),
            )
            .await;
        assert_eq!(answer["result"]["isError"], true, "{tool}: {answer}");
    }
    let completion = client
        .request(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "trace_crash" },
                    "argument": { "name": "procedure", "value": "" } }),
        )
        .await;
    assert_eq!(completion["result"]["completion"]["values"], json!([]));

    // The roots include it again: it is read again.
    client
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/roots/list_changed" }))
        .await;
    answer_roots(&mut client, &[inside.path(), other.path()]).await;
    assert_eq!(list_one(&mut client).await["isError"], false);
}

async fn list_one(client: &mut Client) -> Value {
    let request = json!({ "name": "list_procedures", "arguments": { "limit": 1 } });
    client.request("tools/call", request).await["result"].clone()
}
