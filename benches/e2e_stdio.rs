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
//! - `documents, 2026-07-28 era`: the same requests with no `initialize`, each carrying the
//!   2026-07-28 `_meta` envelope (protocol version and client capabilities), as a client of
//!   that revision sends them.
//! - `floor`: the document requests answered by the floor peer (`benches/peers/floor/`), a
//!   tiny Rust program that parses each request and answers a canned 100-value completion:
//!   the least any server over these pipes can cost.
//! - `rmcp`: the document requests answered by the rmcp peer (`benches/peers/rmcp/`), the
//!   official Rust SDK over the same catalog with its matching keys precomputed.
//! - the documents, floor and rmcp scenarios again with the server's stdin and stdout on Unix
//!   socket pairs instead of pipes: what Node's `child_process` gives a server it starts, so
//!   what Claude Desktop, the Inspector and the TypeScript SDK's clients give `rea serve`.
//!
//! The bench builds the peers on demand with `cargo build --release` into `target/tmp/`
//! (ignored); they are not part of the crate. A peer that does not build is reported and its
//! scenario skipped. After the table, the bench compares the medians: rea's Document p50 and
//! throughput against each peer's, and the 2026-07-28 run against the 2025-11-25 one.
//!
//! Run with `cargo bench --bench e2e_stdio`. `REA_BIN=/path/to/rea` measures another build of
//! the server (for before/after comparisons); `REA_BENCH_ONLY=<text>` runs only the scenarios
//! whose name contains `<text>`.

use rea_testkit::{e2e, fixtures};

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use serde_json::{Value, json};

use e2e::{
    Measured, Median, build_peer, completion, document_request, document_request_2026,
    is_completion, load_average, percentile,
};

const SEQUENTIAL: usize = 3_000;
const PIPELINED: usize = 6_000;
const IN_FLIGHT: usize = 64;
const LIBC: &str = "/usr/lib/x86_64-linux-gnu/libc.so.6";

struct Peer {
    child: Child,
    input: Box<dyn Write>,
    output: BufReader<Box<dyn Read>>,
    line: String,
}

impl Peer {
    fn start(server: &Path, scenario: &Scenario) -> Peer {
        let (kind, era, open) = (scenario.server, scenario.era, scenario.open.as_deref());
        let mut command = Command::new(server);
        match kind {
            Server::Rea => {
                command.args(["serve", "--store", "memory"]);
                if let Some(path) = open {
                    command.arg("--open").arg(path);
                }
            }
            Server::Rmcp => {
                command.arg("--stdio");
                if let Some(path) = open {
                    command.arg("--catalog").arg(path);
                }
            }
            Server::Floor => {}
        }
        command.stderr(Stdio::inherit());
        let (child, input, output): (Child, Box<dyn Write>, Box<dyn Read>) = match scenario.streams
        {
            Streams::Pipes => {
                let mut child = command
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("the server starts");
                let input = Box::new(child.stdin.take().unwrap());
                let output = Box::new(child.stdout.take().unwrap());
                (child, input, output)
            }
            Streams::SocketPairs => {
                let (input, server_input) = UnixStream::pair().expect("a socket pair");
                let (output, server_output) = UnixStream::pair().expect("a socket pair");
                let child = command
                    .stdin(OwnedFd::from(server_input))
                    .stdout(OwnedFd::from(server_output))
                    .spawn()
                    .expect("the server starts");
                (child, Box::new(input), Box::new(output))
            }
        };
        let mut peer = Peer {
            input,
            output: BufReader::new(output),
            child,
            line: String::new(),
        };
        if era == Era::Y2026 {
            // A 2026-07-28 client has no handshake: every request carries its envelope.
            return peer;
        }
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
        e2e::peak_kb(self.child.id())
    }

    /// Resident memory of the server mapped from files, in kB.
    fn file_kb(&self) -> u64 {
        e2e::file_kb(self.child.id())
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
    /// The rmcp peer of `benches/peers/rmcp/`, started with `--stdio --catalog`.
    Rmcp,
}

impl Server {
    /// The peer's folder under `benches/peers/` and its executable's name.
    fn peer(self) -> Option<(&'static str, &'static str)> {
        match self {
            Server::Rea => None,
            Server::Floor => Some(("floor", "rea-floor-peer")),
            Server::Rmcp => Some(("rmcp", "rea-rmcp-peer")),
        }
    }
}

/// What the server's stdin and stdout are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Streams {
    /// Pipes, as Rust's `Command` and Python's `subprocess` connect a child.
    Pipes,
    /// Unix socket pairs, as Node's `child_process` connects one (so Claude Desktop, the
    /// Inspector and the TypeScript SDK).
    SocketPairs,
}

/// Which protocol revision the client of a scenario speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Era {
    /// 2025-11-25: `initialize` first, then plain requests.
    Y2025,
    /// 2026-07-28: no handshake, the `_meta` envelope on every request.
    Y2026,
}

/// One scenario: how to start the server and which request to send for the `i`th round trip.
struct Scenario {
    name: &'static str,
    server: Server,
    streams: Streams,
    era: Era,
    open: Option<PathBuf>,
    prepare: fn(&mut Peer),
    request: fn(usize, &Value) -> Value,
    check: fn(&Value),
}

fn run(binary: &Path, scenario: &Scenario) -> Measured {
    let mut peer = Peer::start(binary, scenario);
    (scenario.prepare)(&mut peer);
    for i in 0..500 {
        peer.send(&(scenario.request)(i, &json!(format!("warm-{i}"))));
        let answer = peer.recv();
        (scenario.check)(&answer);
        // The first prefix of every completion workload matches candidates.
        if i == 0 && answer["result"].get("completion").is_some() {
            e2e::has_values(&answer);
        }
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
    let (peak_kb, file_kb) = (peer.peak_kb(), peer.file_kb());
    peer.stop();
    Measured {
        p50: percentile(&latencies, 0.50),
        p99: percentile(&latencies, 0.99),
        throughput,
        peak_kb,
        file_kb,
    }
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
    let catalog = e2e::document_catalog(&data);
    let large = data.join("functions-50000.elf");
    std::fs::write(
        &large,
        fixtures::elf::build(&fixtures::Spec::numbered(50_000)).bytes,
    )
    .expect("ELF written");

    let mut scenarios = vec![
        Scenario {
            server: Server::Rea,
            era: Era::Y2025,
            streams: Streams::Pipes,
            name: DOCUMENTS,
            open: Some(catalog.clone()),
            prepare: no_preparation,
            request: document_request,
            check: is_completion,
        },
        Scenario {
            server: Server::Rea,
            era: Era::Y2026,
            streams: Streams::Pipes,
            name: DOCUMENTS_2026,
            open: Some(catalog.clone()),
            prepare: no_preparation,
            request: document_request_2026,
            check: is_completion,
        },
        Scenario {
            server: Server::Rea,
            era: Era::Y2025,
            streams: Streams::Pipes,
            name: "procedures (generated 50,000-function ELF)",
            open: Some(large),
            prepare: no_preparation,
            request: |i, id| completion(id, "trace_crash", "procedure", PROCEDURE_PREFIXES[i % 12]),
            check: is_completion,
        },
        Scenario {
            server: Server::Rea,
            era: Era::Y2025,
            streams: Streams::Pipes,
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
            era: Era::Y2025,
            streams: Streams::Pipes,
            name: "prompts/get (all arguments)",
            open: Some(catalog.clone()),
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
        era: Era::Y2025,
        streams: Streams::Pipes,
        name: FLOOR,
        open: None,
        prepare: no_preparation,
        request: document_request,
        check: is_completion,
    });
    scenarios.push(Scenario {
        server: Server::Rmcp,
        era: Era::Y2025,
        streams: Streams::Pipes,
        name: RMCP,
        open: Some(catalog.clone()),
        prepare: no_preparation,
        request: document_request,
        check: is_completion,
    });
    // The Document workload again over socket pairs, the streams Node's clients give a server.
    for (server, name, open) in [
        (Server::Rea, DOCUMENTS_SOCKETS, Some(catalog.clone())),
        (Server::Floor, FLOOR_SOCKETS, None),
        (Server::Rmcp, RMCP_SOCKETS, Some(catalog.clone())),
    ] {
        scenarios.push(Scenario {
            server,
            era: Era::Y2025,
            streams: Streams::SocketPairs,
            name,
            open,
            prepare: no_preparation,
            request: document_request,
            check: is_completion,
        });
    }
    if Path::new(LIBC).exists() {
        scenarios.insert(
            2,
            Scenario {
                server: Server::Rea,
                era: Era::Y2025,
                streams: Streams::Pipes,
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
    // Each peer is built once, before the table; one that does not build drops its scenarios.
    let mut executables: Vec<(Server, PathBuf)> = vec![(Server::Rea, binary.clone())];
    for server in [Server::Floor, Server::Rmcp] {
        let wanted = scenarios.iter().any(|scenario| scenario.server == server);
        if let (true, Some((folder, executable))) = (wanted, server.peer()) {
            match build_peer(&data.join("peers"), folder, executable) {
                Some(path) => executables.push((server, path)),
                None => scenarios.retain(|scenario| scenario.server != server),
            }
        }
    }
    let executable = |server: Server| {
        executables
            .iter()
            .find(|(kind, _)| *kind == server)
            .map(|(_, path)| path.clone())
            .expect("every remaining scenario's server is built")
    };
    println!("rea serve over pipes: {}", binary.display());
    println!("load average at start: {}", load_average());
    // Rounds: every scenario once per round, so a change in the machine's load during the run
    // reaches all of them alike instead of one scenario's runs.
    let mut measured: Vec<Vec<Measured>> = scenarios.iter().map(|_| Vec::new()).collect();
    for _ in 0..runs.max(1) {
        for (scenario, runs) in scenarios.iter().zip(&mut measured) {
            runs.push(run(&executable(scenario.server), scenario));
        }
    }
    println!(
        "| scenario | p50 | p99 | req/s, {IN_FLIGHT} in flight | peak memory (of it from files) |"
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
    println!("load average at end: {}", load_average());
    let find = |wanted: &str| {
        medians
            .iter()
            .find(|(name, _)| *name == wanted)
            .map(|(_, median)| median)
    };
    let comparisons = [
        ("documents", DOCUMENTS, FLOOR, RMCP),
        (
            "documents over socket pairs",
            DOCUMENTS_SOCKETS,
            FLOOR_SOCKETS,
            RMCP_SOCKETS,
        ),
    ];
    for (what, rea, floor, rmcp) in comparisons {
        for (peer, label) in [(floor, "floor"), (rmcp, "rmcp")] {
            if let (Some(rea), Some(peer)) = (find(rea), find(peer)) {
                println!("{what} against the {label} peer: {}", rea.against(peer));
            }
        }
    }
    if let (Some(rea), Some(modern)) = (find(DOCUMENTS), find(DOCUMENTS_2026)) {
        println!(
            "documents, 2026-07-28 against 2025-11-25: {}",
            modern.change_from(rea)
        );
    }
}

/// The scenario names the comparisons after the table look up.
const DOCUMENTS: &str = "documents (10,000-document catalog)";
const DOCUMENTS_2026: &str = "documents, 2026-07-28 era (10,000-document catalog)";
const FLOOR: &str = "floor peer (the document requests)";
const RMCP: &str = "rmcp peer, stdio (the document requests)";
const DOCUMENTS_SOCKETS: &str = "documents over socket pairs (10,000-document catalog)";
const FLOOR_SOCKETS: &str = "floor peer over socket pairs (the document requests)";
const RMCP_SOCKETS: &str = "rmcp peer, stdio over socket pairs (the document requests)";
