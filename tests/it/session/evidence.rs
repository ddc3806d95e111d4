//! The Evidence ledger (docs/CONTRACT.md section 10): ID syntax, uniqueness, ordering, lookup and
//! paging.

use std::collections::HashSet;
use std::sync::Arc;

use crate::support::fixtures::fake::FakeProvider;
use proptest::prelude::*;
use rea::session::{EvidenceId, Observation, Session, SessionError};
use serde_json::json;

fn observe(session: &Session, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            session
                .record_evidence(Observation::unbound("probe", json!({ "i": i }), json!(i)))
                .unwrap()
                .id
                .to_string()
        })
        .collect()
}

#[test]
fn ids_are_fixed_width_ascii() {
    let session = Session::new();
    for id in observe(&session, 3) {
        assert!(id.is_ascii());
        assert_eq!(id.len(), "ev-000000000042".len());
        assert!(EvidenceId::parse(&id).is_ok());
    }
}

#[test]
fn id_syntax_is_checked() {
    for bad in [
        "",
        "ev-",
        "ev-12",
        "EV-000000000001",
        "ev-00000000000a",
        "ev-0000000000001",
    ] {
        assert!(EvidenceId::parse(bad).is_err(), "{bad:?} was accepted");
    }
}

#[test]
fn ids_are_unique_across_sessions_and_threads() {
    let sessions: Vec<Session> = (0..4).map(|_| Session::new()).collect();
    let ids: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = sessions
            .iter()
            .map(|session| scope.spawn(|| observe(session, 200)))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let unique: HashSet<&String> = ids.iter().collect();
    assert_eq!(unique.len(), ids.len());
    for session in &sessions {
        let listed = session.evidence_ids();
        assert!(listed.windows(2).all(|pair| pair[0] < pair[1]));
    }
}

#[test]
fn records_are_found_by_id_and_paged_oldest_first() {
    let session = Session::new();
    let ids = observe(&session, 7);
    assert_eq!(session.evidence_ids(), ids);
    let third = session.evidence(&ids[2]).unwrap();
    assert_eq!(third.sequence, 3);
    assert_eq!(third.arguments, json!({ "i": 2 }));

    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let page = session.list_evidence(cursor.as_deref(), 3).unwrap();
        assert!(page.records.len() <= 3);
        seen.extend(page.records.iter().map(|r| r.id.to_string()));
        match page.next_cursor {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, ids);
}

#[test]
fn unknown_and_invalid_ids_are_errors() {
    let session = Session::new();
    observe(&session, 1);
    assert!(matches!(
        session.evidence("ev-000000000000"),
        Err(SessionError::UnknownEvidence { .. })
    ));
    assert!(matches!(
        session.evidence("0x10"),
        Err(SessionError::InvalidEvidenceId(_))
    ));
}

proptest! {
    /// Interleaving records and closes: IDs of one process strictly increase as strings, and
    /// the ledger lists the IDs recorded since the last binary session ended, oldest first
    /// (opening replaces, and so ends, an open binary session).
    #[test]
    fn ids_sort_in_creation_order(steps in proptest::collection::vec(0u8..4, 1..60)) {
        let session = Session::new();
        let provider = Arc::new(FakeProvider::new("fake", vec![("only", Vec::new())]));
        let mut all = Vec::new();
        let mut current = Vec::new();
        let mut open = false;
        for step in steps {
            if step == 0 {
                session.open_providers("x", vec![provider.clone()]).unwrap();
                if open {
                    current.clear();
                }
                open = true;
            } else {
                let id = observe(&session, 1).remove(0);
                all.push(id.clone());
                current.push(id);
            }
            prop_assert_eq!(session.evidence_ids(), current.clone());
        }
        prop_assert!(all.windows(2).all(|pair| pair[0] < pair[1]));
    }
}
