//! Near twins: what tells them apart, their places, and the assignment that settles a
//! near tie.

use super::*;

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
