//! Wire errors: every JSON-RPC error the server sends is a [`RequestError`], and
//! [`RequestError::to_object`] (or its conversion into a jsonrpsee error object) is the one
//! place its code and message are put on the wire.
//!
//! Messages quote what the client sent only through `crate::text::cut` (at most 64
//! characters, then `...`): text fields are [`Quoted`], JSON values are cut when shown, so no
//! error echoes long input.

use serde_json::{Value, json};

use super::handler_error::ExtensionError;
use crate::core::MAX_VALUE_CHARS;
use crate::prompts::{InvalidCursor, PromptError};
use crate::resources::ResourceError;
use crate::text::Quoted;
use crate::tools::UnknownTool;

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
    /// `-32002`: the resource a 2025-era `resources/read` names does not exist.
    ResourceNotFound = -32002,
    /// `-32000` (the JSON-RPC range for server errors): the server is at its request limit;
    /// the request was not run and may be sent again once answers arrive.
    ServerBusy = -32000,
    /// `-32022`: a 2026 request names a protocol version this server does not speak; `data`
    /// lists the supported versions and the requested one.
    UnsupportedProtocolVersion = -32022,
    /// `-32020`: over HTTP, a 2026 request's headers (`MCP-Protocol-Version`, `Mcp-Method`,
    /// `Mcp-Name`) are missing or disagree with its body.
    HeaderMismatch = -32020,
    /// `-32021`: answering needs a client capability the request did not declare; `data`
    /// names it under `requiredCapabilities`.
    MissingClientCapability = -32021,
}

impl ErrorCode {
    /// The numeric code.
    pub fn code(self) -> i32 {
        self as i32
    }
}

/// Why the server refused a line, a message or a request. Each variant names what was wrong
/// (the method, prompt, argument or field) in typed fields; caller text is kept as sent and
/// cut only when the message quotes it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// The line is not valid UTF-8.
    #[error("Parse error: the line is not valid UTF-8 (invalid byte at offset {offset})")]
    NotUtf8 {
        /// Byte offset of the first invalid byte.
        offset: usize,
    },
    /// The line holds a `\u` escape of a lone surrogate and is not JSON even without it.
    #[error(
        "Parse error: invalid \\u escape (a lone surrogate is not a Unicode scalar value) at line {line} column {column}"
    )]
    LoneSurrogateEscape {
        /// Line of the parse error (1-based).
        line: usize,
        /// Column of the parse error (1-based).
        column: usize,
    },
    /// The line is not JSON.
    #[error("Parse error: {reason}")]
    NotJson {
        /// The JSON parser's description (it names a position, never the input).
        reason: String,
    },
    /// The line is an empty JSON array.
    #[error("Invalid request: empty batch")]
    EmptyBatch,
    /// A request holds a lone surrogate escape (it is answered under its id, never run).
    #[error(
        "Invalid request: a string holds a lone surrogate escape (a \\u escape of U+D800 to U+DFFF without its pair), which is not a Unicode scalar value"
    )]
    LoneSurrogateInRequest,
    /// A notification holds a lone surrogate escape.
    #[error(
        "Invalid request: a notification holds a lone surrogate escape, which is not a Unicode scalar value"
    )]
    LoneSurrogateInNotification,
    /// A message is not a JSON object.
    #[error("Invalid request: a message must be a JSON object, not {kind}")]
    NotAnObject {
        /// The kind of JSON value sent ("an array", "a number", ...).
        kind: &'static str,
    },
    /// The `jsonrpc` field is missing.
    #[error("Invalid request: missing field \"jsonrpc\"")]
    MissingJsonrpc,
    /// The `jsonrpc` field is not `"2.0"`.
    #[error("Invalid request: field \"jsonrpc\" must be \"2.0\", not {}", quoted_json(.found))]
    WrongJsonrpc {
        /// The value sent.
        found: Value,
    },
    /// The `method` field is missing (and the message is no response).
    #[error("Invalid request: missing field \"method\"")]
    MissingMethod,
    /// The `method` field is not a string.
    #[error("Invalid request: field \"method\" must be a string, not {kind}")]
    MethodNotString {
        /// The kind of JSON value sent.
        kind: &'static str,
    },
    /// The `id` field is neither a string nor an integer.
    #[error(
        "Invalid request: field \"id\" must be a string or an integer, not {}",
        quoted_json(.id)
    )]
    InvalidId {
        /// The id sent.
        id: Value,
    },
    /// The line is longer than the shell's line limit (it was skipped, not read).
    #[error(
        "Invalid request: the message is {bytes} bytes long; the maximum line length is {limit} bytes"
    )]
    LineTooLong {
        /// Length of the line.
        bytes: usize,
        /// The limit ([`super::ShellConfig::max_line_bytes`]).
        limit: usize,
    },
    /// `initialize` was sent a second time.
    #[error("Invalid request: the connection is already initialized; initialize may be sent once")]
    AlreadyInitialized,
    /// A request reuses the id of a request still in flight.
    #[error(
        "Invalid request: a request with id {} is already in flight; ids must be unique among in-flight requests",
        quoted_json(.id)
    )]
    DuplicateId {
        /// The id sent.
        id: Value,
    },
    /// A batch arrived under a protocol version that has no batches.
    #[error(
        "Invalid request: JSON-RPC batches are accepted only under protocol version 2025-03-26"
    )]
    BatchNotAccepted,
    /// A batch member past the batch limit.
    #[error(
        "Invalid request: a batch may hold at most {limit} messages; send the rest in another batch"
    )]
    BatchTooLong {
        /// The limit ([`super::ShellConfig::max_batch_messages`]).
        limit: usize,
    },
    /// `initialize` inside a batch.
    #[error("Invalid request: initialize must not be part of a JSON-RPC batch")]
    InitializeInBatch,
    /// A request other than `initialize` and `ping` before `initialize`.
    #[error(
        "Invalid request: {} was sent before initialize; send initialize first (only ping may come before it)",
        quoted(.method)
    )]
    NotInitialized {
        /// The method sent.
        method: Quoted,
    },
    /// Every request slot and every place in the wait list is taken.
    #[error(
        "Server busy: {in_flight} requests are running and {waiting} more are waiting, the limits of \
         this connection; this request was not run: wait for answers, then send it again"
    )]
    Busy {
        /// Requests that may run at once ([`super::ShellConfig::max_in_flight`]).
        in_flight: usize,
        /// Requests that may wait for a slot ([`super::ShellConfig::max_waiting`]).
        waiting: usize,
    },
    /// Over HTTP, every request slot of the process is taken.
    #[error(
        "Server busy: {in_flight} requests are running in this server, the most it runs at once \
         (--max-http-in-flight); this request was not run: send it again after Retry-After"
    )]
    HttpBusy {
        /// Requests that may run at once in the process.
        in_flight: usize,
    },
    /// The server is stopping (SIGTERM, SIGINT, [`super::Server`]'s shutdown) and this
    /// request was not run, or did not finish within the shutdown grace.
    #[error(
        "Server shutting down: this request was stopped or not run; requests running at the \
         stop had {grace_secs} s to finish (--shutdown-grace-secs). Send it again to a running server"
    )]
    ShuttingDown {
        /// The shutdown grace, in seconds.
        grace_secs: f64,
    },
    /// No method of this name (or not yet: tools methods exist only with tools).
    #[error("Method not found: {method}")]
    MethodNotFound {
        /// The method sent.
        method: Quoted,
    },
    /// The params of a request are not a JSON object.
    #[error("Invalid params: the params of {method} must be a JSON object")]
    ParamsNotObject {
        /// The method.
        method: &'static str,
    },
    /// A required field is missing.
    #[error("Invalid params: {path}.{field} is required")]
    MissingField {
        /// The object that lacks it (`params`, `params.ref`, ...).
        path: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field is not a string.
    #[error("Invalid params: {path}.{field} must be a string")]
    NotAString {
        /// The object that holds it.
        path: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field is not an object.
    #[error("Invalid params: {path}.{field} must be an object")]
    NotAnObjectField {
        /// The object that holds it.
        path: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field of string arguments is not an object.
    #[error("Invalid params: {path}.{field} must be an object of strings")]
    NotStringMap {
        /// The object that holds it.
        path: &'static str,
        /// The field.
        field: &'static str,
    },
    /// An entry of a field of string arguments is not a string.
    #[error("Invalid params: {path}.{field}[{}] must be a string", quoted(.key))]
    ArgumentNotString {
        /// The object that holds the arguments.
        path: &'static str,
        /// The field of arguments.
        field: &'static str,
        /// The key of the entry, as sent.
        key: Quoted,
    },
    /// A `resources/list` or `resources/templates/list` cursor (this server never issues one).
    #[error("Invalid params: invalid {method} cursor {}", quoted(.cursor))]
    ListCursor {
        /// The list method.
        method: &'static str,
        /// The cursor sent.
        cursor: Quoted,
    },
    /// A `tools/list` cursor (this server never issues one).
    #[error("Invalid params: invalid tools/list cursor {}", quoted(.cursor))]
    ToolsCursor {
        /// The cursor sent.
        cursor: Quoted,
    },
    /// A `prompts/list` cursor this server did not issue, or no longer can continue.
    #[error("Invalid params: {0}")]
    PromptsCursor(#[from] InvalidCursor),
    /// `tools/call` names no tool.
    #[error("Invalid params: {0}")]
    UnknownTool(#[from] UnknownTool),
    /// The named prompt or argument does not exist, or an argument is missing or too long.
    #[error("Invalid params: {0}")]
    Prompt(#[from] PromptError),
    /// `completion/complete` on a template or variable this server does not have.
    #[error("Invalid params: params.ref: {0}")]
    ResourceReference(ResourceError),
    /// `resources/read` of a URI that does not resolve, from a 2026 request (`-32602`);
    /// `data.uri` is the URI (cut by the one rule).
    #[error("Invalid params: params.uri: {error}")]
    ResourceUnresolved {
        /// The URI sent.
        uri: Quoted,
        /// Which part did not resolve.
        error: ResourceError,
    },
    /// `resources/read` of a URI that does not resolve (the message names the part);
    /// `data.uri` is the URI (cut by the one rule).
    #[error("Resource not found: {error}")]
    ResourceNotFound {
        /// The URI sent.
        uri: Quoted,
        /// Which part did not resolve.
        error: ResourceError,
    },
    /// `completion/complete` with a reference type other than `ref/prompt`.
    #[error("Invalid params: params.ref.type must be \"ref/prompt\", not {}", quoted(.found))]
    UnknownReference {
        /// The reference type sent.
        found: Quoted,
    },
    /// `prompts/get` names a binary session that is not open.
    #[error(
        "Invalid params: argument \"session\" of prompt {} names no open binary session ({}); call open_binary and pass the session it returns",
        quoted(.prompt),
        quoted(.handle)
    )]
    UnknownSession {
        /// The prompt.
        prompt: Quoted,
        /// The handle sent.
        handle: Quoted,
    },
    /// A completion value longer than [`MAX_VALUE_CHARS`].
    #[error(
        "Invalid params: the value of argument {} of prompt {} is {chars} characters long; the limit is {MAX_VALUE_CHARS}",
        quoted(.argument),
        quoted(.prompt)
    )]
    CompletionValueTooLong {
        /// The prompt.
        prompt: Quoted,
        /// The argument.
        argument: Quoted,
        /// Length of the value, in Unicode scalar values.
        chars: usize,
    },
    /// A completion value of a template variable longer than [`MAX_VALUE_CHARS`].
    #[error(
        "Invalid params: the value of variable {} of resource template {} is {chars} characters long; the limit is {MAX_VALUE_CHARS}",
        quoted(.variable),
        quoted(.template)
    )]
    TemplateValueTooLong {
        /// The URI template.
        template: Quoted,
        /// The variable.
        variable: Quoted,
        /// Length of the value, in Unicode scalar values.
        chars: usize,
    },
    /// A 2026 request's `_meta` envelope lacks a required key.
    #[error("Invalid params: params._meta[\"{key}\"] is required on a 2026-07-28 request")]
    MissingEnvelopeKey {
        /// The key.
        key: &'static str,
    },
    /// A key of a 2026 request's `_meta` envelope has the wrong JSON type.
    #[error("Invalid params: params._meta[\"{key}\"] must be {expected}")]
    EnvelopeKeyType {
        /// The key.
        key: &'static str,
        /// What it must be ("a string", "an object").
        expected: &'static str,
    },
    /// A 2026 request names a protocol version this server does not speak.
    #[error(
        "Unsupported protocol version: {} is not served; this server speaks {}",
        quoted(.requested),
        super::protocol::supported_versions().join(", ")
    )]
    UnsupportedProtocolVersion {
        /// The version sent.
        requested: Quoted,
    },
    /// A 2026 envelope naming a 2025 revision: served, but only in the 2025 form.
    #[error(
        "Unsupported protocol version: {} is a 2025 revision, served only in the 2025 form \
         (initialize first, no params._meta envelope); params._meta carries {} only",
        quoted(.requested),
        super::protocol::MODERN_VERSION
    )]
    LegacyVersionInEnvelope {
        /// The version sent.
        requested: Quoted,
    },
    /// Over HTTP, a 2026 request whose header is missing or disagrees with its body.
    #[error(
        "Header mismatch: the {header} header is {}, but the request body says {}",
        quoted(.found),
        quoted(.expected)
    )]
    HeaderMismatch {
        /// The header (`MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name`).
        header: &'static str,
        /// What the body says it must be.
        expected: Quoted,
        /// What the header holds (`(missing)` when absent).
        found: Quoted,
    },
    /// Over HTTP, a 2025 request after `initialize` without the `Mcp-Session-Id` header.
    #[error(
        "Invalid request: {} needs the Mcp-Session-Id header that initialize returned; send initialize first",
        quoted(.method)
    )]
    McpSessionRequired {
        /// The method sent.
        method: Quoted,
    },
    /// Over HTTP, an `Mcp-Session-Id` that names no live MCP session (it ended, expired or
    /// never existed).
    #[error(
        "Session not found: the MCP session {} has ended or never existed; send initialize to start a new one",
        quoted(.session)
    )]
    UnknownMcpSession {
        /// The id sent.
        session: Quoted,
    },
    /// Over HTTP, an `MCP-Protocol-Version` header naming a version this server does not speak.
    #[error(
        "Invalid request: the MCP-Protocol-Version header {} is not a version this server speaks ({})",
        quoted(.version),
        super::protocol::supported_versions().join(", ")
    )]
    ProtocolVersionHeader {
        /// The header's value.
        version: Quoted,
    },
    /// A log level (of `logging/setLevel` or of a 2026 request's `_meta`) that is none of the
    /// eight.
    #[error(
        "Invalid params: {field} must be one of debug, info, notice, warning, error, critical, alert, emergency; not {}",
        quoted_json(.found)
    )]
    InvalidLogLevel {
        /// Where the level was sent (`params.level`, or the `_meta` key).
        field: &'static str,
        /// The value sent.
        found: Value,
    },
    /// A 2025 method that the 2026-07-28 revision removed, sent as a 2026 request.
    #[error(
        "Method not found: {} is not part of protocol 2026-07-28 (a 2025 method: initialize, then send it without the 2026 _meta envelope)",
        quoted(.method)
    )]
    RemovedIn2026 {
        /// The method sent.
        method: Quoted,
    },
    /// Every `subscriptions/listen` stream the process allows is open.
    #[error(
        "Server busy: {limit} subscriptions/listen streams are open, the limit of this process; end one with notifications/cancelled, then listen again"
    )]
    TooManyListens {
        /// The limit (64, the most listen streams of one process).
        limit: usize,
    },
    /// A 2026 retry's `requestState` was refused.
    #[error("Invalid params: params.requestState was refused: {reason}")]
    RequestState {
        /// Why.
        reason: super::sealed::StateError,
    },
    /// An extension handler's error (its code follows its kind).
    #[error("{0}")]
    Extension(ExtensionError),
    /// The operating system's random source failed (no `requestState` can be sealed).
    #[error("Internal error: the random source failed")]
    NoRandom,
    /// A 2025 client holds as many resource subscriptions as one connection may.
    #[error(
        "Server busy: this connection holds {limit} resource subscriptions, the limit; resources/unsubscribe one first"
    )]
    TooManySubscriptions {
        /// The limit.
        limit: usize,
    },
    /// Over HTTP, an `initialize` while the most MCP sessions the server keeps are live.
    #[error(
        "Server busy: {limit} MCP sessions are live, the most this server keeps (--max-http-connections); end one with DELETE, or wait until one has been idle for --session-idle-secs, then send initialize again"
    )]
    TooManyMcpSessions {
        /// The limit (`--max-http-connections`).
        limit: usize,
    },
    /// No worker thread could run the request, or its handler panicked.
    #[error("Internal error: no worker thread is available")]
    NoWorker,
    /// A handler ran without the request context the shell gives every request.
    #[error("Internal error: the request reached its handler without its context")]
    NoRequestContext,
    /// A subscription method (this server registers none).
    #[error("Internal error: subscriptions are not served")]
    Subscription,
    /// A result could not be encoded as JSON.
    #[error("Internal error: the answer could not be encoded")]
    Unencodable,
    /// The answer is longer than the shell's response limit.
    #[error(
        "Internal error: the answer is {bytes} bytes; the limit is {limit} bytes. Ask for less: \
         page with cursor and limit, or send fewer requests per batch"
    )]
    ResponseTooLarge {
        /// Length of the answer (for a batch, of the batch so far).
        bytes: usize,
        /// The limit ([`super::ShellConfig::max_response_bytes`]).
        limit: usize,
    },
    /// A task could not be made, found or changed (see [`super::handler_error::TaskError`]).
    #[error("{0}")]
    Task(super::handler_error::TaskError),
    /// A 2026 tasks method, or a tool that needs a task, from a request whose `_meta` did not
    /// declare the tasks extension (`-32021`).
    #[error(
        "Missing required client capability: this request needs the extension io.modelcontextprotocol/tasks, which the request's _meta clientCapabilities.extensions did not declare"
    )]
    TasksNotNegotiated,
    /// 2025 `tasks/result` of a task that did not complete.
    #[error("The task {id:?} ended {status}: {message}")]
    TaskEnded {
        /// The task.
        id: Quoted,
        /// `failed` or `cancelled`.
        status: &'static str,
        /// Its error's message, if any.
        message: String,
    },
}

/// Caller text as messages quote it: cut (it is [`Quoted`]), then as a JSON string.
fn quoted(text: &Quoted) -> Value {
    Value::String(text.to_string())
}

/// A caller's JSON value as messages quote it: its JSON text, cut.
fn quoted_json(value: &Value) -> String {
    crate::text::cut(&value.to_string())
}

impl RequestError {
    /// The JSON-RPC code.
    pub fn code(&self) -> ErrorCode {
        use RequestError::*;
        match self {
            NotUtf8 { .. } | LoneSurrogateEscape { .. } | NotJson { .. } => ErrorCode::ParseError,
            EmptyBatch
            | LoneSurrogateInRequest
            | LoneSurrogateInNotification
            | NotAnObject { .. }
            | MissingJsonrpc
            | WrongJsonrpc { .. }
            | MissingMethod
            | MethodNotString { .. }
            | InvalidId { .. }
            | LineTooLong { .. }
            | AlreadyInitialized
            | DuplicateId { .. }
            | BatchNotAccepted
            | BatchTooLong { .. }
            | InitializeInBatch
            | McpSessionRequired { .. }
            | UnknownMcpSession { .. }
            | ProtocolVersionHeader { .. }
            | NotInitialized { .. } => ErrorCode::InvalidRequest,
            HeaderMismatch { .. } => ErrorCode::HeaderMismatch,
            Busy { .. }
            | HttpBusy { .. }
            | ShuttingDown { .. }
            | TooManyListens { .. }
            | TooManySubscriptions { .. }
            | TooManyMcpSessions { .. } => ErrorCode::ServerBusy,
            MethodNotFound { .. } | RemovedIn2026 { .. } => ErrorCode::MethodNotFound,
            UnsupportedProtocolVersion { .. } | LegacyVersionInEnvelope { .. } => {
                ErrorCode::UnsupportedProtocolVersion
            }
            ParamsNotObject { .. }
            | MissingField { .. }
            | NotAString { .. }
            | NotAnObjectField { .. }
            | NotStringMap { .. }
            | ArgumentNotString { .. }
            | ToolsCursor { .. }
            | ListCursor { .. }
            | PromptsCursor(_)
            | UnknownTool(_)
            | Prompt(_)
            | ResourceReference(_)
            | UnknownReference { .. }
            | UnknownSession { .. }
            | CompletionValueTooLong { .. }
            | TemplateValueTooLong { .. }
            | MissingEnvelopeKey { .. }
            | EnvelopeKeyType { .. }
            | InvalidLogLevel { .. }
            | RequestState { .. }
            | Extension(ExtensionError::InvalidParams(_))
            | ResourceUnresolved { .. } => ErrorCode::InvalidParams,
            Extension(ExtensionError::MissingClientCapability(_)) => {
                ErrorCode::MissingClientCapability
            }
            Extension(_) | NoRandom => ErrorCode::InternalError,
            Task(
                super::handler_error::TaskError::Unknown(_)
                | super::handler_error::TaskError::Terminal { .. },
            ) => ErrorCode::InvalidParams,
            Task(
                super::handler_error::TaskError::SessionBound { .. }
                | super::handler_error::TaskError::InFlightBound { .. }
                | super::handler_error::TaskError::KeptBound { .. },
            ) => ErrorCode::ServerBusy,
            Task(_) | TaskEnded { .. } => ErrorCode::InternalError,
            TasksNotNegotiated => ErrorCode::MissingClientCapability,
            ResourceNotFound { .. } => ErrorCode::ResourceNotFound,
            NoWorker | NoRequestContext | Subscription | Unencodable | ResponseTooLarge { .. } => {
                ErrorCode::InternalError
            }
        }
    }

    /// The error object on the wire: `{"code", "message"}`, and `data` for the variants that
    /// carry it ([`RequestError::UnsupportedProtocolVersion`], an unresolved resource URI, and a
    /// missing client capability).
    pub fn to_object(&self) -> Value {
        let mut object = json!({ "code": self.code().code(), "message": self.to_string() });
        if let Some(data) = self.data() {
            object["data"] = data;
        }
        object
    }

    /// The `data` member of the error object, if this variant has one: for
    /// [`RequestError::UnsupportedProtocolVersion`], `{supported, requested}` (the requested
    /// version cut by the one rule).
    pub fn data(&self) -> Option<Value> {
        match self {
            RequestError::UnsupportedProtocolVersion { requested }
            | RequestError::LegacyVersionInEnvelope { requested } => Some(json!({
                "supported": super::protocol::supported_versions(),
                "requested": requested.to_string(),
            })),
            RequestError::ResourceUnresolved { uri, .. }
            | RequestError::ResourceNotFound { uri, .. } => Some(json!({ "uri": uri.to_string() })),
            RequestError::Extension(ExtensionError::MissingClientCapability(capability)) => {
                let mut required = serde_json::Map::new();
                required.insert(capability.clone(), json!({}));
                Some(json!({ "requiredCapabilities": required }))
            }
            RequestError::TasksNotNegotiated => Some(json!({
                "requiredCapabilities": {
                    "extensions": { super::protocol::TASKS_EXTENSION: {} }
                }
            })),
            _ => None,
        }
    }

    /// A complete error response for `id` (`Value::Null` when the id is unknown, as JSON-RPC
    /// 2.0 requires).
    pub(crate) fn to_response(&self, id: &Value) -> Value {
        json!({ "jsonrpc": "2.0", "id": id, "error": self.to_object() })
    }
}

impl From<RequestError> for jsonrpsee::types::ErrorObjectOwned {
    fn from(error: RequestError) -> Self {
        jsonrpsee::types::ErrorObjectOwned::owned(
            error.code().code(),
            error.to_string(),
            error.data(),
        )
    }
}
