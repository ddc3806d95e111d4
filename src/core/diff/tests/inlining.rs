//! Callees that one version inlines: which pair holds their code.

use super::*;
use crate::core::diff::matcher::inlining::{take_in, tidied};

#[test]
fn a_callee_that_the_other_version_inlined_does_not_pair_with_the_caller_holding_it() {
    // A kept function (0) called by a large callee (1) and by its small caller (2); the
    // candidate inlined the callee into that caller (1), which now calls the kept one
    // itself. Among the kept function's callers, the callee is the most alike to the
    // candidate's caller, but the caller with the callee taken in is more alike still.
    let kept = body(0x100, 9, 20, vec![]);
    let mut callee = body(0x200, 1, 60, vec![]);
    callee.callees = vec![0];
    let mut caller = body(0x300, 2, 12, vec![]);
    caller.callees = vec![1, 0];
    let mut holding = caller.clone();
    holding.callees = vec![0];
    take_in(&mut holding, &callee, 1);
    let mut holding = tidied(holding);
    (holding.shape, holding.bytes) = (holding.shape ^ 0x77, holding.bytes ^ 0x77);
    assert!(similarity(&callee, &holding) >= MIN_NEIGHBOUR_SIMILARITY);
    assert!(similarity(&callee, &holding) > similarity(&caller, &holding));
    let result = compare(
        &[kept.clone(), callee, caller],
        &[kept, holding],
        &mut never(),
    );
    assert_eq!(
        partner(&result, 0),
        Some((0, Signal::ExactBytes)),
        "{result:?}"
    );
    assert_eq!(partner(&result, 1), None, "{result:?}");
}

/// A large callee (1) called by a named caller (0) and by a small unpaired one (2); the
/// candidate inlined it into both, so nothing calls what holds it (1, the small caller
/// grown, `edits` instructions edited) and the named caller calls nothing. With the
/// callee's paired caller asked, which now calls nothing: (baseline, candidate).
fn inlined_into_an_uncalled_caller(edits: usize) -> (Vec<Fingerprint>, Vec<Fingerprint>) {
    let mut named = procedure(0x10, 100, vec![1, 2, 3], vec![1]);
    named.name = Some("named".into());
    let callee = body(0x200, 1, 60, vec![]);
    let mut caller = body(0x300, 2, 4, vec![]);
    caller.callees = vec![1];
    let mut holding = caller.clone();
    holding.callees.clear();
    take_in(&mut holding, &callee, 1);
    let mut holding = edited(&tidied(holding), edits);
    holding.address = 0x400;
    let mut named_now = named.clone();
    named_now.callees.clear();
    (vec![named, callee, caller], vec![named_now, holding])
}

#[test]
fn a_callee_inlined_into_a_caller_nothing_calls_does_not_pair_with_it_from_as_alike() {
    let (baseline, candidate) = inlined_into_an_uncalled_caller(6);
    let alone = similarity(&baseline[1], &candidate[1]);
    let mut grown = baseline[2].clone();
    grown.callees.clear();
    take_in(&mut grown, &baseline[1], 1);
    let held = similarity(&tidied(grown), &candidate[1]);
    // The caller holding it is not more alike by the margin, only about as alike.
    assert!(alone >= MIN_LIKENESS, "{alone}");
    assert!(
        held < alone + LIKENESS_MARGIN && held >= alone - LIKENESS_MARGIN,
        "{held} {alone}"
    );
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(
        partner(&result, 0),
        Some((0, Signal::SymbolName)),
        "{result:?}"
    );
    assert_eq!(partner(&result, 1), None, "{result:?}");
    // Without a paired caller to say where it was called, the callee keeps its likeness
    // (a wrapper removed in the candidate, and the body it called).
    let (mut baseline, candidate) = inlined_into_an_uncalled_caller(6);
    baseline[0].callees.clear();
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(
        partner(&result, 1),
        Some((1, Signal::Likeness)),
        "{result:?}"
    );
}

#[test]
fn a_function_whose_small_callee_one_version_inlines_pairs_with_the_callee_taken_in() {
    // Index 1 is the callee (the same on both sides, so it pairs by bytes); 2 calls it in
    // the baseline and holds its code in the candidate. Nothing calls 2, and 3 is an
    // unrelated procedure on each side.
    let sides = |callee_length: u16| {
        let callee = foreign(0x300, 5, callee_length);
        let own = foreign(0x400, 6, 12);
        let mut calling = own.clone();
        calling.callees = vec![1];
        let inlined = procedure(
            0x400,
            77,
            own.tokens.iter().chain(&callee.tokens).copied().collect(),
            vec![],
        );
        let mut inlined = Fingerprint {
            mnemonics: own
                .mnemonics
                .iter()
                .chain(&callee.mnemonics)
                .copied()
                .collect(),
            ..inlined
        };
        inlined.mnemonics.sort_unstable();
        let mut main = procedure(0x10, 100, vec![1, 2, 3], vec![1]);
        main.name = Some("main".into());
        let baseline = vec![main.clone(), callee.clone(), calling, foreign(0x500, 8, 30)];
        let candidate = vec![main, callee, inlined, foreign(0x500, 9, 30)];
        (baseline, candidate)
    };
    let (baseline, candidate) = sides(24);
    assert!(similarity(&baseline[2], &candidate[2]) < MIN_LIKENESS);
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(
        partner(&result, 2),
        Some((2, Signal::Likeness)),
        "{result:?}"
    );
    assert_eq!(partner(&result, 3), None, "{result:?}");
    // A large callee is not inlined: its code is not taken in.
    let (baseline, candidate) = sides(LARGE_PROCEDURE_INSTRUCTIONS as u16);
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(partner(&result, 2), None, "{result:?}");
}
