//! Invariant checks shared by the `jsonrpc_line` fuzz target and the regression test that
//! replays its saved inputs. Not part of the supported API.

use std::collections::HashMap;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use super::message::{Line, Message, RequestKey, classify_line};
use super::{Server, ServerConfig, ShellConfig};

/// Id of the request appended after the fuzz input; it must always be answered.
const SENTINEL_ID: &str = "rea-fuzz-sentinel";

/// Line bound used for fuzzing, small enough that the fuzzer reaches it.
const MAX_LINE_BYTES: usize = 64 * 1024;

/// Classifies `bytes` and checks the classification is consistent.
pub fn check_classification(bytes: &[u8]) {
    let line = classify_line(bytes);
    let messages = match &line {
        Line::Unparsable(error) => {
            assert!(matches!(error.code.code(), -32700));
            return;
        }
        Line::Single(message) => std::slice::from_ref(message),
        Line::Batch(messages) => messages.as_slice(),
    };
    for message in messages {
        match message {
            Message::Request(request) => {
                assert_eq!(RequestKey::of(&request.id).as_ref(), Some(&request.key));
            }
            Message::Invalid { id, error } => {
                assert!(id.is_null() || RequestKey::of(id).is_some());
                assert_eq!(error.code.code(), -32600);
            }
            Message::Notification(_) | Message::ClientResponse(_) => {}
        }
    }
}

/// Runs the whole stdio loop on `bytes` followed by a ping, and checks that every output line
/// is a JSON-RPC message or batch, that the server is still serving, and that each request
/// with a unique id (on its own line) got exactly one response.
pub fn check_server(bytes: &[u8]) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut input = bytes.to_vec();
    input.push(b'\n');
    input.extend_from_slice(
        json!({ "jsonrpc": "2.0", "id": SENTINEL_ID, "method": "ping" })
            .to_string()
            .as_bytes(),
    );
    input.push(b'\n');
    let config = ShellConfig {
        max_line_bytes: MAX_LINE_BYTES,
        ..ShellConfig::default()
    };
    let output = runtime.block_on(async move {
        let (server_out, client_out) = tokio::io::duplex(1 << 16);
        let server = Server::new(ServerConfig {
            shell: config,
            ..ServerConfig::default()
        });
        let serve = server.serve(&input[..], server_out);
        let collect = async move {
            let mut lines = tokio::io::BufReader::new(client_out).lines();
            let mut all = Vec::new();
            while let Ok(Some(line)) = lines.next_line().await {
                all.push(line);
            }
            all
        };
        let (served, lines) = tokio::join!(serve, collect);
        served.expect("serving in-memory input cannot fail");
        lines
    });
    let mut answers: HashMap<String, usize> = HashMap::new();
    for line in &output {
        let message: Value = serde_json::from_str(line).expect("every output line is JSON");
        let singles = match &message {
            Value::Array(items) => {
                assert!(!items.is_empty());
                items.clone()
            }
            Value::Object(_) => vec![message.clone()],
            other => panic!("output line is neither a message nor a batch: {other}"),
        };
        for single in singles {
            assert_eq!(single["jsonrpc"], "2.0");
            if single.get("method").is_none() {
                *answers.entry(single["id"].to_string()).or_default() += 1;
            }
        }
    }
    let sentinel_answers = answers.get(&json!(SENTINEL_ID).to_string()).copied();
    assert!(sentinel_answers.is_some_and(|n| n >= 1), "still serving");
    let cancels = bytes.windows(9).any(|w| w == b"cancelled");
    let mut requests: HashMap<String, usize> = HashMap::new();
    for raw in bytes.split(|&b| b == b'\n') {
        if raw.len() > MAX_LINE_BYTES {
            continue;
        }
        if let Line::Single(Message::Request(request)) = classify_line(raw) {
            *requests.entry(request.id.to_string()).or_default() += 1;
        }
    }
    if !cancels {
        for id in requests
            .iter()
            .filter(|(_, count)| **count == 1)
            .map(|(id, _)| id)
        {
            assert_eq!(
                answers.get(id),
                Some(&1),
                "request {id} answered exactly once"
            );
        }
    }
}
