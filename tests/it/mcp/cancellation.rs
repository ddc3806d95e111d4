//! `notifications/cancelled` aborts the named in-flight request: no response, others unharmed.

use std::sync::Arc;
use std::time::Duration;

use crate::support::Client;
use crate::support::fixtures::fake::{Behaviour, app_and_lib};
use rea::mcp::{Server, ServerConfig};
use rea::session::{Provider, Session, SourceConfig};
use serde_json::json;

#[tokio::test]
async fn cancelled_request_gets_no_response_and_the_server_keeps_serving() {
    let session = Arc::new(Session::new());
    let slow: Arc<dyn Provider> =
        Arc::new(app_and_lib("slow").behaving(Behaviour::Hang(Duration::from_millis(800))));
    session.open_providers("slow", vec![slow]).unwrap();
    let config = ServerConfig {
        sources: SourceConfig {
            provider_timeout: Duration::from_secs(10),
        },
        ..ServerConfig::default()
    };
    let mut client = Client::start(Server::with_session(config, session));
    client.initialize("2025-11-25").await;

    client
        .send(&json!({
            "jsonrpc": "2.0", "id": "slow-1", "method": "completion/complete",
            "params": {
                "ref": { "type": "ref/prompt", "name": "trace_crash" },
                "argument": { "name": "procedure", "value": "" }
            }
        }))
        .await;
    client
        .send(&json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": "slow-1", "reason": "user gave up" }
        }))
        .await;
    // Cancelling an id that is not in flight is ignored.
    client
        .send(&json!({
            "jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": { "requestId": 424242 }
        }))
        .await;
    let pong = client.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    // Long after the provider would have answered, nothing arrives for the cancelled id.
    assert!(
        client
            .recv_within(Duration::from_millis(2500))
            .await
            .is_none()
    );
    let rest = client.finish().await;
    assert!(rest.is_empty(), "no late response: {rest:?}");
}

#[tokio::test]
async fn end_of_input_finishes_in_flight_work_then_exits() {
    let session = Arc::new(Session::new());
    let slow: Arc<dyn Provider> =
        Arc::new(app_and_lib("slow").behaving(Behaviour::Hang(Duration::from_millis(300))));
    session.open_providers("slow", vec![slow]).unwrap();
    let mut client = Client::start(Server::with_session(ServerConfig::default(), session));
    client.initialize("2025-11-25").await;
    client
        .send(&json!({
            "jsonrpc": "2.0", "id": 99, "method": "completion/complete",
            "params": {
                "ref": { "type": "ref/prompt", "name": "investigate_feature" },
                "argument": { "name": "document", "value": "a" }
            }
        }))
        .await;
    let rest = client.finish().await;
    assert_eq!(
        rest.len(),
        1,
        "the in-flight request is answered before exit"
    );
    assert_eq!(rest[0]["id"], 99);
    assert_eq!(rest[0]["result"]["completion"]["values"], json!(["app"]));
}

#[tokio::test]
async fn a_state_change_is_answered_exactly_when_it_committed() {
    let session = Arc::new(Session::new());
    let server = Server::with_session(ServerConfig::default(), session.clone());
    let mut client = Client::start(server);
    client.initialize("2025-11-25").await;
    let calls = 200;
    for n in 0..calls {
        client
            .send(&json!({
                "jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": { "name": "register_unknown", "arguments": { "question": format!("q{n}") } }
            }))
            .await;
        client
            .send(&json!({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": { "requestId": n }
            }))
            .await;
    }
    let answers = client.finish().await;
    let registered = session.unresolved_unknown_ids().len();
    for answer in &answers {
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    assert_eq!(
        answers.len(),
        registered,
        "every registration that committed is answered, and only those"
    );
}
