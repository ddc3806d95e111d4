//! Hostile programs under `run_process_capture`, each compiled at test time with every loop
//! bounded: each stops at its bound or is refused by the sandbox, the capture says which bound
//! ended it, the server answers `ping` quickly throughout, and nothing outside the capture's
//! temporary directory changes. Without approval nothing runs at all.

use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use rea::capture::{CaptureValidity, classify_capture};
use rea_testkit::server_process::ServerProcess;
use serde_json::{Value, json};

use crate::support::capture::sandboxed::{
    REA, approving_server, compile, program_dir, require_sandbox,
};

/// Longest a `ping` may wait while a capture runs.
const PING_BOUND: Duration = Duration::from_millis(100);

/// Runs `binary` (opened first) with `extra` arguments, pinging every 50 ms until the capture
/// answers; returns the result's structured content and the slowest ping.
fn capture_pinging(server: &mut ServerProcess, binary: &Path, extra: Value) -> (Value, Duration) {
    let opened = server.tool("open_binary", json!({"path": binary}));
    assert_eq!(opened["isError"], false, "{opened}");
    let mut arguments = json!({"program": opened["structuredContent"]["current_document"]});
    if let (Value::Object(arguments), Value::Object(extra)) = (&mut arguments, extra) {
        arguments.extend(extra);
    }
    let run = server.send_tool("run_process_capture", arguments);
    let mut slowest = Duration::ZERO;
    let mut result = None;
    // At most 600 pings (30 s); every capture here is bounded well below that.
    for _ in 0..600 {
        let ping = server.send("ping", json!({}));
        let sent = Instant::now();
        loop {
            let response = server.next_response();
            if response["id"] == json!(ping) {
                slowest = slowest.max(sent.elapsed());
                break;
            }
            if response["id"] == json!(run) {
                result = Some(response);
            }
        }
        if result.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let result = result.expect("the capture answered within 30 s")["result"].clone();
    assert_eq!(result["isError"], false, "{result}");
    let content = result["structuredContent"].clone();
    assert_eq!(
        classify_capture(&content["capture"]),
        CaptureValidity::ValidV4,
        "{content}"
    );
    assert!(slowest < PING_BOUND, "a ping took {slowest:?}");
    (content, slowest)
}

/// Whether any process still runs `binary`.
fn still_running(binary: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries
        .flatten()
        .any(|entry| std::fs::read_link(entry.path().join("exe")).is_ok_and(|exe| exe == binary))
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn note_texts(capture: &Value) -> String {
    capture["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|event| event["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_fork_bomb_ends_at_max_processes_and_leaves_nothing_running() {
    let dir = program_dir();
    let binary = compile(
        dir.path(),
        "fork_bomb",
        "#include <unistd.h>\nint main(void) { for (int i = 0; i < 64; i++) fork(); sleep(3); return 0; }\n",
    );
    let mut server = approving_server(dir.path());
    let (result, _) = capture_pinging(&mut server, &binary, json!({"max_processes": 8}));
    assert_eq!(result["ended_by"], "max_processes", "{result}");
    assert_eq!(result["capture"]["exit"]["signal"], "SIGKILL");
    assert!(note_texts(&result["capture"]).contains("the bound max_processes ended the run"));
    assert!(!still_running(&binary));
}

#[test]
fn an_output_flood_ends_at_max_output_bytes_with_the_stream_cut_and_marked() {
    let dir = program_dir();
    let binary = compile(
        dir.path(),
        "flood",
        "#include <stdio.h>\n#include <string.h>\nint main(void) { static char line[65536]; memset(line, 'y', sizeof line); for (long i = 0; i < 1000000; i++) fwrite(line, 1, sizeof line, stdout); return 0; }\n",
    );
    let mut server = approving_server(dir.path());
    let (result, _) = capture_pinging(&mut server, &binary, json!({"max_output_bytes": 100000}));
    assert_eq!(result["ended_by"], "max_output_bytes", "{result}");
    let stdout = &result["capture"]["streams"]["stdout"];
    assert_eq!(stdout["bytes"], 100_000);
    assert_eq!(stdout["truncated"], true);
    assert_eq!(result["stdout_head"].as_str().unwrap().len(), 4_096);
    assert!(!still_running(&binary));
}

#[test]
fn a_sleep_forever_ends_at_the_wall_time() {
    let dir = program_dir();
    let binary = compile(
        dir.path(),
        "sleeper",
        "#include <unistd.h>\nint main(void) { for (int i = 0; i < 100000; i++) sleep(1); return 0; }\n",
    );
    let mut server = approving_server(dir.path());
    let started = Instant::now();
    let (result, _) = capture_pinging(&mut server, &binary, json!({"timeout_secs": 1}));
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(result["ended_by"], "timeout_secs", "{result}");
    assert_eq!(result["capture"]["exit"]["timed_out"], true);
    assert_eq!(result["capture"]["bounds"]["wall_time_ms"], 1_000);
    assert!(!still_running(&binary));
}

#[test]
fn a_memory_hog_is_refused_at_max_memory_mib() {
    let dir = program_dir();
    let binary = compile(
        dir.path(),
        "hog",
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\nint main(void) { for (int i = 0; i < 100000; i++) { char *p = malloc(1 << 20); if (!p) { puts(\"refused\"); return 3; } memset(p, 1, 1 << 20); } return 0; }\n",
    );
    let mut server = approving_server(dir.path());
    let (result, _) = capture_pinging(&mut server, &binary, json!({"max_memory_mib": 64}));
    assert_eq!(result["capture"]["exit"]["code"], 3, "{result}");
    assert_eq!(result["stdout_head"], "refused\n");
    assert_eq!(result["ended_by"], "max_memory_mib");
}

#[test]
fn a_connect_to_a_loopback_port_of_the_host_is_refused() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let dir = program_dir();
    let binary = compile(
        dir.path(),
        "connects",
        "#include <arpa/inet.h>\n#include <stdlib.h>\n#include <sys/socket.h>\nint main(int argc, char **argv) { if (argc < 2) return 2; int s = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in a = {0}; a.sin_family = AF_INET; a.sin_port = htons((unsigned short)atoi(argv[1])); a.sin_addr.s_addr = htonl(INADDR_LOOPBACK); return connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 1 : 0; }\n",
    );
    let mut server = approving_server(dir.path());
    let (result, _) = capture_pinging(
        &mut server,
        &binary,
        json!({"arguments": [port.to_string()]}),
    );
    assert_eq!(result["capture"]["exit"]["code"], 0, "{result}");
    let network: Vec<&Value> = result["capture"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|event| event["kind"] == "network")
        .collect();
    assert_eq!(network.len(), 1, "{result}");
    assert_eq!(network[0]["address"], format!("127.0.0.1:{port}"));
    assert!(network[0]["text"].as_str().unwrap().starts_with("failed: "));
    assert!(listener.accept().is_err(), "the sandbox reached the host");
}

#[test]
fn a_file_outside_the_view_cannot_be_read() {
    let secret_dir = tempfile::tempdir().unwrap();
    let secret = secret_dir.path().join("secret.txt");
    std::fs::write(&secret, "the host's secret").unwrap();
    let dir = program_dir();
    let binary = compile(
        dir.path(),
        "reader",
        "#include <stdio.h>\nint main(int argc, char **argv) { if (argc < 2) return 2; FILE *f = fopen(argv[1], \"r\"); if (!f) return 0; char b[64] = {0}; fread(b, 1, 63, f); puts(b); return 1; }\n",
    );
    let mut server = approving_server(dir.path());
    let (result, _) = capture_pinging(
        &mut server,
        &binary,
        json!({"arguments": [secret.to_string_lossy()]}),
    );
    assert_eq!(result["capture"]["exit"]["code"], 0, "{result}");
    assert!(!result["stdout_head"].as_str().unwrap().contains("secret"));
    assert!(note_texts(&result["capture"]).contains("ENOENT"));
}

#[test]
fn killing_its_parent_and_ptrace_of_its_parent_are_refused() {
    let dir = program_dir();
    let binary = compile(
        dir.path(),
        "parricide",
        "#include <signal.h>\n#include <stdio.h>\n#include <sys/ptrace.h>\n#include <unistd.h>\nint main(void) { pid_t parent = getppid(); long traced = ptrace(PTRACE_ATTACH, parent, 0, 0); kill(parent, SIGKILL); kill(1, SIGKILL); printf(\"ptrace %ld\\n\", traced); return traced == 0 ? 1 : 0; }\n",
    );
    let mut server = approving_server(dir.path());
    let (result, _) = capture_pinging(&mut server, &binary, json!({}));
    assert_eq!(result["capture"]["exit"]["code"], 0, "{result}");
    assert_eq!(result["stdout_head"], "ptrace -1\n");
    // The server is still there and serving.
    let listed = server.tool("list_evidence", json!({}));
    assert_eq!(listed["isError"], false);
}

/// A setuid program owned by another user gains nothing: the sandbox runs with
/// `no_new_privs` (bwrap sets it) on `nosuid` mounts, so the program's effective user is its
/// real one, and its attempt to become root fails.
#[test]
fn a_setuid_binary_gains_no_privilege() {
    use std::os::unix::fs::PermissionsExt;
    let dir = program_dir();
    let binary = compile(
        dir.path(),
        "setuid_probe",
        "#include <stdio.h>\n#include <unistd.h>\nint main(void) { uid_t real = getuid(), effective = geteuid(); int became = setuid(0); printf(\"real %d effective %d setuid %d\\n\", (int)real, (int)effective, became); return 0; }\n",
    );
    // Owned by `nobody` (only root can give it away), setuid: run outside the sandbox it
    // would run as nobody.
    let nobody = 65_534;
    if runs_as_root() {
        std::os::unix::fs::chown(&binary, Some(nobody), Some(nobody)).unwrap();
    }
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let outside = std::process::Command::new(&binary).output().unwrap();
    let outside = String::from_utf8_lossy(&outside.stdout).into_owned();
    let mut server = approving_server(dir.path());
    let (result, _) = capture_pinging(&mut server, &binary, json!({}));
    let inside = result["stdout_head"].as_str().unwrap().to_owned();
    let fields: Vec<&str> = inside.split_whitespace().collect();
    assert_eq!(fields.len(), 6, "{inside}");
    assert_eq!(
        fields[1], fields[3],
        "the effective user is the real one: {inside}"
    );
    assert_ne!(
        fields[3],
        nobody.to_string(),
        "the setuid bit was ignored: {inside}"
    );
    // The bit is real: outside the sandbox the effective user is nobody.
    if runs_as_root() {
        assert!(
            outside.contains(&format!("effective {nobody}")),
            "{outside}"
        );
    }
}

/// Whether the test runs as root (read from /proc, without `unsafe`).
fn runs_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix("Uid:"))
        .and_then(|ids| ids.split_whitespace().next().map(|uid| uid == "0"))
        .unwrap_or(false)
}

#[test]
fn writes_outside_its_directory_fail_and_its_directory_is_removed() {
    let dir = program_dir();
    let binary = compile(
        dir.path(),
        "writer",
        "#include <stdio.h>\nint main(int argc, char **argv) { int outside = 0; for (int i = 1; i < argc; i++) { FILE *f = fopen(argv[i], \"w\"); if (f) { outside++; fclose(f); } } FILE *mine = fopen(\"mine.txt\", \"w\"); if (!mine) return 2; fputs(\"kept inside\", mine); fclose(mine); return outside; }\n",
    );
    let before = listing(dir.path());
    let targets = [
        dir.path().join("planted.txt"),
        Path::new("/usr/rea-capture-planted").to_owned(),
        Path::new("/etc/rea-capture-planted").to_owned(),
        Path::new("/var/tmp/rea-capture-planted").to_owned(),
    ];
    let mut server = approving_server(dir.path());
    let arguments: Vec<String> = targets
        .iter()
        .map(|target| target.to_string_lossy().into_owned())
        .collect();
    let (result, _) = capture_pinging(&mut server, &binary, json!({"arguments": arguments}));
    assert_eq!(result["capture"]["exit"]["code"], 0, "{result}");
    for target in &targets {
        assert!(!target.exists(), "{} was written", target.display());
    }
    assert_eq!(listing(dir.path()), before);
}

#[test]
fn without_approval_nothing_runs_and_nothing_is_recorded() {
    require_sandbox();
    let dir = program_dir();
    let marker = dir.path().join("ran");
    let binary = compile(
        dir.path(),
        "marks",
        "#include <stdio.h>\nint main(int argc, char **argv) { (void)argc; FILE *f = fopen(argv[1], \"w\"); return f ? 0 : 1; }\n",
    );
    let mut server = ServerProcess::start_with(REA, ["--store", "memory"]);
    let opened = server.tool("open_binary", json!({"path": binary}));
    assert_eq!(opened["isError"], false);
    let result = server.tool(
        "run_process_capture",
        json!({"program": "marks", "arguments": [marker.to_string_lossy()]}),
    );
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap().to_owned();
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!("capture_run__not_approved", text);
    });
    assert!(!marker.exists());
    let listed = server.tool("list_evidence", json!({}));
    assert_eq!(
        listed["structuredContent"]["evidence"],
        json!([]),
        "{listed}"
    );
}

/// Every call of the system-call filter (`rea::capture::seccomp::REFUSED`) is refused with
/// `EPERM` inside the sandbox. Four of them succeed outside it and would succeed inside
/// without the filter (nothing else in the sandbox refuses them), so they show that the
/// filter is what refuses: `unshare(0)`, `kcmp` of the process with itself, `process_vm_readv`
/// of its own memory, and `keyctl` naming the user keyring. Every other call is made with each
/// argument 1 (a bad pointer, stdout, or no valid flag), which nothing anywhere accepts.
#[test]
fn the_system_call_filter_refuses_each_of_its_calls() {
    use rea::capture::seccomp::REFUSED;
    let dir = program_dir();
    let binary = compile(
        dir.path(),
        "refused_calls",
        "#define _GNU_SOURCE\n#include <errno.h>\n#include <stdio.h>\n#include <stdlib.h>\n#include <sys/syscall.h>\n#include <sys/uio.h>\n#include <unistd.h>\n\
         static void probe(const char *name, long r) { printf(\"%s %d\\n\", name, r == -1 ? errno : 0); }\n\
         int main(int argc, char **argv) {\n\
           char here[8] = \"abc\", there[8] = {0};\n\
           struct iovec local = {there, 4}, remote = {here, 4};\n\
           pid_t self = getpid();\n\
           probe(\"unshare\", syscall(SYS_unshare, 0));\n\
           probe(\"kcmp\", syscall(SYS_kcmp, self, self, 1, 0, 0));\n\
           probe(\"process_vm_readv\", syscall(SYS_process_vm_readv, self, &local, 1, &remote, 1, 0));\n\
           probe(\"keyctl\", syscall(SYS_keyctl, 0, -4, 0));\n\
           for (int i = 1; i < argc && i < 200; i++) { long n = strtol(argv[i], 0, 10); long r = syscall(n, 1, 1, 1, 1, 1, 1); printf(\"%ld %d\\n\", n, r == -1 ? errno : 0); }\n\
           return 0;\n\
         }\n",
    );
    let probes = ["unshare", "kcmp", "process_vm_readv", "keyctl"];
    let outside = std::process::Command::new(&binary).output().unwrap();
    let outside = String::from_utf8_lossy(&outside.stdout).into_owned();
    let expected_outside: String = probes.iter().map(|name| format!("{name} 0\n")).collect();
    assert_eq!(outside, expected_outside, "the probes succeed outside");
    let numbers: Vec<String> = REFUSED
        .iter()
        .map(|(_, number)| number.to_string())
        .collect();
    let mut server = approving_server(dir.path());
    let (result, _) = capture_pinging(&mut server, &binary, json!({"arguments": numbers}));
    assert_eq!(result["capture"]["exit"]["code"], 0, "{result}");
    let eperm = 1;
    let mut expected: String = probes
        .iter()
        .map(|name| format!("{name} {eperm}\n"))
        .collect();
    for (_, number) in REFUSED {
        expected.push_str(&format!("{number} {eperm}\n"));
    }
    assert_eq!(result["stdout_head"], expected, "{result}");
}
