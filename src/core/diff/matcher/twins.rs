//! The round of near-twins: instances of one template, told apart by their own immediates.

use std::collections::BTreeMap;

use crate::core::diff::measure::{jaccard_multiset, kinship, multiset_difference, size_window};
use crate::core::diff::{Fingerprint, LIKENESS_MARGIN, MAX_NEIGHBOURS, MIN_TWIN_LIKENESS, Signal};

use super::{Best, Matcher};

impl Matcher<'_> {
    /// Pairs near-twins by what tells them apart (see the module documentation).
    ///
    /// Runs after a likeness round that paired nothing, so the bests it kept are current.
    pub(super) fn twins_round(&mut self) {
        for family in self.twin_families() {
            if family.baseline.len() < 2
                || family.candidate.len() < 2
                || family.baseline.len() > MAX_NEIGHBOURS
                || family.candidate.len() > MAX_NEIGHBOURS
                || self.should_stop(family.links.len(), false)
            {
                continue;
            }
            let own_b = own_immediates(self.baseline, &family.baseline);
            let own_c = own_immediates(self.candidate, &family.candidate);
            let place = |members: &[u32], at: u32| members.iter().position(|&m| m == at);
            let mut scores = vec![vec![0.0; family.candidate.len()]; family.baseline.len()];
            for &(b, c) in &family.links {
                if let (Some(i), Some(j)) =
                    (place(&family.baseline, b), place(&family.candidate, c))
                    && !own_b[i].is_empty()
                    && !own_c[j].is_empty()
                {
                    let score = jaccard_multiset(&own_b[i], &own_c[j]);
                    // The place is asked only of links that could decide (it is dearer).
                    if score > 0.0 && !self.against_call_order(b, c) {
                        scores[i][j] = score;
                    }
                }
            }
            for (i, row) in scores.iter().enumerate() {
                let best = row.iter().copied().fold(0.0, f64::max);
                let Some(j) = row.iter().position(|&score| score == best) else {
                    continue;
                };
                let unique_in_row = row.iter().filter(|&&score| score == best).count() == 1;
                let unique_in_column = scores.iter().filter(|other| other[j] >= best).count() == 1;
                if best > 0.0 && unique_in_row && unique_in_column {
                    self.pair(family.baseline[i], family.candidate[j], Signal::Twins);
                }
            }
        }
    }

    /// The families of near-twins among the unpaired procedures, in the order of their first
    /// baseline member.
    pub(super) fn twin_families(&mut self) -> Vec<Family> {
        let Some(links) = self.twin_links() else {
            return Vec::new();
        };
        // Union-find over baseline indices, then candidate indices after them.
        let offset = self.baseline.len();
        let mut parent: Vec<usize> = (0..offset + self.candidate.len()).collect();
        fn root(parent: &mut [usize], mut at: usize) -> usize {
            while parent[at] != at {
                parent[at] = parent[parent[at]];
                at = parent[at];
            }
            at
        }
        for &(b, c) in &links {
            let (x, y) = (
                root(&mut parent, b as usize),
                root(&mut parent, offset + c as usize),
            );
            parent[x.max(y)] = x.min(y);
        }
        let mut families: BTreeMap<usize, Family> = BTreeMap::new();
        for (b, c) in links {
            let family = families.entry(root(&mut parent, b as usize)).or_default();
            family.baseline.push(b);
            family.candidate.push(c);
            family.links.push((b, c));
        }
        let mut families: Vec<Family> = families.into_values().collect();
        for family in &mut families {
            family.baseline.sort_unstable();
            family.baseline.dedup();
            family.candidate.sort_unstable();
            family.candidate.dedup();
        }
        families
    }

    /// The links between near-twins, sorted; `None` when the comparison stopped.
    ///
    /// A procedure is ambiguous when its best is at least [`MIN_TWIN_LIKENESS`] and its
    /// runner-up within [`LIKENESS_MARGIN`] of it; an ambiguous baseline and an ambiguous
    /// candidate procedure are linked when they are at least [`MIN_TWIN_LIKENESS`] alike and
    /// each within that margin of the other's best. A link depends only on the two
    /// procedures and their bests, so the links found last time are kept for the procedures
    /// whose best has not changed since, and only the others are compared again: the result
    /// is the same as comparing everything anew.
    pub(super) fn twin_links(&mut self) -> Option<Vec<(u32, u32)>> {
        let ambiguous = |best: &Option<Best>| {
            best.is_some_and(|best| {
                best.score >= MIN_TWIN_LIKENESS
                    && best.runner_up_at.is_some()
                    && best.score - best.runner_up < LIKENESS_MARGIN
            })
        };
        let rows_ambiguous: Vec<bool> = self.row_best.iter().map(ambiguous).collect();
        let columns_ambiguous: Vec<bool> = self.column_best.iter().map(ambiguous).collect();
        // A member is a procedure whose best is a near tie, or whose best's is: of two
        // instances a hair less alike crosswise, one may be decisively the other's best.
        let member = |best: &Option<Best>, ambiguous: bool, others_ambiguous: &[bool]| {
            best.filter(|best| {
                best.score >= MIN_TWIN_LIKENESS
                    && (ambiguous || best.at.is_some_and(|at| others_ambiguous[at as usize]))
            })
            .map(|best| best.score)
        };
        let row_scores: Vec<Option<f64>> = (0..self.baseline.len())
            .map(|b| {
                member(&self.row_best[b], rows_ambiguous[b], &columns_ambiguous)
                    .filter(|_| self.forward[b].is_none())
            })
            .collect();
        let column_scores: Vec<Option<f64>> = (0..self.candidate.len())
            .map(|c| {
                member(&self.column_best[c], columns_ambiguous[c], &rows_ambiguous)
                    .filter(|_| self.backward[c].is_none())
            })
            .collect();
        let memory = std::mem::take(&mut self.twins);
        let remembered = self.remember && memory.row_scores.len() == row_scores.len();
        let known_row = |b: u32| {
            remembered
                && row_scores[b as usize].is_some()
                && memory.row_scores[b as usize] == row_scores[b as usize]
        };
        let known_column = |c: u32| {
            remembered
                && column_scores[c as usize].is_some()
                && memory.column_scores[c as usize] == column_scores[c as usize]
        };
        let mut links: Vec<(u32, u32)> = memory
            .links
            .iter()
            .copied()
            .filter(|&(b, c)| known_row(b) && known_column(c))
            .collect();
        let by_size = |side: &[Fingerprint], scores: &[Option<f64>], keep: &dyn Fn(u32) -> bool| {
            let mut indices: Vec<u32> = (0..side.len() as u32)
                .filter(|&i| scores[i as usize].is_some() && keep(i))
                .collect();
            indices.sort_by_key(|&i| (side[i as usize].size, i));
            indices
        };
        let columns = by_size(self.candidate, &column_scores, &|_| true);
        let known_rows = by_size(self.baseline, &row_scores, &|b| known_row(b));
        let linked = |b: u32, c: u32| {
            let score = kinship(&self.baseline[b as usize], &self.candidate[c as usize]);
            let (row, column) = (row_scores[b as usize], column_scores[c as usize]);
            score >= MIN_TWIN_LIKENESS
                && row.is_some_and(|best| best - score < LIKENESS_MARGIN)
                && column.is_some_and(|best| best - score < LIKENESS_MARGIN)
        };
        // Rows whose best changed, against every column; columns whose best changed, against
        // the rows whose best did not.
        let mut found = Vec::new();
        for b in (0..self.baseline.len() as u32).filter(|&b| row_scores[b as usize].is_some()) {
            if known_row(b) {
                continue;
            }
            let range = size_window(&columns, self.candidate, self.baseline[b as usize].size);
            if self.should_stop(range.len(), false) {
                return None;
            }
            found.extend(
                columns[range]
                    .iter()
                    .filter(|&&c| linked(b, c))
                    .map(|&c| (b, c)),
            );
        }
        for c in (0..self.candidate.len() as u32).filter(|&c| column_scores[c as usize].is_some()) {
            if known_column(c) {
                continue;
            }
            let range = size_window(&known_rows, self.baseline, self.candidate[c as usize].size);
            if self.should_stop(range.len(), false) {
                return None;
            }
            found.extend(
                known_rows[range]
                    .iter()
                    .filter(|&&b| linked(b, c))
                    .map(|&b| (b, c)),
            );
        }
        links.extend(found);
        links.sort_unstable();
        self.twins = TwinMemory {
            row_scores,
            column_scores,
            links: links.clone(),
        };
        Some(links)
    }
}

/// What the twins round found last time: the best of each ambiguous procedure then, and the
/// links between them.
#[derive(Default)]
pub(in crate::core::diff) struct TwinMemory {
    row_scores: Vec<Option<f64>>,
    column_scores: Vec<Option<f64>>,
    links: Vec<(u32, u32)>,
}

/// Near-twins of the two sides, as the twins round links them.
#[derive(Default)]
pub(in crate::core::diff) struct Family {
    baseline: Vec<u32>,
    candidate: Vec<u32>,
    /// Each baseline member and a candidate member within the margin of both their bests.
    links: Vec<(u32, u32)>,
}

/// The immediates of each of `members` that not every one of them holds (multisets).
pub(in crate::core::diff) fn own_immediates(
    side: &[Fingerprint],
    members: &[u32],
) -> Vec<Vec<u32>> {
    let mut common = side[members[0] as usize].immediates.clone();
    for &member in &members[1..] {
        common = multiset_difference(
            &common,
            &multiset_difference(&common, &side[member as usize].immediates),
        );
    }
    members
        .iter()
        .map(|&member| multiset_difference(&side[member as usize].immediates, &common))
        .collect()
}

/// The assignment of rows to distinct columns (one row to one column) with the greatest total
/// score: each row's column, if it has one (Kuhn–Munkres, in O(n²·m) for n rows of m
/// columns, n ≤ m, the other way round transposed).
pub(in crate::core::diff) fn best_assignment(scores: &[Vec<f64>]) -> Vec<Option<usize>> {
    let rows = scores.len();
    let columns = scores.first().map_or(0, Vec::len);
    if rows > columns {
        let transposed: Vec<Vec<f64>> = (0..columns)
            .map(|column| scores.iter().map(|row| row[column]).collect())
            .collect();
        let mut by_row = vec![None; rows];
        for (column, row) in best_assignment(&transposed).into_iter().enumerate() {
            if let Some(row) = row {
                by_row[row] = Some(column);
            }
        }
        return by_row;
    }
    // Potentials `row_potential`, `column_potential` and, per column, the row holding it
    // (`holder`, 1-based, 0 for none) and the column it was reached from; column 0 is virtual.
    let mut row_potential = vec![0.0; rows + 1];
    let mut column_potential = vec![0.0; columns + 1];
    let mut holder = vec![0usize; columns + 1];
    let mut reached_from = vec![0usize; columns + 1];
    for row in 1..=rows {
        holder[0] = row;
        let mut column = 0;
        let mut least_slack = vec![f64::INFINITY; columns + 1];
        let mut visited = vec![false; columns + 1];
        loop {
            visited[column] = true;
            let from_row = holder[column];
            let (mut delta, mut next) = (f64::INFINITY, 0);
            for j in 1..=columns {
                if visited[j] {
                    continue;
                }
                let slack =
                    -scores[from_row - 1][j - 1] - row_potential[from_row] - column_potential[j];
                if slack < least_slack[j] {
                    (least_slack[j], reached_from[j]) = (slack, column);
                }
                if least_slack[j] < delta {
                    (delta, next) = (least_slack[j], j);
                }
            }
            for j in 0..=columns {
                if visited[j] {
                    row_potential[holder[j]] += delta;
                    column_potential[j] -= delta;
                } else {
                    least_slack[j] -= delta;
                }
            }
            column = next;
            if holder[column] == 0 {
                break;
            }
        }
        while column != 0 {
            let previous = reached_from[column];
            holder[column] = holder[previous];
            column = previous;
        }
    }
    let mut by_row = vec![None; rows];
    for (column, &row) in holder.iter().enumerate().skip(1) {
        if row != 0 {
            by_row[row - 1] = Some(column - 1);
        }
    }
    by_row
}
