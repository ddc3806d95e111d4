//! End-to-end benchmark of the real `rea serve` binary over pipes (issue "Completion at the
//! speed of the core").
//!
//! Each scenario starts the server, warms it up, then measures sequential round trips (p50,
//! p99) and throughput with 64 requests in flight, and reads the server's peak resident memory
//! (`VmHWM`). Every scenario runs `REA_BENCH_RUNS` times (default 3); the table gives medians.
//!
//! - `documents`: the `document` argument of `investigate_feature` over a 10,000-document
//!   catalog (90% ASCII identifiers, 10% Greek, CJK, accented and full-width names), 12
//!   rotating prefixes including the empty one.
//! - `procedures_libc`: the `procedure` argument of `trace_crash` on the system libc
//!   (exhaustive discovery, names offered), when present.
//! - `procedures_50k`: the same on a generated ELF of 50,000 functions (bounded discovery).
//! - `evidence`: the `evidence` argument of `verify_reconstruction` with 10,000 retained records.
//! - `prompts_get`: `investigate_feature` with all its arguments.
//! - `floor`: the document requests answered by the floor peer (`benches/peers/floor/`), a
//!   tiny Rust program that parses each request and answers a canned 100-value completion:
//!   the least any server over these pipes can cost. The bench builds it on demand with
//!   `cargo build --release` into `target/tmp/` (ignored); it is not part of the crate.
//!
//! Run with `cargo bench --bench e2e_stdio`. `REA_BIN=/path/to/rea` measures another build of
//! the server (for before/after comparisons); `REA_BENCH_ONLY=<text>` runs only the scenarios
//! whose name contains `<text>`.

#[path = "../tests/it/support/fixtures/mod.rs"]
#[allow(dead_code)]
mod fixtures;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const SEQUENTIAL: usize = 3_000;
const PIPELINED: usize = 6_000;
const IN_FLIGHT: usize = 64;
const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";

struct Peer {
    child: Child,
    input: std::process::ChildStdin,
    output: BufReader<std::process::ChildStdout>,
    line: String,
}

impl Peer {
    fn start(server: &Path, kind: Server, open: Option<&Path>) -> Peer {
        let mut command = Command::new(server);
        if kind == Server::Rea {
            command.arg("serve");
            if let Some(path) = open {
                command.arg("--open").arg(path);
            }
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the server starts");
        let mut peer = Peer {
            input: child.stdin.take().unwrap(),
            output: BufReader::new(child.stdout.take().unwrap()),
            child,
            line: String::new(),
        };
        peer.send(
            &json!({ "jsonrpc": "2.0", "id": "init", "method": "initialize",
            "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": { "name": "e2e-bench", "version": "0" } } }),
        );
        peer.recv();
        peer.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        peer
    }

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

    /// Peak resident memory of the server in kB.
    fn peak_kb(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmHWM:"))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|value| value.parse().ok())
            .unwrap_or(0)
    }

    fn stop(mut self) {
        drop(self.input);
        let _ = self.child.wait();
    }
}

/// Which server a scenario runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Server {
    /// `rea serve` (`REA_BIN` or the bench's own build).
    Rea,
    /// The floor peer of `benches/peers/floor/`.
    Floor,
}

/// Builds the floor peer (release) into the bench's temporary folder and returns its path.
fn build_floor(target: &Path) -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/peers/floor/Cargo.toml");
    let status = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--release", "--quiet", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "the floor peer builds");
    target.join("release/rea-floor-peer")
}

/// One scenario: how to start the server and which request to send for the `i`th round trip.
struct Scenario {
    name: &'static str,
    server: Server,
    open: Option<PathBuf>,
    prepare: fn(&mut Peer),
    request: fn(usize, &Value) -> Value,
    check: fn(&Value),
}

struct Measured {
    p50: Duration,
    p99: Duration,
    throughput: f64,
    peak_kb: u64,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn run(binary: &Path, scenario: &Scenario) -> Measured {
    let mut peer = Peer::start(binary, scenario.server, scenario.open.as_deref());
    (scenario.prepare)(&mut peer);
    for i in 0..500 {
        peer.send(&(scenario.request)(i, &json!(format!("warm-{i}"))));
        (scenario.check)(&peer.recv());
    }
    let mut latencies = Vec::with_capacity(SEQUENTIAL);
    for i in 0..SEQUENTIAL {
        let sent = Instant::now();
        peer.send(&(scenario.request)(i, &json!(i)));
        let answer = peer.recv();
        latencies.push(sent.elapsed());
        (scenario.check)(&answer);
    }
    latencies.sort();
    let started = Instant::now();
    let mut sent = 0;
    let mut received = 0;
    while received < PIPELINED {
        while sent < PIPELINED && sent - received < IN_FLIGHT {
            peer.send(&(scenario.request)(sent, &json!(sent)));
            sent += 1;
        }
        (scenario.check)(&peer.recv());
        received += 1;
    }
    let throughput = PIPELINED as f64 / started.elapsed().as_secs_f64();
    let peak_kb = peer.peak_kb();
    peer.stop();
    Measured {
        p50: percentile(&latencies, 0.50),
        p99: percentile(&latencies, 0.99),
        throughput,
        peak_kb,
    }
}

fn completion(id: &Value, prompt: &str, argument: &str, value: &str) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "completion/complete",
            "params": { "ref": { "type": "ref/prompt", "name": prompt },
                        "argument": { "name": argument, "value": value } } })
}

fn is_completion(answer: &Value) {
    assert!(
        answer["result"]["completion"]["values"].is_array(),
        "{answer}"
    );
}

/// The 10,000 document names: 90% ASCII identifiers, 10% other scripts.
fn document_names() -> Vec<String> {
    let others = [
        "Αρχείο",
        "σημείωση",
        "文档",
        "検索",
        "Café",
        "Ångström",
        "ＦＵＬＬ",
        "naïve",
        "Ελλάδα",
        "数据",
    ];
    let words = [
        "notes", "search", "index", "render", "sync", "cache", "parser", "Store", "view", "Model",
        "query", "export",
    ];
    (0..10_000)
        .map(|i| {
            if i % 10 == 9 {
                format!("{}_{i}", others[i % others.len()])
            } else {
                format!(
                    "{}{}_{i}",
                    words[i % words.len()],
                    words[(i / 12) % words.len()]
                )
            }
        })
        .collect()
}

const DOCUMENT_PREFIXES: [&str; 12] = [
    "", "n", "se", "ind", "Re", "SYNC", "cache9", "Αρ", "文", "cafe", "ｆｕ", "q",
];

/// The `i`th Document completion request, rotating through [`DOCUMENT_PREFIXES`].
fn document_request(i: usize, id: &Value) -> Value {
    completion(
        id,
        "investigate_feature",
        "document",
        DOCUMENT_PREFIXES[i % 12],
    )
}

fn catalog_of(names: &[String], path: &Path) {
    let documents: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            json!({ "name": name, "procedures": [{ "address": format!("{:#x}", 0x1000 + i * 16), "name": "main" }] })
        })
        .collect();
    let catalog = json!({ "schema": "rea.catalog", "version": 1, "documents": documents });
    std::fs::write(path, catalog.to_string()).expect("catalog written");
}

const PROCEDURE_PREFIXES: [&str; 12] = [
    "", "m", "str", "pthread_", "0x2", "mem", "__", "f", "get", "0x1", "_IO", "sig",
];

fn no_preparation(_: &mut Peer) {}

fn fill_ledger(peer: &mut Peer) {
    for id in 0..10_000 {
        peer.send(
            &json!({ "jsonrpc": "2.0", "id": format!("fill-{id}"), "method": "tools/call",
            "params": { "name": "list_documents", "arguments": {} } }),
        );
        if id >= IN_FLIGHT {
            peer.recv();
        }
    }
    for _ in 0..IN_FLIGHT {
        peer.recv();
    }
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
    std::fs::create_dir_all(&data).expect("bench data folder");
    let catalog = data.join("documents-10000.json");
    catalog_of(&document_names(), &catalog);
    let large = data.join("functions-50000.elf");
    std::fs::write(
        &large,
        fixtures::elf::build(&fixtures::Spec::numbered(50_000)).bytes,
    )
    .expect("ELF written");

    let mut scenarios = vec![
        Scenario {
            server: Server::Rea,
            name: "documents (10,000-document catalog)",
            open: Some(catalog.clone()),
            prepare: no_preparation,
            request: document_request,
            check: is_completion,
        },
        Scenario {
            server: Server::Rea,
            name: "procedures (generated 50,000-function ELF)",
            open: Some(large),
            prepare: no_preparation,
            request: |i, id| completion(id, "trace_crash", "procedure", PROCEDURE_PREFIXES[i % 12]),
            check: is_completion,
        },
        Scenario {
            server: Server::Rea,
            name: "evidence (10,000 records)",
            open: Some(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("tests/clients/fixtures/notes-catalog.json"),
            ),
            prepare: fill_ledger,
            request: |i, id| {
                let number = format!("ev-{:012}", (i * 7919) % 10_000 + 1);
                completion(
                    id,
                    "verify_reconstruction",
                    "evidence",
                    &number[..3 + i % 12],
                )
            },
            check: is_completion,
        },
        Scenario {
            server: Server::Rea,
            name: "prompts/get (all arguments)",
            open: Some(catalog),
            prepare: no_preparation,
            request: |_, id| {
                json!({ "jsonrpc": "2.0", "id": id, "method": "prompts/get",
                    "params": { "name": "investigate_feature", "arguments": {
                        "feature": "offline search", "document": "notesnotes_0",
                        "procedure": "main", "provider": "catalog" } } })
            },
            check: |answer| assert!(answer["result"]["messages"].is_array(), "{answer}"),
        },
    ];
    scenarios.push(Scenario {
        server: Server::Floor,
        name: "floor peer (the document requests)",
        open: None,
        prepare: no_preparation,
        request: document_request,
        check: is_completion,
    });
    if Path::new(LIBC).exists() {
        scenarios.insert(
            1,
            Scenario {
                server: Server::Rea,
                name: "procedures (system libc)",
                open: Some(PathBuf::from(LIBC)),
                prepare: no_preparation,
                request: |i, id| {
                    completion(id, "trace_crash", "procedure", PROCEDURE_PREFIXES[i % 12])
                },
                check: is_completion,
            },
        );
    }

    // `REA_BENCH_ONLY=evidence` runs the scenarios whose name contains that text.
    if let Ok(only) = std::env::var("REA_BENCH_ONLY") {
        scenarios.retain(|scenario| scenario.name.contains(only.as_str()));
    }
    println!("rea serve over pipes: {}", binary.display());
    println!(
        "load average at start: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    println!("| scenario | p50 | p99 | req/s, {IN_FLIGHT} in flight | peak memory |");
    println!("|---|---|---|---|---|");
    let floor = scenarios
        .iter()
        .any(|scenario| scenario.server == Server::Floor)
        .then(|| build_floor(&data.join("peers")));
    for scenario in &scenarios {
        let server = match (scenario.server, &floor) {
            (Server::Floor, Some(floor)) => floor,
            _ => &binary,
        };
        let mut measured: Vec<Measured> = (0..runs.max(1)).map(|_| run(server, scenario)).collect();
        let median = measured.len() / 2;
        measured.sort_by_key(|m| m.p50);
        let p50 = measured[median].p50;
        measured.sort_by_key(|m| m.p99);
        let p99 = measured[median].p99;
        measured.sort_by(|a, b| a.throughput.total_cmp(&b.throughput));
        let throughput = measured[median].throughput;
        let peak = measured.iter().map(|m| m.peak_kb).max().unwrap_or(0);
        println!(
            "| {} | {:.0} µs | {:.0} µs | {:.0} | {:.1} MB |",
            scenario.name,
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
            throughput,
            peak as f64 / 1024.0
        );
    }
    println!(
        "load average at end: {}",
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
}
