//! Soak: 100,000 mixed messages through the real `rea serve` (requests of every kind,
//! notifications, cancellations, invalid lines), written as fast as the server takes them while
//! another thread reads the answers. Reports the throughput and the server's peak resident
//! memory and thread count, sampled from `/proc` every 5 ms, and checks that every request
//! that was not cancelled is answered exactly once.
//!
//! Run with `cargo bench --bench soak` (`REA_BIN=/path/to/rea` measures another build).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const MESSAGES: usize = 100_000;

/// One message of the mix: its line, and the id it must be answered under (if a request).
fn message(i: usize) -> (String, Option<usize>) {
    let request = |method: &str, params: &str| {
        (
            format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"{method}","params":{params}}}"#),
            Some(i),
        )
    };
    match i % 16 {
        0..=2 => request("ping", "{}"),
        3 | 4 => request(
            "completion/complete",
            r#"{"ref":{"type":"ref/prompt","name":"investigate_feature"},"argument":{"name":"document","value":"N"}}"#,
        ),
        5 | 6 => request(
            "completion/complete",
            r#"{"ref":{"type":"ref/prompt","name":"trace_crash"},"argument":{"name":"procedure","value":"0x1"}}"#,
        ),
        7 => request(
            "completion/complete",
            r#"{"ref":{"type":"ref/prompt","name":"verify_reconstruction"},"argument":{"name":"evidence","value":"ev-"}}"#,
        ),
        8 => request(
            "prompts/get",
            r#"{"name":"trace_crash","arguments":{"symptom":"crash at 0x1000"}}"#,
        ),
        9 => request("prompts/list", "{}"),
        10 => request(
            "tools/call",
            r#"{"name":"list_evidence","arguments":{"limit":5}}"#,
        ),
        11 => request("tools/call", r#"{"name":"list_documents","arguments":{}}"#),
        12 => (
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{}}}}}"#,
                i - 1
            ),
            None,
        ),
        13 => (r#"{"jsonrpc":"2.0","id":"#.to_owned(), None),
        14 => request("no/such/method", "{}"),
        _ => (
            r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#.to_owned(),
            None,
        ),
    }
}

fn status(pid: u32) -> (u64, u64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|value| value.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("Threads:"))
}

fn main() {
    let binary = std::env::var_os("REA_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_rea")));
    let catalog =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/fixtures/notes-catalog.json");
    let mut child = Command::new(&binary)
        .args(["serve", "--store", "memory", "--open"])
        .arg(&catalog)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("rea serve starts");
    let pid = child.id();
    let input = child.stdin.take().unwrap();
    let output = child.stdout.take().unwrap();

    let mut expected: HashMap<usize, bool> = HashMap::new();
    let mut lines = Vec::with_capacity(MESSAGES + 2);
    lines.push(
        r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"0"}}}"#.to_owned(),
    );
    lines.push(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned());
    for i in 0..MESSAGES {
        let (line, id) = message(i);
        if let Some(id) = id {
            expected.insert(id, false);
        }
        if i % 16 == 12 {
            // The request just before a cancellation may go unanswered.
            expected.insert(i - 1, true);
        }
        lines.push(line);
    }

    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let (mut peak_kb, mut peak_threads) = (0, 0);
            while !done.load(Ordering::Acquire) {
                let (kb, threads) = status(pid);
                peak_kb = peak_kb.max(kb);
                peak_threads = peak_threads.max(threads);
                std::thread::sleep(Duration::from_millis(5));
            }
            (peak_kb, peak_threads)
        })
    };
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        let mut input = BufWriter::new(input);
        for line in lines {
            input.write_all(line.as_bytes()).unwrap();
            input.write_all(b"\n").unwrap();
        }
    });
    let mut answers: HashMap<String, usize> = HashMap::new();
    for line in BufReader::new(output).lines() {
        let line = line.expect("server output");
        let message: serde_json::Value = serde_json::from_str(&line).expect("JSON lines");
        if message.get("method").is_none() {
            *answers.entry(message["id"].to_string()).or_default() += 1;
        }
    }
    writer.join().unwrap();
    let elapsed = started.elapsed();
    assert!(
        child.wait().unwrap().success(),
        "clean exit at end of input"
    );
    done.store(true, Ordering::Release);
    let (peak_kb, peak_threads) = sampler.join().unwrap();

    for (id, may_be_cancelled) in &expected {
        let answered = answers.get(&id.to_string()).copied().unwrap_or(0);
        if *may_be_cancelled {
            assert!(answered <= 1, "request {id} answered {answered} times");
        } else {
            assert_eq!(answered, 1, "request {id} answered exactly once");
        }
    }
    println!("rea serve soak: {}", binary.display());
    println!(
        "{MESSAGES} mixed messages in {:.2} s ({:.0} messages/s); peak resident memory {:.1} MB, peak threads {peak_threads}; every request not cancelled answered exactly once",
        elapsed.as_secs_f64(),
        MESSAGES as f64 / elapsed.as_secs_f64(),
        peak_kb as f64 / 1024.0
    );
}
