//! Ledger tools: page through and fetch retained Evidence. They read the ledger and append
//! nothing to it.

use serde::Serialize;
use serde_json::{Value, json};

use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::parameters::{Kind, Parameter, tool_arguments};
use super::schema::{any, array, count, nullable_string, object, string};
use super::spec::{ToolResult, ToolSpec, read};
use crate::session::{EvidenceId, EvidenceRecord, Session};

/// Default and largest page of `list_evidence`.
const DEFAULT_EVIDENCE_PAGE: u64 = 50;
const MAX_EVIDENCE_PAGE: u64 = 100;

tool_arguments! {
    /// The arguments of `list_evidence`.
    pub(super) struct ListEvidenceArguments<'a> {
        cursor: Option<&'a str> = Parameter {
            name: "cursor",
            description: "The `next_cursor` of the previous page (an Evidence ID); omit \
                for the first page.",
            kind: Kind::EvidenceId,
            required: false,
        },
        limit: u64 = Parameter {
            name: "limit",
            description: "Most records in the page (1 to 100, default 50).",
            kind: Kind::Integer {
                min: 1,
                max: MAX_EVIDENCE_PAGE,
                default: DEFAULT_EVIDENCE_PAGE,
            },
            required: false,
        },
    }
}

tool_arguments! {
    /// The arguments of `get_evidence`.
    pub(super) struct GetEvidenceArguments<'a> {
        id: &'a str = Parameter {
            name: "id",
            description: "The Evidence ID, e.g. `ev-000000000042`.",
            kind: Kind::EvidenceId,
            required: true,
        },
    }
}

pub(super) const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "list_evidence",
        title: "List Evidence",
        description: "Page through the Evidence ledger of the open session, oldest first: \
            each record's ID, sequence, operation, arguments, provider and document (fetch \
            the result with get_evidence). Pass `next_cursor` back as `cursor` for the next \
            page.",
        annotations: ToolAnnotations::READ_ONLY,
        handler: read!(list_evidence),
    },
    ToolSpec {
        name: "get_evidence",
        title: "Get Evidence",
        description: "One retained Evidence record in full: ID, sequence, the operation that \
            observed it, its arguments and result, provider and document.",
        annotations: ToolAnnotations::READ_ONLY,
        handler: read!(get_evidence),
    },
];

fn list_evidence(
    session: &Session,
    arguments: ListEvidenceArguments<'_>,
) -> Result<ListEvidenceResult, ToolError> {
    let limit = usize::try_from(arguments.limit).unwrap_or(usize::MAX);
    let page = session.list_evidence(arguments.cursor, limit)?;
    Ok(ListEvidenceResult {
        evidence: page
            .records
            .iter()
            .map(|r| EvidenceSummary::of(r))
            .collect(),
        next_cursor: page.next_cursor,
        total: session.evidence_count(),
    })
}

/// The result of `list_evidence`.
#[derive(Serialize)]
pub(super) struct ListEvidenceResult {
    evidence: Vec<EvidenceSummary>,
    next_cursor: Option<EvidenceId>,
    total: usize,
}

impl ToolResult for ListEvidenceResult {
    fn output_schema() -> Value {
        object(json!({
            "evidence": array(object(record_properties()), "This page's records, oldest first (without results)."),
            "next_cursor": nullable_string("Cursor of the next page; null on the last page."),
            "total": count("Records retained in the ledger."),
        }))
    }
}

/// An Evidence record without its result.
#[derive(Serialize)]
struct EvidenceSummary {
    id: EvidenceId,
    sequence: u64,
    operation: String,
    arguments: Value,
    provider: Option<String>,
    document: Option<String>,
}

impl EvidenceSummary {
    fn of(record: &EvidenceRecord) -> EvidenceSummary {
        EvidenceSummary {
            id: record.id.clone(),
            sequence: record.sequence,
            operation: record.operation.clone(),
            arguments: record.arguments.clone(),
            provider: record.provider.clone(),
            document: record.document.clone(),
        }
    }
}

fn get_evidence(
    session: &Session,
    arguments: GetEvidenceArguments<'_>,
) -> Result<EvidenceRecord, ToolError> {
    Ok(session.evidence(arguments.id)?.as_ref().clone())
}

/// The result of `get_evidence`: the record.
impl ToolResult for EvidenceRecord {
    fn output_schema() -> Value {
        let mut properties = record_properties();
        properties["result"] = any("The result of that call (without its `evidence_id`).");
        object(properties)
    }
}

fn record_properties() -> Value {
    json!({
        "id": string("The Evidence ID."),
        "sequence": count("Position in the session's ledger, from 1."),
        "operation": string("The tool that observed it."),
        "arguments": any("The arguments of that call, as given."),
        "provider": nullable_string("The provider that answered, if any."),
        "document": nullable_string("The document observed, if any."),
    })
}
