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
