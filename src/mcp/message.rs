//! Classifying one incoming line: request, notification, client response, batch, or error.
//!
//! This is the untrusted-input parser of the shell; it never panics (fuzz target
//! `jsonrpc_line`). Request ids are kept as the raw JSON value so they are echoed verbatim:
//! strings and integers (negative included) are valid, `null`, fractions and anything else are
//! not.

use serde_json::{Map, Value};

use super::error::RequestError;

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
    /// A response from the client (the server sends no requests, so it is logged and dropped).
    ClientResponse(Value),
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
    /// The line could not be parsed; answered with this error and a `null` id.
    Unparsable(RequestError),
}

/// Classifies raw line bytes.
pub fn classify_line(bytes: &[u8]) -> Line {
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            return Line::Unparsable(RequestError::NotUtf8 {
                offset: e.valid_up_to(),
            });
        }
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(e) if e.to_string().contains("surrogate") || e.to_string().contains("escape") => {
            return lone_surrogates(text).unwrap_or_else(|| {
                Line::Unparsable(RequestError::LoneSurrogateEscape {
                    line: e.line(),
                    column: e.column(),
                })
            });
        }
        Err(e) => {
            return Line::Unparsable(RequestError::NotJson {
                reason: e.to_string(),
            });
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
                method,
                params,
            }),
            None => invalid(RequestError::InvalidId { id }),
        },
        (None, Some(id)) if is_response(&object) => {
            object.insert("id".to_owned(), id);
            Message::ClientResponse(Value::Object(object))
        }
        (None, _) => invalid(RequestError::MissingMethod),
    }
}

fn is_response(object: &Map<String, Value>) -> bool {
    object.contains_key("result") || object.contains_key("error")
}
