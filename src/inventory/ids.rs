//! Content-derived manifest IDs and stable occurrence IDs (formulas in the module docs).

use sha2::{Digest, Sha256};

/// Hexadecimal digits of the digest kept in an ID (128 bits).
const ID_HEX_DIGITS: usize = 32;

/// The manifest ID of a set of `(path, sha256)` pairs: `man-` and 32 hexadecimal digits.
///
/// The pairs may come in any order; they are sorted by path (byte order) first.
pub fn manifest_id_of<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut files: Vec<(&str, &str)> = files.into_iter().collect();
    files.sort_unstable();
    let mut hasher = Sha256::new();
    for (path, sha256) in files {
        hasher.update(path.as_bytes());
        hasher.update([0]);
        hasher.update(sha256.as_bytes());
        hasher.update(b"\n");
    }
    format!("man-{}", &hex(&hasher.finalize())[..ID_HEX_DIGITS])
}

/// The occurrence ID of `path` in the inventory `manifest_id`: `occ-` and 32 hexadecimal digits.
pub fn occurrence_id_for(manifest_id: &str, path: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(manifest_id.as_bytes());
    hasher.update([0]);
    hasher.update(path.as_bytes());
    format!("occ-{}", &hex(&hasher.finalize())[..ID_HEX_DIGITS])
}

/// Lowercase hexadecimal of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        text.push(char::from(DIGITS[usize::from(byte >> 4)]));
        text.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    text
}
