//! The matcher behind `matches` and `complete()`: a prefix key prepared once, a branch-free
//! screen on the first bytes of each candidate, the leading-ASCII shortcut, and reusable
//! buffers for the general path. See the parent module's docs for why the shortcuts hold.

use hashbrown::HashMap;

use super::{general_key_into, key, key_extends, stable_first_key_char};
use crate::core::words;

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
