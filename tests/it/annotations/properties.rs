//! Properties of the annotation history (docs/CONTRACT.md section 17): for any sequence of
//! batches and undos, undoing everything the sequence did (newest first) gives back the state
//! before it; a refused batch changes nothing.

use proptest::prelude::*;
use rea::annotations::{AnnotationRegistry, EditDraft, EditKind};

const EVIDENCE: &str = "ev-000000000001";

/// One step: a batch of edits (kind, address index, value index), or the undo of the
/// revision at an index of the history (taken modulo its length).
#[derive(Clone, Debug)]
enum Step {
    Batch(Vec<(u8, u8, u8)>),
    Undo(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        proptest::collection::vec((0u8..3, 0u8..4, 0u8..4), 1..4).prop_map(Step::Batch),
        any::<usize>().prop_map(Step::Undo),
    ]
}

fn draft(&(kind, address, value): &(u8, u8, u8)) -> EditDraft {
    let (kind, value) = match kind {
        0 => (EditKind::Name, format!("name_{value}")),
        1 => (EditKind::Comment, format!("comment {value}")),
        _ => (EditKind::Prototype, format!("int f{value}(void);")),
    };
    EditDraft {
        kind,
        document: "main".into(),
        address: format!("0x{:x}", 0x1000 + u64::from(address) * 0x10),
        value,
        evidence: vec![EVIDENCE.into()],
        procedure: true,
    }
}

fn run(registry: &mut AnnotationRegistry, steps: &[Step]) {
    let ledger = |id: &str| id == EVIDENCE;
    for step in steps {
        match step {
            Step::Batch(edits) => {
                let planned = registry
                    .plan_batch(edits.iter().map(draft).collect(), &ledger)
                    .unwrap();
                registry.apply(planned);
            }
            Step::Undo(at) => {
                let history: Vec<String> =
                    registry.history().map(|(r, _)| r.id.to_string()).collect();
                if history.is_empty() {
                    continue;
                }
                // An undo of something undone is refused and changes nothing.
                if let Ok(undo) = registry.plan_undo(&history[at % history.len()]) {
                    registry.apply(vec![undo]);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn undoing_everything_gives_back_the_state_before(
        before in proptest::collection::vec(step(), 0..6),
        steps in proptest::collection::vec(step(), 0..12),
    ) {
        let mut registry = AnnotationRegistry::new();
        run(&mut registry, &before);
        let state = registry.projection().clone();
        let labels = registry.labels();
        let kept = registry.len();
        run(&mut registry, &steps);
        // Undo what the sequence added, newest first: undoing a revision only ever changes
        // older ones, so one pass suffices.
        let added: Vec<String> = registry
            .history()
            .skip(kept)
            .map(|(r, _)| r.id.to_string())
            .collect();
        for id in added.iter().rev() {
            let effective = registry
                .history()
                .any(|(r, on)| on && r.id.as_str() == id);
            if effective {
                let undo = registry.plan_undo(id).unwrap();
                registry.apply(vec![undo]);
            }
        }
        prop_assert_eq!(registry.projection(), &state);
        prop_assert_eq!(registry.labels(), labels);
        // The history is kept: nothing was removed.
        prop_assert!(registry.len() >= kept + added.len());
    }

    #[test]
    fn a_refused_batch_changes_nothing(
        steps in proptest::collection::vec(step(), 0..8),
        bad_at in 0usize..4,
    ) {
        let mut registry = AnnotationRegistry::new();
        run(&mut registry, &steps);
        let state = registry.projection().clone();
        let length = registry.len();
        let mut edits: Vec<EditDraft> = (0..4u8).map(|i| draft(&(i % 3, i, i))).collect();
        edits[bad_at].evidence = vec!["ev-000000000002".into()];
        let ledger = |id: &str| id == EVIDENCE;
        let refused = registry.plan_batch(edits, &ledger);
        prop_assert!(refused.is_err());
        prop_assert_eq!(registry.projection(), &state);
        prop_assert_eq!(registry.len(), length);
    }
}
