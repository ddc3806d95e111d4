//! Classifying one incoming line: request, notification, client response, batch, or error.
//!
//! This is the untrusted-input parser of the shell; it never panics (fuzz target
//! `jsonrpc_line`). Request ids are kept as the raw JSON value so they are echoed verbatim:
//! strings and integers (negative included) are valid, `null`, fractions and anything else are
//! not.

use serde_json::{Map, Value};

use super::error::RequestError;
use super::method::Method;

/// A request id as a map key (for cancellation); the raw JSON is echoed on the wire.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RequestKey {
    /// An integer id (`i64` or `u64` range).
    Integer(i128),
    /// A string id.
    Text(String),
}

impl RequestKey {
    /// The key of a raw id, or `None` when the id is not a string or an integer.
    pub fn of(id: &Value) -> Option<RequestKey> {
        match id {
            Value::String(s) => Some(RequestKey::Text(s.clone())),
            Value::Number(n) => n
                .as_i64()
                .map(i128::from)
                .or_else(|| n.as_u64().map(i128::from))
                .map(RequestKey::Integer),
            _ => None,
        }
    }
}

/// A valid request.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    /// The raw id, echoed verbatim in the response.
    pub id: Value,
    /// The id as a key.
    pub key: RequestKey,
    /// The method name.
    pub method: String,
    /// The params, if present.
    pub params: Option<Value>,
    /// The method, when rea knows it: parsed once, here.
    pub(crate) known: Option<Method>,
}

/// A valid notification.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The params, if present.
    pub params: Option<Value>,
}

/// One message of a line.
#[derive(Clone, Debug, PartialEq)]
pub enum Message {
    /// A request: answered exactly once.
    Request(Request),
    /// A notification: never answered.
    Notification(Notification),
    /// A well-formed response from the client (`jsonrpc` `"2.0"`, a string or integer id,
    /// exactly one of `result` and `error`): an answer to the server's `roots/list`.
    ClientResponse(Value),
    /// A message that looks like a response (no `method`; a `result` or an `error`) but is
    /// not a valid one: logged and dropped, never answered (a response gets no response).
    MalformedResponse {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An invalid message: answered with this error and id (`null` when unknown).
    Invalid {
        /// The id to answer with.
        id: Value,
        /// The error.
        error: RequestError,
    },
}

/// One line, classified.
#[derive(Clone, Debug, PartialEq)]
pub enum Line {
    /// A single message.
    Single(Message),
    /// A JSON array of messages (valid only under protocol 2025-03-26).
    Batch(Vec<Message>),
    /// The line could not be parsed; answered with this error under `id`: the id of the
    /// top-level object when it could still be read ([`readable_id`]), else `null`.
    Unparsable {
        /// The id to answer with.
        id: Value,
        /// The error.
        error: RequestError,
    },
}

impl Line {
    fn unparsable(bytes: &[u8], error: RequestError) -> Line {
        Line::Unparsable {
            id: readable_id(bytes).unwrap_or(Value::Null),
            error,
        }
    }
}

/// Classifies raw line bytes.
pub fn classify_line(bytes: &[u8]) -> Line {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let error = RequestError::NotUtf8 {
                offset: e.valid_up_to(),
            };
            return Line::unparsable(bytes, error);
        }
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) if e.to_string().contains("surrogate") || e.to_string().contains("escape") => {
            return lone_surrogates(text).unwrap_or_else(|| {
                let error = RequestError::LoneSurrogateEscape {
                    line: e.line(),
                    column: e.column(),
                };
                Line::unparsable(bytes, error)
            });
        }
        Err(e) => {
            let error = RequestError::NotJson {
                reason: e.to_string(),
            };
            return Line::unparsable(bytes, error);
        }
    };
    match value {
        Value::Array(items) if items.is_empty() => Line::Single(Message::Invalid {
            id: Value::Null,
            error: RequestError::EmptyBatch,
        }),
        Value::Array(items) => Line::Batch(items.into_iter().map(classify_message).collect()),
        other => Line::Single(classify_message(other)),
    }
}

/// A line that is JSON except for lone surrogate escapes (`"\\ud800"`, which JavaScript
/// clients send): every request whose id can be read is answered under that id, with an error
/// (its params are never acted on). `None` when the line is not JSON even with the lone
/// surrogates replaced.
fn lone_surrogates(text: &str) -> Option<Line> {
    let repaired: Value = serde_json::from_str(&replace_lone_surrogates(text)).ok()?;
    let refuse = |message: Message| match message {
        Message::Request(request) => Message::Invalid {
            id: request.id,
            error: RequestError::LoneSurrogateInRequest,
        },
        Message::Notification(_) => Message::Invalid {
            id: Value::Null,
            error: RequestError::LoneSurrogateInNotification,
        },
        other => other,
    };
    Some(match repaired {
        Value::Array(items) if !items.is_empty() => Line::Batch(
            items
                .into_iter()
                .map(classify_message)
                .map(refuse)
                .collect(),
        ),
        other => Line::Single(refuse(classify_message(other))),
    })
}

/// `text` with each `\\u` escape of an unpaired surrogate replaced by `\\ufffd`; other
/// escapes and text are kept.
fn replace_lone_surrogates(text: &str) -> String {
    fn surrogate_at(bytes: &[u8], at: usize) -> Option<u16> {
        let digits = bytes.get(at..at + 6)?;
        if digits[0] != b'\\' || digits[1] != b'u' {
            return None;
        }
        let code = u16::from_str_radix(std::str::from_utf8(&digits[2..]).ok()?, 16).ok()?;
        (0xD800..=0xDFFF).contains(&code).then_some(code)
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        match surrogate_at(bytes, at) {
            // A high surrogate followed by a low one is a valid pair: keep it.
            Some(0xD800..=0xDBFF)
                if surrogate_at(bytes, at + 6).is_some_and(|low| low >= 0xDC00) =>
            {
                at += 12;
            }
            Some(_) => {
                out.push_str(&text[copied..at]);
                out.push_str("\\ufffd");
                at += 6;
                copied = at;
            }
            // Any other escape: skip the backslash and the escaped character.
            None => at += 2,
        }
    }
    out.push_str(&text[copied.min(text.len())..]);
    out
}

/// Classifies one parsed JSON value as a message.
pub fn classify_message(value: Value) -> Message {
    let Value::Object(mut object) = value else {
        return Message::Invalid {
            id: Value::Null,
            error: RequestError::NotAnObject {
                kind: crate::text::json_kind(&value),
            },
        };
    };
    let id = object.remove("id");
    let key = id.as_ref().and_then(RequestKey::of);
    // The id to answer with: the raw id when it is valid, else null.
    let answer_id = if key.is_some() {
        id.clone().unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    let invalid = |error: RequestError| Message::Invalid {
        id: answer_id.clone(),
        error,
    };
    if !object.contains_key("method") && is_response(&object) {
        return classify_response(object, id);
    }
    match object.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => {
            return invalid(RequestError::WrongJsonrpc {
                found: other.clone(),
            });
        }
        None => return invalid(RequestError::MissingJsonrpc),
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => Some(method),
        Some(other) => {
            return invalid(RequestError::MethodNotString {
                kind: crate::text::json_kind(&other),
            });
        }
        None => None,
    };
    let params = object.remove("params");
    match (method, id) {
        (Some(method), None) => Message::Notification(Notification { method, params }),
        (Some(method), Some(id)) => match key {
            Some(key) => Message::Request(Request {
                id,
                key,
                known: Method::parse(&method),
                method,
                params,
            }),
            None => invalid(RequestError::InvalidId { id }),
        },
        (None, _) => invalid(RequestError::MissingMethod),
    }
}

fn is_response(object: &Map<String, Value>) -> bool {
    object.contains_key("result") || object.contains_key("error")
}

/// A message without `method` that carries `result` or `error`, checked as a JSON-RPC 2.0
/// response.
fn classify_response(mut object: Map<String, Value>, id: Option<Value>) -> Message {
    let malformed = |reason| Message::MalformedResponse { reason };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return malformed("its \"jsonrpc\" field is not \"2.0\"");
    }
    if object.contains_key("result") && object.contains_key("error") {
        return malformed("it holds both \"result\" and \"error\"");
    }
    let Some(id) = id.filter(|id| RequestKey::of(id).is_some()) else {
        return malformed("its id is missing or not a string or an integer");
    };
    if let Some(error) = object.get("error") {
        let code = error.get("code").is_some_and(|code| code.is_i64());
        let message = error.get("message").is_some_and(Value::is_string);
        if !(code && message) {
            return malformed("its error is not an object with an integer code and a message");
        }
    }
    object.insert("id".to_owned(), id);
    Message::ClientResponse(Value::Object(object))
}

/// The `id` member of the top-level object of a line that did not parse, read lexically
/// (invalid UTF-8 elsewhere, a number JSON cannot represent, nesting past the parser's
/// limit), when it is a valid request id. Like the parser, the last `id` member counts; the
/// scan ends where the object's structure breaks. It is iterative and linear in the line: it
/// skips every other member's value by bracket depth and string escapes, never recursing.
pub fn readable_id(bytes: &[u8]) -> Option<Value> {
    let mut found = None;
    let mut at = skip_blanks(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    while let Some(member) = next_member(bytes, at) {
        if is_id_key(&bytes[member.key.clone()]) {
            found = Some(member.value.clone());
        }
        at = skip_blanks(bytes, member.value.end);
        if bytes.get(at) != Some(&b',') {
            break;
        }
        at += 1;
    }
    let id: Value = serde_json::from_slice(&bytes[found?]).ok()?;
    RequestKey::of(&id).is_some().then_some(id)
}

/// Byte ranges of one `"key": value` member.
struct Member {
    key: std::ops::Range<usize>,
    value: std::ops::Range<usize>,
}

fn next_member(bytes: &[u8], at: usize) -> Option<Member> {
    let key_start = skip_blanks(bytes, at);
    let key_end = string_end(bytes, key_start)?;
    let colon = skip_blanks(bytes, key_end);
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    let value_start = skip_blanks(bytes, colon + 1);
    let value_end = value_end(bytes, value_start)?;
    Some(Member {
        key: key_start..key_end,
        value: value_start..value_end,
    })
}

/// Whether a JSON string (quotes included) is `"id"`, escapes decoded.
fn is_id_key(key: &[u8]) -> bool {
    key == b"\"id\""
        || (key.contains(&b'\\')
            && serde_json::from_slice::<String>(key).is_ok_and(|key| key == "id"))
}

fn skip_blanks(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    {
        at += 1;
    }
    at
}

/// The end (one past the closing quote) of the JSON string starting at `at`.
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut at = at + 1;
    loop {
        match bytes.get(at)? {
            b'\\' => at += 2,
            b'"' => return Some(at + 1),
            _ => at += 1,
        }
    }
}

/// The end of the JSON value starting at `at`: a string, a bracketed value (skipped by
/// depth), or a scalar (up to the next delimiter).
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut at = at;
            loop {
                match bytes.get(at)? {
                    b'"' => {
                        at = string_end(bytes, at)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            let mut end = at;
            while bytes
                .get(end)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
            {
                end += 1;
            }
            (end > at).then_some(end)
        }
    }
}

/// Messages for the unit tests of the modules that read them (`rules`, `connection`).
#[cfg(test)]
pub(crate) mod fixtures {
    use serde_json::{Value, json};

    use super::{Message, Request, classify_message};

    /// A request `method` with `params`, under `id`, as a line would give it.
    pub(crate) fn message(id: i64, method: &str, params: Value) -> Message {
        classify_message(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
    }

    /// [`message`], which must be a request.
    pub(crate) fn request(id: i64, method: &str, params: Value) -> Request {
        match message(id, method, params) {
            Message::Request(request) => request,
            other => panic!("not a request: {other:?}"),
        }
    }

    /// The `_meta` envelope of a 2026 request, with no capability declared.
    pub(crate) fn envelope() -> Value {
        json!({"_meta": {
            crate::mcp::era::PROTOCOL_VERSION_KEY: crate::mcp::MODERN_VERSION,
            crate::mcp::era::CLIENT_CAPABILITIES_KEY: {},
        }})
    }
}
