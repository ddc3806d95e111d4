//! Pairs that need no neighbour: a program against itself, a moved procedure, names,
//! duplicated code, pure procedures' constants, and the stop signal.

use super::*;

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
