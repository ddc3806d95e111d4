//! The likeness rounds: a changed procedure without neighbours, a new register
//! allocation, and small procedures.

use super::*;
use crate::core::diff::measure::jaccard_multiset;

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
