//! The bounded execution model: in-flight cap with backpressure, duplicate ids, batch and
//! answer size caps, hung providers, cancellation that never commits.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rea::mcp::{Server, ServerConfig, ShellConfig};
use rea::session::{Cancel, Provider, Session, SourceConfig};
use rea::tools::ToolBox;
use serde_json::{Value, json};

use crate::support::Client;
use crate::support::gated::GatedProvider;

fn snapshot(name: &str, value: &Value) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!(format!("mcp_execution__{name}"), value);
    });
}

fn server_over(provider: &Arc<GatedProvider>, shell: ShellConfig, timeout: Duration) -> Server {
    let session = Arc::new(Session::new());
    let declared: Arc<dyn Provider> = provider.clone();
    session.open_providers("gated", vec![declared]).unwrap();
    let config = ServerConfig {
        shell,
        sources: SourceConfig {
            provider_timeout: timeout,
        },
        ..ServerConfig::default()
    };
    Server::with_session(config, session)
}

fn list_documents(id: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": { "name": "list_documents", "arguments": {} } })
}

fn complete_document(id: i64) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "completion/complete",
            "params": { "ref": { "type": "ref/prompt", "name": "investigate_feature" },
                        "argument": { "name": "document", "value": "" } } })
}

#[tokio::test]
async fn requests_past_the_in_flight_cap_wait_and_every_one_is_answered_once() {
    let provider = GatedProvider::new(false);
    let shell = ShellConfig {
        max_in_flight: 3,
        ..ShellConfig::default()
    };
    let mut client = Client::start(server_over(&provider, shell, Duration::from_secs(5)));
    client.initialize("2025-11-25").await;
    for id in 0..12 {
        client.send(&list_documents(json!(id))).await;
    }
    client
        .send(&json!({ "jsonrpc": "2.0", "id": "ping", "method": "ping" }))
        .await;
    // Three calls hold the three slots at the gate and nine wait; input is read on, and the
    // ping, which needs no slot, is answered at once.
    assert_eq!(client.recv().await["id"], "ping");
    assert!(
        client
            .recv_within(Duration::from_millis(300))
            .await
            .is_none()
    );
    assert!(provider.most_running.load(Ordering::SeqCst) <= 3);
    provider.gate.open();
    let mut answered = Vec::new();
    for _ in 0..12 {
        answered.push(client.recv().await["id"].clone());
    }
    answered.sort_by_key(Value::to_string);
    answered.dedup();
    assert_eq!(answered.len(), 12, "each request answered exactly once");
    assert!(provider.most_running.load(Ordering::SeqCst) <= 3);
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn cancellations_are_read_while_every_slot_is_held() {
    let provider = GatedProvider::new(false);
    let shell = ShellConfig::default();
    let requests = shell.max_in_flight + 4;
    let mut client = Client::start(server_over(&provider, shell, Duration::from_secs(5)));
    client.initialize("2025-11-25").await;
    for n in 0..requests {
        client
            .send(&list_documents(json!(format!("held-{n}"))))
            .await;
    }
    for n in 0..requests {
        client
            .send(
                &json!({ "jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": { "requestId": format!("held-{n}") } }),
            )
            .await;
    }
    // Read and answered while every slot is still held at the gate.
    let pong = client.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    provider.gate.open();
    let rest = client.finish().await;
    assert!(
        rest.is_empty(),
        "cancelled requests are never answered: {rest:?}"
    );
}

#[tokio::test]
async fn requests_beyond_the_wait_list_are_answered_at_once_with_the_limits() {
    let provider = GatedProvider::new(false);
    let shell = ShellConfig {
        max_in_flight: 1,
        max_waiting: 1,
        ..ShellConfig::default()
    };
    let mut client = Client::start(server_over(&provider, shell, Duration::from_secs(5)));
    client.initialize("2025-11-25").await;
    for id in ["runs", "waits", "refused"] {
        client.send(&list_documents(json!(id))).await;
    }
    let refused = client.recv().await;
    assert_eq!(refused["id"], "refused");
    snapshot("busy", &refused);
    provider.gate.open();
    let mut answered: Vec<Value> = vec![client.recv().await["id"].clone()];
    answered.extend(client.finish().await.into_iter().map(|a| a["id"].clone()));
    assert_eq!(answered, [json!("runs"), json!("waits")]);
}

#[tokio::test]
async fn a_second_request_with_an_id_in_flight_is_rejected() {
    let provider = GatedProvider::new(false);
    let mut client = Client::start(server_over(
        &provider,
        ShellConfig::default(),
        Duration::from_secs(5),
    ));
    client.initialize("2025-11-25").await;
    client.send(&list_documents(json!("same"))).await;
    client
        .send(&json!({ "jsonrpc": "2.0", "id": "same", "method": "ping" }))
        .await;
    let rejected = client.recv().await;
    snapshot("duplicate_in_flight_id", &rejected);
    provider.gate.open();
    let first = client.recv().await;
    assert_eq!(first["id"], "same");
    assert_eq!(first["result"]["isError"], false);
    // Once answered, the id may be used again.
    let again = client.request("ping", json!({})).await;
    assert_eq!(again["result"], json!({}));
}

#[tokio::test]
async fn a_hung_provider_gets_no_new_calls_until_its_call_returns() {
    let provider = GatedProvider::new(true);
    let mut client = Client::start(server_over(
        &provider,
        ShellConfig::default(),
        Duration::from_millis(100),
    ));
    client.initialize("2025-11-25").await;
    let empty = json!({ "values": [], "total": 0, "hasMore": false });
    client.send(&complete_document(1)).await;
    assert_eq!(client.recv().await["result"]["completion"], empty);
    // The first call still hangs: completion answers empty without calling the provider.
    client.send(&complete_document(2)).await;
    assert_eq!(client.recv().await["result"]["completion"], empty);
    assert!(provider.calls.load(Ordering::SeqCst) <= 2);
    provider.gate.open();
    // Once the hung call returned, the provider is called again and answers.
    let mut answered = false;
    for id in 3..200 {
        client.send(&complete_document(id)).await;
        let answer = client.recv().await;
        if answer["result"]["completion"]["values"] == json!(["app"]) {
            answered = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(answered);
    assert!(provider.calls.load(Ordering::SeqCst) >= 3);
}

#[tokio::test]
async fn batch_members_past_the_cap_and_initialize_in_a_batch_are_rejected() {
    let shell = ShellConfig {
        max_batch_messages: 3,
        ..ShellConfig::default()
    };
    let mut client = Client::start(Server::new(ServerConfig {
        shell,
        ..ServerConfig::default()
    }));
    client.initialize("2025-03-26").await;
    let batch: Vec<Value> = std::iter::once(
        json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": { "protocolVersion": "2025-03-26", "capabilities": {},
                    "clientInfo": { "name": "t", "version": "0" } } }),
    )
    .chain((1..=4).map(|n| json!({ "jsonrpc": "2.0", "id": format!("p{n}"), "method": "ping" })))
    .collect();
    let mut line = Value::Array(batch).to_string();
    line.push('\n');
    client.send_raw(line.as_bytes()).await;
    let answer = client.recv().await;
    snapshot("batch_caps", &answer);
    // The connection keeps the version it negotiated first.
    assert_eq!(client.version, "2025-03-26");
}

#[tokio::test]
async fn an_answer_over_the_size_limit_is_an_error_that_says_how_to_page() {
    let shell = ShellConfig {
        max_response_bytes: 2_000,
        ..ShellConfig::default()
    };
    let mut client = Client::start(Server::new(ServerConfig {
        shell,
        ..ServerConfig::default()
    }));
    client.initialize("2025-11-25").await;
    let answer = client.request("tools/list", json!({})).await;
    // The catalog's size changes with every tool; the message's shape is what is pinned.
    let mut settings = crate::support::snapshots::settings();
    settings.add_filter(r"the answer is \d+ bytes", "the answer is [size] bytes");
    settings.bind(|| {
        insta::assert_json_snapshot!("mcp_execution__answer_too_large", answer);
    });
    let pong = client.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
}

#[test]
fn a_cancelled_call_never_commits() {
    let session = Arc::new(Session::new());
    let provider = GatedProvider::new(true);
    provider.gate.open();
    let declared: Arc<dyn Provider> = provider.clone();
    session.open_providers("gated", vec![declared]).unwrap();
    let tools = ToolBox::new(session.clone());
    let cancel = Cancel::new();
    cancel.cancel();

    // An observation cancelled before it is recorded appends no Evidence.
    let listed = tools
        .call_cancellable("list_documents", &serde_json::Map::new(), &cancel)
        .unwrap();
    assert!(listed.is_error());
    assert!(session.evidence_ids().is_empty());

    // A cancelled open never replaces the open binary.
    let this_test = std::env::current_exe().unwrap();
    let arguments = json!({ "path": this_test }).as_object().unwrap().clone();
    let opened = tools
        .call_cancellable("open_binary", &arguments, &cancel)
        .unwrap();
    assert!(opened.is_error());
    assert_eq!(session.label().as_deref(), Some("gated"));
    snapshot("cancelled_call", &opened.to_value());

    // Without the cancellation, the same calls commit.
    let listed = tools
        .call("list_documents", &serde_json::Map::new())
        .unwrap();
    assert!(!listed.is_error());
    assert_eq!(session.evidence_ids().len(), 1);
}
