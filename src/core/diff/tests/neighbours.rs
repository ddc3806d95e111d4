//! Pairs through the call graph: a changed callee through its caller, the thresholds by
//! size, and a procedure paired by the pairs that call it.

use super::*;

#[test]
fn a_changed_callee_pairs_through_its_caller() {
    // main (shape 1) calls f; f changed (shape 2 -> 3) but is mostly alike.
    let baseline = vec![
        procedure(0x10, 1, vec![1, 2, 3], vec![1]),
        procedure(0x20, 2, vec![10, 11, 12, 13], vec![]),
        procedure(0x30, 5, vec![50, 51, 52, 53], vec![]),
    ];
    let candidate = vec![
        procedure(0x10, 1, vec![1, 2, 3], vec![1]),
        procedure(0x20, 3, vec![10, 11, 12, 14], vec![]),
        procedure(0x40, 6, vec![60, 61], vec![]),
    ];
    let result = compare(&baseline, &candidate, &mut never());
    let changed = result
        .pairs
        .iter()
        .find(|pair| pair.baseline == 1)
        .expect("f is paired");
    assert_eq!(changed.candidate, 1);
    assert_eq!(changed.signal, Signal::CallGraph);
    assert_eq!(changed.status, Status::Changed);
    assert!(changed.changes.instructions);
    assert!(changed.similarity > 0.5 && changed.similarity < 1.0);
    // main calls a changed f: main's instructions are the same, so it is identical.
    assert_eq!(result.pairs[0].status, Status::Identical);
    assert_eq!(result.only_in_baseline, vec![2]);
    assert_eq!(result.only_in_candidate, vec![2]);
}

/// main calls f, rewritten to a likeness in `band`, and with `another_callee` also a
/// procedure that each side replaced by an unrelated one.
fn callee_rewritten(length: u32, band: std::ops::Range<f64>, another_callee: bool) -> Comparison {
    let f = body(0x20, 9, length, vec![]);
    let g = rewritten(&f, band);
    let callees = if another_callee { vec![1, 2] } else { vec![1] };
    let mut main = procedure(0x10, 1, vec![1, 2, 3], callees);
    main.name = Some("main".to_owned());
    let mut baseline = vec![main.clone(), f];
    let mut candidate = vec![main, g];
    if another_callee {
        baseline.push(foreign(0x400, 3, length as u16));
        candidate.push(foreign(0x400, 4, length as u16 / 3));
    }
    compare(&baseline, &candidate, &mut never())
}

#[test]
fn a_large_rewritten_callee_pairs_from_a_lower_likeness_than_a_small_one() {
    let band = MIN_LARGE_NEIGHBOUR_SIMILARITY..MIN_NEIGHBOUR_SIMILARITY;
    let large = callee_rewritten(LARGE_PROCEDURE_INSTRUCTIONS as u32 + 16, band.clone(), true);
    let pair = large.pairs.iter().find(|pair| pair.baseline == 1);
    assert_eq!(
        pair.map(|pair| (pair.candidate, pair.signal)),
        Some((1, Signal::CallGraph)),
        "{large:?}"
    );
    assert_eq!(
        large.only_in_baseline,
        [2],
        "the unrelated callee stays apart"
    );
    // A small one stays apart, and the callers round leaves it too: one caller with two
    // unpaired callees on each side singles out neither.
    let small = callee_rewritten(LARGE_PROCEDURE_INSTRUCTIONS as u32 / 2, band, true);
    assert_eq!(small.only_in_baseline, [1, 2], "{small:?}");
}

#[test]
fn the_one_large_callee_left_on_each_side_pairs_from_a_lower_likeness_still() {
    let band = MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_LARGE_NEIGHBOUR_SIMILARITY;
    let large = callee_rewritten(
        LARGE_PROCEDURE_INSTRUCTIONS as u32 + 16,
        band.clone(),
        false,
    );
    let pair = large.pairs.iter().find(|pair| pair.baseline == 1);
    assert_eq!(
        pair.map(|pair| (pair.candidate, pair.signal)),
        Some((1, Signal::CallGraph)),
        "{large:?}"
    );
    // Not when another unpaired callee is left beside it (nor then by the callers round,
    // from one caller), nor when it is small: then the callers round pairs it, by a
    // decisive best.
    let beside = callee_rewritten(LARGE_PROCEDURE_INSTRUCTIONS as u32 + 16, band.clone(), true);
    assert_eq!(beside.only_in_baseline, [1, 2], "{beside:?}");
    let small = callee_rewritten(LARGE_PROCEDURE_INSTRUCTIONS as u32 / 2, band, false);
    assert_eq!(
        partner(&small, 1),
        Some((1, Signal::SameCallers)),
        "{small:?}"
    );
}

#[test]
fn a_procedure_rewritten_past_likeness_pairs_by_the_pairs_that_call_it() {
    let f = body(0x400, 9, 40, vec![]);
    let g = foreign(0x400, 1, 30);
    assert!(similarity(&f, &g) < MIN_SOLE_NEIGHBOUR_SIMILARITY);
    let two = under_callers(2, (1, 1), vec![f.clone()], vec![g.clone()]);
    assert_eq!(partner(&two, 2), Some((2, Signal::SameCallers)), "{two:?}");
    // One caller is one call site, where a removed and an added function meet as well:
    // it needs a likeness too.
    let one = under_callers(1, (1, 1), vec![f.clone()], vec![g.clone()]);
    assert_eq!(one.only_in_baseline, [1], "{one:?}");
    // Two that strings tell apart are not paired by their place either.
    let (mut f, mut g) = (f, g);
    (f.strings, g.strings) = (vec![1], vec![2]);
    let told_apart = under_callers(2, (1, 1), vec![f], vec![g]);
    assert_eq!(told_apart.only_in_baseline, [2], "{told_apart:?}");
}

/// A small procedure and its rewrite, too unlike for the call-graph round (which asks
/// small neighbours for more) and alike enough for a decisive best in their place.
fn small_rewrite() -> (Fingerprint, Fingerprint) {
    let f = body(0x400, 9, 40, vec![]);
    let g = rewritten(
        &f,
        MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_LARGE_NEIGHBOUR_SIMILARITY,
    );
    (f, g)
}

#[test]
fn of_two_in_one_place_the_decisively_most_alike_pairs() {
    let (f, g) = small_rewrite();
    let unrelated = foreign(0x500, 2, 30);
    assert!(similarity(&f, &unrelated) < similarity(&f, &g) - LIKENESS_MARGIN);
    // From one caller as from two (the procedures follow the callers).
    for callers in [1, 2] {
        let (f, g, at) = (f.clone(), g.clone(), callers as u32);
        let decided = under_callers(
            callers,
            (1, 2),
            vec![f.clone()],
            vec![g.clone(), unrelated.clone()],
        );
        assert_eq!(
            partner(&decided, at),
            Some((at, Signal::SameCallers)),
            "{decided:?}"
        );
        // Two as alike stay apart.
        let mut copy = g.clone();
        copy.address = 0x500;
        let tied = under_callers(callers, (1, 2), vec![f], vec![g, copy]);
        assert_eq!(tied.only_in_baseline, [at], "{tied:?}");
    }
}

#[test]
fn from_one_caller_only_procedures_of_a_comparable_size_pair_and_not_tiny_ones() {
    let (f, g) = small_rewrite();
    // Three times the size is another function that took it in, unless two callers say
    // otherwise.
    let mut grown = g.clone();
    grown.size = f.size * 3;
    assert!(similarity(&f, &grown) >= MIN_SOLE_NEIGHBOUR_SIMILARITY);
    let inlined = under_callers(1, (1, 1), vec![f.clone()], vec![grown.clone()]);
    assert_eq!(inlined.only_in_baseline, [1], "{inlined:?}");
    let two = under_callers(2, (1, 1), vec![f], vec![grown]);
    assert_eq!(partner(&two, 2), Some((2, Signal::SameCallers)), "{two:?}");
    // Tiny procedures all look alike: one call site does not pair them.
    let tiny = body(0x400, 9, MIN_LIKENESS_INSTRUCTIONS as u32 - 1, vec![]);
    let tiny_rewritten = rewritten(
        &tiny,
        MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_NEIGHBOUR_SIMILARITY,
    );
    let small = under_callers(1, (1, 1), vec![tiny], vec![tiny_rewritten]);
    assert_eq!(small.only_in_baseline, [1], "{small:?}");
}

#[test]
fn a_function_whose_body_moved_into_a_new_callee_keeps_its_callers() {
    // f's body moved into g, a new function; f is now a wrapper that calls g, in f's
    // place; m is new too, and called from the same place.
    let f = body(0x400, 9, 60, vec![]);
    let mut g = edited(&f, 3);
    g.address = 0x600;
    let wrapper = procedure(0x400, 77, vec![5, 6], vec![4]);
    let m = foreign(0x500, 3, 20);
    let moved = under_callers(
        2,
        (1, 2),
        vec![f.clone()],
        vec![wrapper.clone(), m.clone(), g.clone()],
    );
    assert_eq!(
        partner(&moved, 2),
        Some((2, Signal::SameCallers)),
        "{moved:?}"
    );
    assert_eq!(moved.only_in_candidate, [3, 4], "{moved:?}");
    // From one caller, the likeness holds.
    let one = under_callers(1, (1, 2), vec![f], vec![wrapper, m, g]);
    assert_eq!(partner(&one, 1), Some((3, Signal::Likeness)), "{one:?}");
}

#[test]
fn a_fuzzy_pair_whose_partner_nothing_calls_keeps_it() {
    // The two callers called f; in the candidate they call w, which inlined f's edit
    // (f's code and more), and nothing calls f's edit any more (every caller inlined
    // it; it stays for its symbol). Its place is unknown, not another.
    let f = body(0x400, 9, 40, vec![]);
    let mut f_edited = edited(&f, 3);
    f_edited.address = 0x600;
    let mut w = foreign(0x500, 4, 30);
    w.tokens.extend_from_slice(&f_edited.tokens);
    w.tokens.sort_unstable();
    w.size = w.tokens.len() as u64 * 4;
    assert!(similarity(&f, &w) > 0.0);
    let inlined = under_callers(2, (1, 1), vec![f.clone()], vec![w, f_edited.clone()]);
    assert_eq!(
        partner(&inlined, 2),
        Some((3, Signal::Likeness)),
        "{inlined:?}"
    );
    assert_eq!(inlined.only_in_candidate, [2], "{inlined:?}");
    // Called by another procedure, f's edit has a place, and the pairs calling f and w
    // name theirs (the moved-body test above).
}
