//! Session lifecycle (docs/CONTRACT.md section 10): open, switch, close, replace; targets and
//! lookups.

use std::sync::Arc;

use crate::support::fixtures::fake::{Behaviour, FakeProvider, app_and_lib, entry};
use rea::session::{Address, Observation, Operation, Provider, Session, SessionError};
use serde_json::json;

fn two_documents(id: &str) -> Arc<FakeProvider> {
    Arc::new(app_and_lib(id))
}

fn snapshot(name: &str, text: String) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn session_is_send_and_sync() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<Session>();
    shareable::<Arc<dyn Provider>>();
}

#[test]
fn opening_declares_providers_and_selects_the_first_document() {
    let session = Session::new();
    let opened = session
        .open_providers("target.bin", vec![two_documents("fake")])
        .unwrap();
    assert_eq!(opened.label, "target.bin");
    assert_eq!(opened.providers, ["fake"]);
    assert_eq!(opened.current_document.as_deref(), Some("app"));
    let names: Vec<&str> = opened.documents.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["app", "lib"]);
    assert!(opened.replaced.is_none());
    assert_eq!(session.label().as_deref(), Some("target.bin"));
    assert_eq!(session.current_document().as_deref(), Some("app"));
    let summary = session.providers();
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0].id, "fake");
    assert!(summary[0].current);
    assert_eq!(
        summary[0].operations,
        [
            Operation::ListDocuments,
            Operation::ListProcedures,
            Operation::SearchProcedures
        ]
    );
}

#[test]
fn opening_rejects_missing_duplicate_and_invalid_providers() {
    let session = Session::new();
    assert!(matches!(
        session.open_providers("x", Vec::new()),
        Err(SessionError::NoProviders)
    ));
    let duplicate = session.open_providers("x", vec![two_documents("a"), two_documents("a")]);
    assert!(matches!(duplicate, Err(SessionError::DuplicateProvider { id }) if id == "a"));
    let empty = session.open_providers("x", vec![two_documents("")]);
    assert!(matches!(empty, Err(SessionError::InvalidProviderId { .. })));
    assert!(session.label().is_none());
}

#[test]
fn a_failing_provider_leaves_the_session_closed() {
    let session = Session::new();
    let failing = Arc::new(FakeProvider::new("broken", vec![]).behaving(Behaviour::Fail));
    let error = session.open_providers("x", vec![failing]).unwrap_err();
    assert!(matches!(error, SessionError::Provider { ref provider, .. } if provider == "broken"));
    assert!(session.label().is_none());
    assert!(matches!(
        session.target(None, None),
        Err(SessionError::NotOpen)
    ));
}

#[test]
fn switching_the_current_document_and_provider() {
    let session = Session::new();
    session
        .open_providers("x", vec![two_documents("one"), two_documents("two")])
        .unwrap();
    let target = session.set_current_document(None, "lib").unwrap();
    assert_eq!(target.document().unwrap(), "lib");
    assert_eq!(session.current_document().as_deref(), Some("lib"));

    session.set_current_document(Some("two"), "app").unwrap();
    let current = session.target(None, None).unwrap();
    assert_eq!(current.provider_id(), "two");
    assert_eq!(current.document().unwrap(), "app");
    assert!(session.providers()[1].current);

    let unknown = session.set_current_document(None, "nope").unwrap_err();
    assert!(matches!(unknown, SessionError::UnknownDocument { .. }));
    let undeclared = session
        .set_current_document(Some("three"), "app")
        .unwrap_err();
    assert!(matches!(undeclared, SessionError::UnknownProvider { .. }));
    assert_eq!(session.current_document().as_deref(), Some("app"));
}

#[test]
fn closing_clears_the_ledger_and_ids_are_never_reused() {
    let session = Session::new();
    session
        .open_providers("first", vec![two_documents("fake")])
        .unwrap();
    let target = session.target(None, None).unwrap();
    let first = session
        .record_evidence(target.observation("list_documents", json!({}), json!(["app"])))
        .unwrap();
    let closed = session.close().unwrap();
    assert_eq!(closed.label, "first");
    assert_eq!(closed.evidence_discarded, 1);
    assert!(session.evidence_ids().is_empty());
    assert!(matches!(
        session.evidence(first.id.as_str()),
        Err(SessionError::UnknownEvidence { .. })
    ));
    assert!(matches!(session.close(), Err(SessionError::NotOpen)));

    session
        .open_providers("second", vec![two_documents("fake")])
        .unwrap();
    let again = session
        .record_evidence(Observation::unbound("list_providers", json!({}), json!([])))
        .unwrap();
    assert!(again.id > first.id);
    assert_eq!(again.sequence, 1);
}

#[test]
fn opening_while_open_replaces_the_binary_session() {
    let session = Session::new();
    session
        .open_providers("first", vec![two_documents("fake")])
        .unwrap();
    session
        .record_evidence(Observation::unbound("list_providers", json!({}), json!([])))
        .unwrap();
    let opened = session
        .open_providers("second", vec![two_documents("other")])
        .unwrap();
    let replaced = opened.replaced.unwrap();
    assert_eq!(replaced.label, "first");
    assert_eq!(replaced.evidence_discarded, 1);
    assert_eq!(session.evidence_count(), 0);
    assert_eq!(session.provider_ids(), ["other"]);
}

#[test]
fn observations_of_a_closed_binary_are_refused() {
    let session = Session::new();
    session
        .open_providers("first", vec![two_documents("fake")])
        .unwrap();
    let stale = session.target(None, None).unwrap();
    session
        .open_providers("second", vec![two_documents("fake")])
        .unwrap();
    let refused =
        session.record_evidence(stale.observation("list_documents", json!({}), json!([])));
    assert!(matches!(refused, Err(SessionError::SessionChanged)));
    session.close().unwrap();
    let refused =
        session.record_evidence(stale.observation("list_documents", json!({}), json!([])));
    assert!(matches!(refused, Err(SessionError::SessionChanged)));
    assert_eq!(session.evidence_count(), 0);
}

/// An observation of no binary (an inventory, a capture) that finishes after `close_binary`
/// ended its session (`end_unless`) is refused: its answer must not name an Evidence ID no
/// session holds. (`close`, for a library caller that goes on using the session, ends
/// nothing.)
#[test]
fn an_unbound_record_after_close_is_refused_until_a_binary_opens() {
    let session = Session::new();
    session
        .open_providers("first", vec![two_documents("fake")])
        .unwrap();
    session.end_unless(&rea::session::Cancel::never()).unwrap();
    let refused = session.record_evidence(Observation::unbound(
        "inventory_artifacts",
        json!({}),
        json!({}),
    ));
    let error = refused.expect_err("a record in a closed session");
    assert!(matches!(error, SessionError::ClosedWhileRunning), "{error}");
    snapshot("session_lifecycle__closed_while_running", error.to_string());
    assert_eq!(session.evidence_count(), 0);
    // An integrator that opens the session again records as before.
    session
        .open_providers("second", vec![two_documents("fake")])
        .unwrap();
    let record = session.record_evidence(Observation::unbound(
        "inventory_artifacts",
        json!({}),
        json!({}),
    ));
    assert!(record.is_ok(), "{record:?}");
    assert_eq!(session.evidence_count(), 1);
}

#[test]
fn evidence_records_provider_and_document_of_the_target() {
    let session = Session::new();
    session
        .open_providers("x", vec![two_documents("fake")])
        .unwrap();
    let target = session.target(None, Some("lib")).unwrap();
    let record = session
        .record_evidence(target.observation("list_procedures", json!({"limit": 5}), json!([1])))
        .unwrap();
    assert_eq!(record.provider.as_deref(), Some("fake"));
    assert_eq!(record.document.as_deref(), Some("lib"));
    assert_eq!(record.operation, "list_procedures");
    assert_eq!(record.arguments, json!({"limit": 5}));
    assert_eq!(record.result, json!([1]));
}

#[test]
fn declared_providers_can_be_added_to_an_open_session() {
    let session = Session::new();
    assert!(matches!(
        session.declare_provider(two_documents("late")),
        Err(SessionError::NotOpen)
    ));
    session
        .open_providers("x", vec![two_documents("fake")])
        .unwrap();
    session.declare_provider(two_documents("late")).unwrap();
    assert_eq!(session.provider_ids(), ["fake", "late"]);
    assert!(matches!(
        session.declare_provider(two_documents("late")),
        Err(SessionError::DuplicateProvider { .. })
    ));
    assert_eq!(
        session.target(Some("late"), None).unwrap().provider_id(),
        "late"
    );
}

#[test]
fn procedures_resolve_by_address_or_unique_name() {
    for provider in [
        two_documents("searching"),
        Arc::new(
            FakeProvider::new(
                "listing",
                vec![(
                    "app",
                    vec![
                        entry("0x1000", Some("main")),
                        entry("0x1100", Some("dup")),
                        entry("0x1200", Some("dup")),
                    ],
                )],
            )
            .without_search(),
        ),
    ] {
        let session = Session::new();
        session.open_providers("x", vec![provider]).unwrap();
        let target = session.target(None, None).unwrap();
        assert_eq!(
            target.resolve_procedure("0x0abc").unwrap(),
            Address::new(0xabc)
        );
        assert_eq!(
            target.resolve_procedure("main").unwrap(),
            Address::new(0x1000)
        );
        match target.resolve_procedure("dup").unwrap_err() {
            SessionError::AmbiguousProcedure {
                candidates, more, ..
            } => {
                assert_eq!(candidates, [Address::new(0x1100), Address::new(0x1200)]);
                assert!(!more);
            }
            other => panic!("expected an ambiguity, got {other:?}"),
        }
        assert!(matches!(
            target.resolve_procedure("missing"),
            Err(SessionError::UnknownProcedure { .. })
        ));
    }
}

#[test]
fn session_error_messages() {
    let session = Session::new();
    session
        .open_providers("x", vec![two_documents("fake"), two_documents("other")])
        .unwrap();
    let target = session.target(None, None).unwrap();
    let messages = [
        Session::new().target(None, None).unwrap_err(),
        session.open_providers("x", Vec::new()).unwrap_err(),
        session.target(Some("ghidra"), None).unwrap_err(),
        session.set_current_document(None, "nope").unwrap_err(),
        target.resolve_procedure("dup").unwrap_err(),
        target.resolve_procedure("missing").unwrap_err(),
        target
            .query_document(|p, d| p.list_segments(d))
            .unwrap_err(),
        session.evidence("ev-12").unwrap_err(),
        session.evidence("ev-999999999999").unwrap_err(),
        session.list_evidence(Some("nope"), 10).unwrap_err(),
    ]
    .iter()
    .map(ToString::to_string)
    .collect::<Vec<_>>()
    .join("\n");
    snapshot("session_lifecycle__error_messages", messages);
}
