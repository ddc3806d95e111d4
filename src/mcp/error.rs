//! Wire errors: the one place JSON-RPC error objects are built from typed errors.

use serde_json::{Value, json};

/// JSON-RPC error codes used on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum ErrorCode {
    /// `-32700`: the line is not valid JSON (or not valid UTF-8).
    ParseError = -32700,
    /// `-32600`: the JSON is not a valid JSON-RPC request object.
    InvalidRequest = -32600,
    /// `-32601`: the method does not exist (or is not available yet).
    MethodNotFound = -32601,
    /// `-32602`: the parameters are invalid.
    InvalidParams = -32602,
    /// `-32603`: an internal error.
    InternalError = -32603,
}

impl ErrorCode {
    /// The numeric code.
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// A JSON-RPC error: a code and a message naming what was wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({code:?})")]
pub struct WireError {
    /// The JSON-RPC code.
    pub code: ErrorCode,
    /// A message naming the offending prompt, argument or field.
    pub message: String,
}

impl WireError {
    /// A new error with `code` and `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> WireError {
        WireError {
            code,
            message: message.into(),
        }
    }

    /// `-32602` with `message`.
    pub fn invalid_params(message: impl Into<String>) -> WireError {
        WireError::new(ErrorCode::InvalidParams, message)
    }

    /// `-32600` with `message`.
    pub fn invalid_request(message: impl Into<String>) -> WireError {
        WireError::new(ErrorCode::InvalidRequest, message)
    }

    /// `-32603` with `message`.
    pub fn internal(message: impl Into<String>) -> WireError {
        WireError::new(ErrorCode::InternalError, message)
    }

    /// The error object (`{"code", "message"}`).
    pub fn to_object(&self) -> Value {
        json!({ "code": self.code.code(), "message": self.message })
    }

    /// A complete error response for `id` (`Value::Null` when the id is unknown, as JSON-RPC
    /// 2.0 requires).
    pub fn to_response(&self, id: &Value) -> Value {
        json!({ "jsonrpc": "2.0", "id": id, "error": self.to_object() })
    }
}

impl From<WireError> for jsonrpsee::types::ErrorObjectOwned {
    fn from(error: WireError) -> Self {
        jsonrpsee::types::ErrorObjectOwned::owned(error.code.code(), error.message, None::<()>)
    }
}
