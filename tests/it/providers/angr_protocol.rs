//! The reference angr adapter against the published protocol: every line of a real run (the
//! server's requests and the adapter's answers, recorded by `tests/adapters/record_adapter.py`
//! between them) validates against its JSON Schema in `schemas/provider-protocol/`, on a C
//! program compiled here with `cc` and on `/bin/ls`. The server never sends `close` (it kills
//! the process), so `close` is checked on an exchange of its own.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;

use rea::providers::external::{AdapterSpec, Adapters};
use rea::session::Session;
use rea::tools::ToolBox;
use serde_json::{Value, json};

use super::angr::angr_spec;
use crate::support::tools::{failure, success};
use rea_testkit::angr::compile_program;

fn schemas() -> PathBuf {
    crate::root().join("schemas/provider-protocol")
}

fn recorder() -> PathBuf {
    crate::root().join("tests/adapters/record_adapter.py")
}

/// The published schema `<method>.<kind>.json`, compiled once.
fn validator(method: &str, kind: &str) -> Arc<jsonschema::Validator> {
    let file = format!("{method}.{kind}.json");
    crate::support::schema::validator(&format!("provider-protocol/{file}"), || {
        let text = std::fs::read_to_string(schemas().join(&file))
            .unwrap_or_else(|e| panic!("no schema {file}: {e}"));
        let schema: Value = serde_json::from_str(&text).unwrap();
        jsonschema::validator_for(&schema).unwrap_or_else(|e| panic!("{file} compiles: {e}"))
    })
}

fn assert_valid(method: &str, kind: &str, message: &Value) {
    let errors: Vec<String> = validator(method, kind)
        .iter_errors(message)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "not a valid {method} {kind}: {errors:?}\n{message}"
    );
}

/// What a recorded run held: each method, and each error code answered.
#[derive(Default, Debug)]
struct Seen {
    requests: BTreeSet<String>,
    results: BTreeSet<String>,
    errors: BTreeSet<i64>,
}

/// Validates every line of the log `path` (`> ` request, `< ` answer); answers are checked
/// against the schema of the method their id was sent with.
fn check_log(path: &Path) -> Seen {
    let text = std::fs::read_to_string(path).expect("the recorder wrote its log");
    let mut methods: HashMap<String, String> = HashMap::new();
    let mut seen = Seen::default();
    for line in text.lines() {
        let (mark, body) = line.split_at(2);
        let message: Value = serde_json::from_str(body)
            .unwrap_or_else(|e| panic!("a protocol line is one JSON value ({e}): {body}"));
        let id = message["id"].to_string();
        match mark {
            "> " => {
                let method = message["method"]
                    .as_str()
                    .expect("a request names its method");
                assert_valid(method, "request", &message);
                assert!(
                    methods.insert(id, method.to_owned()).is_none(),
                    "ids are not reused"
                );
                seen.requests.insert(method.to_owned());
            }
            "< " => {
                let method = methods
                    .get(&id)
                    .unwrap_or_else(|| panic!("an answer to a request sent: {body}"));
                assert_valid(method, "response", &message);
                if let Some(code) = message["error"]["code"].as_i64() {
                    seen.errors.insert(code);
                } else {
                    seen.results.insert(method.clone());
                }
            }
            other => panic!("unknown mark {other:?} in the log"),
        }
    }
    println!("{} protocol lines checked: {seen:?}", text.lines().count());
    seen
}

/// A session whose binaries get the angr adapter, run through the recorder logging to `log`.
fn recorded_session(log: &Path, binary: &Path) -> (Arc<Session>, ToolBox) {
    let mut spec: AdapterSpec = angr_spec();
    let mut args = vec![
        recorder().into_os_string(),
        log.as_os_str().to_owned(),
        spec.program.clone().into_os_string(),
    ];
    args.append(&mut spec.args);
    spec.args = args;
    let session = Arc::new(Session::new());
    session.set_companions(Some(Arc::new(Adapters::new(vec![spec], 2))));
    let tools = ToolBox::new(Arc::clone(&session));
    let opened = success(
        &tools,
        "open_binary",
        json!({"path": binary.display().to_string()}),
    );
    assert_eq!(opened["providers"], json!(["native", "angr"]));
    (session, tools)
}

/// The tool calls of a real run: documents, every page of procedures (small pages, so
/// cursors are used), a bad cursor, a procedure's info, an address that starts none, and a
/// decompilation of `procedure`.
fn drive(tools: &ToolBox, procedure: &str) {
    let documents = success(tools, "list_documents", json!({"provider": "angr"}));
    assert_eq!(documents["documents"].as_array().unwrap().len(), 1);
    let mut cursor = Value::Null;
    let mut pages = 0;
    loop {
        let mut args = json!({"provider": "angr", "limit": 5});
        if !cursor.is_null() {
            args["cursor"] = cursor.clone();
        }
        let page = success(tools, "list_procedures", args);
        pages += 1;
        cursor = page["next_cursor"].clone();
        if cursor.is_null() || pages == 3 {
            break;
        }
    }
    assert!(pages > 1, "the listing spans pages of 5");
    let message = failure(
        tools,
        "list_procedures",
        json!({"provider": "angr", "cursor": "99999999"}),
    );
    assert!(message.contains("cursor"), "{message}");
    let info = success(
        tools,
        "procedure_info",
        json!({"provider": "angr", "procedure": procedure}),
    );
    let start = info["address"].as_str().unwrap();
    let inside = format!("{:#x}", u64::from_str_radix(&start[2..], 16).unwrap() + 1);
    let message = failure(
        tools,
        "procedure_info",
        json!({"provider": "angr", "procedure": inside}),
    );
    assert!(message.contains(&inside), "{message}");
    let decompiled = success(
        tools,
        "decompile",
        json!({"provider": "angr", "procedure": start}),
    );
    assert!(!decompiled["code"].as_str().unwrap().is_empty());
    // With a label, the request carries `names` (validated with the rest of the log).
    success(
        tools,
        "annotate",
        json!({"edits": [{"kind": "name", "procedure": start, "name": "labelled_here",
                          "evidence": [decompiled["evidence_id"]]}]}),
    );
    let named = success(
        tools,
        "decompile",
        json!({"provider": "angr", "procedure": start}),
    );
    let code = named["code"].as_str().unwrap();
    assert!(code.contains("labelled_here"), "{code}");
}

fn assert_every_kind(seen: &Seen) {
    let served: BTreeSet<String> = [
        "describe",
        "open",
        "list_documents",
        "list_procedures",
        "procedure_info",
        "decompile",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(seen.requests, served, "every method but close was sent");
    assert_eq!(
        seen.results, served,
        "every method was answered with a result"
    );
    for code in [-32002, -32003] {
        assert!(
            seen.errors.contains(&code),
            "error {code} answered: {seen:?}"
        );
    }
}

#[test]
fn every_message_of_a_real_run_on_a_compiled_program_fits_its_schema() {
    let dir = tempfile::tempdir().unwrap();
    let binary = compile_program(dir.path(), "report");
    let log = dir.path().join("protocol.log");
    let (_session, tools) = recorded_session(&log, &binary);
    drive(&tools, "make_report");
    success(&tools, "close_binary", json!({}));
    assert_every_kind(&check_log(&log));
}

#[test]
fn every_message_of_a_real_run_on_bin_ls_fits_its_schema() {
    let Some(ls) = ["/bin/ls", "/usr/bin/ls"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("protocol.log");
    let (_session, tools) = recorded_session(&log, &ls);
    // The first procedure native and angr both list: stripped, it has an address only.
    let native = success(
        &tools,
        "list_procedures",
        json!({"provider": "native", "limit": 500}),
    );
    let angr = success(
        &tools,
        "list_procedures",
        json!({"provider": "angr", "limit": 500}),
    );
    let starts = |page: &serde_json::Map<String, Value>| -> BTreeSet<String> {
        page["procedures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["address"].as_str().unwrap().to_owned())
            .collect()
    };
    let both = starts(&native);
    let first = starts(&angr)
        .into_iter()
        .find(|a| both.contains(a))
        .expect("native and angr share a start");
    drive(&tools, &first);
    success(&tools, "close_binary", json!({}));
    assert_every_kind(&check_log(&log));
}

#[test]
fn close_is_answered_as_published_and_the_adapter_exits() {
    let spec = angr_spec();
    let mut child = Command::new(&spec.program)
        .args(&spec.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the adapter starts");
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for (id, method, params) in [
        (1, "describe", json!({"protocol": 1})),
        (2, "close", json!({})),
    ] {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        assert_valid(method, "request", &request);
        writeln!(input, "{request}").unwrap();
        input.flush().unwrap();
        let mut line = String::new();
        output.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_valid(method, "response", &answer);
        assert_eq!(answer["id"], id);
        assert!(answer.get("result").is_some(), "{answer}");
        answers.push(answer);
    }
    let mut rest = String::new();
    assert_eq!(
        output.read_line(&mut rest).unwrap(),
        0,
        "nothing after close"
    );
    let status = child.wait().unwrap();
    assert!(status.success(), "the adapter exits after close: {status}");
    assert_eq!(answers[1]["result"], json!({}));
}

#[test]
fn the_schemas_refuse_what_the_protocol_forbids() {
    let page = |address: &str| {
        json!({"jsonrpc": "2.0", "id": 3, "result": {
            "procedures": [{"address": address, "name": null}], "next_cursor": null}})
    };
    assert!(validator("list_procedures", "response").is_valid(&page("0x1179")));
    for address in ["0x01179", "0x1179A", "1179", "0x"] {
        assert!(
            !validator("list_procedures", "response").is_valid(&page(address)),
            "{address} is not a canonical address"
        );
    }
    let decompiled = json!({"jsonrpc": "2.0", "id": 4, "result": {
        "address": "0x1179", "name": "f", "code": "int f() {}",
        "warnings": vec!["w"; 101], "complete": true, "reason": null}});
    assert!(!validator("decompile", "response").is_valid(&decompiled));
    let both = json!({"jsonrpc": "2.0", "id": 5, "result": {},
                      "error": {"code": -32000, "message": "x"}});
    assert!(!validator("close", "response").is_valid(&both));
}
