//! The MCP shell's invariants: checks shared by the `jsonrpc_line` and `server_session` fuzz
//! targets and the tests that replay their saved inputs. Every check panics when an invariant
//! breaks.

use std::collections::HashMap;

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::base::process_dirs;
use crate::mcp::era::{self, Envelope, Era, LogLevel, ModernMethod};
use crate::mcp::message::{Line, Message, Request, RequestKey, classify_line, readable_id};
use crate::mcp::{Server, ServerConfig, ShellConfig};

/// Id of the request appended after the fuzz input; it must always be answered.
const SENTINEL_ID: &str = "rea-fuzz-sentinel";

/// Line bound used for fuzzing, small enough that the fuzzer reaches it.
const MAX_LINE_BYTES: usize = 64 * 1024;

/// Most requests one input sends the server: twice [`ShellConfig::DEFAULT_MAX_IN_FLIGHT`], so
/// a session can still fill the in-flight bound and go past it. Each request costs the whole
/// server's work for it (about a tenth of a millisecond under the fuzzer's instrumentation),
/// so an uncapped input of a few KiB, hundreds of requests, ran under a thousand inputs a
/// second; requests past the bound reach nothing new.
pub const MAX_REQUESTS: usize = 2 * ShellConfig::DEFAULT_MAX_IN_FLIGHT;

/// The part of `bytes` [`check_server`] serves: its first [`MAX_REQUESTS`] lines.
fn served_lines(bytes: &[u8]) -> &[u8] {
    match bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(MAX_REQUESTS - 1)
    {
        Some((at, _)) => &bytes[..at],
        None => bytes,
    }
}

/// Classifies `bytes` and checks the classification is consistent, and that the lexical id
/// reader agrees with the JSON parser on every line the parser reads as an object.
pub fn check_classification(bytes: &[u8]) {
    if let Ok(Value::Object(object)) = serde_json::from_slice::<Value>(bytes) {
        let parsed = object.get("id").filter(|id| RequestKey::of(id).is_some());
        assert_eq!(
            readable_id(bytes).as_ref(),
            parsed,
            "the id reader disagrees"
        );
    }
    let line = classify_line(bytes);
    let messages = match &line {
        Line::Unparsable { id, error } => {
            assert!(matches!(error.code().code(), -32700));
            assert!(id.is_null() || RequestKey::of(id).is_some());
            return;
        }
        Line::Single(message) => std::slice::from_ref(message),
        Line::Batch(messages) => messages.as_slice(),
    };
    for message in messages {
        match message {
            Message::Request(request) => {
                assert_eq!(RequestKey::of(&request.id).as_ref(), Some(&request.key));
                check_era(request);
            }
            Message::Invalid { id, error } => {
                assert!(id.is_null() || RequestKey::of(id).is_some());
                assert_eq!(error.code().code(), -32600);
            }
            Message::Notification(_)
            | Message::ClientResponse(_)
            | Message::MalformedResponse { .. } => {}
        }
    }
}

/// The era of a request and the check of its 2026 envelope agree with what its `_meta`
/// holds: modern exactly when an envelope key is present; accepted exactly when the version is
/// 2026-07-28, the capabilities an object and a level (if any) one of the eight; refused with
/// `-32022` (naming every supported version, newest first, and the requested one cut) exactly
/// when the version is another string, else with `-32602`.
fn check_era(request: &Request) {
    let meta = request
        .params
        .as_ref()
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object);
    let era = era::classify(request.params.as_ref());
    let claims = meta.is_some_and(|meta| {
        [
            era::PROTOCOL_VERSION_KEY,
            era::CLIENT_CAPABILITIES_KEY,
            era::CLIENT_INFO_KEY,
            era::LOG_LEVEL_KEY,
        ]
        .iter()
        .any(|key| meta.contains_key(*key))
    });
    assert_eq!(era == Era::Modern, claims, "era of {request:?}");
    let _ = ModernMethod::of(
        &request.method,
        request.params.as_ref(),
        crate::mcp::protocol::Offer {
            tools: true,
            subscribe: false,
        },
    );
    if era == Era::Legacy {
        return;
    }
    let meta = meta.expect("a modern request has _meta");
    let version = meta.get(era::PROTOCOL_VERSION_KEY);
    let valid = version.and_then(Value::as_str) == Some(era::MODERN_VERSION)
        && meta
            .get(era::CLIENT_CAPABILITIES_KEY)
            .is_some_and(Value::is_object)
        && meta
            .get(era::LOG_LEVEL_KEY)
            .is_none_or(|level| level.as_str().and_then(LogLevel::parse).is_some());
    match Envelope::check(request.params.as_ref()) {
        Ok(_) => assert!(valid, "accepted {request:?}"),
        Err(error) => {
            assert!(!valid, "refused {request:?}");
            let other_version = version
                .and_then(Value::as_str)
                .is_some_and(|v| v != era::MODERN_VERSION);
            let object = error.to_object();
            if other_version {
                assert_eq!(object["code"], -32022);
                assert_eq!(object["data"]["supported"][0], era::MODERN_VERSION);
                let requested = object["data"]["requested"].as_str().expect("a string");
                assert!(requested.chars().count() <= crate::text::QUOTED_CHARS + 3);
            } else {
                assert_eq!(object["code"], -32602);
                assert!(object.get("data").is_none());
            }
        }
    }
}

/// The id a message is answered under, when it must be answered under its own id.
fn answered_id(message: Message) -> Option<Value> {
    match message {
        Message::Request(request) => Some(request.id),
        Message::Invalid { id, .. } if !id.is_null() => Some(id),
        _ => None,
    }
}

/// Runs the whole stdio loop on the first [`MAX_REQUESTS`] lines of `bytes` followed by a
/// ping, and checks that every output line is a JSON-RPC message or batch, that the server is
/// still serving, and that each request with a unique id (on its own line) got exactly one
/// response.
pub fn check_server(bytes: &[u8]) {
    let bytes = served_lines(bytes);
    let mut input = bytes.to_vec();
    input.push(b'\n');
    input.extend_from_slice(
        json!({ "jsonrpc": "2.0", "id": SENTINEL_ID, "method": "ping" })
            .to_string()
            .as_bytes(),
    );
    input.push(b'\n');
    let output = serve_in_memory(input);
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
    // Ids of requests, on their own line or inside a batch (an invalid batch member with a
    // readable id is answered under it too), counted over the whole input. Only an id sent once,
    // on its own line, must have exactly one answer: a batch may be refused as a whole (before
    // `initialize`, or under another protocol version) with one answer under a null id.
    let mut requests: HashMap<String, usize> = HashMap::new();
    let mut batched = std::collections::HashSet::new();
    for raw in bytes.split(|&b| b == b'\n') {
        if raw.len() > MAX_LINE_BYTES {
            continue;
        }
        // An unparsable line whose id could be read is answered under that id.
        let (ids, in_batch): (Vec<Value>, bool) = match classify_line(raw) {
            Line::Single(message) => (answered_id(message).into_iter().collect(), false),
            Line::Batch(messages) => (messages.into_iter().filter_map(answered_id).collect(), true),
            Line::Unparsable { id, .. } => (
                Some(id).filter(|id| !id.is_null()).into_iter().collect(),
                false,
            ),
        };
        for id in ids {
            if in_batch {
                batched.insert(id.to_string());
            }
            *requests.entry(id.to_string()).or_default() += 1;
        }
    }
    if !cancels {
        for id in requests
            .iter()
            .filter(|(id, count)| **count == 1 && !batched.contains(*id))
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

/// What one step of [`check_session`] sends.
enum Step {
    /// A request (with a fresh id, or reusing an earlier one).
    Request { id: u64, line: String },
    /// `notifications/cancelled` for an earlier id.
    Cancel(u64),
    /// A line that is no request.
    Junk(Vec<u8>),
}

/// Decodes `bytes` into at most [`MAX_REQUESTS`] steps: each step takes two bytes (what, and
/// a parameter).
fn steps(bytes: &[u8]) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut next_id = 0u64;
    for pair in bytes.chunks(2).take(MAX_REQUESTS) {
        let (what, parameter) = (pair[0], pair.get(1).copied().unwrap_or(0));
        let earlier = |next_id: u64| u64::from(parameter) % next_id.max(1);
        let fresh = |next_id: &mut u64| {
            *next_id += 1;
            *next_id - 1
        };
        let prefix: String =
            ["", "ev-", "ev-0000", "x", "\\u00e9"][usize::from(parameter) % 5].to_owned();
        // One request line: `members` follow the id (the method and any params).
        let request = |id: u64, members: String| Step::Request {
            id,
            line: format!(r#"{{"jsonrpc":"2.0","id":{id},{members}}}"#),
        };
        let step = match what % 10 {
            0 => Step::Cancel(earlier(next_id)),
            1 => request(fresh(&mut next_id), r#""method":"ping""#.to_owned()),
            2 => request(
                fresh(&mut next_id),
                format!(
                    r#""method":"completion/complete","params":{{"ref":{{"type":"ref/prompt","name":"verify_reconstruction"}},"argument":{{"name":"evidence","value":"{prefix}"}}}}"#
                ),
            ),
            3 => request(
                fresh(&mut next_id),
                format!(
                    r#""method":"prompts/get","params":{{"name":"trace_crash","arguments":{{"symptom":"{prefix}"}}}}"#
                ),
            ),
            4 => {
                let tool = [
                    "list_evidence",
                    "list_unknowns",
                    "list_providers",
                    "open_binary",
                ][usize::from(parameter) % 4];
                request(
                    fresh(&mut next_id),
                    format!(
                        r#""method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}"#
                    ),
                )
            }
            5 => {
                let path = ["/dev/stdin", "/proc/self/fd/1", "/", "/proc/kmsg"]
                    [usize::from(parameter) % 4];
                request(
                    fresh(&mut next_id),
                    format!(
                        r#""method":"tools/call","params":{{"name":"open_binary","arguments":{{"path":"{path}"}}}}"#
                    ),
                )
            }
            // A second request with an id that may still be in flight.
            6 => request(earlier(next_id), r#""method":"ping""#.to_owned()),
            7 => request(fresh(&mut next_id), r#""method":"no/such""#.to_owned()),
            // A 2026 request: a valid envelope or a broken one, on a method both eras share,
            // a 2026-only one (a listen stream stays open until cancelled or the end), or one
            // 2026 removed.
            8 => {
                let method = [
                    "server/discover",
                    "prompts/list",
                    "subscriptions/listen",
                    "ping",
                    "completion/complete",
                ][usize::from(parameter) % 5];
                let version = ["2026-07-28", "2025-11-25", "x"][usize::from(parameter / 5) % 3];
                let level = [
                    "",
                    r#","io.modelcontextprotocol/logLevel":"debug""#,
                    r#","io.modelcontextprotocol/logLevel":"loud""#,
                ][usize::from(parameter / 15) % 3];
                request(
                    fresh(&mut next_id),
                    format!(
                        r#""method":"{method}","params":{{"notifications":{{"promptsListChanged":true}},"ref":{{"type":"ref/prompt","name":"trace_crash"}},"argument":{{"name":"symptom","value":"{prefix}"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"{version}","io.modelcontextprotocol/clientCapabilities":{{}}{level}}}}}"#
                    ),
                )
            }
            _ => Step::Junk(vec![parameter; usize::from(parameter % 4) + 1]),
        };
        steps.push(step);
    }
    steps
}

/// Drives a server with requests, cancellations, duplicate ids and junk decoded from `bytes`,
/// then end of input, and checks: every output line is JSON, no id is answered more often than
/// it was sent, and every request that was neither cancelled nor sent with a repeated id is
/// answered exactly once.
pub fn check_session(bytes: &[u8]) {
    let steps = steps(bytes);
    let mut input = String::from(
        r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#,
    );
    input.push_str("\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
    let mut sent: HashMap<u64, usize> = HashMap::new();
    let mut cancelled = std::collections::HashSet::new();
    for step in &steps {
        match step {
            Step::Request { id, line } => {
                *sent.entry(*id).or_default() += 1;
                input.push_str(line);
            }
            Step::Cancel(id) => {
                cancelled.insert(*id);
                input.push_str(&format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
                ));
            }
            Step::Junk(bytes) => input.push_str(&String::from_utf8_lossy(bytes).replace('\n', " ")),
        }
        input.push('\n');
    }
    let output = serve_in_memory(input.into_bytes());
    let mut answers: HashMap<String, usize> = HashMap::new();
    for line in &output {
        let message: Value = serde_json::from_str(line).expect("every output line is JSON");
        if message.get("method").is_none() {
            *answers.entry(message["id"].to_string()).or_default() += 1;
        }
    }
    assert_eq!(
        answers.get("\"init\""),
        Some(&1),
        "initialize answered once"
    );
    for (id, times) in &sent {
        let answered = answers.get(&id.to_string()).copied().unwrap_or(0);
        assert!(
            answered <= *times,
            "request {id} sent {times} times, answered {answered}"
        );
        if *times == 1 && !cancelled.contains(id) {
            assert_eq!(answered, 1, "request {id} answered exactly once");
        }
    }
}

/// The fuzzing server: one per process (building one per input would dominate the run time),
/// confined to an empty directory so no input reaches the file system, with short bounds.
fn fuzz_server() -> &'static Server {
    static SERVER: std::sync::OnceLock<Server> = std::sync::OnceLock::new();
    SERVER.get_or_init(|| {
        // The folder outlives every input, so it is only removed by the next process's sweep.
        const PREFIX: &str = "rea-fuzz-empty-";
        process_dirs::remove_stale(
            |name| process_dirs::is_stale(name, PREFIX),
            "the fuzzing server's empty folder",
        );
        let session = std::sync::Arc::new(crate::session::Session::new());
        let empty = process_dirs::create(PREFIX).expect("a private empty folder to confine to");
        let confinement = crate::base::files::Confinement::to_roots([&empty])
            .expect("confinement to an empty folder");
        session.set_confinement(confinement);
        Server::with_session(
            ServerConfig {
                shell: ShellConfig {
                    max_line_bytes: MAX_LINE_BYTES,
                    shutdown_grace: std::time::Duration::from_secs(2),
                    ..ShellConfig::default()
                },
                sources: crate::session::SourceConfig {
                    provider_timeout: std::time::Duration::from_millis(100),
                },
                sessions: crate::session::StoreConfig::default(),
            },
            session,
        )
    })
}

/// Serves `input` on the fuzzing server over in-memory pipes and returns the output lines.
fn serve_in_memory(input: Vec<u8>) -> Vec<String> {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
    }
    RUNTIME.with(|runtime| {
        runtime.block_on(async move {
            let (server_out, client_out) = tokio::io::duplex(1 << 16);
            let serve = fuzz_server().serve(&input[..], server_out);
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
        })
    })
}
