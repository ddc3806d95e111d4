//! The matching key and the prefix relation of SPEC section 3.
//!
//! `key(x) = NFKD(strip_DI(casefold(NFKD(x))))` with full (C+F) case folding from `unicase`
//! and NFKD from `unicode-normalization`. ASCII input takes a fast path
//! (`to_ascii_lowercase`), which agrees with the general path.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

/// Default_Ignorable_Code_Point ranges (DerivedCoreProperties.txt), merged and sorted.
/// Verified against ICU4X over every scalar value by `tests/unicode_exhaustive.rs`.
const DEFAULT_IGNORABLE: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),
    ('\u{034F}', '\u{034F}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{115F}', '\u{1160}'),
    ('\u{17B4}', '\u{17B5}'),
    ('\u{180B}', '\u{180F}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{202A}', '\u{202E}'),
    ('\u{2060}', '\u{206F}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{FE00}', '\u{FE0F}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFA0}', '\u{FFA0}'),
    ('\u{FFF0}', '\u{FFF8}'),
    ('\u{1BCA0}', '\u{1BCA3}'),
    ('\u{1D173}', '\u{1D17A}'),
    ('\u{E0000}', '\u{E0FFF}'),
];

/// Whether `c` has the Default_Ignorable_Code_Point property.
pub fn is_default_ignorable(c: char) -> bool {
    DEFAULT_IGNORABLE
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Full Unicode case folding (CaseFolding.txt statuses C and F) of `s`.
pub fn case_fold(s: &str) -> String {
    unicase::UniCase::new(s).to_folded_case()
}

/// The matching key of `x`: `NFKD(strip_DI(casefold(NFKD(x))))`.
///
/// ```
/// assert_eq!(rea::core::key("Straße"), "strasse");
/// assert_eq!(rea::core::key("ﬁle"), "file");
/// ```
pub fn key(x: &str) -> Cow<'_, str> {
    if x.is_ascii() {
        if x.bytes().any(|b| b.is_ascii_uppercase()) {
            return Cow::Owned(x.to_ascii_lowercase());
        }
        return Cow::Borrowed(x);
    }
    Cow::Owned(general_key(x))
}

/// The key computed without the ASCII fast path. Public so tests can show both paths agree.
pub fn general_key(x: &str) -> String {
    let decomposed: String = x.nfkd().collect();
    let folded = case_fold(&decomposed);
    folded
        .chars()
        .filter(|&c| !is_default_ignorable(c))
        .nfkd()
        .collect()
}

/// Whether the keyed candidate `candidate_key` extends the keyed prefix `prefix_key` at a
/// starter boundary (the character after the prefix is absent or has combining class 0).
pub fn key_extends(prefix_key: &str, candidate_key: &str) -> bool {
    match candidate_key.strip_prefix(prefix_key) {
        None => false,
        Some(rest) => rest
            .chars()
            .next()
            .is_none_or(|c| canonical_combining_class(c) == 0),
    }
}

/// The prefix relation: `key(prefix)` is empty, or `key(candidate)` starts with it and the
/// next character of `key(candidate)` is absent or a starter.
///
/// ```
/// use rea::core::matches;
/// assert!(matches("f", "ﬁle"));
/// assert!(matches("0x10", "０ｘ１０ＡＢ"));
/// assert!(matches("ㅎ", "한"));
/// assert!(!matches("e", "é"));
/// assert!(!matches("i", "İstanbul"));
/// ```
pub fn matches(prefix: &str, candidate: &str) -> bool {
    let prefix_key = key(prefix);
    prefix_key.is_empty() || key_extends(&prefix_key, &key(candidate))
}
