//! The round of telling constants: two unpaired procedures that hold the same constant, which
//! no other procedure of either side holds.

use crate::core::diff::measure::{kinship, multiset_common};
use crate::core::diff::{Fingerprint, Signal};

use super::Matcher;

/// Least magnitude of a constant that marks a function: smaller ones, and their negatives
/// (counts, offsets, `x - 28`), are in many.
const MIN_TELLING_MAGNITUDE: u64 = 0x100;

impl Matcher<'_> {
    /// Pairs each unpaired baseline procedure with the unpaired candidate procedure it shares
    /// a constant with that no other procedure of either side holds (paired or not: a
    /// constant that a paired procedure also holds may be its inlined copy), when that is the
    /// only such partner either has and the two are alike at all ([`kinship`] above 0: no
    /// strings without one in common, no telling constants without one in common). A random
    /// multiplier, a magic number or a table size survives the edits that move a function
    /// past every likeness threshold (a statement inserted into a three-instruction function,
    /// a callee inlined or no longer), and it marks one function, where an import or a
    /// string is shared by a family.
    pub(super) fn constants_round(&mut self) {
        // Nothing to link when one side has no unpaired procedure holding a constant (a
        // comparison of one binary with itself pairs everything before).
        let holds = |side: &[Fingerprint], partners: &[Option<u32>]| {
            side.iter().zip(partners).any(|(procedure, partner)| {
                partner.is_none()
                    && !(procedure.constants.is_empty() && procedure.addends.is_empty())
            })
        };
        if !holds(self.baseline, &self.forward) || !holds(self.candidate, &self.backward) {
            return;
        }
        let all_links = match self.constant_links.take() {
            Some(links) => links,
            None => {
                if self.should_stop(self.baseline.len() + self.candidate.len(), false) {
                    return;
                }
                links_of(self.baseline, self.candidate)
            }
        };
        // The links whose two procedures are both unpaired.
        let links: Vec<(u32, u32)> = all_links
            .iter()
            .copied()
            .filter(|&(b, c)| {
                self.forward[b as usize].is_none() && self.backward[c as usize].is_none()
            })
            .collect();
        let walked = all_links.len();
        self.constant_links = Some(all_links);
        if self.should_stop(walked, false) {
            return;
        }
        // The one partner of `x` in `links` (sorted), when it has exactly one.
        let only_partner = |links: &[(u32, u32)], x: u32| {
            let from = links.partition_point(|link| link.0 < x);
            let theirs = &links[from..from + links[from..].partition_point(|link| link.0 == x)];
            (theirs.len() == 1).then(|| theirs[0].1)
        };
        let mut flipped: Vec<(u32, u32)> = links.iter().map(|&(b, c)| (c, b)).collect();
        flipped.sort_unstable();
        let mut made = Vec::new();
        for &(b, c) in &links {
            let (old, new) = (&self.baseline[b as usize], &self.candidate[c as usize]);
            if only_partner(&links, b) == Some(c)
                && only_partner(&flipped, c) == Some(b)
                && keeps_its_constants(old, new)
                && kinship(old, new) > 0.0
            {
                made.push((b, c));
            }
        }
        for (b, c) in made {
            self.pair(b, c, Signal::Constants);
        }
    }
}

/// The pairs of procedures (baseline, candidate) that share a constant or addend no other
/// procedure of either side holds: sorted, distinct. They do not change as procedures pair,
/// so the matcher finds them once.
fn links_of(baseline: &[Fingerprint], candidate: &[Fingerprint]) -> Vec<(u32, u32)> {
    let (baseline, candidate) = (sole_holders(baseline), sole_holders(candidate));
    let mut links: Vec<(u32, u32)> = Vec::new();
    let (mut at_b, mut at_c) = (0, 0);
    while at_b < baseline.len() && at_c < candidate.len() {
        let ((k_b, b), (k_c, c)) = (baseline[at_b], candidate[at_c]);
        match k_b.cmp(&k_c) {
            std::cmp::Ordering::Less => at_b += 1,
            std::cmp::Ordering::Greater => at_c += 1,
            std::cmp::Ordering::Equal => {
                links.push((b, c));
                at_b += 1;
                at_c += 1;
            }
        }
    }
    links.sort_unstable();
    links.dedup();
    links
}

/// Whether the two share at least half the constants of the one with fewer: an edit keeps
/// most of a function's constants, and two functions that share one of their many by chance
/// (random multipliers meet, or each inlined the same callee that has no body of its own
/// left) share few.
fn keeps_its_constants(old: &Fingerprint, new: &Fingerprint) -> bool {
    let (old, new) = (telling_constants(old), telling_constants(new));
    2 * multiset_common(&old, &new) >= old.len().min(new.len())
}

/// A procedure's constants and addends (a `lea`'s constant) of at least
/// [`MIN_TELLING_MAGNITUDE`]: sorted, distinct.
fn telling_constants(procedure: &Fingerprint) -> Vec<u64> {
    let mut all: Vec<u64> = [procedure.constants.as_slice(), &procedure.addends]
        .concat()
        .into_iter()
        .filter(|&value| is_telling(value))
        .collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// Whether `value` (sign-extended to 64 bits, or a 32-bit operand's 32 bits) is at least
/// [`MIN_TELLING_MAGNITUDE`] in magnitude: `x - 28` holds `-28`, which says as little as
/// `28`, whether it reads `0xffff_ffff_ffff_ffe4` or `0xffff_ffe4`.
fn is_telling(value: u64) -> bool {
    let small = |magnitude: u64| magnitude < MIN_TELLING_MAGNITUDE;
    let narrow = u32::try_from(value).ok();
    !(small(value)
        || small(value.wrapping_neg())
        || narrow.is_some_and(|v| small(u64::from(v.wrapping_neg()))))
}

/// The constants and addends of `side` that exactly one of its procedures holds, with that
/// procedure: sorted by constant.
fn sole_holders(side: &[Fingerprint]) -> Vec<(u64, u32)> {
    let mut held: Vec<(u64, u32)> = Vec::new();
    for (index, procedure) in side.iter().enumerate() {
        let index = index as u32;
        let values = procedure.constants.iter().chain(&procedure.addends);
        held.extend(values.filter(|&&k| is_telling(k)).map(|&k| (k, index)));
    }
    held.sort_unstable();
    // A value both a constant and an addend of one procedure is held once.
    held.dedup();
    let mut sole = Vec::with_capacity(held.len());
    let mut at = 0;
    while at < held.len() {
        let end = at + held[at..].partition_point(|entry| entry.0 == held[at].0);
        if end - at == 1 {
            sole.push(held[at]);
        }
        at = end;
    }
    sole
}

#[cfg(test)]
mod tests {
    use super::is_telling;

    #[test]
    fn a_small_negative_constant_says_as_little_as_a_small_positive_one() {
        // -28 as a 64-bit immediate and as a 32-bit operand's, and -1.
        for small in [
            28,
            0xff,
            28_u64.wrapping_neg(),
            0xffff_ffe4,
            u64::MAX,
            0xffff_ffff,
        ] {
            assert!(!is_telling(small), "{small:#x}");
        }
        // 0x100 and its negative, a mask, a hash prime, and a 64-bit constant.
        for telling in [
            0x100,
            0x100_u64.wrapping_neg(),
            0xffff_ff00,
            0x9e37_79b1,
            0xcf1b_bcdc_bb00_0000,
        ] {
            assert!(is_telling(telling), "{telling:#x}");
        }
    }
}
