//! How alike two procedures are, as the rounds read it, and the size windows they compare
//! within.

use crate::core::diff::{
    Fingerprint, LARGE_PROCEDURE_INSTRUCTIONS, MIN_LARGE_NEIGHBOUR_SIMILARITY,
    MIN_NEIGHBOUR_SIMILARITY, MIN_TELLING_CONSTANTS, similarity,
};

/// [`similarity`] as the fuzzy rounds read it: 0 when both procedures refer to strings and
/// share none of them (two wrappers that print different messages are different functions,
/// however alike their code), or both only compute ([`is_pure`]), hold at least
/// [`MIN_TELLING_CONSTANTS`] constants each and share none (a function replaced by another of
/// its shape at the same call).
pub(super) fn kinship(a: &Fingerprint, b: &Fingerprint) -> f64 {
    let strings_conflict = !a.strings.is_empty()
        && !b.strings.is_empty()
        && jaccard_set(&a.strings, &b.strings) == 0.0;
    let constants_conflict = is_pure(a)
        && is_pure(b)
        && a.constants.len() >= MIN_TELLING_CONSTANTS
        && b.constants.len() >= MIN_TELLING_CONSTANTS
        && jaccard_set(&a.constants, &b.constants) == 0.0;
    if strings_conflict || constants_conflict {
        0.0
    } else {
        similarity(a, b)
    }
}

/// The unpaired procedures of `side` (by `partners`) that `keep` keeps, by size, then index.
pub(super) fn unpaired_by_size(
    side: &[Fingerprint],
    partners: &[Option<u32>],
    keep: impl Fn(&Fingerprint) -> bool,
) -> Vec<u32> {
    let mut indices: Vec<u32> = (0..side.len() as u32)
        .filter(|&i| partners[i as usize].is_none() && keep(&side[i as usize]))
        .collect();
    indices.sort_by_key(|&i| (side[i as usize].size, i));
    indices
}

/// [`kinship`] for the small procedures' round: 0 when they have immediates and share none,
/// nor an addend (a few instructions with other constants are another function of the same
/// operations, which the operations' likeness alone would call alike; `x + 35048` compiled
/// to a `lea` holds its constant as an addend, and when it stays, the changed comparison
/// beside it is an edit).
pub(super) fn small_kinship(a: &Fingerprint, b: &Fingerprint) -> f64 {
    let immediates = !a.immediates.is_empty() || !b.immediates.is_empty();
    if immediates
        && multiset_common(&a.immediates, &b.immediates) == 0
        && multiset_common(&a.addends, &b.addends) == 0
    {
        0.0
    } else {
        kinship(a, b)
    }
}

/// The places in `sorted` (indices into `side`, sorted by size) of the procedures of half to
/// twice `size`: the ones the likeness and twins rounds compare with a procedure of that size.
pub(super) fn size_window(
    sorted: &[u32],
    side: &[Fingerprint],
    size: u64,
) -> std::ops::Range<usize> {
    sizes_within_window(sorted, |&i| side[i as usize].size, size)
}

/// The places in `sorted` (sorted by `size_of`) of the items of half to twice `size`.
pub(super) fn sizes_within_window<T>(
    sorted: &[T],
    size_of: impl Fn(&T) -> u64,
    size: u64,
) -> std::ops::Range<usize> {
    let low = sorted.partition_point(|item| size_of(item).saturating_mul(2) < size);
    let high = sorted.partition_point(|item| size_of(item) <= size.saturating_mul(2));
    low..high.max(low)
}

/// Whether each of two procedures is half to twice the other's size: the window the likeness
/// and twins rounds compare within ([`size_window`] finds it in a sorted list).
pub(super) fn within_size_window(a: &Fingerprint, b: &Fingerprint) -> bool {
    a.size.saturating_mul(2) >= b.size && a.size <= b.size.saturating_mul(2)
}

/// Least similarity two neighbours of a pair need in the call-graph round.
pub(super) fn neighbour_least(a: &Fingerprint, b: &Fingerprint) -> f64 {
    if is_large(a) && is_large(b) {
        MIN_LARGE_NEIGHBOUR_SIMILARITY
    } else {
        MIN_NEIGHBOUR_SIMILARITY
    }
}

/// Whether a procedure has at least [`LARGE_PROCEDURE_INSTRUCTIONS`].
pub(super) fn is_large(procedure: &Fingerprint) -> bool {
    procedure.tokens.len() >= LARGE_PROCEDURE_INSTRUCTIONS
}

/// Whether a procedure only computes: it calls nothing and refers to no string, so its
/// constants are what it is (a procedure that calls may pass line numbers and sizes that
/// move with every release, as `assert` does).
pub(super) fn is_pure(procedure: &Fingerprint) -> bool {
    procedure.callees.is_empty() && procedure.imports.is_empty() && procedure.strings.is_empty()
}

pub(super) fn ratio(a: u64, b: u64) -> f64 {
    match a.max(b) {
        0 => 1.0,
        most => a.min(b) as f64 / most as f64,
    }
}

/// |A ∩ B| / |A ∪ B| of two sorted multisets; 1 when both are empty.
pub(super) fn jaccard_multiset<T: Ord>(a: &[T], b: &[T]) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    let common = multiset_common(a, b);
    common as f64 / (a.len() + b.len() - common) as f64
}

/// |A ∩ B| of two sorted multisets.
pub(super) fn multiset_common<T: Ord>(a: &[T], b: &[T]) -> usize {
    let (mut i, mut j, mut common) = (0, 0, 0usize);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    common
}

/// The same for sorted sets (distinct elements).
pub(super) fn jaccard_set<T: Ord>(a: &[T], b: &[T]) -> f64 {
    jaccard_multiset(a, b)
}

/// `a` without the elements of `b` (sorted multisets: each element of `b` removes one).
pub(super) fn multiset_difference(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (mut rest, mut j) = (Vec::with_capacity(a.len()), 0);
    for &value in a {
        while j < b.len() && b[j] < value {
            j += 1;
        }
        if j < b.len() && b[j] == value {
            j += 1;
        } else {
            rest.push(value);
        }
    }
    rest
}
