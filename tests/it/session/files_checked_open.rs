//! Files are what they claim to be: FIFOs, devices, sockets, directories and the process's own
//! streams are refused with a clear error (never a hang), sizes are bounded before reading, and
//! a binary rewritten on disk while it is open never crashes the tools.

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use rea::files::{
    CheckedFile, Confinement, FileError, FileKind, FileLimit, MAX_BINARY_BYTES,
    MAX_CATALOG_FILE_BYTES,
};
use rea::providers::load_path;
use serde_json::json;

use crate::support::fixtures::{Format, Spec, build};
use crate::support::tools::{closed, failure, success};

fn snapshot(name: &str, text: &str) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(format!("files_checked_open__{name}"), text);
    });
}

/// [`snapshot`], with the temporary directory `dir` filtered out as `[dir]`.
fn snapshot_in(dir: &Path, name: &str, text: &str) {
    let mut settings = crate::support::snapshots::settings();
    crate::support::snapshots::filter_path(&mut settings, dir, "[dir]");
    settings.bind(|| snapshot(name, text));
}

fn open(path: &Path) -> Result<CheckedFile, FileError> {
    CheckedFile::open(path, &Confinement::unrestricted(), FileLimit::BINARY)
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

#[test]
fn special_files_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let socket = dir.path().join("socket");
    let _listener = UnixListener::bind(&socket).unwrap();
    let cases: [(PathBuf, FileKind); 4] = [
        (fifo, FileKind::Fifo),
        (PathBuf::from("/dev/null"), FileKind::CharacterDevice),
        (socket, FileKind::Socket),
        (dir.path().to_owned(), FileKind::Directory),
    ];
    let mut messages = Vec::new();
    for (path, expected) in &cases {
        let error = open(path).unwrap_err();
        assert!(
            matches!(&error, FileError::NotRegular { kind, .. } if kind == expected),
            "{error}"
        );
        // The same through the provider loader and the tool.
        assert!(load_path(path).is_err());
        let (_, tools) = closed();
        let message = failure(
            &tools,
            "open_binary",
            json!({"path": path.display().to_string()}),
        );
        assert!(message.contains(&path.display().to_string()), "{message}");
        messages.push(message);
    }
    snapshot_in(dir.path(), "special_files", &messages.join("\n"));
}

#[test]
fn own_standard_streams_are_never_read() {
    // Whatever this test process's descriptor 0 is (a terminal, /dev/null, a pipe), opening it
    // is an error, never a read of the process's own input.
    for path in [
        "/proc/self/fd/0",
        "/dev/stdin",
        "/dev/stdout",
        "/proc/self/fd/2",
    ] {
        let error = open(Path::new(path)).unwrap_err();
        assert!(
            matches!(
                error,
                FileError::NotRegular { .. } | FileError::OwnStream { .. } | FileError::Open { .. }
            ),
            "{path}: {error}"
        );
    }
}

#[test]
fn the_server_refuses_its_own_input_file() {
    // The server's stdin is a regular file: opening it by /proc/self/fd/0 or /dev/stdin names
    // the same inode and is refused as the server's own input.
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("input");
    std::fs::write(&input, build(&Spec::sample(), Format::Elf).bytes).unwrap();
    let mut messages = Vec::new();
    for path in ["/proc/self/fd/0", "/dev/stdin"] {
        let output = Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
            .args(["complete", "--open", path])
            .args(["--prompt", "trace_crash", "--argument", "procedure"])
            .stdin(std::fs::File::open(&input).unwrap())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains("own standard input"), "{stderr}");
        messages.push(stderr.trim().to_owned());
    }
    snapshot("own_input", &messages.join("\n"));
}

#[test]
fn sizes_are_bounded_before_reading() {
    let dir = tempfile::tempdir().unwrap();
    // Sparse files: nothing is written, and nothing must be read.
    let binary = dir.path().join("huge.bin");
    std::fs::File::create(&binary)
        .unwrap()
        .set_len(MAX_BINARY_BYTES + 1)
        .unwrap();
    let catalog = dir.path().join("huge.json");
    std::fs::write(&catalog, b"{").unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&catalog)
        .unwrap()
        .set_len(MAX_CATALOG_FILE_BYTES + 1)
        .unwrap();
    let messages = [
        load_path(&binary).err().unwrap().to_string(),
        load_path(&catalog).err().unwrap().to_string(),
        CheckedFile::open(
            &catalog,
            &Confinement::unrestricted(),
            FileLimit::PROMPT_FILE,
        )
        .unwrap_err()
        .to_string(),
    ];
    snapshot_in(dir.path(), "too_large", &messages.join("\n"));
}

#[test]
fn reading_stops_at_the_size_fstat_reported() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("file");
    std::fs::write(&path, b"0123456789").unwrap();
    let file = open(&path).unwrap();
    assert_eq!(file.size(), 10);
    // The file grows after the check: only the size seen at open is read.
    std::fs::write(&path, b"0123456789 and more").unwrap();
    assert_eq!(file.read_all().unwrap(), b"0123456789");
}

#[test]
fn a_binary_rewritten_while_open_never_crashes_the_tools() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app");
    let built = build(&Spec::sample(), Format::Elf);
    std::fs::write(&path, &built.bytes).unwrap();
    let (_, tools) = closed();
    success(
        &tools,
        "open_binary",
        json!({"path": path.display().to_string()}),
    );
    let before = success(&tools, "list_procedures", json!({}));
    let address = format!("{:#x}", built.text_address);

    // What a build does: truncate, then write something else.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    let strings = success(&tools, "search_strings", json!({}));
    let bytes = success(
        &tools,
        "read_bytes",
        json!({"address": address, "length": 16}),
    );
    std::fs::write(&path, b"rebuilt: not the same file at all").unwrap();
    let after = success(&tools, "list_procedures", json!({}));
    assert_eq!(before["procedures"], after["procedures"]);
    assert!(strings.contains_key("strings"));
    assert!(bytes.contains_key("hex"));
}

/// Sends one request line to the server process and reads lines until the response with `id`.
fn exchange(
    stdin: &mut std::process::ChildStdin,
    stdout: &mut std::io::BufReader<std::process::ChildStdout>,
    id: u64,
    method: &str,
    params: serde_json::Value,
) -> serde_json::Value {
    use std::io::{BufRead, Write};
    let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    writeln!(stdin, "{request}").unwrap();
    stdin.flush().unwrap();
    loop {
        let mut line = String::new();
        assert_ne!(stdout.read_line(&mut line).unwrap(), 0, "the server exited");
        let message: serde_json::Value = serde_json::from_str(&line).unwrap();
        if message["id"] == json!(id) {
            return message;
        }
    }
}

#[test]
fn the_server_process_survives_a_binary_truncated_while_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app");
    let built = build(&Spec::sample(), Format::Elf);
    std::fs::write(&path, &built.bytes).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
        .args(["serve", "--store", "memory"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let init = json!({"protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "files-test", "version": "1"}});
    exchange(&mut stdin, &mut stdout, 1, "initialize", init);
    let call =
        |name: &str, arguments: serde_json::Value| json!({"name": name, "arguments": arguments});
    let opened = exchange(
        &mut stdin,
        &mut stdout,
        2,
        "tools/call",
        call("open_binary", json!({"path": path.display().to_string()})),
    );
    assert_eq!(opened["result"]["isError"], json!(false), "{opened}");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(0)
        .unwrap();
    let address = format!("{:#x}", built.text_address);
    let calls = [
        call("search_strings", json!({})),
        call("read_bytes", json!({"address": address, "length": 16})),
        call("list_procedures", json!({})),
    ];
    for (offset, params) in calls.into_iter().enumerate() {
        let answer = exchange(
            &mut stdin,
            &mut stdout,
            3 + offset as u64,
            "tools/call",
            params,
        );
        assert_eq!(answer["result"]["isError"], json!(false), "{answer}");
    }
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_prompt_file_that_is_a_fifo_is_refused() {
    use rea::mcp::prompt_file::PromptFileState;
    use rea::mcp::{Server, ServerConfig};
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("prompts.json");
    mkfifo(&fifo);
    let server = Server::new(ServerConfig::default());
    let error = PromptFileState::default()
        .refresh(&server, &fifo)
        .unwrap_err();
    snapshot_in(dir.path(), "prompt_fifo", &error.to_string());
}
