//! Caller text in messages: one rule for every error that quotes what a client sent, and the
//! names of JSON value kinds.

use serde_json::Value;

/// Most characters of caller text an error message quotes.
pub(crate) const QUOTED_CHARS: usize = 64;

/// `text` as error messages quote it: at most [`QUOTED_CHARS`] characters, with `...` when
/// cut, so no message echoes long input.
pub(crate) fn cut(text: &str) -> String {
    let mut chars = text.char_indices();
    match chars.nth(QUOTED_CHARS) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}...", &text[..end]),
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
}
