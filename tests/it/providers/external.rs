//! External providers through a deliberately broken adapter (`tests/adapters/fake_adapter.py`):
//! every bound (start-up, call, memory, line length, process count) and every failure (crash,
//! hang, garbage, flood, wrong id) ends in a tool error or an empty completion, the adapter is
//! killed, and the next call starts a new one.

use std::sync::Arc;
use std::time::Duration;

use rea::providers::external::{AdapterLimits, Adapters};
use rea::session::Session;
use rea::tools::ToolBox;
use serde_json::{Value, json};

use super::angr::SERVE_WITH_ANGR;
use crate::support::tools::{
    call, failure, fake_spec, quick_limits, snapshot, success, this_executable,
};

/// A session whose binaries get the fake adapter beside `native`, with this test executable
/// open.
fn fake_session(adapters: &Adapters) -> (Arc<Session>, ToolBox) {
    let session = Arc::new(Session::new());
    session.set_companions(Some(Arc::new(adapters.clone())));
    let tools = ToolBox::new(Arc::clone(&session));
    let opened = success(
        &tools,
        "open_binary",
        json!({"path": this_executable().display().to_string()}),
    );
    assert_eq!(opened["providers"], json!(["native", "fake"]));
    (session, tools)
}

fn info(tools: &ToolBox, address: &str) -> rea::tools::ToolOutcome {
    call(
        tools,
        "procedure_info",
        json!({"provider": "fake", "procedure": address}),
    )
}

/// The fake adapter's process id, from the name it gives 0x1000.
fn adapter_pid(tools: &ToolBox) -> String {
    let outcome = info(tools, "0x1000");
    assert!(!outcome.is_error(), "{}", outcome.text());
    outcome.structured_content().unwrap()["name"]["name"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn providers_are_declared_and_the_adapter_starts_lazily_once_per_session() {
    let adapters = Adapters::new(vec![fake_spec("normal", quick_limits())], 2);
    let (_session, tools) = fake_session(&adapters);
    assert_eq!(adapters.running(), 0, "opening starts no adapter");
    let listed = success(&tools, "list_providers", json!({}));
    let ids: Vec<&Value> = listed["providers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["id"])
        .collect();
    assert_eq!(ids, [&json!("native"), &json!("fake")]);
    let first = adapter_pid(&tools);
    let procedures = success(&tools, "list_procedures", json!({"provider": "fake"}));
    assert_eq!(procedures["procedures"][0]["address"], "0x1000");
    assert_eq!(adapter_pid(&tools), first, "one process serves every call");
    assert_eq!(adapters.running(), 1);
    success(&tools, "close_binary", json!({}));
    assert_eq!(
        adapters.running(),
        0,
        "closing the session stops its adapter"
    );
}

#[test]
fn a_crashed_adapter_is_a_tool_error_and_restarts_on_next_use() {
    let adapters = Adapters::new(vec![fake_spec("normal", quick_limits())], 2);
    let (_session, tools) = fake_session(&adapters);
    let before = adapter_pid(&tools);
    let message = failure(
        &tools,
        "procedure_info",
        json!({"provider": "fake", "procedure": "0xdead"}),
    );
    assert!(message.contains("exited"), "{message}");
    assert!(
        message.contains("a new one starts on the next call"),
        "{message}"
    );
    snapshot("external__crashed", &message, None);
    assert_eq!(adapters.running(), 0);
    let after = adapter_pid(&tools);
    assert_ne!(before, after, "a new process answers");
    // The native provider never noticed.
    success(&tools, "list_procedures", json!({"limit": 5}));
}

#[test]
fn a_hung_adapter_is_killed_at_the_call_bound() {
    let adapters = Adapters::new(vec![fake_spec("normal", quick_limits())], 2);
    let (_session, tools) = fake_session(&adapters);
    let before = adapter_pid(&tools);
    let message = failure(
        &tools,
        "procedure_info",
        json!({"provider": "fake", "procedure": "0xbeef"}),
    );
    assert!(
        message.contains("did not answer procedure_info in time"),
        "{message}"
    );
    snapshot("external__hung", &message, None);
    assert_eq!(adapters.running(), 0);
    assert_ne!(adapter_pid(&tools), before);
}

#[test]
fn garbage_floods_and_wrong_ids_stop_the_adapter() {
    let adapters = Adapters::new(vec![fake_spec("normal", quick_limits())], 2);
    let (_session, tools) = fake_session(&adapters);
    let mut messages = Vec::new();
    for (address, expected) in [
        ("0xbad", "garbage: the answer is not JSON"),
        ("0xf100d", "a line over 65536 bytes"),
        ("0x1d", "the answer is for request"),
    ] {
        let before = adapter_pid(&tools);
        let message = failure(
            &tools,
            "procedure_info",
            json!({"provider": "fake", "procedure": address}),
        );
        assert!(message.contains(expected), "{address}: {message}");
        messages.push(format!("{address}: {message}"));
        assert_ne!(
            adapter_pid(&tools),
            before,
            "{address} restarted the adapter"
        );
    }
    snapshot("external__garbage", &messages.join("\n"), None);
}

#[test]
fn an_adapter_error_answer_keeps_the_process() {
    let adapters = Adapters::new(vec![fake_spec("normal", quick_limits())], 2);
    let (_session, tools) = fake_session(&adapters);
    let before = adapter_pid(&tools);
    let message = failure(
        &tools,
        "procedure_info",
        json!({"provider": "fake", "procedure": "0xe77"}),
    );
    assert!(
        message.contains("answered procedure_info with error -32000"),
        "{message}"
    );
    snapshot("external__error_answer", &message, None);
    assert_eq!(adapter_pid(&tools), before);
}

#[test]
fn the_memory_limit_is_in_force() {
    let adapters = Adapters::new(vec![fake_spec("normal", quick_limits())], 2);
    let (_session, tools) = fake_session(&adapters);
    let message = failure(
        &tools,
        "procedure_info",
        json!({"provider": "fake", "procedure": "0xa11c"}),
    );
    assert!(
        message.contains("ran out of its memory limit of 512 MiB (--adapter-memory-mib)"),
        "1 GiB under a 512 MiB limit: {message}"
    );
    adapter_pid(&tools);
}

#[test]
fn a_slow_start_is_cut_by_the_start_up_bound() {
    let limits = AdapterLimits {
        start_up: Duration::from_millis(500),
        ..quick_limits()
    };
    let adapters = Adapters::new(vec![fake_spec("slow-start", limits)], 2);
    let (_session, tools) = fake_session(&adapters);
    let message = failure(&tools, "list_procedures", json!({"provider": "fake"}));
    assert!(message.contains("adapter did not start"), "{message}");
    snapshot("external__slow_start", &message, None);
    assert!(
        message.contains("did not answer describe in time"),
        "{message}"
    );
    assert_eq!(adapters.running(), 0);
}

#[test]
fn an_adapter_without_an_expected_operation_does_not_start() {
    let adapters = Adapters::new(vec![fake_spec("missing-decompile", quick_limits())], 2);
    let (_session, tools) = fake_session(&adapters);
    let message = failure(&tools, "list_procedures", json!({"provider": "fake"}));
    assert!(message.contains("does not offer decompile"), "{message}");
    snapshot("external__missing_operation", &message, None);
    assert_eq!(adapters.running(), 0);
}

#[test]
fn max_adapters_counts_processes_in_the_whole_server() {
    let limits = AdapterLimits {
        start_up: Duration::from_secs(4),
        call: Duration::from_secs(6),
        ..quick_limits()
    };
    let adapters = Adapters::new(vec![fake_spec("normal", limits)], 1);
    let (_first_session, first) = fake_session(&adapters);
    let (_second_session, second) = fake_session(&adapters);
    let first_pid = adapter_pid(&first);
    // An idle adapter of another session makes room...
    let second_pid = adapter_pid(&second);
    assert_ne!(first_pid, second_pid);
    assert_eq!(adapters.running(), 1);
    // ...a busy one does not: the start waits for it, up to its start-up time-out.
    let busy = std::thread::spawn(move || {
        call(
            &second,
            "procedure_info",
            json!({"provider": "fake", "procedure": "0xbeef"}),
        )
        .text()
        .to_owned()
    });
    std::thread::sleep(Duration::from_millis(300));
    let message = failure(
        &first,
        "procedure_info",
        json!({"provider": "fake", "procedure": "0x1000"}),
    );
    assert!(
        message.contains("1 adapter processes already run"),
        "{message}"
    );
    snapshot("external__too_many", &message, None);
    let hung = busy.join().unwrap();
    assert!(
        hung.contains("did not answer procedure_info in time"),
        "{hung}"
    );
    adapter_pid(&first);
    assert_eq!(adapters.running(), 1);
}

#[test]
fn decompile_passes_warnings_through_and_marks_the_record() {
    let adapters = Adapters::new(vec![fake_spec("normal", quick_limits())], 2);
    let (session, tools) = fake_session(&adapters);
    let result = success(
        &tools,
        "decompile",
        json!({"provider": "fake", "procedure": "alpha"}),
    );
    assert_eq!(result["evidence_kind"], "decompiler_output");
    assert_eq!(result["decompiler"], "fake 1.0");
    assert_eq!(result["complete"], true);
    assert_eq!(
        result["warnings"],
        json!(["WARNING: a warning, passed through verbatim"])
    );
    assert!(result["code"].as_str().unwrap().contains("puts"));
    let record = session
        .evidence(result["evidence_id"].as_str().unwrap())
        .unwrap();
    assert_eq!(record.operation, "decompile");
    assert_eq!(record.result["evidence_kind"], "decompiler_output");
    let cut = success(
        &tools,
        "decompile",
        json!({"provider": "fake", "procedure": "0x1000", "max_chars": 10}),
    );
    assert_eq!(cut["code"], "int alpha(");
    assert_eq!(cut["complete"], false);
    assert!(
        cut["incomplete_reason"]
            .as_str()
            .unwrap()
            .contains("cut to 10 characters")
    );
    // The native provider has no decompiler.
    let message = failure(&tools, "decompile", json!({"procedure": "main"}));
    assert!(message.contains("decompile"), "{message}");
}

fn complete_procedure(session: &Arc<Session>, provider: &str) -> Value {
    let server = rea::mcp::Server::with_session(
        rea::mcp::ServerConfig {
            sources: rea::session::SourceConfig {
                provider_timeout: Duration::from_millis(500),
            },
            ..Default::default()
        },
        Arc::clone(session),
    );
    server
        .complete(&json!({
            "ref": {"type": "ref/prompt", "name": "trace_crash"},
            "argument": {"name": "procedure", "value": ""},
            "context": {"arguments": {"provider": provider}},
        }))
        .unwrap()
}

#[test]
fn completion_answers_empty_when_the_adapter_is_cold_hung_or_dead() {
    let adapters = Adapters::new(vec![fake_spec("normal", quick_limits())], 2);
    let (session, tools) = fake_session(&adapters);
    let empty = json!({"completion": {"values": [], "total": 0, "hasMore": false}});
    assert_eq!(
        complete_procedure(&session, "fake"),
        empty,
        "completion does not wait for the adapter to start"
    );
    // That request started it in the background: later ones are served by it, and no tool
    // call was needed.
    let ledger = session.evidence_ids();
    let mut values = complete_procedure(&session, "fake");
    let mut tries = 1;
    while values == empty && tries < 200 {
        std::thread::sleep(Duration::from_millis(50));
        values = complete_procedure(&session, "fake");
        tries += 1;
    }
    assert_eq!(adapters.running(), 1, "one adapter, started by completion");
    let listed = values["completion"]["values"].as_array().unwrap();
    assert!(
        listed.contains(&json!("0x1000")) && listed.contains(&json!("alpha")),
        "{values}"
    );
    assert_eq!(session.evidence_ids(), ledger, "completion records nothing");
    let started = adapter_pid(&tools);
    assert_eq!(
        adapter_pid(&tools),
        started,
        "the tools use the same process"
    );

    let hanging = Adapters::new(vec![fake_spec("hang-list", quick_limits())], 2);
    let (session, tools) = fake_session(&hanging);
    let hung = adapter_pid(&tools);
    // Completion stops waiting at its own bound and answers empty; the adapter keeps its
    // own bound (a late answer would be dropped by the next call)...
    assert_eq!(complete_procedure(&session, "fake"), empty);
    assert_eq!(hanging.running(), 1, "completion's bound kills nothing");
    // ...and one that has not answered by then is killed and replaced on next use, which
    // succeeds.
    let replaced = adapter_pid(&tools);
    assert_ne!(replaced, hung, "the hung adapter was replaced");
    assert_eq!(hanging.running(), 1);
}

#[test]
fn a_late_answer_to_completion_is_dropped_and_the_adapter_keeps_its_work() {
    let adapters = Adapters::new(vec![fake_spec("slow-list", quick_limits())], 2);
    let (session, tools) = fake_session(&adapters);
    let started = adapter_pid(&tools);
    let empty = json!({"completion": {"values": [], "total": 0, "hasMore": false}});
    assert_eq!(complete_procedure(&session, "fake"), empty);
    // The late page is taken and dropped before the next request, by the same process.
    assert_eq!(
        adapter_pid(&tools),
        started,
        "the late adapter was not killed"
    );
    let page = success(&tools, "list_procedures", json!({"provider": "fake"}));
    assert_eq!(page["procedures"][0]["address"], "0x1000");
}

#[test]
fn serve_with_angr_not_installed_fails_at_start_saying_how_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rea-under-test"))
        .args(SERVE_WITH_ANGR)
        .arg(dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .expect("rea runs");
    assert!(!output.status.success());
    let message = String::from_utf8_lossy(&output.stderr);
    crate::support::tools::snapshot_filtered(
        "external__angr_not_installed",
        &message,
        None,
        &[(&regex::escape(&dir.path().display().to_string()), "[dir]")],
    );
}

#[test]
fn availability_offers_decompile_only_where_a_provider_supports_it() {
    let (_session, native_only) = crate::support::tools::closed();
    assert!(!native_only.availability().offers("decompile"));
    let adapters = Adapters::new(vec![fake_spec("normal", quick_limits())], 2);
    let session = Arc::new(Session::new());
    session.set_companions(Some(Arc::new(adapters.clone())));
    let tools = ToolBox::new(Arc::clone(&session));
    assert!(tools.availability().offers("decompile"), "before opening");
    let (_session, tools) = fake_session(&adapters);
    assert!(
        tools.availability().offers("decompile"),
        "with the binary open"
    );
}

proptest::proptest! {
    /// Any procedure page an adapter may write with canonical addresses parses to the same
    /// addresses and names; a leading zero is always refused.
    #[test]
    fn procedure_pages_parse_to_what_was_written(
        entries in proptest::collection::vec((proptest::num::u64::ANY, proptest::option::of("[a-z_]{1,12}")), 0..20),
    ) {
        use rea::providers::external::protocol::{Method, Reply, parse_reply};
        let procedures: Vec<Value> = entries
            .iter()
            .map(|(address, name)| json!({"address": format!("{address:#x}"), "name": name}))
            .collect();
        let line = json!({"jsonrpc": "2.0", "id": 3, "result": {"procedures": procedures, "next_cursor": null}});
        let Ok(Reply::Procedures(page)) = parse_reply(line.to_string().as_bytes(), 3, Method::ListProcedures) else {
            panic!("a valid page parses");
        };
        let parsed: Vec<(String, Option<String>)> = page.entries.into_iter().map(|e| (e.address, e.name)).collect();
        let written: Vec<(String, Option<String>)> = entries.iter().map(|(a, n)| (format!("{a:#x}"), n.clone())).collect();
        proptest::prop_assert_eq!(parsed, written);
        if let Some((address, _)) = entries.first() {
            let padded = json!({"jsonrpc": "2.0", "id": 3, "result": {"procedures": [{"address": format!("0x0{address:x}"), "name": null}], "next_cursor": null}});
            proptest::prop_assert!(parse_reply(padded.to_string().as_bytes(), 3, Method::ListProcedures).is_err());
        }
    }
}
