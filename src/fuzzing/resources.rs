//! The resource URI parser and its percent-encoding on arbitrary bytes (the `resource_uri`
//! target). The check panics when an invariant breaks.

use crate::resources::{SESSION_PREFIX, SessionItem, decode, encode, parse_session};

/// Decoding and encoding round-trip, and a session URI that parses is rebuilt from its parts to
/// one that parses to the same parts.
pub fn check_resource_uri(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Decoding never panics; what decodes re-encodes to a form that decodes to it again.
    if let Some(value) = decode(text) {
        assert_eq!(decode(&encode(&value)).as_deref(), Some(value.as_str()));
    }
    // Encoding any text gives only unreserved characters and escapes, and round-trips.
    let encoded = encode(text);
    assert!(
        encoded
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b))
    );
    if !text.is_empty() {
        assert_eq!(decode(&encoded).as_deref(), Some(text));
    }
    // A URI that parses is rebuilt from its parts to one that parses to the same parts.
    for uri in [text.to_owned(), format!("{SESSION_PREFIX}{text}")] {
        if let Ok(parsed) = parse_session(&uri) {
            let rebuilt = match &parsed.item {
                SessionItem::Evidence { id } => format!("evidence/{}", encode(id)),
                SessionItem::Unknown { id } => format!("unknown/{}", encode(id)),
                SessionItem::Procedure {
                    document,
                    procedure,
                } => format!(
                    "document/{}/procedure/{}",
                    encode(document),
                    encode(procedure)
                ),
                SessionItem::Occurrence {
                    manifest_id,
                    occurrence_id,
                } => format!(
                    "inventory/{}/occurrence/{}",
                    encode(manifest_id),
                    encode(occurrence_id)
                ),
                SessionItem::Capture { id } => format!("capture/{}", encode(id)),
            };
            let rebuilt = format!("{SESSION_PREFIX}{}/{rebuilt}", encode(&parsed.session));
            assert_eq!(parse_session(&rebuilt), Ok(parsed));
        }
    }
}
