//! The real `rea serve` in a child process, driven over its stdio with blocking JSON lines,
//! and its resident memory read from `/proc/<pid>/status`.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// A running `rea serve`.
pub struct ServerProcess {
    child: Child,
    /// `None` once [`ServerProcess::finish`] closed it.
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
    next_id: u64,
}

impl ServerProcess {
    /// Starts `program serve --store memory` (the `rea` executable:
    /// `env!("CARGO_BIN_EXE_rea")` in a test or bench of the `rea` package) and initializes it.
    /// Its store is memory: no test touches the user's data directory.
    pub fn start(program: impl AsRef<OsStr>) -> ServerProcess {
        ServerProcess::start_with(program, ["--store", "memory"])
    }

    /// Starts `program serve ARGS` and initializes it; `args` must name the store
    /// (`--store PATH` of a temporary file, or `--store memory`).
    pub fn start_with<I, S>(program: impl AsRef<OsStr>, args: I) -> ServerProcess
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = Command::new(program);
        command.arg("serve").args(args).stderr(Stdio::null());
        ServerProcess::with_command(command)
    }

    /// Starts `command` (a `rea serve` with the arguments, environment and stderr a test
    /// chose; its arguments must name the store) and initializes it.
    pub fn with_command(command: Command) -> ServerProcess {
        ServerProcess::initialized_as(
            command,
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "memory-tests", "version": "0"}}),
        )
    }

    /// Starts `command` as [`ServerProcess::with_command`] does, initialized with `initialize`
    /// (the `initialize` params: the version and client capabilities a test chose).
    pub fn initialized_as(mut command: Command, initialize: Value) -> ServerProcess {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("rea serve starts");
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().unwrap());
        let mut server = ServerProcess {
            child,
            input,
            output,
            next_id: 1,
        };
        let id = server.send("initialize", initialize);
        server.response(id);
        server.notify("notifications/initialized");
        server
    }

    fn notify(&mut self, method: &str) {
        let line = json!({"jsonrpc": "2.0", "method": method}).to_string();
        let input = self.input.as_mut().expect("stdin is open");
        writeln!(input, "{line}").unwrap();
        input.flush().unwrap();
    }

    /// Sends a request and returns its id, without waiting for the answer.
    pub fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let input = self.input.as_mut().expect("stdin is open");
        writeln!(input, "{line}").unwrap();
        input.flush().unwrap();
        id
    }

    /// Sends `tools/call` of `name` and returns the request id.
    pub fn send_tool(&mut self, name: &str, arguments: Value) -> u64 {
        self.send("tools/call", json!({"name": name, "arguments": arguments}))
    }

    /// Sends a request and returns the text of its answer after its id (`"result":...` or
    /// `"error":...`), as the server wrote it: what two runs compare byte for byte.
    pub fn request_text(&mut self, method: &str, params: Value) -> String {
        let id = self.send(method, params);
        loop {
            let mut line = String::new();
            let read = self.output.read_line(&mut line).unwrap();
            assert!(read > 0, "the server closed its output");
            let message: Value = serde_json::from_str(&line).expect("a JSON line");
            if message.get("id") == Some(&json!(id)) {
                let marker = format!("\"id\":{id},");
                return line
                    .split_once(&marker)
                    .map_or(line.clone(), |(_, rest)| rest.trim_end().to_owned());
            }
        }
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The next response (notifications are skipped), whatever its id.
    pub fn next_response(&mut self) -> Value {
        loop {
            let mut line = String::new();
            let read = self.output.read_line(&mut line).unwrap();
            assert!(read > 0, "the server closed its output");
            let message: Value = serde_json::from_str(&line).expect("a JSON line");
            if message.get("id").is_some() {
                return message;
            }
        }
    }

    /// The response to request `id` (the next response must be it).
    pub fn response(&mut self, id: u64) -> Value {
        let response = self.next_response();
        assert_eq!(response["id"], json!(id), "{response}");
        response
    }

    /// Calls tool `name` and returns its `result` (a tool result, which may be `isError`).
    pub fn tool(&mut self, name: &str, arguments: Value) -> Value {
        let id = self.send_tool(name, arguments);
        let response = self.response(id);
        response["result"].clone()
    }

    /// Sends `open_binary` for every path at once (the server runs them concurrently), then
    /// checks that every one succeeded.
    pub fn open_all(&mut self, paths: &[std::path::PathBuf]) {
        for path in paths {
            self.send_tool("open_binary", json!({"path": path}));
        }
        for _ in paths {
            let response = self.next_response();
            assert_eq!(response["result"]["isError"], json!(false), "{response}");
        }
    }

    /// How many file descriptors the server holds open.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .unwrap()
            .count()
    }

    /// A field of `/proc/<pid>/status` in kB (`VmHWM`, `VmRSS`), or a count (`Threads`,
    /// `FDSize`).
    pub fn status_kb(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("{field} in /proc/{}/status", self.child.id()))
    }

    /// Sets the server's peak resident set (`VmHWM`) back to what it holds now (`VmRSS`), so
    /// that the next peak read is the peak of what follows (Linux `clear_refs`, value 5).
    pub fn reset_peak(&self) {
        std::fs::write(format!("/proc/{}/clear_refs", self.child.id()), "5").unwrap();
    }
}

impl ServerProcess {
    /// The next message the server writes, whatever it is (a response, a notification, or a
    /// request to the client such as `elicitation/create`).
    pub fn next_message(&mut self) -> Value {
        let mut line = String::new();
        let read = self.output.read_line(&mut line).unwrap();
        assert!(read > 0, "the server closed its output");
        serde_json::from_str(&line).expect("a JSON line")
    }

    /// Writes `message` (any JSON-RPC message: an answer to the server's request, a
    /// notification) as one line.
    pub fn write(&mut self, message: &Value) {
        let input = self.input.as_mut().expect("stdin is open");
        writeln!(input, "{message}").unwrap();
        input.flush().unwrap();
    }

    /// The server's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Closes the server's stdin and waits for it to exit (30 s at most), as a client that
    /// ends does.
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.input.take());
        let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("the server is waited for") {
                return status;
            }
            assert!(
                std::time::Instant::now() < until,
                "the server did not exit within 30 s of its stdin closing"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A valid catalog of one document with `procedures` procedures (`f` and the index in hex,
/// 16 bytes apart, one in eight with a size), about 41 bytes of JSON each: 1.6 million make
/// 62.7 MiB.
pub fn large_catalog(procedures: usize) -> Vec<u8> {
    let mut text = String::with_capacity(procedures * 44 + 256);
    text.push_str(
        r#"{"schema":"rea.catalog","version":1,"producer":"memory-tests","documents":[{"name":"app","segments":[{"name":".text","address":"0x400000","size":4294967296,"permissions":"r-x"}],"procedures":["#,
    );
    for index in 0..procedures {
        if index > 0 {
            text.push(',');
        }
        let address = 0x40_0000 + 16 * index as u64;
        if index % 8 == 0 {
            text.push_str(&format!(
                r#"{{"address":"{address:#x}","name":"f{index:x}","size":16}}"#
            ));
        } else {
            text.push_str(&format!(
                r#"{{"address":"{address:#x}","name":"f{index:x}"}}"#
            ));
        }
    }
    text.push_str("]}]}");
    text.into_bytes()
}

/// Writes `copies` files holding [`large_catalog`]`(procedures)` in `dir`; returns their paths
/// and the size of one in bytes.
pub fn write_catalogs(
    dir: &std::path::Path,
    procedures: usize,
    copies: usize,
) -> (Vec<std::path::PathBuf>, usize) {
    let text = large_catalog(procedures);
    let paths = (0..copies)
        .map(|index| {
            let path = dir.join(format!("catalog-{index}.json"));
            std::fs::write(&path, &text).unwrap();
            path
        })
        .collect();
    (paths, text.len())
}
