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

/// A procedure named `name` on both sides (so it pairs by name), calling `callees`.
fn named(address: u64, name: &str, callees: Vec<u32>) -> Fingerprint {
    let mut p = procedure(address, address, vec![1, 2, 3], callees);
    p.name = Some(name.into());
    p
}

/// The shape of a probe program's pair (seed 32, clang -O1): a caller `f` (0) calls a small
/// wrapper (1) and the body it wraps (2), which calls `zeta` (3, named after `f`, so that the pair of `f` is made first). The candidate inlined the edited body into the
/// wrapper (1) and kept it for other callers (2), and `f` now calls only the wrapper:
/// (baseline, candidate).
fn kept_and_inlined_into_a_wrapper() -> (Vec<Fingerprint>, Vec<Fingerprint>) {
    let mut wrapper = foreign(0x100, 4, 6);
    wrapper.callees = vec![2];
    let mut wrapped = body(0x200, 5, 40, vec![]);
    wrapped.callees = vec![3];
    let mut kept = edited(&wrapped, 4);
    kept.address = 0x300;
    // The wrapper's own few instructions are gone in the copy (merged into the body's).
    let mut holding = edited(&kept, 12);
    holding.address = 0x100;
    (holding.shape, holding.bytes) = (holding.shape ^ 0x99, holding.bytes ^ 0x99);
    let baseline = vec![
        named(0x10, "f", vec![1, 2]),
        wrapper,
        wrapped,
        named(0x20, "zeta", vec![]),
    ];
    let candidate = vec![
        named(0x10, "f", vec![1]),
        holding,
        kept,
        named(0x20, "zeta", vec![]),
    ];
    (baseline, candidate)
}

#[test]
fn a_procedure_kept_and_inlined_into_a_caller_pairs_with_its_kept_self() {
    let (baseline, candidate) = kept_and_inlined_into_a_wrapper();
    // The wrapper holding the body is alike to it, by less than its kept self is.
    let held = similarity(&baseline[2], &candidate[1]);
    let kept = similarity(&baseline[2], &candidate[2]);
    assert!(held >= MIN_NEIGHBOUR_SIMILARITY, "{held}");
    assert!(kept >= held + LIKENESS_MARGIN, "{kept} {held}");
    let result = compare(&baseline, &candidate, &mut never());
    // Without the sibling's check, the call-graph round pairs the body with the wrapper
    // holding it, in the neighbourhood of `f`, and the wrapper with the kept body.
    assert_eq!(
        partner(&result, 2),
        Some((2, Signal::CallGraph)),
        "{result:?}"
    );
    // The wrapper with the body taken in holds what the candidate's wrapper holds.
    assert_eq!(
        partner(&result, 1),
        Some((1, Signal::Likeness)),
        "{result:?}"
    );
}

/// The shape of a probe program's pair (seed 28, clang -O1 to -O3): `f` (0) calls a small
/// function (1) that calls a large static one (2) and `zeta` (3); the candidate inlined the
/// static one, edited by `edits` instructions, into its one caller and dropped it; the
/// caller's own code is the instructions drawn from `own_seed` there (4 in the baseline):
/// (baseline, candidate).
fn a_static_callee_absorbed(edits: usize, own_seed: u16) -> (Vec<Fingerprint>, Vec<Fingerprint>) {
    let mut caller = foreign(0x100, 4, 10);
    caller.callees = vec![2, 3];
    let callee = body(0x200, 5, 80, vec![]);
    let mut holding = foreign(0x100, own_seed, 10);
    take_in(&mut holding, &edited(&callee, edits), 2);
    let mut holding = tidied(holding);
    (holding.shape, holding.bytes) = (holding.shape ^ 0x99, holding.bytes ^ 0x99);
    let mut holding_now = holding;
    holding_now.callees = vec![2];
    let baseline = vec![
        named(0x10, "f", vec![1]),
        caller,
        callee,
        named(0x20, "zeta", vec![]),
    ];
    let candidate = vec![
        named(0x10, "f", vec![1]),
        holding_now,
        named(0x20, "zeta", vec![]),
    ];
    (baseline, candidate)
}

/// How alike the absorbed callee alone, and its caller with it taken in, are to what holds
/// it, in [`a_static_callee_absorbed`]'s sides: (alone, held).
fn alone_and_held(baseline: &[Fingerprint], candidate: &[Fingerprint]) -> (f64, f64) {
    let mut grown = baseline[1].clone();
    grown.callees = vec![3];
    take_in(&mut grown, &baseline[2], 2);
    let alone = similarity(&baseline[2], &candidate[1]);
    (alone, similarity(&tidied(grown), &candidate[1]))
}

/// Asserts that the caller pairs with what holds the callee, which is in the baseline only.
fn assert_the_caller_holds_the_callee(baseline: &[Fingerprint], candidate: &[Fingerprint]) {
    let result = compare(baseline, candidate, &mut never());
    assert_eq!(
        partner(&result, 1),
        Some((1, Signal::Likeness)),
        "{result:?}"
    );
    assert_eq!(result.only_in_baseline, vec![2], "{result:?}");
}

#[test]
fn a_function_that_absorbed_a_large_static_callee_pairs_with_it_taken_in() {
    let (baseline, candidate) = a_static_callee_absorbed(12, 4);
    // The callee alone is alike to what holds it, and the caller with it taken in more so.
    let (alone, held) = alone_and_held(&baseline, &candidate);
    assert!(alone >= MIN_LIKENESS, "{alone}");
    assert!(held >= alone + LIKENESS_MARGIN, "{held} {alone}");
    assert!(similarity(&baseline[1], &candidate[1]) < MIN_LIKENESS);
    assert_the_caller_holds_the_callee(&baseline, &candidate);
}

#[test]
fn a_static_callee_absorbed_is_left_out_beside_its_caller() {
    // The caller's own code rewritten too: with the callee taken in, it is hardly more alike
    // to what holds it than the callee alone. `f` called the callee as well and now calls
    // neither, so the callee's place says nothing and the caller keeps it from the holder.
    let (mut baseline, mut candidate) = a_static_callee_absorbed(12, 6);
    baseline[0].callees = vec![1, 2];
    candidate[0].callees.clear();
    let (alone, held) = alone_and_held(&baseline, &candidate);
    assert!(alone >= MIN_LIKENESS, "{alone}");
    assert!(
        held > alone && held < alone + LIKENESS_MARGIN,
        "{held} {alone}"
    );
    // Beside the callee alone, the caller with it taken in is not the decisive best; the
    // second pass of the inlined callees leaves the callee out.
    assert_the_caller_holds_the_callee(&baseline, &candidate);
}

#[test]
fn the_same_callers_do_not_pair_a_callee_with_the_caller_holding_it() {
    // `p` and `q` call the large static callee (2) in the baseline and, in the candidate,
    // the caller (1) that inlined it, which `f` no longer calls: the same two pairs call
    // the callee on one side and what holds it on the other, the only such procedures. The
    // caller with the callee taken in is decisively more alike to what holds it.
    let (mut baseline, mut candidate) = a_static_callee_absorbed(12, 4);
    candidate[0].callees.clear();
    for (side, called) in [(&mut baseline, 2), (&mut candidate, 1)] {
        for (address, name) in [(0x30, "p"), (0x40, "q")] {
            let mut caller = procedure(address, address, vec![4, 5, 6], vec![called]);
            caller.name = Some(name.into());
            side.push(caller);
        }
    }
    let result = compare(&baseline, &candidate, &mut never());
    assert_ne!(
        partner(&result, 2).map(|(candidate, _)| candidate),
        Some(1),
        "{result:?}"
    );
    assert_eq!(
        partner(&result, 1),
        Some((1, Signal::Likeness)),
        "{result:?}"
    );
}

/// The shape of a probe program's pair (seed 172, clang -O1 and -O2): two named callers (0
/// and 3) call a callee (1) of 80 instructions, which a caller of `caller_length` (2) that
/// nothing calls calls too. In the candidate the first named caller calls the caller
/// instead, which, rewritten, holds the callee (1, edited by `edits` instructions), and the
/// second holds the callee itself: one version inlined the caller into the named ones, the
/// other the callee into the caller and the second named one. (baseline, candidate)
fn inlined_into_a_caller_that_pairs_call(
    caller_length: u32,
    edits: usize,
) -> (Vec<Fingerprint>, Vec<Fingerprint>) {
    let callee = body(0x200, 1, 80, vec![]);
    let mut caller = body(0x300, 2, caller_length, vec![]);
    caller.callees = vec![1];
    let mut holding = foreign(0x400, 7, caller_length as u16);
    take_in(&mut holding, &edited(&callee, edits), 1);
    let holding = tidied(holding);
    let second = foreign(0x20, 8, 30);
    let mut calling = second.clone();
    calling.callees = vec![1];
    calling.name = Some("second".into());
    let mut holding_too = second;
    holding_too.name = Some("second".into());
    take_in(&mut holding_too, &edited(&callee, edits), 1);
    (
        vec![named(0x10, "named", vec![1]), callee, caller, calling],
        vec![named(0x10, "named", vec![1]), holding, tidied(holding_too)],
    )
}

/// How alike the callee alone and the caller with the callee taken in are to what the
/// candidate's caller holds.
fn callee_and_holder_alike(baseline: &[Fingerprint], candidate: &[Fingerprint]) -> (f64, f64) {
    let mut grown = baseline[2].clone();
    grown.callees.clear();
    take_in(&mut grown, &baseline[1], 1);
    (
        similarity(&baseline[1], &candidate[1]),
        similarity(&tidied(grown), &candidate[1]),
    )
}

/// The fewest edits that leave the caller holding the callee a hair less alike than the
/// callee alone, which is alike enough to pair as a neighbour.
fn edits_leaving_the_holder_a_hair_less_alike(caller_length: u32) -> usize {
    (0..80)
        .find(|&edits| {
            let (baseline, candidate) = inlined_into_a_caller_that_pairs_call(caller_length, edits);
            let (alone, held) = callee_and_holder_alike(&baseline, &candidate);
            alone >= MIN_NEIGHBOUR_SIMILARITY && held < alone && held >= alone - LIKENESS_MARGIN
        })
        .expect("edits that leave the holder about as alike")
}

#[test]
fn a_callee_inlined_into_a_caller_that_pairs_call_does_not_pair_with_it_from_as_alike() {
    let edits = edits_leaving_the_holder_a_hair_less_alike(24);
    let (baseline, candidate) = inlined_into_a_caller_that_pairs_call(24, edits);
    // Only pairs call what holds the callee, and a pair that called the callee does not call
    // it: the place does not agree, and the code alone cannot tell the callee from the
    // caller holding it.
    let result = compare(&baseline, &candidate, &mut never());
    assert_ne!(partner(&result, 1).map(|(at, _)| at), Some(1), "{result:?}");
    // Where every pair that calls the callee calls what holds it, the place agrees: the
    // callee pairs, the caller being a hair less alike.
    let (mut baseline, mut candidate) = inlined_into_a_caller_that_pairs_call(24, edits);
    baseline.pop();
    candidate.pop();
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(
        partner(&result, 1),
        Some((1, Signal::CallGraph)),
        "{result:?}"
    );
    // A wrapper of a few instructions taken in is its callee: the callee pairs.
    let edits = edits_leaving_the_holder_a_hair_less_alike(4);
    let (baseline, candidate) = inlined_into_a_caller_that_pairs_call(4, edits);
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(
        partner(&result, 1),
        Some((1, Signal::CallGraph)),
        "{result:?}"
    );
}
