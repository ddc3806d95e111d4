//! End-to-end benchmark of the Document completion workload over Streamable HTTP: the real
//! `rea serve --http` binary beside the rmcp peer (`benches/peers/rmcp/`, the official Rust
//! SDK's `StreamableHttpService` on axum, stateless, JSON responses, keys precomputed; and
//! once more with SSE responses, rmcp's default, which also exercises the client's SSE path).
//!
//! Each scenario starts its server on a free loopback port, then measures sequential round
//! trips on one keep-alive connection (p50, p99, after a warm-up) and the throughput of
//! 64 keep-alive connections with one request in flight on each (64 in flight), and reads the
//! server's peak resident memory (`VmHWM`). Every scenario runs `REA_BENCH_RUNS` times
//! (default 3), in rounds across the scenarios; the table gives medians.
//!
//! The requests are those of `e2e_stdio.rs`'s Document workload (the `document` argument of
//! `investigate_feature` over the same 10,000-document catalog, 12 rotating prefixes), POSTed
//! to `/mcp` with `Content-Type: application/json` and `Accept: application/json,
//! text/event-stream`, in two protocol eras:
//!
//! - 2025-11-25: each connection is its own client: `initialize` first (its `Mcp-Session-Id`,
//!   when the server mints one, is echoed on every later request with `MCP-Protocol-Version:
//!   2025-11-25`), then `notifications/initialized` (202), then the completions.
//! - 2026-07-28: no handshake; every POST carries `MCP-Protocol-Version: 2026-07-28`,
//!   `Mcp-Method: completion/complete` and the `_meta` envelope (protocol version and client
//!   capabilities) in its body. Such a client has no connection state for `--open` to fill,
//!   so against rea it first opens the catalog with `open_binary` and names that binary
//!   session in every completion's `context.arguments.session` (one handle for all its
//!   connections).
//!
//! The first answer of every scenario (the empty prefix) must hold values, so a server that
//! answers the workload with empty completions fails the bench instead of looking fast.
//!
//! Answers may be JSON (`application/json`) or SSE (`text/event-stream`, the response in a
//! `data:` event), with a `Content-Length` or chunked; both are read.
//!
//! The client is a small HTTP/1.1 client written here over `std::net::TcpStream` (one thread,
//! `poll(2)` over the 64 connections): it adds no crate to the build, and a single thread keeps
//! the client's own cost low and off the server's cores on a small machine.
//!
//! The rea scenarios need a `rea serve` with `--http`; without it (`rea serve --help` does not
//! name it) they are skipped with a message, as is the rmcp peer when it does not build.
//! Run with `cargo bench --bench e2e_http`; `REA_BIN=/path/to/rea` measures another build,
//! `REA_BENCH_ONLY=<text>` runs only the scenarios whose name contains `<text>`.

use rea_testkit::e2e;

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use e2e::{Measured, Median, build_peer, document_request, document_request_2026, is_completion};

const WARM_UP: usize = 500;
const SEQUENTIAL: usize = 3_000;
const PIPELINED: usize = 6_000;
const CONNECTIONS: usize = 64;
/// The longest the bench waits for a server to listen or for any answer.
const TIME_OUT: Duration = Duration::from_secs(10);

/// Which server a scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Server {
    /// `rea serve --http ADDR:PORT --open CATALOG`.
    Rea,
    /// The rmcp peer, `--http ADDR:PORT --catalog CATALOG`.
    Rmcp,
    /// The rmcp peer answering with SSE streams (`--sse`), rmcp's default.
    RmcpSse,
}

/// Which protocol revision the clients of a scenario speak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Era {
    Y2025,
    Y2026,
}

struct Scenario {
    name: &'static str,
    server: Server,
    era: Era,
}

const REA_2025: &str = "rea, 2025-11-25 era";
const REA_2026: &str = "rea, 2026-07-28 era";
const RMCP_2025: &str = "rmcp peer, 2025-11-25 era";
const RMCP_2026: &str = "rmcp peer, 2026-07-28 era";
const RMCP_SSE: &str = "rmcp peer, SSE responses, 2025-11-25 era";

/// A server process listening on a loopback port.
struct Listening {
    child: Child,
    port: u16,
}

impl Listening {
    fn start(server: Server, executable: &Path, catalog: &Path) -> Listening {
        let port = free_port();
        let address = format!("127.0.0.1:{port}");
        let mut command = Command::new(executable);
        match server {
            Server::Rea => command
                .args(["serve", "--store", "memory", "--http", &address, "--open"])
                .arg(catalog),
            Server::Rmcp => command.args(["--http", &address, "--catalog"]).arg(catalog),
            Server::RmcpSse => command
                .args(["--http", &address, "--sse", "--catalog"])
                .arg(catalog),
        };
        // The server's log goes to a file, shown when it fails to start (rea announces its
        // address there on every start, which would only interleave with the table).
        let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e-bench/http-server.log");
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("the server's log file"))
            .spawn()
            .expect("the server starts");
        let started = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if let Some(status) = child.try_wait().expect("the server's status") {
                panic!(
                    "{} exited before listening ({status}): {}",
                    executable.display(),
                    std::fs::read_to_string(&log).unwrap_or_default()
                );
            }
            assert!(
                started.elapsed() < TIME_OUT,
                "the server listens on {address}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Listening { child, port }
    }

    fn stop(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|listener| listener.local_addr())
        .expect("a free loopback port")
        .port()
}

/// One HTTP response.
struct Response {
    status: u16,
    content_type: String,
    session: Option<String>,
    body: Vec<u8>,
}

impl Response {
    /// The JSON-RPC answer the response carries: its JSON body, or the `data:` event of an
    /// SSE body that holds a response (an `id` with `result` or `error`).
    fn message(&self) -> Value {
        assert_eq!(
            self.status,
            200,
            "HTTP {}: {}",
            self.status,
            String::from_utf8_lossy(&self.body)
        );
        if self.content_type.starts_with("text/event-stream") {
            let text = std::str::from_utf8(&self.body).expect("a UTF-8 event stream");
            return text
                .replace("\r\n", "\n")
                .split("\n\n")
                .filter_map(|event| {
                    let data: Vec<&str> = event
                        .lines()
                        .filter_map(|line| line.strip_prefix("data:"))
                        .map(|data| data.strip_prefix(' ').unwrap_or(data))
                        .collect();
                    serde_json::from_str::<Value>(&data.join("\n")).ok()
                })
                .find(|message| {
                    message.get("id").is_some()
                        && (message.get("result").is_some() || message.get("error").is_some())
                })
                .unwrap_or_else(|| panic!("no JSON-RPC response in the event stream: {text}"));
        }
        serde_json::from_slice(&self.body).unwrap_or_else(|error| {
            panic!(
                "a JSON body ({error}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Decodes a chunked body at the start of `data`: the body and the bytes it took, or `None`
/// while it is incomplete. Trailers are not expected.
fn dechunk(data: &[u8]) -> Option<(Vec<u8>, usize)> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let line_end = at + find(&data[at..], b"\r\n")?;
        let size_text = std::str::from_utf8(&data[at..line_end]).expect("a chunk size line");
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).expect("a hexadecimal chunk size");
        let chunk = line_end + 2;
        if data.len() < chunk + size + 2 {
            return None;
        }
        if size == 0 {
            return Some((body, chunk + 2));
        }
        body.extend_from_slice(&data[chunk..chunk + size]);
        at = chunk + size + 2;
    }
}

/// Takes one complete response off the front of `buffer`, when there is one.
fn take_response(buffer: &mut Vec<u8>) -> Option<Response> {
    let head_end = find(buffer, b"\r\n\r\n")?;
    let head = std::str::from_utf8(&buffer[..head_end]).expect("a UTF-8 response head");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("a status line: {head}"));
    let mut content_type = String::new();
    let mut session = None;
    let mut length = None;
    let mut chunked = false;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.to_ascii_lowercase().as_str() {
            "content-type" => content_type = value.to_ascii_lowercase(),
            "mcp-session-id" => session = Some(value.to_owned()),
            "content-length" => length = Some(value.parse::<usize>().expect("a length")),
            "transfer-encoding" => chunked = value.eq_ignore_ascii_case("chunked"),
            _ => {}
        }
    }
    let start = head_end + 4;
    let (body, end) = if chunked {
        let (body, taken) = dechunk(&buffer[start..])?;
        (body, start + taken)
    } else {
        let length = length.unwrap_or(0);
        if buffer.len() < start + length {
            return None;
        }
        (buffer[start..start + length].to_vec(), start + length)
    };
    buffer.drain(..end);
    Some(Response {
        status,
        content_type,
        session,
        body,
    })
}

/// One keep-alive connection of one client.
struct Connection {
    stream: TcpStream,
    buffer: Vec<u8>,
    host: String,
    era: Era,
    session: Option<String>,
}

impl Connection {
    /// Connects and, for a 2025-11-25 client, initializes.
    fn open(port: u16, era: Era) -> Connection {
        let stream = TcpStream::connect((Ipv4Addr::LOCALHOST, port)).expect("a connection");
        stream.set_nodelay(true).expect("TCP_NODELAY");
        stream
            .set_read_timeout(Some(TIME_OUT))
            .expect("a read time-out");
        let mut connection = Connection {
            stream,
            buffer: Vec::with_capacity(16 * 1024),
            host: format!("127.0.0.1:{port}"),
            era,
            session: None,
        };
        if era == Era::Y2025 {
            let initialize = json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize",
                "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": { "name": "e2e-http-bench", "version": "0" } } });
            connection.send(&initialize);
            let response = connection.receive();
            connection.session = response.session.clone();
            assert!(
                response.message()["result"]["protocolVersion"].is_string(),
                "initialize answered"
            );
            connection.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
            let accepted = connection.receive();
            assert_eq!(accepted.status, 202, "notifications/initialized accepted");
        }
        connection
    }

    /// Writes one POST of `message` (whole: a request is far smaller than a socket buffer).
    fn send(&mut self, message: &Value) {
        let body = message.to_string();
        let mut request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
            self.host,
            body.len()
        );
        let method = message["method"].as_str().unwrap_or_default();
        match self.era {
            Era::Y2025 if method != "initialize" => {
                request.push_str("MCP-Protocol-Version: 2025-11-25\r\n");
                if let Some(session) = &self.session {
                    request.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
                }
            }
            Era::Y2025 => {}
            Era::Y2026 => {
                request.push_str(&format!(
                    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
                ));
                let name = match method {
                    "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
                    "resources/read" => message["params"]["uri"].as_str(),
                    _ => None,
                };
                if let Some(name) = name {
                    request.push_str(&format!("Mcp-Name: {name}\r\n"));
                }
            }
        }
        request.push_str("\r\n");
        request.push_str(&body);
        let mut bytes = request.as_bytes();
        while !bytes.is_empty() {
            match self.stream.write(bytes) {
                Ok(0) => panic!("the server closed the connection"),
                Ok(written) => bytes = &bytes[written..],
                Err(error) if error.kind() == ErrorKind::WouldBlock => wait_writable(&self.stream),
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error) => panic!("writing a request: {error}"),
            }
        }
    }

    /// Reads what the socket holds now; `false` when nothing was there (a non-blocking socket
    /// with nothing to read, or the read time-out of a blocking one).
    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => panic!("the server closed a keep-alive connection"),
                Ok(read) => {
                    self.buffer.extend_from_slice(&chunk[..read]);
                    return true;
                }
                Err(error) if error.kind() == ErrorKind::Interrupted => {}
                Err(error)
                    if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) =>
                {
                    return false;
                }
                Err(error) => panic!("reading a response: {error}"),
            }
        }
    }

    /// Waits for the next whole response (blocking mode, bounded by the read time-out).
    fn receive(&mut self) -> Response {
        loop {
            if let Some(response) = take_response(&mut self.buffer) {
                return response;
            }
            assert!(self.fill(), "no answer within {TIME_OUT:?}");
        }
    }
}

/// Waits until `stream` can take more bytes.
fn wait_writable(stream: &TcpStream) {
    let mut fd = [libc::pollfd {
        fd: stream.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    }];
    poll(&mut fd);
}

/// `poll(2)` over `fds` with [`TIME_OUT`]; panics when nothing became ready in time.
fn poll(fds: &mut [libc::pollfd]) {
    loop {
        // SAFETY: `fds` is a valid, exclusively borrowed array of `pollfd` of the length given.
        let ready = unsafe {
            libc::poll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                TIME_OUT.as_millis() as libc::c_int,
            )
        };
        if ready > 0 {
            return;
        }
        let error = std::io::Error::last_os_error();
        assert!(
            ready < 0 && error.kind() == ErrorKind::Interrupted,
            "no answer within {TIME_OUT:?} ({error})"
        );
    }
}

/// The `i`th request of a scenario's clients, naming binary session `session` when given.
fn request(era: Era, i: usize, session: Option<&str>) -> Value {
    let mut request = match era {
        Era::Y2025 => document_request(i, &json!(i)),
        Era::Y2026 => document_request_2026(i, &json!(i)),
    };
    if let Some(session) = session {
        request["params"]["context"] = json!({ "arguments": { "session": session } });
    }
    request
}

/// Opens the catalog with `open_binary` as a 2026-07-28 client and returns the binary
/// session's handle. Such a client has no connection whose session `--open` could fill: it
/// names the session it opened on every request.
fn open_catalog_2026(port: u16, catalog: &Path) -> String {
    let mut connection = Connection::open(port, Era::Y2026);
    let mut call = json!({ "jsonrpc": "2.0", "id": "open", "method": "tools/call",
        "params": { "name": "open_binary", "arguments": { "path": catalog } } });
    call["params"]["_meta"] = e2e::envelope_2026();
    connection.send(&call);
    let answer = connection.receive().message();
    answer["result"]["structuredContent"]["session"]
        .as_str()
        .unwrap_or_else(|| panic!("open_binary answers a session handle: {answer}"))
        .to_owned()
}

fn run(executable: &Path, scenario: &Scenario, catalog: &Path) -> Measured {
    let server = Listening::start(scenario.server, executable, catalog);
    let handle = (scenario.server == Server::Rea && scenario.era == Era::Y2026)
        .then(|| open_catalog_2026(server.port, catalog));
    let session = handle.as_deref();
    let mut connection = Connection::open(server.port, scenario.era);
    for i in 0..WARM_UP {
        connection.send(&request(scenario.era, i, session));
        let answer = connection.receive().message();
        is_completion(&answer);
        if i == 0 {
            e2e::has_values(&answer);
        }
    }
    let mut latencies = Vec::with_capacity(SEQUENTIAL);
    for i in 0..SEQUENTIAL {
        let sent = Instant::now();
        connection.send(&request(scenario.era, i, session));
        let response = connection.receive();
        latencies.push(sent.elapsed());
        is_completion(&response.message());
    }
    latencies.sort();
    drop(connection);

    let mut connections: Vec<Connection> = (0..CONNECTIONS)
        .map(|_| Connection::open(server.port, scenario.era))
        .collect();
    for connection in &connections {
        connection
            .stream
            .set_nonblocking(true)
            .expect("a non-blocking socket");
    }
    let mut fds: Vec<libc::pollfd> = connections
        .iter()
        .map(|connection| libc::pollfd {
            fd: connection.stream.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let started = Instant::now();
    let mut sent = 0;
    let mut received = 0;
    for connection in &mut connections {
        connection.send(&request(scenario.era, sent, session));
        sent += 1;
    }
    while received < PIPELINED {
        poll(&mut fds);
        for (fd, connection) in fds.iter_mut().zip(&mut connections) {
            if std::mem::take(&mut fd.revents) == 0 {
                continue;
            }
            while connection.fill() {}
            while let Some(response) = take_response(&mut connection.buffer) {
                is_completion(&response.message());
                received += 1;
                if sent < PIPELINED {
                    connection.send(&request(scenario.era, sent, session));
                    sent += 1;
                }
            }
        }
    }
    let throughput = PIPELINED as f64 / started.elapsed().as_secs_f64();
    let (peak_kb, file_kb) = (
        e2e::peak_kb(server.child.id()),
        e2e::file_kb(server.child.id()),
    );
    drop(connections);
    server.stop();
    Measured {
        p50: e2e::percentile(&latencies, 0.50),
        p99: e2e::percentile(&latencies, 0.99),
        throughput,
        peak_kb,
        file_kb,
    }
}

/// Whether `binary serve` takes `--http` (the rea scenarios are skipped otherwise).
fn serves_http(binary: &Path) -> bool {
    Command::new(binary)
        .args(["serve", "--help"])
        .output()
        .is_ok_and(|output| String::from_utf8_lossy(&output.stdout).contains("--http"))
}

fn main() {
    let binary = std::env::var_os("REA_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_rea")));
    let runs: usize = std::env::var("REA_BENCH_RUNS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let data = Path::new(env!("CARGO_TARGET_TMPDIR")).join("e2e-bench");
    let catalog = e2e::document_catalog(&data);

    let mut scenarios = vec![
        Scenario {
            name: REA_2025,
            server: Server::Rea,
            era: Era::Y2025,
        },
        Scenario {
            name: REA_2026,
            server: Server::Rea,
            era: Era::Y2026,
        },
        Scenario {
            name: RMCP_2025,
            server: Server::Rmcp,
            era: Era::Y2025,
        },
        Scenario {
            name: RMCP_2026,
            server: Server::Rmcp,
            era: Era::Y2026,
        },
        Scenario {
            name: RMCP_SSE,
            server: Server::RmcpSse,
            era: Era::Y2025,
        },
    ];
    if let Ok(only) = std::env::var("REA_BENCH_ONLY") {
        scenarios.retain(|scenario| scenario.name.contains(only.as_str()));
    }
    let mut executables = Vec::new();
    if scenarios
        .iter()
        .any(|scenario| scenario.server == Server::Rea)
    {
        if serves_http(&binary) {
            executables.push((Server::Rea, binary.clone()));
        } else {
            println!(
                "{} serve has no --http option: the rea scenarios are skipped",
                binary.display()
            );
            scenarios.retain(|scenario| scenario.server != Server::Rea);
        }
    }
    let peer = |server: Server| matches!(server, Server::Rmcp | Server::RmcpSse);
    if scenarios.iter().any(|scenario| peer(scenario.server)) {
        match build_peer(&data.join("peers"), "rmcp", "rea-rmcp-peer") {
            Some(path) => {
                executables.push((Server::Rmcp, path.clone()));
                executables.push((Server::RmcpSse, path));
            }
            None => scenarios.retain(|scenario| !peer(scenario.server)),
        }
    }
    let executable = |server: Server| {
        executables
            .iter()
            .find(|(kind, _)| *kind == server)
            .map(|(_, path)| path.clone())
            .expect("every remaining scenario's server is there")
    };

    println!("rea serve over Streamable HTTP: {}", binary.display());
    println!("load average at start: {}", e2e::load_average());
    let mut measured: Vec<Vec<Measured>> = scenarios.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs.max(1) {
        for (scenario, runs) in scenarios.iter().zip(&mut measured) {
            runs.push(run(&executable(scenario.server), scenario, &catalog));
        }
    }
    println!(
        "| scenario | p50 | p99 | req/s, {CONNECTIONS} connections in flight | peak memory (of it from files) |"
    );
    println!("|---|---|---|---|---|");
    let medians: Vec<(&str, Median)> = scenarios
        .iter()
        .zip(measured)
        .map(|(scenario, runs)| (scenario.name, Median::of(runs)))
        .collect();
    for (name, median) in &medians {
        println!("{}", median.row(name));
    }
    println!("load average at end: {}", e2e::load_average());
    let find = |wanted: &str| {
        medians
            .iter()
            .find(|(name, _)| *name == wanted)
            .map(|(_, median)| median)
    };
    for (rea, rmcp, era) in [
        (REA_2025, RMCP_2025, "2025-11-25"),
        (REA_2026, RMCP_2026, "2026-07-28"),
    ] {
        if let (Some(rea), Some(rmcp)) = (find(rea), find(rmcp)) {
            println!("rea against the rmcp peer, {era}: {}", rea.against(rmcp));
        }
    }
    if let (Some(modern), Some(legacy)) = (find(REA_2026), find(REA_2025)) {
        println!(
            "rea, 2026-07-28 against 2025-11-25: {}",
            modern.change_from(legacy)
        );
    }
}
