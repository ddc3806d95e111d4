//! The reference angr adapter on real binaries: a C program compiled here with `cc -O0`
//! (`tests/adapters/programs/report.c`) and `/bin/true`. The adapter's virtual environment is
//! installed into `adapters/angr/.venv` (ignored) on first run by `adapters/angr/install.sh`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rea::providers::external::{AdapterSpec, Adapters};
use rea::session::Session;
use rea::tools::ToolBox;
use serde_json::{Value, json};

use crate::support::tools::success;
use rea_testkit::angr::{compile_program, installed_adapter_dir};

/// `rea serve` with a memory store and the angr provider; the adapter folder follows.
pub const SERVE_WITH_ANGR: [&str; 6] = [
    "serve",
    "--store",
    "memory",
    "--provider",
    "angr",
    "--angr-dir",
];

/// The angr adapter, installing its virtual environment first if it is missing (once per
/// test process).
pub fn angr_spec() -> AdapterSpec {
    let dir = installed_adapter_dir();
    AdapterSpec::angr(&dir, &dir.join(".venv")).expect("the adapter is installed")
}

/// A session whose binaries get the angr adapter beside `native`, with `path` open.
pub fn angr_session(path: &Path) -> (Arc<Session>, ToolBox) {
    let session = Arc::new(Session::new());
    session.set_companions(Some(Arc::new(Adapters::new(vec![angr_spec()], 2))));
    let tools = ToolBox::new(Arc::clone(&session));
    let opened = success(
        &tools,
        "open_binary",
        json!({"path": path.display().to_string()}),
    );
    assert_eq!(opened["providers"], json!(["native", "angr"]));
    (session, tools)
}

/// Every procedure of `provider`: address to name.
pub fn procedures(tools: &ToolBox, provider: &str) -> Vec<(String, Option<String>)> {
    let mut all = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut args = json!({"provider": provider, "limit": 500});
        if !cursor.is_null() {
            args["cursor"] = cursor.clone();
        }
        let page = success(tools, "list_procedures", args);
        for entry in page["procedures"].as_array().unwrap() {
            all.push((
                entry["address"].as_str().unwrap().to_owned(),
                entry["name"].as_str().map(str::to_owned),
            ));
        }
        cursor = page["next_cursor"].clone();
        if cursor.is_null() {
            return all;
        }
    }
}

/// Compares the function starts of both providers; returns (native, angr, both).
fn compare_starts(tools: &ToolBox) -> (usize, usize, usize) {
    let native: BTreeSet<String> = procedures(tools, "native")
        .into_iter()
        .map(|p| p.0)
        .collect();
    let angr: BTreeSet<String> = procedures(tools, "angr").into_iter().map(|p| p.0).collect();
    let both = native.intersection(&angr).count();
    println!(
        "function starts: native {}, angr {}, both {both}",
        native.len(),
        angr.len()
    );
    (native.len(), angr.len(), both)
}

#[test]
fn angr_names_the_procedures_of_a_compiled_program_at_the_files_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let binary = compile_program(dir.path(), "report");
    let (_session, tools) = angr_session(&binary);
    let native = procedures(&tools, "native");
    let angr = procedures(&tools, "angr");
    for name in ["main", "make_report", "classify"] {
        let find = |list: &[(String, Option<String>)]| {
            list.iter()
                .find(|(_, n)| n.as_deref() == Some(name))
                .map(|(a, _)| a.clone())
        };
        let at = find(&native).unwrap_or_else(|| panic!("native lists {name}"));
        assert_eq!(find(&angr), Some(at), "angr puts {name} where native does");
    }
    let (native, _, both) = compare_starts(&tools);
    assert!(both * 2 >= native, "most of native's starts are angr's too");

    let report = success(
        &tools,
        "decompile",
        json!({"provider": "angr", "procedure": "make_report"}),
    );
    let code = report["code"].as_str().unwrap();
    for call in ["malloc", "free", "snprintf", "report for %s: %d"] {
        assert!(code.contains(call), "{call} in\n{code}");
    }
    assert_eq!(report["evidence_kind"], "decompiler_output");
    assert_eq!(report["decompiler"], "angr 9.2.213");

    let switch = success(
        &tools,
        "decompile",
        json!({"provider": "angr", "procedure": "classify"}),
    );
    let code = switch["code"].as_str().unwrap();
    assert!(code.contains("case 5") && code.contains("63"), "{code}");
}

/// The investigator's labels reach angr (`names` of the adapter's `decompile`): its pseudo-C
/// calls the labelled procedures by their labels and names the decompiled one by its own, for
/// that call only; once the labels are undone angr's names are back.
#[test]
fn decompile_shows_the_investigators_labels_and_forgets_them_when_undone() {
    let dir = tempfile::tempdir().unwrap();
    let binary = compile_program(dir.path(), "report");
    let (_session, tools) = angr_session(&binary);
    let evidence = success(&tools, "list_procedures", json!({}))["evidence_id"].clone();
    let annotated = success(
        &tools,
        "annotate",
        json!({"edits": [
            {"kind": "name", "procedure": "make_report", "name": "write_report", "evidence": [evidence]},
            {"kind": "name", "procedure": "classify", "name": "score_argc", "evidence": [evidence]},
        ]}),
    );
    let decompiled = |procedure: &str| {
        let result = success(
            &tools,
            "decompile",
            json!({"provider": "angr", "procedure": procedure}),
        );
        result["code"].as_str().unwrap().to_owned()
    };
    let main = decompiled("main");
    for label in ["write_report", "score_argc"] {
        assert!(main.contains(label), "{label} in\n{main}");
    }
    assert!(!main.contains("make_report"), "{main}");
    let own = decompiled("write_report");
    assert!(own.contains("write_report("), "{own}");
    for annotation in annotated["annotations"].as_array().unwrap() {
        success(
            &tools,
            "undo_annotation",
            json!({"annotation": annotation["id"]}),
        );
    }
    let main = decompiled("main");
    assert!(
        main.contains("make_report") && main.contains("classify"),
        "{main}"
    );
    assert!(!main.contains("write_report"), "{main}");
}

#[test]
fn angr_agrees_with_native_on_a_stripped_system_binary() {
    let Some(binary) = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
    else {
        return;
    };
    let (_session, tools) = angr_session(&binary);
    let (native, angr, both) = compare_starts(&tools);
    assert!(native > 0 && angr > 0);
    assert!(both * 2 >= native, "most of native's starts are angr's too");
    let info = success(
        &tools,
        "procedure_info",
        json!({"provider": "angr", "procedure": procedures(&tools, "native")[0].0}),
    );
    assert_eq!(info["sources"], json!(["adapter"]));
}

/// Completion of a procedure of `provider` in `session`, with a 500 ms provider bound.
fn complete_procedure(session: &Arc<Session>, provider: &str, value: &str) -> Value {
    let server = rea::mcp::Server::with_session(
        rea::mcp::ServerConfig {
            sources: rea::session::SourceConfig {
                provider_timeout: std::time::Duration::from_millis(500),
            },
            ..Default::default()
        },
        Arc::clone(session),
    );
    server
        .complete(&json!({
            "ref": {"type": "ref/prompt", "name": "trace_crash"},
            "argument": {"name": "procedure", "value": value},
            "context": {"arguments": {"provider": provider}},
        }))
        .unwrap()
}

#[test]
fn completion_starts_angr_and_is_served_once_its_cfg_is_built_without_a_restart() {
    let Some(binary) = ["/bin/ls", "/usr/bin/ls"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
    else {
        return;
    };
    let adapters = Adapters::new(vec![angr_spec()], 2);
    let session = Arc::new(Session::new());
    session.set_companions(Some(Arc::new(adapters.clone())));
    let tools = ToolBox::new(Arc::clone(&session));
    success(
        &tools,
        "open_binary",
        json!({"path": binary.display().to_string()}),
    );
    let empty = json!({"completion": {"values": [], "total": 0, "hasMore": false}});
    let first = std::time::Instant::now();
    assert_eq!(complete_procedure(&session, "angr", "0x"), empty);
    // While the adapter starts and builds its CFG (seconds on ls), completion answers empty
    // within its bound; the adapter answers "not ready" in time and is never killed for it
    // (a killed adapter would leave none running: completion restarts one only after the
    // start-up time-out).
    let mut tries = 1;
    let mut up = false;
    let values = loop {
        let values = complete_procedure(&session, "angr", "0x");
        tries += 1;
        if values != empty {
            break values;
        }
        let running = adapters.running() == 1;
        assert!(running || !up, "the adapter stopped after {tries} requests");
        up = running;
        assert!(tries < 600, "angr's CFG of {} is built", binary.display());
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    println!(
        "angr completion served after {tries} requests, {:.1} s after the first",
        first.elapsed().as_secs_f64()
    );
    assert_eq!(adapters.running(), 1, "the same adapter, never restarted");
    let suggested = values["completion"]["values"][0].as_str().unwrap();
    let native: Vec<String> = procedures(&tools, "native")
        .into_iter()
        .map(|p| p.0)
        .collect();
    assert!(
        native.iter().any(|a| a == suggested),
        "{suggested} is a start native lists too"
    );
}
