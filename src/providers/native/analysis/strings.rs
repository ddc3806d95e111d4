//! Whether bytes start a string worth naming as a pointer target.

/// Fewest printable bytes before the terminating NUL.
const MIN_STRING_BYTES: usize = 4;

/// Longest run looked at.
const MAX_STRING_BYTES: usize = 4_096;

/// Whether `bytes` start with at least [`MIN_STRING_BYTES`] printable bytes (ASCII, tab, line
/// breaks, or UTF-8 continuation and lead bytes) followed by a NUL.
pub(super) fn starts_string(bytes: &[u8]) -> bool {
    let window = &bytes[..bytes.len().min(MAX_STRING_BYTES)];
    let Some(end) = window.iter().position(|&byte| byte == 0) else {
        return false;
    };
    end >= MIN_STRING_BYTES
        && window[..end]
            .iter()
            .all(|&byte| matches!(byte, b'\t' | b'\n' | b'\r' | 0x20..=0x7e | 0x80..=0xf4))
        && std::str::from_utf8(&window[..end]).is_ok()
}
