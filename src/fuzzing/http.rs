//! The HTTP endpoint's invariants: the check behind the `http_request` fuzz target and its
//! replay test. A fuzz input becomes one HTTP request (method, headers, body) sent to the
//! `/mcp` router, then a request that must always succeed; every request gets exactly one
//! well-formed answer, and the endpoint keeps serving.

use std::sync::OnceLock;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, Method, Request, Response};
use serde_json::{Value, json};
use tower::ServiceExt;

use crate::mcp::http::HttpConfig;
use crate::mcp::message::readable_id;
use crate::mcp::{Server, ServerConfig, ShellConfig};

/// Body bound used for fuzzing, small enough that the fuzzer reaches it.
const MAX_BODY_BYTES: usize = 16 * 1024;

/// The placeholder a header value may hold for the id of a live 2025 MCP session.
const SESSION_PLACEHOLDER: &str = "$SID";

const METHODS: [&str; 6] = ["POST", "GET", "DELETE", "PUT", "OPTIONS", "PATCH"];

struct Harness {
    runtime: tokio::runtime::Runtime,
    router: Router,
    session: String,
}

fn harness() -> &'static Harness {
    static HARNESS: OnceLock<Harness> = OnceLock::new();
    HARNESS.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let config = ServerConfig {
            shell: ShellConfig {
                max_line_bytes: MAX_BODY_BYTES,
                ..ShellConfig::default()
            },
            ..ServerConfig::default()
        };
        let server = Server::new(config);
        let router = runtime.block_on(async { server.http_router(&HttpConfig::default()) });
        let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"}}});
        let request = post(&[], initialize.to_string().into_bytes());
        let response = runtime
            .block_on(router.clone().oneshot(request))
            .expect("infallible");
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|value| value.to_str().ok())
            .expect("initialize starts a session")
            .to_owned();
        Harness {
            runtime,
            router,
            session,
        }
    })
}

fn post(headers: &[(&str, &str)], body: Vec<u8>) -> Request<Body> {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri("/mcp")
        .header("host", "127.0.0.1:8765")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.body(Body::from(body)).expect("a valid request")
}

/// What an input describes: its first byte picks the method, the lines up to the first empty
/// one are `name: value` headers, and the rest is the body.
struct Parts<'a> {
    method: &'static str,
    headers: Vec<&'a [u8]>,
    body: &'a [u8],
}

fn parts(bytes: &[u8]) -> Parts<'_> {
    let (method, rest) = match bytes.split_first() {
        Some((first, rest)) => (METHODS[usize::from(*first) % METHODS.len()], rest),
        None => ("POST", bytes),
    };
    let mut headers = Vec::new();
    let mut body = &rest[rest.len()..];
    let mut remaining = rest;
    while !remaining.is_empty() {
        let (line, after) = match remaining.iter().position(|b| *b == b'\n') {
            Some(at) => (&remaining[..at], &remaining[at + 1..]),
            None => (remaining, &remaining[remaining.len()..]),
        };
        if line.is_empty() {
            body = after;
            break;
        }
        headers.push(line);
        remaining = after;
    }
    Parts {
        method,
        headers,
        body,
    }
}

/// The request `parts` describe; header lines that are not valid header text are dropped.
fn request_of(parts: &Parts<'_>, session: &str) -> Request<Body> {
    let mut builder = Request::builder().method(parts.method).uri("/mcp");
    for line in &parts.headers {
        let Some(colon) = line.iter().position(|b| *b == b':') else {
            continue;
        };
        let name = HeaderName::from_bytes(&line[..colon]);
        let text = String::from_utf8_lossy(&line[colon + 1..])
            .trim()
            .replace(SESSION_PLACEHOLDER, session);
        if let (Ok(name), Ok(value)) = (name, HeaderValue::from_str(&text)) {
            builder = builder.header(name, value);
        }
    }
    builder
        .body(Body::from(parts.body.to_vec()))
        .unwrap_or_else(|_| post(&[], Vec::new()))
}

/// Sends the request `bytes` describes, then a request that must succeed; checks both
/// answers are well formed.
pub fn check_request(bytes: &[u8]) {
    let harness = harness();
    let parts = parts(bytes);
    let request = request_of(&parts, &harness.session);
    let sent_id = readable_id(parts.body);
    let method = request.method().clone();
    harness.runtime.block_on(async {
        let response = harness
            .router
            .clone()
            .oneshot(request)
            .await
            .expect("infallible");
        check_response(response, &method, sent_id.as_ref()).await;
        let sentinel = json!({"jsonrpc": "2.0", "id": "sentinel", "method": "server/discover",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}});
        let sentinel = post(
            &[
                ("mcp-protocol-version", "2026-07-28"),
                ("mcp-method", "server/discover"),
            ],
            sentinel.to_string().into_bytes(),
        );
        let response = harness
            .router
            .clone()
            .oneshot(sentinel)
            .await
            .expect("infallible");
        assert_eq!(response.status(), 200, "the endpoint keeps serving");
    });
}

async fn check_response(response: Response<Body>, method: &Method, sent_id: Option<&Value>) {
    let status = response.status();
    assert!(
        (200..600).contains(&status.as_u16()) && status != 500,
        "status {status}"
    );
    let media = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    if media.starts_with("text/event-stream") {
        // Streams that stay open (GET, listen) are checked by their headers only.
        assert_eq!(status, 200);
        return;
    }
    let collected = tokio::time::timeout(
        Duration::from_secs(5),
        axum::body::to_bytes(response.into_body(), 8 * 1024 * 1024),
    )
    .await;
    let body = collected
        .expect("a JSON answer is complete at once")
        .expect("a readable body");
    if status == 202 || (status == 200 && *method == Method::DELETE) {
        assert!(body.is_empty(), "an accepted message gets no body");
        return;
    }
    if media.starts_with("application/json") {
        let answer: Value = serde_json::from_slice(&body).expect("a JSON body");
        let answers = match &answer {
            Value::Array(answers) => answers.clone(),
            single => vec![single.clone()],
        };
        for answer in &answers {
            assert_eq!(answer["jsonrpc"], "2.0", "{answer}");
            assert!(
                answer.get("result").is_some() != answer.get("error").is_some(),
                "exactly one of result and error: {answer}"
            );
        }
        if let (Some(sent), false) = (sent_id, answer.is_array()) {
            assert!(
                answer["id"] == *sent || answer["id"].is_null(),
                "answered under another id: {answer}"
            );
        }
    } else {
        // Plain refusals (the body limit, axum's method rejections) carry text.
        assert!(status.is_client_error(), "status {status} with {media:?}");
    }
}
