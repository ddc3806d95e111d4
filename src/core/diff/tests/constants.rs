//! The round of telling constants, and the addends (a `lea`'s constant) of small procedures.

use super::*;
use crate::core::diff::measure::{multiset_common, small_kinship};

/// A procedure of 30 instructions from `seed` holding `constants`.
fn holding(address: u64, seed: u32, constants: &[u64]) -> Fingerprint {
    let mut p = body(address, seed, 30, vec![]);
    p.constants = constants.to_vec();
    p.constants.sort_unstable();
    p
}

/// `p` rewritten past every likeness threshold (a statement inserted into a tiny function, a
/// callee inlined), keeping its constants.
fn rewritten_past_likeness(p: &Fingerprint, address: u64) -> Fingerprint {
    let mut q = rewritten(p, 0.2..MIN_SOLE_NEIGHBOUR_SIMILARITY);
    q.address = address;
    q
}

#[test]
fn a_procedure_rewritten_past_likeness_pairs_by_a_constant_no_other_holds() {
    let old = holding(0x100, 1, &[0x1_42f1, 0x1_7f36]);
    let new = rewritten_past_likeness(&old, 0x500);
    let (other_old, other_new) = (holding(0x200, 7, &[0x9999]), holding(0x600, 8, &[0x7777]));
    assert!(similarity(&old, &new) < MIN_LIKENESS);
    let result = compare(&[old, other_old], &[other_new, new], &mut never());
    assert_eq!(
        partner(&result, 0),
        Some((1, Signal::Constants)),
        "{result:?}"
    );
    assert_eq!(partner(&result, 1), None, "nothing shared: {result:?}");
}

#[test]
fn a_constant_another_procedure_holds_too_pairs_nothing() {
    let old = holding(0x100, 1, &[0x1_42f1]);
    let new = rewritten_past_likeness(&old, 0x500);
    // A third holder on either side: the constant tells no one function.
    for third_in_baseline in [true, false] {
        let third = holding(0x300, 9, &[0x1_42f1, 0x4444]);
        let (baseline, candidate) = if third_in_baseline {
            (vec![old.clone(), third], vec![new.clone()])
        } else {
            (vec![old.clone()], vec![new.clone(), third])
        };
        let result = compare(&baseline, &candidate, &mut never());
        assert!(
            result
                .pairs
                .iter()
                .all(|pair| pair.signal != Signal::Constants),
            "third in the baseline {third_in_baseline}: {result:?}"
        );
    }
}

#[test]
fn two_that_share_one_of_their_many_constants_stay_apart() {
    // Random multipliers meet, or both inlined the same callee: one of five in common (and
    // not the pure procedures' conflict: that is when they share none).
    let removed = holding(
        0x100,
        1,
        &[0x5_0001, 0x5_0002, 0x5_0003, 0x5_0004, 0x1_42f1],
    );
    let mut added = rewritten_past_likeness(&removed, 0x500);
    added.constants = vec![0x1_42f1, 0x6_0001, 0x6_0002, 0x6_0003, 0x6_0004];
    assert!(crate::core::diff::measure::kinship(&removed, &added) > 0.0);
    let result = compare(
        std::slice::from_ref(&removed),
        std::slice::from_ref(&added),
        &mut never(),
    );
    assert!(result.pairs.is_empty(), "{result:?}");
    // Half of the fewer in common is an edit.
    added.constants[1..3].copy_from_slice(&[0x5_0001, 0x5_0002]);
    let result = compare(&[removed], &[added], &mut never());
    assert_eq!(
        partner(&result, 0),
        Some((0, Signal::Constants)),
        "{result:?}"
    );
}

#[test]
fn strings_without_one_in_common_keep_a_constant_pair_apart() {
    let mut removed = holding(0x100, 1, &[0x1_42f1]);
    removed.strings = vec![1];
    let mut added = rewritten_past_likeness(&removed, 0x500);
    added.strings = vec![2];
    let result = compare(&[removed], &[added], &mut never());
    assert!(result.pairs.is_empty(), "{result:?}");
}

#[test]
fn a_constant_pair_against_its_place_is_not_made() {
    // `main` calls the removed function where the kept ones are, and the added one after
    // them: two functions, whatever constant they share.
    let kept: Vec<Fingerprint> = (0..4)
        .map(|i| foreign(0x200 + u64::from(i) * 0x40, 20 + i, 12))
        .collect();
    let old = holding(0x100, 1, &[0x1_42f1]);
    let new = rewritten_past_likeness(&old, 0x500);
    let mut baseline = kept.clone();
    baseline.insert(0, old);
    let mut candidate = kept;
    candidate.push(new);
    let result = compare(
        &calling_in_order(baseline, &[1, 2, 3, 4, 5]),
        &calling_in_order(candidate, &[1, 2, 3, 4, 5]),
        &mut never(),
    );
    assert_eq!(partner(&result, 1), None, "{result:?}");
}

#[test]
fn a_small_procedure_whose_comparison_changed_pairs_by_its_addends() {
    // `lea -0x88e8(%rdi),%rcx; lea 0x47a6(%rsi),%rax; xor; cmp $0x21,%rdi; cmovge; ret`:
    // the comparison's constant changed (0x21 to 0x23), the two added constants did not.
    let mut kept = small(0x100, [0x21, 7]);
    let mut changed = small(0x300, [0x23, 8]);
    let mut removed = small(0x200, [0x30, 9]);
    let mut added = small(0x400, [0x31, 6]);
    kept.addends = vec![0x47a6, 0x88e8_u64.wrapping_neg()];
    changed.addends = kept.addends.clone();
    removed.addends = vec![0x1234];
    added.addends = vec![0x4321];
    assert_eq!(multiset_common(&kept.immediates, &changed.immediates), 0);
    assert!(small_kinship(&kept, &changed) >= MIN_SMALL_LIKENESS);
    assert_eq!(small_kinship(&removed, &added), 0.0);
    let result = compare(&[kept, removed], &[added, changed], &mut never());
    assert_eq!(partner(&result, 0).map(|(c, _)| c), Some(1), "{result:?}");
    assert_eq!(partner(&result, 1), None, "{result:?}");
}

#[test]
fn a_small_negative_constant_pairs_nothing() {
    // `x - 28` holds -28 (as a 64-bit immediate, or a 32-bit operand's): no other procedure
    // holds it, and yet it says no more than 28 would. The same procedures pair when the
    // value is large.
    for (value, pairs) in [
        (28_u64.wrapping_neg(), false),
        (0xffff_ffe4, false),
        (0x1_42f1_u64.wrapping_neg(), true),
    ] {
        let old = holding(0x100, 1, &[value]);
        let new = rewritten_past_likeness(&old, 0x500);
        let result = compare(&[old], &[new], &mut never());
        assert_eq!(
            partner(&result, 0).is_some_and(|(_, signal)| signal == Signal::Constants),
            pairs,
            "{value:#x}: {result:?}"
        );
    }
}
