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

/// Why a task could not be made or changed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TaskError {
    /// No task of this ID (never, or its ttl passed).
    #[error(
        "Invalid params: no task {0:?} (unknown, or its ttl passed); tasks/get answers a task for its ttlMs after it last changed"
    )]
    Unknown(crate::text::Quoted),
    /// A per-session bound.
    #[error(
        "Too many tasks: at most {limit} tasks may be in flight per MCP session (MAX_TASKS_PER_SESSION); wait for one to finish, or cancel one with tasks/cancel"
    )]
    SessionBound {
        /// `MAX_TASKS_PER_SESSION`.
        limit: usize,
    },
    /// The process bound on tasks in flight.
    #[error(
        "Too many tasks: at most {limit} tasks may be in flight in this server (MAX_TASKS_IN_FLIGHT); wait for one to finish, or cancel one with tasks/cancel"
    )]
    InFlightBound {
        /// `MAX_TASKS_IN_FLIGHT`.
        limit: usize,
    },
    /// The process bound on tasks kept.
    #[error(
        "Too many tasks: this server keeps at most {limit} tasks with their results (MAX_TASKS_KEPT) until their ttl passes; ask for a shorter ttl, or wait"
    )]
    KeptBound {
        /// `MAX_TASKS_KEPT`.
        limit: usize,
    },
    /// 2025-11-25: a terminal task cannot be cancelled.
    #[error("Invalid params: task {id:?} is already {status}; a finished task cannot be cancelled")]
    Terminal {
        /// The task.
        id: crate::text::Quoted,
        /// Its status.
        status: &'static str,
    },
    /// The store refused the task.
    #[error("Internal error: the task could not be kept in the store: {0}")]
    Store(String),
    /// No random source for the ID.
    #[error("Internal error: no random source to make a task ID")]
    NoRandom,
}
