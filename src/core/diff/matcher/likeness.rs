//! The rounds that pair what nothing links: by decisive mutual likeness, small procedures last,
//! and by place between two pairs.

use crate::core::diff::measure::{kinship, size_window, small_kinship, unpaired_by_size};
use crate::core::diff::{
    Fingerprint, MAX_NEIGHBOURS, MIN_LIKENESS_INSTRUCTIONS, MIN_ORDER_SIMILARITY,
    MIN_SMALL_LIKENESS, Signal,
};

use super::{Best, Matcher};

impl Matcher<'_> {
    /// Pairs unpaired procedures that are each other's most similar, by a margin, among all
    /// unpaired procedures of half to twice their size (see the module documentation).
    ///
    /// Each procedure's best and runner-up are kept from one round to the next: while both
    /// are still unpaired they are still the best and the runner-up (the others can only
    /// have been paired away), so only the procedures that lost one of them are compared
    /// again, and the result is the same as comparing everything anew.
    pub(super) fn likeness_round(&mut self) {
        if !self.remember {
            self.row_best.fill(None);
            self.column_best.fill(None);
        }
        let eligible =
            |procedure: &Fingerprint| procedure.tokens.len() >= MIN_LIKENESS_INSTRUCTIONS;
        let rows = unpaired_by_size(self.baseline, &self.forward, eligible);
        let columns = unpaired_by_size(self.candidate, &self.backward, eligible);
        let stale_rows: Vec<u32> = rows
            .iter()
            .copied()
            .filter(|&b| !self.row_best[b as usize].is_some_and(|best| best.holds(&self.backward)))
            .collect();
        let stale_columns: Vec<u32> = columns
            .iter()
            .copied()
            .filter(|&c| {
                !self.column_best[c as usize].is_some_and(|best| best.holds(&self.forward))
            })
            .collect();
        let mut column_is_stale = vec![false; self.candidate.len()];
        for &c in &stale_columns {
            self.column_best[c as usize] = Some(Best::default());
            column_is_stale[c as usize] = true;
        }
        let mut row_is_stale = vec![false; self.baseline.len()];
        for &b in &stale_rows {
            row_is_stale[b as usize] = true;
        }
        // Stale rows against every column; stale columns hear from these rows on the way.
        for &b in &stale_rows {
            let procedure = &self.baseline[b as usize];
            let range = size_window(&columns, self.candidate, procedure.size);
            if self.should_stop(range.len(), false) {
                return;
            }
            let mut best = Best::default();
            for &c in &columns[range] {
                let score = kinship(procedure, &self.candidate[c as usize]);
                best.offer(score, c);
                if column_is_stale[c as usize]
                    && let Some(column) = self.column_best[c as usize].as_mut()
                {
                    column.offer(score, b);
                }
            }
            self.row_best[b as usize] = Some(best);
        }
        // Stale columns against the rows that were not compared above.
        let fresh: Vec<u32> = rows
            .iter()
            .copied()
            .filter(|&b| !row_is_stale[b as usize])
            .collect();
        for &c in &stale_columns {
            let procedure = &self.candidate[c as usize];
            let range = size_window(&fresh, self.baseline, procedure.size);
            if self.should_stop(range.len(), false) {
                return;
            }
            let mut best = self.column_best[c as usize].unwrap_or_default();
            for &b in &fresh[range] {
                best.offer(kinship(&self.baseline[b as usize], procedure), b);
            }
            self.column_best[c as usize] = Some(best);
        }
        for &b in &rows {
            let Some(row) = self.row_best[b as usize] else {
                continue;
            };
            let Some(c) = row.at else { continue };
            if let Some(column) = self.column_best[c as usize]
                && row.mutual(b, &column)
            {
                self.pair(b, c, Signal::Likeness);
            }
        }
    }

    /// Pairs the unpaired procedures of fewer than [`MIN_LIKENESS_INSTRUCTIONS`] that are
    /// each other's most alike by [`LIKENESS_MARGIN`], at least [`MIN_SMALL_LIKENESS`], among
    /// all unpaired procedures of half to twice their size, sharing an immediate when they
    /// have any ([`small_kinship`]): a small function nothing calls (its callers inlined it)
    /// whose one constant changed. The many alike small functions (`mov %rdi,%rax; ret`) tie
    /// and stay apart.
    ///
    /// [`LIKENESS_MARGIN`]: crate::core::diff::LIKENESS_MARGIN
    pub(super) fn small_likeness_round(&mut self) {
        let rows = unpaired_by_size(self.baseline, &self.forward, |_| true);
        let columns = unpaired_by_size(self.candidate, &self.backward, |_| true);
        let small = |procedure: &Fingerprint| procedure.tokens.len() < MIN_LIKENESS_INSTRUCTIONS;
        // One side's best among the other side's unpaired procedures in its size window.
        let best_of = |procedure: &Fingerprint,
                       others: &[u32],
                       side: &[Fingerprint],
                       baseline_first: bool|
         -> Best {
            let mut best = Best::default();
            for &other in &others[size_window(others, side, procedure.size)] {
                let other_procedure = &side[other as usize];
                let (old, new) = if baseline_first {
                    (procedure, other_procedure)
                } else {
                    (other_procedure, procedure)
                };
                best.offer(small_kinship(old, new), other);
            }
            best
        };
        let mut made = Vec::new();
        // From each small baseline procedure, then from each small candidate one whose best
        // is not small (the pairs of two small ones are found from the baseline).
        for &b in rows.iter().filter(|&&b| small(&self.baseline[b as usize])) {
            if self.should_stop(columns.len(), false) {
                return;
            }
            let row = best_of(&self.baseline[b as usize], &columns, self.candidate, true);
            let Some(c) = row.at.filter(|_| row.decisive(MIN_SMALL_LIKENESS)) else {
                continue;
            };
            let column = best_of(&self.candidate[c as usize], &rows, self.baseline, false);
            if column.at == Some(b) && column.decisive(MIN_SMALL_LIKENESS) {
                made.push((b, c));
            }
        }
        for &c in columns
            .iter()
            .filter(|&&c| small(&self.candidate[c as usize]))
        {
            if self.should_stop(rows.len(), false) {
                return;
            }
            let column = best_of(&self.candidate[c as usize], &rows, self.baseline, false);
            let Some(b) = column.at.filter(|&b| {
                column.decisive(MIN_SMALL_LIKENESS) && !small(&self.baseline[b as usize])
            }) else {
                continue;
            };
            let row = best_of(&self.baseline[b as usize], &columns, self.candidate, true);
            if row.at == Some(c) && row.decisive(MIN_SMALL_LIKENESS) {
                made.push((b, c));
            }
        }
        for (b, c) in made {
            self.pair(b, c, Signal::Likeness);
        }
    }

    /// Pairs the unpaired procedures between two consecutive pairs when no other pair lies
    /// between them on either side (compilers lay procedures out in source order): position
    /// by position when as many lie between them on each side, otherwise by mutual best
    /// similarity among at most [`MAX_NEIGHBOURS`] per side; each at least
    /// [`MIN_ORDER_SIMILARITY`] alike.
    pub(super) fn order_round(&mut self) {
        let mut gaps = Vec::new();
        let mut previous: Option<(usize, usize)> = None;
        for b in 0..self.baseline.len() {
            let Some(c) = self.forward[b].map(|c| c as usize) else {
                continue;
            };
            if let Some((before_b, before_c)) = previous
                && c > before_c
                && (b - before_b > 1 || c - before_c > 1)
                && (before_c + 1..c).all(|index| self.backward[index].is_none())
            {
                gaps.push((before_b + 1..b, before_c + 1..c));
            }
            previous = Some((b, c));
        }
        for (left, right) in gaps {
            if self.should_stop(left.len().max(right.len()), false) {
                return;
            }
            if left.len() == right.len() {
                for (x, y) in left.zip(right) {
                    if kinship(&self.baseline[x], &self.candidate[y]) >= MIN_ORDER_SIMILARITY {
                        self.pair(x as u32, y as u32, Signal::Order);
                    }
                }
            } else if left.len() <= MAX_NEIGHBOURS && right.len() <= MAX_NEIGHBOURS {
                let (left, right): (Vec<u32>, Vec<u32>) = (
                    left.map(|index| index as u32).collect(),
                    right.map(|index| index as u32).collect(),
                );
                self.mutual_best(&left, &right, |_, _| MIN_ORDER_SIMILARITY, Signal::Order);
            }
        }
    }
}
