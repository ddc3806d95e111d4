//! The MCP headers of a request and the checks a 2026 request's headers pass against its
//! body (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`).

use axum::http::HeaderMap;
use axum::http::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;

use super::super::era::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY};
use super::super::error::RequestError;
use super::super::message::Request;
use super::super::method::Method;

/// The MCP session of a 2025 client over HTTP.
pub(crate) const MCP_SESSION_ID: &str = "mcp-session-id";
/// The protocol version a request is sent under.
pub(crate) const PROTOCOL_VERSION: &str = "mcp-protocol-version";
/// A 2026 request's method.
pub(crate) const MCP_METHOD: &str = "mcp-method";
/// A 2026 request's tool, prompt or resource.
pub(crate) const MCP_NAME: &str = "mcp-name";

/// The header `name` as text, when present and visible ASCII.
pub(crate) fn text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// Whether the body is declared JSON (`application/json`, parameters allowed).
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

/// Whether the client accepts `media` (no `Accept` header accepts everything).
pub(crate) fn accepts(headers: &HeaderMap, media: &str) -> bool {
    let mut values = headers.get_all(ACCEPT).iter().peekable();
    if values.peek().is_none() {
        return true;
    }
    values
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .map(|item| item.split(';').next().unwrap_or_default().trim())
        .any(|item| {
            item == "*/*"
                || item.eq_ignore_ascii_case(media)
                || item
                    .strip_suffix("/*")
                    .is_some_and(|kind| media.split('/').next() == Some(kind))
        })
}

/// Checks a 2026 request's headers against its body: `MCP-Protocol-Version` present and
/// equal to `_meta`'s version, `Mcp-Method` equal to the method, `Mcp-Name` equal to the
/// name or URI where the method has one. A request whose `_meta` lacks a required key passes
/// here and is refused by the envelope check (`-32602`).
pub(crate) fn check_modern(headers: &HeaderMap, request: &Request) -> Result<(), RequestError> {
    let mismatch =
        |header: &'static str, expected: &str, found: Option<&str>| RequestError::HeaderMismatch {
            header,
            expected: expected.into(),
            found: found.unwrap_or("(missing)").into(),
        };
    let version = text(headers, PROTOCOL_VERSION);
    let meta = request
        .params
        .as_ref()
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object);
    let claimed = meta.and_then(|meta| meta.get(PROTOCOL_VERSION_KEY));
    let complete =
        claimed.is_some() && meta.is_some_and(|m| m.contains_key(CLIENT_CAPABILITIES_KEY));
    let Some(version) = version else {
        let expected = claimed
            .and_then(Value::as_str)
            .unwrap_or("the _meta version");
        return Err(mismatch("MCP-Protocol-Version", expected, None));
    };
    if !complete {
        return Ok(());
    }
    if let Some(claimed) = claimed.and_then(Value::as_str)
        && claimed != version
    {
        return Err(mismatch("MCP-Protocol-Version", claimed, Some(version)));
    }
    let method = text(headers, MCP_METHOD);
    if method != Some(request.method.as_str()) {
        return Err(mismatch("Mcp-Method", &request.method, method));
    }
    if let Some(member) = request.known.and_then(Method::named_member) {
        let expected = request
            .params
            .as_ref()
            .and_then(|params| params.get(member))
            .and_then(Value::as_str);
        if let Some(expected) = expected {
            let found = text(headers, MCP_NAME);
            if found.and_then(decode_value).as_deref() != Some(expected) {
                return Err(mismatch("Mcp-Name", expected, found));
            }
        }
    }
    Ok(())
}

/// A header value as sent: plain, or `=?base64?<standard base64 of UTF-8>?=` for a value that
/// is not header-safe. `None` when the encoded form does not decode.
pub(crate) fn decode_value(value: &str) -> Option<String> {
    match value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    {
        Some(encoded) => String::from_utf8(base64_decode(encoded)?).ok(),
        None => Some(value.to_owned()),
    }
}

/// Standard base64 (RFC 4648 section 4), padding optional.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    fn sextet(byte: u8) -> Option<u32> {
        match byte {
            b'A'..=b'Z' => Some(u32::from(byte - b'A')),
            b'a'..=b'z' => Some(u32::from(byte - b'a') + 26),
            b'0'..=b'9' => Some(u32::from(byte - b'0') + 52),
            b'+' => Some(62),
            b'/' => Some(63),
            _ => None,
        }
    }
    let body = text.trim_end_matches('=');
    if text.len() - body.len() > 2 || body.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.as_bytes().chunks(4) {
        let mut bits = 0u32;
        for (index, byte) in chunk.iter().enumerate() {
            bits |= sextet(*byte)? << (18 - 6 * index);
        }
        let bytes = bits.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use serde_json::json;

    use super::*;
    use crate::mcp::message::RequestKey;

    fn request(method: &str, params: Value) -> Request {
        Request {
            id: json!(1),
            key: RequestKey::Integer(1),
            method: method.into(),
            params: Some(params),
            known: crate::mcp::method::Method::parse(method),
        }
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn meta() -> Value {
        json!({ PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {} })
    }

    #[test]
    fn base64_values_decode_as_rfc_4648_says() {
        assert_eq!(
            decode_value("=?base64?Zm9vYmFy?=").as_deref(),
            Some("foobar")
        );
        assert_eq!(decode_value("=?base64?Zm9vYg==?=").as_deref(), Some("foob"));
        assert_eq!(decode_value("=?base64?Zm9vYg?=").as_deref(), Some("foob"));
        assert_eq!(decode_value("=?base64?5LiW55WM?=").as_deref(), Some("世界"));
        assert_eq!(decode_value("plain-name").as_deref(), Some("plain-name"));
        assert_eq!(decode_value("=?base64?Z?="), None);
        assert_eq!(decode_value("=?base64?Zm9v!A==?="), None);
    }

    #[test]
    fn matching_headers_pass_and_each_mismatch_names_its_header() {
        let call = request(
            "tools/call",
            json!({ "name": "list_procedures", "_meta": meta() }),
        );
        let good = [
            (PROTOCOL_VERSION, "2026-07-28"),
            (MCP_METHOD, "tools/call"),
            (MCP_NAME, "list_procedures"),
        ];
        assert_eq!(check_modern(&headers(&good), &call), Ok(()));
        let cases: [(&[(&'static str, &str)], &str); 4] = [
            (&good[1..], "MCP-Protocol-Version"),
            (&[good[0], good[2]], "Mcp-Method"),
            (&good[..2], "Mcp-Name"),
            (
                &[good[0], good[1], (MCP_NAME, "=?base64?b3RoZXI=?=")],
                "Mcp-Name",
            ),
        ];
        for (pairs, header) in cases {
            match check_modern(&headers(pairs), &call) {
                Err(RequestError::HeaderMismatch { header: named, .. }) => {
                    assert_eq!(named, header)
                }
                other => panic!("{header}: {other:?}"),
            }
        }
    }

    #[test]
    fn an_incomplete_envelope_is_left_to_the_envelope_check() {
        let partial = request(
            "tools/list",
            json!({ "_meta": { PROTOCOL_VERSION_KEY: "2026-07-28" } }),
        );
        assert_eq!(
            check_modern(&headers(&[(PROTOCOL_VERSION, "2025-11-25")]), &partial),
            Ok(())
        );
    }

    #[test]
    fn accept_and_content_type_are_read_as_media_ranges() {
        let both = headers(&[("accept", "application/json, text/event-stream")]);
        assert!(accepts(&both, "application/json") && accepts(&both, "text/event-stream"));
        assert!(accepts(&headers(&[("accept", "*/*")]), "text/event-stream"));
        assert!(accepts(
            &headers(&[("accept", "text/*;q=0.5")]),
            "text/event-stream"
        ));
        assert!(!accepts(
            &headers(&[("accept", "text/html")]),
            "application/json"
        ));
        assert!(accepts(&HeaderMap::new(), "application/json"));
        assert!(is_json(&headers(&[(
            "content-type",
            "application/json; charset=utf-8"
        )])));
        assert!(!is_json(&headers(&[("content-type", "text/plain")])));
        assert!(!is_json(&HeaderMap::new()));
    }
}
