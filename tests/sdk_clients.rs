//! The built `rea serve` driven by the official MCP SDK clients, over stdio and over Streamable
//! HTTP (`rea serve --http 127.0.0.1:0`, one server per test): the TypeScript SDK
//! v1 (`@modelcontextprotocol/sdk`, 2025-11-25), the TypeScript SDK v2
//! (`@modelcontextprotocol/client`, in its `legacy`, `auto` and pinned 2026-07-28
//! version-negotiation modes) and the Python SDK (`mcp`, in its default `auto` mode, which
//! probes `server/discover` first and then stays on 2026-07-28, in its modern mode pinned to
//! 2026-07-28 without a probe, and in `legacy` mode).
//!
//! Every client, in every mode, also keeps two binary sessions at once (a stripped system
//! executable and the system C library), completes and renders a prompt in each and closes one
//! (`tests/clients/flows.mjs` for both TypeScript clients, `test_sdk.py`), and lists the
//! resource templates, completes a variable of each and reads a resource of each kind. Over
//! HTTP the same two flows run through each SDK's Streamable HTTP client transport, in each mode
//! (`http.test.mjs`, `test_sdk.py MODE URL`).
//!
//! The Python client also drives `rea serve --provider angr` over stdio on a C program compiled
//! here (`test_angr.py`).
//!
//! The clients are installed on first use into ignored folders (`tests/clients/node/node_modules`,
//! `tests/clients/node-v2/node_modules`, `tests/clients/python/.venv`) from the pinned
//! `package-lock.json` files and `requirements.txt`; the angr adapter's environment into
//! `adapters/angr/.venv` (ignored) by `adapters/angr/install.sh`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, PoisonError};

fn clients() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

fn run(command: &mut Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed ({})\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The first of `candidates` that is a file.
fn first_file(candidates: &[&str], what: &str) -> PathBuf {
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("no {what} on this machine: looked for {candidates:?}"))
}

fn with_server_env(command: &mut Command) -> &mut Command {
    let ls = first_file(
        &["/bin/ls", "/usr/bin/ls"],
        "stripped system executable (ls)",
    );
    let libc = first_file(
        &[
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/aarch64-linux-gnu/libc.so.6",
            "/usr/lib/libc.so.6",
        ],
        "system C library",
    );
    command
        .env("REA_BIN", env!("CARGO_BIN_EXE_rea"))
        .env("REA_CATALOG", clients().join("fixtures/notes-catalog.json"))
        .env(
            "REA_CAPTURE",
            clients().join("fixtures/process-capture.json"),
        )
        .env("REA_LS", ls)
        .env("REA_LIBC", libc)
}

/// Installs what needs installing one test at a time: the tests run in parallel, and two of
/// them share each client folder.
static INSTALL: Mutex<()> = Mutex::new(());

/// `tests/clients/FOLDER`, after `npm ci` there when `package` is not installed yet.
fn node_folder(folder: &str, package: &str) -> PathBuf {
    let folder = clients().join(folder);
    let _one = INSTALL.lock().unwrap_or_else(PoisonError::into_inner);
    if !folder.join("node_modules").join(package).exists() {
        run(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&folder),
            &format!("npm ci in {}", folder.display()),
        );
    }
    folder
}

/// The Python of `tests/clients/python/.venv`, made and given the pinned SDK if need be.
fn python() -> PathBuf {
    let folder = clients().join("python");
    let python = folder.join(".venv/bin/python");
    let _one = INSTALL.lock().unwrap_or_else(PoisonError::into_inner);
    if !python.exists() {
        run(
            Command::new("python3")
                .args(["-m", "venv", ".venv"])
                .current_dir(&folder),
            "python3 -m venv",
        );
    }
    let installed = Command::new(&python)
        .args(["-c", "import mcp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        run(
            Command::new(&python)
                .args(["-m", "pip", "install", "--quiet", "-r", "requirements.txt"])
                .current_dir(&folder),
            "pip install -r requirements.txt",
        );
    }
    python
}

/// `rea serve --http 127.0.0.1:0`, started for one test and killed when dropped. Its stderr
/// is read for the address it bound, then passed on to the test's.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    const BOUND: &str = "serving MCP over Streamable HTTP at ";

    fn start() -> HttpServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rea"))
            .args(["serve", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start rea serve --http: {e}"));
        let mut lines = BufReader::new(child.stderr.take().expect("stderr is piped")).lines();
        let url = loop {
            match lines.next() {
                Some(Ok(line)) => {
                    eprintln!("{line}");
                    if let Some((_, url)) = line.split_once(Self::BOUND) {
                        break url.trim().to_owned();
                    }
                }
                _ => {
                    let _ = child.kill();
                    let status = child.wait();
                    panic!("rea serve --http ended before printing its address: {status:?}");
                }
            }
        };
        // Drained to the end, so the server never waits on a full pipe.
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                eprintln!("{line}");
            }
        });
        HttpServer { child, url }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn typescript_sdk_client_drives_the_server() {
    let folder = node_folder("node", "@modelcontextprotocol/sdk");
    run(
        with_server_env(
            Command::new("node")
                .args(["--test", "sdk.test.mjs"])
                .current_dir(&folder),
        ),
        "node --test sdk.test.mjs (TypeScript SDK v1 client)",
    );
}

#[test]
fn typescript_sdk_v2_client_drives_the_server_in_legacy_auto_and_pinned_modes() {
    let folder = node_folder("node-v2", "@modelcontextprotocol/client");
    run(
        with_server_env(
            Command::new("node")
                .args(["--test", "sdk-v2.test.mjs"])
                .current_dir(&folder),
        ),
        "node --test sdk-v2.test.mjs (TypeScript SDK v2 client)",
    );
}

#[test]
fn python_sdk_client_drives_the_server_in_auto_modern_and_legacy_modes() {
    let python = python();
    for mode in ["auto", "2026-07-28", "legacy"] {
        run(
            with_server_env(
                Command::new(&python)
                    .args(["test_sdk.py", mode])
                    .current_dir(clients().join("python")),
            ),
            &format!("python test_sdk.py {mode} (Python SDK client)"),
        );
    }
}

#[test]
fn typescript_sdk_client_over_streamable_http() {
    let folder = node_folder("node", "@modelcontextprotocol/sdk");
    let server = HttpServer::start();
    run(
        with_server_env(
            Command::new("node")
                .args(["--test", "http.test.mjs"])
                .env("REA_HTTP_URL", &server.url)
                .current_dir(&folder),
        ),
        "node --test http.test.mjs (TypeScript SDK v1 client over HTTP)",
    );
}

#[test]
fn typescript_sdk_v2_client_over_streamable_http_in_legacy_auto_and_pinned_modes() {
    let folder = node_folder("node-v2", "@modelcontextprotocol/client");
    let server = HttpServer::start();
    run(
        with_server_env(
            Command::new("node")
                .args(["--test", "http.test.mjs"])
                .env("REA_HTTP_URL", &server.url)
                .current_dir(&folder),
        ),
        "node --test http.test.mjs (TypeScript SDK v2 client over HTTP)",
    );
}

#[test]
fn python_sdk_client_over_streamable_http_in_auto_modern_and_legacy_modes() {
    let python = python();
    let server = HttpServer::start();
    for mode in ["auto", "2026-07-28", "legacy"] {
        run(
            with_server_env(
                Command::new(&python)
                    .args(["test_sdk.py", mode, &server.url])
                    .current_dir(clients().join("python")),
            ),
            &format!("python test_sdk.py {mode} URL (Python SDK client over HTTP)"),
        );
    }
}

/// The angr adapter's folder, with its virtual environment installed by
/// `adapters/angr/install.sh` into the ignored `adapters/angr/.venv` first if it is missing.
fn angr_adapter() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("adapters/angr");
    let _one = INSTALL.lock().unwrap_or_else(PoisonError::into_inner);
    let imports = Command::new(dir.join(".venv/bin/python"))
        .args(["-c", "import angr"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !imports {
        run(
            Command::new("sh").arg(dir.join("install.sh")),
            "adapters/angr/install.sh",
        );
    }
    dir
}

#[test]
fn python_sdk_client_decompiles_through_the_angr_adapter() {
    let python = python();
    let angr = angr_adapter();
    let scratch = tempfile::tempdir().unwrap();
    let binary = scratch.path().join("report");
    run(
        Command::new("cc")
            .arg("-O0")
            .arg("-o")
            .arg(&binary)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/adapters/programs/report.c")),
        "cc report.c",
    );
    for mode in ["auto", "legacy"] {
        run(
            Command::new(&python)
                .args(["test_angr.py", mode])
                .current_dir(clients().join("python"))
                .env("REA_BIN", env!("CARGO_BIN_EXE_rea"))
                .env("REA_ANGR_DIR", &angr)
                .env("REA_ANGR_BINARY", &binary),
            &format!("python test_angr.py {mode} (Python SDK client, --provider angr)"),
        );
    }
}
