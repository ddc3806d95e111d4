//! Binary-session tools: open and close a binary, list providers and documents, pick the current
//! document.

use std::path::Path;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::arguments::{CursorArgument, NoArguments};
use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::spec::{CLOSE_BINARY, Handler, OPEN_BINARY, ToolSpec};
use crate::core::MAX_VALUE_CHARS;
use crate::providers::open_path_unless;
use crate::session::{
    Cancel, ClientHandles, ClosedBinary, DocumentInfo, Opened, Operation, ProviderSummary, Session,
    SessionStore, Target,
};

/// Opening adds a binary session (or fills one that has no binary) and never discards
/// anything.
const OPENS: ToolAnnotations = ToolAnnotations {
    read_only_hint: false,
    destructive_hint: false,
    idempotent_hint: false,
    open_world_hint: false,
};

/// Closing discards a binary session's Evidence, unknowns, inventories and captures; closing
/// it again has no further effect.
const DISCARDS: ToolAnnotations = ToolAnnotations {
    read_only_hint: false,
    destructive_hint: true,
    idempotent_hint: true,
    open_world_hint: false,
};

/// Selecting a document changes only which document is current.
const SELECTS: ToolAnnotations = ToolAnnotations {
    read_only_hint: false,
    destructive_hint: false,
    idempotent_hint: true,
    open_world_hint: false,
};

/// The arguments of `open_binary`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct OpenBinaryArguments {
    /// Path of the binary or catalog file on the server's machine (absolute, or relative to
    /// the server's working directory).
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    path: String,
    /// Open in a new session even when a session resumed from the store (kept from before a
    /// restart) serves the same file with the same SHA-256; by default that session is
    /// resumed (`resumed: true`).
    #[serde(default)]
    #[allow(dead_code)] // read by the ToolBox, to decide whether to resume
    new_session: bool,
}

/// Documents `open_binary` lists in its summary; `list_documents` pages through the rest.
pub const OPEN_SUMMARY_DOCUMENTS: usize = 20;

/// Largest and default page of `list_documents`.
const MAX_DOCUMENT_PAGE: u64 = 500;
const DEFAULT_DOCUMENT_PAGE: u64 = 100;

fn default_document_page() -> u64 {
    DEFAULT_DOCUMENT_PAGE
}

/// The arguments of `list_documents`: a page, and the provider, which the ToolBox reads.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ListDocumentsArguments {
    #[serde(flatten)]
    page: CursorArgument,
    /// Most documents in the page (1 to 500, default 100).
    #[serde(default = "default_document_page")]
    #[schemars(range(min = 1, max = MAX_DOCUMENT_PAGE))]
    limit: u64,
    /// Identity of a declared provider (see list_providers); default: the current provider.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    #[allow(dead_code)] // read by the ToolBox, to pick the target
    provider: Option<String>,
}

/// The arguments of `set_current_document`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct SetCurrentDocumentArguments {
    /// Name of the document to make current (see list_documents).
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    document: String,
    /// Identity of a declared provider (see list_providers); default: the current provider.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    provider: Option<String>,
}

/// The binary-session tools, in catalog order.
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: OPEN_BINARY,
            title: "Open a binary or catalog",
            description: "Open a file for analysis: an ELF, Mach-O (fat binaries give one document \
            per slice) or PE binary with the built-in `native` provider, or a function catalog \
            (JSON, schema `rea.catalog` version 1, e.g. exported from Ghidra, IDA or Hopper) \
            with the `catalog` provider. Without `session`, the file opens in a new binary \
            session beside the open ones (at most 8 by default) and the result's `session` is \
            its handle: pass it as `session` to any tool to work in that session (a call \
            naming none works in the session opened or named last). With `session`, the file \
            opens in that session if it has no binary open; opening never discards a binary \
            or its Evidence (close_binary does). A file that cannot be opened changes nothing. The first document becomes current. The result \
            summarises the documents (their count and the first 20); list_documents pages \
            through all of them.",
            annotations: OPENS,
            handler: Handler::change(open_binary),
        },
        ToolSpec {
            name: CLOSE_BINARY,
            title: "Close the binary",
            description: "Close a binary session (`session`, default: this client's session) and \
            end it: its Evidence ledger, unknowns, inventories and captures are discarded and \
            its IDs are never reused or suggested again. Other sessions are not touched.",
            annotations: DISCARDS,
            handler: Handler::change(close_binary),
        },
        ToolSpec {
            name: LIST_SESSIONS,
            title: "List the kept sessions",
            description: "List the open binary sessions, those resumed from the store after a \
            restart included: each one's handle (`session`), the opened path, its real path and \
            SHA-256, how many Evidence records it retains and how many residual unknowns are \
            open. Served over stdio only: over HTTP a handle is a bearer token and is never \
            listed.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::sessions(list_sessions),
        },
        ToolSpec {
            name: "list_providers",
            title: "List providers",
            description: "List the providers declared by the open binary session, the operations \
            each supports, and which is current. Empty when no binary is open.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::read(list_providers),
        },
        ToolSpec {
            name: "list_documents",
            title: "List documents",
            description: "List the documents of a provider (a binary, one slice of a fat binary, or \
            one program of a catalog) with their format and architecture, one page at a time \
            (`cursor`, `limit`), in the provider's order. Records Evidence.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::observe(Operation::ListDocuments, list_documents),
        },
        ToolSpec {
            name: "current_document",
            title: "Show the current document",
            description: "Show the open target, the current provider and the current document \
            (what tools use when no `provider` or `document` is given). All null when no \
            binary is open.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::read(current_document),
        },
        ToolSpec {
            name: "set_current_document",
            title: "Select the current document",
            description: "Make a document of a provider current, and that provider the current \
            provider. Later tool calls and completion suggestions use it by default.",
            annotations: SELECTS,
            handler: Handler::change(set_current_document),
        },
    ]
}

fn open_binary(
    session: &Session,
    arguments: OpenBinaryArguments,
    cancel: &Cancel,
) -> Result<OpenBinaryResult, ToolError> {
    if let Some(label) = session.label() {
        return Err(ToolError::BinaryAlreadyOpen {
            label: label.as_str().into(),
        });
    }
    let opened = open_path_unless(session, Path::new(&arguments.path), cancel)?;
    Ok(OpenBinaryResult::summary(opened))
}

/// The name of `list_sessions`.
pub(super) const LIST_SESSIONS: &str = "list_sessions";

/// The answer of `open_binary` that resumes `session` (an open session serving the same
/// file) instead of opening the file anew.
pub(super) fn resumed(session: &Session) -> Result<OpenBinaryResult, ToolError> {
    let target = session.target(None, None)?;
    let documents = target.query(|provider| provider.list_documents())?;
    let mut result = OpenBinaryResult::summary(Opened {
        label: session.label().unwrap_or_default(),
        providers: session.provider_ids(),
        documents,
        current_document: session.current_document(),
        replaced: None,
    });
    result.resumed = true;
    result.records = session.evidence_count();
    Ok(result)
}

fn list_sessions(
    store: &SessionStore,
    client: &ClientHandles,
    _: NoArguments,
) -> Result<ListSessionsResult, ToolError> {
    if client.is_unlisted() {
        return Err(ToolError::Unlisted {
            tool: LIST_SESSIONS,
        });
    }
    Ok(ListSessionsResult {
        sessions: store
            .summaries()
            .into_iter()
            .map(|(handle, summary)| ListedSession {
                session: handle.as_str().to_owned(),
                label: summary.label,
                path: summary.path,
                sha256: summary.sha256,
                records: summary.records,
                open_unknowns: summary.open_unknowns,
            })
            .collect(),
    })
}

/// The result of `list_sessions`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ListSessionsResult {
    /// The open sessions, in handle order.
    sessions: Vec<ListedSession>,
}

/// One session as `list_sessions` shows it.
#[derive(Serialize, JsonSchema)]
pub(super) struct ListedSession {
    /// Its handle: pass it as `session` to any tool.
    session: String,
    /// The opened target (the path as given), or null when no binary is open.
    label: Option<String>,
    /// The real path of its file, or null.
    path: Option<String>,
    /// The SHA-256 of its file, or null.
    sha256: Option<String>,
    /// Evidence records retained.
    records: usize,
    /// Residual unknowns open (current heads not resolved).
    open_unknowns: usize,
}

/// The result of `open_binary`: what was opened, with its documents summarised so the result
/// stays small however many documents a catalog holds (the opening is committed before the
/// result is built, so the result must never be what fails).
#[derive(Serialize, JsonSchema)]
pub(super) struct OpenBinaryResult {
    /// The opened target: the path as given.
    label: String,
    /// Declared provider identities; the first is current.
    providers: Vec<String>,
    /// How many documents the current provider lists.
    document_count: usize,
    /// The current provider's first documents (at most 20; list_documents pages through all).
    documents: Vec<DocumentInfo>,
    /// Whether the provider lists more documents than `documents` shows.
    more_documents: bool,
    /// The current document: the first document, if any.
    current_document: Option<String>,
    /// Whether a session resumed from the store serving the same file (same real path and
    /// SHA-256) was resumed instead of opening the file anew (see `new_session`).
    resumed: bool,
    /// How many Evidence records the session retains (0 for a file opened anew).
    records: usize,
}

impl OpenBinaryResult {
    fn summary(opened: Opened) -> OpenBinaryResult {
        let Opened {
            label,
            providers,
            mut documents,
            current_document,
            replaced: _,
        } = opened;
        let document_count = documents.len();
        documents.truncate(OPEN_SUMMARY_DOCUMENTS);
        OpenBinaryResult {
            label,
            providers,
            document_count,
            more_documents: document_count > documents.len(),
            documents,
            current_document,
            resumed: false,
            records: 0,
        }
    }
}

fn close_binary(
    session: &Session,
    _: NoArguments,
    cancel: &Cancel,
) -> Result<ClosedBinary, ToolError> {
    Ok(session.end_unless(cancel)?)
}

fn list_providers(session: &Session, _: NoArguments) -> Result<ListProvidersResult, ToolError> {
    Ok(ListProvidersResult {
        label: session.label(),
        providers: session.providers(),
    })
}

/// The result of `list_providers`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ListProvidersResult {
    /// The open target, or null when no binary is open.
    label: Option<String>,
    /// Declared providers, in declaration order.
    providers: Vec<ProviderSummary>,
}

fn list_documents(
    target: &Target,
    arguments: ListDocumentsArguments,
) -> Result<ListDocumentsResult, ToolError> {
    let documents = target.query(|provider| provider.list_documents())?;
    let total = documents.len();
    let start = match arguments.page.cursor.as_deref() {
        None => 0,
        Some(cursor) => document_cursor(cursor, total)?,
    };
    let limit = usize::try_from(arguments.limit).unwrap_or(usize::MAX);
    let end = start.saturating_add(limit).min(total);
    Ok(ListDocumentsResult {
        documents: documents
            .into_iter()
            .skip(start)
            .take(end - start)
            .collect(),
        next_cursor: (end < total).then(|| end.to_string()),
        provider: target.provider_id().to_owned(),
        total,
    })
}

/// The position a `list_documents` cursor names: the decimal index of the next document, as
/// the previous page's `next_cursor` gave it.
fn document_cursor(cursor: &str, total: usize) -> Result<usize, ToolError> {
    match cursor.parse::<usize>() {
        Ok(start) if start > 0 && start < total && start.to_string() == cursor => Ok(start),
        _ => Err(ToolError::InvalidCursor {
            tool: "list_documents",
            cursor: cursor.into(),
        }),
    }
}

/// The result of `list_documents`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ListDocumentsResult {
    /// This page of its documents, in its order.
    documents: Vec<DocumentInfo>,
    /// Cursor of the next page, or null on the last page.
    next_cursor: Option<String>,
    /// The provider asked.
    provider: String,
    /// How many documents the provider lists in all.
    total: usize,
}

fn current_document(session: &Session, _: NoArguments) -> Result<CurrentDocumentResult, ToolError> {
    let provider = session.providers().into_iter().find(|p| p.current);
    Ok(CurrentDocumentResult {
        document: session.current_document(),
        label: session.label(),
        provider: provider.map(|p| p.id),
    })
}

/// The result of `current_document`.
#[derive(Serialize, JsonSchema)]
pub(super) struct CurrentDocumentResult {
    /// The current document, or null.
    document: Option<String>,
    /// The open target, or null when no binary is open.
    label: Option<String>,
    /// The current provider, or null.
    provider: Option<String>,
}

fn set_current_document(
    session: &Session,
    arguments: SetCurrentDocumentArguments,
    cancel: &Cancel,
) -> Result<SetCurrentDocumentResult, ToolError> {
    let target = session.set_current_document_unless(
        arguments.provider.as_deref(),
        &arguments.document,
        cancel,
    )?;
    Ok(SetCurrentDocumentResult {
        document: arguments.document,
        provider: target.provider_id().to_owned(),
    })
}

/// The result of `set_current_document`.
#[derive(Serialize, JsonSchema)]
pub(super) struct SetCurrentDocumentResult {
    /// The document that is now current.
    document: String,
    /// The provider that is now current.
    provider: String,
}
