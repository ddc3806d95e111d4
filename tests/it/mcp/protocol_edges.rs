//! Protocol edges: requests before `initialize`, ids read from lines that do not parse, and
//! the client's own responses checked as JSON-RPC responses.

use std::sync::Arc;

use proptest::prelude::*;
use rea::mcp::{Server, ServerConfig};
use rea::session::Session;
use serde_json::{Value, json};

use crate::support::Client;
use crate::support::fixtures::{Format, Spec, build};

fn snapshot(name: &str, value: &Value) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!(format!("mcp_protocol_edges__{name}"), value);
    });
}

/// Every method the server serves, with params that would succeed after `initialize`.
fn served_methods(binary: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("prompts/list", json!({})),
        (
            "prompts/get",
            json!({ "name": "trace_crash", "arguments": { "symptom": "x" } }),
        ),
        (
            "completion/complete",
            json!({ "ref": { "type": "ref/prompt", "name": "trace_crash" },
                    "argument": { "name": "procedure", "value": "" } }),
        ),
        ("tools/list", json!({})),
        (
            "tools/call",
            json!({ "name": "open_binary", "arguments": { "path": binary } }),
        ),
        (
            "tools/call",
            json!({ "name": "inventory_artifacts", "arguments": { "path": "/etc" } }),
        ),
    ]
}

#[tokio::test]
async fn only_ping_runs_before_initialize() {
    let session = Arc::new(Session::new());
    let mut client = Client::start(Server::with_session(
        ServerConfig::default(),
        session.clone(),
    ));
    for (method, params) in served_methods("/bin/ls") {
        let answer = client.request(method, params).await;
        assert_eq!(answer["error"]["code"], -32600, "{method}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(method) && message.contains("before initialize"),
            "{message}"
        );
    }
    // Nothing ran: no binary opened, nothing recorded.
    assert_eq!(session.label(), None);
    assert_eq!(session.evidence_count(), 0);
    let refused = client
        .request(
            "tools/call",
            json!({ "name": "close_binary", "arguments": {} }),
        )
        .await;
    snapshot("tools_call_before_initialize", &refused);
    let pong = client.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
    // A method that does not exist is still -32601, so clients can probe.
    let probe = client.request("server/discover", json!({})).await;
    assert_eq!(probe["error"]["code"], -32601);
    client.initialize("2025-11-25").await;
    let listed = client.request("tools/list", json!({})).await;
    assert!(listed["result"]["tools"].is_array());
}

async fn started() -> Client {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize("2025-11-25").await;
    client
}

/// Lines that do not parse whole but whose id can be read, each answered under that id.
fn broken_lines() -> Vec<(&'static str, Vec<u8>, Value)> {
    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"deep\",\"method\":\"ping\",\"params\":{{\"x\":{}{}}}}}\n",
        "[".repeat(200),
        "]".repeat(200)
    );
    vec![
        (
            "invalid_utf8_after_the_id",
            b"{\"jsonrpc\":\"2.0\",\"id\":41,\"method\":\"ping\",\"params\":{\"x\":\"\xff\xfe\"}}\n"
                .to_vec(),
            json!(41),
        ),
        (
            "unrepresentable_number",
            b"{\"jsonrpc\":\"2.0\",\"id\":-42,\"method\":\"ping\",\"params\":{\"x\":1e999}}\n"
                .to_vec(),
            json!(-42),
        ),
        ("nested_past_the_parser_limit", deep.into_bytes(), json!("deep")),
        (
            "id_after_the_broken_part",
            b"{\"params\":{\"x\":\"\xff\"},\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":\"late\"}\n"
                .to_vec(),
            json!("late"),
        ),
    ]
}

#[tokio::test]
async fn a_readable_id_is_echoed_whatever_else_on_the_line_is_broken() {
    let mut client = started().await;
    for (name, line, id) in broken_lines() {
        client.send_raw(&line).await;
        let answer = client.recv().await;
        assert_eq!(answer["id"], id, "{name}: {answer}");
        assert_eq!(answer["error"]["code"], -32700, "{name}: {answer}");
        snapshot(name, &answer);
    }
    // Lines whose id cannot be read still get a null id.
    for line in [
        &b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"p\xff\"}\n"[..],
        b"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"ping\"}\n",
        b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xff\"}]\n",
        b"{\"id\" 1}\n",
    ] {
        client.send_raw(line).await;
        let answer = client.recv().await;
        assert_eq!(answer["id"], Value::Null, "{answer}");
    }
    let pong = client.request("ping", json!({})).await;
    assert_eq!(pong["result"], json!({}));
}

proptest! {
    /// On every line the JSON parser reads as an object, the lexical id reader finds the same
    /// id (the check the `jsonrpc_line` fuzz target runs on every input).
    #[test]
    fn the_id_reader_agrees_with_the_parser(
        id in prop_oneof![
            any::<i64>().prop_map(Value::from),
            "[a-z\"\\\\{}\\[\\],: ]{0,12}".prop_map(Value::from),
            Just(json!(1.5)),
            Just(Value::Null),
            Just(json!({"id": 3})),
        ],
        before in proptest::collection::vec(("[a-z\"\\\\{} ]{0,6}", "[a-z\\[\\]{}\"]{0,8}"), 0..4),
        duplicate in proptest::option::of(any::<i32>()),
    ) {
        let mut object = serde_json::Map::new();
        for (key, text) in &before {
            object.insert(key.clone(), json!([text, {"k": text}]));
        }
        object.insert("id".to_owned(), id);
        let mut line = Value::Object(object).to_string();
        if let Some(again) = duplicate {
            line.insert_str(line.len() - 1, &format!(",\"i\\u0064\":{again}"));
        }
        rea::fuzzing::mcp::check_classification(line.as_bytes());
    }
}

/// Initializes a client that declares `roots` and returns the server's `roots/list` request.
async fn with_roots() -> (Client, Value) {
    let mut client = Client::start(Server::new(ServerConfig::default()));
    client.initialize_with_roots().await;
    let request = client.recv().await;
    assert_eq!(request["method"], "roots/list");
    (client, request)
}

#[tokio::test]
async fn malformed_roots_answers_are_dropped_never_answered_never_taken() {
    let allowed = tempfile::tempdir().unwrap();
    let path = allowed.path().join("app");
    std::fs::write(&path, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let root = json!({ "roots": [{ "uri": format!("file://{}", allowed.path().display()) }] });
    for malformed in [
        json!({ "jsonrpc": "2.0", "result": root, "error": { "code": 1, "message": "x" } }),
        json!({ "result": root }),
        json!({ "jsonrpc": "1.0", "result": root }),
        json!({ "jsonrpc": "2.0", "error": { "message": "no code" } }),
    ] {
        let (mut client, request) = with_roots().await;
        let mut reply = malformed.clone();
        reply["id"] = request["id"].clone();
        client.send(&reply).await;
        // Not answered (the next line is the ping's answer), and not taken as roots: nothing
        // may be opened, as before any answer (after a bounded wait for one; the client is
        // told why).
        let pong = client.request("ping", json!({})).await;
        assert_eq!(pong["result"], json!({}), "{malformed}");
        let (refused, told) = client
            .request_told(
                "tools/call",
                json!({ "name": "open_binary", "arguments": { "path": path } }),
            )
            .await;
        assert_eq!(told.len(), 1, "{malformed}: {told:?}");
        assert_eq!(refused["result"]["isError"], true, "{malformed}: {refused}");
        let text = refused["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("outside"), "{malformed}: {text}");
        assert!(client.finish().await.is_empty());
    }
}
