//! Resume (docs/CONTRACT.md section 16): a session kept in the store survives the server that
//! served it, and a restart gives the same completions, rendered prompts and resource reads,
//! byte for byte.

use std::path::Path;

use crate::support::fixtures::{Built, Format, Spec, build};
use crate::support::server_process::ServerProcess;
use serde_json::{Value, json};

const REA: &str = env!("CARGO_BIN_EXE_rea-under-test");

/// `rea serve --store STORE --open BINARY`.
fn serve(store: &Path, binary: &Path) -> ServerProcess {
    ServerProcess::start_with(
        REA,
        [
            "--store".as_ref(),
            store.as_os_str(),
            "--open".as_ref(),
            binary.as_os_str(),
        ],
    )
}

/// A temporary folder holding the generated program `sample` (the store goes beside it).
fn sample() -> (tempfile::TempDir, Built) {
    let dir = tempfile::tempdir().unwrap();
    let built = build(&Spec::sample(), Format::Elf);
    std::fs::write(dir.path().join("sample"), &built.bytes).unwrap();
    (dir, built)
}

fn structured(result: &Value) -> &Value {
    assert_eq!(result["isError"], json!(false), "{result}");
    &result["structuredContent"]
}

/// The one listed session's handle and record count.
fn listed(server: &mut ServerProcess) -> Vec<Value> {
    let result = server.tool("list_sessions", json!({}));
    structured(&result)["sessions"].as_array().unwrap().clone()
}

/// What a client sees of the session: completions of every family the session projects,
/// rendered prompts that name its IDs, resource reads of its records and unknowns, and the
/// ledger and registry listings.
fn observe(
    server: &mut ServerProcess,
    session: &str,
    evidence: &[String],
    unknowns: &[String],
) -> Vec<String> {
    let mut seen = Vec::new();
    let complete = |prompt: &str, argument: &str, value: &str| {
        json!({"ref": {"type": "ref/prompt", "name": prompt},
               "argument": {"name": argument, "value": value}})
    };
    for (prompt, argument, value) in [
        ("audit_residual_unknowns", "unknown", ""),
        ("audit_residual_unknowns", "unknown", "unk-"),
        ("audit_residual_unknowns", "evidence", ""),
        ("audit_residual_unknowns", "evidence", "ev-0"),
        ("investigate_feature", "document", ""),
        ("investigate_feature", "procedure", ""),
        ("investigate_feature", "procedure", "api"),
    ] {
        seen.push(server.request_text("completion/complete", complete(prompt, argument, value)));
    }
    seen.push(server.request_text(
        "prompts/get",
        json!({"name": "audit_residual_unknowns",
               "arguments": {"unknown": unknowns[0], "evidence": evidence[0]}}),
    ));
    seen.push(server.request_text(
        "prompts/get",
        json!({"name": "investigate_feature", "arguments": {"feature": "the license check"}}),
    ));
    for id in evidence {
        let uri = format!("rea://session/{session}/evidence/{id}");
        seen.push(server.request_text("resources/read", json!({"uri": uri})));
    }
    for id in unknowns {
        let uri = format!("rea://session/{session}/unknown/{id}");
        seen.push(server.request_text("resources/read", json!({"uri": uri})));
    }
    let call = |name: &str, arguments: Value| json!({"name": name, "arguments": arguments});
    seen.push(server.request_text("tools/call", call("list_evidence", json!({"limit": 100}))));
    seen.push(server.request_text(
        "tools/call",
        call("list_unknowns", json!({"revisions": "all"})),
    ));
    seen.push(server.request_text("tools/call", call("current_document", json!({}))));
    seen
}

#[test]
fn a_restarted_server_resumes_the_session_and_answers_byte_for_byte_as_before() {
    let (dir, built) = sample();
    let (store, binary) = (dir.path().join("store.sqlite"), dir.path().join("sample"));

    let mut first = serve(&store, &binary);
    let sessions = listed(&mut first);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let session = sessions[0]["session"].as_str().unwrap().to_owned();
    let mut evidence = Vec::new();
    for (tool, arguments) in [
        ("list_documents", json!({})),
        ("list_procedures", json!({"limit": 3})),
        (
            "read_bytes",
            json!({"address": format!("{:#x}", built.text_address), "length": 8}),
        ),
        ("search_procedures", json!({"query": "api"})),
    ] {
        let result = first.tool(tool, arguments);
        evidence.push(
            structured(&result)["evidence_id"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    let mut unknowns = Vec::new();
    for question in [
        "What does main decrypt?",
        "Who calls api_open?",
        "Is fini reached?",
    ] {
        let result = first.tool("register_unknown", json!({"question": question}));
        unknowns.push(structured(&result)["id"].as_str().unwrap().to_owned());
    }
    let refined = first.tool(
        "refine_unknown",
        json!({"id": unknowns[0], "question": "What does main decrypt, and with which key?"}),
    );
    unknowns.push(structured(&refined)["id"].as_str().unwrap().to_owned());
    let resolved = first.tool(
        "resolve_unknown",
        json!({"id": unknowns[1], "evidence": [evidence[1]], "note": "main"}),
    );
    structured(&resolved);
    let before = observe(&mut first, &session, &evidence, &unknowns);
    // The server is killed, not stopped: nothing is written at exit.
    drop(first);

    let mut second = serve(&store, &binary);
    let sessions = listed(&mut second);
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["session"], json!(session));
    assert_eq!(sessions[0]["records"], json!(evidence.len()));
    assert_eq!(sessions[0]["open_unknowns"], json!(2));
    let after = observe(&mut second, &session, &evidence, &unknowns);
    for (before, after) in before.iter().zip(&after) {
        assert_eq!(before, after);
    }
    assert_eq!(before.len(), after.len());

    // open_binary of the same file resumes the kept session, with its record count.
    let reopened = second.tool("open_binary", json!({"path": binary}));
    let reopened = structured(&reopened);
    assert_eq!(reopened["resumed"], json!(true), "{reopened}");
    assert_eq!(reopened["records"], json!(evidence.len()));
    assert_eq!(reopened["session"], json!(session));
    // Numbering continues after the restart: a new record sorts after every earlier one.
    let later = second.tool("list_segments", json!({}));
    let later = structured(&later)["evidence_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(evidence.iter().all(|earlier| earlier < &later), "{later}");
    // new_session opens the file anew beside it.
    let fresh = second.tool("open_binary", json!({"path": binary, "new_session": true}));
    let fresh = structured(&fresh);
    assert_eq!(fresh["resumed"], json!(false));
    assert_ne!(fresh["session"], json!(session));
    let fresh = fresh["session"].as_str().unwrap().to_owned();
    let closed = second.tool("close_binary", json!({"session": session}));
    structured(&closed);
    drop(second);

    // close_binary cleared the session from the store: only the new one comes back.
    let mut third = serve(&store, &binary);
    let sessions = listed(&mut third);
    let handles: Vec<&str> = sessions
        .iter()
        .map(|s| s["session"].as_str().unwrap())
        .collect();
    assert_eq!(handles, [fresh.as_str()]);
    let unknown = third.tool(
        "get_evidence",
        json!({"id": evidence[0], "session": session}),
    );
    assert_eq!(unknown["isError"], json!(true), "{unknown}");
}

#[test]
fn the_binary_is_kept_once_and_resumes_when_its_file_is_gone() {
    let (dir, _) = sample();
    let (store, binary) = (dir.path().join("store.sqlite"), dir.path().join("sample"));
    let mut first = serve(&store, &binary);
    let twin = first.tool("open_binary", json!({"path": binary, "new_session": true}));
    structured(&twin);
    let listing = first.tool("list_procedures", json!({"limit": 4}));
    let listing = structured(&listing).clone();
    drop(first);
    let connection = rusqlite::Connection::open(&store).unwrap();
    let kept: i64 = connection
        .query_row("SELECT count(*) FROM binaries", [], |row| row.get(0))
        .unwrap();
    assert_eq!(kept, 1, "two sessions of one file keep its bytes once");
    drop(connection);

    std::fs::remove_file(&binary).unwrap();
    let mut second = ServerProcess::start_with(REA, ["--store".as_ref(), store.as_os_str()]);
    let sessions = listed(&mut second);
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    let newest = sessions
        .iter()
        .find(|s| s["records"] == json!(1))
        .expect("the session that listed procedures");
    let again = second.tool(
        "list_procedures",
        json!({"limit": 4, "session": newest["session"]}),
    );
    let again = structured(&again);
    assert_eq!(again["procedures"], listing["procedures"]);
}
