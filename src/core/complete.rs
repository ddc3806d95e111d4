//! `complete()` of SPEC section 4: bounded, deduplicated, code-point-sorted prefix matching.

use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};

use super::bounds::{MAX_VALUE_CHARS, MAX_VALUES, SCAN_LIMIT};
use super::key::{KeyBuffers, PrefixKey};

/// A value longer than [`MAX_VALUE_CHARS`] Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("value is {chars} characters long; the limit is {MAX_VALUE_CHARS}")]
pub struct ValueTooLong {
    /// Length of the rejected value, in Unicode scalar values.
    pub chars: usize,
}

/// Whether `s` is longer than [`MAX_VALUE_CHARS`] scalar values. Counts at most
/// [`MAX_VALUE_CHARS`] + 1 characters, however long `s` is.
pub(crate) fn is_over_long(s: &str) -> bool {
    // A scalar value takes one to four UTF-8 bytes, so the byte length often settles it.
    if s.len() <= MAX_VALUE_CHARS {
        return false;
    }
    if s.len() > 4 * MAX_VALUE_CHARS {
        return true;
    }
    s.chars().nth(MAX_VALUE_CHARS).is_some()
}

/// A completion prefix that is already length-checked and keyed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prefix {
    key: PrefixKey,
}

impl Prefix {
    /// Checks the length bound and computes the matching key.
    ///
    /// ```
    /// use rea::core::{MAX_VALUE_CHARS, Prefix};
    /// assert_eq!(Prefix::new("SUB_4").unwrap().key(), "sub_4");
    /// let long = "é".repeat(MAX_VALUE_CHARS + 1);
    /// assert_eq!(Prefix::new(&long).unwrap_err().chars, MAX_VALUE_CHARS + 1);
    /// ```
    pub fn new(raw: &str) -> Result<Prefix, ValueTooLong> {
        if is_over_long(raw) {
            // Reporting the exact length costs one linear pass, once, on an input the server
            // already holds in memory; candidates never take this path.
            return Err(ValueTooLong {
                chars: raw.chars().count(),
            });
        }
        Ok(Prefix {
            key: PrefixKey::new(raw),
        })
    }

    /// The matching key of the prefix.
    pub fn key(&self) -> &str {
        self.key.as_str()
    }

    /// Whether `candidate` matches this prefix (SPEC section 3).
    pub fn matches(&self, candidate: &str) -> bool {
        self.key.matches(candidate, &mut KeyBuffers::default())
    }
}

/// The result of one completion: at most [`MAX_VALUES`] values, the number of distinct
/// matches within the scan bound, and whether more than the returned values exist.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    /// Distinct matching candidates, verbatim, sorted by code point; at most [`MAX_VALUES`].
    pub values: Vec<String>,
    /// Number of distinct matching candidates found within [`SCAN_LIMIT`].
    pub total: usize,
    /// `total > MAX_VALUES`.
    pub has_more: bool,
}

impl Completion {
    /// The empty completion, answered for provider errors and unsupported sources.
    pub fn empty() -> Completion {
        Completion::default()
    }
}

/// Completes `prefix` against `candidates` (SPEC section 4).
///
/// ```
/// let done = rea::core::complete("sub_4", ["sub_401000", "main", "SUB_4010a0", "sub_401000"]).unwrap();
/// assert_eq!(done.values, ["SUB_4010a0", "sub_401000"]);
/// assert_eq!(done.total, 2);
/// assert!(!done.has_more);
/// ```
pub fn complete<I, S>(prefix: &str, candidates: I) -> Result<Completion, ValueTooLong>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let prefix = Prefix::new(prefix)?;
    Ok(complete_prefix(&prefix, candidates))
}

/// Completes an already checked [`Prefix`]; infallible.
///
/// Equivalent to filter, sort, dedup and truncate over the first [`SCAN_LIMIT`] candidates,
/// but it never sorts more than [`MAX_VALUES`] values and copies only the values it returns:
/// matching candidates are kept as they came, deduplicated through a hash table of indices,
/// and the smallest [`MAX_VALUES`] are selected before sorting.
pub fn complete_prefix<I, S>(prefix: &Prefix, candidates: I) -> Completion
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut buffers = KeyBuffers::default();
    let matched: Vec<S> = candidates
        .into_iter()
        .take(SCAN_LIMIT)
        .filter(|candidate| {
            let text = candidate.as_ref();
            !is_over_long(text) && prefix.key.matches(text, &mut buffers)
        })
        .collect();
    let mut distinct = distinct(&matched);
    let total = distinct.len();
    if total > MAX_VALUES {
        distinct.select_nth_unstable(MAX_VALUES - 1);
        distinct.truncate(MAX_VALUES);
    }
    distinct.sort_unstable();
    Completion {
        values: distinct
            .into_iter()
            .map(|value| value.text.to_owned())
            .collect(),
        total,
        has_more: total > MAX_VALUES,
    }
}

/// A string ordered by code point (UTF-8 byte order) with a cheap first comparison: its first
/// eight bytes as a big-endian integer, zero-padded. Comparing `(head, text)` gives the same
/// order as comparing `text`: a difference within the first eight bytes shows in `head` with
/// the same sign, and equal heads fall through to the full comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct SortKey<'a> {
    head: u64,
    text: &'a str,
}

impl<'a> SortKey<'a> {
    fn new(text: &'a str) -> SortKey<'a> {
        let mut head = [0u8; 8];
        let shown = text.len().min(8);
        head[..shown].copy_from_slice(&text.as_bytes()[..shown]);
        SortKey {
            head: u64::from_be_bytes(head),
            text,
        }
    }
}

/// The distinct strings of `values` as sort keys, in no particular order.
fn distinct<S: AsRef<str>>(values: &[S]) -> Vec<SortKey<'_>> {
    let mut keys: Vec<SortKey<'_>> = Vec::with_capacity(values.len());
    if values.len() <= MAX_VALUES {
        // Few enough to sort outright, which is cheaper than hashing.
        keys.extend(values.iter().map(|value| SortKey::new(value.as_ref())));
        keys.sort_unstable();
        keys.dedup();
        return keys;
    }
    // A table of indices into `keys`: small slots, strings compared only on a hash match.
    let hasher = DefaultHashBuilder::default();
    let mut table: HashTable<usize> = HashTable::with_capacity(values.len());
    for value in values {
        let text = value.as_ref();
        let hash = hasher.hash_one(text);
        if table.find(hash, |&at| keys[at].text == text).is_none() {
            table.insert_unique(hash, keys.len(), |&at| hasher.hash_one(keys[at].text));
            keys.push(SortKey::new(text));
        }
    }
    keys
}
