//! Bad input on the wire: each case answered exactly as pinned, and the server keeps serving.

use crate::support::Client;
use rea::mcp::{Server, ServerConfig, ShellConfig};
use serde_json::{Value, json};

fn snapshot(name: &str, value: &Value) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!(format!("mcp_bad_input__{name}"), value);
    });
}

async fn started() -> Client {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize("2025-11-25").await;
    client
}

/// After any bad input the server still answers a request, and nothing else was emitted.
async fn still_serving(client: &mut Client) {
    let pong = client.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
}

async fn answer_to_raw(client: &mut Client, bytes: &[u8]) -> Value {
    client.send_raw(bytes).await;
    client.recv().await
}

#[tokio::test]
async fn invalid_json_is_a_parse_error() {
    let mut client = started().await;
    let answer = answer_to_raw(&mut client, b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n").await;
    snapshot("invalid_json", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn invalid_utf8_is_a_parse_error() {
    let mut client = started().await;
    let answer = answer_to_raw(
        &mut client,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}\n",
    )
    .await;
    snapshot("invalid_utf8", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn lone_surrogate_escape_is_answered_under_the_readable_id() {
    let mut client = started().await;
    let answer = answer_to_raw(
        &mut client,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\ud800\"}\n",
    )
    .await;
    snapshot("lone_surrogate", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn line_over_the_maximum_is_rejected_and_skipped() {
    let mut client = Client::start(Server::new(ServerConfig {
        shell: ShellConfig {
            max_line_bytes: 1024,
            ..ShellConfig::default()
        },
        ..ServerConfig::default()
    }));
    client.initialize("2025-11-25").await;
    let mut line =
        b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"params\":{\"pad\":\"".to_vec();
    line.extend(std::iter::repeat_n(b'x', 5000));
    line.extend_from_slice(b"\"}}\n");
    let answer = answer_to_raw(&mut client, &line).await;
    snapshot("line_too_long", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn batch_is_rejected_outside_2025_03_26() {
    let mut client = started().await;
    let batch = json!([{ "jsonrpc": "2.0", "id": 1, "method": "ping" }]);
    let answer = answer_to_raw(&mut client, format!("{batch}\n").as_bytes()).await;
    snapshot("batch_rejected", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn batch_is_answered_in_order_under_2025_03_26() {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize("2025-03-26").await;
    let batch = json!([
        { "jsonrpc": "2.0", "id": "a", "method": "ping" },
        { "jsonrpc": "2.0", "method": "notifications/progress", "params": {} },
        7,
        { "jsonrpc": "2.0", "id": -3, "method": "no/such/method" }
    ]);
    let answer = answer_to_raw(&mut client, format!("{batch}\n").as_bytes()).await;
    snapshot("batch_accepted", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn empty_batch_is_an_invalid_request() {
    let mut client = started().await;
    let answer = answer_to_raw(&mut client, b"[]\n").await;
    snapshot("empty_batch", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn non_object_is_an_invalid_request() {
    let mut client = started().await;
    let answer = answer_to_raw(&mut client, b"\"ping\"\n").await;
    snapshot("non_object", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn missing_jsonrpc_is_answered_with_the_id() {
    let mut client = started().await;
    let answer = answer_to_raw(&mut client, b"{\"id\":4,\"method\":\"ping\"}\n").await;
    snapshot("missing_jsonrpc", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn wrong_jsonrpc_version_is_an_invalid_request() {
    let mut client = started().await;
    let answer = answer_to_raw(
        &mut client,
        b"{\"jsonrpc\":\"1.0\",\"id\":4,\"method\":\"ping\"}\n",
    )
    .await;
    snapshot("wrong_jsonrpc", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn missing_method_is_an_invalid_request() {
    let mut client = started().await;
    let answer = answer_to_raw(&mut client, b"{\"jsonrpc\":\"2.0\",\"id\":5}\n").await;
    snapshot("missing_method", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn non_string_method_is_an_invalid_request() {
    let mut client = started().await;
    let answer = answer_to_raw(
        &mut client,
        b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":42}\n",
    )
    .await;
    snapshot("non_string_method", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn fractional_id_is_an_invalid_request() {
    let mut client = started().await;
    let answer = answer_to_raw(
        &mut client,
        b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}\n",
    )
    .await;
    snapshot("fractional_id", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn null_id_is_an_invalid_request() {
    let mut client = started().await;
    let answer = answer_to_raw(
        &mut client,
        b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}\n",
    )
    .await;
    snapshot("null_id", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn object_id_is_an_invalid_request() {
    let mut client = started().await;
    let answer = answer_to_raw(
        &mut client,
        b"{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}\n",
    )
    .await;
    snapshot("object_id", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn negative_and_string_ids_are_echoed_verbatim() {
    let mut client = started().await;
    for id in [
        json!(-1),
        json!(-9_007_199_254_740_993_i64),
        json!("req-é-1"),
        json!(""),
        json!(u64::MAX),
    ] {
        client
            .send(&json!({ "jsonrpc": "2.0", "id": id, "method": "ping" }))
            .await;
        let answer = client.recv().await;
        assert_eq!(answer["id"], id);
        assert_eq!(answer["result"], json!({}));
    }
}

#[tokio::test]
async fn unknown_method_is_method_not_found() {
    let mut client = started().await;
    let answer = client.request("resources/subscribe", json!({})).await;
    snapshot("unknown_method", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn server_discover_before_initialize_is_method_not_found_at_once() {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    let answer = client.request("server/discover", json!({})).await;
    snapshot("server_discover", &answer);
    client.initialize("2025-06-18").await;
    still_serving(&mut client).await;
}

#[tokio::test]
async fn unsolicited_client_response_is_dropped() {
    let mut client = started().await;
    client
        .send(&json!({ "jsonrpc": "2.0", "id": 77, "result": {} }))
        .await;
    client
        .send(&json!({ "jsonrpc": "2.0", "id": 78, "error": { "code": 1, "message": "x" } }))
        .await;
    still_serving(&mut client).await;
}

#[tokio::test]
async fn unknown_notification_gets_no_answer() {
    let mut client = started().await;
    client
        .send(&json!({ "jsonrpc": "2.0", "method": "notifications/whatever" }))
        .await;
    still_serving(&mut client).await;
}

#[tokio::test]
async fn non_object_params_are_invalid_params() {
    let mut client = started().await;
    let answer = client.request("prompts/list", json!([1, 2])).await;
    snapshot("array_params", &answer);
    still_serving(&mut client).await;
}

#[tokio::test]
async fn second_initialize_is_rejected() {
    let mut client = started().await;
    let answer = client
        .request("initialize", json!({ "protocolVersion": "2024-11-05" }))
        .await;
    snapshot("second_initialize", &answer);
    still_serving(&mut client).await;
}
