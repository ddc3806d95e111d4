//! Residual-unknown tools: register, refine, resolve (with Evidence only) and list. They change
//! or read the session's registry and append no Evidence.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::arguments::{ArgumentError, EVIDENCE_ID_PATTERN};
use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::spec::{Handler, ToolSpec};
use crate::core::MAX_VALUE_CHARS;
use crate::session::{Cancel, Session};
use crate::unknowns::{
    MAX_RESOLVING_EVIDENCE, ResolutionDraft, RevisionFilter, StatusFilter, Unknown, UnknownDraft,
    UnknownFilter,
};

/// Default and largest page of `list_unknowns`.
const DEFAULT_UNKNOWN_PAGE: u64 = 50;
const MAX_UNKNOWN_PAGE: u64 = 100;

/// Registering, refining and resolving add to the registry: not read-only, not idempotent
/// (each call makes a new record or fails), and they discard nothing.
const RECORDS: ToolAnnotations = ToolAnnotations {
    read_only_hint: false,
    destructive_hint: false,
    idempotent_hint: false,
    open_world_hint: false,
};

fn default_unknown_page() -> u64 {
    DEFAULT_UNKNOWN_PAGE
}

/// Which statuses `list_unknowns` lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum Status {
    #[default]
    All,
    Open,
    Resolved,
}

/// Which revisions `list_unknowns` lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum Revisions {
    #[default]
    Heads,
    All,
}

/// What an unknown concerns: the question, and the document and procedure if any.
#[derive(Deserialize, JsonSchema)]
pub(super) struct Concerns {
    /// The open question, e.g. `What does 0x401000 decrypt?` (1 to 4,096 characters).
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    question: String,
    /// The document the question concerns, if any.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    document: Option<String>,
    /// The procedure (address or name) the question concerns, if any.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    procedure: Option<String>,
}

/// The arguments of `register_unknown`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct RegisterArguments {
    #[serde(flatten)]
    concerns: Concerns,
}

/// The arguments of `refine_unknown`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct RefineArguments {
    /// The ID of the current head of a residual unknown, e.g. `unk-000000000003`.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    id: String,
    #[serde(flatten)]
    concerns: Concerns,
}

/// The arguments of `resolve_unknown`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ResolveArguments {
    /// The ID of the current head of a residual unknown, e.g. `unk-000000000003`.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    id: String,
    /// Evidence IDs that answer the question (1 to 100).
    #[schemars(length(min = 1, max = MAX_RESOLVING_EVIDENCE), inner(regex(pattern = EVIDENCE_ID_PATTERN)))]
    evidence: Vec<String>,
    /// A short answer, if any.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    note: Option<String>,
}

/// The arguments of `list_unknowns`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ListArguments {
    /// Which statuses to list.
    #[serde(default)]
    status: Status,
    /// Current heads only, or every revision.
    #[serde(default)]
    revisions: Revisions,
    /// The document the question concerns, if any.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    document: Option<String>,
    /// The procedure (address or name) the question concerns, if any.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    procedure: Option<String>,
    /// The `next_cursor` of the previous page (an unknown ID); omit for the first page.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    cursor: Option<String>,
    /// Most unknowns in the page (1 to 100, default 50).
    #[serde(default = "default_unknown_page")]
    #[schemars(range(min = 1, max = MAX_UNKNOWN_PAGE))]
    limit: u64,
}

/// The residual-unknown tools, in catalog order.
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "register_unknown",
            title: "Register Residual Unknown",
            description: "Record an open question of the investigation (a residual unknown), \
            optionally about a document or procedure. It is offered for completion until it is \
            resolved; closing the binary discards it.",
            annotations: RECORDS,
            handler: Handler::change(register),
        },
        ToolSpec {
            name: "refine_unknown",
            title: "Refine Residual Unknown",
            description: "Record a sharper revision of an open residual unknown. The new revision \
            gets its own ID and becomes the head; the old one is kept as superseded.",
            annotations: RECORDS,
            handler: Handler::change(refine),
        },
        ToolSpec {
            name: "resolve_unknown",
            title: "Resolve Residual Unknown",
            description: "Resolve the head of a residual unknown with Evidence: every cited \
            Evidence ID must be retained in the ledger (an error names the missing ones). \
            Resolution is final.",
            annotations: RECORDS,
            handler: Handler::change(resolve),
        },
        ToolSpec {
            name: "list_unknowns",
            title: "List Residual Unknowns",
            description: "Residual unknowns in creation order, filtered by status (`all`, `open`, \
            `resolved`), revisions (`heads` or `all`, superseded ones included), document and \
            procedure, one page at a time: pass `next_cursor` back as `cursor` for the next \
            page.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::read(list),
        },
    ]
}

fn draft(concerns: Concerns) -> UnknownDraft {
    UnknownDraft {
        question: concerns.question,
        document: concerns.document,
        procedure: concerns.procedure,
    }
}

fn register(
    session: &Session,
    arguments: RegisterArguments,
    cancel: &Cancel,
) -> Result<Unknown, ToolError> {
    Ok(session.register_unknown_unless(draft(arguments.concerns), cancel)?)
}

fn refine(
    session: &Session,
    arguments: RefineArguments,
    cancel: &Cancel,
) -> Result<Unknown, ToolError> {
    Ok(session.refine_unknown_unless(&arguments.id, draft(arguments.concerns), cancel)?)
}

fn resolve(
    session: &Session,
    arguments: ResolveArguments,
    cancel: &Cancel,
) -> Result<Unknown, ToolError> {
    let resolution = ResolutionDraft {
        evidence: arguments.evidence,
        note: arguments.note,
    };
    Ok(session.resolve_unknown_unless(&arguments.id, resolution, cancel)?)
}

fn list(session: &Session, arguments: ListArguments) -> Result<ListUnknownsResult, ToolError> {
    let filter = UnknownFilter {
        status: match arguments.status {
            Status::All => StatusFilter::All,
            Status::Open => StatusFilter::Open,
            Status::Resolved => StatusFilter::Resolved,
        },
        revisions: match arguments.revisions {
            Revisions::Heads => RevisionFilter::Heads,
            Revisions::All => RevisionFilter::All,
        },
        document: arguments.document,
        procedure: arguments.procedure,
    };
    let unknowns = session.list_unknowns(&filter);
    let start = match arguments.cursor.as_deref() {
        None => 0,
        Some(cursor) => {
            let valid = cursor.strip_prefix("unk-").is_some_and(|digits| {
                digits.len() == 12 && digits.bytes().all(|b| b.is_ascii_digit())
            });
            if !valid {
                return Err(ArgumentError::Syntax {
                    tool: "list_unknowns",
                    argument: "cursor",
                    reason: format!(
                        "{:?} is not an unknown ID: pass the next_cursor of the previous page",
                        crate::text::cut(cursor)
                    ),
                }
                .into());
            }
            unknowns.partition_point(|unknown| unknown.id.as_str() <= cursor)
        }
    };
    let limit = usize::try_from(arguments.limit).unwrap_or(usize::MAX);
    let end = unknowns.len().min(start.saturating_add(limit.max(1)));
    let page = &unknowns[start..end];
    let next_cursor = (end < unknowns.len())
        .then(|| page.last().map(|unknown| unknown.id.as_str().to_owned()))
        .flatten();
    Ok(ListUnknownsResult {
        unknowns: page.to_vec(),
        next_cursor,
        total: unknowns.len(),
    })
}

/// The result of `list_unknowns`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ListUnknownsResult {
    /// Cursor of the next page; null on the last page.
    next_cursor: Option<String>,
    /// Unknowns that pass the filter, over all pages.
    total: usize,
    /// This page of the residual unknowns, in creation order.
    unknowns: Vec<Unknown>,
}
