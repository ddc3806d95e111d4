//! `run_process_capture` of crashing C programs compiled at test time, through the real
//! `rea serve` with operator approval: each capture is a valid Process Capture v4 retained as
//! Evidence, its fault maps to the faulting procedure of the open document and its callers, and
//! completion's Process capture family offers it for `trace_crash`.

use rea::capture::{CaptureValidity, classify_capture};
use serde_json::{Value, json};

use crate::support::capture::sandboxed::{approving_server, capture, compile, program_dir};

const TWO_DEEP: &str = r#"
#include <stdio.h>
void inner(int *p) { *p = 42; }
void middle(int *p) { inner(p); }
int main(void) { puts("about to crash"); fflush(stdout); middle(0); return 0; }
"#;

fn names(procedures: &Value) -> Vec<String> {
    procedures
        .as_array()
        .unwrap()
        .iter()
        .map(|procedure| procedure["name"].as_str().unwrap_or("?").to_owned())
        .collect()
}

#[test]
fn a_crash_two_calls_deep_maps_to_the_faulting_procedure_and_its_callers() {
    let dir = program_dir();
    let binary = compile(dir.path(), "two_deep", TWO_DEEP);
    let mut server = approving_server(dir.path());
    let result = capture(&mut server, &binary, json!({}));
    let capture = &result["capture"];
    assert_eq!(
        classify_capture(capture),
        CaptureValidity::ValidV4,
        "{capture}"
    );
    assert_eq!(capture["exit"]["signal"], "SIGSEGV");
    assert_eq!(capture["exit"]["timed_out"], false);
    assert_eq!(
        capture["approval"]["approved_by"],
        "operator policy (rea serve --approve-captures)"
    );
    let fault = &result["fault"];
    assert_eq!(fault["signal"], "SIGSEGV");
    assert_eq!(fault["address"], "0x0");
    assert_eq!(fault["procedure"]["name"], "inner", "{fault}");
    assert_eq!(names(&fault["callers"])[..2], ["middle", "main"], "{fault}");
    // The instruction lies inside `inner` as the open document places it (PIE bias removed).
    let inner = server.tool("procedure_info", json!({"procedure": "inner"}));
    let start = inner["structuredContent"]["address"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(fault["procedure"]["address"], start);
    let parse = |text: &Value| u64::from_str_radix(&text.as_str().unwrap()[2..], 16).unwrap();
    let offset = parse(&fault["instruction_in_document"]);
    assert!(offset > parse(&json!(start)) && offset < parse(&json!(start)) + 64);
    assert_eq!(result["stdout_head"], "about to crash\n");
    // Retained as Evidence, offered by the Process capture family, read by the claims.
    let id = result["evidence_id"].as_str().unwrap().to_owned();
    let record = server.tool("get_evidence", json!({"id": id}));
    assert_eq!(
        record["structuredContent"]["operation"],
        "run_process_capture"
    );
    let completion = server.request_text(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "trace_crash"},
               "argument": {"name": "capture", "value": ""}}),
    );
    assert!(completion.contains(&id), "{completion}");
    let verdict = server.tool(
        "verify_reconstruction",
        json!({"claims": [{"kind": "capture_stdout_digest", "capture": id,
                           "sha256": capture["streams"]["stdout"]["sha256"]}]}),
    );
    assert_eq!(
        verdict["structuredContent"]["verdicts"][0]["status"],
        "supported"
    );
}

#[test]
fn null_write_abort_stack_overflow_and_division_by_zero_each_say_how_they_ended() {
    let cases = [
        (
            "null_write",
            "void write_null(void) { *(volatile int *)0 = 1; }\nint main(void) { write_null(); return 0; }\n",
            "SIGSEGV",
            Some("write_null"),
        ),
        (
            "aborts",
            "#include <stdlib.h>\nvoid give_up(void) { abort(); }\nint main(void) { give_up(); return 0; }\n",
            "SIGABRT",
            None,
        ),
        (
            "overflow",
            "int recurse(int n) { volatile char pad[4096]; pad[0] = (char)n; return recurse(n + 1) + pad[0]; }\nint main(void) { return recurse(0); }\n",
            "SIGSEGV",
            Some("recurse"),
        ),
        (
            "divides",
            "int divide(int a, int b) { return a / b; }\nint main(int argc, char **argv) { (void)argv; return divide(7, argc - 1); }\n",
            "SIGFPE",
            Some("divide"),
        ),
    ];
    let dir = program_dir();
    let mut server = approving_server(dir.path());
    for (name, source, signal, procedure) in cases {
        let binary = compile(dir.path(), name, source);
        let result = capture(&mut server, &binary, json!({}));
        let capture = &result["capture"];
        assert_eq!(
            classify_capture(capture),
            CaptureValidity::ValidV4,
            "{name}: {capture}"
        );
        // The whole exit (code, signal, timed_out, the bound that ended it) says why, if not.
        assert_eq!(
            capture["exit"]["signal"], signal,
            "{name}: {}",
            capture["exit"]
        );
        match procedure {
            Some(procedure) => {
                assert_eq!(result["fault"]["signal"], signal, "{name}");
                assert_eq!(
                    result["fault"]["procedure"]["name"], procedure,
                    "{name}: {result}"
                );
            }
            None => assert_eq!(result["fault"], Value::Null, "{name}"),
        }
    }
}

/// Real users are not root: the same capture works for an unprivileged user, through
/// unprivileged user namespaces (run as `nobody` when the suite runs as root).
#[test]
fn an_unprivileged_server_captures_the_same_crash() {
    let dir = program_dir();
    let binary = compile(dir.path(), "two_deep", TWO_DEEP);
    let root = rustix::process::getuid().is_root();
    let mut command = if root {
        let mut command = std::process::Command::new("runuser");
        command
            .args(["-u", "nobody", "--"])
            .arg(crate::support::capture::sandboxed::REA);
        command
    } else {
        std::process::Command::new(crate::support::capture::sandboxed::REA)
    };
    command
        .args(["serve", "--store", "memory", "--approve-captures", "--root"])
        .arg(dir.path())
        .stderr(std::process::Stdio::null());
    let mut server = rea_testkit::server_process::ServerProcess::with_command(command);
    let result = capture(&mut server, &binary, json!({}));
    assert_eq!(result["capture"]["exit"]["signal"], "SIGSEGV", "{result}");
    assert_eq!(result["fault"]["procedure"]["name"], "inner", "{result}");
}
