//! End-to-end benchmark: drives the built `rea serve` over stdio with a session holding 10,000
//! Evidence IDs and issues `completion/complete` requests for an Evidence argument.
//!
//! Reports sequential round-trip latency (p50, p99, max) and requests per second, and the
//! throughput of pipelined requests. Run with `cargo bench --bench e2e_stdio`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const EVIDENCE: usize = 10_000;
const SEQUENTIAL: usize = 5_000;
const PIPELINED: usize = 5_000;

struct Peer {
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    line: String,
}

impl Peer {
    fn send(&mut self, message: &Value) {
        let mut text = message.to_string();
        text.push('\n');
        self.input.write_all(text.as_bytes()).expect("server stdin");
    }

    fn recv(&mut self) -> Value {
        self.line.clear();
        self.output
            .read_line(&mut self.line)
            .expect("server stdout");
        serde_json::from_str(&self.line).expect("a JSON line")
    }
}

fn completion(id: usize, prefix: &str) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "completion/complete",
        "params": {
            "ref": { "type": "ref/prompt", "name": "verify_reconstruction" },
            "argument": { "name": "evidence", "value": prefix }
        }
    })
}

/// Prefixes a client would send while typing an Evidence ID.
fn prefix(i: usize) -> String {
    let id = format!("ev-{:012}", (i * 7919) % EVIDENCE + 1);
    id[..3 + i % 12].to_owned()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let catalog =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/fixtures/notes-catalog.json");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rea"))
        .args(["serve", "--open"])
        .arg(&catalog)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("rea serve starts");
    let mut peer = Peer {
        input: child.stdin.take().unwrap(),
        output: BufReader::new(child.stdout.take().unwrap()),
        line: String::new(),
    };
    peer.send(&json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": { "name": "e2e-bench", "version": "0" } } }));
    peer.recv();
    peer.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));

    // Fill the ledger: every successful list_documents call appends one Evidence record.
    for id in 0..EVIDENCE {
        peer.send(
            &json!({ "jsonrpc": "2.0", "id": format!("fill-{id}"), "method": "tools/call",
            "params": { "name": "list_documents", "arguments": {} } }),
        );
    }
    for _ in 0..EVIDENCE {
        let answer = peer.recv();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    let all = {
        peer.send(&completion(1, ""));
        peer.recv()
    };
    assert_eq!(
        all["result"]["completion"]["total"], EVIDENCE,
        "the ledger holds 10,000 IDs"
    );

    for i in 0..500 {
        peer.send(&completion(i, &prefix(i)));
        peer.recv();
    }
    let mut latencies = Vec::with_capacity(SEQUENTIAL);
    let started = Instant::now();
    for i in 0..SEQUENTIAL {
        let sent = Instant::now();
        peer.send(&completion(i, &prefix(i)));
        let answer = peer.recv();
        latencies.push(sent.elapsed());
        assert!(answer["result"]["completion"]["values"].is_array());
    }
    let sequential = started.elapsed();
    latencies.sort();

    let started = Instant::now();
    for i in 0..PIPELINED {
        peer.send(&completion(i, &prefix(i)));
    }
    for _ in 0..PIPELINED {
        peer.recv();
    }
    let pipelined = started.elapsed();

    drop(peer);
    let _ = child.wait();

    println!("rea serve, completion/complete over stdio, {EVIDENCE} Evidence IDs in the ledger");
    println!(
        "sequential: {SEQUENTIAL} requests, {:.0} req/s, p50 {:?}, p99 {:?}, max {:?}",
        SEQUENTIAL as f64 / sequential.as_secs_f64(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99),
        latencies.last().unwrap()
    );
    println!(
        "pipelined:  {PIPELINED} requests, {:.0} req/s",
        PIPELINED as f64 / pipelined.as_secs_f64()
    );
}
