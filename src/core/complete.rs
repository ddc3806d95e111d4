//! `complete()` of SPEC section 4: bounded, deduplicated, code-point-sorted prefix matching.

use std::borrow::Cow;

use super::bounds::{MAX_VALUE_CHARS, MAX_VALUES, SCAN_LIMIT};
use super::key::{key, key_extends};

/// A value longer than [`MAX_VALUE_CHARS`] Unicode scalar values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("value is {chars} characters long; the limit is {MAX_VALUE_CHARS}")]
pub struct ValueTooLong {
    /// Length of the rejected value, in Unicode scalar values.
    pub chars: usize,
}

/// Whether `s` is longer than [`MAX_VALUE_CHARS`] scalar values, without counting past the
/// bound needlessly.
pub(crate) fn is_over_long(s: &str) -> bool {
    // A UTF-8 scalar value takes at least one byte, so a short byte length settles it.
    s.len() > MAX_VALUE_CHARS && s.chars().nth(MAX_VALUE_CHARS).is_some()
}

/// A completion prefix that is already length-checked and keyed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prefix {
    key: String,
}

impl Prefix {
    /// Checks the length bound and computes the matching key.
    pub fn new(raw: &str) -> Result<Prefix, ValueTooLong> {
        if is_over_long(raw) {
            return Err(ValueTooLong {
                chars: raw.chars().count(),
            });
        }
        Ok(Prefix {
            key: key(raw).into_owned(),
        })
    }

    /// The matching key of the prefix.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Whether `candidate` matches this prefix (SPEC section 3).
    pub fn matches(&self, candidate: &str) -> bool {
        if self.key.is_empty() {
            return true;
        }
        let candidate_key: Cow<'_, str> = key(candidate);
        key_extends(&self.key, &candidate_key)
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
pub fn complete_prefix<I, S>(prefix: &Prefix, candidates: I) -> Completion
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut found: Vec<String> = Vec::new();
    for candidate in candidates.into_iter().take(SCAN_LIMIT) {
        let candidate = candidate.as_ref();
        if is_over_long(candidate) || !prefix.matches(candidate) {
            continue;
        }
        found.push(candidate.to_owned());
    }
    found.sort_unstable();
    found.dedup();
    let total = found.len();
    found.truncate(MAX_VALUES);
    Completion {
        values: found,
        total,
        has_more: total > MAX_VALUES,
    }
}
