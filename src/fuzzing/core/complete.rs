//! Invariants of `complete()` (docs/CONTRACT.md section 4).

use hashbrown::{HashMap, HashSet};

use super::{Violation, abbreviate, ensure, keys_related};
use crate::core::bounds::{MAX_VALUE_CHARS, MAX_VALUES, SCAN_LIMIT};
use crate::core::complete::{
    Completion, Pick, Prefix, PrefixIndex, complete, complete_ordered, extends_ordered,
};
use crate::core::key::key;

/// Lengths, in characters, a fuzz input can stretch a value to: around the value bound.
const STRETCH_LENGTHS: [usize; 4] = [
    MAX_VALUE_CHARS - 1,
    MAX_VALUE_CHARS,
    MAX_VALUE_CHARS + 1,
    5_000,
];

/// Most candidates one input lists before its repeats (the rest of the body is ignored).
pub const MAX_LISTED_CANDIDATES: usize = 128;

/// Most candidates one input gives, repeats included.
pub const MAX_REPEATED_CANDIDATES: usize = 2_048;

/// One `complete()` call.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CompleteCase {
    /// The raw prefix.
    pub prefix: String,
    /// The raw candidates, in source order.
    pub candidates: Vec<String>,
}

impl CompleteCase {
    /// Decodes arbitrary bytes: `[copies][stretch][body]`. The body, split at 0xFF bytes and
    /// decoded as lossy UTF-8, gives the prefix then at most [`MAX_LISTED_CANDIDATES`]
    /// candidates. The candidate list is repeated once; for `copies` 252 to 255, 4, 16, 64 or
    /// 256 times, at most [`MAX_REPEATED_CANDIDATES`] candidates in all (past [`MAX_VALUES`]
    /// matches with few distinct candidates, which takes the counting path). Inputs never
    /// reach [`SCAN_LIMIT`]: a case at that bound costs as much as thousands of small ones,
    /// and libFuzzer keeps such cases in its corpus, so they set the target's pace. The bound
    /// itself is checked by [`check_complete`] in the replay tests and a property test.
    /// When `stretch` bits 4-7 are all set (one input in sixteen, for the same reason), bits
    /// 0-1 choose what to lengthen (prefix, first candidate) and bits 2-3 the length, around
    /// [`MAX_VALUE_CHARS`].
    pub fn from_bytes(data: &[u8]) -> CompleteCase {
        let (copies, stretch, body) = match data {
            [copies, stretch, body @ ..] => (*copies, *stretch, body),
            _ => (0, 0, data),
        };
        let mut pieces = body
            .split(|&b| b == 0xFF)
            .map(|piece| String::from_utf8_lossy(piece).into_owned());
        let mut prefix = pieces.next().unwrap_or_default();
        // Distinct work grows with the candidates of one list, and the properties need few:
        // the repeat modes reach past MAX_VALUES.
        let once: Vec<String> = pieces.take(MAX_LISTED_CANDIDATES).collect();
        let copies = match copies {
            0..=251 => 1,
            252 => 4,
            253 => 16,
            254 => 64,
            255 => 256,
        };
        let length = (once.len() * copies).min(MAX_REPEATED_CANDIDATES);
        let mut candidates: Vec<String> = once.iter().cycle().take(length).cloned().collect();
        // Only one long value each, so a case stays cheap to check.
        let stretch = if stretch >> 4 == 0xF { stretch } else { 0 };
        let length = STRETCH_LENGTHS[usize::from(stretch >> 2) & 3];
        if stretch & 1 != 0 {
            prefix = stretched(&prefix, length);
        }
        if stretch & 2 != 0
            && let Some(first) = candidates.first_mut()
        {
            *first = stretched(first, length);
        }
        CompleteCase { prefix, candidates }
    }
}

/// `text` cycled to exactly `length` characters (unchanged when empty).
fn stretched(text: &str, length: usize) -> String {
    if text.is_empty() {
        return String::new();
    }
    text.chars().cycle().take(length).collect()
}

/// Decodes `data` with [`CompleteCase::from_bytes`] and runs [`check_complete`] without its
/// index comparison, which the `index_equality` target runs on the same input layout (so
/// each target keeps its pace).
pub fn check_complete_bytes(data: &[u8]) -> Result<(), Violation> {
    let case = CompleteCase::from_bytes(data);
    check_scan(&case.prefix, &case.candidates, false)
}

/// Every property of docs/CONTRACT.md section 4: an over-long prefix is the typed error; otherwise
/// the result equals filter, sort, dedup and truncate over the first [`SCAN_LIMIT`] candidates,
/// values are strictly increasing, match, came from the input and are at most [`MAX_VALUES`],
/// `total` and `has_more` are consistent, and permuting or duplicating the scanned candidates
/// changes nothing.
///
/// It also runs [`check_index`]'s comparison, so every test of `complete()` checks the index.
pub fn check_complete(prefix: &str, candidates: &[String]) -> Result<(), Violation> {
    check_scan(prefix, candidates, true)
}

/// [`check_complete`], with the index comparison when `with_index`.
fn check_scan(prefix: &str, candidates: &[String], with_index: bool) -> Result<(), Violation> {
    let shown = || {
        format!(
            "prefix {} with {} candidates, first {}",
            abbreviate(prefix),
            candidates.len(),
            candidates
                .first()
                .map_or_else(|| "none".to_owned(), |c| abbreviate(c))
        )
    };
    let prefix_chars = prefix.chars().count();
    let result = complete(prefix, candidates);
    if prefix_chars > MAX_VALUE_CHARS {
        return ensure(
            result.is_err_and(|error| error.chars == prefix_chars),
            "an over-long prefix is ValueTooLong with its length",
            shown,
        );
    }
    let Ok(done) = result else {
        return ensure(false, "a prefix within the bound completes", shown);
    };
    let scanned = &candidates[..candidates.len().min(SCAN_LIMIT)];
    if with_index {
        index_agrees(prefix, candidates, &done, shown)?;
    }
    ensure(
        done == reference(prefix, scanned),
        "complete == filter, sort, dedup, truncate",
        shown,
    )?;
    ensure(
        done.values.windows(2).all(|pair| pair[0] < pair[1]),
        "values strictly increase",
        shown,
    )?;
    ensure(
        done.values.len() <= MAX_VALUES,
        "at most MAX_VALUES values",
        shown,
    )?;
    ensure(
        done.values.len() == done.total.min(MAX_VALUES)
            && done.has_more == (done.total > MAX_VALUES),
        "total and has_more are consistent",
        shown,
    )?;
    // Both sets are built once: looking each value up by a scan of the input, or keying the
    // prefix again per value, made this check quadratic on inputs near the bounds.
    let scanned_set: HashSet<&str> = scanned.iter().map(String::as_str).collect();
    let prefix_key = key(prefix);
    ensure(
        done.values.iter().all(|value| {
            scanned_set.contains(value.as_str()) && keys_related(&prefix_key, &key(value))
        }),
        "every value came from the scanned input and matches",
        shown,
    )?;
    let reversed: Vec<&String> = scanned.iter().rev().collect();
    ensure(
        complete(prefix, &reversed).as_ref() == Ok(&done),
        "permuting the scanned candidates changes nothing",
        shown,
    )?;
    if scanned.len() <= SCAN_LIMIT / 2 {
        let doubled: Vec<&String> = scanned.iter().flat_map(|c| [c, c]).collect();
        ensure(
            complete(prefix, &doubled).as_ref() == Ok(&done),
            "duplicating the scanned candidates changes nothing",
            shown,
        )?;
    }
    Ok(())
}

/// Decodes `data` with [`CompleteCase::from_bytes`] and runs [`check_index`].
pub fn check_index_bytes(data: &[u8]) -> Result<(), Violation> {
    let case = CompleteCase::from_bytes(data);
    check_index(&case.prefix, &case.candidates)
}

/// The prefix index of docs/CONTRACT.md section 4 answers exactly what `complete()` answers:
/// [`PrefixIndex`] built from `candidates`, with each way of picking the values, and
/// [`complete_ordered`] over an ordered table derived from them (ASCII candidates lowercased,
/// sorted, deduplicated), compared with `complete()` on the same table. An over-long prefix
/// has nothing to compare.
pub fn check_index(prefix: &str, candidates: &[String]) -> Result<(), Violation> {
    let Ok(done) = complete(prefix, candidates) else {
        return Ok(());
    };
    index_agrees(prefix, candidates, &done, || {
        format!(
            "prefix {} with {} candidates",
            abbreviate(prefix),
            candidates.len()
        )
    })
}

/// The tables whose index [`check_index`] checks: the candidates, and an ordered table derived
/// from them.
fn index_agrees(
    prefix: &str,
    candidates: &[String],
    done: &Completion,
    shown: impl Fn() -> String,
) -> Result<(), Violation> {
    let Ok(checked) = Prefix::new(prefix) else {
        return Ok(());
    };
    let index = PrefixIndex::new(candidates);
    for pick in [Pick::Cheaper, Pick::FromRange, Pick::ByRank] {
        ensure(
            index.complete_by(&checked, pick) == *done,
            "the prefix index answers what complete() answers",
            &shown,
        )?;
    }
    let mut ordered: Vec<String> = candidates
        .iter()
        .filter(|candidate| candidate.is_ascii())
        .map(|candidate| candidate.to_ascii_lowercase())
        .collect();
    ordered.sort_unstable();
    ordered.dedup();
    ordered.retain(|candidate| extends_ordered(None, candidate));
    let expected = complete(prefix, &ordered).unwrap_or_default();
    ensure(
        complete_ordered(&checked, ordered.len(), |at| &ordered[at]) == expected,
        "an ordered table answers what complete() answers",
        &shown,
    )?;
    ensure(
        PrefixIndex::new(&ordered).complete(&checked) == expected,
        "the prefix index of an ordered table answers what complete() answers",
        &shown,
    )
}

/// docs/CONTRACT.md section 4 read literally with the crate's key: see [`literal_completion`]. The
/// relation is a function of the candidate, so it is computed once per distinct candidate
/// (inputs near [`SCAN_LIMIT`] repeat a few candidates thousands of times).
fn reference(prefix: &str, scanned: &[String]) -> Completion {
    let prefix_key = key(prefix);
    let mut known: HashMap<String, bool> = HashMap::new();
    literal_completion(scanned, |candidate| match known.get(candidate) {
        Some(&matched) => matched,
        None => {
            let matched = keys_related(&prefix_key, &key(candidate));
            known.insert(candidate.to_owned(), matched);
            matched
        }
    })
}

/// docs/CONTRACT.md section 4 read literally, for any relation `matches`: take the first
/// [`SCAN_LIMIT`] candidates, filter out over-long and non-matching ones, sort, dedup,
/// count, truncate to [`MAX_VALUES`].
pub fn literal_completion(
    candidates: &[String],
    mut matches: impl FnMut(&str) -> bool,
) -> Completion {
    // Sorted by reference, and only the values kept are copied.
    let mut values: Vec<&String> = candidates
        .iter()
        .take(SCAN_LIMIT)
        .filter(|candidate| candidate.chars().count() <= MAX_VALUE_CHARS && matches(candidate))
        .collect();
    values.sort();
    values.dedup();
    let total = values.len();
    values.truncate(MAX_VALUES);
    Completion {
        values: values.into_iter().cloned().collect(),
        total,
        has_more: total > MAX_VALUES,
    }
}
