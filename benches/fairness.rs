//! Fairness under load (issue 26): 64 hostile clients beside 8 well-behaved ones on one
//! `rea serve --http` (the release binary), all 2026-07-28 clients, each on its own keep-alive
//! TCP connection (so each is one client of the fair share of the tool threads).
//!
//! - A hostile client opens `/usr/bin` as a binary session and loops `inventory_artifacts` of
//!   `/usr/lib` (hashing files: long work) for the whole run.
//! - A well-behaved client opens `/bin/ls` and loops `read_bytes` of 64 bytes at the first
//!   procedure's address, with a 20 ms think time between calls.
//!
//! After a warm-up in which every hostile client has been answered once (so each is in its
//! loop), the well-behaved clients'
//! latencies are measured for `REA_FAIRNESS_SECS` seconds (default 20): p50, p99, max, and how
//! many answers arrived against how many were sent (every one must). The server runs with
//! `--max-http-connections 128` (72 connections are open), `--max-sessions 128` (72 binary
//! sessions) and `--store memory`.
//!
//! Run with `cargo bench --bench fairness`; `REA_BIN=/path/to/rea` measures another build
//! (e.g. the one before the fair share, for the before-and-after numbers in the README).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const HOSTILE: usize = 64;
const GOOD: usize = 8;
const WARM_UP_MAX: Duration = Duration::from_secs(300);
const THINK: Duration = Duration::from_millis(20);

fn rea() -> PathBuf {
    if let Some(path) = std::env::var_os("REA_BIN") {
        return PathBuf::from(path);
    }
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--bin", "rea"])
        .current_dir(&root)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the release build failed");
    root.join("target/release/rea")
}

/// Starts the server and returns it with its port.
fn start(program: &PathBuf) -> (Child, u16) {
    let mut child = Command::new(program)
        .args([
            "serve",
            "--http",
            "127.0.0.1:0",
            "--store",
            "memory",
            "--max-http-connections",
            "128",
            "--max-sessions",
            "128",
            "--root",
            "/usr",
            "--root",
            "/bin",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rea serve starts");
    let stderr = child.stderr.take().expect("stderr piped");
    let mut lines = BufReader::new(stderr).lines();
    let port = loop {
        let line = lines
            .next()
            .expect("the server says where it listens")
            .expect("stderr reads");
        if let Some(rest) = line.split("http://").nth(1) {
            let address = rest.trim_end_matches("/mcp");
            let port = address.rsplit(':').next().expect("a port");
            break port.parse::<u16>().expect("a port number");
        }
    };
    // Keep draining stderr so the server never blocks on it.
    thread::spawn(move || for _ in lines {});
    (child, port)
}

/// One 2026-07-28 client on one keep-alive connection.
struct Client {
    stream: BufReader<TcpStream>,
    next_id: u64,
}

impl Client {
    fn connect(port: u16) -> Client {
        let stream = TcpStream::connect(("127.0.0.1", port)).expect("connects");
        stream.set_nodelay(true).expect("nodelay");
        Client {
            stream: BufReader::new(stream),
            next_id: 1,
        }
    }

    /// Calls tool `name`; the answer's `result`.
    fn tool(&mut self, name: &str, arguments: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let body = json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": {
                "name": name,
                "arguments": arguments,
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            },
        })
        .to_string();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: tools/call\r\nMcp-Name: {name}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.stream
            .get_mut()
            .write_all(request.as_bytes())
            .expect("request sent");
        let answer: Value = serde_json::from_slice(&self.body()).expect("a JSON answer");
        answer["result"].clone()
    }

    /// The body of the next response (Content-Length or chunked; an SSE body's data line).
    fn body(&mut self) -> Vec<u8> {
        let mut length = None;
        let mut chunked = false;
        let mut head = String::new();
        loop {
            let mut line = String::new();
            self.stream.read_line(&mut line).expect("headers read");
            head.push_str(&line);
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            let lower = line.to_ascii_lowercase();
            if let Some(value) = lower.strip_prefix("content-length:") {
                length = value.trim().parse::<usize>().ok();
            }
            if lower.starts_with("transfer-encoding:") && lower.contains("chunked") {
                chunked = true;
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                let mut size = String::new();
                self.stream.read_line(&mut size).expect("chunk size");
                let size = usize::from_str_radix(size.trim(), 16).expect("hex size");
                let mut chunk = vec![0; size + 2];
                self.stream.read_exact(&mut chunk).expect("chunk");
                if size == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..size]);
            }
        } else {
            let length = length.unwrap_or_else(|| panic!("a length in {head:?}"));
            body = vec![0; length];
            self.stream.read_exact(&mut body).expect("body");
        }
        // An SSE answer: the JSON is on the last `data:` line.
        if body.starts_with(b"event") || body.starts_with(b"data") || body.starts_with(b":") {
            let text = String::from_utf8_lossy(&body).into_owned();
            let data = text
                .lines()
                .rev()
                .find_map(|line| line.strip_prefix("data:"))
                .expect("a data line")
                .trim()
                .to_owned();
            return data.into_bytes();
        }
        body
    }
}

fn open(client: &mut Client, path: &str) -> String {
    let opened = client.tool("open_binary", json!({ "path": path }));
    opened["structuredContent"]["session"]
        .as_str()
        .unwrap_or_else(|| panic!("{path} opens: {opened}"))
        .to_owned()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn main() {
    let seconds: u64 = std::env::var("REA_FAIRNESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let program = rea();
    let (mut server, port) = start(&program);
    let stop = Arc::new(AtomicBool::new(false));
    let hostile_calls = Arc::new(AtomicUsize::new(0));
    let mut hostile = Vec::new();
    for _ in 0..HOSTILE {
        let stop = Arc::clone(&stop);
        let calls = Arc::clone(&hostile_calls);
        hostile.push(thread::spawn(move || {
            let mut client = Client::connect(port);
            let session = open(&mut client, "/usr/bin/env");
            if stop.load(Ordering::Relaxed) {
                return;
            }
            while !stop.load(Ordering::Relaxed) {
                let page = client.tool(
                    "inventory_artifacts",
                    json!({ "session": session, "path": "/usr/lib" }),
                );
                assert!(page.is_object(), "every hostile call is answered");
                calls.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    // Warm-up: until every hostile client has been answered once (each is in its loop and has
    // been served: a fresh client counts as light until then, see the README), at most 5 min.
    let warm_until = Instant::now() + WARM_UP_MAX;
    while hostile_calls.load(Ordering::Relaxed) < HOSTILE && Instant::now() < warm_until {
        thread::sleep(Duration::from_millis(200));
    }
    let warmed = hostile_calls.load(Ordering::Relaxed);
    hostile_calls.store(0, Ordering::Relaxed);
    let latencies = Arc::new(Mutex::new(Vec::new()));
    let sent = Arc::new(AtomicUsize::new(0));
    let measure_until = Instant::now() + Duration::from_secs(seconds);
    let good: Vec<_> = (0..GOOD)
        .map(|_| {
            let latencies = Arc::clone(&latencies);
            let sent = Arc::clone(&sent);
            thread::spawn(move || {
                let mut client = Client::connect(port);
                let session = open(&mut client, "/bin/ls");
                let listed =
                    client.tool("list_procedures", json!({ "session": session, "limit": 1 }));
                let address = listed["structuredContent"]["procedures"][0]["address"]
                    .as_str()
                    .unwrap_or_else(|| panic!("a procedure: {listed}"))
                    .to_owned();
                let mut mine = Vec::new();
                while Instant::now() < measure_until {
                    sent.fetch_add(1, Ordering::Relaxed);
                    let began = Instant::now();
                    let read = client.tool(
                        "read_bytes",
                        json!({ "session": session, "address": address, "length": 64 }),
                    );
                    mine.push(began.elapsed());
                    assert_eq!(read["isError"], json!(false), "read_bytes answers: {read}");
                    thread::sleep(THINK);
                }
                latencies.lock().expect("latencies").extend(mine);
            })
        })
        .collect();
    for client in good {
        client.join().expect("a well-behaved client ran");
    }
    stop.store(true, Ordering::Relaxed);
    let hostile_during = hostile_calls.load(Ordering::Relaxed);
    let _ = server.kill();
    let _ = server.wait();
    let mut latencies = latencies.lock().expect("latencies").clone();
    latencies.sort();
    let sent = sent.load(Ordering::Relaxed);
    println!(
        "fairness: {HOSTILE} hostile clients (inventory_artifacts of /usr/lib in a loop) beside \
         {GOOD} well-behaved (read_bytes, 20 ms think time), {seconds} s, {}",
        program.display()
    );
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
    let spread = match latencies.last() {
        Some(&max) => format!(
            "p50 {}, p99 {}, max {}",
            ms(percentile(&latencies, 0.50)),
            ms(percentile(&latencies, 0.99)),
            ms(max)
        ),
        // Their open_binary or first list_procedures waited the whole window.
        None => "none answered within the window".to_owned(),
    };
    println!(
        "well-behaved read_bytes: {} answered of {sent} sent; {spread}; hostile inventories answered: {hostile_during} (warm-up: {warmed})",
        latencies.len(),
    );
    // The hostile threads are blocked in calls to a server that is gone: not joined.
    drop(hostile);
}
