//! The errors of extension handlers and of their requests to the client, apart from the
//! extension point itself so that the wire errors ([`super::error`]) can carry them without
//! depending on it.

use std::time::Duration;

/// How long [`ExtensionContext::ask`](super::extension::ExtensionContext::ask) waits for the client's answer.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(60);

/// Most requests to the client waiting for an answer at once, per connection.
pub const MAX_PENDING_ASKS: usize = 16;

/// Why a request to the client ([`ExtensionContext::ask`](super::extension::ExtensionContext::ask)) gave no result.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum AskError {
    /// A 2026 request cannot be answered by a request to the client; answer
    /// [`Reply::InputRequired`](super::extension::Reply::InputRequired) instead.
    #[error("a 2026 request asks the client through an input_required result, not a request")]
    Modern,
    /// [`MAX_PENDING_ASKS`] requests to the client already wait on this connection.
    #[error("{limit} requests to the client already wait for their answers")]
    TooManyPending {
        /// The limit ([`MAX_PENDING_ASKS`]).
        limit: usize,
    },
    /// The client did not answer within [`ASK_TIMEOUT`].
    #[error("the client did not answer {method} within {} seconds", ASK_TIMEOUT.as_secs())]
    TimedOut {
        /// The method asked.
        method: String,
    },
    /// The request was cancelled, or the connection closed, before the client answered.
    #[error("the request ended before the client answered {method}")]
    Ended {
        /// The method asked.
        method: String,
    },
    /// The client answered with an error.
    #[error("the client answered {method} with error {code}: {}", crate::text::cut(.message))]
    Refused {
        /// The method asked.
        method: String,
        /// The client's error code.
        code: i64,
        /// The client's error message.
        message: String,
    },
}

/// An extension handler's error, answered as a JSON-RPC error.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ExtensionError {
    /// `-32602`: the request's arguments are wrong; the text says which and how.
    #[error("Invalid params: {0}")]
    InvalidParams(String),
    /// `-32021`: answering needs a client capability (`sampling`, `elicitation`, `roots`)
    /// the client did not declare; `data.requiredCapabilities` names it.
    #[error(
        "Missing required client capability: this request needs the client capability {0:?}, which the client did not declare"
    )]
    MissingClientCapability(String),
    /// `-32603`: a request to the client failed.
    #[error("Internal error: {0}")]
    Ask(#[from] AskError),
    /// `-32603`: the handler failed; the text says why.
    #[error("Internal error: {0}")]
    Failed(String),
}
