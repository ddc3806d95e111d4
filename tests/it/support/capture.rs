//! A hand-written valid Process Capture v4, shared by the capture and claims tests.

use serde_json::{Value, json};

/// SHA-256 of the empty string.
pub const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// SHA-256 of `hello\n`.
pub const HELLO_SHA256: &str = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

/// A valid capture: `./app --version` exited 0 and printed `hello\n`.
pub fn valid_capture() -> Value {
    json!({
        "schema": "rea.process-capture",
        "version": 4,
        "subject": {
            "occurrence_id": "occ-0123456789abcdef0123456789abcdef",
            "document": "app",
            "sha256": HELLO_SHA256
        },
        "command": {
            "argv": ["./app", "--version"],
            "cwd": "/tmp/sandbox",
            "env": {"PATH": "/usr/bin", "LANG": "C"}
        },
        "bounds": {"wall_time_ms": 5000, "output_bytes": 65536, "network": "none"},
        "approval": {
            "approved_by": "analyst@example.org",
            "approved_at": "2025-01-31T10:15:00Z",
            "scope": "run --version once in the sandbox"
        },
        "exit": {"code": 0, "timed_out": false},
        "streams": {
            "stdout": {"sha256": HELLO_SHA256, "bytes": 6, "truncated": false},
            "stderr": {"sha256": EMPTY_SHA256, "bytes": 0, "truncated": false}
        },
        "events": [
            {"seq": 0, "t_ms": 0, "kind": "spawn", "pid": 4242},
            {"seq": 1, "t_ms": 2, "kind": "file", "path": "/etc/ld.so.cache", "access": "read"},
            {"seq": 2, "t_ms": 3, "kind": "stdout", "offset": 0, "bytes": 6},
            {"seq": 3, "t_ms": 4, "kind": "exit", "code": 0}
        ]
    })
}

/// The sandboxed-run side: C programs compiled at test time and a `rea serve` that approves
/// captures as the operator's policy.
pub mod sandboxed {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use rea_testkit::server_process::ServerProcess;
    use serde_json::{Value, json};

    /// The `rea` executable.
    pub const REA: &str = env!("CARGO_BIN_EXE_rea-under-test");

    /// Fails with a clear message when the sandbox's tools are missing (`.ci/run` installs
    /// them), so no sandbox test passes by not running.
    pub fn require_sandbox() {
        for tool in [
            "/usr/bin/bwrap",
            "/usr/bin/strace",
            "/usr/bin/prlimit",
            "/usr/bin/cc",
        ] {
            assert!(
                Path::new(tool).exists(),
                "{tool} is missing: the capture tests need bubblewrap, strace, util-linux and a C \
                 compiler (apt-get install -y bubblewrap strace gcc; .ci/run installs them)"
            );
        }
    }

    /// A directory readable by everyone (so an unprivileged server can run what it holds).
    pub fn program_dir() -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        dir
    }

    /// Compiles `source` (C) into `dir/name` with `cc -O0 -g`, position-independent.
    pub fn compile(dir: &Path, name: &str, source: &str) -> PathBuf {
        require_sandbox();
        let source_path = dir.join(format!("{name}.c"));
        std::fs::write(&source_path, source).unwrap();
        let binary = dir.join(name);
        let output = Command::new("cc")
            .args(["-O0", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o"])
            .arg(&binary)
            .arg(&source_path)
            .output()
            .unwrap();
        assert!(output.status.success(), "cc failed: {output:?}");
        binary
    }

    /// `rea serve --store memory --approve-captures --root DIR`.
    pub fn approving_server(root: &Path) -> ServerProcess {
        ServerProcess::start_with(
            REA,
            [
                "--store".as_ref(),
                "memory".as_ref(),
                "--approve-captures".as_ref(),
                "--root".as_ref(),
                root.as_os_str(),
            ],
        )
    }

    /// Opens `binary` and runs it with `arguments` (extra tool arguments merged in), returning
    /// the tool result's structured content; panics when the call is an error.
    pub fn capture(server: &mut ServerProcess, binary: &Path, extra: Value) -> Value {
        let opened = server.tool("open_binary", json!({"path": binary}));
        assert_eq!(opened["isError"], false, "{opened}");
        let document = opened["structuredContent"]["current_document"].clone();
        let mut arguments = json!({"program": document});
        if let (Value::Object(arguments), Value::Object(extra)) = (&mut arguments, extra) {
            arguments.extend(extra);
        }
        let result = server.tool("run_process_capture", arguments);
        assert_eq!(result["isError"], false, "{result}");
        result["structuredContent"].clone()
    }
}
