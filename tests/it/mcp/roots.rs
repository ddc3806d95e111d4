//! Client roots: a client that declares the `roots` capability is asked for them, and every
//! path the tools touch is then confined to them.

use std::path::Path;

use rea::mcp::{Server, ServerConfig};
use serde_json::{Value, json};

use crate::support::Client;
use crate::support::fixtures::{Format, Spec, build};

async fn initialize_with_roots(client: &mut Client) {
    let answer = client
        .request(
            "initialize",
            json!({ "protocolVersion": "2025-11-25", "capabilities": { "roots": { "listChanged": true } },
                    "clientInfo": { "name": "rea-tests", "version": "0" } }),
        )
        .await;
    assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
    client
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))
        .await;
}

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
    initialize_with_roots(&mut client).await;
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
