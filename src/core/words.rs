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

/// Whether any byte of `word` selected by `mask` (whole bytes of 0xFF) is not ASCII.
#[inline]
pub(crate) fn has_non_ascii(word: u64, mask: u64) -> bool {
    word & mask & HIGH_BITS != 0
}

/// `word` with its ASCII capital letters lowercased; bytes that are not ASCII come out
/// unspecified.
#[inline]
pub(crate) fn ascii_lowercase_word(word: u64) -> u64 {
    let low7 = word & !HIGH_BITS;
    // A byte's high bit is set when it is at least 'A', resp. past 'Z'; no carries cross bytes.
    let at_least_a = low7.wrapping_add(0x3f3f_3f3f_3f3f_3f3f);
    let past_z = low7.wrapping_add(0x2525_2525_2525_2525);
    let capital = at_least_a & !past_z & HIGH_BITS;
    word | (capital >> 2)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
