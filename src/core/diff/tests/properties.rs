//! The properties of `compare()` on generated sides, and of the helpers the rounds share.

use proptest::prelude::*;

use super::*;
use crate::core::diff::matcher::longest_increasing;
use crate::core::diff::matcher::twins::best_assignment;

/// Sides whose procedures are alike in parts, most long enough for the likeness round and
/// some small enough for the round of small procedures.
fn long_side() -> impl Strategy<Value = Vec<Fingerprint>> {
    prop::collection::vec(
        (
            prop::collection::vec(0u32..24, 2..30),
            prop::collection::vec(0u64..3, 0..2),
            prop::collection::vec(0u32..6, 0..4),
            prop::collection::vec(0u32..10, 0..3),
            // Constants and a `lea`'s addends, few enough values that some are held once.
            prop::collection::vec(0x100u64..0x108, 0..4),
            prop::collection::vec(0x100u64..0x104, 0..2),
        ),
        0..10,
    )
    .prop_map(|items| {
        let count = items.len() as u32;
        items
            .into_iter()
            .enumerate()
            .map(
                |(
                    index,
                    (tokens, strings, mut immediates, mut callees, mut constants, mut addends),
                )| {
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
                    constants.sort_unstable();
                    constants.dedup();
                    p.constants = constants;
                    addends.sort_unstable();
                    addends.dedup();
                    p.addends = addends;
                    p
                },
            )
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
    fn small_procedures_paired_by_likeness_share_an_immediate_or_an_addend_when_they_have_any(
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
                prop_assert!(
                    x.immediates.iter().any(|i| y.immediates.contains(i))
                        || x.addends.iter().any(|k| y.addends.contains(k)),
                    "{:?}",
                    pair
                );
            }
        }
    }

    #[test]
    fn constants_pairs_share_a_constant_no_other_holds_and_half_the_fewer(
        a in long_side(),
        b in long_side(),
    ) {
        let result = compare(&a, &b, &mut never());
        let telling = |p: &Fingerprint| {
            let mut all = [p.constants.as_slice(), &p.addends].concat();
            all.sort_unstable();
            all.dedup();
            all
        };
        let holders = |side: &[Fingerprint], k: u64| side.iter().filter(|p| telling(p).contains(&k)).count();
        for pair in result.pairs.iter().filter(|pair| pair.signal == Signal::Constants) {
            let (x, y) = (telling(&a[pair.baseline as usize]), telling(&b[pair.candidate as usize]));
            let shared: Vec<u64> = x.iter().copied().filter(|k| y.contains(k)).collect();
            prop_assert!(
                shared.iter().any(|&k| holders(&a, k) == 1 && holders(&b, k) == 1),
                "{:?}",
                pair
            );
            prop_assert!(2 * shared.len() >= x.len().min(y.len()), "{:?}", pair);
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
