//! The built `rea serve` driven by the official MCP SDK clients over stdio: the TypeScript SDK
//! (`@modelcontextprotocol/sdk`) and the Python SDK (`mcp`, in its default `auto` mode, which
//! probes `server/discover` first and then stays on 2026-07-28, in its modern mode pinned to
//! 2026-07-28 without a probe, and in `legacy` mode).
//!
//! The clients are installed on first use into ignored folders (`tests/clients/node/node_modules`,
//! `tests/clients/python/.venv`) from the pinned `package-lock.json` and `requirements.txt`.

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

fn with_server_env(command: &mut Command) -> &mut Command {
    command
        .env("REA_BIN", env!("CARGO_BIN_EXE_rea"))
        .env("REA_CATALOG", clients().join("fixtures/notes-catalog.json"))
}

#[test]
fn typescript_sdk_client_drives_the_server() {
    let folder = clients().join("node");
    if !folder
        .join("node_modules/@modelcontextprotocol/sdk")
        .exists()
    {
        run(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&folder),
            "npm ci",
        );
    }
    run(
        with_server_env(Command::new("node").arg("--test").current_dir(&folder)),
        "node --test (TypeScript SDK client)",
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
