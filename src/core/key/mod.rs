//! The matching key and the prefix relation of docs/CONTRACT.md section 3 (documented on
//! [`crate::core`]).

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

mod matcher;

pub(crate) use matcher::{KeyBuffers, PrefixKey, Screen, WordScreen};

/// The Unicode version of every table the key depends on.
pub const UNICODE_VERSION: (u8, u8, u8) = (18, 0, 0);

/// Default_Ignorable_Code_Point ranges of Unicode 18.0.0 (DerivedCoreProperties.txt), merged
/// and sorted. Verified against ICU4X over every scalar value by `tests/it/unicode_exhaustive.rs`.
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
    // Every default ignorable is at or above U+00AD; most text never reaches the search.
    c >= '\u{00AD}'
        && DEFAULT_IGNORABLE
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
    unicase::UniCase::unicode(s).to_folded_case()
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
    let mut key = String::new();
    general_key_into(x, &mut String::new(), &mut key);
    key
}

/// Writes the general-path key of `x` into `key`, using `decomposed` as scratch; both are
/// cleared first, so reused buffers spare the allocations.
fn general_key_into(x: &str, decomposed: &mut String, key: &mut String) {
    decomposed.clear();
    decomposed.extend(x.nfkd());
    let folded = case_fold(decomposed);
    key.clear();
    key.extend(folded.chars().filter(|&c| !is_default_ignorable(c)).nfkd());
}

/// The character that the key of every string beginning with `c` begins with, when `c`
/// alone decides it; `None` when later characters can matter (`c` decomposes to a leading
/// non-starter, or its key is empty or begins with a non-starter).
///
/// `c`'s NFKD begins with a starter that nothing reorders across and folding sees alone, so
/// the key of the string begins with the first character of that starter's key, provided it
/// is itself a starter. `tests/it/unicode_exhaustive.rs` checks this for every scalar value.
///
/// ```
/// use rea::core::stable_first_key_char;
/// assert_eq!(stable_first_key_char('Σ'), Some('σ'));
/// assert_eq!(stable_first_key_char('ﬁ'), Some('f'));
/// assert_eq!(stable_first_key_char('\u{301}'), None);
/// assert_eq!(stable_first_key_char('\u{200B}'), None);
/// ```
pub fn stable_first_key_char(c: char) -> Option<char> {
    let mut lead = None;
    unicode_normalization::char::decompose_compatible(c, |d| {
        lead.get_or_insert(d);
    });
    let lead = lead.filter(|&d| canonical_combining_class(d) == 0)?;
    let mut utf8 = [0u8; 4];
    general_key(lead.encode_utf8(&mut utf8))
        .chars()
        .next()
        .filter(|&first| canonical_combining_class(first) == 0)
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
    PrefixKey::new(prefix).matches(candidate, &mut KeyBuffers::default())
}
