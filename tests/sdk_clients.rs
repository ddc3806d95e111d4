//! The built `rea serve` driven by the official MCP SDK clients over stdio: the TypeScript SDK
//! v1 (`@modelcontextprotocol/sdk`, 2025-11-25), the TypeScript SDK v2
//! (`@modelcontextprotocol/client`, in its `legacy`, `auto` and pinned 2026-07-28
//! version-negotiation modes) and the Python SDK (`mcp`, in its default `auto` mode, which
//! probes `server/discover` first and then stays on 2026-07-28, in its modern mode pinned to
//! 2026-07-28 without a probe, and in `legacy` mode).
//!
//! Every client, in every mode, also keeps two binary sessions at once (a stripped system
//! executable and the system C library), completes and renders a prompt in each and closes one
//! (`tests/clients/flows.mjs` for both TypeScript clients, `test_sdk.py`), and lists the
//! resource templates, completes a variable of each and reads a resource of each kind.
//!
//! The clients are installed on first use into ignored folders (`tests/clients/node/node_modules`,
//! `tests/clients/node-v2/node_modules`, `tests/clients/python/.venv`) from the pinned
//! `package-lock.json` files and `requirements.txt`.

use std::path::{Path, PathBuf};
use std::process::Command;

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

/// Runs `node --test` in `tests/clients/FOLDER`, after `npm ci` there when `package` is not
/// installed yet.
fn node_tests(folder: &str, package: &str, what: &str) {
    let folder = clients().join(folder);
    if !folder.join("node_modules").join(package).exists() {
        run(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&folder),
            &format!("npm ci ({what})"),
        );
    }
    run(
        with_server_env(Command::new("node").arg("--test").current_dir(&folder)),
        &format!("node --test ({what})"),
    );
}

#[test]
fn typescript_sdk_client_drives_the_server() {
    node_tests(
        "node",
        "@modelcontextprotocol/sdk",
        "TypeScript SDK v1 client",
    );
}

#[test]
fn typescript_sdk_v2_client_drives_the_server_in_legacy_auto_and_pinned_modes() {
    node_tests(
        "node-v2",
        "@modelcontextprotocol/client",
        "TypeScript SDK v2 client",
    );
}

#[test]
fn python_sdk_client_drives_the_server_in_auto_modern_and_legacy_modes() {
    let folder = clients().join("python");
    let python = folder.join(".venv/bin/python");
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
    for mode in ["auto", "2026-07-28", "legacy"] {
        run(
            with_server_env(
                Command::new(&python)
                    .args(["test_sdk.py", mode])
                    .current_dir(&folder),
            ),
            &format!("python test_sdk.py {mode} (Python SDK client)"),
        );
    }
}
