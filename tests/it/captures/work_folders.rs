//! A capture's host folder (the trace FIFO, the filter, the sandbox's working directory) is
//! private to the server's user, and one that a server killed during a run leaves is removed
//! by the next server's start, through the real `rea serve` and a real sandboxed run.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rea_testkit::server_process::ServerProcess;
use serde_json::json;

use crate::support::capture::sandboxed::{REA, compile, program_dir};

/// A program that sleeps for at most 3 s in steps of 0.1 s, then exits.
const SLEEPER: &str = r#"
#include <unistd.h>
int main(void) {
    for (int step = 0; step < 30; step++) usleep(100000);
    return 0;
}
"#;

/// `rea serve --store memory --approve-captures --root ROOT` with `TMPDIR` set to `tmp`.
fn server(root: &Path, tmp: &Path) -> ServerProcess {
    let mut command = Command::new(REA);
    command
        .args(["serve", "--store", "memory", "--approve-captures", "--root"])
        .arg(root)
        .env("TMPDIR", tmp)
        .stderr(Stdio::null());
    ServerProcess::with_command(command)
}

/// The capture folders in `tmp`, sorted.
fn capture_folders(tmp: &Path) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = std::fs::read_dir(tmp)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.file_name()
                .is_some_and(|name| name.to_string_lossy().starts_with("rea-capture-"))
        })
        .collect();
    folders.sort();
    folders
}

/// When this test process started (field 22 of `/proc/self/stat`).
fn own_start_time() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let (_, after) = stat.rsplit_once(')').unwrap();
    after.split_whitespace().nth(19).unwrap().parse().unwrap()
}

#[test]
fn a_runs_folder_is_private_and_the_next_server_removes_one_a_killed_server_left() {
    let programs = program_dir();
    let sleeper = compile(programs.path(), "sleeper", SLEEPER);
    let tmp = tempfile::tempdir().unwrap();

    let mut killed = server(programs.path(), tmp.path());
    let opened = killed.tool("open_binary", json!({"path": sleeper}));
    assert_eq!(opened["isError"], false, "{opened}");
    let program = opened["structuredContent"]["current_document"].clone();
    killed.send_tool("run_process_capture", json!({"program": program}));
    // At most 10 s for the run's folder to appear (the program sleeps 3 s at most).
    let mut left = Vec::new();
    for _ in 0..200 {
        left = capture_folders(tmp.path());
        if !left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(left.len(), 1, "one folder while the capture runs: {left:?}");
    let mode = std::fs::metadata(&left[0]).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "{}", left[0].display());
    let name = left[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!("rea-capture-{}-", killed.pid())),
        "named after its server: {name}"
    );
    drop(killed); // SIGKILL during the run: nothing is cleaned up
    assert_eq!(
        capture_folders(tmp.path()),
        left,
        "a killed server leaves its folder"
    );

    // Beside it: the folder of a server that runs (this test process), one named as earlier
    // versions named them (a random number alone: whose it is cannot be told), and one of a
    // gone server that belongs to another user (only when the test may hand it over).
    let running = tmp.path().join(format!(
        "rea-capture-{}-{}-0",
        std::process::id(),
        own_start_time()
    ));
    let earlier = tmp.path().join("rea-capture-0123456789abcdef");
    let foreign = tmp
        .path()
        .join(format!("rea-capture-{}-1-0", u32::MAX >> 1));
    for folder in [&running, &earlier, &foreign] {
        std::fs::create_dir(folder).unwrap();
    }
    let root = rustix::process::geteuid().is_root();
    if root {
        std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
    } else {
        std::fs::remove_dir(&foreign).unwrap();
    }

    let next = server(programs.path(), tmp.path());
    let mut expected = vec![running, earlier];
    if root {
        expected.push(foreign);
    }
    expected.sort();
    assert_eq!(
        capture_folders(tmp.path()),
        expected,
        "only the stale folder of this user went"
    );
    drop(next);
}
