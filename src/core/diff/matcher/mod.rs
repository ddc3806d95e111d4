//! The matcher: both sides' partners and the rounds' memory, the rounds in their order, and
//! what they share (pairing, undoing, the mutual best of a neighbourhood). Each kind of round
//! is in a module of its own.

mod callers;
mod constants;
pub(super) mod inlining;
mod likeness;
mod neighbours;
mod records;
mod siblings;
pub(super) mod twins;

use std::collections::{BTreeMap, BTreeSet};

use crate::core::diff::measure::{kinship, within_size_window};
use crate::core::diff::{
    CHECK_EVERY, Changes, Comparison, Fingerprint, LIKENESS_MARGIN, MAX_TABLE_SLOTS, MIN_LIKENESS,
    MIN_LIKENESS_INSTRUCTIONS, Pair, Signal, Status, similarity,
};

use twins::{TwinMemory, best_assignment};

pub(super) struct Matcher<'a> {
    baseline: &'a [Fingerprint],
    candidate: &'a [Fingerprint],
    baseline_callers: Vec<Vec<u32>>,
    candidate_callers: Vec<Vec<u32>>,
    /// The tables of procedure pointers of each side ([`tables_of`]).
    baseline_tables: BTreeMap<u32, Vec<Option<u32>>>,
    candidate_tables: BTreeMap<u32, Vec<Option<u32>>>,
    /// The baseline procedures whose code names each baseline table.
    table_referrers: BTreeMap<u32, Vec<u32>>,
    /// Baseline index to candidate index.
    forward: Vec<Option<u32>>,
    backward: Vec<Option<u32>>,
    signals: Vec<Option<Signal>>,
    /// The likeness round's best and runner-up of each baseline procedure, when computed.
    row_best: Vec<Option<Best>>,
    /// The same for each candidate procedure.
    column_best: Vec<Option<Best>>,
    /// Whether the likeness round keeps its bests between rounds (off only in the test that
    /// checks that keeping them changes nothing).
    pub(super) remember: bool,
    /// Whether the mutual best of a neighbourhood settles a near tie by the assignment
    /// ([`best_assignment`]); otherwise it leaves it to the rounds that tell the instances of
    /// one template apart (tables, twins, callers), and settles it only when they pair
    /// nothing more.
    settle_near_ties: bool,
    /// Whether the round of inlined callees ([`Matcher::inlined_round`]) has run.
    inlined_tried: bool,
    /// The pairs that share a constant no other procedure holds, once the round of telling
    /// constants has found them ([`Matcher::constants_round`]).
    constant_links: Option<Vec<(u32, u32)>>,
    /// Whether the round of small procedures ([`Matcher::small_likeness_round`]) has run.
    small_tried: bool,
    /// The unpaired neighbours of a pair (baseline, candidate, and whether near ties were
    /// settled) among which the call-graph round paired nothing: it would pair nothing again.
    quiet_neighbours: BTreeSet<(Vec<u32>, Vec<u32>, bool)>,
    /// What the last twins round found, kept as `row_best` is.
    twins: TwinMemory,
    /// The pairs in force, in the order made (the call-graph round walks their neighbours).
    queue: Vec<(u32, u32)>,
    /// How many pairs were ever made (a pair undone still counts: the rounds go on).
    made: usize,
    stop: &'a mut dyn FnMut() -> bool,
    work: usize,
    stopped: bool,
}

impl<'a> Matcher<'a> {
    pub(super) fn new(
        baseline: &'a [Fingerprint],
        candidate: &'a [Fingerprint],
        stop: &'a mut dyn FnMut() -> bool,
    ) -> Matcher<'a> {
        Matcher {
            baseline,
            candidate,
            baseline_callers: callers_of(baseline),
            candidate_callers: callers_of(candidate),
            baseline_tables: tables_of(baseline),
            candidate_tables: tables_of(candidate),
            table_referrers: referrers_of(baseline),
            forward: vec![None; baseline.len()],
            backward: vec![None; candidate.len()],
            signals: vec![None; baseline.len()],
            row_best: vec![None; baseline.len()],
            column_best: vec![None; candidate.len()],
            remember: true,
            settle_near_ties: false,
            inlined_tried: false,
            small_tried: false,
            constant_links: None,
            quiet_neighbours: BTreeSet::new(),
            twins: TwinMemory::default(),
            queue: Vec::new(),
            made: 0,
            stop,
            work: 0,
            stopped: false,
        }
    }

    /// Whether to stop: asks the signal every [`CHECK_EVERY`] units (and with `now`).
    fn should_stop(&mut self, units: usize, now: bool) -> bool {
        if self.stopped {
            return true;
        }
        let before = self.work / CHECK_EVERY;
        self.work = self.work.saturating_add(units);
        if (now || self.work / CHECK_EVERY != before) && (self.stop)() {
            self.stopped = true;
        }
        self.stopped
    }

    fn pair(&mut self, b: u32, c: u32, signal: Signal) {
        let (bi, ci) = (b as usize, c as usize);
        if self.forward[bi].is_some() || self.backward[ci].is_some() {
            return;
        }
        if signal.follows_call_order() && self.against_call_order(b, c) {
            return;
        }
        if signal.is_fuzzy() && (self.rather_its_caller(b, c) || self.rather_a_sibling(b, c)) {
            return;
        }
        self.forward[bi] = Some(c);
        self.backward[ci] = Some(b);
        self.signals[bi] = Some(signal);
        self.queue.push((b, c));
        self.made += 1;
    }

    pub(super) fn run(&mut self) {
        loop {
            if self.should_stop(1, true) {
                return;
            }
            let before = self.made;
            self.unique_round(Signal::SymbolName, |p| {
                p.name.as_ref().map(|name| Key::Name(name.clone()))
            });
            self.unique_round(Signal::ExactBytes, |p| Some(Key::Hash(p.bytes, p.size)));
            self.unique_round(Signal::InstructionHash, |p| Some(Key::Hash(p.shape, 0)));
            self.unique_round(Signal::Anchors, |p| {
                let anchors = p.imports.len() + p.strings.len();
                (anchors >= 2 || !p.strings.is_empty())
                    .then(|| Key::Anchors(p.imports.clone(), p.strings.clone()))
            });
            self.record_round();
            self.table_round();
            self.call_graph_round();
            if self.made == before {
                self.likeness_round();
            }
            if self.made == before {
                self.order_round();
            }
            if self.made == before {
                self.twins_round();
            }
            if self.made == before {
                self.same_callers_round();
            }
            if self.made == before {
                // Last, the near ties the rounds above left.
                self.settle_near_ties = true;
                self.call_graph_round();
                if self.made == before {
                    self.order_round();
                }
                self.settle_near_ties = false;
            }
            if self.made == before && !self.inlined_tried {
                // Once: it compares more than the likeness round and keeps nothing.
                self.inlined_tried = true;
                self.inlined_round();
            }
            if self.made == before {
                self.constants_round();
            }
            if self.made == before && !self.small_tried {
                // Once, last: what is left of the small procedures after every place.
                self.small_tried = true;
                self.small_likeness_round();
            }
            if self.made == before || self.stopped {
                return;
            }
        }
    }

    /// Pairs the unpaired procedures whose key is unique on each side.
    fn unique_round(&mut self, signal: Signal, key: impl Fn(&Fingerprint) -> Option<Key>) {
        let mut groups: BTreeMap<Key, (Vec<u32>, Vec<u32>)> = BTreeMap::new();
        for (index, procedure) in self.baseline.iter().enumerate() {
            if self.forward[index].is_none()
                && let Some(key) = key(procedure)
            {
                groups.entry(key).or_default().0.push(index as u32);
            }
        }
        for (index, procedure) in self.candidate.iter().enumerate() {
            if self.backward[index].is_none()
                && let Some(key) = key(procedure)
            {
                groups.entry(key).or_default().1.push(index as u32);
            }
        }
        if self.should_stop(self.baseline.len() + self.candidate.len(), false) {
            return;
        }
        let mut made: Vec<(u32, u32)> = groups
            .into_values()
            .filter_map(|(b, c)| (b.len() == 1 && c.len() == 1).then(|| (b[0], c[0])))
            .collect();
        made.sort_unstable();
        for (b, c) in made {
            self.pair(b, c, signal);
        }
    }

    /// Undoes the pairs that hold baseline `b` or candidate `c`.
    fn unpair(&mut self, b: u32, c: u32) {
        let old = (self.backward[c as usize], self.forward[b as usize]);
        for (x, y) in [old.0.map(|x| (x, c)), old.1.map(|y| (b, y))]
            .into_iter()
            .flatten()
        {
            self.forward[x as usize] = None;
            self.backward[y as usize] = None;
            self.signals[x as usize] = None;
            self.queue.retain(|&(left, _)| left != x);
            self.forget_bests_near(x, y);
        }
    }

    /// Forgets the bests the likeness round kept that baseline `b` and candidate `c`, set
    /// free, could change (the round assumes that procedures are only ever paired away), and
    /// their own, so that the round finds what it would find anew. The twins round's links
    /// need nothing: it compares again the procedures whose best changed, and these two.
    fn forget_bests_near(&mut self, b: u32, c: u32) {
        let (old, new) = (&self.baseline[b as usize], &self.candidate[c as usize]);
        self.row_best[b as usize] = None;
        self.column_best[c as usize] = None;
        forget_where_changed(&mut self.row_best, self.baseline, new);
        forget_where_changed(&mut self.column_best, self.candidate, old);
    }

    /// Pairs each procedure of `b` with the one of `c` it is most similar to, when that is
    /// the unique best both ways and at least `least` (of the two) alike; a near tie (another
    /// within [`LIKENESS_MARGIN`] of that best, either way) waits, or, when the matcher
    /// settles near ties, goes to the assignment of the greatest total likeness
    /// ([`best_assignment`]), which may give the column to another row within the margin of
    /// its best both ways.
    fn mutual_best(
        &mut self,
        b: &[u32],
        c: &[u32],
        least: fn(&Fingerprint, &Fingerprint) -> f64,
        signal: Signal,
    ) {
        if b.is_empty() || c.is_empty() || self.should_stop(b.len() * c.len(), false) {
            return;
        }
        let scores: Vec<Vec<f64>> = b
            .iter()
            .map(|&i| {
                c.iter()
                    .map(|&j| kinship(&self.baseline[i as usize], &self.candidate[j as usize]))
                    .collect()
            })
            .collect();
        let best_of = |row: &[f64]| -> Option<usize> {
            let mut best: Option<usize> = None;
            for (index, &score) in row.iter().enumerate() {
                if best.is_none_or(|at| score > row[at]) {
                    best = Some(index);
                }
            }
            best
        };
        let mut assignment: Option<Vec<Option<usize>>> = None;
        for (row_index, row) in scores.iter().enumerate() {
            let Some(column) = best_of(row) else { continue };
            let score = row[column];
            // Unique best in its row, and the row is the column's unique best.
            let ties = row.iter().filter(|&&s| s == score).count();
            let column_ties = scores.iter().filter(|r| r[column] >= score).count();
            if ties != 1 || column_ties != 1 {
                continue;
            }
            // Two instances of one template rewritten alike are a hair from each other's old
            // selves: the best alone pairs them crosswise, the total of the two does not.
            let runner_up = |cells: &mut dyn Iterator<Item = f64>| {
                cells.filter(|&s| s < score).fold(0.0, f64::max)
            };
            let near_tie = score - runner_up(&mut row.iter().copied()) < LIKENESS_MARGIN
                || score - runner_up(&mut scores.iter().map(|r| r[column])) < LIKENESS_MARGIN;
            if near_tie && !self.settle_near_ties {
                continue;
            }
            let row_index = if near_tie {
                if assignment.is_none() {
                    if self.should_stop(b.len() * b.len().min(c.len()) * c.len(), false) {
                        return;
                    }
                    assignment = Some(best_assignment(&scores));
                }
                let assigned = assignment.as_deref().unwrap_or_default();
                let Some(holder) = assigned.iter().position(|&at| at == Some(column)) else {
                    continue;
                };
                let held = scores[holder][column];
                let holder_best = scores[holder].iter().copied().fold(0.0, f64::max);
                if score - held >= LIKENESS_MARGIN || holder_best - held >= LIKENESS_MARGIN {
                    continue;
                }
                holder
            } else {
                row_index
            };
            let (x, y) = (b[row_index] as usize, c[column] as usize);
            if scores[row_index][column] >= least(&self.baseline[x], &self.candidate[y]) {
                self.pair(b[row_index], c[column], signal);
            }
        }
    }

    pub(super) fn finish(self) -> Comparison {
        let mut pairs = Vec::new();
        for (bi, partner) in self.forward.iter().enumerate() {
            let (Some(ci), Some(signal)) = (*partner, self.signals[bi]) else {
                continue;
            };
            let a = &self.baseline[bi];
            let b = &self.candidate[ci as usize];
            // Callees through the pairs; an unpaired callee by its instructions.
            let mapped = self.callee_keys(&a.callees, true);
            let theirs = self.callee_keys(&b.callees, false);
            let same_bytes = a.bytes == b.bytes && a.size == b.size;
            let changes = if same_bytes && mapped == theirs {
                Changes::default()
            } else {
                // The same instructions in another size differ by padding alone (the nops
                // that align a loop, as many as the procedure's address needs).
                let instructions = a.shape != b.shape;
                Changes {
                    size: a.size != b.size && instructions,
                    instructions,
                    callees: mapped != theirs || a.imports != b.imports,
                    strings: a.strings != b.strings,
                    constants: a.constants != b.constants,
                }
            };
            let (status, similarity) = if changes.any() {
                // A changed pair is never fully similar, even when only a callee differs.
                (Status::Changed, similarity(a, b).min(0.99))
            } else {
                (Status::Identical, 1.0)
            };
            pairs.push(Pair {
                baseline: bi as u32,
                candidate: ci,
                signal,
                status,
                similarity,
                changes,
            });
        }
        let only = |partners: &[Option<u32>]| -> Vec<u32> {
            partners
                .iter()
                .enumerate()
                .filter_map(|(index, partner)| partner.is_none().then_some(index as u32))
                .collect()
        };
        Comparison {
            pairs,
            only_in_baseline: only(&self.forward),
            only_in_candidate: only(&self.backward),
            stopped: self.stopped,
        }
    }
}

/// The tables of procedure pointers of one side: each a list of slots holding a procedure's
/// index or nothing (a slot no procedure names).
fn tables_of(side: &[Fingerprint]) -> BTreeMap<u32, Vec<Option<u32>>> {
    let mut tables: BTreeMap<u32, Vec<Option<u32>>> = BTreeMap::new();
    for (procedure, fingerprint) in side.iter().enumerate() {
        for slot in fingerprint
            .slots
            .iter()
            .filter(|s| s.index < MAX_TABLE_SLOTS)
        {
            let table = tables.entry(slot.table).or_default();
            let index = slot.index as usize;
            if table.len() <= index {
                table.resize(index + 1, None);
            }
            table[index] = Some(procedure as u32);
        }
    }
    tables
}

/// Forgets each kept best (of `side`'s procedures) that `freed`, a procedure of the other
/// side set free, would enter as best or runner-up, ties included (the likeness round offers
/// in an order, and a tie goes to the first offered).
fn forget_where_changed(bests: &mut [Option<Best>], side: &[Fingerprint], freed: &Fingerprint) {
    if freed.tokens.len() < MIN_LIKENESS_INSTRUCTIONS {
        return;
    }
    for (best, procedure) in bests.iter_mut().zip(side) {
        if let Some(kept) = best
            && within_size_window(freed, procedure)
            && (kept.runner_up_at.is_none() || kinship(procedure, freed) >= kept.runner_up)
        {
            *best = None;
        }
    }
}

/// The pairs among `callers`, each named by its baseline index (`pair_of` gives it, or
/// nothing for an unpaired caller): sorted, distinct.
fn paired_callers(callers: &[u32], pair_of: impl Fn(u32) -> Option<u32>) -> Vec<u32> {
    let mut pairs: Vec<u32> = callers
        .iter()
        .filter_map(|&caller| pair_of(caller))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
}

/// The longest subsequence of `points` (increasing in their first member, distinct in the
/// second) whose second members increase too; of several, the one patience sorting finds.
pub(super) fn longest_increasing(points: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // `ends[k]`: the index of the point that ends the lowest run of length k + 1 found.
    let mut ends: Vec<usize> = Vec::new();
    let mut before: Vec<Option<usize>> = Vec::with_capacity(points.len());
    for (index, &(_, second)) in points.iter().enumerate() {
        let length = ends.partition_point(|&end| points[end].1 < second);
        before.push(length.checked_sub(1).map(|previous| ends[previous]));
        if length == ends.len() {
            ends.push(index);
        } else {
            ends[length] = index;
        }
    }
    let mut run = Vec::with_capacity(ends.len());
    let mut at = ends.last().copied();
    while let Some(index) = at {
        run.push(points[index]);
        at = before[index];
    }
    run.reverse();
    run
}

/// The procedures of one side whose code names each table.
fn referrers_of(side: &[Fingerprint]) -> BTreeMap<u32, Vec<u32>> {
    let mut referrers: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (procedure, fingerprint) in side.iter().enumerate() {
        for &table in &fingerprint.tables {
            referrers.entry(table).or_default().push(procedure as u32);
        }
    }
    referrers
}

/// Callers of each procedure of one side: sorted, distinct.
fn callers_of(side: &[Fingerprint]) -> Vec<Vec<u32>> {
    let mut callers = vec![Vec::new(); side.len()];
    for (index, procedure) in side.iter().enumerate() {
        for &callee in &procedure.callees {
            if let Some(list) = callers.get_mut(callee as usize) {
                list.push(index as u32);
            }
        }
    }
    for list in &mut callers {
        list.sort_unstable();
        list.dedup();
    }
    callers
}

/// The present partner of a procedure of a fuzzy pair, as the callers round sees it: its
/// paired callers (its key in that round) and whether anything calls it at all.
#[derive(Clone, Copy)]
struct Partner<'a> {
    key: &'a Option<Vec<u32>>,
    called: bool,
}

/// The best and second-best similarity one procedure has met (in the likeness round, or in
/// a group of the callers round), and with which procedures of the other side.
#[derive(Clone, Copy, Default)]
struct Best {
    score: f64,
    at: Option<u32>,
    runner_up: f64,
    runner_up_at: Option<u32>,
}

impl Best {
    fn offer(&mut self, score: f64, at: u32) {
        if self.at.is_none() || score > self.score {
            if self.at.is_some() {
                (self.runner_up, self.runner_up_at) = (self.score, self.at);
            }
            (self.score, self.at) = (score, Some(at));
        } else if self.runner_up_at.is_none() || score > self.runner_up {
            (self.runner_up, self.runner_up_at) = (score, Some(at));
        }
    }

    /// Whether this is still the best and runner-up among the other side's unpaired
    /// procedures: neither has been paired since (`partners` of the other side).
    fn holds(&self, partners: &[Option<u32>]) -> bool {
        let unpaired = |at: Option<u32>| at.is_none_or(|index| partners[index as usize].is_none());
        unpaired(self.at) && unpaired(self.runner_up_at)
    }

    /// Whether this best of `row` and `column`'s best are each other, both decisive at
    /// [`MIN_LIKENESS`] (the likeness rounds' pair).
    fn mutual(&self, row: u32, column: &Best) -> bool {
        self.decisive(MIN_LIKENESS) && column.at == Some(row) && column.decisive(MIN_LIKENESS)
    }

    /// At least `least` alike, and by [`LIKENESS_MARGIN`] more than to anything else.
    fn decisive(&self, least: f64) -> bool {
        let runner_up = if self.runner_up_at.is_some() {
            self.runner_up
        } else {
            0.0
        };
        self.score >= least && self.score - runner_up >= LIKENESS_MARGIN
    }
}

/// What a unique round groups by.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Name(String),
    Hash(u64, u64),
    Anchors(Vec<String>, Vec<u64>),
}
