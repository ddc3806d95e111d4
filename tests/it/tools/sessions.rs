//! Several binary sessions at once, by handle (docs/CONTRACT.md section 13): what `open_binary`
//! and `close_binary` do with sessions, the `session` argument every tool takes, the limit,
//! and the one Evidence budget.

use std::sync::Arc;

use crate::support::tools::{
    Files, call, closed, failure, snapshot, stripped_system_binary, success, this_executable,
};
use rea::session::{SessionStore, StoreConfig};
use rea::tools::ToolBox;
use serde_json::{Value, json};

fn handle_of(result: &serde_json::Map<String, Value>) -> String {
    let handle = result["session"].as_str().unwrap().to_owned();
    let body = handle.strip_prefix("bs_").unwrap();
    assert_eq!(body.len(), 22, "{handle}");
    assert!(
        body.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    );
    handle
}

fn binary() -> String {
    stripped_system_binary()
        .unwrap_or_else(this_executable)
        .display()
        .to_string()
}

/// Opens the catalog of `files`, then a real binary: two sessions (their handles).
fn catalog_and_binary(tools: &ToolBox, files: &Files) -> (String, String) {
    let a = handle_of(&success(
        tools,
        "open_binary",
        json!({"path": files.catalog()}),
    ));
    let b = handle_of(&success(tools, "open_binary", json!({"path": binary()})));
    (a, b)
}

fn store(max_sessions: usize, ledger_bytes: usize) -> ToolBox {
    ToolBox::with_store(Arc::new(SessionStore::new(StoreConfig {
        max_sessions,
        ledger_bytes,
        ..StoreConfig::default()
    })))
}

#[test]
fn open_binary_without_a_session_opens_a_new_one_beside_the_first() {
    let files = Files::new();
    let (first_session, tools) = closed();
    let first = success(&tools, "open_binary", json!({"path": files.catalog()}));
    let a = handle_of(&first);
    // The client's session had no binary open: the catalog opened in it.
    assert_eq!(first_session.label(), Some(files.catalog()));
    let second = success(&tools, "open_binary", json!({"path": binary()}));
    let b = handle_of(&second);
    assert_ne!(a, b);
    assert!(second.get("replaced").is_none(), "opening replaces nothing");
    assert_eq!(tools.store().len(), 2);

    // Each session answers for its own binary; naming none means the one opened last.
    let in_a = success(&tools, "current_document", json!({"session": a}));
    assert_eq!(in_a["provider"], "catalog");
    let in_b = success(&tools, "current_document", json!({"session": b}));
    assert_eq!(in_b["provider"], "native");
    let default = success(&tools, "current_document", json!({}));
    assert_eq!(default["provider"], "native");
    // Naming a session makes it the client's.
    success(&tools, "current_document", json!({"session": a}));
    assert_eq!(
        success(&tools, "current_document", json!({}))["provider"],
        "catalog"
    );
}

#[test]
fn evidence_and_unknowns_stay_in_the_session_that_made_them() {
    let files = Files::new();
    let (_, tools) = closed();
    let (a, b) = catalog_and_binary(&tools, &files);
    let in_a = success(&tools, "list_procedures", json!({"session": a}));
    let in_b = success(&tools, "list_segments", json!({"session": b}));
    let unknown = success(
        &tools,
        "register_unknown",
        json!({"session": a, "question": "what does main do?"}),
    );
    let ids = |session: &str| -> Vec<Value> {
        let page = success(&tools, "list_evidence", json!({"session": session}));
        page["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .map(|record| record["id"].clone())
            .collect()
    };
    assert_eq!(ids(&a), [in_a["evidence_id"].clone()]);
    assert_eq!(ids(&b), [in_b["evidence_id"].clone()]);
    let message = failure(
        &tools,
        "get_evidence",
        json!({"session": b, "id": in_a["evidence_id"]}),
    );
    assert!(message.contains("no Evidence with ID"), "{message}");
    let unknowns = success(&tools, "list_unknowns", json!({"session": b}));
    assert_eq!(unknowns["unknowns"], json!([]));
    let unknowns = success(&tools, "list_unknowns", json!({"session": a}));
    assert_eq!(unknowns["unknowns"][0]["id"], unknown["id"]);
}

#[test]
fn closing_one_session_ends_it_and_never_touches_another() {
    let files = Files::new();
    let (_, tools) = closed();
    let (a, b) = catalog_and_binary(&tools, &files);
    let kept = success(&tools, "list_segments", json!({"session": b}));
    success(&tools, "list_procedures", json!({"session": a}));

    let closed = success(&tools, "close_binary", json!({"session": a}));
    assert_eq!(closed["session"], json!(a));
    assert_eq!(closed["evidence_discarded"], 1);
    assert_eq!(tools.store().len(), 1);
    assert!(tools.store().get(&a).is_err());

    // The other session keeps its binary and its ledger.
    let record = success(
        &tools,
        "get_evidence",
        json!({"session": b, "id": kept["evidence_id"]}),
    );
    assert_eq!(record["operation"], "list_segments");
    // The closed handle is refused by name, with what to do instead.
    let message = failure(&tools, "list_procedures", json!({"session": a}));
    assert!(
        message.contains(&a) && message.contains("open_binary"),
        "{message}"
    );
}

#[test]
fn closing_the_clients_session_leaves_it_without_one_until_it_opens_or_names_another() {
    let files = Files::new();
    let (_, tools) = closed();
    let a = handle_of(&success(
        &tools,
        "open_binary",
        json!({"path": files.catalog()}),
    ));
    success(&tools, "close_binary", json!({}));
    assert!(tools.store().is_empty());
    // As with one session: no binary is open for a call naming none.
    let message = failure(&tools, "list_procedures", json!({}));
    assert_eq!(
        message,
        "no binary is open; open one with open_binary first"
    );
    let message = failure(&tools, "close_binary", json!({}));
    assert_eq!(
        message,
        "no binary is open; open one with open_binary first"
    );
    let message = failure(&tools, "close_binary", json!({"session": a}));
    assert!(message.contains("no binary session"), "{message}");
    // A read makes no session; a change makes the client's session.
    success(&tools, "list_evidence", json!({}));
    assert!(tools.store().is_empty());
    success(&tools, "register_unknown", json!({"question": "q"}));
    assert_eq!(tools.store().len(), 1);
}

#[test]
fn open_binary_naming_a_session_with_a_binary_is_refused_and_touches_no_session() {
    let files = Files::new();
    let (_, tools) = closed();
    let (a, b) = catalog_and_binary(&tools, &files);
    success(&tools, "list_procedures", json!({"session": a}));
    let message = failure(
        &tools,
        "open_binary",
        json!({"session": a, "path": this_executable().display().to_string()}),
    );
    assert!(message.contains("close_binary"), "{message}");
    assert_eq!(tools.store().len(), 2);
    let evidence = success(&tools, "list_evidence", json!({"session": a}));
    assert_eq!(evidence["evidence"].as_array().unwrap().len(), 1);
    assert_eq!(
        success(&tools, "current_document", json!({"session": b}))["label"],
        json!(binary())
    );
    // A session with no binary (made by registering an unknown) takes one, and keeps its
    // unknowns.
    let (_, fresh) = closed();
    success(&fresh, "register_unknown", json!({"question": "q"}));
    let handle = fresh.session_handle().unwrap();
    success(
        &fresh,
        "open_binary",
        json!({"session": handle.as_str(), "path": files.catalog()}),
    );
    let unknowns = success(&fresh, "list_unknowns", json!({}));
    assert_eq!(unknowns["unknowns"].as_array().unwrap().len(), 1);
}

#[test]
fn beyond_the_session_limit_opening_is_refused_and_a_failed_open_takes_no_slot() {
    let files = Files::new();
    let tools = store(2, 1 << 20);
    success(&tools, "open_binary", json!({"path": files.catalog()}));
    let message = failure(
        &tools,
        "open_binary",
        json!({"path": files.path("notes.txt")}),
    );
    assert!(message.contains("notes.txt"), "{message}");
    let second = handle_of(&success(&tools, "open_binary", json!({"path": binary()})));
    let refused = failure(&tools, "open_binary", json!({"path": files.catalog()}));
    snapshot("sessions__limit_reached", &refused, None);
    assert_eq!(tools.store().len(), 2);
    // Ending one makes room.
    success(&tools, "close_binary", json!({"session": second}));
    success(&tools, "open_binary", json!({"path": binary()}));
    assert_eq!(tools.store().len(), 2);
}

#[test]
fn every_ledger_draws_on_one_budget() {
    let files = Files::new();
    let tools = store(4, 64 << 10);
    let a = handle_of(&success(
        &tools,
        "open_binary",
        json!({"path": files.catalog()}),
    ));
    let b = handle_of(&success(
        &tools,
        "open_binary",
        json!({"path": files.catalog()}),
    ));
    // Fill the budget from session a.
    let full = loop {
        let outcome = call(&tools, "list_procedures", json!({"session": a}));
        if outcome.is_error() {
            break outcome.text().to_owned();
        }
    };
    assert!(full.contains("the Evidence ledger is full"), "{full}");
    let used = tools.store().budget().used();
    assert!(used <= 64 << 10, "{used}");
    // Session b has recorded nothing, yet the budget is spent.
    let refused = call(&tools, "list_procedures", json!({"session": b}));
    assert!(
        refused.text().contains("ledger is full"),
        "{}",
        refused.text()
    );
    // Closing a gives its bytes back.
    success(&tools, "close_binary", json!({"session": a}));
    assert_eq!(tools.store().budget().used(), 0);
    success(&tools, "list_procedures", json!({"session": b}));
}

/// With a share (as `rea serve --http` sets: a quarter), one session that fills its ledger
/// leaves the rest of the budget to the others (issue 26, fairness: one client filled the
/// shared ledger and every other client's observations were refused).
#[test]
fn one_session_cannot_take_more_than_its_share_of_the_budget() {
    let files = Files::new();
    let tools = ToolBox::with_store(Arc::new(SessionStore::new(StoreConfig {
        max_sessions: 4,
        ledger_bytes: 64 << 10,
        ledger_share_bytes: Some(16 << 10),
        ..StoreConfig::default()
    })));
    let open = || {
        handle_of(&success(
            &tools,
            "open_binary",
            json!({"path": files.catalog()}),
        ))
    };
    let (a, b) = (open(), open());
    let full = loop {
        let outcome = call(&tools, "list_procedures", json!({"session": a}));
        if outcome.is_error() {
            break outcome.text().to_owned();
        }
    };
    let used = tools.store().budget().used();
    assert!(
        used <= 16 << 10,
        "session a holds at most its share: {used}"
    );
    // Session b still observes, up to its own share.
    success(&tools, "list_procedures", json!({"session": b}));
    assert!(tools.store().budget().used() > used);
    let numbers = without_byte_counts(&full);
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!("sessions__ledger_share_full", numbers);
    });
}

/// `text` with its byte counts replaced by `N` (a record's cost depends on the catalog's
/// temporary path), the share kept.
fn without_byte_counts(text: &str) -> String {
    text.split(' ')
        .map(|word| {
            if word.chars().all(|c| c.is_ascii_digit()) && word != "16384" {
                "N"
            } else {
                word
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_session_argument_is_checked_like_any_argument_and_not_recorded() {
    let files = Files::new();
    let (_, tools) = closed();
    let a = handle_of(&success(
        &tools,
        "open_binary",
        json!({"path": files.catalog()}),
    ));
    let message = failure(&tools, "list_procedures", json!({"session": 7}));
    assert_eq!(
        message,
        "argument \"session\" of list_procedures must be a string, not a number"
    );
    let message = failure(&tools, "list_procedures", json!({"session": ""}));
    assert!(message.contains("1 to 4096 characters"), "{message}");
    let recorded = success(&tools, "list_procedures", json!({"session": a}));
    let record = success(
        &tools,
        "get_evidence",
        json!({"id": recorded["evidence_id"]}),
    );
    assert_eq!(record["arguments"], json!({}), "the handle is not Evidence");
    let message = failure(&tools, "list_procedures", json!({"nope": 1}));
    assert!(message.contains("session"), "{message}");
}

#[test]
fn every_tool_declares_the_session_argument() {
    let (_, tools) = closed();
    for definition in tools.definitions() {
        let schema = definition.to_value()["inputSchema"].clone();
        assert_eq!(
            schema["properties"]["session"]["type"],
            "string",
            "{}",
            definition.name()
        );
        let required = schema["required"].as_array().unwrap();
        assert!(
            !required.contains(&json!("session")),
            "{}",
            definition.name()
        );
    }
}

/// One step of the isolation property: a tool call naming one of three sessions.
#[derive(Clone, Debug)]
enum Step {
    Observe(usize),
    Register(usize),
    Reopen(usize),
}

fn step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    prop_oneof![
        (0usize..3).prop_map(Step::Observe),
        (0usize..3).prop_map(Step::Register),
        (0usize..3).prop_map(Step::Reopen),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Whatever calls name other sessions, a session's ledger and unknowns are exactly what
    /// the calls naming it recorded since it was last opened.
    #[test]
    fn sessions_never_see_each_others_evidence_or_unknowns(
        steps in proptest::collection::vec(step(), 1..24),
    ) {
        let files = Files::new();
        let tools = store(3, 1 << 20);
        let mut handles = Vec::new();
        for _ in 0..3 {
            handles.push(handle_of(&success(&tools, "open_binary", json!({"path": files.catalog()}))));
        }
        let mut evidence: Vec<Vec<Value>> = vec![Vec::new(); 3];
        let mut unknowns: Vec<Vec<Value>> = vec![Vec::new(); 3];
        for step in steps {
            match step {
                Step::Observe(i) => {
                    let result = success(&tools, "list_segments", json!({"session": handles[i]}));
                    evidence[i].push(result["evidence_id"].clone());
                }
                Step::Register(i) => {
                    let result = success(&tools, "register_unknown",
                        json!({"session": handles[i], "question": "why?"}));
                    unknowns[i].push(result["id"].clone());
                }
                Step::Reopen(i) => {
                    success(&tools, "close_binary", json!({"session": handles[i]}));
                    handles[i] = handle_of(&success(&tools, "open_binary",
                        json!({"path": files.catalog()})));
                    evidence[i].clear();
                    unknowns[i].clear();
                }
            }
        }
        for i in 0..3 {
            let page = success(&tools, "list_evidence", json!({"session": handles[i], "limit": 100}));
            let ids: Vec<Value> = page["evidence"].as_array().unwrap().iter()
                .map(|record| record["id"].clone()).collect();
            proptest::prop_assert_eq!(&ids, &evidence[i]);
            let page = success(&tools, "list_unknowns", json!({"session": handles[i], "limit": 100}));
            let ids: Vec<Value> = page["unknowns"].as_array().unwrap().iter()
                .map(|unknown| unknown["id"].clone()).collect();
            proptest::prop_assert_eq!(&ids, &unknowns[i]);
        }
    }
}
