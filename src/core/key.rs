//! The matching key and the prefix relation of SPEC section 3.
//!
//! # Definition
//!
//! `key(x) = NFKD(strip_DI(casefold(NFKD(x))))`: compatibility decomposition, full Unicode
//! case folding (CaseFolding.txt statuses C and F, so "ß" becomes "ss" and KELVIN SIGN becomes
//! "k"), removal of Default_Ignorable_Code_Point characters, and a final NFKD that restores
//! canonical order after folding changed combining classes (U+0345 folds to the starter "ι")
//! or removal brought marks together. The first step is NFKD rather than NFD because the
//! NFD-first forms of Unicode D146/D147 are not invariant under NFKD of their input
//! ("\u{345}\u{FF9E}" is the classic witness). On every scalar value the key equals
//! `NFKD(NFKC_Casefold(x))` (checked exhaustively by `tests/unicode_exhaustive.rs`).
//!
//! `matches(prefix, candidate)` holds when `key(prefix)` is empty, or `key(candidate)` starts
//! with `key(prefix)` and the character after it is absent or a starter (canonical combining
//! class 0). "f" matches "ﬁle", but "e" does not match "é" (the next key character is
//! U+0301).
//!
//! # Unicode data
//!
//! Everything uses Unicode [`UNICODE_VERSION`] (18.0.0):
//! - NFKD and canonical combining classes: `unicode-normalization` 0.1.26, whose tables are
//!   Unicode 18.0.0 (`unicode_normalization::UNICODE_VERSION`);
//! - case folding: `unicase` 2.10.0, which does not state a version; it agrees with ICU4X 2.4
//!   (Unicode 18.0.0 data) on all 1,112,064 scalar values;
//! - the Default_Ignorable_Code_Point table below: DerivedCoreProperties.txt of Unicode 18.0.0.
//!
//! `tests/unicode_exhaustive.rs` compares each of these with ICU4X over every scalar value and
//! fails when a dependency update changes the version, so this paragraph stays true.
//!
//! # ASCII fast path
//!
//! For ASCII input the key is `to_ascii_lowercase`. More generally, cutting a string next to
//! an ASCII character cuts its key at the same place (`key(a + b) == key(a) + key(b)` when `a`
//! ends or `b` starts with ASCII), because ASCII characters are starters that NFKD never
//! decomposes or reorders across, folding maps to ASCII, and none is default ignorable. The
//! matcher uses this to decide most candidates from their leading ASCII bytes without
//! computing a key.

use std::borrow::Cow;

use hashbrown::HashMap;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::canonical_combining_class;

use super::words;

/// The Unicode version of every table the key depends on.
pub const UNICODE_VERSION: (u8, u8, u8) = (18, 0, 0);

/// Default_Ignorable_Code_Point ranges of Unicode 18.0.0 (DerivedCoreProperties.txt), merged
/// and sorted. Verified against ICU4X over every scalar value by `tests/unicode_exhaustive.rs`.
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
    let mut buffers = KeyBuffers::default();
    buffers.general_key(x);
    buffers.key
}

/// The character that the key of every string beginning with `c` begins with, when `c`
/// alone decides it; `None` when later characters can matter (`c` decomposes to a leading
/// non-starter, or its key is empty or begins with a non-starter).
///
/// `c`'s NFKD begins with a starter that nothing reorders across and folding sees alone, so
/// the key of the string begins with the first character of that starter's key, provided it
/// is itself a starter. `tests/unicode_exhaustive.rs` checks this for every scalar value.
///
/// ```
/// use rea::core::key::stable_first_key_char;
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

/// Reusable scratch for keying many candidates: buffers, so the general path allocates only
/// for folding, and a memo of [`stable_first_key_char`], which settles most non-ASCII
/// candidates without computing their key.
#[derive(Debug, Default)]
pub(crate) struct KeyBuffers {
    decomposed: String,
    key: String,
    first_chars: HashMap<char, Option<char>>,
}

impl KeyBuffers {
    /// [`stable_first_key_char`], memoized.
    fn stable_first(&mut self, c: char) -> Option<char> {
        *self
            .first_chars
            .entry(c)
            .or_insert_with(|| stable_first_key_char(c))
    }

    /// The general-path key of `x`, borrowed from the buffers.
    pub(crate) fn general_key(&mut self, x: &str) -> &str {
        self.decomposed.clear();
        self.decomposed.extend(x.nfkd());
        let folded = case_fold(&self.decomposed);
        self.key.clear();
        self.key
            .extend(folded.chars().filter(|&c| !is_default_ignorable(c)).nfkd());
        &self.key
    }
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

/// A prefix key prepared for matching many candidates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PrefixKey {
    key: String,
    /// Length in bytes of the key's leading ASCII run.
    ascii_run: usize,
    /// `None` when the key is empty and everything matches.
    screen: Option<Screen>,
}

impl PrefixKey {
    pub(crate) fn new(prefix: &str) -> PrefixKey {
        let key = key(prefix).into_owned();
        let ascii_run = key.bytes().take_while(u8::is_ascii).count();
        let screen = Screen::new(&key, ascii_run);
        PrefixKey {
            key,
            ascii_run,
            screen,
        }
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.key
    }

    /// `matches(prefix, candidate)` for this prefix's key, using `buffers` when a candidate
    /// needs the general path.
    pub(crate) fn matches(&self, candidate: &str, buffers: &mut KeyBuffers) -> bool {
        match self.screen {
            None => true,
            Some(screen) => {
                screen.admits(candidate.as_bytes()) && self.matches_admitted(candidate, buffers)
            }
        }
    }

    /// The screen for this key; `None` when the key is empty and everything matches.
    pub(crate) fn screen(&self) -> Option<Screen> {
        self.screen
    }

    /// [`PrefixKey::matches`] for a candidate that this key's [`Screen`] admitted.
    #[inline]
    pub(crate) fn matches_admitted(&self, candidate: &str, buffers: &mut KeyBuffers) -> bool {
        let prefix = self.key.as_bytes();
        let bytes = candidate.as_bytes();
        let q = self.ascii_run;
        // Walk the candidate's leading ASCII run against the prefix key's: the candidate's
        // key starts with that run lowercased (see the module docs).
        let mut r = 0;
        while r < q && r < bytes.len() && bytes[r].is_ascii() {
            if bytes[r].to_ascii_lowercase() != prefix[r] {
                return false;
            }
            r += 1;
        }
        if r == bytes.len() {
            // An all-ASCII candidate whose key is exactly its r bytes.
            return r == prefix.len();
        }
        if bytes[r].is_ascii() {
            // r == q: the candidate's key has an ASCII character (a starter) at position q,
            // a match exactly when the prefix key ends there.
            return q == prefix.len();
        }
        self.matches_non_ascii_tail(r, candidate, buffers)
    }

    /// The rest of [`PrefixKey::matches_admitted`]: the candidate's first `ascii`
    /// bytes are ASCII and agree with the key, and a non-ASCII character follows.
    #[inline(never)]
    fn matches_non_ascii_tail(
        &self,
        ascii: usize,
        candidate: &str,
        buffers: &mut KeyBuffers,
    ) -> bool {
        // ascii <= the key's ASCII run, so both cuts are on character boundaries, and the
        // candidate's key is its lowercased ASCII run followed by the key of the tail.
        let (rest, tail) = (&self.key[ascii..], &candidate[ascii..]);
        let lead = tail.chars().next().and_then(|c| buffers.stable_first(c));
        if let Some(lead) = lead {
            match rest.chars().next() {
                // The key continues with `lead`, a starter, right where the prefix ends.
                None => return true,
                Some(expected) if expected != lead => return false,
                Some(_) => {}
            }
        }
        key_extends(rest, buffers.general_key(tail))
    }
}

/// A cheap, branch-free test that rules out most candidates from their first bytes alone:
/// a candidate passes unless its key provably does not start with the prefix key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Screen {
    /// Up to eight leading ASCII bytes of the prefix key, big-endian, zero-padded.
    word: u64,
    /// 0xFF over the bytes of `word` that count.
    mask: u64,
    /// The key starts with a non-ASCII character.
    non_ascii_lead: bool,
}

impl Screen {
    fn new(key: &str, ascii_run: usize) -> Option<Screen> {
        if key.is_empty() {
            return None;
        }
        let counted = ascii_run.min(8);
        let word = words::padded_word(&key.as_bytes()[..counted]);
        let mask = u64::MAX.checked_shl(8 * (8 - counted) as u32).unwrap_or(0);
        Some(Screen {
            word,
            mask,
            non_ascii_lead: counted == 0,
        })
    }

    /// Whether a candidate starting with `bytes` may match. The candidate's key starts with
    /// its leading ASCII run lowercased (see the module docs), so when the first counted
    /// bytes are all ASCII they must equal the prefix key's, ignoring case; a non-ASCII byte
    /// among them, or a non-ASCII first byte when the key starts with one, needs a closer
    /// look. An empty candidate never matches a non-empty key.
    #[inline]
    pub(crate) fn admits(self, bytes: &[u8]) -> bool {
        let Some(&lead) = bytes.first() else {
            return false;
        };
        if self.non_ascii_lead {
            return !lead.is_ascii();
        }
        let word = words::padded_word(bytes);
        let same = (words::ascii_lowercase_word(word) ^ self.word) & self.mask == 0;
        same | words::has_non_ascii(word, self.mask)
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
