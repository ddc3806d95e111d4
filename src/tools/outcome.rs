//! [`ToolOutcome`] (the MCP `CallToolResult` shape) and the errors a tool call can end with.

use serde::Serialize;
use serde_json::{Map, Value};

use super::arguments::ArgumentError;
use crate::claims::ClaimError;
use crate::inventory::{CompareError, InventoryError, PageSizeError};
use crate::providers::{LoadError, OpenError};
use crate::session::{Operation, SessionError, SessionHandle, StoreError, Target};
use crate::text::Quoted;
use crate::unknowns::UnknownError;

/// The key of the Evidence ID in the structured result of an observing tool.
pub const EVIDENCE_ID_FIELD: &str = "evidence_id";

/// The only error [`crate::tools::ToolBox::call`] returns: no tool has this name. The mcp layer
/// answers it with JSON-RPC `-32602`; every other failure is a [`ToolOutcome`] with
/// `isError: true`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool {name:?}: tools/list names the available tools")]
pub struct UnknownTool {
    /// The requested name.
    pub name: Quoted,
}

impl UnknownTool {
    pub(crate) fn new(name: &str) -> UnknownTool {
        UnknownTool { name: name.into() }
    }
}

/// Why a tool call failed. The message is what the agent reads in the error result.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments do not fit the tool's input schema.
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// The session or its provider refused (no binary open, unknown document, provider
    /// failure, ambiguous procedure name, unknown Evidence ID, ...).
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The named binary session is not open, or no new one may be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The file could not be loaded as a binary or a catalog.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A tool that lists sessions was called over HTTP, where handles are never listed.
    #[error(
        "{tool} is served over stdio only: over HTTP a session handle is a bearer token and is \
         never listed; keep the handle open_binary answered and pass it as session"
    )]
    Unlisted {
        /// The tool.
        tool: &'static str,
    },
    /// The provider does not implement the operation the tool performs.
    #[error(
        "provider {provider:?} does not support {operation}; it supports: {}",
        operation_list(supported)
    )]
    Unsupported {
        /// The provider asked.
        provider: String,
        /// The operation the tool needs.
        operation: Operation,
        /// What the provider does support.
        supported: Vec<Operation>,
    },
    /// `compare_procedures` refused its arguments (see [`ProcedureCompareError`]).
    #[error(transparent)]
    CompareProcedures(#[from] ProcedureCompareError),
    /// The residual-unknown registry refused (unknown ID, not a head, missing Evidence, ...).
    #[error(transparent)]
    Unknown(#[from] UnknownError),
    /// The directory or archive could not be inventoried.
    #[error(transparent)]
    Inventory(#[from] InventoryError),
    /// The page size is out of range.
    #[error(transparent)]
    PageSize(#[from] PageSizeError),
    /// A process capture was refused or failed; nothing ran or nothing was kept.
    #[error(transparent)]
    Capture(#[from] crate::capture::RunCaptureError),
    /// The page asked for is past the last page of the inventory.
    #[error(
        "page {page} is past the last page of inventory {manifest_id}; it has {count} page(s), numbered from 0"
    )]
    PageOutOfRange {
        /// The inventory's manifest ID.
        manifest_id: Quoted,
        /// The page asked for.
        page: u64,
        /// Number of pages.
        count: usize,
    },
    /// A later page named a walk the server no longer keeps.
    #[error(
        "the walk of inventory {manifest_id} is no longer kept (the server keeps the latest \
         few, until the binary is closed); ask for page 0 again without manifest_id"
    )]
    InventoryNotKept {
        /// The manifest ID asked for.
        manifest_id: Quoted,
    },
    /// `manifest_id` names a kept walk of another root than `path`: the two arguments do not
    /// name one walk.
    #[error(
        "manifest_id {manifest_id:?} names the walk of {walked:?}, not of path {path:?}; give \
         that walk's path for its later pages, or ask for page 0 of {path:?} without \
         manifest_id to walk it anew"
    )]
    InventoryOfAnotherRoot {
        /// The manifest ID asked for, cut to 64 characters.
        manifest_id: Quoted,
        /// The path asked for, cut to 64 characters.
        path: Quoted,
        /// The root of the kept walk with that manifest ID, cut to 64 characters.
        walked: Quoted,
    },
    /// `open_binary` named a session whose binary is open: opening never discards one.
    #[error(
        "this binary session already has {label:?} open, and open_binary never discards a \
         binary or its Evidence: call open_binary without session to open the file in a new \
         session beside it, or close_binary this one first"
    )]
    BinaryAlreadyOpen {
        /// The open binary's label (its path as given), cut to 64 characters.
        label: Quoted,
    },
    /// No retained inventory page has this manifest ID.
    #[error(
        "no retained inventory has manifest ID {manifest_id:?}; retained: {}; \
         inventory_artifacts retains pages",
        if retained.is_empty() { "none".to_owned() } else { retained.join(", ") }
    )]
    NoInventory {
        /// The manifest ID asked for.
        manifest_id: Quoted,
        /// Manifest IDs of the retained inventories.
        retained: Vec<String>,
    },
    /// Two inventories cannot be compared (pages missing, mixed manifests, ...).
    #[error(transparent)]
    Compare(#[from] CompareError),
    /// The claim list of `verify_reconstruction` is malformed.
    #[error(transparent)]
    Claims(#[from] ClaimError),
    /// The result is larger than [`crate::tools::MAX_RESULT_BYTES`]; nothing was recorded.
    #[error(
        "the result of {tool} is larger than {limit} bytes of JSON, the limit for one tool \
         result; ask for less at a time: a smaller limit or page_size, then the next page \
         (cursor or page)"
    )]
    ResultTooLarge {
        /// The tool.
        tool: &'static str,
        /// The bound.
        limit: usize,
    },
    /// A paging cursor this tool did not issue (or past the end).
    #[error(
        "invalid cursor {cursor:?} for {tool}: pass the `next_cursor` of the previous page, or \
         omit it for the first page"
    )]
    InvalidCursor {
        /// The tool.
        tool: &'static str,
        /// The cursor sent, cut to 64 characters.
        cursor: Quoted,
    },
    /// The request was cancelled before the call committed; nothing was recorded.
    #[error("{tool} was cancelled before it committed; nothing was recorded")]
    Cancelled {
        /// The tool.
        tool: &'static str,
    },
    /// Arguments that fit the input schema could not be read into the tool's argument type (a
    /// bug: the schema is generated from that type).
    #[error("the arguments of {tool} could not be read: {reason}")]
    Decoding {
        /// The tool.
        tool: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The result could not be turned into a JSON object (a bug in a tool or a provider type).
    #[error("the result of {tool} could not be encoded: {reason}")]
    Encoding {
        /// The tool.
        tool: &'static str,
        /// What went wrong.
        reason: String,
    },
}

impl From<OpenError> for ToolError {
    fn from(error: OpenError) -> ToolError {
        match error {
            OpenError::Load(error) => ToolError::Load(error),
            OpenError::Session(error) => ToolError::Session(error),
        }
    }
}

fn operation_list(operations: &[Operation]) -> String {
    if operations.is_empty() {
        return "nothing".to_owned();
    }
    let names: Vec<&str> = operations.iter().map(|op| op.name()).collect();
    names.join(", ")
}

/// The result of a tool call, serializable to the MCP `CallToolResult` shape
/// `{content: [{type: "text", text}], structuredContent?, isError}`.
///
/// A success carries the result object as `structuredContent` and the same object as compact
/// JSON in the text; the result of an observing tool includes its `evidence_id`. A failure
/// carries the error message as text, no `structuredContent`, and `isError: true`.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOutcome {
    text: String,
    structured: Option<Map<String, Value>>,
    /// The binary session the call worked in, when it had one.
    session: Option<SessionHandle>,
}

impl ToolOutcome {
    /// A successful result.
    pub fn success(structured: Map<String, Value>) -> ToolOutcome {
        ToolOutcome {
            // A map of JSON values always serializes (its keys are strings).
            text: serde_json::to_string(&structured).unwrap_or_default(),
            structured: Some(structured),
            session: None,
        }
    }

    /// A failed call, reported to the agent with `isError: true`.
    pub fn failure(error: &ToolError) -> ToolOutcome {
        ToolOutcome {
            text: error.to_string(),
            structured: None,
            session: None,
        }
    }

    /// This outcome, noting that the call worked in the binary session `handle`.
    pub fn in_session(mut self, handle: SessionHandle) -> ToolOutcome {
        self.session = Some(handle);
        self
    }

    /// The binary session a successful call worked in (a read in no session has none). Not
    /// part of the MCP result: the shell uses it to link Evidence as a resource.
    pub fn session(&self) -> Option<&SessionHandle> {
        self.session.as_ref()
    }

    /// Whether the call failed.
    pub fn is_error(&self) -> bool {
        self.structured.is_none()
    }

    /// The text content: the result as JSON, or the error message.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The structured result of a successful call.
    pub fn structured_content(&self) -> Option<&Map<String, Value>> {
        self.structured.as_ref()
    }

    /// The Evidence ID the call appended, if it was a successful observation.
    pub fn evidence_id(&self) -> Option<&str> {
        self.structured
            .as_ref()?
            .get(EVIDENCE_ID_FIELD)
            .and_then(Value::as_str)
    }

    /// The MCP `CallToolResult` object.
    pub fn to_value(&self) -> Value {
        self.clone().into_value()
    }

    /// The MCP `CallToolResult` object, made of the outcome itself (its text and result are
    /// moved into it, not copied: the answer to a `tools/call`).
    pub fn into_value(self) -> Value {
        let is_error = self.is_error();
        let mut text = Map::new();
        text.insert("type".to_owned(), "text".into());
        text.insert("text".to_owned(), Value::String(self.text));
        let mut result = Map::new();
        result.insert(
            "content".to_owned(),
            Value::Array(vec![Value::Object(text)]),
        );
        result.insert("isError".to_owned(), is_error.into());
        if let Some(structured) = self.structured {
            result.insert("structuredContent".to_owned(), Value::Object(structured));
        }
        Value::Object(result)
    }
}

impl Serialize for ToolOutcome {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(serializer)
    }
}

/// [`ToolError::Unsupported`] unless the target's provider supports `operation`.
pub(super) fn check_support(target: &Target, operation: Operation) -> Result<(), ToolError> {
    let provider = target.provider();
    if provider.supports(operation) {
        return Ok(());
    }
    Err(ToolError::Unsupported {
        provider: target.provider_id().to_owned(),
        operation,
        supported: Operation::ALL
            .into_iter()
            .filter(|&op| provider.supports(op))
            .collect(),
    })
}

/// Why `compare_procedures` refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProcedureCompareError {
    /// Neither the argument nor the call names a session.
    #[error(
        "{argument}: no binary session to compare; call open_binary for each version and pass \
         the session handles it returns as baseline and candidate"
    )]
    NoSession {
        /// `baseline` or `candidate`.
        argument: &'static str,
    },
    /// The handle names no open session.
    #[error("{argument}: {source}")]
    Store {
        /// `baseline` or `candidate`.
        argument: &'static str,
        /// What the store said.
        source: StoreError,
    },
    /// The session has no binary or no such document.
    #[error("{argument}: {source}")]
    Session {
        /// `baseline`, `candidate`, `baseline_document` or `candidate_document`.
        argument: &'static str,
        /// What the session said.
        source: SessionError,
    },
    /// Both sides are the same document of the same session.
    #[error(
        "candidate: the baseline and the candidate are the same document {document:?} of the \
         same session; pass another session's handle as candidate, or another document of this \
         session as candidate_document"
    )]
    SameDocument {
        /// The document, cut to 64 characters.
        document: Quoted,
    },
    /// The two documents are of different architectures.
    #[error(
        "candidate_document: the candidate {candidate:?} is {candidate_architecture} but the \
         baseline {baseline:?} is {baseline_architecture}; procedures are compared within one \
         architecture: open the candidate built for {baseline_architecture}"
    )]
    Architectures {
        /// The baseline document, cut to 64 characters.
        baseline: Quoted,
        /// Its architecture.
        baseline_architecture: String,
        /// The candidate document, cut to 64 characters.
        candidate: Quoted,
        /// Its architecture.
        candidate_architecture: String,
    },
    /// A document has no procedures.
    #[error(
        "{argument}: document {document:?} has no procedures to compare (no symbols, exports, \
         unwind or function-start entries in its code)"
    )]
    Empty {
        /// `baseline_document` or `candidate_document`.
        argument: &'static str,
        /// The document, cut to 64 characters.
        document: Quoted,
    },
    /// The cursor is not one this tool gave for these inputs.
    #[error(
        "cursor: {cursor:?} is not a next_cursor of compare_procedures for these versions \
         ({total} entries); omit it for the first page"
    )]
    Cursor {
        /// The cursor, cut to 64 characters.
        cursor: Quoted,
        /// Entries of the comparison.
        total: usize,
    },
}
