//! Callees inlined into a caller on one side: the round that pairs them, and the check that
//! refuses a callee the pair its caller holds.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::collections::BTreeSet;

use crate::core::diff::measure::{kinship, sizes_within_window};
use crate::core::diff::{
    Fingerprint, LARGE_PROCEDURE_INSTRUCTIONS, LIKENESS_MARGIN, MAX_NEIGHBOURS,
    MIN_LIKENESS_INSTRUCTIONS, Signal, similarity,
};

use super::{Best, Matcher};

/// Most callers of an unpaired procedure that the round of inlined callees takes into each.
const MAX_ABSORBED_CALLERS: usize = 4;

/// A caller taken in tells which version holds a callee's code only when it brings at least
/// a `1 / MIN_HOLDER_SHARE` of the callee's size (see [`Matcher::rather_its_caller`]).
const MIN_HOLDER_SHARE: u64 = 4;

impl<'a> Matcher<'a> {
    /// `procedure` (of the baseline side, or the candidate's) with the code of its paired
    /// callees of fewer than [`LARGE_PROCEDURE_INSTRUCTIONS`] taken in, as a compiler inlines
    /// them, and when `absorb`, of its unpaired callees of any size with at most
    /// [`MAX_ABSORBED_CALLERS`] callers: their instructions, strings, constants and imports
    /// added, their callees called instead; `None` when it calls none such.
    pub(super) fn with_callees_inlined(
        &self,
        procedure: &Fingerprint,
        baseline: bool,
        absorb: bool,
    ) -> Option<Fingerprint> {
        let (side, partners) = if baseline {
            (self.baseline, &self.forward)
        } else {
            (self.candidate, &self.backward)
        };
        // A callee index past the side (a caller's own fingerprints) is never inlined.
        let inlined = |callee: &u32| match partners.get(*callee as usize) {
            Some(Some(_)) => side[*callee as usize].tokens.len() < LARGE_PROCEDURE_INSTRUCTIONS,
            Some(None) => absorb && self.absorbable(*callee, baseline),
            None => false,
        };
        if !procedure.callees.iter().any(inlined) {
            return None;
        }
        let mut grown = procedure.clone();
        grown.callees.clear();
        for &callee in &procedure.callees {
            if inlined(&callee) {
                take_in(&mut grown, &side[callee as usize], callee);
            } else {
                grown.callees.push(callee);
            }
        }
        Some(tidied(grown))
    }

    /// Whether the unpaired procedure `at` could be absorbed: the other version may have
    /// inlined it into each of its few callers (at most [`MAX_ABSORBED_CALLERS`]).
    fn absorbable(&self, at: u32, baseline: bool) -> bool {
        let (partners, callers) = if baseline {
            (&self.forward, &self.baseline_callers)
        } else {
            (&self.backward, &self.candidate_callers)
        };
        partners[at as usize].is_none() && callers[at as usize].len() <= MAX_ABSORBED_CALLERS
    }

    /// Whether an unpaired caller of `b`, with `b` taken in, is at least [`LIKENESS_MARGIN`]
    /// more alike to `c` than `b` is, or an unpaired caller of `c`, with `c` taken in, to `b`:
    /// the other version inlined the callee into that caller, and the callee would pair with
    /// the caller that holds its code. Only callers of half to twice the other's size with
    /// the callee taken in are asked, and none of a procedure with more than
    /// [`MAX_NEIGHBOURS`] callers. When the callee has a paired caller, the caller need only
    /// be within the margin of as alike if nothing calls the other procedure (every caller
    /// inlined it), or if nothing unpaired does, the caller brings at least a
    /// `1 / MIN_HOLDER_SHARE` of the callee's size, and either it is at least as alike or a
    /// pair that calls the callee does not call the other: one version inlined the callee
    /// into its caller and kept it out of line, the other did the opposite, and neither the
    /// code nor the place tells the callee from the caller holding it. A wrapper much
    /// smaller than its callee, taken in, is the callee itself and tells nothing; where
    /// every pair calling the callee calls the other, the place agrees with the pair.
    pub(super) fn rather_its_caller(&self, b: u32, c: u32) -> bool {
        let alike = similarity(&self.baseline[b as usize], &self.candidate[c as usize]);
        let baseline = View {
            procedures: self.baseline,
            callers: &self.baseline_callers,
            partners: &self.forward,
        };
        let candidate = View {
            procedures: self.candidate,
            callers: &self.candidate_callers,
            partners: &self.backward,
        };
        self.caller_holds_more(&baseline, b, &candidate, c, alike)
            || self.caller_holds_more(&candidate, c, &baseline, b, alike)
    }

    /// [`Matcher::rather_its_caller`] one way: whether an unpaired caller of `callee` (of
    /// `this` side), with it taken in, is the better partner of `other`.
    fn caller_holds_more(
        &self,
        this: &View<'_>,
        callee: u32,
        that: &View<'_>,
        other: u32,
        alike: f64,
    ) -> bool {
        let callers = &this.callers[callee as usize];
        if callers.len() > MAX_NEIGHBOURS {
            return false;
        }
        let (inlined, other_procedure) = (
            &this.procedures[callee as usize],
            &that.procedures[other as usize],
        );
        let other_callers = &that.callers[other as usize];
        let placed = callers
            .iter()
            .any(|&caller| this.partners[caller as usize].is_some());
        // Whether something unpaired calls the other, asked once, when needed.
        let other_held = OnceCell::new();
        callers.iter().any(|&caller| {
            let holder = &this.procedures[caller as usize];
            let size = holder.size + inlined.size;
            if this.partners[caller as usize].is_some()
                || size > other_procedure.size.saturating_mul(2)
                || size.saturating_mul(2) < other_procedure.size
            {
                return false;
            }
            let held = taken_in(holder, inlined, callee);
            let held_alike = similarity(&held, other_procedure);
            if held_alike >= alike + LIKENESS_MARGIN {
                return true;
            }
            if held_alike < alike - LIKENESS_MARGIN || !placed {
                return false;
            }
            // About as alike: the place decides, when it can.
            if other_callers.is_empty() {
                return true;
            }
            // A wrapper much smaller than its callee, taken in, is the callee itself.
            let brings_code = holder.size.saturating_mul(MIN_HOLDER_SHARE) >= inlined.size;
            // Where every pair calling the callee calls the other, the place agrees, and
            // the caller holding the code has to be at least as alike (callers sorted).
            let placed_alike = || {
                callers.iter().all(|&caller| {
                    this.partners[caller as usize]
                        .is_none_or(|partner| other_callers.binary_search(&partner).is_ok())
                })
            };
            let other_held = *other_held.get_or_init(|| {
                other_callers
                    .iter()
                    .any(|&caller| that.partners[caller as usize].is_none())
            });
            brings_code && (held_alike >= alike || !placed_alike()) && !other_held
        })
    }

    /// Pairs unpaired procedures that are each other's most similar by a margin, as the
    /// likeness round does, with each one's small paired callees taken in
    /// ([`Matcher::with_callees_inlined`]), when that took in code on at least one side: a
    /// function whose callee one version inlines and the other calls. Then again with the
    /// unpaired callees of few callers taken in too, and without those callees as procedures
    /// of their own (a static function the other version inlined into each caller).
    pub(super) fn inlined_round(&mut self) {
        let rows = self.gathered(true, false);
        let columns = self.gathered(false, false);
        if (rows.iter().any(took_in) || columns.iter().any(took_in))
            && !self.pair_mutual_bests(&rows, &columns)
        {
            return;
        }
        // Then with the unpaired callees of few callers taken in too (the other version may
        // have inlined one into each), and without them alone: one is as alike to its
        // caller's other version as the caller is, having its code, and keeps both apart.
        let mut rows = self.gathered(true, true);
        let mut columns = self.gathered(false, true);
        let absorbed =
            |side: &[Fingerprint], gathered: &[(u32, Cow<'a, Fingerprint>)], baseline| {
                gathered
                    .iter()
                    .filter(|entry| took_in(entry))
                    .flat_map(|(at, _)| side[*at as usize].callees.iter().copied())
                    .filter(|&callee| self.absorbable(callee, baseline))
                    .collect::<BTreeSet<u32>>()
            };
        let (absorbed_rows, absorbed_columns) = (
            absorbed(self.baseline, &rows, true),
            absorbed(self.candidate, &columns, false),
        );
        if absorbed_rows.is_empty() && absorbed_columns.is_empty() {
            return;
        }
        rows.retain(|(b, _)| !absorbed_rows.contains(b));
        columns.retain(|(c, _)| !absorbed_columns.contains(c));
        self.pair_mutual_bests(&rows, &columns);
    }

    /// The unpaired procedures of a side of at least [`MIN_LIKENESS_INSTRUCTIONS`] with their
    /// callees taken in ([`Matcher::with_callees_inlined`]), sorted by size.
    fn gathered(&self, baseline: bool, absorb: bool) -> Vec<(u32, Cow<'a, Fingerprint>)> {
        let (side, partners) = if baseline {
            (self.baseline, &self.forward)
        } else {
            (self.candidate, &self.backward)
        };
        let mut gathered: Vec<(u32, Cow<'a, Fingerprint>)> = (0..side.len() as u32)
            .filter(|&at| partners[at as usize].is_none())
            .map(|at| {
                let procedure = &side[at as usize];
                let grown = self.with_callees_inlined(procedure, baseline, absorb);
                (at, grown.map_or(Cow::Borrowed(procedure), Cow::Owned))
            })
            .filter(|(_, procedure)| procedure.tokens.len() >= MIN_LIKENESS_INSTRUCTIONS)
            .collect();
        gathered.sort_by_key(|(at, procedure)| (procedure.size, *at));
        gathered
    }

    /// Pairs the `rows` and `columns` (sorted by size) that are each other's decisive best,
    /// when at least one of the two took in code; `false` when told to stop.
    fn pair_mutual_bests(
        &mut self,
        rows: &[(u32, Cow<'_, Fingerprint>)],
        columns: &[(u32, Cow<'_, Fingerprint>)],
    ) -> bool {
        let mut row_best = vec![Best::default(); rows.len()];
        let mut column_best = vec![Best::default(); columns.len()];
        for (row, (_, f)) in rows.iter().enumerate() {
            let range = sizes_within_window(columns, |(_, g)| g.size, f.size);
            if self.should_stop(range.len(), false) {
                return false;
            }
            for (column, (_, g)) in columns.iter().enumerate().take(range.end).skip(range.start) {
                let score = kinship(f, g);
                row_best[row].offer(score, column as u32);
                column_best[column].offer(score, row as u32);
            }
        }
        for (row, best) in row_best.iter().enumerate() {
            let Some(column) = best.at else { continue };
            let (row_entry, column_entry) = (&rows[row], &columns[column as usize]);
            if (took_in(row_entry) || took_in(column_entry))
                && best.mutual(row as u32, &column_best[column as usize])
            {
                self.pair(row_entry.0, column_entry.0, Signal::Likeness);
            }
        }
        true
    }
}

/// Whether a procedure of the round of inlined callees (its index and fingerprint) took in
/// code.
fn took_in((_, procedure): &(u32, Cow<'_, Fingerprint>)) -> bool {
    matches!(procedure, Cow::Owned(_))
}

/// `procedure` with `callee` (index `at` on its side) taken in instead of called.
pub(super) fn taken_in(procedure: &Fingerprint, callee: &Fingerprint, at: u32) -> Fingerprint {
    let mut grown = procedure.clone();
    grown.callees.retain(|&called| called != at);
    take_in(&mut grown, callee, at);
    tidied(grown)
}

/// Adds the code of `inner`, a callee (index `callee` on its side), to `grown`, as a compiler
/// inlines it: its instructions, immediates, strings, constants, addends and imports, and its callees
/// (but itself) called instead; [`tidied`] sorts the result again.
pub(in crate::core::diff) fn take_in(grown: &mut Fingerprint, inner: &Fingerprint, callee: u32) {
    grown.tokens.extend_from_slice(&inner.tokens);
    grown.mnemonics.extend_from_slice(&inner.mnemonics);
    grown.immediates.extend_from_slice(&inner.immediates);
    grown.strings.extend_from_slice(&inner.strings);
    grown.constants.extend_from_slice(&inner.constants);
    grown.addends.extend_from_slice(&inner.addends);
    grown.imports.extend(inner.imports.iter().cloned());
    grown.size += inner.size;
    (grown.callees).extend(inner.callees.iter().filter(|&&c| c != callee));
}

/// `grown` after [`take_in`]: its multisets sorted, its sets and callees distinct.
pub(in crate::core::diff) fn tidied(mut grown: Fingerprint) -> Fingerprint {
    grown.tokens.sort_unstable();
    grown.mnemonics.sort_unstable();
    grown.immediates.sort_unstable();
    for set in [&mut grown.strings, &mut grown.constants, &mut grown.addends] {
        set.sort_unstable();
        set.dedup();
    }
    grown.imports.sort();
    grown.imports.dedup();
    let mut seen = BTreeSet::new();
    grown.callees.retain(|&callee| seen.insert(callee));
    grown
}

/// One side as [`Matcher::caller_holds_more`] reads it.
struct View<'s> {
    procedures: &'s [Fingerprint],
    callers: &'s [Vec<u32>],
    partners: &'s [Option<u32>],
}
