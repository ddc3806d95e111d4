//! Fair shares over Streamable HTTP (issue 26, fairness): one hostile client must not lock
//! every other out. MCP sessions that made no request after `initialize` idle out quickly
//! and give way at the cap; GET streams take at most half the connections. (The tool threads'
//! fair share is checked in `base::pool`'s unit tests and measured by `benches/fairness.rs`;
//! the ledger's share in `tools::sessions`.)

use std::sync::Arc;
use std::time::Duration;

use rea::mcp::http::HttpConfig;
use rea::mcp::{Server, ServerConfig};
use rea::session::SessionStore;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::http::{HttpServer, raw_request};

fn server() -> Server {
    let config = ServerConfig::default();
    let store = Arc::new(SessionStore::new(config.sessions.clone()));
    Server::with_store(config, store, None)
}

fn ping() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "ping"})
}

/// The HTTP status of a ping in MCP session `session`.
async fn ping_status(http: &HttpServer, session: &str) -> u16 {
    http.legacy(session, &ping()).await.status
}

#[tokio::test]
async fn at_the_mcp_session_cap_an_unused_session_gives_way_and_a_used_one_never_does() {
    let config = HttpConfig {
        max_mcp_sessions: 2,
        ..HttpConfig::default()
    };
    let http = HttpServer::start(server(), config).await;
    let used = http.initialize().await;
    assert_eq!(ping_status(&http, &used).await, 200);
    let unused = http.initialize().await;
    // Before the fair share this was 503 for as long as `unused` lived (an hour).
    let newcomer = http.initialize().await;
    assert_eq!(
        ping_status(&http, &unused).await,
        404,
        "the unused session gave way"
    );
    assert_eq!(
        ping_status(&http, &used).await,
        200,
        "the used session stays"
    );
    assert_eq!(ping_status(&http, &newcomer).await, 200);
    // Both live sessions have worked now: the cap holds, with its message.
    let refused = http
        .post(
            &[],
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "fairness", "version": "0"}}}),
        )
        .await;
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(ping_status(&http, &used).await, 200);
    assert_eq!(ping_status(&http, &newcomer).await, 200);
}

#[tokio::test]
async fn an_unused_session_idles_out_after_its_own_short_time_and_a_used_one_lives_on() {
    let config = HttpConfig {
        unused_session_idle: Duration::from_millis(400),
        ..HttpConfig::default()
    };
    let http = HttpServer::start(server(), config).await;
    let used = http.initialize().await;
    assert_eq!(ping_status(&http, &used).await, 200);
    let unused = http.initialize().await;
    // Past the short time (and the sweep, every quarter of it), well inside the hour.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        ping_status(&http, &unused).await,
        404,
        "the unused session ended"
    );
    assert_eq!(
        ping_status(&http, &used).await,
        200,
        "the used one lives on"
    );
}

/// Opens the GET stream of `session` on a connection of its own; the status line's code.
async fn open_get_stream(http: &HttpServer, session: &str) -> (TcpStream, String) {
    let mut stream = TcpStream::connect(http.addr).await.unwrap();
    let get = raw_request(
        "GET",
        &http.host(),
        &[
            ("Accept", "text/event-stream"),
            ("Mcp-Session-Id", session),
            ("MCP-Protocol-Version", "2025-11-25"),
        ],
        b"",
    );
    stream.write_all(&get).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    (stream, String::from_utf8_lossy(&head).into_owned())
}

#[tokio::test]
async fn get_streams_take_at_most_half_the_connections() {
    let config = HttpConfig {
        max_connections: 4,
        ..HttpConfig::default()
    };
    let http = HttpServer::start(server(), config).await;
    let sessions = [
        http.initialize().await,
        http.initialize().await,
        http.initialize().await,
    ];
    let (first, head) = open_get_stream(&http, &sessions[0]).await;
    assert_eq!(head, "HTTP/1.1 200");
    let (_second, head) = open_get_stream(&http, &sessions[1]).await;
    assert_eq!(head, "HTTP/1.1 200");
    let (mut third, head) = open_get_stream(&http, &sessions[2]).await;
    assert_eq!(
        head, "HTTP/1.1 503",
        "two of four connections are the streams' share"
    );
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(2), third.read_to_end(&mut rest)).await;
    let rest = String::from_utf8_lossy(&rest).to_ascii_lowercase();
    assert!(rest.contains("retry-after: 5"), "{rest}");
    assert!(rest.contains("half the connections"), "{rest}");
    // Requests are still served beside the two streams.
    assert_eq!(ping_status(&http, &sessions[2]).await, 200);
    // A stream that ends gives its place back.
    drop(first);
    let mut opened = false;
    for _ in 0..50 {
        let (_stream, head) = open_get_stream(&http, &sessions[2]).await;
        if head == "HTTP/1.1 200" {
            opened = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        opened,
        "the third session's stream opens once a place is free"
    );
}
