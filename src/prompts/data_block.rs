//! The single-line JSON encoding of supplied arguments inside the fenced data block.
//!
//! The line is a JSON object with keys in code-point order. Besides JSON's own escapes
//! (`\"`, `\\`, and every control character below U+0020), these characters are written as
//! `\uXXXX` escapes, so the line stays one line and stays inert under every convention:
//!
//! - U+0085 NEXT LINE, U+2028 LINE SEPARATOR, U+2029 PARAGRAPH SEPARATOR (line breaks for
//!   Unicode-aware readers), together with U+007F DELETE and the other C1 controls
//!   U+0080..=U+009F;
//! - U+0060 GRAVE ACCENT, so the block holds no backtick at all and no value can open or close a
//!   Markdown fence, whatever fence length a reader looks for;
//! - the bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A..=U+202E,
//!   U+2066..=U+2069), so the line displays in the order it is stored.
//!
//! Parsing the line with any JSON parser gives back exactly the supplied strings.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The line that opens the data block.
pub const DATA_FENCE_OPEN: &str = "```json";

/// The line that closes the data block.
pub const DATA_FENCE_CLOSE: &str = "```";

/// Encodes `arguments` as one line of JSON with sorted keys and the escapes listed above.
pub(crate) fn encode_arguments(arguments: &BTreeMap<String, String>) -> String {
    let mut line = String::from("{");
    for (index, (name, value)) in arguments.iter().enumerate() {
        if index > 0 {
            line.push(',');
        }
        push_json_string(&mut line, name);
        line.push(':');
        push_json_string(&mut line, value);
    }
    line.push('}');
    line
}

fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if needs_unicode_escape(c) => {
                // Every escaped character is in the Basic Multilingual Plane: four hex digits.
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Whether `c` is written as a `\uXXXX` escape (the characters listed in the module docs, and
/// the C0 controls JSON requires escaping that have no short form).
fn needs_unicode_escape(c: char) -> bool {
    matches!(
        c,
        '\u{0}'..='\u{1f}'
            | '`'
            | '\u{7f}'..='\u{9f}'
            | '\u{61c}'
            | '\u{200e}'
            | '\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{2066}'..='\u{2069}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encode(pairs: &[(&str, &str)]) -> String {
        let map = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        encode_arguments(&map)
    }

    #[test]
    fn empty_arguments_are_an_empty_object() {
        assert_eq!(encode(&[]), "{}");
    }

    #[test]
    fn keys_are_sorted_and_hard_characters_escaped() {
        assert_eq!(
            encode(&[
                ("b", "x\u{85}\u{2028}\u{2029}`\u{1}\u{7f}"),
                ("a", "\"\\\n")
            ]),
            r#"{"a":"\"\\\n","b":"x\u0085\u2028\u2029\u0060\u0001\u007f"}"#
        );
    }

    #[test]
    fn bidi_controls_are_escaped_and_other_text_kept() {
        assert_eq!(
            encode(&[("k", "\u{202e}é한😀")]),
            "{\"k\":\"\\u202eé한😀\"}"
        );
    }
}
