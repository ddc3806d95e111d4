//! The rounds that pair from pairs already made: the slots of pointer tables, and the callees
//! and callers of a pair (by call slot, by anchors, by mutual best likeness).

use std::collections::BTreeMap;

use crate::core::diff::measure::{is_large, kinship, neighbour_least, within_size_window};
use crate::core::diff::{
    MAX_NEIGHBOURS, MIN_LIKENESS_INSTRUCTIONS, MIN_PLACES_APART, MIN_SLOT_SIMILARITY,
    MIN_SOLE_NEIGHBOUR_SIMILARITY, Signal,
};

use super::{Matcher, longest_increasing};

impl Matcher<'_> {
    /// Pairs the unpaired procedures in the same slot of two tables of procedure pointers
    /// that the pairs made so far align (see the module documentation).
    pub(super) fn table_round(&mut self) {
        let sizes = (self.baseline_tables.len(), self.candidate_tables.len());
        if sizes.0 == 0 || sizes.1 == 0 || self.should_stop(sizes.0 + sizes.1, false) {
            return;
        }
        let (baseline, candidate) = (&self.baseline_tables, &self.candidate_tables);
        // Each baseline table's counterpart: the candidate table of its length whose slots
        // hold the partners of most of its paired procedures, at least three times as many as
        // hold something else paired (an earlier round can be wrong), and the only such.
        let mut chosen: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut counterpart: Vec<(u32, u32)> = Vec::new();
        for (&table, slots) in baseline {
            let open = |procedure: &Option<u32>| {
                procedure.is_some_and(|p| self.forward[p as usize].is_none())
            };
            if !slots.iter().any(open) {
                continue;
            }
            let mut votes: BTreeMap<u32, usize> = BTreeMap::new();
            for (index, procedure) in slots.iter().enumerate() {
                let Some(partner) = procedure.and_then(|p| self.forward[p as usize]) else {
                    continue;
                };
                for slot in &self.candidate[partner as usize].slots {
                    if slot.index as usize == index
                        && candidate.get(&slot.table).map(Vec::len) == Some(slots.len())
                    {
                        *votes.entry(slot.table).or_default() += 1;
                    }
                }
            }
            // The code that names both tables, paired, vouches for them as one slot would.
            for &referrer in self.table_referrers.get(&table).into_iter().flatten() {
                let Some(partner) = self.forward[referrer as usize] else {
                    continue;
                };
                for other in &self.candidate[partner as usize].tables {
                    if candidate.get(other).map(Vec::len) == Some(slots.len()) {
                        *votes.entry(*other).or_default() += 1;
                    }
                }
            }
            let mut best: Option<(usize, u32)> = None;
            let mut tied = false;
            for (other, agree) in votes {
                let against = self.slots_against(slots, &candidate[&other]);
                if agree < 3 * against {
                    continue;
                }
                match best {
                    Some((most, _)) if agree < most => {}
                    Some((most, _)) if agree == most => tied = true,
                    _ => (best, tied) = (Some((agree, other)), false),
                }
            }
            if let (Some((_, other)), false) = (best, tied) {
                chosen.entry(other).or_default().push(table);
                counterpart.push((table, other));
            }
        }
        let mut facing: Vec<(u32, u32)> = Vec::new();
        for (table, other) in counterpart {
            if chosen[&other].len() != 1 {
                continue;
            }
            for (left, right) in baseline[&table].iter().zip(&candidate[&other]) {
                if let (Some(b), Some(c)) = (*left, *right) {
                    facing.push((b, c));
                }
            }
        }
        for (b, c) in facing {
            if self.forward[b as usize].is_none()
                && self.backward[c as usize].is_none()
                && kinship(&self.baseline[b as usize], &self.candidate[c as usize])
                    >= MIN_SLOT_SIMILARITY
            {
                self.pair(b, c, Signal::PointerTable);
            }
        }
    }

    /// How many slots of two tables of one length hold a paired procedure facing another
    /// paired procedure than its partner.
    pub(super) fn slots_against(
        &self,
        baseline: &[Option<u32>],
        candidate: &[Option<u32>],
    ) -> usize {
        baseline
            .iter()
            .zip(candidate)
            .filter(|(left, right)| {
                let partner = left.and_then(|b| self.forward[b as usize]);
                let taken = right.filter(|&c| self.backward[c as usize].is_some());
                matches!((partner, taken), (Some(partner), Some(c)) if partner != c)
            })
            .count()
    }

    /// Pairs the unpaired neighbours of the pairs made so far (see the module documentation).
    pub(super) fn call_graph_round(&mut self) {
        let mut next = 0;
        while next < self.queue.len() {
            let (b, c) = self.queue[next];
            next += 1;
            let (bi, ci) = (b as usize, c as usize);
            let callees = (
                self.baseline[bi].callees.clone(),
                self.candidate[ci].callees.clone(),
            );
            self.neighbours(&callees.0, &callees.1);
            self.call_slots(&callees.0, &callees.1);
            let callers = (
                self.baseline_callers[bi].clone(),
                self.candidate_callers[ci].clone(),
            );
            self.neighbours(&callers.0, &callers.1);
            if self.stopped {
                return;
            }
        }
    }

    /// Pairs the one unpaired callee on each side between two callees of a pair called in
    /// the same order on both sides (of the longest run of them), or before the first or
    /// after the last of them (bounded on one side only, there the two must also be of half
    /// to twice the other's size: a new function called last may have taken the old one in),
    /// when both have at least
    /// [`MIN_LIKENESS_INSTRUCTIONS`] and are at least [`MIN_SOLE_NEIGHBOUR_SIMILARITY`]
    /// alike: the function called in that place, rewritten (its callees inlined otherwise,
    /// its call now a constant).
    pub(super) fn call_slots(&mut self, baseline: &[u32], candidate: &[u32]) {
        let unpaired_b = |b: &u32| self.forward[*b as usize].is_none();
        let unpaired_c = |c: &u32| self.backward[*c as usize].is_none();
        if !baseline.iter().any(unpaired_b) || !candidate.iter().any(unpaired_c) {
            return;
        }
        let anchors = self.call_anchors(baseline, candidate, None);
        if anchors.is_empty() {
            return; // No place without a pair called in it.
        }
        // The start and the end of the calls bound the first and the last slot (each bound
        // is one past its anchor: 0 is the start, one past the last call the end).
        let bounds: Vec<(usize, usize)> = std::iter::once((0, 0))
            .chain(anchors.iter().map(|&(b, c)| (b + 1, c + 1)))
            .chain(std::iter::once((baseline.len() + 1, candidate.len() + 1)))
            .collect();
        let mut slots = Vec::new();
        let last = bounds.len() - 2;
        for (at, bounds) in bounds.windows(2).enumerate() {
            let (before, after) = (bounds[0], bounds[1]);
            let mut b = baseline[before.0..after.0 - 1]
                .iter()
                .filter(|b| unpaired_b(b));
            let mut c = candidate[before.1..after.1 - 1]
                .iter()
                .filter(|c| unpaired_c(c));
            if let (Some(&x), None, Some(&y), None) = (b.next(), b.next(), c.next(), c.next()) {
                slots.push((x, y, at == 0 || at == last));
            }
        }
        if self.should_stop(baseline.len() + candidate.len(), false) {
            return;
        }
        for (x, y, at_an_end) in slots {
            let (old, new) = (&self.baseline[x as usize], &self.candidate[y as usize]);
            if old.tokens.len().min(new.tokens.len()) >= MIN_LIKENESS_INSTRUCTIONS
                && kinship(old, new) >= MIN_SOLE_NEIGHBOUR_SIMILARITY
                && (!at_an_end || within_size_window(old, new))
            {
                self.pair(x, y, Signal::CallGraph);
            }
        }
    }

    /// The places (in `baseline` and `candidate`, two callee lists in call order) of the
    /// longest run of pairs called in the same order on both sides, leaving out the pairs
    /// of the procedures of `besides` (baseline, candidate).
    pub(super) fn call_anchors(
        &self,
        baseline: &[u32],
        candidate: &[u32],
        besides: Option<(u32, u32)>,
    ) -> Vec<(usize, usize)> {
        let place: BTreeMap<u32, usize> = (candidate.iter().enumerate())
            .map(|(at, &callee)| (callee, at))
            .collect();
        let points: Vec<(usize, usize)> = (baseline.iter().enumerate())
            .filter_map(|(at, &callee)| {
                let partner = self.forward.get(callee as usize).copied().flatten()?;
                if besides.is_some_and(|(b, c)| b == callee || c == partner) {
                    return None;
                }
                Some((at, *place.get(&partner)?))
            })
            .collect();
        longest_increasing(&points)
    }

    /// Whether the pairs that call both `b` and `c` all call them in different places: of
    /// the longest run of their other callees called in the same order on both sides, at
    /// least [`MIN_PLACES_APART`] lie before one and not before the other (a function
    /// removed from one place and another added in another, however alike).
    pub(super) fn against_call_order(&self, b: u32, c: u32) -> bool {
        let mut apart = self.places_apart(b, c);
        let first = apart.next();
        first.is_some_and(|places| places >= MIN_PLACES_APART)
            && apart.all(|places| places >= MIN_PLACES_APART)
    }

    /// Whether some pair calls both `b` and `c`, and every such pair calls them in the same
    /// slot: between the same two of its other callees called in the same order on both
    /// sides. What one call site alone vouches for must be in its very place.
    pub(super) fn in_same_call_slot(&self, b: u32, c: u32) -> bool {
        let mut apart = self.places_apart(b, c);
        apart.next() == Some(0) && apart.all(|places| places == 0)
    }

    /// For each pair that calls both `b` and `c`: of the longest run of its other callees
    /// called in the same order on both sides, how many lie before one and not before the
    /// other.
    fn places_apart(&self, b: u32, c: u32) -> impl Iterator<Item = usize> + '_ {
        let candidate_callers = &self.candidate_callers[c as usize];
        self.baseline_callers[b as usize]
            .iter()
            .filter_map(move |&caller| {
                let partner = self.forward[caller as usize]?;
                candidate_callers.binary_search(&partner).ok()?;
                let (old, new) = (
                    &self.baseline[caller as usize].callees,
                    &self.candidate[partner as usize].callees,
                );
                let at_b = old.iter().position(|&callee| callee == b)?;
                let at_c = new.iter().position(|&callee| callee == c)?;
                let anchors = self.call_anchors(old, new, Some((b, c)));
                Some(
                    anchors
                        .partition_point(|anchor| anchor.0 < at_b)
                        .abs_diff(anchors.partition_point(|anchor| anchor.1 < at_c)),
                )
            })
    }

    pub(super) fn neighbours(&mut self, baseline: &[u32], candidate: &[u32]) {
        let b: Vec<u32> = baseline
            .iter()
            .copied()
            .filter(|&i| self.forward[i as usize].is_none())
            .collect();
        let c: Vec<u32> = candidate
            .iter()
            .copied()
            .filter(|&i| self.backward[i as usize].is_none())
            .collect();
        if b.is_empty() || c.is_empty() {
            return;
        }
        // What pairs among them depends on nothing else: the same unpaired neighbours that
        // paired nothing before pair nothing again.
        let quiet = (b, c, self.settle_near_ties);
        if self.quiet_neighbours.contains(&quiet) {
            return;
        }
        let (b, c, _) = &quiet;
        let made = self.made;
        self.pair_neighbours(b, c);
        if self.made == made && !self.stopped {
            self.quiet_neighbours.insert(quiet);
        }
    }

    /// [`Self::neighbours`] among `b` and `c`, unpaired and not empty.
    pub(super) fn pair_neighbours(&mut self, b: &[u32], c: &[u32]) {
        // Unique instruction hashes among the neighbours.
        let mut groups: BTreeMap<u64, (Vec<u32>, Vec<u32>)> = BTreeMap::new();
        for &i in b {
            groups
                .entry(self.baseline[i as usize].shape)
                .or_default()
                .0
                .push(i);
        }
        for &i in c {
            groups
                .entry(self.candidate[i as usize].shape)
                .or_default()
                .1
                .push(i);
        }
        for (bs, cs) in groups.into_values() {
            if bs.len() == 1 && cs.len() == 1 {
                self.pair(bs[0], cs[0], Signal::CallGraph);
            }
        }
        // Mutual best similarity among the rest.
        let unpaired = |matcher: &Self, b: &[u32], c: &[u32]| -> (Vec<u32>, Vec<u32>) {
            (
                b.iter()
                    .copied()
                    .filter(|&i| matcher.forward[i as usize].is_none())
                    .collect(),
                c.iter()
                    .copied()
                    .filter(|&i| matcher.backward[i as usize].is_none())
                    .collect(),
            )
        };
        let (b, c) = unpaired(self, b, c);
        let first = |side: &[u32]| side[..side.len().min(MAX_NEIGHBOURS)].to_vec();
        self.mutual_best(&first(&b), &first(&c), neighbour_least, Signal::CallGraph);
        // The one unpaired neighbour left on each side, when both are large.
        let (b, c) = unpaired(self, &b, &c);
        if let (&[x], &[y]) = (b.as_slice(), c.as_slice()) {
            let (old, new) = (&self.baseline[x as usize], &self.candidate[y as usize]);
            if is_large(old) && is_large(new) && kinship(old, new) >= MIN_SOLE_NEIGHBOUR_SIMILARITY
            {
                self.pair(x, y, Signal::CallGraph);
            }
        }
    }

    /// What `callees` of one side are, comparable across the sides: the candidate index of a
    /// paired callee, the instruction hash of an unpaired one; sorted.
    pub(super) fn callee_keys(&self, callees: &[u32], baseline: bool) -> Vec<(bool, u64)> {
        let mut keys: Vec<(bool, u64)> = callees
            .iter()
            .map(|&callee| {
                let index = callee as usize;
                let (partner, side) = if baseline {
                    (self.forward.get(index).copied().flatten(), self.baseline)
                } else {
                    (
                        self.backward.get(index).copied().flatten().map(|_| callee),
                        self.candidate,
                    )
                };
                match partner {
                    Some(candidate) => (true, u64::from(candidate)),
                    None => (false, side.get(index).map_or(0, |p| p.shape)),
                }
            })
            .collect();
        keys.sort_unstable();
        keys
    }
}
