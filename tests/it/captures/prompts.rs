//! The two capture workflows, rendered by the real `rea serve` (`prompts/get`): both list
//! `run_process_capture` with its approval step spelled out, and say that a suggestion never
//! authorizes a run.

use rea_testkit::server_process::ServerProcess;
use serde_json::json;

use crate::support::capture::sandboxed::REA;

#[test]
fn the_capture_workflows_spell_out_the_approval_step() {
    let mut server = ServerProcess::start_with(REA, ["--store", "memory"]);
    for (name, arguments) in [
        ("trace_crash", json!({"symptom": "SIGSEGV at 0x0"})),
        (
            "prepare_bounded_process_capture",
            json!({"objective": "see which files it opens"}),
        ),
    ] {
        let id = server.send("prompts/get", json!({"name": name, "arguments": arguments}));
        let response = server.response(id);
        let text = response["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{response}"))
            .to_owned();
        assert!(text.contains("`run_process_capture`"), "{text}");
        assert!(
            text.contains("A suggestion never authorizes a run"),
            "{text}"
        );
        crate::support::snapshots::settings().bind(|| {
            insta::assert_snapshot!(format!("capture_prompts__{name}"), text);
        });
    }
}
