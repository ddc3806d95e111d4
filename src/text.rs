//! Caller text in messages: one rule for every error that quotes what a client sent, and the
//! names of JSON value kinds.
//!
//! An error field that may hold caller text (a name, an ID, a path, a cursor) has the type
//! [`Quoted`], whose only constructors cut the text to [`QUOTED_CHARS`] characters: an error
//! cannot be built around 4,096 characters of a client's argument and echo them back, in a
//! tool error (`isError`), a JSON-RPC error or a prompt error.

use std::fmt;
use std::ops::Deref;
use std::path::Path;

use serde_json::Value;

/// Most characters of caller text an error message quotes.
pub const QUOTED_CHARS: usize = 64;

/// `text` as error messages quote it: at most [`QUOTED_CHARS`] characters, with `...` when
/// cut, so no message echoes long input.
pub fn cut(text: &str) -> String {
    let mut chars = text.char_indices();
    match chars.nth(QUOTED_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}...", &text[..end]),
    }
}

/// Caller text as an error holds it: at most [`QUOTED_CHARS`] characters, with `...` when
/// cut. Every constructor (`new`, `path`, `From`) cuts, so whatever holds a `Quoted` quotes
/// at most that much of what a client sent.
///
/// `Display` writes the text as it is; `Debug` writes it as a Rust string literal (in double
/// quotes, control and quote characters escaped), which is how messages quote names:
/// `format!("no document named {document:?}")`.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Quoted(String);

impl Quoted {
    /// `text`, cut to [`QUOTED_CHARS`] characters.
    pub fn new(text: &str) -> Quoted {
        Quoted(cut(text))
    }

    /// A path as messages show it: its text (invalid UTF-8 replaced by U+FFFD), cut.
    pub fn path(path: &Path) -> Quoted {
        Quoted::new(&path.to_string_lossy())
    }

    /// The kept text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for Quoted {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Quoted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Quoted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl From<&str> for Quoted {
    fn from(text: &str) -> Quoted {
        Quoted::new(text)
    }
}

impl From<String> for Quoted {
    fn from(text: String) -> Quoted {
        if text.chars().nth(QUOTED_CHARS).is_none() {
            return Quoted(text);
        }
        Quoted::new(&text)
    }
}

impl From<&String> for Quoted {
    fn from(text: &String) -> Quoted {
        Quoted::new(text)
    }
}

impl From<&Path> for Quoted {
    fn from(path: &Path) -> Quoted {
        Quoted::path(path)
    }
}

impl PartialEq<str> for Quoted {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Quoted {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Quoted {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

/// The kind of a JSON value, as messages name it ("a string", "an object", ...).
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `bytes` as lowercase hexadecimal (how digests are written).
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
            let _ = write!(text, "{byte:02x}");
            text
        })
}

/// The UTC date and time `YYYY-MM-DDTHH:MM:SS` of `seconds` since the Unix epoch (the caller
/// adds fractions and the zone).
pub(crate) fn utc_date_time(seconds: u64) -> String {
    let days = i64::try_from(seconds / 86_400).unwrap_or(0);
    let rest = seconds % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rest / 3_600,
        rest % 3_600 / 60,
        rest % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_is_cut_at_a_character_boundary_with_an_ellipsis() {
        assert_eq!(cut("short"), "short");
        let exact = "é".repeat(QUOTED_CHARS);
        assert_eq!(cut(&exact), exact);
        let long = "é".repeat(QUOTED_CHARS + 1);
        assert_eq!(cut(&long), format!("{exact}..."));
    }

    #[test]
    fn every_way_to_make_a_quoted_cuts() {
        let long = "x".repeat(QUOTED_CHARS * 64);
        let kept = format!("{}...", "x".repeat(QUOTED_CHARS));
        let made: [Quoted; 5] = [
            Quoted::new(&long),
            Quoted::from(long.as_str()),
            Quoted::from(long.clone()),
            Quoted::from(&long),
            Quoted::path(Path::new(&long)),
        ];
        for quoted in made {
            assert_eq!(quoted, kept);
        }
        assert_eq!(Quoted::from("short".to_owned()), "short");
    }

    #[test]
    fn quoted_displays_as_text_and_debugs_as_a_string_literal() {
        let quoted = Quoted::new("a\"b\n");
        assert_eq!(quoted.to_string(), "a\"b\n");
        assert_eq!(format!("{quoted:?}"), r#""a\"b\n""#);
    }
}
