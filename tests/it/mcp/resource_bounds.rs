//! The real `rea serve` binary under a client that never reads its output: memory and threads
//! stay bounded (read from `/proc`), and once the client reads, every request is answered.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

/// `tools/list` answers are about 45 KB each: unbounded buffering of these would take 135 MB,
/// twice the bound below (6,000 took 12.5 s of the suite's time for the same claim).
const REQUESTS: usize = 3_000;

/// The stated bounds (crate docs, "Execution model").
const MAX_THREADS: u64 = 16;
const MAX_RESIDENT_KB: u64 = 64 * 1024;

fn status_field(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/{pid}/status"))
}

#[test]
fn a_client_that_stops_reading_cannot_grow_the_server() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
        .args(["serve", "--store", "memory"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("rea serve starts");
    let pid = child.id();
    let mut input = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let mut text = String::from(
            r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#,
        );
        text.push('\n');
        // Start every pool: a tool call, a completion (Document: through the provider pool).
        text.push_str(r#"{"jsonrpc":"2.0","id":"tool","method":"tools/call","params":{"name":"list_providers","arguments":{}}}"#);
        text.push('\n');
        text.push_str(r#"{"jsonrpc":"2.0","id":"complete","method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"trace_crash"},"argument":{"name":"document","value":""}}}"#);
        text.push('\n');
        for id in 0..REQUESTS {
            text.push_str(&format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n"
            ));
        }
        // Blocks while the server does not read: that is the backpressure.
        input.write_all(text.as_bytes()).unwrap();
        drop(input);
    });
    // Let the server fill every queue it has.
    std::thread::sleep(Duration::from_secs(2));
    let resident = status_field(pid, "VmRSS:");
    let threads = status_field(pid, "Threads:");
    assert!(
        resident <= MAX_RESIDENT_KB,
        "resident {resident} kB while the client does not read"
    );
    assert!(threads <= MAX_THREADS, "{threads} threads");
    eprintln!("while the client does not read: {resident} kB resident, {threads} threads");
    assert!(
        !writer.is_finished(),
        "the server stopped reading its input"
    );

    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut answers = 0;
    let mut line = String::new();
    while output.read_line(&mut line).unwrap() > 0 {
        answers += 1;
        line.clear();
    }
    writer.join().unwrap();
    assert_eq!(answers, REQUESTS + 3, "every request answered once");
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_closed_output_stops_the_server_reading_at_once() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
        .args(["serve", "--store", "memory"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rea serve starts");
    // The client closes the server's output before anything is written to it.
    drop(child.stdout.take());
    let mut input = child.stdin.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let init = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
    let lines = 200_000;
    let mut written = 0;
    let mut refused = false;
    if writeln!(input, "{init}").is_ok() {
        for id in 0..lines {
            if writeln!(
                input,
                "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"ping\"}}"
            )
            .is_err()
            {
                refused = true;
                break;
            }
            written += 1;
        }
    } else {
        refused = true;
    }
    assert!(
        refused,
        "the server read all {written} lines after its output closed"
    );
    let status = child.wait().unwrap();
    assert!(!status.success(), "exit status {status}");
    let mut log = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut log).unwrap();
    assert!(log.contains("closed the server's output"), "{log}");
}
