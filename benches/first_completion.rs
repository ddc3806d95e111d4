//! The first `completion/complete` of a fresh `rea serve --open FILE`, measured from the wire
//! (issue "What a new user sees in the MCP Inspector": one took 2,407 ms, past the 2,000 ms
//! provider bound).
//!
//! Each run starts a new server on FILE (default `/bin/ls`), initializes it as a client would,
//! sends `notifications/initialized` and at once the completion of `trace_crash`'s `procedure`
//! with `0x1`, and times the answer from the moment the request is written to the moment its
//! line is read. Two clients: one that declares no roots, and one that declares `roots` and
//! answers `roots/list` with `[]` when it reads it (the MCP Inspector's default). The table
//! gives, per client, the median and the largest time, how many values the answers held and
//! how many answers said that a provider timed out.
//!
//! Run with `cargo bench --bench first_completion` (or build it with `--profile test` on a
//! small machine). `REA_BIN=/path/to/rea` measures another build of the server (for
//! before/after comparisons), `REA_BENCH_RUNS` sets the runs per client (default 10),
//! `REA_PROVIDER_TIMEOUT_MS` the server's `--provider-timeout-ms` (default: the server's, 2,000),
//! and the first argument the file to open.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// One run's outcome.
struct Run {
    took: Duration,
    values: usize,
    timed_out: bool,
}

fn run(program: &str, file: &str, timeout_ms: Option<&str>, roots: bool) -> Run {
    let mut command = Command::new(program);
    command.arg("serve").arg("--open").arg(file);
    if let Some(timeout_ms) = timeout_ms {
        command.arg("--provider-timeout-ms").arg(timeout_ms);
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("rea serve starts");
    let mut input = child.stdin.take().unwrap();
    let output = BufReader::new(child.stdout.take().unwrap());
    let (lines, received) = mpsc::channel::<(Instant, Value)>();
    std::thread::spawn(move || {
        for line in output.lines().map_while(Result::ok) {
            let message = serde_json::from_str(&line).expect("a JSON line");
            if lines.send((Instant::now(), message)).is_err() {
                break;
            }
        }
    });
    let capabilities = if roots {
        json!({ "roots": { "listChanged": true } })
    } else {
        json!({})
    };
    let mut send = |message: Value| {
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    };
    send(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": { "protocolVersion": "2025-11-25", "capabilities": capabilities,
                             "clientInfo": { "name": "first-completion-bench", "version": "0" } } }));
    let wait = Duration::from_secs(60);
    let (_, initialized) = received.recv_timeout(wait).expect("initialize answered");
    assert_eq!(initialized["id"], 1, "{initialized}");
    send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    send(
        json!({ "jsonrpc": "2.0", "method": "logging/setLevel", "id": 2,
                 "params": { "level": "warning" } }),
    );
    let sent = Instant::now();
    send(
        json!({ "jsonrpc": "2.0", "id": 3, "method": "completion/complete",
                 "params": { "ref": { "type": "ref/prompt", "name": "trace_crash" },
                             "argument": { "name": "procedure", "value": "0x1" } } }),
    );
    let mut timed_out = false;
    let outcome = loop {
        let (at, message) = received.recv_timeout(wait).expect("the server answers");
        if message["method"] == "roots/list" {
            send(json!({ "jsonrpc": "2.0", "id": message["id"], "result": { "roots": [] } }));
        } else if message["method"] == "notifications/message" {
            timed_out |= message["params"]["data"]
                .as_str()
                .is_some_and(|text| text.contains("did not answer within"));
        } else if message["id"] == 3 {
            let values = message["result"]["completion"]["values"]
                .as_array()
                .map_or(0, Vec::len);
            break Run {
                took: at - sent,
                values,
                timed_out,
            };
        }
    };
    drop(input);
    let _ = child.wait();
    outcome
}

fn main() {
    let program = std::env::var("REA_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_rea").into());
    let file = std::env::args()
        .skip(1)
        .find(|argument| !argument.starts_with('-'))
        .unwrap_or_else(|| "/bin/ls".to_owned());
    let runs: usize = std::env::var("REA_BENCH_RUNS")
        .ok()
        .and_then(|runs| runs.parse().ok())
        .unwrap_or(10);
    let timeout_ms = std::env::var("REA_PROVIDER_TIMEOUT_MS").ok();
    println!("first completion of a fresh `rea serve --open {file}` ({program}), {runs} runs each");
    println!("| client | median | largest | values (min-max) | timed out |");
    println!("|---|---|---|---|---|");
    for (name, roots) in [("no roots", false), ("roots, answers []", true)] {
        let mut measured: Vec<Run> = (0..runs)
            .map(|_| run(&program, &file, timeout_ms.as_deref(), roots))
            .collect();
        measured.sort_by_key(|run| run.took);
        let median = measured[measured.len() / 2].took;
        let largest = measured.last().map_or(Duration::ZERO, |run| run.took);
        let fewest = measured.iter().map(|run| run.values).min().unwrap_or(0);
        let most = measured.iter().map(|run| run.values).max().unwrap_or(0);
        let timed_out = measured.iter().filter(|run| run.timed_out).count();
        println!(
            "| {name} | {:.1} ms | {:.1} ms | {fewest}-{most} | {timed_out} of {runs} |",
            median.as_secs_f64() * 1e3,
            largest.as_secs_f64() * 1e3,
        );
    }
}
