//! The bounds of CONTRACT section 9 that a connection meets, over stdio and HTTP: at most
//! [`ShellConfig::max_batch_messages`] members of a batch run (the rest are refused with the
//! same `-32600`), an answer, alone or a batch's, stays within
//! [`ShellConfig::max_response_bytes`], and every row of the section's table names the tests
//! that hold it over each transport (or why it is a bound of the process, not of a transport).

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

#[tokio::test]
async fn a_single_answer_over_the_answer_bound_is_the_same_error_over_both_transports() {
    let shell = ShellConfig {
        max_response_bytes: 2_000,
        ..ShellConfig::default()
    };
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"});
    let stdio = over_stdio(shell.clone(), &request).await;
    let http = over_http(shell, &request).await;
    let stdio: Value = serde_json::from_str(&stdio).unwrap();
    let http: Value = serde_json::from_str(&http).unwrap();
    assert_eq!(stdio, http, "the same answer over both transports");
    assert_eq!(http["id"], 7);
    assert_eq!(http["error"]["code"], -32603, "{http}");
    let message = http["error"]["message"].as_str().unwrap();
    assert!(message.contains("the limit is 2000 bytes"), "{message}");
}

/// How the tests hold one row of CONTRACT section 9's table.
enum Held {
    /// A bound of one connection: the tests that hold it over stdio and over HTTP.
    Transports {
        stdio: &'static [&'static str],
        http: &'static [&'static str],
    },
    /// A bound of one connection that HTTP meets otherwise, as CONTRACT section 15 says.
    StdioOnly {
        stdio: &'static [&'static str],
        over_http: &'static str,
    },
    /// A bound of the process (its pools, files, ledgers, tasks), the same whatever the
    /// transport: the transports only reach it.
    Process,
}

/// Every row of the table, by its first cell.
const ROWS: &[(&str, Held)] = &[
    (
        "requests in flight per connection",
        Held::Transports {
            stdio: &["requests_past_the_in_flight_cap_wait_and_every_one_is_answered_once"],
            http: &[
                "beyond_the_in_flight_cap_a_request_is_answered_503_with_retry_after",
                "ping_is_answered_while_every_slot_is_busy",
            ],
        },
    ),
    (
        "requests waiting for a slot",
        Held::StdioOnly {
            stdio: &["requests_beyond_the_wait_list_are_answered_at_once_with_the_limits"],
            over_http: "busy error, never queued",
        },
    ),
    (
        "answers waiting for the client",
        Held::Transports {
            stdio: &["a_client_that_stops_reading_cannot_grow_the_server"],
            http: &["a_client_that_stops_reading_an_sse_answer_holds_only_its_own_request"],
        },
    ),
    (
        "one answer",
        Held::Transports {
            stdio: &["an_answer_over_the_size_limit_is_an_error_that_says_how_to_page"],
            http: &[
                "a_single_answer_over_the_answer_bound_is_the_same_error_over_both_transports",
                "a_batch_answer_stays_within_the_answer_bound_over_both_transports",
            ],
        },
    ),
    (
        "one input line",
        Held::Transports {
            stdio: &["line_over_the_maximum_is_rejected_and_skipped"],
            http: &["bad_bodies_methods_and_paths_get_their_status"],
        },
    ),
    (
        "one batch",
        Held::Transports {
            stdio: &["batch_members_past_the_cap_and_initialize_in_a_batch_are_rejected"],
            http: &[
                "past_the_batch_bound_both_transports_refuse_the_same_members_alike",
                "two_thousand_tools_list_in_one_http_batch_run_only_the_bound",
            ],
        },
    ),
    (
        "shutdown",
        Held::Transports {
            stdio: &[
                "sigterm_lets_stdio_requests_in_flight_finish_and_exits_0",
                "past_the_grace_sigint_answers_what_still_runs_and_exits_0",
            ],
            http: &[
                "sigterm_lets_http_requests_in_flight_finish_and_exits_0",
                "past_the_grace_http_answers_what_still_runs_and_exits_0",
            ],
        },
    ),
    ("threads", Held::Process),
    ("one tool result", Held::Process),
    ("the Evidence ledger", Held::Process),
    ("loading a file", Held::Process),
    ("files read", Held::Process),
    ("one inventory", Held::Process),
    ("kept inventory walks", Held::Process),
    ("adapter processes (`--provider`)", Held::Process),
    ("adapters' disk", Held::Process),
    ("tasks in flight per MCP session", Held::Process),
    ("tasks in flight in the server", Held::Process),
    ("tasks kept", Held::Process),
    ("task ttl", Held::Process),
    ("task poll interval", Held::Process),
    ("one stored task", Held::Process),
];

/// The first cells of the rows of CONTRACT section 9's table.
fn section_9_rows() -> Vec<String> {
    let contract = include_str!("../../../docs/CONTRACT.md");
    let section = contract
        .split("\n## ")
        .find(|section| section.starts_with("9. "))
        .expect("CONTRACT.md has a section 9");
    section
        .lines()
        .skip_while(|line| !line.starts_with("| resource"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .map(|line| line.split('|').nth(1).unwrap_or_default().trim().to_owned())
        .collect()
}

/// The test functions of the suite, by name.
fn suite_functions() -> std::collections::BTreeSet<String> {
    let suite = crate::root().join("tests/it");
    let mut files = Vec::new();
    crate::architecture::collect(&suite, &suite, &mut files);
    files
        .iter()
        .flat_map(|(_, text)| text.lines())
        .filter_map(|line| {
            let line = line.trim_start().trim_start_matches("async ");
            let rest = line.strip_prefix("fn ")?;
            Some(rest.split('(').next()?.to_owned())
        })
        .collect()
}

#[test]
fn every_row_of_section_9_says_how_each_transport_is_held() {
    let rows = section_9_rows();
    let classified: Vec<&str> = ROWS.iter().map(|(row, _)| *row).collect();
    assert_eq!(
        rows, classified,
        "every row of the table, in order, is classified here"
    );
    let functions = suite_functions();
    let mut missing = Vec::new();
    for (row, held) in ROWS {
        let named: Vec<&str> = match held {
            Held::Transports { stdio, http } => {
                assert!(!stdio.is_empty() && !http.is_empty(), "{row}");
                stdio.iter().chain(http.iter()).copied().collect()
            }
            Held::StdioOnly { stdio, over_http } => {
                assert!(!stdio.is_empty() && !over_http.is_empty(), "{row}");
                stdio.to_vec()
            }
            Held::Process => Vec::new(),
        };
        missing.extend(
            named
                .into_iter()
                .filter(|name| !functions.contains(*name))
                .map(|name| format!("{row}: {name}")),
        );
    }
    assert!(
        missing.is_empty(),
        "named tests that do not exist: {missing:#?}"
    );
    let contract = include_str!("../../../docs/CONTRACT.md");
    for (row, held) in ROWS {
        if let Held::StdioOnly { over_http, .. } = held {
            assert!(
                contract.contains(over_http),
                "{row}: CONTRACT.md says how HTTP meets it ({over_http:?})"
            );
        }
    }
}

/// Bytes of each message the flood tool logs.
const FLOOD_BYTES: usize = 256 * 1024;

/// Messages the flood tool logs before it answers (100 MiB, were nothing to hold it back).
const FLOOD_MESSAGES: usize = 400;

/// An integrator's tool that logs [`FLOOD_MESSAGES`] messages of [`FLOOD_BYTES`] on its
/// request's stream before answering, counting those sent, and stops when cancelled.
#[derive(Debug, Default)]
struct Flood {
    sent: std::sync::atomic::AtomicUsize,
}

impl rea::mcp::Extension for Flood {
    fn tools(&self) -> Vec<Value> {
        vec![
            json!({"name": "flood", "description": "Logs a flood", "inputSchema": {"type": "object"}}),
        ]
    }

    fn call_tool<'a>(
        &'a self,
        name: &'a str,
        _arguments: &'a serde_json::Map<String, Value>,
        context: &'a rea::mcp::ExtensionContext,
    ) -> rea::mcp::Handled<'a> {
        Box::pin(async move {
            if name != "flood" {
                return None;
            }
            let chunk = json!("x".repeat(FLOOD_BYTES));
            for _ in 0..FLOOD_MESSAGES {
                if context.is_cancelled() {
                    break;
                }
                context.log(rea::mcp::LogLevel::Info, chunk.clone()).await;
                self.sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
            Some(Ok(rea::mcp::Reply::Complete(json!({"content": []}))))
        })
    }
}

/// The count of `flood` once it has stopped moving for 500 ms (at most 20 s).
async fn settled(flood: &Flood) -> usize {
    use std::sync::atomic::Ordering::SeqCst;
    let mut last = flood.sent.load(SeqCst);
    for _ in 0..40 {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let now = flood.sent.load(SeqCst);
        if now == last {
            return now;
        }
        last = now;
    }
    last
}

/// HTTP's bound on the answers waiting for a client: a 2026 request whose messages come on an
/// SSE stream the client stops reading fills its own queue of `output_queue` (16) lines and
/// the socket's buffers, then waits there; the server keeps serving other requests, and
/// closing the stream cancels it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_an_sse_answer_holds_only_its_own_request() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let flood = Arc::new(Flood::default());
    let server = Server::new(ServerConfig::default()).with_extension(flood.clone());
    let http = HttpServer::start(server, HttpConfig::default()).await;
    let mut params = json!({"name": "flood", "arguments": {}});
    params["_meta"] = crate::support::http::envelope();
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params});
    let raw = crate::support::http::raw_request(
        "POST",
        &http.host(),
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "flood"),
        ],
        body.to_string().as_bytes(),
    );
    let mut stalled_client = tokio::net::TcpStream::connect(http.addr).await.unwrap();
    stalled_client.write_all(&raw).await.unwrap();
    let mut head = [0u8; 12];
    stalled_client.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    // From here on the client reads nothing more.
    let stalled = settled(&flood).await;
    // Its queue (16 lines), the line in hand, and what loopback's socket buffers took (at most
    // 16 MiB here) hold the rest back.
    let most = 16 + 2 + (16 << 20) / FLOOD_BYTES;
    assert!(
        stalled <= most,
        "{stalled} messages of {FLOOD_BYTES} bytes went out to a client that reads nothing (at most {most})"
    );
    for id in 2..6 {
        let listed = http.modern(id, "tools/list", json!({})).await;
        assert_eq!(listed.status, 200);
        assert!(
            listed.answer()["result"]["tools"].is_array(),
            "{:?}",
            listed.text()
        );
    }
    let held = settled(&flood).await;
    assert!(
        held <= most,
        "still held while others were served ({held} sent, at most {most})"
    );
    drop(stalled_client);
    let after = settled(&flood).await;
    assert!(
        after < FLOOD_MESSAGES,
        "closing the stream cancels the request ({after} of {FLOOD_MESSAGES} sent)"
    );
}
