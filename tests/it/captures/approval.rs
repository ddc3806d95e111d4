//! The person's approval of `run_process_capture` through MCP elicitation (docs/CONTRACT.md
//! section 10), through the real `rea serve` over stdio without `--approve-captures`: a 2025
//! client that declared elicitation is sent `elicitation/create` and its person accepts,
//! declines, cancels, unticks `run`, or the client answers an error or cancels the request; a
//! 2026 request is answered `input_required` with a sealed state and its retry carries the
//! answer; a client that cannot ask, or an older protocol version, gets a tool error. Only
//! accept runs the program; every other ending commits nothing (the ledger is compared).

use std::path::Path;
use std::process::Command;

use rea_testkit::server_process::ServerProcess;
use serde_json::{Value, json};

use crate::support::capture::sandboxed::{REA, compile, program_dir};
use crate::support::client::with_modern_meta;

const EXITS_SEVEN: &str = r#"
#include <stdio.h>
int main(int argc, char **argv) { printf("ran with %d arguments\n", argc - 1); return 7; }
"#;

/// `rea serve --store memory --root DIR` (the person approves), initialized as `version`
/// with `capabilities`.
fn serve(root: &Path, version: &str, capabilities: Value) -> ServerProcess {
    let mut command = Command::new(REA);
    command
        .args(["serve", "--store", "memory", "--root"])
        .arg(root)
        .stderr(std::process::Stdio::null());
    ServerProcess::initialized_as(
        command,
        json!({"protocolVersion": version, "capabilities": capabilities,
               "clientInfo": {"name": "approval-tests", "version": "0"}}),
    )
}

/// A server, the compiled program open in it, and the program's document name.
struct Fixture {
    server: ServerProcess,
    document: Value,
    dir: tempfile::TempDir,
}

fn fixture(version: &str, capabilities: Value) -> Fixture {
    let dir = program_dir();
    let binary = compile(dir.path(), "exits_seven", EXITS_SEVEN);
    let mut server = serve(dir.path(), version, capabilities);
    let opened = server.tool("open_binary", json!({"path": binary}));
    assert_eq!(opened["isError"], false, "{opened}");
    let document = opened["structuredContent"]["current_document"].clone();
    Fixture {
        server,
        document,
        dir,
    }
}

fn evidence(server: &mut ServerProcess) -> Value {
    server.tool("list_evidence", json!({}))["structuredContent"].clone()
}

fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    result["content"][0]["text"].as_str().unwrap().to_owned()
}

/// Sends the capture call and returns its id and the `elicitation/create` request it caused.
fn call_and_elicit(fixture: &mut Fixture) -> (u64, Value) {
    let id = fixture.server.send_tool(
        "run_process_capture",
        json!({"program": fixture.document, "arguments": ["one", "two"]}),
    );
    let asked = fixture.server.next_message();
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    (id, asked)
}

/// Answers the server's request `asked` with `result`, then returns the tool call's result.
fn answer(fixture: &mut Fixture, id: u64, asked: &Value, result: Value) -> Value {
    fixture
        .server
        .write(&json!({"jsonrpc": "2.0", "id": asked["id"], "result": result}));
    fixture.server.response(id)["result"].clone()
}

/// Snapshots `text` under `name`, with the temporary directory and digests replaced.
fn snapshot(name: &str, text: &str, dir: &Path) {
    let mut settings = crate::support::snapshots::settings();
    crate::support::snapshots::filter_path(
        &mut settings,
        &std::fs::canonicalize(dir).unwrap(),
        "[DIR]",
    );
    settings.add_filter("[0-9a-f]{64}", "[SHA256]");
    settings.bind(|| insta::assert_snapshot!(name, text));
}

#[test]
fn accept_runs_the_program_once_and_the_capture_names_the_person() {
    let mut fixture = fixture("2025-11-25", json!({"elicitation": {"form": {}}}));
    let (id, asked) = call_and_elicit(&mut fixture);
    let params = &asked["params"];
    assert_eq!(params["mode"], "form");
    assert_eq!(
        params["requestedSchema"]["properties"]["run"]["type"],
        "boolean"
    );
    snapshot(
        "capture_approval__elicitation_message",
        params["message"].as_str().unwrap(),
        fixture.dir.path(),
    );
    let result = answer(
        &mut fixture,
        id,
        &asked,
        json!({"action": "accept", "content": {"run": true}}),
    );
    assert_eq!(result["isError"], false, "{result}");
    let capture = &result["structuredContent"]["capture"];
    assert_eq!(capture["exit"]["code"], 7, "{capture}");
    assert_eq!(
        capture["approval"]["approved_by"],
        "the person, asked through MCP (2025 elicitation/create)"
    );
    assert_eq!(
        result["structuredContent"]["stdout_head"],
        "ran with 2 arguments\n"
    );
    let listed = evidence(&mut fixture.server);
    assert!(
        listed.to_string().contains("run_process_capture"),
        "the capture is Evidence: {listed}"
    );
    fixture.server.finish();
}

#[test]
fn decline_cancel_an_unticked_run_an_error_and_a_cancelled_call_run_nothing() {
    let mut fixture = fixture("2025-06-18", json!({"elicitation": {}}));
    let before = evidence(&mut fixture.server);
    let endings = [
        ("capture_approval__declined", json!({"action": "decline"})),
        ("capture_approval__cancelled", json!({"action": "cancel"})),
        (
            "capture_approval__unticked",
            json!({"action": "accept", "content": {"run": false}}),
        ),
        ("capture_approval__not_a_result", json!({"action": "maybe"})),
    ];
    for (name, ending) in endings {
        let (id, asked) = call_and_elicit(&mut fixture);
        assert!(
            asked["params"].get("mode").is_none(),
            "2025-06-18 has no mode"
        );
        let result = answer(&mut fixture, id, &asked, ending);
        snapshot(name, &error_text(&result), fixture.dir.path());
    }
    // The client answers the elicitation with an error.
    let (id, asked) = call_and_elicit(&mut fixture);
    fixture
        .server
        .write(&json!({"jsonrpc": "2.0", "id": asked["id"],
        "error": {"code": -32601, "message": "Method not found"}}));
    let result = fixture.server.response(id)["result"].clone();
    snapshot(
        "capture_approval__client_error",
        &error_text(&result),
        fixture.dir.path(),
    );
    // The client cancels the call while its person is asked: no answer, nothing runs.
    let (id, _asked) = call_and_elicit(&mut fixture);
    fixture.server.write(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": id, "reason": "the person walked away"}}),
    );
    let ping = fixture.server.send("ping", json!({}));
    let answered = fixture.server.next_response();
    assert_eq!(
        answered["id"],
        json!(ping),
        "a cancelled call is not answered: {answered}"
    );
    assert_eq!(
        evidence(&mut fixture.server),
        before,
        "nothing was committed"
    );
    fixture.server.finish();
}

#[test]
fn a_client_that_cannot_ask_gets_an_error_and_nothing_runs() {
    for (version, capabilities) in [
        ("2025-11-25", json!({})),
        // Elicitation does not exist before 2025-06-18, whatever the client declares.
        ("2025-03-26", json!({"elicitation": {}})),
        // URL mode alone cannot show a form.
        ("2025-11-25", json!({"elicitation": {"url": {}}})),
    ] {
        let mut fixture = fixture(version, capabilities);
        let before = evidence(&mut fixture.server);
        let result = fixture
            .server
            .tool("run_process_capture", json!({"program": fixture.document}));
        snapshot(
            "capture_approval__not_approved",
            &error_text(&result),
            fixture.dir.path(),
        );
        assert_eq!(evidence(&mut fixture.server), before);
        fixture.server.finish();
    }
}

#[test]
fn bad_arguments_are_answered_before_anyone_is_asked() {
    let mut fixture = fixture("2025-11-25", json!({"elicitation": {}}));
    let result = fixture.server.tool(
        "run_process_capture",
        json!({"program": fixture.document, "inherit_environment": ["HOME"]}),
    );
    assert!(error_text(&result).contains("HOME"), "{result}");
    fixture.server.finish();
}

fn modern_capture(document: &Value, extra: Value, elicitation: bool) -> Value {
    let capabilities = if elicitation {
        json!({"elicitation": {"form": {}}})
    } else {
        json!({})
    };
    let mut params = json!({"name": "run_process_capture",
        "arguments": {"program": document, "arguments": ["x"]}});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    with_modern_meta(
        params,
        json!({"io.modelcontextprotocol/clientCapabilities": capabilities}),
    )
}

fn modern_call(server: &mut ServerProcess, params: Value) -> Value {
    let id = server.send("tools/call", params);
    server.response(id)
}

#[test]
fn a_2026_request_is_answered_input_required_and_its_retry_carries_the_answer() {
    let mut fixture = fixture("2025-11-25", json!({}));
    let before = evidence(&mut fixture.server);
    let document = fixture.document.clone();
    let first = modern_call(
        &mut fixture.server,
        modern_capture(&document, json!({}), true),
    );
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let request = &result["inputRequests"]["approval"];
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["mode"], "form");
    assert!(
        request["params"]["message"]
            .as_str()
            .unwrap()
            .contains(r#"Arguments: "x""#),
        "{request}"
    );
    let state = result["requestState"].clone();
    assert!(state.is_string());

    // Declined: an error, nothing committed.
    let declined = modern_call(
        &mut fixture.server,
        modern_capture(
            &document,
            json!({"inputResponses": {"approval": {"action": "decline"}}, "requestState": state}),
            true,
        ),
    );
    assert!(
        error_text(&declined["result"]).contains("decline"),
        "{declined}"
    );
    // The approval cannot be moved to other arguments.
    let mut moved = modern_capture(
        &document,
        json!({"inputResponses": {"approval": {"action": "accept"}}, "requestState": state}),
        true,
    );
    moved["arguments"]["arguments"] = json!(["y"]);
    let moved = modern_call(&mut fixture.server, moved);
    snapshot(
        "capture_approval__changed",
        &error_text(&moved["result"]),
        fixture.dir.path(),
    );
    // A forged state is a protocol error.
    let forged = modern_call(
        &mut fixture.server,
        modern_capture(
            &document,
            json!({"inputResponses": {"approval": {"action": "accept"}}, "requestState": "forged"}),
            true,
        ),
    );
    assert_eq!(forged["error"]["code"], -32602, "{forged}");
    assert_eq!(
        evidence(&mut fixture.server),
        before,
        "nothing was committed"
    );

    // Accepted: it runs, and the capture names the person.
    let accepted = modern_call(
        &mut fixture.server,
        modern_capture(
            &document,
            json!({"inputResponses": {"approval": {"action": "accept", "content": {"run": true}}},
                   "requestState": state}),
            true,
        ),
    );
    let result = &accepted["result"];
    assert_eq!(result["isError"], false, "{accepted}");
    assert_eq!(result["structuredContent"]["capture"]["exit"]["code"], 7);
    assert_eq!(
        result["structuredContent"]["capture"]["approval"]["approved_by"],
        "the person, asked through MCP (2026 input_required elicitation)"
    );

    // Without elicitation declared in _meta: a tool error.
    let refused = modern_call(
        &mut fixture.server,
        modern_capture(&document, json!({}), false),
    );
    assert!(
        error_text(&refused["result"]).contains("elicitation"),
        "{refused}"
    );
    fixture.server.finish();
}
