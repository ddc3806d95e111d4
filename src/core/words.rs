//! Byte-string words: the first bytes of a string as one big-endian integer, and ASCII
//! lowercasing eight bytes at a time. Used to screen and order candidates without
//! per-byte branches.

/// The high bit of every byte.
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The first eight bytes of `bytes` as a big-endian integer, zero-padded. Short inputs are
/// read as two overlapping words whose overlap is shifted out, so no byte copy is needed.
#[inline]
pub(crate) fn padded_word(bytes: &[u8]) -> u64 {
    if let Some(all) = bytes.first_chunk::<8>() {
        return u64::from_be_bytes(*all);
    }
    // Fewer than eight bytes, so the shift amount fits in u32.
    let len = bytes.len() as u32;
    if let (Some(first), Some(last)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        let high = u64::from(u32::from_be_bytes(*first)) << 32;
        let low = u32::from_be_bytes(*last)
            .checked_shl(8 * (8 - len))
            .unwrap_or(0);
        return high | u64::from(low);
    }
    bytes.iter().enumerate().fold(0, |word, (at, &byte)| {
        word | (u64::from(byte) << (56 - 8 * at))
    })
}

/// The first sixteen bytes of `bytes` as a big-endian integer, zero-padded.
#[inline]
pub(crate) fn padded_head(bytes: &[u8]) -> u128 {
    if let Some(all) = bytes.first_chunk::<16>() {
        return u128::from_be_bytes(*all);
    }
    let (high, low) = bytes.split_at(bytes.len().min(8));
    (u128::from(padded_word(high)) << 64) | u128::from(padded_word(low))
}

/// The first bytes of a string as one big-endian integer: eight ([`u64`]) or sixteen
/// ([`u128`]) of them. A screen uses the narrow word when the prefix key's leading ASCII
/// run fits in it, and the wide one for longer runs (IDs such as `ev-000000000042` share
/// their first ten bytes).
pub(crate) trait Word: Copy + Eq {
    /// Bytes in the word.
    const BYTES: usize;

    /// The first [`Self::BYTES`] bytes of `bytes`, big-endian, zero-padded.
    fn padded(bytes: &[u8]) -> Self;

    /// 0xFF over the first `bytes` bytes (all of them when `bytes >= Self::BYTES`).
    fn leading_mask(bytes: usize) -> Self;

    /// `self` with its ASCII capital letters lowercased; other bytes come out unspecified.
    fn ascii_lowercase(self) -> Self;

    /// Whether `self` and `other` agree on every byte `mask` selects.
    fn same_under(self, other: Self, mask: Self) -> bool;

    /// Whether any byte of `self` selected by `mask` is not ASCII.
    fn has_non_ascii(self, mask: Self) -> bool;
}

impl Word for u64 {
    const BYTES: usize = 8;

    #[inline]
    fn padded(bytes: &[u8]) -> u64 {
        padded_word(bytes)
    }

    fn leading_mask(bytes: usize) -> u64 {
        u64::MAX
            .checked_shr(8 * bytes as u32)
            .map_or(u64::MAX, |rest| !rest)
    }

    #[inline]
    fn ascii_lowercase(self) -> u64 {
        let low7 = self & !HIGH_BITS;
        // A byte's high bit is set when it is at least 'A', resp. past 'Z'; no carries
        // cross bytes.
        let at_least_a = low7.wrapping_add(0x3f3f_3f3f_3f3f_3f3f);
        let past_z = low7.wrapping_add(0x2525_2525_2525_2525);
        let capital = at_least_a & !past_z & HIGH_BITS;
        self | (capital >> 2)
    }

    #[inline]
    fn same_under(self, other: u64, mask: u64) -> bool {
        (self ^ other) & mask == 0
    }

    #[inline]
    fn has_non_ascii(self, mask: u64) -> bool {
        self & mask & HIGH_BITS != 0
    }
}

impl Word for u128 {
    const BYTES: usize = 16;

    #[inline]
    fn padded(bytes: &[u8]) -> u128 {
        padded_head(bytes)
    }

    fn leading_mask(bytes: usize) -> u128 {
        u128::MAX
            .checked_shr(8 * bytes as u32)
            .map_or(u128::MAX, |rest| !rest)
    }

    #[inline]
    fn ascii_lowercase(self) -> u128 {
        let (high, low) = halves(self);
        (u128::from(high.ascii_lowercase()) << 64) | u128::from(low.ascii_lowercase())
    }

    #[inline]
    fn same_under(self, other: u128, mask: u128) -> bool {
        (self ^ other) & mask == 0
    }

    #[inline]
    fn has_non_ascii(self, mask: u128) -> bool {
        let (high, low) = halves(self & mask);
        (high | low) & HIGH_BITS != 0
    }
}

/// The high and low eight bytes of a wide word.
#[inline]
fn halves(word: u128) -> (u64, u64) {
    ((word >> 64) as u64, word as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ascii_lowercase_word(word: u64) -> u64 {
        word.ascii_lowercase()
    }

    fn has_non_ascii(word: u64, mask: u64) -> bool {
        Word::has_non_ascii(word, mask)
    }

    #[test]
    fn padded_word_and_head_are_the_zero_padded_prefix_for_every_length() {
        let source = b"0123456789abcdefXYZ";
        for len in 0..=source.len() {
            let bytes = &source[..len];
            let mut padded = [0u8; 16];
            let shown = len.min(16);
            padded[..shown].copy_from_slice(&bytes[..shown]);
            assert_eq!(
                padded_head(bytes),
                u128::from_be_bytes(padded),
                "length {len}"
            );
            let mut word = [0u8; 8];
            word.copy_from_slice(&padded[..8]);
            assert_eq!(padded_word(bytes), u64::from_be_bytes(word), "length {len}");
        }
    }

    #[test]
    fn ascii_lowercase_word_lowercases_every_ascii_byte() {
        for byte in 0u8..128 {
            let word = u64::from_be_bytes([byte, b'Q', byte, 0, b'@', b'[', b'z', byte]);
            let expected = u64::from_be_bytes(
                [byte, b'Q', byte, 0, b'@', b'[', b'z', byte].map(|b| b.to_ascii_lowercase()),
            );
            assert_eq!(ascii_lowercase_word(word), expected, "byte {byte:#x}");
        }
    }

    #[test]
    fn non_ascii_is_found_only_under_the_mask() {
        let word = u64::from_be_bytes([b'a', 0xC3, b'b', 0, 0, 0, 0, 0]);
        assert!(has_non_ascii(word, u64::MAX));
        assert!(!has_non_ascii(word, 0xFF00_0000_0000_0000));
    }

    #[test]
    fn the_wide_word_agrees_with_two_narrow_ones() {
        let bytes = *b"Ev-0000\xc3\xa9ABCZ[@";
        let wide = u128::padded(&bytes);
        let (high, low) = (padded_word(&bytes[..8]), padded_word(&bytes[8..]));
        assert_eq!(
            wide.ascii_lowercase(),
            (u128::from(high.ascii_lowercase()) << 64) | u128::from(low.ascii_lowercase())
        );
        for counted in 0..=16 {
            let mask = u128::leading_mask(counted);
            assert_eq!(mask.count_ones() as usize, 8 * counted, "{counted}");
            // Bytes 7 and 8 (0xC3 0xA9) are the only non-ASCII ones.
            assert_eq!(Word::has_non_ascii(wide, mask), counted > 7, "{counted}");
        }
        assert!(wide.same_under(u128::padded(b"Ev-0000"), u128::leading_mask(7)));
        assert!(!wide.same_under(u128::padded(b"Ev-0001"), u128::leading_mask(7)));
    }
}
