//! The URIs of session resources: `rea://session/{session}/...`, with every variable
//! percent-encoded (RFC 6570 simple expansion: all but the unreserved characters).

use std::fmt::Write;

/// The prefix of every session resource URI.
pub const SESSION_PREFIX: &str = "rea://session/";

/// What a session resource URI names inside its session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionItem {
    /// `evidence/{evidence_id}`.
    Evidence {
        /// The Evidence ID.
        id: String,
    },
    /// `unknown/{unknown_id}`.
    Unknown {
        /// The unknown's ID.
        id: String,
    },
    /// `document/{document}/procedure/{procedure}`.
    Procedure {
        /// The document.
        document: String,
        /// The procedure: an address or a unique name.
        procedure: String,
    },
    /// `inventory/{manifest_id}/occurrence/{occurrence_id}`.
    Occurrence {
        /// The inventory's manifest ID.
        manifest_id: String,
        /// The occurrence ID.
        occurrence_id: String,
    },
    /// `capture/{capture_id}`.
    Capture {
        /// The capture's Evidence ID.
        id: String,
    },
}

/// A parsed session resource URI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionUri {
    /// The session's handle.
    pub session: String,
    /// What it names in the session.
    pub item: SessionItem,
}

/// Why a URI is not a session resource URI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UriError {
    /// It does not have the shape of any template.
    Shape,
    /// This variable is empty or not percent-encoded UTF-8.
    Variable(&'static str),
}

/// Parses a session resource URI.
pub fn parse_session(uri: &str) -> Result<SessionUri, UriError> {
    let rest = uri.strip_prefix(SESSION_PREFIX).ok_or(UriError::Shape)?;
    let parts: Vec<&str> = rest.split('/').collect();
    let value = |index: usize, variable: &'static str| -> Result<String, UriError> {
        decode(parts[index]).ok_or(UriError::Variable(variable))
    };
    let item = match parts.as_slice() {
        [_, "evidence", _] => SessionItem::Evidence {
            id: value(2, "evidence_id")?,
        },
        [_, "unknown", _] => SessionItem::Unknown {
            id: value(2, "unknown_id")?,
        },
        [_, "document", _, "procedure", _] => SessionItem::Procedure {
            document: value(2, "document")?,
            procedure: value(4, "procedure")?,
        },
        [_, "inventory", _, "occurrence", _] => SessionItem::Occurrence {
            manifest_id: value(2, "manifest_id")?,
            occurrence_id: value(4, "occurrence_id")?,
        },
        [_, "capture", _] => SessionItem::Capture {
            id: value(2, "capture_id")?,
        },
        _ => return Err(UriError::Shape),
    };
    Ok(SessionUri {
        session: value(0, "session")?,
        item,
    })
}

/// `value` percent-encoded: every byte but the unreserved characters (`A-Z a-z 0-9 - . _ ~`)
/// as `%XX`, uppercase.
pub fn encode(value: &str) -> String {
    let mut encoded = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            let _ = write!(encoded, "%{byte:02X}");
        }
    }
    encoded
}

/// The value `encoded` stands for; `None` when it is empty, has a malformed `%` escape, or
/// decodes to bytes that are not UTF-8.
pub fn decode(encoded: &str) -> Option<String> {
    if encoded.is_empty() {
        return None;
    }
    let bytes = encoded.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = encoded.get(index + 1..index + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            decoded.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

/// The URI of the Evidence record `id` of the session `session`.
pub fn evidence_uri(session: &str, id: &str) -> String {
    format!(
        "{SESSION_PREFIX}{}/evidence/{}",
        encode(session),
        encode(id)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_escapes_and_empty_values_do_not_decode() {
        for bad in ["", "%", "%4", "%G0", "%FF", "a%2"] {
            assert_eq!(decode(bad), None, "{bad}");
        }
        assert_eq!(decode("a%2Fb").as_deref(), Some("a/b"));
        assert_eq!(encode("a/b c"), "a%2Fb%20c");
    }
}
