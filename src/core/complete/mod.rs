//! `complete()` of docs/CONTRACT.md section 4: bounded, deduplicated, code-point-sorted prefix
//! matching.

mod index;
mod smallest;

pub(crate) use index::Pick;
pub use index::{PrefixIndex, complete_ordered, extends_ordered};

use super::bounds::{MAX_VALUE_CHARS, MAX_VALUES, SCAN_LIMIT};
use super::key::{KeyBuffers, PrefixKey, Screen, WordScreen};
use super::words::Word;

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

    /// Whether `candidate` matches this prefix (docs/CONTRACT.md section 3).
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

/// Completes `prefix` against `candidates` (docs/CONTRACT.md section 4).
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
/// candidates are first screened by their first bytes alone, without branching on the data,
/// then matched, counted through a hash table of indices, and the smallest [`MAX_VALUES`]
/// picked by selection.
pub fn complete_prefix<I, S>(prefix: &Prefix, candidates: I) -> Completion
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let scanned: Vec<S> = candidates.into_iter().take(SCAN_LIMIT).collect();
    let matched = matching(&prefix.key, &scanned);
    let (total, smallest) = smallest::count_and_smallest(&scanned, &matched, MAX_VALUES);
    Completion {
        values: smallest.into_iter().map(str::to_owned).collect(),
        total,
        has_more: total > MAX_VALUES,
    }
}

/// Indices of the candidates that are not over-long and match `prefix`, in source order.
/// `scanned` holds at most [`SCAN_LIMIT`] candidates, so indices fit in `u32`.
fn matching<S: AsRef<str>>(prefix: &PrefixKey, scanned: &[S]) -> Vec<u32> {
    let text = |at: usize| scanned[at].as_ref();
    let (certain, mut possible) = match prefix.screen() {
        None => {
            return (0..scanned.len())
                .filter(|&at| !is_over_long(text(at)))
                .map(|at| at as u32)
                .collect();
        }
        // One loop per word width, so the width is not decided per candidate.
        Some(Screen::Narrow(screen)) => screen_all(screen, scanned),
        Some(Screen::Wide(screen)) => screen_all(screen, scanned),
    };
    let mut buffers = KeyBuffers::default();
    possible.retain(|&at| {
        let candidate = text(at as usize);
        !is_over_long(candidate) && prefix.matches_admitted(candidate, &mut buffers)
    });
    merge_increasing(certain, possible)
}

/// Screens every candidate by its first bytes: the indices that certainly match (and are not
/// over-long), and those that may match, both increasing.
fn screen_all<W: Word, S: AsRef<str>>(
    screen: WordScreen<W>,
    scanned: &[S],
) -> (Vec<u32>, Vec<u32>) {
    // Branch-free screening by the first bytes: most candidates are settled here, and a
    // branch per candidate on random data would cost more than the test itself. Each index
    // is always written and kept only when it belongs to the list.
    let mut certain = vec![0u32; scanned.len()];
    let mut possible = vec![0u32; scanned.len()];
    let (mut certain_len, mut possible_len) = (0, 0);
    for (at, candidate) in scanned.iter().enumerate() {
        let bytes = candidate.as_ref().as_bytes();
        let screened = screen.sort_out(bytes);
        let sure = screened.certain & (bytes.len() <= MAX_VALUE_CHARS);
        certain[certain_len] = at as u32;
        certain_len += usize::from(sure);
        possible[possible_len] = at as u32;
        possible_len += usize::from(screened.possible & !sure);
    }
    certain.truncate(certain_len);
    possible.truncate(possible_len);
    (certain, possible)
}

/// The union of two increasing index lists, increasing.
fn merge_increasing(left: Vec<u32>, right: Vec<u32>) -> Vec<u32> {
    if right.is_empty() {
        return left;
    }
    if left.is_empty() {
        return right;
    }
    let mut merged = Vec::with_capacity(left.len() + right.len());
    let (mut left, mut right) = (left.into_iter().peekable(), right.into_iter().peekable());
    while let (Some(&l), Some(&r)) = (left.peek(), right.peek()) {
        if l < r {
            merged.push(l);
            left.next();
        } else {
            merged.push(r);
            right.next();
        }
    }
    merged.extend(left);
    merged.extend(right);
    merged
}
