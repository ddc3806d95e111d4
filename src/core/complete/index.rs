//! A prefix index over an immutable candidate table, answering exactly what [`complete()`]
//! answers, and [`complete_ordered`] for tables that are their own index.
//!
//! # Why a sorted table of keys gives the same answer
//!
//! `complete()` keeps the first [`SCAN_LIMIT`] candidates, drops the over-long ones, keeps
//! those whose key starts with the prefix key at a starter boundary, and answers the distinct
//! survivors in code-point order. The index does each step once, when it is built: it keeps
//! the same first [`SCAN_LIMIT`] candidates, drops the same over-long ones, and removes
//! duplicates by exact string, so every entry is one distinct value (its *rank* is its place
//! in code-point order). The entries are then sorted by key. Every key that starts with the
//! prefix key lies in one contiguous range of that order (byte order on UTF-8 is code-point
//! order, and strings sharing a prefix are contiguous in it), which two binary searches find.
//! Within the range, the starter rule is checked per entry, except for the entries whose key
//! has no non-starter at all (every ASCII key): they pass for any prefix key, so they are
//! counted from a running sum. The values are the matching ranks' smallest
//! [`MAX_VALUES`]: collected from the range when it is small, or found by walking the ranks in
//! order and stopping at the last one needed when it is large.
//!
//! [`complete()`]: super::complete

use unicode_normalization::char::canonical_combining_class;

use super::{Completion, Prefix, is_over_long};
use crate::core::bounds::{MAX_VALUE_CHARS, MAX_VALUES, SCAN_LIMIT};
use crate::core::key::key;

/// An index over an immutable candidate table: [`PrefixIndex::complete`] equals
/// [`complete_prefix`](super::complete_prefix) over the same candidates, for every prefix,
/// in time that depends on the matches rather than on the table.
///
/// It holds the distinct, not over-long values among the first [`SCAN_LIMIT`] candidates (a
/// copy: the table it was built from may go), the key of each value that differs from the
/// value, and four 32-bit integers per value; see [`PrefixIndex::heap_bytes`].
///
/// ```
/// use rea::core::{Prefix, PrefixIndex, complete};
/// let names = ["sub_401000", "main", "SUB_4010a0", "sub_401000", "Straße"];
/// let index = PrefixIndex::new(names);
/// for prefix in ["", "sub_4", "STRASS", "m", "x"] {
///     let done = index.complete(&Prefix::new(prefix).unwrap());
///     assert_eq!(done, complete(prefix, names).unwrap());
/// }
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrefixIndex {
    /// The distinct, not over-long values among the first [`SCAN_LIMIT`] candidates, in
    /// code-point order: a value's rank is its place here.
    values: Box<[Box<str>]>,
    /// The key of each rank, `None` when it equals the value (every lowercase ASCII value).
    keys: Box<[Option<Box<str>>]>,
    /// Ranks in key order (ties in rank order).
    by_key: Box<[u32]>,
    /// The place in `by_key` of each rank.
    place: Box<[u32]>,
    /// `plain_before[p]`: how many of `by_key[..p]` have a key without non-starters; one
    /// longer than `by_key`.
    plain_before: Box<[u32]>,
    /// The places in `by_key` whose key has a non-starter, increasing.
    marked: Box<[u32]>,
}

/// How [`PrefixIndex::complete_by`] picks the smallest matching values. Both give the same
/// answer; the invariant checks run both.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pick {
    /// The cheaper of the two for the range at hand.
    Cheaper,
    /// Collect the range's matches and select the smallest.
    FromRange,
    /// Walk the ranks in order until the last value needed.
    ByRank,
}

impl PrefixIndex {
    /// Builds the index of `candidates`, given in source order. Only the first
    /// [`SCAN_LIMIT`] are read, as [`complete_prefix`](super::complete_prefix) reads them.
    pub fn new<I, S>(candidates: I) -> PrefixIndex
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let scanned: Vec<S> = candidates.into_iter().take(SCAN_LIMIT).collect();
        let mut distinct: Vec<&str> = scanned
            .iter()
            .map(AsRef::as_ref)
            .filter(|value| !is_over_long(value))
            .collect();
        distinct.sort_unstable();
        distinct.dedup();
        let keys: Box<[Option<Box<str>>]> = distinct
            .iter()
            .map(|&value| {
                let keyed = key(value);
                (keyed != value).then(|| keyed.into_owned().into_boxed_str())
            })
            .collect();
        let values: Box<[Box<str>]> = distinct.into_iter().map(Box::from).collect();
        // At most SCAN_LIMIT values, so ranks fit in u32.
        let mut by_key: Vec<u32> = (0..values.len() as u32).collect();
        let key_of = |rank: u32| {
            keys[rank as usize]
                .as_deref()
                .unwrap_or(&values[rank as usize])
        };
        // Lowercase ASCII tables (addresses, IDs) are their own keys, already in key order.
        if keys.iter().any(Option::is_some) {
            by_key.sort_by(|&a, &b| key_of(a).cmp(key_of(b)).then(a.cmp(&b)));
        }
        let mut place = vec![0u32; values.len()];
        let mut plain_before = Vec::with_capacity(values.len() + 1);
        let mut marked = Vec::new();
        let mut plain = 0u32;
        for (at, &rank) in by_key.iter().enumerate() {
            place[rank as usize] = at as u32;
            plain_before.push(plain);
            let keyed = key_of(rank);
            if keyed.is_ascii() || keyed.chars().all(|c| canonical_combining_class(c) == 0) {
                plain += 1;
            } else {
                marked.push(at as u32);
            }
        }
        plain_before.push(plain);
        PrefixIndex {
            values,
            keys,
            by_key: by_key.into_boxed_slice(),
            place: place.into_boxed_slice(),
            plain_before: plain_before.into_boxed_slice(),
            marked: marked.into_boxed_slice(),
        }
    }

    /// The number of distinct values indexed.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no value is indexed (no candidate, or only over-long ones).
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Heap memory the index holds, in bytes (allocator overhead not counted): the text of
    /// the values and of the keys that differ from them, plus 44 bytes per value (two boxed
    /// strings' pointers and lengths, three 32-bit integers), 4 more, and 4 per value whose
    /// key has a non-starter.
    pub fn heap_bytes(&self) -> usize {
        let text: usize = self.values.iter().map(|value| value.len()).sum::<usize>()
            + self
                .keys
                .iter()
                .flatten()
                .map(|key| key.len())
                .sum::<usize>();
        let slots = std::mem::size_of::<Box<str>>() + std::mem::size_of::<Option<Box<str>>>();
        text + self.values.len() * (slots + 2 * 4)
            + self.plain_before.len() * 4
            + self.marked.len() * 4
    }

    /// Completes `prefix`: equal to [`complete_prefix`](super::complete_prefix) over the
    /// candidates the index was built from.
    pub fn complete(&self, prefix: &Prefix) -> Completion {
        self.complete_by(prefix, Pick::Cheaper)
    }

    /// [`PrefixIndex::complete`] with the way of picking the values chosen.
    pub(crate) fn complete_by(&self, prefix: &Prefix, pick: Pick) -> Completion {
        let wanted = prefix.key();
        if wanted.is_empty() {
            // Everything matches.
            return self.answer(
                self.values.len(),
                self.values.iter().take(MAX_VALUES).map(|v| &**v),
            );
        }
        let lo = self.by_key.partition_point(|&rank| self.key(rank) < wanted);
        let hi = lo + self.by_key[lo..].partition_point(|&rank| self.key(rank).starts_with(wanted));
        let passes = |at: usize| self.starter_follows(at, wanted.len());
        // Entries without non-starters all pass; the marked ones in range are checked.
        let marked_lo = self.marked.partition_point(|&at| (at as usize) < lo);
        let marked_hi = self.marked.partition_point(|&at| (at as usize) < hi);
        let marked = &self.marked[marked_lo..marked_hi];
        let total = (self.plain_before[hi] - self.plain_before[lo]) as usize
            + marked.iter().filter(|&&at| passes(at as usize)).count();
        let shown = total.min(MAX_VALUES);
        let range = hi - lo;
        let by_rank = match pick {
            Pick::FromRange => false,
            Pick::ByRank => true,
            // Collecting costs the range; walking the ranks costs about
            // `values * shown / range` when matches spread evenly, all values at worst.
            Pick::Cheaper => range * range > 4 * MAX_VALUES * self.values.len(),
        };
        if !by_rank {
            let mut ranks: Vec<u32> = (lo..hi)
                .filter(|&at| !self.is_marked(at, marked) || passes(at))
                .map(|at| self.by_key[at])
                .collect();
            if ranks.len() > shown && shown > 0 {
                ranks.select_nth_unstable(shown - 1);
            }
            ranks.truncate(shown);
            ranks.sort_unstable();
            return self.answer(
                total,
                ranks.iter().map(|&rank| &*self.values[rank as usize]),
            );
        }
        let mut found = Vec::with_capacity(shown);
        for (rank, &at) in self.place.iter().enumerate() {
            if found.len() == shown {
                break;
            }
            let at = at as usize;
            if (lo..hi).contains(&at) && (!self.is_marked(at, marked) || passes(at)) {
                found.push(&*self.values[rank]);
            }
        }
        self.answer(total, found.into_iter())
    }

    fn answer<'a>(&self, total: usize, values: impl Iterator<Item = &'a str>) -> Completion {
        Completion {
            values: values.map(str::to_owned).collect(),
            total,
            has_more: total > MAX_VALUES,
        }
    }

    fn key(&self, rank: u32) -> &str {
        let rank = rank as usize;
        self.keys[rank].as_deref().unwrap_or(&self.values[rank])
    }

    /// Whether place `at` is among `marked` (a slice of [`PrefixIndex::marked`]).
    fn is_marked(&self, at: usize, marked: &[u32]) -> bool {
        !marked.is_empty() && marked.binary_search(&(at as u32)).is_ok()
    }

    /// Whether the key at place `at`, which starts with a prefix key `cut` bytes long, has a
    /// starter or nothing after it.
    fn starter_follows(&self, at: usize, cut: usize) -> bool {
        self.key(self.by_key[at])
            .get(cut..)
            .and_then(|rest| rest.chars().next())
            .is_none_or(|c| canonical_combining_class(c) == 0)
    }
}

/// Whether `next` may follow `last` (the previous candidate, if any) in a table that
/// [`complete_ordered`] answers: `next` is ASCII without uppercase letters, within
/// [`MAX_VALUE_CHARS`], and greater than `last`. Such a table's candidates are their own keys,
/// distinct and in code-point order, so it is its own prefix index. An append-only store
/// checks each value as it arrives.
///
/// ```
/// use rea::core::extends_ordered;
/// assert!(extends_ordered(None, "ev-000000000001"));
/// assert!(extends_ordered(Some("ev-000000000001"), "ev-000000000002"));
/// assert!(!extends_ordered(Some("ev-000000000002"), "ev-000000000002"));
/// assert!(!extends_ordered(None, "Ev-1"));
/// assert!(!extends_ordered(None, "é"));
/// ```
pub fn extends_ordered(last: Option<&str>, next: &str) -> bool {
    next.is_ascii()
        && !next.bytes().any(|b| b.is_ascii_uppercase())
        && next.len() <= MAX_VALUE_CHARS
        && last.is_none_or(|last| last < next)
}

/// Completes `prefix` over `len` candidates read by `at(0)`, `at(1)`, ... in source order,
/// when each of the first [`SCAN_LIMIT`] [`extends_ordered`] the one before it: then the
/// answer equals [`complete()`](super::complete) and takes two binary searches. For any
/// other table the answer is unspecified (but the call returns).
///
/// ```
/// use rea::core::{Prefix, complete, complete_ordered};
/// let ids: Vec<String> = (1..=500).map(|n| format!("ev-{n:012}")).collect();
/// let prefix = Prefix::new("EV-00000000004").unwrap();
/// let done = complete_ordered(&prefix, ids.len(), |i| &ids[i]);
/// assert_eq!(done, complete("EV-00000000004", &ids).unwrap());
/// assert_eq!(done.total, 10);
/// ```
pub fn complete_ordered<'a>(
    prefix: &Prefix,
    len: usize,
    at: impl Fn(usize) -> &'a str,
) -> Completion {
    let len = len.min(SCAN_LIMIT);
    let wanted = prefix.key();
    let search = |before: &dyn Fn(&str) -> bool| {
        let (mut lo, mut hi) = (0, len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if before(at(mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    };
    let lo = search(&|value| value < wanted);
    let hi = search(&|value| value < wanted || value.starts_with(wanted));
    let total = hi.saturating_sub(lo);
    Completion {
        values: (lo..hi.min(lo + MAX_VALUES))
            .map(|i| at(i).to_owned())
            .collect(),
        total,
        has_more: total > MAX_VALUES,
    }
}
