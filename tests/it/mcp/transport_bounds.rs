//! The bounds of CONTRACT section 9 that a batch meets, held alike over stdio and HTTP: at
//! most [`ShellConfig::max_batch_messages`] members run (the rest are refused with the same
//! `-32600`), and the batch's answer stays within [`ShellConfig::max_response_bytes`].

use std::sync::Arc;

use rea::mcp::http::HttpConfig;
use rea::mcp::{Server, ServerConfig, ShellConfig};
use rea::session::SessionStore;
use serde_json::{Value, json};

use crate::support::Client;
use crate::support::http::HttpServer;

fn server(shell: ShellConfig) -> Server {
    let config = ServerConfig {
        shell,
        ..ServerConfig::default()
    };
    let store = Arc::new(SessionStore::new(config.sessions.clone()));
    Server::with_store(config, store, None)
}

fn initialize_2025_03_26(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {},
        "clientInfo": {"name": "bounds-tests", "version": "0"}}})
}

/// A batch of `count` requests of `method`, ids 1..=count.
fn batch_of(method: &str, count: u64) -> Value {
    Value::Array(
        (1..=count)
            .map(|n| json!({"jsonrpc": "2.0", "id": 1000 + n, "method": method}))
            .collect(),
    )
}

/// The answer to `batch` over stdio, as one line's text.
async fn over_stdio(shell: ShellConfig, batch: &Value) -> String {
    let mut client = Client::start(server(shell));
    client.initialize("2025-03-26").await;
    let mut line = batch.to_string();
    line.push('\n');
    client.send_raw(line.as_bytes()).await;
    client.recv().await.to_string()
}

/// The answer to `batch` in a 2025-03-26 MCP session over HTTP, as the body's text.
async fn over_http(shell: ShellConfig, batch: &Value) -> String {
    let http = HttpServer::start(server(shell), HttpConfig::default()).await;
    let initialized = http.post(&[], &initialize_2025_03_26(0)).await;
    assert_eq!(initialized.status, 200, "{initialized:?}");
    let session = initialized.header("mcp-session-id").unwrap().to_owned();
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-03-26"),
    ];
    let ready = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    assert_eq!(http.post(&headers, &ready).await.status, 202);
    let reply = http.post(&headers, batch).await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert!(
        reply
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
    );
    reply.text()
}

/// How many members of a batch answer ran (a result) and which refusals came back.
fn tally(answer: &Value) -> (usize, Vec<String>) {
    let members = answer.as_array().expect("a batch answer is an array");
    let results = members.iter().filter(|m| m.get("result").is_some()).count();
    let errors = members
        .iter()
        .filter_map(|m| m["error"]["message"].as_str())
        .map(str::to_owned)
        .collect();
    (results, errors)
}

#[tokio::test]
async fn past_the_batch_bound_both_transports_refuse_the_same_members_alike() {
    let limit = ShellConfig::DEFAULT_MAX_BATCH_MESSAGES as u64;
    let batch = batch_of("ping", limit + 8);
    let stdio: Value = serde_json::from_str(&over_stdio(ShellConfig::default(), &batch).await)
        .expect("stdio answers JSON");
    let http: Value = serde_json::from_str(&over_http(ShellConfig::default(), &batch).await)
        .expect("HTTP answers JSON");
    assert_eq!(stdio, http, "the same answer over both transports");
    let (results, errors) = tally(&http);
    assert_eq!(results as u64, limit);
    assert_eq!(errors.len(), 8);
    for (member, id) in http.as_array().unwrap()[limit as usize..]
        .iter()
        .zip(1000 + limit + 1..)
    {
        assert_eq!(member["id"], id);
        assert_eq!(member["error"]["code"], -32600);
    }
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!("mcp_transport_bounds__batch_too_long", errors[0]);
    });
}

/// The attack of issue 26: 2,000 `tools/list` in one HTTP batch ran in full (a 155 MB
/// answer, 1.47 GB peak). Now 32 run and the answer stays within 4 MiB.
#[tokio::test]
async fn two_thousand_tools_list_in_one_http_batch_run_only_the_bound() {
    let batch = batch_of("tools/list", 2_000);
    let started = std::time::Instant::now();
    let text = over_http(ShellConfig::default(), &batch).await;
    eprintln!(
        "2,000 tools/list over HTTP: {} bytes in {:?}",
        text.len(),
        started.elapsed()
    );
    assert!(
        text.len() <= ShellConfig::DEFAULT_MAX_RESPONSE_BYTES,
        "{} bytes",
        text.len()
    );
    let answer: Value = serde_json::from_str(&text).unwrap();
    let (results, errors) = tally(&answer);
    assert_eq!(results, ShellConfig::DEFAULT_MAX_BATCH_MESSAGES);
    assert_eq!(
        errors.len(),
        2_000 - ShellConfig::DEFAULT_MAX_BATCH_MESSAGES
    );
}

#[tokio::test]
async fn a_batch_answer_stays_within_the_answer_bound_over_both_transports() {
    // Each tools/list answer is tens of kilobytes: a bound of three and a half of them lets
    // some run and refuses the rest with the size error, never passing the bound.
    let one = over_stdio(ShellConfig::default(), &batch_of("tools/list", 1)).await;
    let limit = one.len() * 7 / 2;
    let shell = ShellConfig {
        max_response_bytes: limit,
        ..ShellConfig::default()
    };
    let batch = batch_of("tools/list", 10);
    let stdio = over_stdio(shell.clone(), &batch).await;
    let http = over_http(shell, &batch).await;
    for (transport, text) in [("stdio", &stdio), ("HTTP", &http)] {
        assert!(text.len() <= limit, "{transport}: {} > {limit}", text.len());
        let answer: Value = serde_json::from_str(text).unwrap();
        let (results, errors) = tally(&answer);
        assert_eq!(answer.as_array().unwrap().len(), 10, "{transport}");
        assert!((1..=3).contains(&results), "{transport}: {results} ran");
        assert!(
            errors
                .iter()
                .all(|e| e.contains(&format!("the limit is {limit} bytes"))),
            "{transport}: {errors:?}"
        );
    }
    let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap();
    assert_eq!(tally(&parse(&stdio)).0, tally(&parse(&http)).0);
}
