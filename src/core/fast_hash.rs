//! A fast, per-process seeded hasher for the short identifier strings the core deduplicates.
//!
//! std's SipHash costs more than everything else `complete()` does for an ASCII candidate, so
//! the core hashes with a multiply-rotate word hash (in the style of FxHash) over 8-byte words,
//! finished with a strong avalanche mix so hashbrown's low bucket bits and high tag bits are
//! both well distributed. The seed comes from std's `RandomState`, so an adversarial provider
//! cannot precompute colliding symbol names; hashing only decides speed, never results.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

const MULTIPLIER: u64 = 0xf135_7aea_2e62_a9c5;

/// Builds [`WordHasher`]s that share one random seed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SeededState {
    seed: u64,
}

impl SeededState {
    /// A state with a fresh random seed.
    pub(crate) fn new() -> SeededState {
        SeededState {
            seed: RandomState::new().hash_one(0x5eed_u64),
        }
    }
}

impl Default for SeededState {
    fn default() -> SeededState {
        SeededState::new()
    }
}

impl BuildHasher for SeededState {
    type Hasher = WordHasher;

    fn build_hasher(&self) -> WordHasher {
        WordHasher { state: self.seed }
    }
}

/// The hasher built by [`SeededState`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct WordHasher {
    state: u64,
}

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.state = (self.state.rotate_left(5) ^ word).wrapping_mul(MULTIPLIER);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let tail = chunks.remainder();
        if !tail.is_empty() {
            let mut word = [0u8; 8];
            word[..tail.len()].copy_from_slice(tail);
            // The tail length keeps "a\0" and "a" apart.
            self.add(u64::from_le_bytes(word) ^ ((tail.len() as u64) << 59));
        }
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn write_usize(&mut self, value: usize) {
        self.add(value as u64);
    }

    fn finish(&self) -> u64 {
        // murmur3's fmix64 avalanche.
        let mut h = self.state;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_strings_hash_equal_and_near_strings_differ() {
        let state = SeededState::new();
        assert_eq!(state.hash_one("sub_401000"), state.hash_one("sub_401000"));
        assert_ne!(state.hash_one("sub_401000"), state.hash_one("sub_401001"));
        assert_ne!(state.hash_one("a"), state.hash_one("a\0"));
        assert_ne!(state.hash_one(""), state.hash_one("\0"));
    }
}
