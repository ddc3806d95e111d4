//! The residual-unknown registry: register, refine, resolve with Evidence, list, clear.

use rea::unknowns::{
    MAX_QUESTION_CHARS, MAX_RESOLVING_EVIDENCE, ResolutionDraft, RevisionFilter, StatusFilter,
    UnknownDraft, UnknownError, UnknownFilter, UnknownRegistry, UnknownStatus,
};

fn question(text: &str) -> UnknownDraft {
    UnknownDraft {
        question: text.to_owned(),
        ..UnknownDraft::default()
    }
}

fn about(text: &str, document: &str, procedure: &str) -> UnknownDraft {
    UnknownDraft {
        question: text.to_owned(),
        document: Some(document.to_owned()),
        procedure: Some(procedure.to_owned()),
    }
}

fn evidence(ids: &[&str]) -> ResolutionDraft {
    ResolutionDraft {
        evidence: ids.iter().map(|id| (*id).to_owned()).collect(),
        note: None,
    }
}

/// A ledger holding exactly `ev-000000000001` and `ev-000000000002`.
fn ledger(id: &str) -> bool {
    matches!(id, "ev-000000000001" | "ev-000000000002")
}

#[test]
fn register_gives_ascii_ids_in_creation_order() {
    let mut registry = UnknownRegistry::new();
    let first = registry
        .register(question("What does 0x1000 decrypt?"))
        .unwrap()
        .id
        .clone();
    let second = registry
        .register(question("Who calls init?"))
        .unwrap()
        .id
        .clone();
    assert!(first.as_str().is_ascii() && first.as_str().starts_with("unk-"));
    assert_eq!(first.as_str().len(), "unk-".len() + 12);
    assert!(first < second);
    let heads: Vec<_> = registry.unresolved_heads().cloned().collect();
    assert_eq!(heads, vec![first, second]);
}

#[test]
fn refine_makes_a_new_head_and_keeps_history() {
    let mut registry = UnknownRegistry::new();
    let original = registry
        .register(about("What is the key?", "app", "0x1000"))
        .unwrap()
        .id
        .clone();
    let refined = registry
        .refine(
            original.as_str(),
            question("Is the key derived from the serial?"),
        )
        .unwrap()
        .clone();
    assert_ne!(refined.id, original);
    assert_eq!(refined.revises.as_ref(), Some(&original));
    // Omitted document and procedure are kept from the head.
    assert_eq!(refined.document.as_deref(), Some("app"));
    assert_eq!(refined.procedure.as_deref(), Some("0x1000"));
    let old = registry.get(original.as_str()).unwrap();
    assert_eq!(old.status, UnknownStatus::Superseded);
    assert_eq!(old.superseded_by.as_ref(), Some(&refined.id));
    let history: Vec<_> = registry
        .history(refined.id.as_str())
        .unwrap()
        .iter()
        .map(|u| u.id.clone())
        .collect();
    assert_eq!(history, vec![original.clone(), refined.id.clone()]);
    assert_eq!(registry.head_of(original.as_str()).unwrap().id, refined.id);
    let heads: Vec<_> = registry.unresolved_heads().cloned().collect();
    assert_eq!(heads, vec![refined.id.clone()]);

    let error = registry
        .refine(original.as_str(), question("again"))
        .unwrap_err();
    assert_eq!(
        error,
        UnknownError::NotHead {
            id: original,
            head: refined.id
        }
    );
}

#[test]
fn resolve_needs_evidence_the_ledger_holds() {
    let mut registry = UnknownRegistry::new();
    let id = registry
        .register(question("Is it packed?"))
        .unwrap()
        .id
        .clone();
    let before = registry
        .list(&UnknownFilter::default())
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();

    assert!(matches!(
        registry.resolve(id.as_str(), evidence(&[]), &ledger),
        Err(UnknownError::NoEvidence { .. })
    ));
    let missing = registry
        .resolve(
            id.as_str(),
            evidence(&["ev-000000000001", "ev-404", "ev-405"]),
            &ledger,
        )
        .unwrap_err();
    assert_eq!(
        missing,
        UnknownError::MissingEvidence {
            id: id.clone(),
            missing: vec!["ev-404".into(), "ev-405".into()]
        }
    );
    // Failed calls change nothing.
    let after = registry
        .list(&UnknownFilter::default())
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(before, after);

    let resolved = registry
        .resolve(
            id.as_str(),
            ResolutionDraft {
                evidence: vec![
                    "ev-000000000002".to_owned(),
                    "ev-000000000001".to_owned(),
                    "ev-000000000002".to_owned(),
                ],
                note: Some("UPX header at 0x400".to_owned()),
            },
            &ledger,
        )
        .unwrap()
        .clone();
    assert_eq!(resolved.status, UnknownStatus::Resolved);
    let resolution = resolved.resolution.unwrap();
    assert_eq!(
        resolution.evidence,
        vec!["ev-000000000002", "ev-000000000001"]
    );
    assert_eq!(registry.unresolved_heads().count(), 0);

    assert_eq!(
        registry.resolve(id.as_str(), evidence(&["ev-000000000001"]), &ledger),
        Err(UnknownError::AlreadyResolved { id: id.clone() })
    );
    assert_eq!(
        registry.refine(id.as_str(), question("more?")).unwrap_err(),
        UnknownError::AlreadyResolved { id }
    );
}

#[test]
fn list_filters_by_status_revision_document_and_procedure() {
    let mut registry = UnknownRegistry::new();
    let a = registry
        .register(about("a?", "app", "0x10"))
        .unwrap()
        .id
        .clone();
    let b = registry
        .register(about("b?", "lib", "0x20"))
        .unwrap()
        .id
        .clone();
    let c = registry.register(question("c?")).unwrap().id.clone();
    let a2 = registry
        .refine(a.as_str(), question("a2?"))
        .unwrap()
        .id
        .clone();
    registry
        .resolve(b.as_str(), evidence(&["ev-000000000001"]), &ledger)
        .unwrap();
    let ids = |filter: UnknownFilter| -> Vec<String> {
        registry
            .list(&filter)
            .iter()
            .map(|u| u.id.as_str().to_owned())
            .collect()
    };
    let s = |id: &rea::unknowns::UnknownId| id.as_str().to_owned();

    assert_eq!(ids(UnknownFilter::default()), vec![s(&b), s(&c), s(&a2)]);
    assert_eq!(
        ids(UnknownFilter {
            revisions: RevisionFilter::All,
            ..UnknownFilter::default()
        }),
        vec![s(&a), s(&b), s(&c), s(&a2)]
    );
    assert_eq!(
        ids(UnknownFilter {
            status: StatusFilter::Open,
            ..UnknownFilter::default()
        }),
        vec![s(&c), s(&a2)]
    );
    assert_eq!(
        ids(UnknownFilter {
            status: StatusFilter::Resolved,
            ..UnknownFilter::default()
        }),
        vec![s(&b)]
    );
    assert_eq!(
        ids(UnknownFilter {
            document: Some("app".to_owned()),
            ..UnknownFilter::default()
        }),
        vec![s(&a2)]
    );
    assert_eq!(
        ids(UnknownFilter {
            procedure: Some("0x20".to_owned()),
            ..UnknownFilter::default()
        }),
        vec![s(&b)]
    );
}

#[test]
fn clear_forgets_everything_and_ids_are_never_reused() {
    let mut registry = UnknownRegistry::new();
    let old = registry.register(question("old?")).unwrap().id.clone();
    registry.clear();
    assert!(registry.is_empty());
    assert_eq!(registry.unresolved_heads().count(), 0);
    assert!(registry.get(old.as_str()).is_none());
    assert!(matches!(
        registry.refine(old.as_str(), question("x")),
        Err(UnknownError::NotFound { .. })
    ));
    let new = registry.register(question("new?")).unwrap().id.clone();
    assert!(new > old);
}

#[test]
fn bounds_are_enforced() {
    let mut registry = UnknownRegistry::new();
    let at_limit = "q".repeat(MAX_QUESTION_CHARS);
    assert!(registry.register(question(&at_limit)).is_ok());
    let over = "é".repeat(MAX_QUESTION_CHARS + 1);
    assert!(matches!(
        registry.register(question(&over)),
        Err(UnknownError::TooLong {
            field: "question",
            ..
        })
    ));
    let id = registry.register(question("q?")).unwrap().id.clone();
    let many: Vec<String> = (0..=MAX_RESOLVING_EVIDENCE)
        .map(|n| format!("ev-{n}"))
        .collect();
    assert!(matches!(
        registry.resolve(
            id.as_str(),
            ResolutionDraft {
                evidence: many,
                note: None
            },
            &|_: &str| true
        ),
        Err(UnknownError::TooMuchEvidence { .. })
    ));
}

#[test]
fn error_messages() {
    let mut registry = UnknownRegistry::new();
    let mut messages = Vec::new();
    let mut push = |label: &str, error: UnknownError| messages.push(format!("{label}: {error}"));

    push(
        "blank question",
        registry.register(question(" \t")).unwrap_err(),
    );
    push(
        "empty document",
        registry
            .register(UnknownDraft {
                question: "q".into(),
                document: Some(String::new()),
                procedure: None,
            })
            .unwrap_err(),
    );
    push(
        "long procedure",
        registry
            .register(UnknownDraft {
                question: "q".into(),
                document: None,
                procedure: Some("p".repeat(5000)),
            })
            .unwrap_err(),
    );
    push(
        "not found",
        registry
            .refine("unk-999999999999", question("q"))
            .unwrap_err(),
    );
    let first = registry.register(question("first?")).unwrap().id.clone();
    let head = registry
        .refine(first.as_str(), question("second?"))
        .unwrap()
        .id
        .clone();
    let not_head = registry.resolve(first.as_str(), evidence(&["ev-000000000001"]), &ledger);
    push("not head", not_head.unwrap_err());
    push(
        "no evidence",
        registry
            .resolve(head.as_str(), evidence(&[]), &ledger)
            .unwrap_err(),
    );
    push(
        "missing evidence",
        registry
            .resolve(
                head.as_str(),
                evidence(&["ev-000000000001", "ev-x"]),
                &ledger,
            )
            .unwrap_err(),
    );
    push(
        "too much evidence",
        registry
            .resolve(
                head.as_str(),
                ResolutionDraft {
                    evidence: (0..101).map(|n| format!("ev-{n}")).collect(),
                    note: None,
                },
                &ledger,
            )
            .unwrap_err(),
    );
    push(
        "empty note",
        registry
            .resolve(
                head.as_str(),
                ResolutionDraft {
                    evidence: vec!["ev-000000000001".into()],
                    note: Some(String::new()),
                },
                &ledger,
            )
            .unwrap_err(),
    );
    registry
        .resolve(head.as_str(), evidence(&["ev-000000000001"]), &ledger)
        .unwrap();
    push(
        "already resolved",
        registry.refine(head.as_str(), question("q")).unwrap_err(),
    );
    push(
        "registry full",
        UnknownError::RegistryFull { limit: 10_000 },
    );

    // IDs depend on test order.
    let mut settings = crate::support::snapshots::settings();
    settings.add_filter(crate::support::snapshots::UNKNOWN_ID, "[unknown-id]");
    settings.bind(|| {
        insta::assert_snapshot!("unknowns_registry__error_messages", messages.join("\n"));
    });
}
