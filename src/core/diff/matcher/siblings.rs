//! The check that keeps a procedure from the caller that holds its code when the procedure
//! itself is there too: a version that inlines a procedure into a caller and keeps it for
//! other callers holds its code twice.

use crate::core::diff::measure::within_size_window;
use crate::core::diff::{Fingerprint, LIKENESS_MARGIN, MAX_NEIGHBOURS, similarity};

use super::Matcher;
use super::inlining::taken_in;

impl Matcher<'_> {
    /// Whether a sibling of `c` (an unpaired procedure that calls a paired callee of `c`, or
    /// that a paired caller of `c` calls) is at least [`LIKENESS_MARGIN`] more alike to `b`
    /// than `c` is, while something unpaired calls `b` (a caller that may hold its code); or
    /// the same with the sides swapped. A neighbourhood that sees the caller holding `b`'s
    /// code and not `b`'s other version would pair the caller with `b`. A sibling that `c`
    /// calls is no rival when `c` with it taken in is as alike to `b`: `b`'s version
    /// inlined it.
    pub(super) fn rather_a_sibling(&self, b: u32, c: u32) -> bool {
        let (old, new) = (&self.baseline[b as usize], &self.candidate[c as usize]);
        let least = similarity(old, new) + LIKENESS_MARGIN;
        let called_unpaired = |callers: &[u32], partners: &[Option<u32>]| {
            callers
                .iter()
                .any(|&caller| partners[caller as usize].is_none())
        };
        let candidate_rival = |s: u32| {
            let sibling = (&self.candidate[s as usize], s);
            rivals(sibling, (new, old), least, |x| similarity(old, x))
        };
        let baseline_rival = |s: u32| {
            let sibling = (&self.baseline[s as usize], s);
            rivals(sibling, (old, new), least, |x| similarity(x, new))
        };
        (called_unpaired(&self.baseline_callers[b as usize], &self.forward)
            && siblings(self.candidate, &self.candidate_callers, &self.backward, c)
                .any(candidate_rival))
            || (called_unpaired(&self.candidate_callers[c as usize], &self.backward)
                && siblings(self.baseline, &self.baseline_callers, &self.forward, b)
                    .any(baseline_rival))
    }
}

/// Whether `sibling` (index `at` on its side), within the size window of `other` (the
/// pair's procedure on the other side), is at least `least` alike to it (by `alike`, which
/// measures against `other`), unless it is a callee of `holder` (the pair's procedure on
/// its side) and `holder` with it taken in is as alike.
fn rivals(
    (sibling, at): (&Fingerprint, u32),
    (holder, other): (&Fingerprint, &Fingerprint),
    least: f64,
    alike: impl Fn(&Fingerprint) -> f64,
) -> bool {
    within_size_window(sibling, other) && {
        let rival = alike(sibling);
        rival >= least
            && !(holder.callees.contains(&at) && alike(&taken_in(holder, sibling, at)) >= rival)
    }
}

/// The unpaired procedures of `side` but `at` that call a paired callee of `at`, or that a
/// paired caller of `at` calls (through neighbours with at most [`MAX_NEIGHBOURS`] of them).
fn siblings<'a>(
    side: &'a [Fingerprint],
    callers: &'a [Vec<u32>],
    partners: &'a [Option<u32>],
    at: u32,
) -> impl Iterator<Item = u32> + 'a {
    let paired = move |index: &u32| partners[*index as usize].is_some();
    let through_callees = side[at as usize]
        .callees
        .iter()
        .filter(move |&callee| paired(callee) && callers[*callee as usize].len() <= MAX_NEIGHBOURS)
        .flat_map(move |&callee| callers[callee as usize].iter().copied());
    let through_callers = callers[at as usize]
        .iter()
        .filter(move |&caller| {
            paired(caller) && side[*caller as usize].callees.len() <= MAX_NEIGHBOURS
        })
        .flat_map(move |&caller| side[caller as usize].callees.iter().copied());
    through_callees
        .chain(through_callers)
        .filter(move |sibling| *sibling != at && !paired(sibling))
}
