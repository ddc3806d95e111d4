//! The round of procedures called by the same pairs.

use std::collections::BTreeMap;

use crate::core::diff::measure::{kinship, within_size_window};
use crate::core::diff::{
    Fingerprint, MAX_NEIGHBOURS, MIN_LIKENESS_INSTRUCTIONS, MIN_SAME_CALLERS,
    MIN_SOLE_NEIGHBOUR_SIMILARITY, Signal,
};

use super::{Best, Matcher, Partner, paired_callers};

impl Matcher<'_> {
    /// Pairs the procedures that the same pairs call, at least [`MIN_SAME_CALLERS`] of them,
    /// when each is the only one so called on its side among the unpaired procedures and
    /// those a fuzzy round paired against their place; and, among the unpaired procedures
    /// one same pair calls, the decisively most alike (see the module documentation).
    pub(super) fn same_callers_round(&mut self) {
        // Only the unpaired procedures and those of fuzzy pairs can take part: the others'
        // callers are not looked at (two copies of a program pair entirely by bytes).
        let open_b = |b: usize| self.signals[b].is_none_or(Signal::is_fuzzy);
        let baseline_keys: Vec<Option<Vec<u32>>> = (self.baseline_callers.iter().enumerate())
            .map(|(b, callers)| {
                open_b(b).then(|| {
                    paired_callers(callers, |caller| {
                        self.forward[caller as usize].map(|_| caller)
                    })
                })
            })
            .collect();
        let candidate_keys: Vec<Option<Vec<u32>>> = (self.candidate_callers.iter().enumerate())
            .map(|(c, callers)| {
                self.backward[c]
                    .is_none_or(|b| open_b(b as usize))
                    .then(|| paired_callers(callers, |caller| self.backward[caller as usize]))
            })
            .collect();
        if self.should_stop(self.baseline.len() + self.candidate.len(), false) {
            return;
        }
        // An unpaired procedure takes part with enough callers, or with one when it is not
        // tiny. A pair a fuzzy round made is against its place when at least two paired
        // callers of one of its procedures do not call the other (sharing a caller that
        // calls everything, a `main`, is no place): then the place may name another
        // partner. A partner that nothing calls has no place to be against (every caller
        // inlined it, or it is called through pointers), unless it has a name (an exported
        // procedure that nothing inside calls is an entry point, its place is outside), or
        // the procedure has an unpaired caller too: that caller may be the partner's other
        // version, which calls the procedure where the partner took it in (a function kept
        // for some callers and inlined into one, which every caller then inlined).
        let open = |key: &[u32],
                    partner: Option<Partner>,
                    procedure: &Fingerprint,
                    called_unpaired: bool| match partner {
            None => {
                key.len() >= MIN_SAME_CALLERS
                    || (!key.is_empty() && procedure.tokens.len() >= MIN_LIKENESS_INSTRUCTIONS)
            }
            Some(Partner { key: other, called }) => {
                let other = other.as_deref().unwrap_or_default();
                // Its own callers, at least two, that do not call its partner: the partner
                // lacks a place it has.
                let not_the_partners = key
                    .iter()
                    .filter(|pair| other.binary_search(pair).is_err())
                    .count();
                (called || called_unpaired) && not_the_partners >= MIN_SAME_CALLERS
            }
        };
        let baseline = Side {
            keys: &baseline_keys,
            partners: &self.forward,
            callers: &self.baseline_callers,
            procedures: self.baseline,
        };
        let candidate = Side {
            keys: &candidate_keys,
            partners: &self.backward,
            callers: &self.candidate_callers,
            procedures: self.candidate,
        };
        // Each group: its baseline members, then its candidate members.
        let mut groups: BTreeMap<&[u32], [Vec<u32>; 2]> = BTreeMap::new();
        for (at, (this, other)) in [(&baseline, &candidate), (&candidate, &baseline)]
            .into_iter()
            .enumerate()
        {
            for (index, key) in this.keys.iter().enumerate() {
                let Some(key) = key else { continue };
                let partner = this.partners[index].map(|partner| Partner {
                    key: &other.keys[partner as usize],
                    called: has_a_place(
                        &other.callers[partner as usize],
                        &other.procedures[partner as usize],
                    ),
                });
                let called_unpaired = (this.callers[index].iter())
                    .any(|&caller| this.partners[caller as usize].is_none());
                if open(key, partner, &this.procedures[index], called_unpaired) {
                    groups.entry(key).or_default()[at].push(index as u32);
                }
            }
        }
        let mut places = Vec::new();
        for (key, [b, c]) in groups {
            if self.should_stop(b.len() * c.len(), false) {
                return;
            }
            places.extend(self.place_partners(&b, &c, key.len()));
        }
        for (x, y) in places {
            // Undoing a pair looks at every kept best once.
            let undoes = self.forward[x as usize].is_some() || self.backward[y as usize].is_some();
            let units = if undoes {
                self.baseline.len() + self.candidate.len()
            } else {
                1
            };
            if self.should_stop(units, false) {
                return;
            }
            // A caller that holds the one's code is the other's rather (checked before the
            // pair a fuzzy round made is undone, else the next round makes it again).
            if self.against_call_order(x, y) || self.rather_its_caller(x, y) {
                continue;
            }
            self.unpair(x, y);
            self.pair(x, y, Signal::SameCallers);
        }
    }

    /// Who pairs with whom among procedures called by the same `callers` pairs: the only one
    /// on each side, when at least [`MIN_SAME_CALLERS`] vouch for them (unless they conflict:
    /// [`kinship`] 0); else, for one that a fuzzy round paired against its place, the only
    /// one on the other side that calls its old partner (a function whose body moved into a
    /// new callee keeps its callers); else mutual bests by [`LIKENESS_MARGIN`], at least
    /// [`MIN_SOLE_NEIGHBOUR_SIMILARITY`] alike (and, from one caller, half to twice the
    /// other's size, when one side has only one).
    ///
    /// [`LIKENESS_MARGIN`]: crate::core::diff::LIKENESS_MARGIN
    pub(super) fn place_partners(&self, b: &[u32], c: &[u32], callers: usize) -> Vec<(u32, u32)> {
        let place_alone = callers >= MIN_SAME_CALLERS;
        // One call site vouches less than several: there, only procedures of comparable
        // size are alike (a new function inlining the old one is not its rewrite).
        let alike = |x: u32, y: u32| {
            let (old, new) = (&self.baseline[x as usize], &self.candidate[y as usize]);
            if place_alone || within_size_window(old, new) {
                kinship(old, new)
            } else {
                0.0
            }
        };
        match (b, c) {
            (&[x], &[y]) if place_alone => {
                return if alike(x, y) > 0.0 {
                    vec![(x, y)]
                } else {
                    vec![]
                };
            }
            // From one caller, the place must single out one procedure on a side.
            _ if !place_alone && b.len() > 1 && c.len() > 1 => return vec![],
            _ if b.len() > MAX_NEIGHBOURS || c.len() > MAX_NEIGHBOURS => return vec![],
            _ => {}
        }
        let mut found = Vec::new();
        let only = |members: &[u32], side: &[Fingerprint], old: u32| -> Option<u32> {
            let mut calling = members
                .iter()
                .filter(|&&m| side[m as usize].callees.contains(&old));
            calling.next().filter(|_| calling.next().is_none()).copied()
        };
        for &x in b {
            if let Some(y) = self.forward[x as usize].and_then(|old| only(c, self.candidate, old)) {
                found.push((x, y));
            }
        }
        for &y in c {
            if let Some(x) = self.backward[y as usize].and_then(|old| only(b, self.baseline, old)) {
                found.push((x, y));
            }
        }
        let (mut rows, mut columns) = (
            vec![Best::default(); b.len()],
            vec![Best::default(); c.len()],
        );
        for (i, &x) in b.iter().enumerate() {
            for (j, &y) in c.iter().enumerate() {
                let score = alike(x, y);
                rows[i].offer(score, j as u32);
                columns[j].offer(score, i as u32);
            }
        }
        for (i, row) in rows.iter().enumerate() {
            if let Some(j) = row.at
                && columns[j as usize].at == Some(i as u32)
                && row.decisive(MIN_SOLE_NEIGHBOUR_SIMILARITY)
                && columns[j as usize].decisive(MIN_SOLE_NEIGHBOUR_SIMILARITY)
            {
                found.push((b[i], c[j as usize]));
            }
        }
        // The first claim on a procedure holds. From one caller, the place is the call's:
        // a function removed from one call and another added at another are alone there too.
        let (mut taken_b, mut taken_c) = (Vec::new(), Vec::new());
        found.retain(|&(x, y)| {
            let free = alike(x, y) > 0.0 && !taken_b.contains(&x) && !taken_c.contains(&y);
            let free = free && (place_alone || self.in_same_call_slot(x, y));
            if free {
                taken_b.push(x);
                taken_c.push(y);
            }
            free
        });
        found
    }
}

/// Whether a procedure has a place that a pair can be against: something calls it, or it
/// has a name (an exported procedure that nothing inside calls is an entry point, not a
/// procedure every caller inlined).
fn has_a_place(callers: &[u32], procedure: &Fingerprint) -> bool {
    !callers.is_empty() || procedure.name.is_some()
}

/// One side as the same-callers round reads it: each procedure's key (its paired callers, by
/// baseline index; computed by the round, so with a lifetime of its own), partner on the
/// other side, callers and fingerprint.
struct Side<'k, 's> {
    keys: &'k [Option<Vec<u32>>],
    partners: &'s [Option<u32>],
    callers: &'s [Vec<u32>],
    procedures: &'s [Fingerprint],
}
