//! An in-process `rea` HTTP endpoint on a loopback port and a raw HTTP/1.1 client for it:
//! every byte the client sends is written by the test, so malformed and partial requests can
//! be sent as easily as good ones.

use std::net::SocketAddr;
use std::time::Duration;

use rea::mcp::Server;
use rea::mcp::http::{HttpConfig, bind};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The 2026 `_meta` envelope the tests send.
pub fn envelope() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A server with no session of its own whose paths are confined to an empty folder (kept
/// alive by the returned guard): every `open_binary` of a real file fails with a warning.
pub async fn confined_server() -> (tempfile::TempDir, HttpServer) {
    use std::sync::Arc;
    let allowed = tempfile::tempdir().unwrap();
    let config = rea::mcp::ServerConfig::default();
    let store = Arc::new(rea::session::SessionStore::new(config.sessions.clone()));
    let roots = rea::files::Confinement::to_roots(&[allowed.path().to_owned()]).unwrap();
    store.set_confinement(roots);
    let server = Server::with_store(config, store, None);
    (
        allowed,
        HttpServer::start(server, HttpConfig::default()).await,
    )
}

/// A 2026 `open_binary` of `path` at log level `info`: when the path is refused, a warning
/// (`notifications/message`) comes before the answer.
pub fn logging_open(id: u64, path: &str) -> Value {
    let mut params = json!({"name": "open_binary", "arguments": {"path": path}});
    params["_meta"] = envelope();
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("info");
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

/// A server serving HTTP on a free loopback port until dropped.
pub struct HttpServer {
    pub addr: SocketAddr,
    /// The in-process server's task; `None` for a server in another process.
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

impl HttpServer {
    /// A server already listening at `addr` (the real `rea serve --http`).
    pub fn at(addr: SocketAddr) -> HttpServer {
        HttpServer { addr, task: None }
    }

    pub async fn start(server: Server, config: HttpConfig) -> HttpServer {
        let listener = bind("127.0.0.1:0".parse().unwrap(), &config)
            .await
            .expect("a loopback port");
        let addr = listener.local_addr().unwrap();
        let task = tokio::spawn(async move {
            let _ = server.serve_http(listener, config).await;
        });
        HttpServer {
            addr,
            task: Some(task),
        }
    }

    /// The `Host` value of this server.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// Sends `raw` on a new connection and reads the whole answer (the server closes the
    /// connection after it, since requests say `Connection: close`).
    pub async fn exchange(&self, raw: &[u8]) -> Reply {
        let mut stream = TcpStream::connect(self.addr).await.unwrap();
        stream.write_all(raw).await.unwrap();
        let mut bytes = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut bytes));
        read.await.expect("the answer within 30 s").unwrap();
        Reply::parse(&bytes)
    }

    /// A request with `headers` (besides Host, Content-Length and Connection) and `body`.
    pub async fn request(&self, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        self.exchange(&raw_request(method, &self.host(), headers, body))
            .await
    }

    /// POST of a JSON body with the usual MCP headers plus `headers`.
    pub async fn post(&self, headers: &[(&str, &str)], body: &Value) -> Reply {
        let mut all = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        self.request("POST", &all, body.to_string().as_bytes())
            .await
    }

    /// A 2026 request: the envelope in `_meta` and the headers that must agree with it.
    pub async fn modern(&self, id: u64, method: &str, mut params: Value) -> Reply {
        params["_meta"] = envelope();
        let name = params
            .get("name")
            .or_else(|| params.get("uri"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let mut headers = vec![
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", method),
        ];
        if let Some(name) = &name {
            headers.push(("Mcp-Name", name));
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.post(&headers, &body).await
    }

    /// A 2025 client's `initialize` and `notifications/initialized`; the session id.
    pub async fn initialize(&self) -> String {
        let reply = self
            .post(
                &[],
                &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "http-tests", "version": "0"}}}),
            )
            .await;
        assert_eq!(reply.status, 200, "{reply:?}");
        let session = reply
            .header("mcp-session-id")
            .expect("a session id")
            .to_owned();
        let ready = self
            .legacy(
                &session,
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await;
        assert_eq!(ready.status, 202);
        session
    }

    /// A 2025 message in MCP session `session`.
    pub async fn legacy(&self, session: &str, body: &Value) -> Reply {
        self.post(
            &[
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            body,
        )
        .await
    }

    /// A 2025 request in `session`; its answer.
    pub async fn call(&self, session: &str, id: u64, method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let reply = self.legacy(session, &body).await;
        assert_eq!(reply.status, 200, "{reply:?}");
        reply.answer()
    }
}

/// The bytes of one HTTP/1.1 request.
pub fn raw_request(method: &str, host: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
    let mut raw = format!("{method} /mcp HTTP/1.1\r\nConnection: close\r\n");
    // A Host header in `headers` replaces the server's own.
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        raw.push_str(&format!("Host: {host}\r\n"));
    }
    for (name, value) in headers {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    raw.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let mut bytes = raw.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// An HTTP answer.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    fn parse(bytes: &[u8]) -> Reply {
        let split = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(bytes)));
        let head = std::str::from_utf8(&bytes[..split]).unwrap();
        let mut lines = head.split("\r\n");
        let status = lines
            .next()
            .unwrap()
            .split(' ')
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(": "))
            .map(|(name, value)| (name.to_ascii_lowercase(), value.to_owned()))
            .collect();
        let mut body = bytes[split + 4..].to_vec();
        let chunked = headers
            .iter()
            .any(|(name, value)| name == "transfer-encoding" && value.contains("chunked"));
        if chunked {
            body = dechunk(&body);
        }
        Reply {
            status,
            headers,
            body,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, value)| value.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The JSON body.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: not JSON: {}", self.text()))
    }

    /// The messages of an SSE body, in order.
    pub fn events(&self) -> Vec<Value> {
        self.text()
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .map(|data| serde_json::from_str(data.trim()).unwrap())
            .collect()
    }

    /// The JSON-RPC answer: the body, or the last event of an SSE body.
    pub fn answer(&self) -> Value {
        if self
            .header("content-type")
            .is_some_and(|t| t.starts_with("text/event-stream"))
        {
            self.events().pop().expect("an answer event")
        } else {
            self.json()
        }
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let Some(end) = body.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = std::str::from_utf8(&body[..end]).unwrap().trim();
        let size = usize::from_str_radix(size.split(';').next().unwrap(), 16).unwrap();
        if size == 0 {
            return out;
        }
        let start = end + 2;
        out.extend_from_slice(&body[start..start + size]);
        body = &body[start + size + 2..];
    }
}
