//! The matcher behind `matches` and `complete()`: a prefix key prepared once, a branch-free
//! screen on the first bytes of each candidate, the leading-ASCII shortcut, and reusable
//! buffers for the general path. See the parent module's docs for why the shortcuts hold.

use hashbrown::HashMap;

use super::{general_key_into, key, key_extends, stable_first_key_char};
use crate::core::words::Word;

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
        general_key_into(x, &mut self.decomposed, &mut self.key);
        &self.key
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
        let Some(screen) = self.screen else {
            return true;
        };
        let screened = screen.sort_out(candidate.as_bytes());
        screened.certain || (screened.possible && self.matches_admitted(candidate, buffers))
    }

    /// The screen for this key; `None` when the key is empty and everything matches.
    pub(crate) fn screen(&self) -> Option<Screen> {
        self.screen
    }

    /// [`PrefixKey::matches`] for a candidate that this key's [`Screen`] found possible.
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

/// A cheap, branch-free test on the first bytes of a candidate: it rules most candidates
/// out, and for an ASCII prefix key shorter than the word it also settles most matches. The
/// word is eight bytes ([`u64`]) when the key's leading ASCII run fits in it and sixteen
/// ([`u128`]) otherwise, so long shared prefixes such as `ev-0000000` are settled here too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Screen {
    /// The key's leading ASCII run is at most eight bytes.
    Narrow(WordScreen<u64>),
    /// It is longer.
    Wide(WordScreen<u128>),
}

impl Screen {
    fn new(key: &str, ascii_run: usize) -> Option<Screen> {
        if key.is_empty() {
            return None;
        }
        Some(if ascii_run <= u64::BYTES {
            Screen::Narrow(WordScreen::new(key, ascii_run))
        } else {
            Screen::Wide(WordScreen::new(key, ascii_run))
        })
    }

    #[inline]
    fn sort_out(self, bytes: &[u8]) -> Screened {
        match self {
            Screen::Narrow(screen) => screen.sort_out(bytes),
            Screen::Wide(screen) => screen.sort_out(bytes),
        }
    }
}

/// A [`Screen`] over words of type `W`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WordScreen<W> {
    /// Up to `W::BYTES` leading ASCII bytes of the prefix key, big-endian, zero-padded.
    word: W,
    /// 0xFF over the bytes of `word` that count.
    mask: W,
    /// 0xFF over those bytes and the one after them.
    mask_and_next: W,
    /// Number of bytes `mask` covers.
    counted: usize,
    /// The whole key is the counted bytes, so a screen can confirm a match.
    decides: bool,
    /// The key starts with a non-ASCII character.
    non_ascii_lead: bool,
}

/// What [`Screen::sort_out`] found about one candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Screened {
    /// The candidate may match; when false it certainly does not.
    pub(crate) possible: bool,
    /// The candidate certainly matches.
    pub(crate) certain: bool,
}

impl<W: Word> WordScreen<W> {
    /// `key` is not empty.
    fn new(key: &str, ascii_run: usize) -> WordScreen<W> {
        let counted = ascii_run.min(W::BYTES);
        WordScreen {
            word: W::padded(&key.as_bytes()[..counted]),
            mask: W::leading_mask(counted),
            mask_and_next: W::leading_mask(counted + 1),
            counted,
            decides: counted == key.len() && counted < W::BYTES,
            non_ascii_lead: counted == 0,
        }
    }

    /// Sorts out a candidate starting with `bytes`. The candidate's key starts with its
    /// leading ASCII run lowercased (see the parent module's docs), so when the counted
    /// bytes are all ASCII they must equal the key's, ignoring case; a non-ASCII byte among
    /// them, or a non-ASCII first byte when the key starts with one, needs a closer look. When
    /// the key is just the counted bytes, a candidate that has them followed by an ASCII byte
    /// (a starter) or by nothing matches for certain. An empty candidate never matches.
    #[inline]
    pub(crate) fn sort_out(self, bytes: &[u8]) -> Screened {
        let Some(&lead) = bytes.first() else {
            return Screened {
                possible: false,
                certain: false,
            };
        };
        if self.non_ascii_lead {
            return Screened {
                possible: !lead.is_ascii(),
                certain: false,
            };
        }
        let word = W::padded(bytes);
        let same = word.ascii_lowercase().same_under(self.word, self.mask);
        let certain = self.decides
            & same
            & !word.has_non_ascii(self.mask_and_next)
            & (bytes.len() >= self.counted);
        Screened {
            possible: same | word.has_non_ascii(self.mask),
            certain,
        }
    }
}
