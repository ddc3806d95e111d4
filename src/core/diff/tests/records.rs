//! The round of named records ([`Signal::RecordName`]).

use super::*;

/// Procedures named by records of `table`, one name each, as `foreign` code of their own.
fn named_by(table: u32, names: &[u64], seed: u16) -> Vec<Fingerprint> {
    names
        .iter()
        .enumerate()
        .map(|(i, &name)| {
            let mut p = foreign(
                0x1000 * u64::from(seed) + 0x40 * i as u64,
                seed + i as u16,
                12,
            );
            p.labels = vec![Label { table, name }];
            p
        })
        .collect()
}

#[test]
fn procedures_rewritten_past_likeness_pair_by_the_name_their_records_hold() {
    // Two method tables: each method rewritten into code that shares nothing with its old
    // self; the new release adds a method and drops one, and lays the table out anew.
    let baseline: Vec<Fingerprint> = named_by(0, &[1, 2, 3, 4], 10)
        .into_iter()
        .chain(named_by(1, &[1, 5, 6], 20))
        .collect();
    let candidate: Vec<Fingerprint> = named_by(0, &[6, 5, 1, 7], 40)
        .into_iter()
        .chain(named_by(1, &[4, 3, 2, 1, 8], 30))
        .collect();
    let result = compare(&baseline, &candidate, &mut never());
    // The first old table is the second new one (names 1 to 4 of 1 to 4 and 8), and the
    // other way round; name 1 is in both, and each table pairs its own.
    let expected = [(0, 7), (1, 6), (2, 5), (3, 4), (4, 2), (5, 1), (6, 0)];
    for (b, c) in expected {
        assert_eq!(
            partner(&result, b),
            Some((c, Signal::RecordName)),
            "{result:?}"
        );
    }
    assert_eq!(result.only_in_candidate, vec![3, 8]);
}

#[test]
fn a_name_that_two_records_of_a_table_hold_pairs_nothing() {
    let mut baseline = named_by(0, &[1, 2, 3], 10);
    let mut candidate = named_by(0, &[1, 2, 3], 20);
    baseline[2].labels[0].name = 2;
    candidate[2].labels[0].name = 2;
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(
        result
            .pairs
            .iter()
            .map(|p| (p.baseline, p.candidate, p.signal))
            .collect::<Vec<_>>(),
        vec![(0, 0, Signal::RecordName)]
    );
}

#[test]
fn tables_sharing_less_than_half_their_names_are_not_counterparts() {
    // {1, 2, 3, 4} against {1, 5, 6, 7}: one name of seven.
    let baseline = named_by(0, &[1, 2, 3, 4], 10);
    let candidate = named_by(0, &[1, 5, 6, 7], 20);
    let result = compare(&baseline, &candidate, &mut never());
    assert!(result.pairs.is_empty(), "{result:?}");
}

#[test]
fn a_procedure_whose_records_disagree_pairs_by_none_of_them() {
    // Old procedure 0 serves name 1 in one table and name 2 in another; in the new release
    // name 2 is served by another procedure.
    let mut baseline = named_by(0, &[1, 3], 10);
    baseline.extend(named_by(1, &[2, 4], 20));
    baseline[2].labels = vec![]; // table 1's name 2 is procedure 0's as well
    baseline[0].labels.push(Label { table: 1, name: 2 });
    let mut candidate = named_by(0, &[1, 3], 30);
    candidate.extend(named_by(1, &[2, 4], 40));
    let result = compare(&baseline, &candidate, &mut never());
    assert_eq!(partner(&result, 0), None, "{result:?}");
    for b in [1, 3] {
        assert_eq!(partner(&result, b), Some((b, Signal::RecordName)));
    }
}

#[test]
fn of_two_tables_of_the_same_names_the_one_that_holds_a_pair_is_the_counterpart() {
    // Two classes with the same methods, {1, 2, 3} each; one method of each is named, so it
    // pairs by its name first and tells the two tables apart.
    let side = |seed: u16| {
        let mut procedures = named_by(0, &[1, 2, 3], seed);
        procedures.extend(named_by(1, &[1, 2, 3], seed + 10));
        procedures[0].name = Some("compressor_read".into());
        procedures[3].name = Some("decompressor_read".into());
        procedures
    };
    let (baseline, mut candidate) = (side(10), side(40));
    // The new release lays the classes out the other way round.
    candidate.rotate_left(3);
    for procedure in &mut candidate[..3] {
        procedure.labels[0].table = 0;
    }
    for procedure in &mut candidate[3..] {
        procedure.labels[0].table = 1;
    }
    let result = compare(&baseline, &candidate, &mut never());
    for (b, c) in [(1, 4), (2, 5), (4, 1), (5, 2)] {
        assert_eq!(
            partner(&result, b),
            Some((c, Signal::RecordName)),
            "{result:?}"
        );
    }
}

#[test]
fn a_name_that_many_tables_hold_votes_for_none() {
    // The new release adds 65 one-record tables that all name a `new` (name 1): name 1
    // votes for none of them, and names 2 and 3 still find the old table's counterpart.
    let baseline = named_by(0, &[1, 2, 3], 10);
    let mut candidate = named_by(0, &[1, 2, 3], 20);
    for table in 1..=MAX_TABLES_PER_RECORD_NAME as u32 + 1 {
        let mut new = foreign(0x10_0000 + 0x40 * u64::from(table), 50, 12);
        new.labels = vec![Label { table, name: 1 }];
        candidate.push(new);
    }
    let result = compare(&baseline, &candidate, &mut never());
    for b in 0..3 {
        assert_eq!(
            partner(&result, b),
            Some((b, Signal::RecordName)),
            "{result:?}"
        );
    }
}
