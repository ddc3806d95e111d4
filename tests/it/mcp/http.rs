//! Streamable HTTP (`rea serve --http`): the guard before any work, the 2025 session
//! lifecycle, the 2026 header checks and status codes, SSE for request-scoped messages, the
//! in-flight cap, and many clients at once, each isolated in its own binary session.

use std::sync::Arc;
use std::time::Duration;

use rea::mcp::http::{BearerToken, Guard, HttpConfig, HttpError, bind};
use rea::mcp::{Server, ServerConfig, ShellConfig};
use rea::session::{Provider, Session, SessionStore, SourceConfig, StoreConfig};
use serde_json::{Value, json};

use crate::support::fixtures::fake::{Behaviour, app_and_lib};
use crate::support::http::{HttpServer, confined_server, envelope, logging_open};
use crate::support::tools::{stripped_system_binary, system_libc, this_executable};

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

fn small_binaries() -> Vec<String> {
    let mut binaries: Vec<String> = [stripped_system_binary(), system_libc()]
        .into_iter()
        .flatten()
        .map(|path| path.display().to_string())
        .collect();
    if binaries.is_empty() {
        binaries.push(this_executable().display().to_string());
    }
    binaries
}

/// A server with no session of its own (as `rea serve --http` without `--open`).
fn server(config: ServerConfig) -> Server {
    let store = Arc::new(SessionStore::new(config.sessions.clone()));
    Server::with_store(config, store, None)
}

async fn start() -> HttpServer {
    HttpServer::start(server(ServerConfig::default()), HttpConfig::default()).await
}

fn initialize_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "http-tests", "version": "0"}}})
}

/// The handle of the session an `open_binary` answer opened; fails the test on an error.
fn handle_of(answer: &Value) -> String {
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    answer["result"]["structuredContent"]["session"]
        .as_str()
        .unwrap_or_else(|| panic!("a handle: {answer}"))
        .to_owned()
}

/// Opens `path` in a new session, as a 2026 request (`mcp_session` `None`) or in a 2025 MCP
/// session; the handle.
async fn open(http: &HttpServer, mcp_session: Option<&str>, id: u64, path: &str) -> String {
    let params = json!({"name": "open_binary", "arguments": {"path": path}});
    let answer = match mcp_session {
        Some(session) => http.call(session, id, "tools/call", params).await,
        None => http.modern(id, "tools/call", params).await.json(),
    };
    handle_of(&answer)
}

fn error_code(reply: &crate::support::http::Reply) -> i64 {
    reply.json()["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{reply:?}"))
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_refused_before_any_work() {
    let http = start().await;
    for (name, value) in [
        ("Host", "evil.example.com"),
        ("Origin", "http://evil.example.com"),
    ] {
        let reply = http.post(&[(name, value)], &initialize_body()).await;
        assert_eq!(reply.status, 403, "{name}: {reply:?}");
        assert_eq!(reply.header("mcp-session-id"), None, "no session was made");
        assert!(
            reply.json()["error"]["message"]
                .as_str()
                .unwrap()
                .contains(name)
        );
    }
    let local = http
        .post(&[("Origin", "http://localhost:6274")], &initialize_body())
        .await;
    assert_eq!(local.status, 200, "{local:?}");
}

#[tokio::test]
async fn the_bearer_token_is_required_when_set_and_for_any_non_loopback_bind() {
    let config = HttpConfig {
        guard: Guard {
            token: Some(BearerToken::new(TOKEN).unwrap()),
            ..Guard::default()
        },
        ..HttpConfig::default()
    };
    let refused = bind("0.0.0.0:0".parse().unwrap(), &HttpConfig::default()).await;
    assert!(matches!(refused, Err(HttpError::TokenRequired { .. })));
    let http = HttpServer::start(server(ServerConfig::default()), config).await;
    let right = format!("Bearer {TOKEN}");
    let longer = format!("Bearer {TOKEN}0");
    let shorter = format!("Bearer {}", &TOKEN[..31]);
    for (authorization, status) in [
        (None, 401),
        (Some(shorter.as_str()), 401),
        (Some(longer.as_str()), 401),
        (Some(TOKEN), 401),
        (Some(right.as_str()), 200),
    ] {
        let headers: Vec<(&str, &str)> = authorization
            .map(|value| vec![("Authorization", value)])
            .unwrap_or_default();
        let reply = http.post(&headers, &initialize_body()).await;
        assert_eq!(reply.status, status, "{authorization:?}: {reply:?}");
        if status == 401 {
            assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
        }
    }
}

#[tokio::test]
async fn bad_bodies_methods_and_paths_get_their_status() {
    let config = ServerConfig {
        shell: ShellConfig {
            max_line_bytes: 1024,
            ..ShellConfig::default()
        },
        ..ServerConfig::default()
    };
    let http = HttpServer::start(server(config), HttpConfig::default()).await;
    let big =
        json!({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "x".repeat(2000)}});
    assert_eq!(http.post(&[], &big).await.status, 413);
    let plain = http
        .request("POST", &[("Content-Type", "text/plain")], b"{}")
        .await;
    assert_eq!(plain.status, 415, "{plain:?}");
    let html_only = http
        .request(
            "POST",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "text/html"),
            ],
            initialize_body().to_string().as_bytes(),
        )
        .await;
    assert_eq!(html_only.status, 406);
    let broken = http
        .request(
            "POST",
            &[("Content-Type", "application/json")],
            b"{\"jsonrpc\":",
        )
        .await;
    assert_eq!((broken.status, error_code(&broken)), (400, -32700));
    assert_eq!(http.request("GET", &[], b"").await.status, 405);
    assert_eq!(http.request("DELETE", &[], b"").await.status, 405);
    assert_eq!(http.request("PUT", &[], b"").await.status, 405);
    let elsewhere = http
        .exchange(
            format!(
                "GET /other HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                http.host()
            )
            .as_bytes(),
        )
        .await;
    assert_eq!(elsewhere.status, 404);
}

#[tokio::test]
async fn a_2025_session_lives_from_initialize_to_delete() {
    let http = start().await;
    let session = http.initialize().await;
    assert!(
        session.starts_with("mcp_") && session.len() >= 26,
        "{session}"
    );
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"});
    let without = http.post(&[], &list).await;
    assert_eq!((without.status, error_code(&without)), (400, -32600));
    let unknown = http.legacy("mcp_not-a-session", &list).await;
    assert_eq!((unknown.status, error_code(&unknown)), (404, -32600));
    let bad_version = http
        .post(
            &[
                ("Mcp-Session-Id", &session),
                ("MCP-Protocol-Version", "1999-01-01"),
            ],
            &list,
        )
        .await;
    assert_eq!(
        (bad_version.status, error_code(&bad_version)),
        (400, -32600)
    );
    let prompts = http.call(&session, 3, "prompts/list", json!({})).await;
    assert!(prompts["result"]["prompts"].as_array().unwrap().len() >= 6);
    assert!(
        prompts["result"].get("resultType").is_none(),
        "no 2026 members in 2025"
    );
    let ended = http
        .request("DELETE", &[("Mcp-Session-Id", &session)], b"")
        .await;
    assert_eq!(ended.status, 200);
    let after = http.legacy(&session, &list).await;
    assert_eq!(after.status, 404);
}

/// Headers, body, and the status and JSON-RPC code they must get.
type Case<'a> = (Vec<(&'a str, &'a str)>, Value, u16, i64);

#[tokio::test]
async fn a_2026_request_is_checked_against_its_headers_and_answered_with_its_status() {
    let http = start().await;
    let tools = http.modern(1, "tools/list", json!({})).await;
    assert_eq!(tools.status, 200, "{tools:?}");
    let result = &tools.json()["result"];
    assert_eq!(result["resultType"], "complete");
    assert!(result["ttlMs"].is_u64() && result["cacheScope"] == "public");
    assert_eq!(tools.header("mcp-session-id"), None);

    let body = |method: &str, params: Value| {
        let mut params = params;
        params["_meta"] = envelope();
        json!({"jsonrpc": "2.0", "id": 9, "method": method, "params": params})
    };
    let version = ("MCP-Protocol-Version", "2026-07-28");
    let cases: Vec<Case> = vec![
        // Mcp-Method missing, then different.
        (vec![version], body("tools/list", json!({})), 400, -32020),
        (
            vec![version, ("Mcp-Method", "prompts/list")],
            body("tools/list", json!({})),
            400,
            -32020,
        ),
        // Mcp-Name disagrees with the prompt named in the body.
        (
            vec![
                version,
                ("Mcp-Method", "prompts/get"),
                ("Mcp-Name", "other"),
            ],
            body("prompts/get", json!({"name": "triage_binary"})),
            400,
            -32020,
        ),
        // The header's version disagrees with _meta's.
        (
            vec![
                ("MCP-Protocol-Version", "2025-11-25"),
                ("Mcp-Method", "tools/list"),
            ],
            body("tools/list", json!({})),
            400,
            -32020,
        ),
        // Removed in 2026, and unknown: 404.
        (
            vec![version, ("Mcp-Method", "ping")],
            body("ping", json!({})),
            404,
            -32601,
        ),
        (
            vec![version, ("Mcp-Method", "no/such")],
            body("no/such", json!({})),
            404,
            -32601,
        ),
    ];
    for (headers, body, status, code) in cases {
        let reply = http.post(&headers, &body).await;
        assert_eq!(
            (reply.status, error_code(&reply)),
            (status, code),
            "{headers:?} {body}"
        );
    }
    // An envelope without client capabilities: -32602; an unsupported version: -32022.
    let partial = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let reply = http
        .post(&[version, ("Mcp-Method", "tools/list")], &partial)
        .await;
    assert_eq!((reply.status, error_code(&reply)), (400, -32602));
    let future = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2099-01-01",
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    let reply = http
        .post(
            &[
                ("MCP-Protocol-Version", "2099-01-01"),
                ("Mcp-Method", "tools/list"),
            ],
            &future,
        )
        .await;
    assert_eq!((reply.status, error_code(&reply)), (400, -32022));
    assert_eq!(reply.json()["error"]["data"]["requested"], "2099-01-01");
    // Notifications are accepted; GET and DELETE are not served to a 2026 client.
    let note = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "_meta": envelope()}});
    assert_eq!(http.post(&[version], &note).await.status, 202);
    for method in ["GET", "DELETE"] {
        assert_eq!(http.request(method, &[version], b"").await.status, 405);
    }
    let discover = http.modern(5, "server/discover", json!({})).await;
    assert_eq!(
        discover.json()["result"]["supportedVersions"][0],
        "2026-07-28"
    );
}

#[tokio::test]
async fn a_2026_client_names_its_session_and_no_client_is_offered_handles() {
    let http = start().await;
    let binary = &small_binaries()[0];
    let unnamed = http
        .modern(
            1,
            "tools/call",
            json!({"name": "list_procedures", "arguments": {}}),
        )
        .await;
    let result = &unnamed.json()["result"];
    assert_eq!(result["isError"], true, "{result}");
    assert!(
        result["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("open_binary")
    );
    let handle = open(&http, None, 2, binary).await;
    let complete = |id: u64, argument: &str, context: Value| {
        http.modern(
            id,
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "trace_crash"},
                "argument": {"name": argument, "value": ""},
                "context": {"arguments": context},
            }),
        )
    };
    let named = complete(3, "procedure", json!({"session": handle}))
        .await
        .json();
    assert!(
        named["result"]["completion"]["total"].as_u64().unwrap() > 0,
        "{named}"
    );
    let unnamed = complete(4, "procedure", json!({})).await.json();
    assert_eq!(unnamed["result"]["completion"]["values"], json!([]));
    let sessions = complete(5, "session", json!({})).await.json();
    assert_eq!(sessions["result"]["completion"]["values"], json!([]));
    // A 2025 client over HTTP is not offered handles either, even its own.
    let session = http.initialize().await;
    open(&http, Some(&session), 6, binary).await;
    let offered = http
        .call(
            &session,
            7,
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "trace_crash"},
                "argument": {"name": "session", "value": ""},
            }),
        )
        .await;
    assert_eq!(offered["result"]["completion"]["values"], json!([]));
    // Its own session works without naming it.
    let procedures = http
        .call(
            &session,
            8,
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "trace_crash"},
                "argument": {"name": "procedure", "value": ""},
            }),
        )
        .await;
    assert!(
        procedures["result"]["completion"]["total"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[tokio::test]
async fn messages_of_a_request_come_before_its_answer_on_an_sse_stream() {
    let (_allowed, http) = confined_server().await;
    let outside = &small_binaries()[0];
    let body = logging_open(1, outside);
    let reply = http
        .post(
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "open_binary"),
            ],
            &body,
        )
        .await;
    assert!(
        reply
            .header("content-type")
            .unwrap()
            .starts_with("text/event-stream"),
        "{reply:?}"
    );
    assert_eq!(reply.header("x-accel-buffering"), Some("no"));
    let events = reply.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["method"], "notifications/message");
    assert_eq!(events[0]["params"]["level"], "warning");
    assert_eq!(events[1]["id"], 1);
    assert_eq!(events[1]["result"]["isError"], true);
    // Without a log level the same request is plain JSON: nothing precedes the answer.
    let quiet = http
        .modern(
            2,
            "tools/call",
            json!({"name": "open_binary", "arguments": {"path": outside}}),
        )
        .await;
    assert!(
        quiet
            .header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
}

#[tokio::test]
async fn beyond_the_in_flight_cap_a_request_is_answered_503_with_retry_after() {
    let session = Arc::new(Session::new());
    let slow: Arc<dyn Provider> =
        Arc::new(app_and_lib("slow").behaving(Behaviour::Hang(Duration::from_millis(1500))));
    session.open_providers("slow", vec![slow]).unwrap();
    let config = ServerConfig {
        sources: SourceConfig {
            provider_timeout: Duration::from_secs(10),
        },
        ..ServerConfig::default()
    };
    let http = Arc::new(
        HttpServer::start(
            Server::with_session(config, session),
            HttpConfig {
                max_in_flight: 1,
                ..HttpConfig::default()
            },
        )
        .await,
    );
    let session = http.initialize().await;
    let slow_request = {
        let http = Arc::clone(&http);
        let session = session.clone();
        tokio::spawn(async move {
            http.call(
                &session,
                1,
                "completion/complete",
                json!({
                    "ref": {"type": "ref/prompt", "name": "trace_crash"},
                    "argument": {"name": "procedure", "value": ""},
                }),
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = http
        .legacy(
            &session,
            &json!({"jsonrpc": "2.0", "id": 2, "method": "prompts/list"}),
        )
        .await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(error_code(&refused), -32000);
    let message = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("--max-http-in-flight"), "{message}");
    let slow_answer = slow_request.await.unwrap();
    assert!(
        slow_answer["result"]["completion"]["total"]
            .as_u64()
            .unwrap()
            > 0
    );
    let later = http.call(&session, 3, "prompts/list", json!({})).await;
    assert!(later["result"]["prompts"].is_array());
}

#[tokio::test]
async fn a_partial_request_is_closed_at_the_header_time_out_while_others_are_served() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let http = HttpServer::start(
        server(ServerConfig::default()),
        HttpConfig {
            header_timeout: Duration::from_millis(500),
            ..HttpConfig::default()
        },
    )
    .await;
    let mut slow = tokio::net::TcpStream::connect(http.addr).await.unwrap();
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        .await
        .unwrap();
    let discover = http.modern(1, "server/discover", json!({})).await;
    assert_eq!(discover.status, 200);
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(Duration::from_secs(10), slow.read_to_end(&mut rest)).await;
    assert!(closed.is_ok(), "the server closed the stalled connection");
    let text = String::from_utf8_lossy(&rest);
    assert!(
        text.is_empty() || text.starts_with("HTTP/1.1 408"),
        "{text}"
    );
}

/// One client of the many: opens its own binary session and works in it through its era.
async fn client_round(
    http: Arc<HttpServer>,
    index: usize,
    binary: String,
) -> (String, Vec<String>) {
    let legacy = index.is_multiple_of(2);
    let mcp_session = if legacy {
        Some(http.initialize().await)
    } else {
        None
    };
    let mut next_id = 100 * index as u64;
    let mut call = |method: &'static str, params: Value| {
        next_id += 1;
        let id = next_id;
        let http = Arc::clone(&http);
        let mcp_session = mcp_session.clone();
        async move {
            let answer = match &mcp_session {
                Some(session) => http.call(session, id, method, params).await,
                None => {
                    let reply = http.modern(id, method, params).await;
                    assert_eq!(reply.status, 200, "{reply:?}");
                    reply.answer()
                }
            };
            assert_eq!(
                answer["id"], id,
                "each request is answered once, under its own id"
            );
            answer
        }
    };
    let opened = call(
        "tools/call",
        json!({"name": "open_binary", "arguments": {"path": binary}}),
    )
    .await;
    let handle = handle_of(&opened);
    let listed = call(
        "tools/call",
        json!({"name": "list_procedures",
        "arguments": {"session": handle, "limit": 3}}),
    )
    .await;
    assert_eq!(listed["result"]["isError"], false, "{listed}");
    let evidence = call(
        "completion/complete",
        json!({
            "ref": {"type": "ref/prompt", "name": "verify_reconstruction"},
            "argument": {"name": "evidence", "value": ""},
            "context": {"arguments": {"session": handle}},
        }),
    )
    .await;
    let ids: Vec<String> = evidence["result"]["completion"]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("{evidence}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    assert!(!ids.is_empty(), "{evidence}");
    let sessions = call(
        "completion/complete",
        json!({
            "ref": {"type": "ref/prompt", "name": "trace_crash"},
            "argument": {"name": "session", "value": ""},
        }),
    )
    .await;
    assert_eq!(
        sessions["result"]["completion"]["values"],
        json!([]),
        "handles never listed"
    );
    (handle, ids)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_clients_of_both_eras_each_see_only_their_own_session() {
    let config = ServerConfig {
        sessions: StoreConfig {
            max_sessions: 64,
            ..StoreConfig::default()
        },
        ..ServerConfig::default()
    };
    let http = Arc::new(HttpServer::start(server(config), HttpConfig::default()).await);
    let binaries = small_binaries();
    let mut clients = tokio::task::JoinSet::new();
    for index in 0..64 {
        let binary = binaries[index % binaries.len()].clone();
        clients.spawn(client_round(Arc::clone(&http), index, binary));
    }
    let mut seen = Vec::new();
    while let Some(done) = clients.join_next().await {
        seen.push(done.expect("a client finished"));
    }
    assert_eq!(seen.len(), 64);
    let mut handles: Vec<&String> = seen.iter().map(|(handle, _)| handle).collect();
    handles.sort();
    handles.dedup();
    assert_eq!(handles.len(), 64, "every client has its own session");
    let mut ids: Vec<&String> = seen.iter().flat_map(|(_, ids)| ids).collect();
    let all = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), all, "no Evidence ID is seen by two clients");
}

#[tokio::test]
async fn closing_the_response_cancels_the_request_and_it_never_commits() {
    use crate::support::gated::GatedProvider;
    use std::sync::atomic::Ordering;
    use tokio::io::AsyncWriteExt;

    let provider = GatedProvider::new(false);
    let session = Arc::new(Session::new());
    let declared: Arc<dyn Provider> = provider.clone();
    session.open_providers("gated", vec![declared]).unwrap();
    // One slot: a 503 says the cancelled work still runs; its end frees the slot.
    let http = HttpServer::start(
        Server::with_session(ServerConfig::default(), Arc::clone(&session)),
        HttpConfig {
            max_in_flight: 1,
            ..HttpConfig::default()
        },
    )
    .await;
    let mcp_session = http.initialize().await;
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "list_documents", "arguments": {}}});
    let raw = crate::support::http::raw_request(
        "POST",
        &http.host(),
        &[
            ("Content-Type", "application/json"),
            ("Mcp-Session-Id", &mcp_session),
        ],
        call.to_string().as_bytes(),
    );
    let mut stream = tokio::net::TcpStream::connect(http.addr).await.unwrap();
    stream.write_all(&raw).await.unwrap();
    // The call is in flight once the provider holds it at the gate.
    while provider.running.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop(stream);
    // The id is free again once the server has seen the close (as after
    // notifications/cancelled): the same id no longer collides, and finds the slot held by
    // the cancelled work (503) until that work stops.
    let same_id = json!({"jsonrpc": "2.0", "id": 5, "method": "prompts/list"});
    let mut freed = false;
    for _ in 0..500 {
        let reply = http.legacy(&mcp_session, &same_id).await;
        if reply.status == 503 {
            freed = true;
            break;
        }
        assert_eq!(
            error_code(&reply),
            -32600,
            "a duplicate until then: {reply:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(freed, "closing the response cancelled the request");
    provider.gate.open();
    let mut answered = None;
    for id in 10..510 {
        let reply = http
            .legacy(
                &mcp_session,
                &json!({"jsonrpc": "2.0", "id": id, "method": "prompts/list"}),
            )
            .await;
        if reply.status == 200 {
            answered = Some(reply.json());
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        answered.expect("the slot is free once the work stopped")["result"]["prompts"].is_array()
    );
    // The work stopped without recording its observation; the same call not cancelled does.
    assert!(
        session.evidence_ids().is_empty(),
        "{:?}",
        session.evidence_ids()
    );
    let listed = http
        .call(
            &mcp_session,
            600,
            "tools/call",
            json!({"name": "list_documents", "arguments": {}}),
        )
        .await;
    assert_eq!(listed["result"]["isError"], false, "{listed}");
    assert_eq!(session.evidence_ids().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_real_server_serves_sixty_four_clients_inside_its_caps() {
    use std::io::BufRead;
    // The stated bounds (crate docs, "Execution model"), as for eight sessions over stdio.
    const MAX_THREADS: u64 = 16;
    const MAX_FDS: usize = 64;
    const MAX_PEAK_KB: u64 = 512 * 1024;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
        .args([
            "serve",
            "--store",
            "memory",
            "--http",
            "127.0.0.1:0",
            "--max-sessions",
            "64",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("rea serve --http starts");
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let url = line.trim().rsplit(' ').next().unwrap().to_owned();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap_or_else(|_| panic!("an address in {line:?}"));
    let http = Arc::new(HttpServer::at(addr));
    let binaries = small_binaries();
    let mut clients = tokio::task::JoinSet::new();
    for index in 0..64 {
        let binary = binaries[index % binaries.len()].clone();
        clients.spawn(client_round(Arc::clone(&http), index, binary));
    }
    while let Some(done) = clients.join_next().await {
        done.expect("a client finished");
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let field = |name: &str| -> u64 {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("{name} in /proc status"))
    };
    let (threads, peak) = (field("Threads:"), field("VmHWM:"));
    let fds = std::fs::read_dir(format!("/proc/{}/fd", child.id()))
        .unwrap()
        .count();
    eprintln!("64 HTTP clients: {threads} threads, {fds} descriptors, peak {peak} kB");
    let _ = child.kill();
    let _ = child.wait();
    assert!(threads <= MAX_THREADS, "{threads} threads");
    assert!(fds <= MAX_FDS, "{fds} descriptors");
    assert!(peak <= MAX_PEAK_KB, "peak {peak} kB");
}

/// Over HTTP a client's roots confine nobody: the server has many clients, and one 2025
/// client declaring `roots` and naming none (the MCP Inspector's default) would otherwise
/// shut every other client out of its paths and its open binaries. Roots come from `--root`.
#[tokio::test]
async fn a_2025_client_declaring_roots_confines_no_client_over_http() {
    let http = start().await;
    let binary = &small_binaries()[0];
    let handle = open(&http, None, 1, binary).await;

    let reply = http
        .post(
            &[],
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"roots": {"listChanged": true}},
                "clientInfo": {"name": "http-tests-roots", "version": "0"}}}),
        )
        .await;
    assert_eq!(reply.status, 200, "{reply:?}");
    let session = reply
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    for notification in [
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}),
        // An answer naming no roots, as if the server had asked: it asked nothing.
        json!({"jsonrpc": "2.0", "id": "rea-roots-1", "result": {"roots": []}}),
    ] {
        let sent = http.legacy(&session, &notification).await;
        assert_eq!(sent.status, 202, "{notification}: {sent:?}");
    }

    open(&http, Some(&session), 2, binary).await;
    let other = http
        .modern(
            3,
            "tools/call",
            json!({"name": "list_procedures", "arguments": {"session": handle}}),
        )
        .await
        .json();
    assert_eq!(other["result"]["isError"], false, "{other}");
    open(&http, None, 4, binary).await;
}

/// Beyond the most MCP sessions the server keeps (a client that never sends DELETE, such as
/// the MCP Inspector's CLI, leaves its session until it has been idle for
/// `--session-idle-secs`), `initialize` is 503 with a message saying so, not the in-flight one.
#[tokio::test]
async fn beyond_the_mcp_session_cap_initialize_is_503_naming_the_sessions() {
    let config = HttpConfig {
        max_mcp_sessions: 1,
        ..HttpConfig::default()
    };
    let http = HttpServer::start(server(ServerConfig::default()), config).await;
    let first = http.initialize().await;
    // A session that made a request never gives way (an unused one would: see
    // `mcp::fairness`).
    assert_eq!(
        http.call(&first, 1, "ping", json!({})).await["result"],
        json!({})
    );
    let refused = http.post(&[], &initialize_body()).await;
    assert_eq!((refused.status, error_code(&refused)), (503, -32000));
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.header("mcp-session-id"), None);
    let message = refused.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("1 MCP sessions are live"), "{message}");
    assert!(message.contains("DELETE"), "{message}");
    let ended = http
        .request("DELETE", &[("Mcp-Session-Id", &first)], b"")
        .await;
    assert_eq!(ended.status, 200);
    let again = http.post(&[], &initialize_body()).await;
    assert_eq!(again.status, 200, "{again:?}");
}
