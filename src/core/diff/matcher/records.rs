//! The round of named records: a procedure that a table of records in data names (a method
//! table's `{"flush", reader_flush, …}`, a command table's `{"quit", do_quit}`) pairs with the
//! one that the counterpart table names alike, however its code changed.

use std::collections::BTreeMap;

use crate::core::diff::{Fingerprint, MAX_TABLES_PER_RECORD_NAME, MIN_SHARED_RECORD_NAMES, Signal};

use super::Matcher;

/// Each table of named records of one side: its names, each with the procedures named so.
type Records = BTreeMap<u32, BTreeMap<u64, Vec<u32>>>;

impl Matcher<'_> {
    /// Pairs the unpaired procedures that two counterpart tables of named records (each the
    /// other's unique best by the share of names they hold, at least
    /// [`MIN_SHARED_RECORD_NAMES`]) name alike, each name held by one procedure in each
    /// table; a procedure named in several records pairs only when they all agree.
    pub(super) fn record_round(&mut self) {
        let (baseline, candidate) = (records_of(self.baseline), records_of(self.candidate));
        let records = |side: &Records| side.values().map(BTreeMap::len).sum::<usize>();
        if baseline.is_empty()
            || candidate.is_empty()
            || self.should_stop(records(&baseline) + records(&candidate), false)
        {
            return;
        }
        let paired = |b: u32, c: u32| self.forward[b as usize] == Some(c);
        let forward = counterparts(&baseline, &candidate, paired);
        let backward = counterparts(&candidate, &baseline, |c, b| paired(b, c));
        let mut proposed: Vec<(u32, u32)> = Vec::new();
        for (table, other) in forward {
            if backward.get(&other) != Some(&table) {
                continue;
            }
            let (old, new) = (&baseline[&table], &candidate[&other]);
            for (name, holders) in old {
                if let ([b], Some([c])) = (holders.as_slice(), new.get(name).map(Vec::as_slice)) {
                    proposed.push((*b, *c));
                }
            }
        }
        proposed.sort_unstable();
        proposed.dedup();
        let mut proposals_of_candidate: BTreeMap<u32, usize> = BTreeMap::new();
        let mut proposals_of_baseline: BTreeMap<u32, usize> = BTreeMap::new();
        for &(b, c) in &proposed {
            *proposals_of_baseline.entry(b).or_default() += 1;
            *proposals_of_candidate.entry(c).or_default() += 1;
        }
        for (b, c) in proposed {
            if proposals_of_baseline[&b] == 1
                && proposals_of_candidate[&c] == 1
                && self.forward[b as usize].is_none()
                && self.backward[c as usize].is_none()
            {
                self.pair(b, c, Signal::RecordName);
            }
        }
    }
}

/// The tables of named records of one side.
fn records_of(side: &[Fingerprint]) -> Records {
    let mut tables: Records = BTreeMap::new();
    for (index, procedure) in side.iter().enumerate() {
        for label in &procedure.labels {
            tables
                .entry(label.table)
                .or_default()
                .entry(label.name)
                .or_default()
                .push(index as u32);
        }
    }
    tables
}

/// Each table of `from`'s counterpart in `to`: the table sharing the greatest part of the
/// names of both (shared over all), at least [`MIN_SHARED_RECORD_NAMES`], and of those, the
/// one whose procedures already `paired` with `from`'s under the most names (two classes
/// with the same methods have tables of the same names), when no other is as good. A name
/// that more than [`MAX_TABLES_PER_RECORD_NAME`] tables of `to` hold votes for none.
fn counterparts(
    from: &Records,
    to: &Records,
    paired: impl Fn(u32, u32) -> bool,
) -> BTreeMap<u32, u32> {
    let mut holding: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for (&table, names) in to {
        for &name in names.keys() {
            holding.entry(name).or_default().push(table);
        }
    }
    let mut chosen = BTreeMap::new();
    for (&table, names) in from {
        // Per table of `to`: the names shared, and those whose one holder on each side
        // are paired with each other.
        let mut shared: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
        for (name, holders) in names {
            let Some(others) = holding
                .get(name)
                .filter(|others| others.len() <= MAX_TABLES_PER_RECORD_NAME)
            else {
                continue;
            };
            for &other in others {
                let theirs = to[&other][name].as_slice();
                let agrees = matches!((holders.as_slice(), theirs), ([a], [b]) if paired(*a, *b));
                let (common, agreeing) = shared.entry(other).or_default();
                *common += 1;
                *agreeing += usize::from(agrees);
            }
        }
        let mut best: Option<((f64, usize), u32)> = None;
        let mut tied = false;
        for (other, (common, agreeing)) in shared {
            let all = names.len() + to[&other].len() - common;
            let score = (common as f64 / all as f64, agreeing);
            match best {
                Some((most, _)) if score < most => {}
                Some((most, _)) if score == most => tied = true,
                _ => (best, tied) = (Some((score, other)), false),
            }
        }
        if let (Some(((part, _), other)), false) = (best, tied)
            && part >= MIN_SHARED_RECORD_NAMES
        {
            chosen.insert(table, other);
        }
    }
    chosen
}
