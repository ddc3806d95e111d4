//! The real `rea serve` over every kind of standard stream a client gives it: pipes (Rust,
//! Python), socket pairs (Node's `child_process`, so Claude Desktop and the Inspector), and a
//! regular file (`rea serve < requests.jsonl > answers.jsonl`), which cannot be polled and
//! is served on dedicated threads. Each answers the same session of requests, exits cleanly at
//! end of input, and leaves the file status flags of the streams it was given as it found them
//! (their file descriptions are shared with the client).

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};

use rustix::fs::OFlags;
use serde_json::{Value, json};

/// The requests of one short session, one JSON line each, and the ids that must be answered.
fn session_lines() -> (String, Vec<i64>) {
    let messages = [
        json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": { "protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": { "name": "stdio-kinds", "version": "0" } } }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
        json!({ "jsonrpc": "2.0", "id": 2, "method": "ping" }),
        json!({ "jsonrpc": "2.0", "id": 3, "method": "completion/complete",
                "params": { "ref": { "type": "ref/prompt", "name": "investigate_feature" },
                            "argument": { "name": "provider", "value": "" } } }),
        json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/list" }),
    ];
    let text = messages.iter().map(|m| format!("{m}\n")).collect();
    (text, vec![1, 2, 3, 4])
}

/// Checks that `output` answers every id of the session once, each with a result.
fn assert_answers(output: &str, ids: &[i64]) {
    let answers: Vec<Value> = output
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .filter(|message: &Value| message.get("id").is_some())
        .collect();
    let mut answered: Vec<i64> = answers.iter().map(|a| a["id"].as_i64().unwrap()).collect();
    answered.sort_unstable();
    assert_eq!(answered, ids, "{output}");
    for answer in &answers {
        assert!(answer.get("result").is_some(), "{answer}");
    }
}

fn rea_serve() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rea-under-test"));
    command
        .args(["serve", "--store", "memory"])
        .stderr(Stdio::null());
    command
}

/// The names of the threads of process `pid`.
fn thread_names(pid: u32) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .collect()
}

/// Whether the server reads its stdin on the dedicated thread (the blocking path).
fn reads_on_a_thread(pid: u32) -> bool {
    thread_names(pid).iter().any(|name| name == "rea-stdin")
}

fn flags(fd: impl AsFd) -> OFlags {
    rustix::fs::fcntl_getfl(fd).unwrap()
}

/// Serves the session over `server_input`/`server_output` (copies of both are kept here, as a
/// client that shares them would), written to `client_input` and read from `client_output`;
/// checks the answers, that stdin was polled, the clean exit and the flags afterwards.
fn serves_polled_and_puts_flags_back(
    (server_input, mut client_input): (OwnedFd, impl Write),
    (server_output, client_output): (OwnedFd, impl Read),
) {
    let kept_input = server_input.try_clone().unwrap();
    let kept_output = server_output.try_clone().unwrap();
    let before = (flags(&kept_input), flags(&kept_output));
    assert!(!before.0.contains(OFlags::NONBLOCK));
    let mut child = rea_serve()
        .stdin(Stdio::from(server_input))
        .stdout(Stdio::from(server_output))
        .spawn()
        .unwrap();
    let (lines, ids) = session_lines();
    client_input.write_all(lines.as_bytes()).unwrap();
    // The kept copy of the output would hold it open past the exit: read the answers one by one.
    let mut reader = BufReader::new(client_output);
    let mut output = String::new();
    for _ in &ids {
        reader.read_line(&mut output).unwrap();
    }
    assert!(
        !reads_on_a_thread(child.id()),
        "{:?}",
        thread_names(child.id())
    );
    drop(client_input);
    assert!(child.wait().unwrap().success());
    assert_answers(&output, &ids);
    assert_eq!((flags(&kept_input), flags(&kept_output)), before);
}

#[test]
fn a_socket_pair_client_is_answered_and_its_flags_come_back() {
    let (client_input, server_input) = UnixStream::pair().unwrap();
    let (client_output, server_output) = UnixStream::pair().unwrap();
    serves_polled_and_puts_flags_back(
        (server_input.into(), client_input),
        (server_output.into(), client_output),
    );
}

#[test]
fn a_pipe_client_is_answered_and_its_flags_come_back() {
    let (server_input, client_input) = std::io::pipe().unwrap();
    let (client_output, server_output) = std::io::pipe().unwrap();
    serves_polled_and_puts_flags_back(
        (server_input.into(), client_input),
        (server_output.into(), client_output),
    );
}

#[test]
fn a_file_for_stdin_is_answered_on_the_blocking_path() {
    let (lines, ids) = session_lines();
    let mut requests = tempfile::tempfile().unwrap();
    requests.write_all(lines.as_bytes()).unwrap();
    std::io::Seek::rewind(&mut requests).unwrap();
    let output = rea_serve()
        .stdin(Stdio::from(requests))
        .stdout(Stdio::piped())
        .output()
        .unwrap();
    assert!(output.status.success());
    assert_answers(&String::from_utf8(output.stdout).unwrap(), &ids);
}

#[test]
fn a_file_for_stdout_is_written_on_the_blocking_path() {
    let (lines, ids) = session_lines();
    let answers = tempfile::NamedTempFile::new().unwrap();
    let mut child = rea_serve()
        .stdin(Stdio::piped())
        .stdout(Stdio::from(answers.reopen().unwrap()))
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(lines.as_bytes()).unwrap();
    // Stdin stays open (the server is still serving) until its thread is seen.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !reads_on_a_thread(child.id()) {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            thread_names(child.id())
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(input);
    assert!(child.wait().unwrap().success());
    let mut output = String::new();
    answers
        .reopen()
        .unwrap()
        .read_to_string(&mut output)
        .unwrap();
    assert_answers(&output, &ids);
}
