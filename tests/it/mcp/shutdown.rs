//! SIGTERM and SIGINT stop the real `rea serve` gracefully (issue 26): no new work, requests
//! in flight finish within `--shutdown-grace-secs`, those still running then are answered
//! with a `-32000` error, and the process exits 0. Every request gets an answer.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::http::HttpServer;

/// Procedures in the catalog the slow requests open when some must still run at the end of
/// the grace: parsing it takes a while (9 opens over HTTP, about 3 s on 2 idle cores).
const PROCEDURES: usize = 600_000;

/// Procedures in the catalog of the requests that must finish within the default grace
/// (10 s): a third of [`PROCEDURES`]. With the larger catalog, a suite run beside a build on 2
/// cores took more than 10 s for the 9 HTTP opens, and the grace ended the last one.
const PROCEDURES_WITHIN_GRACE: usize = 200_000;

fn slow_catalog(procedures: usize) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let (paths, _) = rea_testkit::server_process::write_catalogs(dir.path(), procedures, 1);
    let path = paths[0].display().to_string();
    (dir, path)
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// Waits for `child` to exit, at most `limit`; its exit code.
fn exit_code(child: &mut Child, limit: Duration) -> Option<i32> {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn grace_args(grace_secs: Option<u64>) -> Vec<String> {
    match grace_secs {
        Some(secs) => vec!["--shutdown-grace-secs".into(), secs.to_string()],
        None => Vec::new(),
    }
}

/// Whether `answer` is a result, or the error of a request the stop did not let finish.
fn finished_or_stopped(answer: &Value) -> &'static str {
    if answer.get("result").is_some() {
        return "finished";
    }
    assert_eq!(answer["error"]["code"], -32000, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("shutting down"), "{message}");
    assert!(message.contains("--shutdown-grace-secs"), "{message}");
    "stopped"
}

fn open_request(id: u64, path: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "open_binary", "arguments": {"path": path}}})
}

/// `rea serve` over stdio: the answers to `requests` slow opens sent before `signal`;
/// `grace_secs` `None` leaves `--shutdown-grace-secs` at its default (10 s).
fn stdio_round(
    signal_name: &str,
    grace_secs: Option<u64>,
    requests: u64,
    procedures: usize,
) -> (Vec<Value>, Option<i32>) {
    let (_dir, catalog) = slow_catalog(procedures);
    let mut child = Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
        .args(["serve", "--store", "memory"])
        .args(grace_args(grace_secs))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("rea serve starts");
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "shutdown-tests", "version": "0"}}});
    writeln!(input, "{initialize}").unwrap();
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    writeln!(
        input,
        "{}",
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
    )
    .unwrap();
    for id in 1..=requests {
        writeln!(input, "{}", open_request(id, &catalog)).unwrap();
    }
    input.flush().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, signal_name);
    let mut answers = Vec::new();
    loop {
        line.clear();
        if output.read_line(&mut line).unwrap() == 0 {
            break;
        }
        let message: Value = serde_json::from_str(&line).unwrap();
        if message.get("id").is_some() {
            answers.push(message);
        }
    }
    // stdin stays open all along: the signal alone stops the server.
    let code = exit_code(&mut child, Duration::from_secs(30));
    drop(input);
    (answers, code)
}

fn assert_every_request_answered_once(answers: &[Value], requests: u64) -> Vec<&'static str> {
    let mut ids: Vec<u64> = answers.iter().filter_map(|a| a["id"].as_u64()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=requests).collect::<Vec<_>>(), "{answers:?}");
    answers.iter().map(finished_or_stopped).collect()
}

#[test]
fn sigterm_lets_stdio_requests_in_flight_finish_and_exits_0() {
    let (answers, code) = stdio_round("TERM", None, 4, PROCEDURES_WITHIN_GRACE);
    let outcomes = assert_every_request_answered_once(&answers, 4);
    assert_eq!(code, Some(0));
    assert!(outcomes.iter().all(|o| *o == "finished"), "{outcomes:?}");
}

#[test]
fn past_the_grace_sigint_answers_what_still_runs_and_exits_0() {
    let started = Instant::now();
    let (answers, code) = stdio_round("INT", Some(0), 6, PROCEDURES);
    let outcomes = assert_every_request_answered_once(&answers, 6);
    assert_eq!(code, Some(0));
    assert!(outcomes.contains(&"stopped"), "{outcomes:?}");
    eprintln!("stdio, no grace: {outcomes:?} in {:?}", started.elapsed());
}

/// `rea serve --http`: the answers to `requests` slow 2026 opens sent before SIGTERM.
async fn http_round(
    grace_secs: Option<u64>,
    requests: u64,
    procedures: usize,
) -> (Vec<Value>, Option<i32>) {
    let (_dir, catalog) = slow_catalog(procedures);
    let mut child = Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
        .args(["serve", "--store", "memory", "--http", "127.0.0.1:0"])
        .args(["--max-sessions", "32"])
        .args(grace_args(grace_secs))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rea serve --http starts");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .rsplit(' ')
        .next()
        .unwrap()
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap_or_else(|_| panic!("an address in {line:?}"));
    std::thread::spawn(move || for _ in stderr.lines() {});
    let http = Arc::new(HttpServer::at(addr));
    let mut sent = tokio::task::JoinSet::new();
    for id in 1..=requests {
        let (http, catalog) = (Arc::clone(&http), catalog.clone());
        sent.spawn(async move {
            let params = json!({"name": "open_binary", "arguments": {"path": catalog}});
            http.modern(id, "tools/call", params).await
        });
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    signal(&child, "TERM");
    let mut answers = Vec::new();
    while let Some(reply) = sent.join_next().await {
        let reply = reply.expect("every request is answered");
        answers.push(reply.answer());
    }
    let code = exit_code(&mut child, Duration::from_secs(30));
    // After the stop, nothing is accepted.
    assert!(tokio::net::TcpStream::connect(addr).await.is_err());
    (answers, code)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_http_requests_in_flight_finish_and_exits_0() {
    let (answers, code) = http_round(None, 9, PROCEDURES_WITHIN_GRACE).await;
    let outcomes = assert_every_request_answered_once(&answers, 9);
    assert_eq!(code, Some(0));
    assert!(outcomes.iter().all(|o| *o == "finished"), "{outcomes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_grace_http_answers_what_still_runs_and_exits_0() {
    let (answers, code) = http_round(Some(0), 9, PROCEDURES).await;
    let outcomes = assert_every_request_answered_once(&answers, 9);
    assert_eq!(code, Some(0));
    assert!(outcomes.contains(&"stopped"), "{outcomes:?}");
}
