//! Residual-unknown tools: register, refine, resolve (with Evidence only) and list. They change
//! or read the session's registry and append no Evidence.

use serde::Serialize;
use serde_json::{Value, json};

use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::parameters::{ArgumentError, Kind, Parameter, choice, tool_arguments};
use super::schema::{array, count, nullable_string, object, string};
use super::spec::{ToolResult, ToolSpec, change, read};
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

const QUESTION: Parameter = Parameter {
    name: "question",
    description: "The open question, e.g. `What does 0x401000 decrypt?` (1 to 4,096 characters).",
    kind: Kind::Text,
    required: true,
};

const DOCUMENT: Parameter = Parameter {
    name: "document",
    description: "The document the question concerns, if any.",
    kind: Kind::Text,
    required: false,
};

const PROCEDURE: Parameter = Parameter {
    name: "procedure",
    description: "The procedure (address or name) the question concerns, if any.",
    kind: Kind::Text,
    required: false,
};

const ID: Parameter = Parameter {
    name: "id",
    description: "The ID of the current head of a residual unknown, e.g. `unk-000000000003`.",
    kind: Kind::Text,
    required: true,
};

choice! {
    /// Which statuses `list_unknowns` lists.
    pub(super) enum Status {
        All = "all",
        Open = "open",
        Resolved = "resolved",
    }
}

choice! {
    /// Which revisions `list_unknowns` lists.
    pub(super) enum Revisions {
        Heads = "heads",
        All = "all",
    }
}

tool_arguments! {
    /// The arguments of `register_unknown`.
    pub(super) struct RegisterArguments<'a> {
        question: &'a str = QUESTION,
        document: Option<&'a str> = DOCUMENT,
        procedure: Option<&'a str> = PROCEDURE,
    }
}

tool_arguments! {
    /// The arguments of `refine_unknown`.
    pub(super) struct RefineArguments<'a> {
        id: &'a str = ID,
        question: &'a str = QUESTION,
        document: Option<&'a str> = DOCUMENT,
        procedure: Option<&'a str> = PROCEDURE,
    }
}

tool_arguments! {
    /// The arguments of `resolve_unknown`.
    pub(super) struct ResolveArguments<'a> {
        id: &'a str = ID,
        evidence: Vec<String> = Parameter {
            name: "evidence",
            description: "Evidence IDs that answer the question (1 to 100).",
            kind: Kind::EvidenceIds {
                max_items: MAX_RESOLVING_EVIDENCE,
            },
            required: true,
        },
        note: Option<&'a str> = Parameter {
            name: "note",
            description: "A short answer, if any.",
            kind: Kind::Text,
            required: false,
        },
    }
}

tool_arguments! {
    /// The arguments of `list_unknowns`.
    pub(super) struct ListArguments<'a> {
        status: Status = Parameter {
            name: "status",
            description: "Which statuses to list.",
            kind: Kind::Choice(Status::OPTIONS),
            required: false,
        },
        revisions: Revisions = Parameter {
            name: "revisions",
            description: "Current heads only, or every revision.",
            kind: Kind::Choice(Revisions::OPTIONS),
            required: false,
        },
        document: Option<&'a str> = DOCUMENT,
        procedure: Option<&'a str> = PROCEDURE,
        cursor: Option<&'a str> = Parameter {
            name: "cursor",
            description: "The `next_cursor` of the previous page (an unknown ID); omit for \
                the first page.",
            kind: Kind::Text,
            required: false,
        },
        limit: u64 = Parameter {
            name: "limit",
            description: "Most unknowns in the page (1 to 100, default 50).",
            kind: Kind::Integer {
                min: 1,
                max: MAX_UNKNOWN_PAGE,
                default: DEFAULT_UNKNOWN_PAGE,
            },
            required: false,
        },
    }
}

pub(super) const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "register_unknown",
        title: "Register Residual Unknown",
        description: "Record an open question of the investigation (a residual unknown), \
            optionally about a document or procedure. It is offered for completion until it is \
            resolved; closing the binary discards it.",
        annotations: RECORDS,
        handler: change!(register),
    },
    ToolSpec {
        name: "refine_unknown",
        title: "Refine Residual Unknown",
        description: "Record a sharper revision of an open residual unknown. The new revision \
            gets its own ID and becomes the head; the old one is kept as superseded.",
        annotations: RECORDS,
        handler: change!(refine),
    },
    ToolSpec {
        name: "resolve_unknown",
        title: "Resolve Residual Unknown",
        description: "Resolve the head of a residual unknown with Evidence: every cited \
            Evidence ID must be retained in the ledger (an error names the missing ones). \
            Resolution is final.",
        annotations: RECORDS,
        handler: change!(resolve),
    },
    ToolSpec {
        name: "list_unknowns",
        title: "List Residual Unknowns",
        description: "Residual unknowns in creation order, filtered by status (`all`, `open`, \
            `resolved`), revisions (`heads` or `all`, superseded ones included), document and \
            procedure, one page at a time: pass `next_cursor` back as `cursor` for the next \
            page.",
        annotations: ToolAnnotations::READ_ONLY,
        handler: read!(list),
    },
];

fn draft(question: &str, document: Option<&str>, procedure: Option<&str>) -> UnknownDraft {
    UnknownDraft {
        question: question.to_owned(),
        document: document.map(str::to_owned),
        procedure: procedure.map(str::to_owned),
    }
}

fn register(
    session: &Session,
    arguments: RegisterArguments<'_>,
    cancel: &Cancel,
) -> Result<Unknown, ToolError> {
    let RegisterArguments {
        question,
        document,
        procedure,
        ..
    } = arguments;
    Ok(session.register_unknown_unless(draft(question, document, procedure), cancel)?)
}

fn refine(
    session: &Session,
    arguments: RefineArguments<'_>,
    cancel: &Cancel,
) -> Result<Unknown, ToolError> {
    let RefineArguments {
        id,
        question,
        document,
        procedure,
        ..
    } = arguments;
    Ok(session.refine_unknown_unless(id, draft(question, document, procedure), cancel)?)
}

fn resolve(
    session: &Session,
    arguments: ResolveArguments<'_>,
    cancel: &Cancel,
) -> Result<Unknown, ToolError> {
    let resolution = ResolutionDraft {
        evidence: arguments.evidence,
        note: arguments.note.map(str::to_owned),
    };
    Ok(session.resolve_unknown_unless(arguments.id, resolution, cancel)?)
}

/// The result of `register_unknown`, `refine_unknown` and `resolve_unknown`: the revision.
impl ToolResult for Unknown {
    fn output_schema() -> Value {
        object(unknown_properties())
    }
}

fn list(session: &Session, arguments: ListArguments<'_>) -> Result<ListUnknownsResult, ToolError> {
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
        document: arguments.document.map(str::to_owned),
        procedure: arguments.procedure.map(str::to_owned),
    };
    let unknowns = session.list_unknowns(&filter);
    let start = match arguments.cursor {
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
#[derive(Serialize)]
pub(super) struct ListUnknownsResult {
    next_cursor: Option<String>,
    total: usize,
    unknowns: Vec<Unknown>,
}

impl ToolResult for ListUnknownsResult {
    fn output_schema() -> Value {
        object(json!({
            "unknowns": array(object(unknown_properties()), "This page of the residual unknowns, in creation order."),
            "next_cursor": nullable_string("Cursor of the next page; null on the last page."),
            "total": count("Unknowns that pass the filter, over all pages."),
        }))
    }
}

fn unknown_properties() -> Value {
    json!({
        "id": string("This revision's ID (`unk-` and twelve digits)."),
        "question": string("The open question."),
        "document": nullable_string("The document it concerns."),
        "procedure": nullable_string("The procedure it concerns."),
        "status": {
            "type": "string",
            "enum": ["open", "superseded", "resolved"],
            "description": "`open`: a head, offered for completion; `superseded`: refined; `resolved`: answered with Evidence.",
        },
        "revises": nullable_string("The revision this one refines."),
        "superseded_by": nullable_string("The revision that refines this one."),
        "resolution": {
            "type": ["object", "null"],
            "properties": {
                "evidence": array(string("An Evidence ID."), "The Evidence cited."),
                "note": nullable_string("The answer given, if any."),
            },
            "required": ["evidence", "note"],
            "additionalProperties": false,
            "description": "How it was resolved; null unless resolved.",
        },
    })
}
