//! A team server for tests and benches (docs/CONTRACT.md section 16): a real, temporary
//! PostgreSQL cluster and real `rea serve --http` instances on it, with a blocking 2026-07-28
//! client.
//!
//! - [`Cluster`]: `initdb` of a temporary folder, `postgres` listening on a Unix socket only
//!   (`listen_addresses=''`), one database per test ([`Cluster::database`]). Run as the
//!   `postgres` user when this process is root (`initdb` and `postgres` refuse root). The
//!   cluster stops when the [`Cluster`] is dropped, and also when this process ends however it
//!   ends: a watchdog shell waits on a pipe from this process and stops the server (`pg_ctl
//!   stop -m immediate`) and removes the folder once the pipe closes.
//! - [`Instance`]: `rea serve --http 127.0.0.1:0 --store postgres://...`, killed on drop.
//! - [`call`]: one 2026 request on a new connection, its JSON-RPC answer.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Where PostgreSQL's programs are (Debian's `postgresql-15`), unless `REA_PG_BIN` names
/// another folder.
pub fn pg_bin() -> PathBuf {
    std::env::var_os("REA_PG_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin"))
}

/// Whether PostgreSQL's programs are installed.
pub fn available() -> bool {
    pg_bin().join("postgres").exists()
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("Uid:"))
                .and_then(|rest| rest.split_whitespace().next().map(|uid| uid == "0"))
        })
        .unwrap_or(false)
}

/// `program` of PostgreSQL, run as the `postgres` user when this process is root.
fn pg_command(program: &str) -> Command {
    let path = pg_bin().join(program);
    if is_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "postgres", "--"]).arg(path);
        command
    } else {
        Command::new(path)
    }
}

/// A temporary PostgreSQL cluster on a Unix socket (see the [module documentation](self)).
pub struct Cluster {
    dir: PathBuf,
    port: u16,
    /// The watchdog's end of the pipe: closing it stops the server.
    watchdog: Option<(Child, ChildStdin)>,
    databases: AtomicUsize,
    /// Whether commits are synced (`fsync`); tests go without.
    synced: bool,
}

impl Cluster {
    /// `initdb` and start a new cluster with `fsync=off` (tests: a crash of the machine is not
    /// what they test); panics with the programs' output when they fail.
    pub fn start() -> Cluster {
        Cluster::start_with(false)
    }

    /// [`Cluster::start`] with synced commits, as a production database (benches).
    pub fn start_synced() -> Cluster {
        Cluster::start_with(true)
    }

    fn start_with(synced: bool) -> Cluster {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "rea-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        stop_abandoned();
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).expect("the cluster's folder");
        if is_root() {
            let status = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .expect("chown");
            assert!(status.success(), "chown of {}", dir.display());
        }
        let output = pg_command("initdb")
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "--no-sync",
                "-E",
                "UTF8",
                "-D",
            ])
            .arg(dir.join("data"))
            .output()
            .expect("initdb runs");
        assert!(
            output.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let port = 5432;
        let mut cluster = Cluster {
            dir,
            port,
            watchdog: None,
            databases: AtomicUsize::new(0),
            synced,
        };
        cluster.run();
        cluster
    }

    /// Starts the server (again, after [`Cluster::stop`]) and waits until it accepts.
    pub fn run(&mut self) {
        let log = self.dir.join("log");
        let status = pg_command("pg_ctl")
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(&log)
            .arg("-o")
            .arg(format!(
                "-k {} -c listen_addresses='' -p {} -c fsync={} -c max_connections=200",
                self.dir.display(),
                self.port,
                if self.synced { "on" } else { "off" }
            ))
            .args(["-w", "-t", "30", "start"])
            .stdout(Stdio::null())
            .status()
            .expect("pg_ctl start runs");
        assert!(
            status.success(),
            "postgres did not start: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        if self.watchdog.is_none() {
            // Stops the server and removes the folder when this process ends, however.
            let script = format!(
                "read _ ; {ctl} ; rm -rf '{dir}'",
                ctl = self.ctl_line("stop -m immediate"),
                dir = self.dir.display()
            );
            // In a session of its own, so a signal to this process's group spares it.
            let mut child = Command::new("setsid")
                .args(["sh", "-c", &script])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("the watchdog starts");
            let stdin = child.stdin.take().unwrap();
            self.watchdog = Some((child, stdin));
        }
    }

    fn ctl_line(&self, action: &str) -> String {
        let ctl = pg_bin().join("pg_ctl");
        let prefix = if is_root() {
            "runuser -u postgres -- "
        } else {
            ""
        };
        format!(
            "{prefix}{} -D '{}' {action} >/dev/null 2>&1",
            ctl.display(),
            self.dir.join("data").display()
        )
    }

    /// Stops the server at once (`pg_ctl stop -m immediate`: as a crash would), leaving the
    /// cluster to [`Cluster::run`] again.
    pub fn stop(&self) {
        let status = Command::new("sh")
            .args(["-c", &self.ctl_line("stop -m immediate -w")])
            .status()
            .expect("pg_ctl stop runs");
        assert!(status.success(), "pg_ctl stop");
    }

    /// The folder holding the server's Unix socket.
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// The `--store` URL of database `name`.
    pub fn url(&self, name: &str) -> String {
        format!(
            "postgres://postgres@/{name}?host={}&port={}",
            self.dir.display(),
            self.port
        )
    }

    /// Runs `sql` in database `name` with `psql`; its output (unaligned, tuples only).
    pub fn psql(&self, name: &str, sql: &str) -> String {
        let output = Command::new(pg_bin().join("psql"))
            .arg("-h")
            .arg(&self.dir)
            .args(["-p", &self.port.to_string(), "-U", "postgres", "-d", name])
            .args(["-v", "ON_ERROR_STOP=1", "-At", "-c", sql])
            .output()
            .expect("psql runs");
        assert!(
            output.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// A new, empty database (`prefix` and a number); its name.
    pub fn database(&self, prefix: &str) -> String {
        let name = format!(
            "{prefix}_{}",
            self.databases.fetch_add(1, Ordering::Relaxed)
        );
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        name
    }
}

/// Stops and removes the clusters of test processes that are gone (whose watchdog could not
/// run, e.g. a killed process group).
fn stop_abandoned() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("rea-pg-")
            .and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let data = entry.path().join("data");
        let _ = pg_command("pg_ctl")
            .arg("-D")
            .arg(&data)
            .args(["stop", "-m", "immediate"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(entry.path());
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some((mut child, stdin)) = self.watchdog.take() {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

/// A `rea serve --http` instance in a child process, killed (SIGKILL) on drop.
pub struct Instance {
    child: Child,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl Instance {
    /// `rea` (the binary at `program`) serving HTTP on a free loopback port with `--store
    /// store` and `extra` arguments; waits until it listens.
    pub fn start(program: &str, store: &str, extra: &[&str]) -> Instance {
        let mut child = Command::new(program)
            .args(["serve", "--http", "127.0.0.1:0", "--store", store])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("rea serve --http starts");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let mut seen = String::new();
        let addr = loop {
            line.clear();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = child.wait();
                panic!("rea serve ended before it listened: {seen}");
            }
            seen.push_str(&line);
            if let Some(url) = line.trim().rsplit(' ').next()
                && let Some(addr) = url.strip_prefix("http://")
                && let Ok(addr) = addr.trim_end_matches("/mcp").parse()
            {
                break addr;
            }
        };
        // Keep draining its log so it never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = Vec::new();
            let _ = stderr.read_to_end(&mut sink);
        });
        Instance { child, addr }
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, now.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What `rea serve` printed and its exit status, for a start that is expected to fail.
pub fn refused_start(program: &str, store: &str) -> (bool, String) {
    let output = Command::new(program)
        .args(["serve", "--http", "127.0.0.1:0", "--store", store])
        .stdin(Stdio::null())
        .output()
        .expect("rea serve runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// One 2026-07-28 request (`method` with `params`, the envelope added) to the server at
/// `addr`, on a new connection; the JSON-RPC answer. Panics when no answer comes within 60 s.
pub fn call(addr: SocketAddr, method: &str, params: Value) -> Value {
    try_call(addr, method, params).unwrap_or_else(|error| panic!("{error}"))
}

/// [`call`], or why no answer came (the server is gone or did not answer within 60 s).
pub fn try_call(addr: SocketAddr, method: &str, mut params: Value) -> Result<Value, String> {
    static ID: AtomicUsize = AtomicUsize::new(1);
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let name = params
        .get("name")
        .or_else(|| params.get("uri"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let id = ID.fetch_add(1, Ordering::Relaxed);
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n"
    );
    if let Some(name) = name {
        head.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    let started = Instant::now();
    let fail =
        |e: std::io::Error| format!("no answer to {method} ({e}) after {:?}", started.elapsed());
    let mut stream = TcpStream::connect(addr).map_err(fail)?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .map_err(fail)?;
    let _ = stream.set_nodelay(true);
    stream.write_all(head.as_bytes()).map_err(fail)?;
    stream.write_all(body.as_bytes()).map_err(fail)?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).map_err(fail)?;
    if bytes.is_empty() {
        return Err(format!("the connection closed with no answer to {method}"));
    }
    Ok(answer(&bytes))
}

/// The JSON-RPC answer in an HTTP response: its JSON body, or the last SSE event's data.
fn answer(bytes: &[u8]) -> Value {
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no HTTP header end in {:?}", String::from_utf8_lossy(bytes)));
    let head = String::from_utf8_lossy(&bytes[..split]).to_ascii_lowercase();
    let mut body = bytes[split + 4..].to_vec();
    if head.contains("transfer-encoding: chunked") {
        body = dechunk(&body);
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    if head.contains("text/event-stream") {
        text.lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
            .rfind(|message| message.get("id").is_some())
            .unwrap_or_else(|| panic!("no answer event in {text}"))
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: not JSON: {text} ({head})"))
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = String::from_utf8_lossy(&body[..end]);
        let Ok(size) = usize::from_str_radix(size.trim().split(';').next().unwrap_or("0"), 16)
        else {
            break;
        };
        if size == 0 || body.len() < end + 2 + size {
            break;
        }
        out.extend_from_slice(&body[end + 2..end + 2 + size]);
        body = &body[(end + 4 + size).min(body.len())..];
    }
    out
}

/// `tools/call` of `tool` with `arguments`; the answer's `result`.
pub fn tool(addr: SocketAddr, tool: &str, arguments: Value) -> Value {
    let answer = call(
        addr,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    answer
        .get("result")
        .cloned()
        .unwrap_or_else(|| panic!("no result: {answer}"))
}

/// The Evidence IDs completion offers in session `handle` (`verify_reconstruction`'s
/// `evidence` argument, prefix `ev-`).
pub fn completed_evidence(addr: SocketAddr, handle: &str) -> Vec<String> {
    let answer = call(
        addr,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "verify_reconstruction"},
               "argument": {"name": "evidence", "value": "ev-"},
               "context": {"arguments": {"session": handle}}}),
    );
    answer["result"]["completion"]["values"]
        .as_array()
        .unwrap_or_else(|| panic!("no completion values: {answer}"))
        .iter()
        .map(|value| value.as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The Evidence IDs of session `handle` as `list_evidence` pages them, oldest first.
pub fn listed_evidence(addr: SocketAddr, handle: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut arguments = json!({"session": handle, "limit": 100});
        if let Some(cursor) = &cursor {
            arguments["cursor"] = json!(cursor);
        }
        let result = tool(addr, "list_evidence", arguments);
        assert_eq!(result["isError"], json!(false), "{result}");
        let content = &result["structuredContent"];
        for record in content["evidence"].as_array().unwrap() {
            ids.push(record["id"].as_str().unwrap().to_owned());
        }
        match content.get("next_cursor").and_then(Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => return ids,
        }
    }
}
