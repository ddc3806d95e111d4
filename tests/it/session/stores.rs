//! The session's residual-unknown registry and the four completion families it and the ledger
//! feed (Residual unknown, Process capture, Artifact manifest, Artifact occurrence): each is
//! live, closing clears them, and completion changes nothing.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::support::capture::valid_capture;
use crate::support::inventory::{app_v1, write_tree};
use proptest::prelude::*;
use rea::core::{Family, Prefix};
use rea::inventory::{Inventory, InventoryLimits, PageSize};
use rea::providers::catalog::CatalogProvider;
use rea::session::{
    INVENTORY_OPERATION, Observation, Session, SessionError, SessionView, SourceConfig,
    complete_argument,
};
use rea::unknowns::{ResolutionDraft, UnknownDraft, UnknownError, UnknownFilter, UnknownStatus};
use serde_json::{Value, json};

const FAMILIES: [Family; 4] = [
    Family::ResidualUnknown,
    Family::ProcessCapture,
    Family::ArtifactManifest,
    Family::ArtifactOccurrence,
];

fn open(session: &Session) {
    let catalog = CatalogProvider::from_json(
        br#"{"schema": "rea.catalog", "version": 1, "documents": [{"name": "app", "procedures": []}]}"#,
    )
    .unwrap();
    session
        .open_providers("app.json", vec![Arc::new(catalog)])
        .unwrap();
}

fn question(text: &str) -> UnknownDraft {
    UnknownDraft {
        question: text.to_owned(),
        ..UnknownDraft::default()
    }
}

fn complete(session: &Session, family: Family) -> Vec<String> {
    complete_argument(
        session,
        family,
        &Prefix::new("").unwrap(),
        &BTreeMap::new(),
        &SourceConfig::default(),
    )
    .values
}

/// Retains every page of an inventory of `app_v1` as `inventory_artifacts` would.
fn retain_inventory(session: &Session) -> Inventory {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), &app_v1());
    let inventory = Inventory::of_directory(dir.path(), &InventoryLimits::default()).unwrap();
    for page in inventory.pages(PageSize::new(2).unwrap()) {
        let result = serde_json::to_value(&page).unwrap();
        session
            .record_evidence(Observation::unbound(INVENTORY_OPERATION, json!({}), result))
            .unwrap();
    }
    inventory
}

fn retain_capture(session: &Session, capture: Value) -> String {
    let record = session
        .record_evidence(Observation::unbound(
            "import_process_capture",
            json!({}),
            capture,
        ))
        .unwrap();
    record.id.to_string()
}

#[test]
fn residual_unknowns_offer_unresolved_heads_only() {
    let session = Session::new();
    open(&session);
    let first = session
        .register_unknown(question("What is 0x1000?"))
        .unwrap();
    let other = session.register_unknown(question("Who calls it?")).unwrap();
    let head = session
        .refine_unknown(first.id.as_str(), question("Is 0x1000 the decryptor?"))
        .unwrap();
    assert_eq!(
        complete(&session, Family::ResidualUnknown),
        [other.id.as_str(), head.id.as_str()]
    );

    let missing = session.resolve_unknown(
        head.id.as_str(),
        ResolutionDraft {
            evidence: vec!["ev-999999999999".into()],
            note: None,
        },
    );
    assert!(matches!(
        missing,
        Err(SessionError::Unknown(UnknownError::MissingEvidence { .. }))
    ));
    let evidence = session
        .record_evidence(Observation::unbound("list_providers", json!({}), json!([])))
        .unwrap();
    let resolved = session
        .resolve_unknown(
            head.id.as_str(),
            ResolutionDraft {
                evidence: vec![evidence.id.to_string()],
                note: Some("yes".into()),
            },
        )
        .unwrap();
    assert_eq!(resolved.status, UnknownStatus::Resolved);
    assert_eq!(
        complete(&session, Family::ResidualUnknown),
        [other.id.as_str()]
    );
    assert_eq!(session.list_unknowns(&UnknownFilter::default()).len(), 2);
}

#[test]
fn captures_offer_valid_v4_imports_only() {
    let session = Session::new();
    let valid = retain_capture(&session, valid_capture());
    let mut other_version = valid_capture();
    other_version["version"] = json!(3);
    retain_capture(&session, other_version);
    retain_capture(&session, json!({"schema": "rea.process-capture"}));
    // A valid capture recorded under another operation is not a capture.
    session
        .record_evidence(Observation::unbound(
            "get_evidence",
            json!({}),
            valid_capture(),
        ))
        .unwrap();
    assert_eq!(complete(&session, Family::ProcessCapture), [valid]);
    assert_eq!(session.evidence_count(), 4);
}

#[test]
fn artifacts_offer_retained_manifests_and_occurrences() {
    let session = Session::new();
    assert!(complete(&session, Family::ArtifactManifest).is_empty());
    let inventory = retain_inventory(&session);
    // An invalid page under the inventory operation is retained but offers nothing.
    session
        .record_evidence(Observation::unbound(
            INVENTORY_OPERATION,
            json!({}),
            json!({"schema": "rea.artifact-inventory", "manifest_id": "bogus"}),
        ))
        .unwrap();
    assert_eq!(
        complete(&session, Family::ArtifactManifest),
        [inventory.manifest_id()]
    );
    let mut expected: Vec<String> = inventory
        .occurrences()
        .iter()
        .map(|o| o.occurrence_id.clone())
        .collect();
    let mut offered = complete(&session, Family::ArtifactOccurrence);
    expected.sort();
    offered.sort();
    assert_eq!(offered, expected);
}

#[test]
fn closing_clears_every_family() {
    let session = Session::new();
    open(&session);
    retain_inventory(&session);
    retain_capture(&session, valid_capture());
    session.register_unknown(question("Why?")).unwrap();
    for family in FAMILIES {
        assert!(!complete(&session, family).is_empty(), "{family:?} is live");
    }
    session.close().unwrap();
    for family in FAMILIES {
        assert!(complete(&session, family).is_empty(), "{family:?} cleared");
    }
    assert!(session.list_unknowns(&UnknownFilter::default()).is_empty());
}

/// Everything completion can see, to show a request changed none of it.
fn state(session: &Session) -> (Vec<String>, Vec<String>) {
    let unknowns = session
        .list_unknowns(&UnknownFilter {
            revisions: rea::unknowns::RevisionFilter::All,
            ..UnknownFilter::default()
        })
        .iter()
        .map(|u| format!("{u:?}"))
        .collect();
    (session.evidence_ids(), unknowns)
}

#[derive(Clone, Debug)]
enum Step {
    Register,
    Refine,
    Resolve,
    Capture(bool),
    Inventory,
    Close,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        Just(Step::Register),
        Just(Step::Refine),
        Just(Step::Resolve),
        any::<bool>().prop_map(Step::Capture),
        Just(Step::Inventory),
        Just(Step::Close),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// After a close, no identifier of the closed session is suggested by any of the four
    /// families (nor by Evidence), and no completion request changes the ledger or registry.
    #[test]
    fn closed_identifiers_are_never_suggested(steps in prop::collection::vec(step(), 1..12)) {
        let session = Session::new();
        open(&session);
        // Session-scoped identifiers handed out in sessions that have since closed.
        let mut closed_ids: Vec<String> = Vec::new();
        let mut current_ids: Vec<String> = Vec::new();
        for step in steps {
            match step {
                Step::Register => {
                    let unknown = session.register_unknown(question("What?")).unwrap();
                    current_ids.push(unknown.id.to_string());
                }
                Step::Refine | Step::Resolve => {
                    let Some(head) = session.unresolved_unknown_ids().pop() else { continue };
                    let id = if matches!(step, Step::Refine) {
                        session.refine_unknown(&head, question("Which?")).unwrap().id
                    } else {
                        let evidence = retain_capture(&session, json!({"n": 1}));
                        current_ids.push(evidence.clone());
                        let draft = ResolutionDraft { evidence: vec![evidence], note: None };
                        session.resolve_unknown(&head, draft).unwrap().id
                    };
                    current_ids.push(id.to_string());
                }
                Step::Capture(valid) => {
                    let capture = if valid { valid_capture() } else { json!({}) };
                    current_ids.push(retain_capture(&session, capture));
                }
                Step::Inventory => {
                    retain_inventory(&session);
                    current_ids.extend(session.evidence_ids());
                }
                Step::Close => {
                    session.close().unwrap();
                    closed_ids.append(&mut current_ids);
                    open(&session);
                }
            }
            let before = state(&session);
            for family in FAMILIES.into_iter().chain([Family::Evidence]) {
                for value in complete(&session, family) {
                    prop_assert!(!closed_ids.contains(&value), "{family:?} offered {value}");
                }
            }
            prop_assert_eq!(state(&session), before);
            prop_assert_eq!(SessionView::residual_unknown_ids(&session), session.unresolved_unknown_ids());
        }
    }
}
