//! Invariants of the matching key and the prefix relation (docs/CONTRACT.md section 3).

use unicode_normalization::{UnicodeNormalization, is_nfkd};

use super::{Violation, abbreviate, by_definition, ensure, keys_related};
use crate::core::key::{case_fold, general_key, is_default_ignorable, key, matches};

/// The one character whose case variants the key does not unify (docs/CONTRACT.md section 3,
/// property 3): it folds to itself but uppercases to "I". It is excluded wherever it appears after
/// NFKD (U+1D6A4 MATHEMATICAL ITALIC SMALL DOTLESS I decomposes to it).
const DOTLESS_I: char = '\u{131}';

/// Whether the case properties apply to `x`: its NFKD has no [`DOTLESS_I`].
fn case_comparable(x: &str) -> bool {
    !x.nfkd().any(|c| c == DOTLESS_I)
}

/// Characters of each string [`check_key_bytes`] checks. The key is built from local rules:
/// the longest decomposition is 18 characters (U+FDFA), the longest case folding 3, a
/// stream-safe run of non-starters 30, and the matcher's screen reads 8 bytes; 64 characters
/// hold any of these with context around it. The checks make about 150 passes over the two
/// strings, so longer strings only slowed the fuzzer (to under 100 inputs a second at 4 KiB)
/// without reaching new rules; the property tests cover long strings.
pub const MAX_KEY_CASE_CHARS: usize = 64;

/// Decodes `data` as two strings split at the first 0xFF byte (lossy UTF-8), each cut to its
/// first [`MAX_KEY_CASE_CHARS`] characters, and checks [`check_key`] on both and
/// [`check_pair`] both ways.
pub fn check_key_bytes(data: &[u8]) -> Result<(), Violation> {
    let (left, right) = match data.iter().position(|&b| b == 0xFF) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let left = case_string(left);
    let right = case_string(right);
    check_key(&left)?;
    check_key(&right)?;
    check_pair(&left, &right)?;
    check_pair(&right, &left)
}

/// `bytes` as lossy UTF-8, cut to its first [`MAX_KEY_CASE_CHARS`] characters (a character
/// takes at most four bytes, so no more bytes are decoded than can count).
fn case_string(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(4 * MAX_KEY_CASE_CHARS)];
    String::from_utf8_lossy(head)
        .chars()
        .take(MAX_KEY_CASE_CHARS)
        .collect()
}

/// Properties 1 to 4 and 7 of docs/CONTRACT.md section 3 for one string: the key is idempotent,
/// NFKD, fold-stable, free of default ignorables, unchanged by normalizing or case-mapping the
/// input, equal on the fast and general paths; `x` matches itself and its own key prefixes
/// at starter boundaries exactly as the definition says.
pub fn check_key(x: &str) -> Result<(), Violation> {
    let shown = || abbreviate(x);
    let k = key(x);
    // Only ASCII takes the fast path; any other string's key is the general key already.
    ensure(
        !x.is_ascii() || k == general_key(x),
        "fast path key == general key",
        shown,
    )?;
    ensure(key(&k) == k, "key is idempotent", shown)?;
    ensure(is_nfkd(&k), "key is NFKD", shown)?;
    ensure(case_fold(&k) == *k, "key is fold-stable", shown)?;
    ensure(
        !k.chars().any(is_default_ignorable),
        "key has no default ignorables",
        shown,
    )?;
    for (form, normalized) in normal_forms(x) {
        ensure(key(&normalized) == k, form, shown)?;
    }
    if case_comparable(x) {
        let decomposed: String = x.nfkd().collect();
        ensure(
            key(&decomposed.to_uppercase()) == k,
            "key(upper(NFKD x)) == key(x)",
            shown,
        )?;
        ensure(
            key(&decomposed.to_lowercase()) == k,
            "key(lower(NFKD x)) == key(x)",
            shown,
        )?;
    }
    ensure(matches(x, x), "matches is reflexive", shown)?;
    ensure(matches("", x), "the empty prefix matches everything", shown)?;
    // The first raw prefixes of x, matched against x, agree with the definition (x keyed
    // once, not once per prefix).
    for (end, _) in x.char_indices().skip(1).take(16) {
        let prefix = &x[..end];
        ensure(
            matches(prefix, x) == keys_related(&key(prefix), &k),
            "matches == definition on raw prefixes",
            || format!("{} within {}", abbreviate(prefix), shown()),
        )?;
    }
    Ok(())
}

/// Properties 2, 3, 5 and the fast-path agreement of docs/CONTRACT.md section 3 for a pair:
/// `matches` equals its definition, is invariant under NFC/NFD/NFKC/NFKD and case mapping of either
/// side, and mutual matching is key equality.
pub fn check_pair(prefix: &str, candidate: &str) -> Result<(), Violation> {
    let shown = || {
        format!(
            "prefix {} candidate {}",
            abbreviate(prefix),
            abbreviate(candidate)
        )
    };
    let expected = by_definition(prefix, candidate);
    ensure(
        matches(prefix, candidate) == expected,
        "matches == definition",
        shown,
    )?;
    for (form, normalized) in normal_forms(prefix) {
        ensure(matches(&normalized, candidate) == expected, form, shown)?;
    }
    for (form, normalized) in normal_forms(candidate) {
        ensure(matches(prefix, &normalized) == expected, form, shown)?;
    }
    if case_comparable(prefix) && case_comparable(candidate) {
        let upper_prefix: String = prefix.nfkd().collect::<String>().to_uppercase();
        let lower_candidate: String = candidate.nfkd().collect::<String>().to_lowercase();
        ensure(
            matches(&upper_prefix, &lower_candidate) == expected,
            "matches is case-insensitive",
            shown,
        )?;
    }
    let mutual = matches(prefix, candidate) && matches(candidate, prefix);
    ensure(
        mutual == (key(prefix) == key(candidate)),
        "mutual match iff equal keys",
        shown,
    )
}

/// `x` in NFC, NFD, NFKC and NFKD, each named by the invariant it feeds.
fn normal_forms(x: &str) -> [(&'static str, String); 4] {
    [
        ("invariant under NFC", x.nfc().collect()),
        ("invariant under NFD", x.nfd().collect()),
        ("invariant under NFKC", x.nfkc().collect()),
        ("invariant under NFKD", x.nfkd().collect()),
    ]
}
