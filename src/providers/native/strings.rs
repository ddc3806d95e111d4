//! Printable strings in a document's bytes: runs of printable ASCII or UTF-8.

use crate::core::{MAX_VALUE_CHARS, key};
use crate::session::{Address, StringMatch, StringMatches, StringQuery};

/// Most bytes one search examines; beyond it the result says `truncated`.
pub(crate) const MAX_SCANNED_BYTES: usize = 256 * 1024 * 1024;

/// A file-backed region to scan.
pub(crate) struct ScanRegion<'a> {
    /// Name of the region (reported with each match).
    pub(crate) name: &'a str,
    /// Address of `bytes[0]`.
    pub(crate) address: u64,
    /// The region's bytes in the file.
    pub(crate) bytes: &'a [u8],
}

/// Strings of at least `query.min_chars()` characters whose key contains the key of
/// `query.contains()`, in region order, stopping at the query's limit.
pub(crate) fn search<'a>(
    regions: impl IntoIterator<Item = ScanRegion<'a>>,
    query: &StringQuery,
) -> StringMatches {
    let wanted = key(query.contains());
    let mut found = StringMatches::default();
    let mut budget = MAX_SCANNED_BYTES;
    for region in regions {
        let bytes = if region.bytes.len() > budget {
            found.truncated = true;
            &region.bytes[..budget]
        } else {
            region.bytes
        };
        budget -= bytes.len();
        for run in Runs::new(bytes, query.min_chars()) {
            if !key(run.text).contains(wanted.as_ref()) {
                continue;
            }
            if found.matches.len() == query.limit() {
                found.truncated = true;
                return found;
            }
            let (text, truncated) = bounded(run.text);
            found.matches.push(StringMatch {
                address: Address::new(region.address.wrapping_add(run.offset as u64)),
                text: text.to_owned(),
                truncated,
                segment: region.name.to_owned(),
            });
        }
        if budget == 0 {
            break;
        }
    }
    found
}

/// `text` cut to at most [`MAX_VALUE_CHARS`] characters, and whether it was cut.
fn bounded(text: &str) -> (&str, bool) {
    match text.char_indices().nth(MAX_VALUE_CHARS) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    }
}

/// One run of printable text.
struct Run<'a> {
    offset: usize,
    text: &'a str,
}

/// Iterates maximal runs of printable characters (no controls except tab) of at least
/// `min_chars` characters.
struct Runs<'a> {
    bytes: &'a [u8],
    position: usize,
    min_chars: usize,
}

impl<'a> Runs<'a> {
    fn new(bytes: &'a [u8], min_chars: usize) -> Runs<'a> {
        Runs {
            bytes,
            position: 0,
            min_chars: min_chars.max(1),
        }
    }
}

impl<'a> Iterator for Runs<'a> {
    type Item = Run<'a>;

    fn next(&mut self) -> Option<Run<'a>> {
        while self.position < self.bytes.len() {
            let start = self.position;
            let mut chars = 0;
            while let Some(width) = printable_at(self.bytes, self.position) {
                self.position += width;
                chars += 1;
            }
            if self.position == start {
                self.position += 1;
                continue;
            }
            if chars >= self.min_chars {
                // Every character was checked to be valid UTF-8 on its own.
                let text = std::str::from_utf8(&self.bytes[start..self.position]).ok()?;
                return Some(Run {
                    offset: start,
                    text,
                });
            }
        }
        None
    }
}

/// Width in bytes of the printable character at `position`, if there is one.
fn printable_at(bytes: &[u8], position: usize) -> Option<usize> {
    let lead = *bytes.get(position)?;
    let width = match lead {
        b'\t' | 0x20..=0x7e => return Some(1),
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let encoded = bytes.get(position..position + width)?;
    let c = std::str::from_utf8(encoded).ok()?.chars().next()?;
    (!c.is_control()).then_some(width)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(bytes: &[u8], min_chars: usize) -> Vec<&str> {
        Runs::new(bytes, min_chars).map(|run| run.text).collect()
    }

    #[test]
    fn runs_split_on_non_printable_bytes() {
        assert_eq!(
            texts(b"\0hello\0hi\0w\xc3\xb6rld\xff\x01tab\there", 4),
            ["hello", "w\u{f6}rld", "tab\there"]
        );
        assert_eq!(texts(b"\xe2\x82", 1), Vec::<&str>::new());
    }

    #[test]
    fn search_matches_by_key_and_stops_at_the_limit() {
        let bytes = b"\0Hello World\0hello again\0other\0";
        let region = || ScanRegion {
            name: ".rodata",
            address: 0x100,
            bytes,
        };
        let found = search([region()], &StringQuery::new("HELLO"));
        let texts: Vec<&str> = found.matches.iter().map(|m| m.text.as_str()).collect();
        assert_eq!(texts, ["Hello World", "hello again"]);
        assert_eq!(found.matches[0].address, Address::new(0x101));
        assert!(!found.truncated);
        let limited = search([region()], &StringQuery::new("").with_limit(1));
        assert_eq!(limited.matches.len(), 1);
        assert!(limited.truncated);
    }
}
