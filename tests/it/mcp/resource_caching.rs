//! Resources under 2026-07-28 (docs/CONTRACT.md sections 8c and 14): how long and by whom each
//! answer may be cached (`ttlMs`, `cacheScope`), and listen streams that ask for resource list
//! changes. Every answer is validated by the test client against the schema of its era
//! (`ReadResourceResult`, `ListResourcesResult`, `ListResourceTemplatesResult` of 2026-07-28).

use rea::mcp::{Server, ServerConfig};
use rea::resources::encode;
use serde_json::{Value, json};

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
