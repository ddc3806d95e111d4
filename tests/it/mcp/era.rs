//! The 2026-07-28 revision beside the 2025 ones on one stdio connection (docs/CONTRACT.md
//! section 8c): per-message classification without pinning, `server/discover`, the `_meta`
//! envelope checks, decorated results, the removed methods, and `subscriptions/listen`. Every
//! answer is validated by the test client against the schema of its era.

use rea::mcp::{Server, ServerConfig};
use rea::prompts::PromptDefinition;
use serde_json::{Value, json};

use crate::support::Client;
use crate::support::client::{MODERN, modern_meta};

fn snapshot(name: &str, value: &Value) {
    let mut settings = crate::support::snapshots::settings();
    settings.add_filter(
        &regex::escape(&format!("\"{}\"", env!("CARGO_PKG_VERSION"))),
        "\"[version]\"",
    );
    settings.bind(|| insta::assert_json_snapshot!(format!("mcp_era__{name}"), value));
}

fn server() -> Server {
    Server::new(ServerConfig::default())
}

/// A prompt the built-in catalog does not have.
fn extra_prompt() -> PromptDefinition {
    PromptDefinition {
        name: "triage_sample".into(),
        title: "Triage a sample".into(),
        description: "Triage one sample.".into(),
        arguments: Vec::new(),
        workflow: vec!["list_documents".into()],
    }
}

#[tokio::test]
async fn discover_answers_without_initialize() {
    let mut client = Client::start(server());
    let answer = client
        .request_modern("server/discover", json!({}), json!({}))
        .await;
    let result = &answer["result"];
    assert_eq!(
        result["supportedVersions"],
        json!([
            MODERN,
            "2025-11-25",
            "2025-06-18",
            "2025-03-26",
            "2024-11-05"
        ])
    );
    for capability in ["prompts", "completions", "tools", "logging"] {
        assert!(
            result["capabilities"].get(capability).is_some(),
            "{capability}"
        );
    }
    assert_eq!(result["capabilities"]["prompts"]["listChanged"], true);
    assert_eq!(result["cacheScope"], "public");
    assert!(result["ttlMs"].is_u64());
    assert!(result.get("serverInfo").is_none());
    snapshot("discover", result);
}

#[tokio::test]
async fn a_discover_probe_pins_nothing() {
    let mut client = Client::start(server());
    client
        .request_modern("server/discover", json!({}), json!({}))
        .await;
    // The 2025 handshake still works after the probe, and its answers stay 2025 answers.
    let initialized = client.initialize("2025-11-25").await;
    assert!(initialized["result"].get("resultType").is_none());
    assert_eq!(initialized["result"]["capabilities"]["logging"], json!({}));
    let listed = client.request("prompts/list", json!({})).await;
    assert!(listed["result"].get("ttlMs").is_none());
    // And 2026 requests are still served as such on the same connection.
    let listed = client
        .request_modern("prompts/list", json!({}), json!({}))
        .await;
    assert_eq!(listed["result"]["resultType"], "complete");
    assert_eq!(client.request("ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn every_shared_method_answers_2026_requests_without_initialize() {
    let mut client = Client::start(server());
    let prompts = client
        .request_modern("prompts/list", json!({}), json!({}))
        .await;
    assert_eq!(prompts["result"]["ttlMs"], 0);
    assert_eq!(prompts["result"]["cacheScope"], "public");
    assert!(!prompts["result"]["prompts"].as_array().unwrap().is_empty());
    let tools = client
        .request_modern("tools/list", json!({}), json!({}))
        .await;
    assert!(tools["result"]["ttlMs"].as_u64().unwrap() > 0);
    assert_eq!(tools["result"]["cacheScope"], "public");
    let rendered = client
        .request_modern(
            "prompts/get",
            json!({ "name": "trace_crash", "arguments": { "symptom": "segfault" } }),
            json!({}),
        )
        .await;
    assert!(rendered["result"]["messages"].is_array());
    assert!(rendered["result"].get("ttlMs").is_none());
    let completed = client
        .request_modern(
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "trace_crash" },
                    "argument": { "name": "symptom", "value": "" } }),
            json!({}),
        )
        .await;
    assert_eq!(completed["result"]["completion"]["values"], json!([]));
    let called = client
        .request_modern(
            "tools/call",
            json!({ "name": "list_providers", "arguments": {} }),
            json!({}),
        )
        .await;
    assert_eq!(called["result"]["isError"], false);
    // A 2026 request's bad params are the same -32602 as a 2025 one's.
    let bad = client
        .request_modern("prompts/get", json!({}), json!({}))
        .await;
    assert_eq!(bad["error"]["code"], -32602);
}

/// Params of a request whose `_meta` is `meta` (no defaults added).
fn with_meta(meta: Value) -> Value {
    json!({ "_meta": meta })
}

#[tokio::test]
async fn the_envelope_is_checked() {
    let mut client = Client::start(server());
    let capabilities = "io.modelcontextprotocol/clientCapabilities";
    let version = "io.modelcontextprotocol/protocolVersion";
    let cases = [
        ("missing_version", json!({ capabilities: {} }), -32602),
        ("missing_capabilities", json!({ version: MODERN }), -32602),
        (
            "version_not_a_string",
            json!({ version: 20260728, capabilities: {} }),
            -32602,
        ),
        (
            "capabilities_not_an_object",
            json!({ version: MODERN, capabilities: [] }),
            -32602,
        ),
        (
            "unsupported_version",
            json!({ version: "2099-01-01", capabilities: {} }),
            -32022,
        ),
        (
            "handshake_version",
            json!({ version: "2025-11-25", capabilities: {} }),
            -32022,
        ),
        (
            "bad_log_level",
            modern_meta(json!({ "io.modelcontextprotocol/logLevel": "loud" })),
            -32602,
        ),
    ];
    let mut answers = serde_json::Map::new();
    for (name, meta, code) in cases {
        for method in ["server/discover", "prompts/list"] {
            let answer = client.request(method, with_meta(meta.clone())).await;
            assert_eq!(answer["error"]["code"], code, "{name} {method}: {answer}");
            if method == "prompts/list" {
                answers.insert(name.to_owned(), answer["error"].clone());
            }
        }
    }
    let unsupported = &answers["unsupported_version"]["data"];
    assert_eq!(unsupported["requested"], "2099-01-01");
    assert_eq!(unsupported["supported"][0], MODERN);
    snapshot("envelope_errors", &Value::Object(answers));
    // Nothing was pinned or broken: a valid request is still served.
    let listed = client
        .request_modern("prompts/list", json!({}), json!({}))
        .await;
    assert_eq!(listed["result"]["resultType"], "complete");
}

#[tokio::test]
async fn methods_2026_removed_are_method_not_found() {
    let mut client = Client::start(server());
    let mut answers = serde_json::Map::new();
    for method in [
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "initialize",
    ] {
        let params = json!({ "level": "info", "uri": "file:///x", "protocolVersion": "2025-11-25",
                             "capabilities": {}, "clientInfo": { "name": "t", "version": "0" } });
        let answer = client.request_modern(method, params, json!({})).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
        answers.insert(method.to_owned(), answer["error"].clone());
    }
    snapshot("removed_methods", &Value::Object(answers));
    // The `initialize` with a 2026 claim did not initialize: a 2025 request still needs it.
    let refused = client.request("prompts/list", json!({})).await;
    assert_eq!(refused["error"]["code"], -32600);
    client.initialize("2025-11-25").await;
}

#[tokio::test]
async fn a_2026_client_is_never_asked_for_its_roots() {
    let mut client = Client::start(server());
    let roots = json!({ "io.modelcontextprotocol/clientCapabilities": { "roots": { "listChanged": true } } });
    let first = client
        .request_modern("prompts/list", json!({}), roots.clone())
        .await;
    assert_eq!(first["result"]["resultType"], "complete");
    // The next line is the answer to the next request, not a `roots/list` (the client's
    // checks fail on any server-to-client request to a client that never initialized).
    let second = client.request_modern("tools/list", json!({}), roots).await;
    assert_eq!(second["result"]["resultType"], "complete");
    assert!(client.finish().await.is_empty());
}

/// Opens a listen stream asking for `notifications`; returns its id after the acknowledgement.
async fn listen(client: &mut Client, notifications: Value) -> (Value, Value) {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let id = json!(format!(
        "listen-{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    client
        .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                       "params": { "notifications": notifications, "_meta": modern_meta(json!({})) } }))
        .await;
    let acknowledged = client.recv().await;
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );
    assert_eq!(
        acknowledged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        id
    );
    (id, acknowledged["params"]["notifications"].clone())
}

#[tokio::test]
async fn listen_streams_get_what_they_asked_for_tagged_with_their_id() {
    let server = server();
    let mut modern = Client::start(server.clone());
    let mut legacy = Client::start(server.clone());
    legacy.initialize("2025-11-25").await;
    legacy.request("ping", json!({})).await;

    let (prompts, honoured) = listen(
        &mut modern,
        json!({ "promptsListChanged": true, "resourcesListChanged": true }),
    )
    .await;
    // Both are honoured (the resource list never changes, so nothing comes of the second).
    assert_eq!(
        honoured,
        json!({ "promptsListChanged": true, "resourcesListChanged": true })
    );
    let (tools, honoured) = listen(&mut modern, json!({ "toolsListChanged": true })).await;
    assert_eq!(honoured, json!({ "toolsListChanged": true }));

    server.register_prompt(extra_prompt()).unwrap();
    // The 2025 connection gets the plain notification, the prompts stream its tagged one,
    // and the tools stream nothing (the next line is the answer to the next request).
    assert_eq!(
        legacy.recv().await,
        json!({ "jsonrpc": "2.0", "method": "notifications/prompts/list_changed" })
    );
    let tagged = modern.recv().await;
    assert_eq!(tagged["method"], "notifications/prompts/list_changed");
    assert_eq!(
        tagged["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        prompts
    );
    let answer = modern
        .request_modern("prompts/list", json!({}), json!({}))
        .await;
    assert_eq!(answer["result"]["prompts"].as_array().unwrap().len(), 7);

    // A listen id in use is refused like any id in flight.
    modern
        .send(
            &json!({ "jsonrpc": "2.0", "id": tools, "method": "subscriptions/listen",
                       "params": { "notifications": {}, "_meta": modern_meta(json!({})) } }),
        )
        .await;
    assert_eq!(modern.recv().await["error"]["code"], -32600);

    // Cancelled, the prompts stream gets nothing more.
    modern
        .send(
            &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": { "requestId": prompts } }),
        )
        .await;
    // The loop reads lines in order: once this is answered, the cancellation was handled.
    let answered = modern
        .request_modern("prompts/list", json!({}), json!({}))
        .await;
    assert_eq!(answered["result"]["resultType"], "complete");
    server.remove_prompt("triage_sample").unwrap();
    assert_eq!(
        legacy.recv().await["method"],
        "notifications/prompts/list_changed"
    );
    let next = modern
        .request_modern("tools/list", json!({}), json!({}))
        .await;
    assert_eq!(next["result"]["resultType"], "complete");

    // At the end of input the open stream is ended: its result, then its cancellation.
    let rest = modern.finish().await;
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert_eq!(rest[0]["id"], tools);
    assert_eq!(rest[0]["result"]["resultType"], "complete");
    assert_eq!(
        rest[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        tools
    );
    crate::support::client::assert_schema_valid(
        MODERN,
        "SubscriptionsListenResultResponse",
        &rest[0],
    );
    assert_eq!(rest[1]["method"], "notifications/cancelled");
    assert_eq!(rest[1]["params"]["requestId"], tools);
    crate::support::client::assert_schema_valid(MODERN, "ServerNotification", &rest[1]);
}

#[tokio::test]
async fn at_most_64_listen_streams_are_open() {
    let mut client = Client::start(server());
    let mut ids = Vec::new();
    for _ in 0..64 {
        ids.push(
            listen(&mut client, json!({ "promptsListChanged": true }))
                .await
                .0,
        );
    }
    let refused = client
        .request_modern(
            "subscriptions/listen",
            json!({ "notifications": { "promptsListChanged": true } }),
            json!({}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32000);
    snapshot("too_many_listens", &refused["error"]);
    client
        .send(
            &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                       "params": { "requestId": ids[0] } }),
        )
        .await;
    listen(&mut client, json!({ "promptsListChanged": true })).await;
    // A listen without a filter is invalid params.
    let bad = client
        .request_modern("subscriptions/listen", json!({}), json!({}))
        .await;
    assert_eq!(bad["error"]["code"], -32602);
}
