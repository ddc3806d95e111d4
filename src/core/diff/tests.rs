//! The matcher's unit and property tests: each round's case, built from small fingerprints.

use proptest::prelude::*;

use super::matcher::inlining::{take_in, tidied};
use super::matcher::longest_increasing;
use super::matcher::twins::best_assignment;
use super::measure::{jaccard_multiset, kinship};
use super::*;

fn procedure(address: u64, shape: u64, tokens: Vec<u32>, callees: Vec<u32>) -> Fingerprint {
    let mut tokens = tokens;
    tokens.sort_unstable();
    let mut mnemonics: Vec<u16> = tokens.iter().map(|&token| (token % 13) as u16).collect();
    mnemonics.sort_unstable();
    Fingerprint {
        address,
        name: None,
        size: tokens.len() as u64 * 4,
        bytes: shape ^ address,
        shape,
        tokens: tokens.clone(),
        mnemonics,
        callees,
        imports: Vec::new(),
        strings: Vec::new(),
        constants: Vec::new(),
        // Each made-up instruction holds one immediate of its own: what an edit changes
        // and a new register allocation keeps.
        immediates: tokens.clone(),
        slots: Vec::new(),
        tables: Vec::new(),
    }
}

fn never() -> impl FnMut() -> bool {
    || false
}

#[test]
fn a_program_compared_with_itself_is_identical_throughout() {
    let side = vec![
        procedure(0x10, 1, vec![1, 2, 3], vec![1]),
        procedure(0x20, 2, vec![4, 5], vec![]),
        procedure(0x30, 3, vec![6], vec![0, 1]),
    ];
    let result = compare(&side, &side, &mut never());
    assert_eq!(result.pairs.len(), 3);
    assert!(result.only_in_baseline.is_empty() && result.only_in_candidate.is_empty());
    for pair in &result.pairs {
        assert_eq!(pair.baseline, pair.candidate);
        assert_eq!(pair.status, Status::Identical);
        assert_eq!(pair.similarity, 1.0);
    }
}

#[test]
fn a_moved_procedure_pairs_by_its_instruction_hash() {
    let baseline = vec![procedure(0x10, 7, vec![1, 2], vec![])];
    let candidate = vec![procedure(0x90, 7, vec![1, 2], vec![])];
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(result.pairs[0].signal, Signal::InstructionHash);
    assert_eq!(result.pairs[0].status, Status::Identical);
}

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

/// `f` rewritten to a likeness in `band`: other instructions and other operations.
fn rewritten(f: &Fingerprint, band: std::ops::Range<f64>) -> Fingerprint {
    (1..f.tokens.len())
        .map(|changed| {
            let mut g = edited(f, changed);
            let kept = g.mnemonics.len() - changed;
            g.mnemonics.truncate(kept);
            g.mnemonics.extend((0..changed as u16).map(|i| 500 + i));
            g
        })
        .find(|g| band.contains(&similarity(f, g)))
        .expect("a rewrite in the band")
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
fn pure_procedures_that_share_no_constant_are_different_functions() {
    // main calls f; f is rewritten a little, and its constants decide.
    let with = |constants: [u64; 3], imports: &[&str]| {
        let main = procedure(0x10, 1, vec![1, 2, 3], vec![1]);
        let mut f = procedure(0x20, 2, vec![10, 11, 12, 13, 14, 15, 16, 17], vec![]);
        f.constants = constants.to_vec();
        f.constants.sort_unstable();
        f.imports = imports.iter().map(|&name| name.to_owned()).collect();
        vec![main, f]
    };
    let paired = |baseline: Vec<Fingerprint>, candidate: Vec<Fingerprint>| {
        let mut candidate = candidate;
        candidate[1] = Fingerprint {
            constants: candidate[1].constants.clone(),
            imports: candidate[1].imports.clone(),
            ..edited(&baseline[1], 1)
        };
        assert!(similarity(&baseline[1], &candidate[1]) >= MIN_NEIGHBOUR_SIMILARITY);
        let result = compare(&baseline, &candidate, &mut never());
        result.pairs.iter().any(|pair| pair.baseline == 1)
    };
    let brackets = [500_000, 200_000, 90_000];
    let fees = [900_000, 300_000, 50_000];
    assert!(!paired(with(brackets, &[]), with(fees, &[])));
    assert!(paired(
        with(brackets, &[]),
        with([900_000, 300_000, 90_000], &[])
    ));
    // A procedure that calls passes numbers that move between releases (line numbers
    // of asserts): its constants alone do not tell it apart.
    assert!(paired(
        with(brackets, &["__assert_fail"]),
        with(fees, &["__assert_fail"])
    ));
}

#[test]
fn a_name_unique_on_both_sides_pairs_first() {
    let mut a = procedure(0x10, 1, vec![1], vec![]);
    a.name = Some("parse".to_owned());
    let mut b = procedure(0x10, 9, vec![9], vec![]);
    b.name = Some("parse".to_owned());
    let result = compare(&[a], &[b], &mut never());
    assert_eq!(result.pairs[0].signal, Signal::SymbolName);
    assert_eq!(result.pairs[0].status, Status::Changed);
    assert_eq!(result.pairs[0].changes.names(), vec!["instructions"]);
}

#[test]
fn duplicated_code_is_not_guessed() {
    let side = vec![
        procedure(0x10, 1, vec![1], vec![]),
        procedure(0x20, 1, vec![1], vec![]),
    ];
    let mut other = side.clone();
    for p in &mut other {
        p.bytes ^= 0xff;
    }
    let result = compare(&side, &other, &mut never());
    assert!(result.pairs.is_empty());
    assert_eq!(result.only_in_baseline, vec![0, 1]);
}

#[test]
fn a_stop_signal_ends_the_rounds_and_says_so() {
    let side = vec![procedure(0x10, 1, vec![1], vec![])];
    let result = compare(&side, &side, &mut || true);
    assert!(result.stopped);
    assert!(result.pairs.is_empty());
    assert_eq!(result.only_in_baseline, vec![0]);
}

/// A procedure of `length` instructions drawn from `seed`, with `strings`.
fn body(address: u64, seed: u32, length: u32, strings: Vec<u64>) -> Fingerprint {
    let tokens: Vec<u32> = (0..length).map(|i| (seed * 31 + i * 7) % 97).collect();
    let mut p = procedure(
        address,
        u64::from(seed) << 8 | u64::from(length),
        tokens,
        vec![],
    );
    p.strings = strings;
    p
}

/// `p` with its last `changed` instructions replaced: another shape, mostly alike.
fn edited(p: &Fingerprint, changed: usize) -> Fingerprint {
    let mut q = p.clone();
    let keep = q.tokens.len() - changed;
    q.tokens.truncate(keep);
    q.tokens.extend((0..changed as u32).map(|i| 1_000 + i));
    q.tokens.sort_unstable();
    q.mnemonics = q.tokens.iter().map(|&t| (t % 13) as u16).collect();
    q.mnemonics.sort_unstable();
    q.immediates = q.tokens.clone();
    q.shape ^= 0x5555;
    q.bytes ^= 0x5555;
    q
}

/// `callers` procedures named alike on both sides (so they pair by name), each calling the
/// first `called.0` of `baseline` (on the candidate side, `called.1` of `candidate`),
/// which follow them.
fn under_callers(
    callers: usize,
    called: (usize, usize),
    baseline: Vec<Fingerprint>,
    candidate: Vec<Fingerprint>,
) -> Comparison {
    let side = |called: usize, rest: Vec<Fingerprint>| {
        let callees: Vec<u32> = (callers..callers + called).map(|i| i as u32).collect();
        let mut side: Vec<Fingerprint> = (0..callers)
            .map(|i| {
                let at = i as u64 * 0x10;
                let mut caller = procedure(0x10 + at, 100 + at, vec![1, 2, 3], callees.clone());
                caller.name = Some(format!("caller{i}"));
                caller
            })
            .collect();
        side.extend(rest);
        side
    };
    compare(
        &side(called.0, baseline),
        &side(called.1, candidate),
        &mut never(),
    )
}

/// A procedure of `length` instructions and operations that no other procedure has.
fn foreign(address: u64, seed: u16, length: u16) -> Fingerprint {
    let tokens = (0..length)
        .map(|i| u32::from(seed) * 10_000 + u32::from(i))
        .collect();
    let mut p = procedure(address, 900 + u64::from(seed), tokens, vec![]);
    p.mnemonics = (0..length).map(|i| seed * 1_000 + i).collect();
    p
}

fn partner(result: &Comparison, baseline: u32) -> Option<(u32, Signal)> {
    let pair = result.pairs.iter().find(|pair| pair.baseline == baseline)?;
    Some((pair.candidate, pair.signal))
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

/// Three instances of one template (a hash over 4, 5 or 6 bytes), each rewritten alike in
/// the candidate and laid out in reverse: each is about as alike to all three of the
/// other side (within [`LIKENESS_MARGIN`]), and only `tell_apart` (each instance's own
/// immediate) can decide.
fn twins(tell_apart: bool) -> (Vec<Fingerprint>, Vec<Fingerprint>) {
    let template = body(0, 7, 40, vec![]);
    let instance = |k: u64, rewritten: bool| {
        let mut p = if rewritten {
            edited(&template, 12)
        } else {
            template.clone()
        };
        p.address = if rewritten {
            0x400 - 0x100 * k
        } else {
            0x100 * k
        };
        (p.shape, p.bytes) = (p.shape ^ k, p.bytes ^ k);
        if tell_apart {
            p.immediates.push(100 + k as u32);
            p.immediates.sort_unstable();
        }
        p
    };
    (
        (1..=3).map(|k| instance(k, false)).collect(),
        (1..=3).rev().map(|k| instance(k, true)).collect(),
    )
}

#[test]
fn near_twins_pair_by_the_immediates_that_tell_them_apart() {
    let (baseline, candidate) = twins(true);
    // The candidate is laid out in reverse: baseline 0 is candidate 2's twin.
    let twin = similarity(&baseline[0], &candidate[2]);
    assert!((MIN_TWIN_LIKENESS..1.0).contains(&twin), "{twin}");
    for (b, c) in [(0, 0), (0, 1), (1, 2), (2, 2)] {
        let other = similarity(&baseline[b], &candidate[c]);
        assert!(
            other < twin && twin - other < LIKENESS_MARGIN,
            "{other} {twin}"
        );
    }
    let result = compare(&baseline, &candidate, &mut never());
    let mut made: Vec<(u32, u32, Signal)> = result
        .pairs
        .iter()
        .map(|pair| (pair.baseline, pair.candidate, pair.signal))
        .collect();
    made.sort_unstable();
    assert_eq!(
        made,
        [
            (0, 2, Signal::Twins),
            (1, 1, Signal::Twins),
            (2, 0, Signal::Twins)
        ]
    );
    // Twins that nothing tells apart stay unpaired.
    let (baseline, candidate) = twins(false);
    let result = compare(&baseline, &candidate, &mut never());
    assert!(result.pairs.is_empty(), "{:?}", result.pairs);
    assert_eq!(result.only_in_baseline, [0, 1, 2]);
}

#[test]
fn near_twins_of_which_one_is_decisively_the_others_best_pair_by_what_tells_them_apart() {
    // Two instances of one template (20 instructions), each with 5 of its own; the second
    // and the first's rewrite hold 5 more alike. The first and its rewrite are decisively
    // each other's row best, the rewrite's column best is a near tie (the second is
    // within the margin), as zstd's `HcFindBestMatch_noDict_5` and `_6` are with GCC.
    let pool = |pool: u32, count: u32| (0..count).map(move |i| pool * 10_000 + i);
    let of = |address: u64, shape: u64, pools: &[(u32, u32)]| {
        let tokens = pools.iter().flat_map(|&(p, n)| pool(p, n)).collect();
        procedure(address, shape, tokens, vec![])
    };
    let (template, first, second, shared) = ((1, 20), (5, 5), (6, 5), (9, 5));
    let baseline = [
        of(0x100, 1, &[template, first]),
        of(0x200, 2, &[template, second, shared]),
    ];
    let candidate = [
        of(0x100, 3, &[template, first, shared]),
        of(0x200, 4, &[template, second]),
    ];
    let s = |b: usize, c: usize| similarity(&baseline[b], &candidate[c]);
    assert!(s(0, 0) - s(0, 1) >= LIKENESS_MARGIN && s(1, 1) - s(0, 1) >= LIKENESS_MARGIN);
    assert!(s(0, 0) - s(1, 0) < LIKENESS_MARGIN && s(1, 1) - s(1, 0) < LIKENESS_MARGIN);
    let result = compare(&baseline, &candidate, &mut never());
    let made: Vec<(u32, u32, Signal)> = (result.pairs.iter())
        .map(|pair| (pair.baseline, pair.candidate, pair.signal))
        .collect();
    assert_eq!(made, [(0, 0, Signal::Twins), (1, 1, Signal::Twins)]);
}

#[test]
fn near_twins_called_in_different_places_stay_apart() {
    // The twins above after six kept procedures, all called by `main`, which calls the
    // first instance after the second kept one, and in the candidate four calls later
    // (indices: 0 `main`, 1 to 6 the kept, 7 to 9 the twins, the candidate's reversed).
    let (baseline_twins, candidate_twins) = twins(true);
    let side = |twins: Vec<Fingerprint>, calls: &[u32]| {
        let mut side = kept_and(twins[0].clone());
        side.extend(twins[1..].iter().cloned());
        for (i, p) in side[6..].iter_mut().enumerate() {
            p.address = 0x800 + 0x100 * i as u64;
        }
        calling_in_order(side, calls)
    };
    let baseline = side(baseline_twins, &[1, 2, 7, 3, 4, 5, 6, 8, 9]);
    let in_place = |calls: &[u32]| {
        let candidate = side(candidate_twins.clone(), calls);
        compare(&baseline, &candidate, &mut never())
    };
    let moved = in_place(&[1, 2, 3, 4, 5, 6, 8, 7, 9]);
    assert_eq!(partner(&moved, 8), Some((8, Signal::Twins)), "{moved:?}");
    assert_eq!(partner(&moved, 9), Some((7, Signal::Twins)), "{moved:?}");
    assert_eq!(partner(&moved, 7), None, "{moved:?}");
    assert_eq!(moved.only_in_candidate, [9], "{moved:?}");
    // Called in its place, the first instance pairs as well: the last one left of
    // `main`'s callees on each side.
    let kept = in_place(&[1, 2, 9, 3, 4, 5, 6, 8, 7]);
    assert_eq!(partner(&kept, 7), Some((9, Signal::CallGraph)), "{kept:?}");
}

#[test]
fn a_near_tie_among_the_callees_of_a_pair_waits_for_what_tells_twins_apart() {
    // The twins above, called by one pair, and the first a hair more alike to the wrong
    // instance (three instructions more, which both have, none with an immediate): the mutual best of the call-graph
    // round would pair them, the immediates tell them apart.
    let (mut baseline, mut candidate) = twins(true);
    for p in [&mut baseline[0], &mut candidate[1]] {
        p.tokens.extend([5_000, 5_001, 5_002]);
        p.mnemonics.extend([5, 6, 7]);
        p.mnemonics.sort_unstable();
        p.size += 12;
    }
    let s = |b: usize, c: usize| similarity(&baseline[b], &candidate[c]);
    assert!(s(0, 1) >= MIN_NEIGHBOUR_SIMILARITY);
    assert!(s(0, 1) > s(0, 2) && s(0, 1) - s(0, 2) < LIKENESS_MARGIN);
    assert!(s(0, 1) > s(1, 1) && s(0, 1) > s(2, 1));
    let result = under_callers(1, (3, 3), baseline, candidate);
    let made: Vec<(u32, Option<(u32, Signal)>)> =
        (1..=3).map(|b| (b, partner(&result, b))).collect();
    assert_eq!(
        made,
        [
            (1, Some((3, Signal::Twins))),
            (2, Some((2, Signal::Twins))),
            (3, Some((1, Signal::Twins)))
        ],
        "{result:?}"
    );
}

/// A procedure of the given parts: `(pool, from, count)` takes instructions `from..from +
/// count` of a pool of instructions no other pool shares.
fn of_pools(address: u64, parts: &[(u32, u32, u32)]) -> Fingerprint {
    let tokens = (parts.iter())
        .flat_map(|&(pool, from, count)| (from..from + count).map(move |i| pool * 10_000 + i))
        .collect();
    let shape = (parts.iter()).fold(address, |shape, &(pool, from, count)| {
        shape * 31 + u64::from(pool * 1_000_000 + from * 1_000 + count)
    });
    procedure(address, shape, tokens, vec![])
}

#[test]
fn of_two_template_instances_a_near_tie_goes_to_the_assignment_of_the_neighbours() {
    // Two instances of one template (zstd's `lazy2`, `lazy2_row`), both rewritten: the
    // new `lazy2` is a hair more alike to the old `lazy2_row` than to its old self, and
    // the new `lazy2_row` is unlike the old `lazy2`.
    let lazy = of_pools(0x400, &[(1, 0, 50), (2, 0, 30)]);
    let row = of_pools(0x800, &[(1, 0, 32), (3, 0, 26), (4, 0, 22)]);
    let new_lazy = of_pools(0x400, &[(1, 0, 50), (3, 0, 30)]);
    let new_row = of_pools(0x800, &[(4, 0, 22), (5, 0, 58)]);
    let s = |a: &Fingerprint, b: &Fingerprint| similarity(a, b);
    assert!(s(&row, &new_lazy) > s(&lazy, &new_lazy));
    assert!(s(&row, &new_lazy) - s(&lazy, &new_lazy) < LIKENESS_MARGIN);
    assert!(s(&row, &new_lazy) > s(&row, &new_row));
    assert!(s(&lazy, &new_lazy) + s(&row, &new_row) > s(&row, &new_lazy) + s(&lazy, &new_row));
    assert!(
        s(&lazy, &new_row) >= MIN_LARGE_NEIGHBOUR_SIMILARITY,
        "the greedy pairs it"
    );
    let result = under_callers(1, (2, 2), vec![lazy, row], vec![new_lazy, new_row]);
    assert_eq!(
        partner(&result, 1),
        Some((1, Signal::CallGraph)),
        "{result:?}"
    );
    assert_eq!(
        partner(&result, 2),
        Some((2, Signal::CallGraph)),
        "{result:?}"
    );
}

#[test]
fn a_changed_procedure_without_neighbours_pairs_by_likeness() {
    let old = body(0x10, 1, 40, vec![]);
    let other = body(0x100, 2, 12, vec![]);
    let result = compare(
        &[old.clone(), other.clone()],
        &[edited(&old, 4), body(0x200, 3, 13, vec![])],
        &mut never(),
    );
    let pair = result
        .pairs
        .iter()
        .find(|p| p.baseline == 0)
        .expect("paired");
    assert_eq!((pair.candidate, pair.signal), (0, Signal::Likeness));
    assert_eq!(pair.status, Status::Changed);
}

#[test]
fn a_new_register_allocation_is_more_alike_than_a_sibling_with_other_immediates() {
    // 40 instructions, half of them with an immediate. The new allocation keeps every
    // operation and immediate and changes every register (so every masked instruction);
    // the sibling keeps the registers and has other immediates (another hash prime, other
    // shifts), so it keeps the other half of the instructions.
    let instruction =
        |i: u32, register: u32, immediate: u32| (i, register * 1_000 + i + 100 * immediate);
    let of = |address: u64, register: u32, immediates: u32| {
        let (operations, tokens): (Vec<u32>, Vec<u32>) = (0..40)
            .map(|i| instruction(i, register, if i % 2 == 0 { immediates } else { 0 }))
            .unzip();
        let mut p = procedure(address, address, tokens, vec![]);
        p.mnemonics = operations.iter().map(|&o| (o % 13) as u16).collect();
        p.mnemonics.sort_unstable();
        p.immediates = (0..20).map(|i| immediates * 100 + i).collect();
        p
    };
    let (old, reallocated, sibling) = (of(0x10, 1, 1), of(0x400, 2, 1), of(0x200, 1, 2));
    assert_eq!(jaccard_multiset(&old.tokens, &reallocated.tokens), 0.0);
    assert_eq!(jaccard_multiset(&old.tokens, &sibling.tokens), 20.0 / 60.0);
    assert!(similarity(&old, &reallocated) >= similarity(&old, &sibling) + LIKENESS_MARGIN);
    let result = compare(&[old], &[sibling, reallocated], &mut never());
    assert_eq!(
        partner(&result, 0),
        Some((1, Signal::Likeness)),
        "{result:?}"
    );
}

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

/// A small procedure of four instructions (`lea`, `sar`, `imul`, `ret`) with the two
/// immediates `immediates`, which its masked instructions hold too.
fn small(address: u64, immediates: [u32; 2]) -> Fingerprint {
    let tokens = vec![100_000 + immediates[0], 200_000 + immediates[1], 3, 4];
    let mut p = procedure(
        address,
        u64::from(immediates[0] ^ immediates[1] << 16),
        tokens,
        vec![],
    );
    p.mnemonics = vec![1, 2, 3, 4];
    p.immediates = vec![10_000 + immediates[0], 20_000 + immediates[1]];
    p.immediates.sort_unstable();
    p
}

#[test]
fn a_small_procedure_whose_constant_changed_pairs_when_nothing_else_is_as_alike() {
    // A small function nothing calls (every caller inlined it) whose constant changed, a
    // removed one and an added one of the same operations and other immediates.
    let kept = small(0x100, [0x39a0, 7]);
    let changed = small(0x300, [0x39a8, 7]);
    let removed = small(0x200, [0x1198, 6]);
    let added = small(0x400, [0xf6a4, 1]);
    assert!(kept.tokens.len() < MIN_LIKENESS_INSTRUCTIONS);
    assert!(similarity(&kept, &changed) >= MIN_SMALL_LIKENESS);
    // The operations' likeness alone would call the removed and the added one alike.
    assert!(similarity(&removed, &added) >= MIN_SMALL_LIKENESS);
    let result = compare(
        std::slice::from_ref(&removed),
        std::slice::from_ref(&added),
        &mut never(),
    );
    assert!(result.pairs.is_empty(), "{result:?}");
    let result = compare(&[kept, removed], &[added, changed], &mut never());
    assert_eq!(
        partner(&result, 0),
        Some((1, Signal::Likeness)),
        "{result:?}"
    );
    assert_eq!(partner(&result, 1), None, "{result:?}");
}

#[test]
fn a_small_procedure_as_alike_to_two_stays_apart() {
    let kept = small(0x100, [0x39a0, 7]);
    let changed = small(0x300, [0x39a8, 7]);
    let mut copy = changed.clone();
    (copy.address, copy.bytes) = (0x400, copy.bytes ^ 0x700);
    let result = compare(&[kept], &[changed, copy], &mut never());
    assert!(result.pairs.is_empty(), "{result:?}");
}

#[test]
fn wrappers_of_different_strings_are_not_paired_by_likeness() {
    let removed = body(0x10, 1, 20, vec![7]);
    let mut added = edited(&removed, 1);
    added.strings = vec![8];
    let result = compare(&[removed], &[added], &mut never());
    assert!(result.pairs.is_empty(), "{result:?}");
}

/// A caller named alike on both sides (so it pairs by name) calling, in this order,
/// the procedures that follow it.
fn calling_in_order(procedures: Vec<Fingerprint>, calls: &[u32]) -> Vec<Fingerprint> {
    let mut caller = procedure(0x10, 100, vec![1, 2, 3], calls.to_vec());
    caller.name = Some("main".into());
    std::iter::once(caller).chain(procedures).collect()
}

/// `side` with one more procedure, named `second`, calling `calls` in that order.
fn with_second_caller(mut side: Vec<Fingerprint>, calls: &[u32]) -> Vec<Fingerprint> {
    let mut second = procedure(0x900, 200, vec![4, 5, 6], calls.to_vec());
    second.name = Some("second".into());
    side.push(second);
    side
}

/// Six kept procedures, each alike on both sides, at 0x100 on; `moved` is the one
/// procedure more, alike to its counterpart, at 0x800.
fn kept_and(moved: Fingerprint) -> Vec<Fingerprint> {
    let mut side: Vec<Fingerprint> = (0..6)
        .map(|i| foreign(0x100 + u64::from(i) * 0x40, 10 + i, 12))
        .collect();
    side.push(moved);
    side
}

#[test]
fn a_function_removed_from_one_call_and_another_added_at_another_stay_apart() {
    let removed = body(0x800, 7, 20, vec![]);
    let added = edited(&removed, 2);
    assert!(similarity(&removed, &added) >= MIN_LIKENESS + LIKENESS_MARGIN);
    // `main` called the removed function between the second and third kept ones; it
    // calls the added one last. Indices: 0 is `main`, 1 to 6 the kept, 7 the other.
    let baseline = calling_in_order(kept_and(removed), &[1, 2, 7, 3, 4, 5, 6]);
    let apart = calling_in_order(kept_and(added.clone()), &[1, 2, 3, 4, 5, 6, 7]);
    let result = compare(&baseline, &apart, &mut never());
    assert_eq!(partner(&result, 7), None, "{result:?}");
    assert_eq!(result.only_in_candidate, vec![7]);
    // Called in the same place, or one call over (a call moved past another), it is
    // the same function changed.
    for calls in [[1, 2, 7, 3, 4, 5, 6], [1, 2, 3, 7, 4, 5, 6]] {
        let near = calling_in_order(kept_and(added.clone()), &calls);
        let result = compare(&baseline, &near, &mut never());
        assert_eq!(
            partner(&result, 7),
            Some((7, Signal::CallGraph)),
            "{calls:?}"
        );
    }
}

#[test]
fn two_functions_with_the_same_anchors_called_in_different_places_stay_apart() {
    // Inlining copies a callee's strings into its callers: a function and its caller's
    // counterpart can refer to the same one string, and nothing else.
    let removed = body(0x800, 7, 20, vec![42]);
    let mut added = foreign(0x800, 3, 20);
    added.strings = vec![42];
    let baseline = calling_in_order(kept_and(removed), &[1, 2, 7, 3, 4, 5, 6]);
    let apart = calling_in_order(kept_and(added.clone()), &[1, 2, 3, 4, 5, 6, 7]);
    let result = compare(&baseline, &apart, &mut never());
    assert_eq!(partner(&result, 7), None, "{result:?}");
    // In the same place, the anchors pair them.
    let near = calling_in_order(kept_and(added), &[1, 2, 7, 3, 4, 5, 6]);
    let result = compare(&baseline, &near, &mut never());
    assert_eq!(
        partner(&result, 7),
        Some((7, Signal::Anchors)),
        "{result:?}"
    );
}

#[test]
fn a_function_rewritten_past_likeness_in_its_place_among_the_calls_pairs_by_it() {
    let old = body(0x800, 7, 30, vec![]);
    let new = rewritten(
        &old,
        MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_NEIGHBOUR_SIMILARITY,
    );
    // Another rewrite, as alike, called last: the callers round sees two called by
    // `main` and neither decisively; the place between the second and third calls
    // tells.
    let mut other = rewritten(
        &old,
        MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_NEIGHBOUR_SIMILARITY,
    );
    other.address = 0x900;
    other.bytes ^= 1;
    let baseline = calling_in_order(kept_and(old.clone()), &[1, 2, 7, 3, 4, 5, 6]);
    let mut candidate = calling_in_order(kept_and(new), &[1, 2, 7, 3, 4, 5, 6, 8]);
    candidate.push(other);
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(
        partner(&result, 7),
        Some((7, Signal::CallGraph)),
        "{result:?}"
    );
    assert_eq!(result.only_in_candidate, vec![8]);
    // Tiny ones all look alike: a place alone does not pair them.
    let tiny = body(0x800, 7, MIN_LIKENESS_INSTRUCTIONS as u32 - 1, vec![]);
    let other_tiny = body(0x800, 9, MIN_LIKENESS_INSTRUCTIONS as u32 - 1, vec![]);
    assert!(similarity(&tiny, &other_tiny) >= MIN_SOLE_NEIGHBOUR_SIMILARITY);
    let baseline = calling_in_order(kept_and(tiny), &[1, 2, 7, 3, 4, 5, 6]);
    let candidate = calling_in_order(kept_and(other_tiny), &[1, 2, 7, 3, 4, 5, 6]);
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(partner(&result, 7), None, "{result:?}");
}

#[test]
fn the_start_and_the_end_of_the_calls_bound_a_call_slot_too() {
    let old = body(0x800, 7, 30, vec![]);
    let new = rewritten(
        &old,
        MIN_SOLE_NEIGHBOUR_SIMILARITY..MIN_NEIGHBOUR_SIMILARITY,
    );
    // As alike a rewrite called elsewhere (index 8): `main` calls two unpaired
    // procedures on the candidate side and neither decisively, so only the place tells.
    let mut other = new.clone();
    other.address = 0x900;
    other.bytes ^= 1;
    let compared = |rewrite: &Fingerprint, old_calls: &[u32], new_calls: &[u32]| {
        let baseline = calling_in_order(kept_and(old.clone()), old_calls);
        let mut candidate = calling_in_order(kept_and(rewrite.clone()), new_calls);
        candidate.push(other.clone());
        compare(&baseline, &candidate, &mut never())
    };
    let first = ([7, 1, 2, 3, 4, 5, 6], [7, 1, 2, 3, 8, 4, 5, 6]);
    let last = ([1, 2, 3, 4, 5, 6, 7], [1, 2, 8, 3, 4, 5, 6, 7]);
    for (old_calls, new_calls) in [first, last] {
        let result = compared(&new, &old_calls, &new_calls);
        assert_eq!(
            partner(&result, 7),
            Some((7, Signal::CallGraph)),
            "{new_calls:?}: {result:?}"
        );
        assert_eq!(result.only_in_candidate, vec![8], "{new_calls:?}");
    }
    // Bounded on one side only, three times the size is a new function that took the
    // old one in.
    let mut grown = rewritten(
        &old,
        MIN_SOLE_NEIGHBOUR_SIMILARITY + 0.1..MIN_NEIGHBOUR_SIMILARITY,
    );
    grown.size = old.size * 3;
    assert!(kinship(&old, &grown) >= MIN_SOLE_NEIGHBOUR_SIMILARITY);
    let result = compared(&grown, &last.0, &last.1);
    assert_eq!(partner(&result, 7), None, "{result:?}");
    // Two unpaired at the end of one side (a function added last) are no slot.
    let result = compared(&new, &[1, 2, 3, 4, 5, 6, 7], &[1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(partner(&result, 7), None, "{result:?}");
}

#[test]
fn the_callers_round_keeps_a_likeness_pair_that_the_call_order_does_not_overrule() {
    // `main` and `second` call `b` (7) between the second and third kept procedures and
    // the unrelated new `c` (7) last; `x` (9), called by nobody, is `b` edited. The
    // callers that `b` and `c` share place them apart, so they do not undo `b` with `x`.
    let b = body(0x800, 7, 20, vec![]);
    let c = foreign(0x800, 3, 20);
    let mut x = edited(&b, 2);
    x.address = 0xa00;
    assert!(similarity(&b, &x) >= MIN_LIKENESS + LIKENESS_MARGIN);
    let (old, new) = ([1, 2, 7, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6, 7]);
    let baseline = with_second_caller(calling_in_order(kept_and(b), &old), &old);
    let mut candidate = with_second_caller(calling_in_order(kept_and(c), &new), &new);
    candidate.push(x);
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(
        partner(&result, 7),
        Some((9, Signal::Likeness)),
        "{result:?}"
    );
    assert_eq!(result.only_in_candidate, vec![7], "{result:?}");
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

#[test]
fn a_pair_that_calls_two_in_the_same_place_keeps_them_together() {
    // A second caller calls both first (before any other pair): one caller against is
    // not all of them.
    let removed = body(0x800, 7, 20, vec![]);
    let added = edited(&removed, 2);
    let baseline = with_second_caller(
        calling_in_order(kept_and(removed), &[1, 2, 7, 3, 4, 5, 6]),
        &[7, 1],
    );
    let candidate = with_second_caller(
        calling_in_order(kept_and(added), &[1, 2, 3, 4, 5, 6, 7]),
        &[7, 1],
    );
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(partner(&result, 7).map(|(c, _)| c), Some(7), "{result:?}");
}

#[test]
fn a_procedure_between_two_pairs_pairs_by_its_place() {
    let first = body(0x10, 1, 10, vec![]);
    let middle = body(0x20, 2, 10, vec![]);
    let last = body(0x30, 3, 10, vec![]);
    let changed = edited(&middle, 4);
    assert!(similarity(&middle, &changed) >= MIN_ORDER_SIMILARITY);
    // A twin of the changed one elsewhere: as like the middle one as its true version, so
    // the likeness round cannot choose, and only the place decides.
    let mut twin = changed.clone();
    twin.address = 0x40;
    twin.bytes ^= 1;
    let result = compare(
        &[first.clone(), middle, last.clone()],
        &[first, changed, last, twin],
        &mut never(),
    );
    let pair = result
        .pairs
        .iter()
        .find(|p| p.baseline == 1)
        .expect("paired");
    assert_eq!((pair.candidate, pair.signal), (1, Signal::Order));
    assert_eq!(result.only_in_candidate, vec![3]);
}

#[test]
fn procedures_in_the_same_slot_of_aligned_tables_pair_by_it() {
    // A table of an anchor (unique code) and two near twins, rewritten in the new version
    // and laid out in the other order, so neither likeness nor place can tell them apart.
    let anchor = body(0x10, 1, 12, vec![]);
    let first = body(0x20, 2, 30, vec![]);
    let mut second = edited(&first, 2);
    second.address = 0x30;
    let slot = |index| Slot { table: 0, index };
    let mut baseline = vec![anchor.clone(), first.clone(), second.clone()];
    for (index, procedure) in baseline.iter_mut().enumerate() {
        procedure.slots = vec![slot(index as u32)];
    }
    let (mut new_first, mut new_second) = (edited(&first, 3), edited(&second, 3));
    // Four distinct codes: no hash pairs any two of them.
    for (procedure, code) in [(&mut new_first, 0x71), (&mut new_second, 0x72)] {
        (procedure.bytes, procedure.shape) = (code, code);
    }
    new_first.slots = vec![slot(1)];
    new_second.slots = vec![slot(2)];
    let mut new_anchor = anchor;
    new_anchor.slots = vec![slot(0)];
    let candidate = vec![new_anchor, new_second, new_first];
    let result = compare(&baseline, &candidate, &mut never());
    let partner = |b: u32| result.pairs.iter().find(|p| p.baseline == b).copied();
    assert_eq!(partner(0).map(|p| p.candidate), Some(0));
    for (b, c) in [(1, 2), (2, 1)] {
        let pair = partner(b).expect("paired");
        assert_eq!((pair.candidate, pair.signal), (c, Signal::PointerTable));
        assert_eq!(pair.status, Status::Changed);
    }
}

#[test]
fn a_table_whose_pairs_sit_in_other_slots_vouches_for_nothing() {
    // Two anchors paired by their code, in swapped slots: the tables disagree as often as
    // they agree, so the unpaired slot stays unpaired.
    let slot = |index| Slot { table: 0, index };
    let mut a = body(0x10, 1, 12, vec![]);
    let mut b = body(0x20, 2, 12, vec![]);
    let mut c = body(0x30, 3, 12, vec![]);
    let mut d = body(0x40, 4, 12, vec![]);
    let target = body(0x50, 5, 30, vec![]);
    let mut old = target.clone();
    old.slots = vec![slot(4)];
    let mut new = edited(&target, 20);
    new.slots = vec![slot(4)];
    (a.slots, b.slots, c.slots, d.slots) =
        (vec![slot(0)], vec![slot(1)], vec![slot(2)], vec![slot(3)]);
    let baseline = vec![a.clone(), b.clone(), c.clone(), d.clone(), old];
    (a.slots, b.slots) = (vec![slot(1)], vec![slot(0)]);
    let candidate = vec![a, b, c, d, new];
    let result = compare(&baseline, &candidate, &mut never());
    assert!(
        result
            .pairs
            .iter()
            .all(|p| p.signal != Signal::PointerTable),
        "{result:?}"
    );
}

/// Sides whose procedures are alike in parts, most long enough for the likeness round and
/// some small enough for the round of small procedures.
fn long_side() -> impl Strategy<Value = Vec<Fingerprint>> {
    prop::collection::vec(
        (
            prop::collection::vec(0u32..24, 2..30),
            prop::collection::vec(0u64..3, 0..2),
            prop::collection::vec(0u32..6, 0..4),
            prop::collection::vec(0u32..10, 0..3),
        ),
        0..10,
    )
    .prop_map(|items| {
        let count = items.len() as u32;
        items
            .into_iter()
            .enumerate()
            .map(|(index, (tokens, strings, mut immediates, mut callees))| {
                let shape = tokens
                    .iter()
                    .fold(7u64, |h, &t| h.wrapping_mul(31).wrapping_add(u64::from(t)));
                callees.retain(|&callee| callee < count);
                callees.sort_unstable();
                callees.dedup();
                let mut p = procedure(index as u64 * 64, shape, tokens, callees);
                let mut strings = strings;
                strings.sort_unstable();
                strings.dedup();
                p.strings = strings;
                immediates.sort_unstable();
                p.immediates = immediates;
                p
            })
            .collect()
    })
}

/// Two sides where named callers call bodies, and the candidate moved some bodies into a
/// new procedure, calling it from a wrapper in the body's place: the callers round
/// overrules the likeness that paired a body with its moved copy, and sets the copy free
/// among uncalled baseline procedures alike to it.
fn moved_bodies() -> impl Strategy<Value = (Vec<Fingerprint>, Vec<Fingerprint>)> {
    let body = (
        prop::collection::vec(0u32..24, 8..30),
        any::<bool>(),
        0usize..4,
        0u8..16,
    );
    let decoys = prop::collection::vec(prop::collection::vec(0u32..24, 8..30), 0..4);
    (2usize..5, prop::collection::vec(body, 1..7), decoys).prop_map(|(callers, bodies, decoys)| {
        let shaped = |address: u64, tokens: Vec<u32>, callees: Vec<u32>| {
            let shape = tokens
                .iter()
                .fold(7u64, |h, &t| h.wrapping_mul(31).wrapping_add(u64::from(t)));
            procedure(address, shape, tokens, callees)
        };
        let first = callers as u32;
        let moved_at = first + bodies.len() as u32;
        let (mut baseline, mut candidate, mut moved) = (Vec::new(), Vec::new(), Vec::new());
        for (i, (tokens, is_moved, edit, _)) in bodies.iter().enumerate() {
            let address = 0x1000 + i as u64 * 0x100;
            baseline.push(shaped(address, tokens.clone(), vec![]));
            let mut edited = tokens.clone();
            for token in edited.iter_mut().take(*edit) {
                *token += 100;
            }
            if *is_moved {
                let wrapper = vec![200 + i as u32, 201];
                let target = moved_at + moved.len() as u32;
                candidate.push(shaped(address, wrapper, vec![target]));
                moved.push(shaped(0x9000 + i as u64 * 0x100, edited, vec![]));
            } else {
                candidate.push(shaped(address, edited, vec![]));
            }
        }
        candidate.extend(moved);
        // Procedures no one calls, alike to the bodies, that a body set free may be more
        // alike to than to what they were alike to before.
        for (i, tokens) in decoys.into_iter().enumerate() {
            baseline.push(shaped(0x20000 + i as u64 * 0x100, tokens, vec![]));
        }
        let named = |side: Vec<Fingerprint>| {
            let mut all: Vec<Fingerprint> = (0..callers)
                .map(|c| {
                    let callees = (bodies.iter().enumerate())
                        .filter(|(_, body)| body.3 & (1 << c) != 0)
                        .map(|(i, _)| first + i as u32)
                        .collect();
                    let mut caller =
                        procedure(c as u64 * 0x10, 500 + c as u64, vec![1, 2, 3], callees);
                    caller.name = Some(format!("caller{c}"));
                    caller
                })
                .collect();
            all.extend(side);
            all
        };
        (named(baseline), named(candidate))
    })
}

/// The procedures of each side as the result places them (in pairs or alone): sorted.
fn places(result: &Comparison) -> (Vec<u32>, Vec<u32>) {
    let mut baseline: Vec<u32> = result.pairs.iter().map(|p| p.baseline).collect();
    baseline.extend(&result.only_in_baseline);
    baseline.sort_unstable();
    let mut candidate: Vec<u32> = result.pairs.iter().map(|p| p.candidate).collect();
    candidate.extend(&result.only_in_candidate);
    candidate.sort_unstable();
    (baseline, candidate)
}

/// Every procedure of each side, once.
fn every_place(a: &[Fingerprint], b: &[Fingerprint]) -> (Vec<u32>, Vec<u32>) {
    ((0..a.len() as u32).collect(), (0..b.len() as u32).collect())
}

fn arbitrary_side() -> impl Strategy<Value = Vec<Fingerprint>> {
    prop::collection::vec(
        (
            0u64..6,
            prop::collection::vec(0u32..12, 0..3),
            prop::option::of("[ab]{1,2}"),
            prop::collection::vec(0u64..4, 0..2),
            prop::collection::vec((0u32..3, 0u32..4), 0..3),
            (
                prop::collection::vec(0u32..4, 0..3),
                prop::collection::vec(0u64..4, 0..4),
            ),
        ),
        0..12,
    )
    .prop_map(|items| {
        let count = items.len() as u32;
        items
            .into_iter()
            .enumerate()
            .map(
                |(index, (shape, callees, name, strings, slots, operands))| {
                    let (mut immediates, mut constants) = operands;
                    // Equal shapes have equal instructions, as in a real binary.
                    let tokens: Vec<u32> = (0..shape as u32).collect();
                    let mut callees: Vec<u32> =
                        callees.into_iter().filter(|&c| c < count).collect();
                    callees.sort_unstable();
                    callees.dedup();
                    let mut strings = strings;
                    strings.sort_unstable();
                    strings.dedup();
                    let mut p = procedure(index as u64 * 16, shape, tokens, callees);
                    p.bytes = shape;
                    p.name = name;
                    p.strings = strings;
                    // Tables it sits in and, from the same draw, tables its code names.
                    p.slots = slots
                        .iter()
                        .map(|&(table, index)| Slot { table, index })
                        .collect();
                    p.slots.sort_unstable();
                    p.slots.dedup();
                    p.tables = slots.iter().map(|&(table, _)| table).collect();
                    p.tables.sort_unstable();
                    p.tables.dedup();
                    // Operands a masked instruction hash does not see: equal shapes may differ.
                    immediates.sort_unstable();
                    p.immediates = immediates;
                    constants.sort_unstable();
                    constants.dedup();
                    p.constants = constants;
                    p
                },
            )
            .collect()
    })
}

/// The greatest total of an assignment of rows to distinct columns, by trying them all.
fn best_total_by_search(scores: &[Vec<f64>], row: usize, taken: &mut Vec<bool>) -> f64 {
    if row == scores.len() {
        return 0.0;
    }
    let mut best = best_total_by_search(scores, row + 1, taken);
    for column in 0..taken.len() {
        if !taken[column] {
            taken[column] = true;
            let total = scores[row][column] + best_total_by_search(scores, row + 1, taken);
            taken[column] = false;
            best = best.max(total);
        }
    }
    best
}

proptest! {
    #[test]
    fn the_longest_increasing_run_is_increasing_and_longest(
        seconds in proptest::collection::btree_set(0usize..40, 0..12)
            .prop_map(|set| set.into_iter().collect::<Vec<_>>())
            .prop_shuffle(),
    ) {
        let points: Vec<(usize, usize)> = seconds.into_iter().enumerate().collect();
        let run = longest_increasing(&points);
        prop_assert!(run.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        prop_assert!(run.iter().all(|point| points.contains(point)));
        // The longest, by the quadratic recurrence.
        let mut longest_ending = vec![1usize; points.len()];
        for i in 0..points.len() {
            for j in 0..i {
                if points[j].1 < points[i].1 {
                    longest_ending[i] = longest_ending[i].max(longest_ending[j] + 1);
                }
            }
        }
        prop_assert_eq!(run.len(), longest_ending.into_iter().max().unwrap_or(0));
    }

    #[test]
    fn the_assignment_is_one_to_one_and_of_the_greatest_total(
        (rows, columns, cells) in (1usize..6, 1usize..6)
            .prop_flat_map(|(r, c)| (Just(r), Just(c), prop::collection::vec(0u8..=100, r * c)))
    ) {
        let scores: Vec<Vec<f64>> = cells
            .chunks(columns)
            .map(|row| row.iter().map(|&cell| f64::from(cell) / 100.0).collect())
            .collect();
        let assignment = best_assignment(&scores);
        prop_assert_eq!(assignment.len(), rows);
        let mut used: Vec<usize> = assignment.iter().flatten().copied().collect();
        prop_assert_eq!(used.len(), rows.min(columns));
        used.sort_unstable();
        used.dedup();
        prop_assert_eq!(used.len(), rows.min(columns));
        let total: f64 = (assignment.iter().enumerate())
            .filter_map(|(row, column)| column.map(|column| scores[row][column]))
            .sum();
        let best = best_total_by_search(&scores, 0, &mut vec![false; columns]);
        prop_assert!((total - best).abs() < 1e-9, "{} against {}", total, best);
    }
}

proptest! {
    #[test]
    fn keeping_the_likeness_bests_changes_nothing(a in long_side(), b in long_side()) {
        prop_assert_eq!(compare(&a, &b, &mut never()), compare_forgetting(&a, &b));
    }

    #[test]
    fn keeping_the_likeness_bests_changes_nothing_when_the_place_overrules(
        (a, b) in moved_bodies()
    ) {
        let result = compare(&a, &b, &mut never());
        prop_assert_eq!(&result, &compare_forgetting(&a, &b));
        prop_assert_eq!(places(&result), every_place(&a, &b));
    }

    #[test]
    fn long_procedures_are_each_in_exactly_one_place(a in long_side(), b in long_side()) {
        let result = compare(&a, &b, &mut never());
        prop_assert_eq!(places(&result), every_place(&a, &b));
    }

    #[test]
    fn small_procedures_paired_by_likeness_share_an_immediate_when_they_have_any(
        a in long_side(),
        b in long_side(),
    ) {
        let result = compare(&a, &b, &mut never());
        let small = |p: &Fingerprint| p.tokens.len() < MIN_LIKENESS_INSTRUCTIONS;
        // The round of inlined callees names its pairs `likeness` too, but reads a caller
        // with its callees taken in: only procedures without callees are the small round's.
        let alone = |p: &Fingerprint| p.callees.is_empty();
        for pair in result.pairs.iter().filter(|pair| pair.signal == Signal::Likeness) {
            let (x, y) = (&a[pair.baseline as usize], &b[pair.candidate as usize]);
            let either_has_immediates = !(x.immediates.is_empty() && y.immediates.is_empty());
            if (small(x) || small(y)) && alone(x) && alone(y) && either_has_immediates {
                prop_assert!(x.immediates.iter().any(|i| y.immediates.contains(i)), "{:?}", pair);
            }
        }
    }

    #[test]
    fn every_procedure_is_in_exactly_one_place(a in arbitrary_side(), b in arbitrary_side()) {
        let result = compare(&a, &b, &mut never());
        let mut seen_a = vec![0u32; a.len()];
        let mut seen_b = vec![0u32; b.len()];
        for pair in &result.pairs {
            seen_a[pair.baseline as usize] += 1;
            seen_b[pair.candidate as usize] += 1;
            prop_assert!((0.0..=1.0).contains(&pair.similarity));
            prop_assert_eq!(pair.status == Status::Identical, pair.similarity == 1.0);
        }
        for &i in &result.only_in_baseline { seen_a[i as usize] += 1; }
        for &i in &result.only_in_candidate { seen_b[i as usize] += 1; }
        prop_assert!(seen_a.iter().all(|&n| n == 1));
        prop_assert!(seen_b.iter().all(|&n| n == 1));
    }

    #[test]
    fn the_same_inputs_give_the_same_result(a in arbitrary_side(), b in arbitrary_side()) {
        prop_assert_eq!(compare(&a, &b, &mut never()), compare(&a, &b, &mut never()));
    }

    #[test]
    fn a_side_compared_with_itself_pairs_with_itself_or_a_twin(a in arbitrary_side()) {
        let result = compare(&a, &a, &mut never());
        for pair in &result.pairs {
            let (x, y) = (&a[pair.baseline as usize], &a[pair.candidate as usize]);
            prop_assert_eq!(x.shape, y.shape);
            if pair.baseline == pair.candidate {
                prop_assert_eq!(pair.status, Status::Identical);
            }
        }
    }

    #[test]
    fn distinct_code_compared_with_itself_is_identical_throughout(a in arbitrary_side()) {
        let a: Vec<Fingerprint> = a
            .into_iter()
            .enumerate()
            .map(|(index, mut p)| {
                p.shape = 100 + index as u64;
                p.bytes = p.shape;
                p
            })
            .collect();
        let result = compare(&a, &a, &mut never());
        prop_assert_eq!(result.pairs.len(), a.len());
        for pair in &result.pairs {
            prop_assert_eq!(pair.baseline, pair.candidate);
            prop_assert_eq!(pair.status, Status::Identical);
        }
    }

    #[test]
    fn similarity_is_symmetric_and_in_range(a in arbitrary_side(), b in arbitrary_side()) {
        for x in &a {
            for y in &b {
                let s = similarity(x, y);
                prop_assert!((0.0..=1.0).contains(&s));
                prop_assert!((s - similarity(y, x)).abs() < 1e-12);
            }
        }
    }
}
