//! Resources under 2026-07-28 (docs/CONTRACT.md sections 8c and 14): how long and by whom each
//! answer may be cached (`ttlMs`, `cacheScope`), and listen streams that ask for resource list
//! changes: the built-in lists never change, an extension's may (it announces the change).
//! Every answer is validated by the test client against the schema of its era
//! (`ReadResourceResult`, `ListResourcesResult`, `ListResourceTemplatesResult` of 2026-07-28).

use std::sync::Arc;

use rea::mcp::{Extension, ExtensionContext, Handled, ListKind, Reply, Server, ServerConfig};
use rea::resources::encode;
use serde_json::{Map, Value, json};

use super::sessions::catalog;
use crate::support::Client;
use crate::support::capture::valid_capture;
use crate::support::client::{MODERN, assert_schema_valid, modern_meta};

async fn call(client: &mut Client, name: &str, arguments: Value) -> Value {
    let answer = client
        .request_modern(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
            json!({}),
        )
        .await;
    assert_eq!(answer["result"]["isError"], false, "{name}: {answer}");
    answer["result"]["structuredContent"].clone()
}

async fn read(client: &mut Client, uri: &str) -> Value {
    let answer = client
        .request_modern("resources/read", json!({ "uri": uri }), json!({}))
        .await;
    assert_eq!(answer["result"]["contents"][0]["uri"], uri, "{answer}");
    assert_schema_valid(MODERN, "ReadResourceResult", &answer["result"]);
    answer["result"].clone()
}

fn caching(result: &Value) -> (Value, Value) {
    (result["ttlMs"].clone(), result["cacheScope"].clone())
}

#[tokio::test]
async fn session_resources_are_private_and_stale_at_once_static_ones_public() {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    let public = (json!(60_000), json!("public"));
    let private = (json!(0), json!("private"));

    for method in ["resources/list", "resources/templates/list"] {
        let listed = client.request_modern(method, json!({}), json!({})).await;
        assert_eq!(caching(&listed["result"]), public, "{method}");
    }
    let listed = client
        .request_modern("resources/list", json!({}), json!({}))
        .await;
    for resource in listed["result"]["resources"].as_array().unwrap() {
        let uri = resource["uri"].as_str().unwrap();
        assert_eq!(caching(&read(&mut client, uri).await), public, "{uri}");
    }

    // One resource of every template, in the connection's session.
    let opened = call(&mut client, "open_binary", json!({ "path": catalog() })).await;
    let base = format!(
        "rea://session/{}",
        encode(opened["session"].as_str().unwrap())
    );
    let listed = call(&mut client, "list_procedures", json!({})).await;
    let evidence = listed["evidence_id"].as_str().unwrap();
    let unknown = call(&mut client, "register_unknown", json!({ "question": "a?" })).await;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello\n").unwrap();
    let page = call(
        &mut client,
        "inventory_artifacts",
        json!({ "path": dir.path().display().to_string() }),
    )
    .await;
    let capture = call(
        &mut client,
        "import_process_capture",
        json!({ "capture": valid_capture() }),
    )
    .await;
    let uris = [
        format!("{base}/evidence/{evidence}"),
        format!("{base}/unknown/{}", unknown["id"].as_str().unwrap()),
        format!("{base}/document/Notes/procedure/main"),
        format!(
            "{base}/inventory/{}/occurrence/{}",
            page["manifest_id"].as_str().unwrap(),
            page["occurrences"][0]["occurrence_id"].as_str().unwrap()
        ),
        format!(
            "{base}/capture/{}",
            capture["evidence_id"].as_str().unwrap()
        ),
    ];
    for uri in &uris {
        assert_eq!(caching(&read(&mut client, uri).await), private, "{uri}");
    }

    // An error carries no caching; a 2025 read carries none either.
    let missing = client
        .request_modern(
            "resources/read",
            json!({ "uri": format!("{base}/evidence/ev-999999999999") }),
            json!({}),
        )
        .await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    let mut legacy = Client::start(Server::new(ServerConfig::default()));
    legacy.initialize("2025-11-25").await;
    let answer = legacy
        .request(
            "resources/read",
            json!({ "uri": "rea://schema/catalog-v1" }),
        )
        .await;
    assert!(answer["result"].get("cacheScope").is_none(), "{answer}");
    assert!(answer["result"].get("ttlMs").is_none(), "{answer}");
}

#[tokio::test]
async fn a_listen_for_resource_list_changes_is_honoured_and_nothing_ever_changes_them() {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    let id = json!("resources-listen");
    client
        .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                       "params": { "notifications": { "resourcesListChanged": true,
                                                      "resourceSubscriptions": ["rea://guide/templates"] },
                                   "_meta": modern_meta(json!({})) } }))
        .await;
    let acknowledged = client.recv().await;
    assert_eq!(
        acknowledged["method"],
        "notifications/subscriptions/acknowledged"
    );
    // Resource list changes are honoured; subscriptions to one resource are not offered.
    assert_eq!(
        acknowledged["params"]["notifications"],
        json!({ "resourcesListChanged": true })
    );

    // Opening, observing and closing change sessions and what their templates resolve to,
    // never the lists: each answer is the next line, with no notification before it.
    call(&mut client, "open_binary", json!({ "path": catalog() })).await;
    call(&mut client, "list_procedures", json!({})).await;
    call(&mut client, "register_unknown", json!({ "question": "a?" })).await;
    call(&mut client, "close_binary", json!({})).await;
    let listed = client
        .request_modern("resources/list", json!({}), json!({}))
        .await;
    assert_eq!(listed["result"]["resources"].as_array().unwrap().len(), 4);

    let rest = client.finish().await;
    let methods: Vec<&Value> = rest.iter().map(|m| &m["method"]).collect();
    assert_eq!(
        methods,
        [&Value::Null, &json!("notifications/cancelled")],
        "the stream ends with its result and cancellation, nothing else: {rest:?}"
    );
    assert_eq!(rest[0]["id"], id);
}

/// An extension with one resource of its own and a tool that announces that its resource
/// list changed.
#[derive(Debug)]
struct Shelf;

const SHELF_URI: &str = "shelf://item";

impl Extension for Shelf {
    fn tools(&self) -> Vec<Value> {
        vec![
            json!({ "name": "shelve", "description": "Changes the shelf's resources",
                     "inputSchema": { "type": "object" } }),
        ]
    }

    fn resources(&self) -> Vec<Value> {
        vec![json!({ "uri": SHELF_URI, "name": "item", "mimeType": "text/plain" })]
    }

    fn call_tool<'a>(
        &'a self,
        name: &'a str,
        _arguments: &'a Map<String, Value>,
        context: &'a ExtensionContext,
    ) -> Handled<'a> {
        Box::pin(async move {
            (name == "shelve").then(|| {
                context.list_changed(ListKind::Resources);
                Ok(Reply::Complete(
                    json!({ "content": [{ "type": "text", "text": "shelved" }] }),
                ))
            })
        })
    }

    fn read_resource<'a>(&'a self, uri: &'a str, _context: &'a ExtensionContext) -> Handled<'a> {
        Box::pin(async move {
            (uri == SHELF_URI).then(|| {
                Ok(Reply::Complete(
                    json!({ "contents": [{ "uri": SHELF_URI, "mimeType": "text/plain", "text": "an item" }] }),
                ))
            })
        })
    }
}

async fn listen(client: &mut Client, id: &str, notifications: Value) -> Value {
    client
        .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                       "params": { "notifications": notifications, "_meta": modern_meta(json!({})) } }))
        .await;
    let acknowledged = client.recv().await;
    assert_eq!(
        acknowledged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    acknowledged["params"]["notifications"].clone()
}

#[tokio::test]
async fn an_extensions_resource_list_change_reaches_the_streams_that_asked_and_its_reads_are_private()
 {
    let server = Server::new(ServerConfig::default()).with_extension(Arc::new(Shelf));
    let mut client = Client::start(server);
    let honoured = listen(
        &mut client,
        "resources",
        json!({ "resourcesListChanged": true }),
    )
    .await;
    assert_eq!(honoured, json!({ "resourcesListChanged": true }));
    listen(
        &mut client,
        "prompts",
        json!({ "promptsListChanged": true }),
    )
    .await;

    client
        .send(
            &json!({ "jsonrpc": "2.0", "id": "shelve", "method": "tools/call",
                       "params": { "name": "shelve", "arguments": {},
                                   "_meta": modern_meta(json!({})) } }),
        )
        .await;
    // The change and the answer, in either order; only the stream that asked gets the change.
    let (first, second) = (client.recv().await, client.recv().await);
    let (notification, answer) = if first.get("method").is_some() {
        (first, second)
    } else {
        (second, first)
    };
    assert_eq!(answer["id"], "shelve");
    assert_eq!(
        answer["result"]["content"][0]["text"], "shelved",
        "{answer}"
    );
    assert_eq!(
        notification["method"],
        "notifications/resources/list_changed"
    );
    assert_eq!(
        notification["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "resources"
    );

    // An extension's resource is not one of the built-in static ones: private, stale at once.
    let read = read(&mut client, SHELF_URI).await;
    assert_eq!(caching(&read), (json!(0), json!("private")));
    let rest = client.finish().await;
    assert!(
        rest.iter()
            .all(|m| m["method"] != "notifications/resources/list_changed"),
        "one change, one notification: {rest:?}"
    );
}
