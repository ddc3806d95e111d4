//! Streamable HTTP at its edges (issue 26): headers parsed exactly, the bearer scheme without
//! case, the answer's form from `Accept`, `ping` without a slot, a body deadline, a refusal
//! with a status at the connection cap, and an idle sweep that spares busy sessions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rea::mcp::http::{BearerToken, Guard, HttpConfig};
use rea::mcp::{Server, ServerConfig};
use rea::session::{Provider, Session, SessionStore, SourceConfig};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::fixtures::fake::{Behaviour, app_and_lib};
use crate::support::http::{HttpServer, confined_server, envelope, logging_open, raw_request};
use crate::support::tools::this_executable;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

fn server() -> Server {
    let config = ServerConfig::default();
    let store = Arc::new(SessionStore::new(config.sessions.clone()));
    Server::with_store(config, store, None)
}

/// A server whose completion calls hang for `hang` (the provider of its own session).
fn slow_server(hang: Duration) -> Server {
    let session = Arc::new(Session::new());
    let slow: Arc<dyn Provider> = Arc::new(app_and_lib("slow").behaving(Behaviour::Hang(hang)));
    session.open_providers("slow", vec![slow]).unwrap();
    let config = ServerConfig {
        sources: SourceConfig {
            provider_timeout: Duration::from_secs(10),
        },
        ..ServerConfig::default()
    };
    Server::with_session(config, session)
}

/// A completion in MCP session `session` that waits on the slow provider; its answer.
fn slow_call(http: &Arc<HttpServer>, session: &str) -> tokio::task::JoinHandle<Value> {
    let (http, session) = (Arc::clone(http), session.to_owned());
    let params = json!({
        "ref": {"type": "ref/prompt", "name": "trace_crash"},
        "argument": {"name": "procedure", "value": ""},
    });
    tokio::spawn(async move { http.call(&session, 1, "completion/complete", params).await })
}

/// A server over [`slow_server`] with `config`.
async fn start_slow(hang: Duration, config: HttpConfig) -> Arc<HttpServer> {
    Arc::new(HttpServer::start(slow_server(hang), config).await)
}

/// A request to a 2026 `server/discover` with the usual headers plus `extra`.
fn discover_request(host: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "server/discover"),
    ];
    headers.extend_from_slice(extra);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                      "params": {"_meta": envelope()}});
    raw_request("POST", host, &headers, body.to_string().as_bytes())
}

#[tokio::test]
async fn host_and_origin_are_parsed_exactly_and_given_once() {
    let http = HttpServer::start(server(), HttpConfig::default()).await;
    for host in [
        "[::1]evil.com",
        "[::1].evil.com:80",
        "[::1]@evil.com",
        "localhost:80x",
    ] {
        let reply = http.exchange(&discover_request(host, &[])).await;
        assert_eq!(reply.status, 403, "Host {host}: {reply:?}");
    }
    let host = http.host();
    for origin in [
        "http://[::1]@evil.com",
        "http://localhost@evil.com",
        "http://[::1]evil.com",
    ] {
        let reply = http
            .exchange(&discover_request(&host, &[("Origin", origin)]))
            .await;
        assert_eq!(reply.status, 403, "Origin {origin}: {reply:?}");
    }
    // Two Host headers: 400 (RFC 9112 section 3.2), whichever comes first.
    let twice = discover_request(&host, &[("Host", &host), ("Host", "evil.com")]);
    assert_eq!(http.exchange(&twice).await.status, 400);
    let origins = [
        ("Origin", "http://localhost"),
        ("Origin", "http://evil.com"),
    ];
    let twice = discover_request(&host, &origins);
    assert_eq!(http.exchange(&twice).await.status, 403);
    // The loopback forms still pass.
    let good = discover_request(&host, &[("Origin", "http://[::1]:8080")]);
    assert_eq!(http.exchange(&good).await.status, 200);
}

#[tokio::test]
async fn an_absolute_form_target_is_refused() {
    let http = HttpServer::start(server(), HttpConfig::default()).await;
    let origin_form = discover_request(&http.host(), &[]);
    let absolute = String::from_utf8(origin_form).unwrap().replacen(
        "POST /mcp ",
        "POST http://evil.com/mcp ",
        1,
    );
    let reply = http.exchange(absolute.as_bytes()).await;
    assert_eq!(reply.status, 400, "{reply:?}");
    assert!(reply.text().contains("origin form"), "{}", reply.text());
}

#[tokio::test]
async fn the_bearer_scheme_is_read_without_case() {
    let config = HttpConfig {
        guard: Guard {
            token: Some(BearerToken::new(TOKEN).unwrap()),
            ..Guard::default()
        },
        ..HttpConfig::default()
    };
    let http = HttpServer::start(server(), config).await;
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let credentials = format!("{scheme} {TOKEN}");
        let request = discover_request(&http.host(), &[("Authorization", &credentials)]);
        assert_eq!(http.exchange(&request).await.status, 200, "{scheme}");
    }
    let wrong = format!("bearer {}", TOKEN.to_uppercase());
    let request = discover_request(&http.host(), &[("Authorization", &wrong)]);
    assert_eq!(http.exchange(&request).await.status, 401);
}

#[tokio::test]
async fn the_answer_takes_the_form_the_client_accepts() {
    let (_allowed, http) = confined_server().await;
    // A request that logs a warning before its answer.
    let body = logging_open(1, &this_executable().display().to_string());
    let headers = |accept| {
        vec![
            ("Content-Type", "application/json"),
            ("Accept", accept),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "open_binary"),
        ]
    };
    let bytes = body.to_string();
    // JSON only: always JSON, never a stream the client did not ask for.
    for _ in 0..20 {
        let reply = http
            .request("POST", &headers("application/json"), bytes.as_bytes())
            .await;
        assert_eq!(reply.status, 200);
        assert!(
            reply
                .header("content-type")
                .is_some_and(|t| t.starts_with("application/json")),
            "{reply:?}"
        );
        assert_eq!(reply.json()["result"]["isError"], true);
    }
    // Both: the messages, then the answer, on a stream.
    let both = http
        .request(
            "POST",
            &headers("application/json, text/event-stream"),
            bytes.as_bytes(),
        )
        .await;
    assert_eq!(both.events().len(), 2, "{both:?}");
    // An event stream alone is not enough: most answers are JSON.
    let sse_only = http
        .request("POST", &headers("text/event-stream"), bytes.as_bytes())
        .await;
    assert_eq!(sse_only.status, 406, "{sse_only:?}");
}

#[tokio::test]
async fn ping_is_answered_while_every_slot_is_busy() {
    let config = HttpConfig {
        max_in_flight: 1,
        ..HttpConfig::default()
    };
    let http = start_slow(Duration::from_millis(1500), config).await;
    let session = http.initialize().await;
    let slow = slow_call(&http, &session);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let busy = http
        .legacy(
            &session,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}),
        )
        .await;
    assert_eq!(busy.status, 503, "the one slot is taken: {busy:?}");
    let pong = http.call(&session, 3, "ping", json!({})).await;
    assert_eq!(pong["result"], json!({}), "{pong}");
    assert!(slow.await.unwrap()["result"]["completion"].is_object());
}

#[tokio::test]
async fn a_body_that_never_ends_is_answered_408_at_the_deadline() {
    let http = HttpServer::start(
        server(),
        HttpConfig {
            body_timeout: Duration::from_millis(500),
            ..HttpConfig::default()
        },
    )
    .await;
    let mut stalled = Vec::new();
    for _ in 0..3 {
        let mut stream = TcpStream::connect(http.addr).await.unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\"",
            http.host()
        );
        stream.write_all(head.as_bytes()).await.unwrap();
        stalled.push(stream);
    }
    // Others are served meanwhile.
    let discover = http.modern(1, "server/discover", json!({})).await;
    assert_eq!(discover.status, 200);
    let started = Instant::now();
    for mut stream in stalled {
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer));
        read.await
            .expect("the connection closes at the deadline")
            .unwrap();
        let text = String::from_utf8_lossy(&answer);
        assert!(text.starts_with("HTTP/1.1 408"), "{text}");
        assert!(text.contains("did not arrive within 0.5 s"), "{text}");
    }
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn at_the_connection_cap_a_new_connection_gets_503_with_retry_after() {
    let http = HttpServer::start(
        server(),
        HttpConfig {
            max_connections: 2,
            ..HttpConfig::default()
        },
    )
    .await;
    // Two connections that hold their places (a request's head, never finished).
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut stream = TcpStream::connect(http.addr).await.unwrap();
        stream.write_all(b"POST /mcp HTTP/1.1\r\n").await.unwrap();
        held.push(stream);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let refused = http.modern(1, "server/discover", json!({})).await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.json()["error"]["code"], -32000);
    let message = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("--max-http-connections"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(2));
    drop(held);
    // Places free again: served.
    let mut served = None;
    for _ in 0..50 {
        let reply = http.modern(2, "server/discover", json!({})).await;
        if reply.status == 200 {
            served = Some(reply);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(served.is_some(), "served once the held connections closed");
}

#[tokio::test]
async fn the_idle_sweep_spares_a_session_with_a_request_running_or_a_stream_open() {
    let idle = Duration::from_millis(600);
    let config = HttpConfig {
        session_idle: idle,
        ..HttpConfig::default()
    };
    let http = start_slow(Duration::from_millis(2000), config).await;
    // A request running longer than the idle time.
    let running = http.initialize().await;
    let slow = slow_call(&http, &running);
    // A GET stream open longer than the idle time.
    let streaming = http.initialize().await;
    let mut stream = TcpStream::connect(http.addr).await.unwrap();
    let get = raw_request(
        "GET",
        &http.host(),
        &[
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", &streaming),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        b"",
    );
    stream.write_all(&get).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
    // A session nobody uses ends.
    let unused = http.initialize().await;
    assert!(slow.await.unwrap()["result"]["completion"].is_object());
    // The running request ended just now: idleness counts from there.
    let after = http.call(&running, 2, "ping", json!({})).await;
    assert_eq!(after["result"], json!({}), "{after}");
    let open = http.call(&streaming, 1, "ping", json!({})).await;
    assert_eq!(open["result"], json!({}), "{open}");
    let gone = http
        .legacy(
            &unused,
            &json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        )
        .await;
    assert_eq!(gone.status, 404, "the unused session ended: {gone:?}");
}
