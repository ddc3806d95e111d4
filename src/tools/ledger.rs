//! Ledger tools: page through and fetch retained Evidence. They read the ledger and append
//! nothing to it.

use serde_json::{Value, json};

use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::parameters::{Arguments, Kind, Parameter};
use super::schema::{any, array, count, nullable_string, object, string};
use super::spec::{Handler, ToolSpec, encode};
use crate::session::{EvidenceRecord, Session};

/// Default and largest page of `list_evidence`.
const DEFAULT_EVIDENCE_PAGE: u64 = 50;
const MAX_EVIDENCE_PAGE: u64 = 100;

pub(super) const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "list_evidence",
        title: "List Evidence",
        description: "Page through the Evidence ledger of the open session, oldest first: \
            each record's ID, sequence, operation, arguments, provider and document (fetch \
            the result with get_evidence). Pass `next_cursor` back as `cursor` for the next \
            page.",
        parameters: &[
            Parameter {
                name: "cursor",
                description: "The `next_cursor` of the previous page (an Evidence ID); omit \
                    for the first page.",
                kind: Kind::EvidenceId,
                required: false,
            },
            Parameter {
                name: "limit",
                description: "Most records in the page (1 to 100, default 50).",
                kind: Kind::Integer {
                    min: 1,
                    max: MAX_EVIDENCE_PAGE,
                    default: DEFAULT_EVIDENCE_PAGE,
                },
                required: false,
            },
        ],
        annotations: ToolAnnotations::READ_ONLY,
        output: page_schema,
        handler: Handler::Read(list_evidence),
    },
    ToolSpec {
        name: "get_evidence",
        title: "Get Evidence",
        description: "One retained Evidence record in full: ID, sequence, the operation that \
            observed it, its arguments and result, provider and document.",
        parameters: &[Parameter {
            name: "id",
            description: "The Evidence ID, e.g. `ev-000000000042`.",
            kind: Kind::EvidenceId,
            required: true,
        }],
        annotations: ToolAnnotations::READ_ONLY,
        output: record_schema,
        handler: Handler::Read(get_evidence),
    },
];

fn list_evidence(session: &Session, arguments: &Arguments<'_>) -> Result<Value, ToolError> {
    let limit = usize::try_from(arguments.integer("limit")).unwrap_or(usize::MAX);
    let page = session.list_evidence(arguments.text("cursor"), limit)?;
    let records: Vec<Value> = page.records.iter().map(|r| summary(r)).collect();
    Ok(json!({
        "evidence": records,
        "next_cursor": page.next_cursor,
        "total": session.evidence_count(),
    }))
}

fn summary(record: &EvidenceRecord) -> Value {
    json!({
        "id": record.id,
        "sequence": record.sequence,
        "operation": record.operation,
        "arguments": record.arguments,
        "provider": record.provider,
        "document": record.document,
    })
}

fn get_evidence(session: &Session, arguments: &Arguments<'_>) -> Result<Value, ToolError> {
    let record = session.evidence(arguments.required_text("id")?)?;
    encode("get_evidence", record.as_ref())
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

fn page_schema() -> Value {
    object(json!({
        "evidence": array(object(record_properties()), "This page's records, oldest first (without results)."),
        "next_cursor": nullable_string("Cursor of the next page; null on the last page."),
        "total": count("Records retained in the ledger."),
    }))
}

fn record_schema() -> Value {
    let mut properties = record_properties();
    properties["result"] = any("The result of that call (without its `evidence_id`).");
    object(properties)
}
