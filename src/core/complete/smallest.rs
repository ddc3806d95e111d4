//! Counting the distinct matches and picking the smallest few, in linear time and small,
//! bounded memory: a hash table of indices for distinctness, and a selection buffer that
//! refuses most values with one comparison.

use std::hash::BuildHasher;

use hashbrown::hash_table::Entry;
use hashbrown::{DefaultHashBuilder, HashTable};

use crate::core::words::padded_head;

/// Among `scanned[i]` for each `i` in `matched`: the number of distinct strings, and the
/// `limit` smallest of them in code-point order. `scanned` holds at most `u32::MAX` items
/// (the callers pass at most `SCAN_LIMIT`).
pub(super) fn count_and_smallest<'a, S: AsRef<str>>(
    scanned: &'a [S],
    matched: &[u32],
    limit: usize,
) -> (usize, Vec<&'a str>) {
    let text = |at: u32| scanned[at as usize].as_ref();
    if matched.len() <= limit {
        // Few enough to sort outright, which is cheaper than hashing.
        let mut texts: Vec<&str> = matched.iter().map(|&at| text(at)).collect();
        texts.sort_unstable();
        texts.dedup();
        return (texts.len(), texts);
    }
    // Sources such as the Evidence ledger and sorted address lists arrive strictly
    // increasing: then every value is distinct and the first ones are the smallest, which
    // one linear pass proves. Unsorted input fails the pass within its first few pairs.
    if matched.windows(2).all(|pair| text(pair[0]) < text(pair[1])) {
        let smallest = matched.iter().take(limit).map(|&at| text(at)).collect();
        return (matched.len(), smallest);
    }
    let hasher = DefaultHashBuilder::default();
    let mut seen: HashTable<u32> = HashTable::with_capacity(matched.len());
    let mut smallest = Smallest::new(limit);
    let mut total = 0;
    for &at in matched {
        let candidate = text(at);
        let hash = hasher.hash_one(candidate);
        let slot = seen.entry(
            hash,
            |&other| text(other) == candidate,
            |&other| hasher.hash_one(text(other)),
        );
        if let Entry::Vacant(slot) = slot {
            slot.insert(at);
            total += 1;
            smallest.offer(candidate);
        }
    }
    (total, smallest.into_sorted())
}

/// The `limit` smallest of the distinct values offered. Offers go to a buffer of up to
/// `4 * limit` keys; a full buffer is cut back to its `limit` smallest by selection, and the
/// largest of those becomes a cut-off that refuses any later value above it, since `limit`
/// smaller ones are already held. Each offer costs O(1) amortized, whatever the order.
struct Smallest<'a> {
    limit: usize,
    buffer: Vec<SortKey<'a>>,
    cutoff: Option<SortKey<'a>>,
}

impl<'a> Smallest<'a> {
    fn new(limit: usize) -> Smallest<'a> {
        Smallest {
            limit,
            buffer: Vec::with_capacity(4 * limit),
            cutoff: None,
        }
    }

    /// Offers a value distinct from every value offered before.
    fn offer(&mut self, text: &'a str) {
        let key = SortKey::new(text);
        if self.cutoff.is_some_and(|cutoff| key > cutoff) {
            return;
        }
        self.buffer.push(key);
        if self.buffer.len() >= 4 * self.limit {
            self.cut_back();
        }
    }

    fn cut_back(&mut self) {
        if self.limit == 0 {
            self.buffer.clear();
            return;
        }
        if self.buffer.len() > self.limit {
            self.buffer.select_nth_unstable(self.limit - 1);
            self.buffer.truncate(self.limit);
        }
        self.cutoff = self.buffer.iter().max().copied();
    }

    fn into_sorted(mut self) -> Vec<&'a str> {
        self.cut_back();
        self.buffer.sort_unstable();
        self.buffer.into_iter().map(|key| key.text).collect()
    }
}

/// A string ordered by code point (UTF-8 byte order) with a cheap first comparison: its first
/// sixteen bytes as a big-endian integer, zero-padded (identifiers such as `0x100003f20`
/// share long prefixes). Comparing `(head, text)` gives the same order as comparing `text`:
/// a difference within the first sixteen bytes shows in `head` with the same sign, and equal
/// heads fall through to the full comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct SortKey<'a> {
    head: u128,
    text: &'a str,
}

impl<'a> SortKey<'a> {
    fn new(text: &'a str) -> SortKey<'a> {
        SortKey {
            head: padded_head(text.as_bytes()),
            text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn literal(texts: &[&str], limit: usize) -> (usize, Vec<String>) {
        let mut sorted: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
        sorted.sort();
        sorted.dedup();
        let total = sorted.len();
        sorted.truncate(limit);
        (total, sorted)
    }

    fn check(texts: &[&str], limit: usize) {
        let matched: Vec<u32> = (0..texts.len() as u32).collect();
        let (total, smallest) = count_and_smallest(texts, &matched, limit);
        let owned: Vec<String> = smallest.iter().map(|t| (*t).to_owned()).collect();
        assert_eq!((total, owned), literal(texts, limit), "limit {limit}");
    }

    #[test]
    fn sort_keys_order_like_strings() {
        let texts = [
            "",
            "\0",
            "a",
            "a\0",
            "ab",
            "0x100003f20",
            "0x100003f20\0",
            "0x100003f21",
            "0x1000000000000000a",
            "0x1000000000000000",
            "sub_4",
            "é",
            "\u{FF61}",
            "\u{1F600}",
        ];
        for a in texts {
            for b in texts {
                assert_eq!(
                    SortKey::new(a).cmp(&SortKey::new(b)),
                    a.cmp(b),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn any_order_and_duplicates_give_the_literal_answer() {
        let ascending: Vec<String> = (0..1_000).map(|n| format!("v{n:04}")).collect();
        let mut texts: Vec<&str> = ascending.iter().map(String::as_str).collect();
        for limit in [0, 1, 3, 100] {
            check(&texts, limit);
            texts.reverse();
            check(&texts, limit);
            texts.extend_from_within(..500);
            check(&texts, limit);
        }
    }
}
