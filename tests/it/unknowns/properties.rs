//! Properties of the residual-unknown registry under arbitrary call sequences.

use proptest::prelude::*;
use rea::unknowns::{
    MAX_QUESTION_CHARS, ResolutionDraft, RevisionFilter, StatusFilter, UnknownDraft, UnknownFilter,
    UnknownId, UnknownRegistry, UnknownStatus,
};

#[derive(Clone, Debug)]
enum Op {
    Register(UnknownDraft),
    Refine(usize, UnknownDraft),
    Resolve(usize, Vec<String>),
    Clear,
}

/// Questions including the hard cases: blank, combining marks, Hangul, default ignorables,
/// and lengths at and over the bound.
fn question() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ?]{1,20}",
        Just(String::new()),
        Just(" \t\n".to_owned()),
        Just("e\u{301}\u{1100}\u{1161}\u{200b}?".to_owned()),
        Just("Ǆ".repeat(MAX_QUESTION_CHARS)),
        Just("x".repeat(MAX_QUESTION_CHARS + 1)),
    ]
}

fn draft() -> impl Strategy<Value = UnknownDraft> {
    (
        question(),
        prop::option::of(prop_oneof![Just("app".to_owned()), Just(String::new())]),
        prop::option::of(Just("0x1000".to_owned())),
    )
        .prop_map(|(question, document, procedure)| UnknownDraft {
            question,
            document,
            procedure,
        })
}

fn evidence_ids() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop_oneof![
            Just("ev-000000000001".to_owned()),
            Just("ev-000000000002".to_owned()),
            Just("ev-missing".to_owned()),
        ],
        0..4,
    )
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => draft().prop_map(Op::Register),
        3 => (any::<usize>(), draft()).prop_map(|(i, d)| Op::Refine(i, d)),
        3 => (any::<usize>(), evidence_ids()).prop_map(|(i, e)| Op::Resolve(i, e)),
        1 => Just(Op::Clear),
    ]
}

fn in_ledger(id: &str) -> bool {
    id == "ev-000000000001" || id == "ev-000000000002"
}

fn everything(registry: &UnknownRegistry) -> Vec<rea::unknowns::Unknown> {
    registry
        .list(&UnknownFilter {
            revisions: RevisionFilter::All,
            ..UnknownFilter::default()
        })
        .into_iter()
        .cloned()
        .collect()
}

proptest! {
    #[test]
    fn registry_invariants_hold_after_every_call(ops in prop::collection::vec(op(), 1..40)) {
        let mut registry = UnknownRegistry::new();
        let mut issued: Vec<UnknownId> = Vec::new();
        for op in ops {
            let before = everything(&registry);
            let pick = |i: usize| issued.get(i % issued.len().max(1)).map(|id| id.as_str().to_owned())
                .unwrap_or_else(|| "unk-000000000000".to_owned());
            let outcome = match op {
                Op::Register(draft) => registry.register(draft).map(|u| u.id.clone()),
                Op::Refine(i, draft) => registry.refine(&pick(i), draft).map(|u| u.id.clone()),
                Op::Resolve(i, evidence) => registry
                    .resolve(&pick(i), ResolutionDraft { evidence, note: None }, &in_ledger)
                    .map(|u| u.id.clone()),
                Op::Clear => { registry.clear(); continue; }
            };
            match outcome {
                Ok(id) => {
                    if !issued.contains(&id) {
                        // New IDs are unique and sort after every earlier one.
                        prop_assert!(issued.iter().all(|old| *old < id));
                        prop_assert!(id.as_str().is_ascii());
                        issued.push(id);
                    }
                }
                Err(_) => prop_assert_eq!(everything(&registry), before),
            }
            let heads: Vec<UnknownId> = registry.unresolved_heads().cloned().collect();
            let open: Vec<UnknownId> = registry
                .list(&UnknownFilter { status: StatusFilter::Open, ..UnknownFilter::default() })
                .iter().map(|u| u.id.clone()).collect();
            prop_assert_eq!(&heads, &open);
            prop_assert!(heads.windows(2).all(|w| w[0] < w[1]));
            for id in &heads {
                let record = registry.get(id.as_str()).unwrap();
                prop_assert_eq!(record.status, UnknownStatus::Open);
                prop_assert!(record.superseded_by.is_none() && record.resolution.is_none());
            }
            for record in everything(&registry) {
                match record.status {
                    UnknownStatus::Resolved => {
                        let resolution = record.resolution.as_ref().unwrap();
                        prop_assert!(!resolution.evidence.is_empty());
                        prop_assert!(resolution.evidence.iter().all(|e| in_ledger(e)));
                    }
                    UnknownStatus::Superseded => prop_assert!(record.superseded_by.is_some()),
                    UnknownStatus::Open => prop_assert!(record.superseded_by.is_none()),
                }
                // Every chain ends in exactly one head.
                let head = registry.head_of(record.id.as_str()).unwrap();
                prop_assert!(head.status != UnknownStatus::Superseded);
            }
        }
    }
}
