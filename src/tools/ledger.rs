//! Ledger tools: page through and fetch retained Evidence. They read the ledger and append
//! nothing to it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::arguments::EVIDENCE_ID_PATTERN;
use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::spec::{Handler, ToolSpec};
use crate::session::{EvidenceId, EvidenceRecord, Session};

/// Default and largest page of `list_evidence`.
const DEFAULT_EVIDENCE_PAGE: u64 = 50;
const MAX_EVIDENCE_PAGE: u64 = 100;

fn default_evidence_page() -> u64 {
    DEFAULT_EVIDENCE_PAGE
}

/// The arguments of `list_evidence`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ListEvidenceArguments {
    /// The `next_cursor` of the previous page (an Evidence ID); omit for the first page.
    #[schemars(regex(pattern = EVIDENCE_ID_PATTERN))]
    cursor: Option<String>,
    /// Most records in the page (1 to 100, default 50).
    #[serde(default = "default_evidence_page")]
    #[schemars(range(min = 1, max = MAX_EVIDENCE_PAGE))]
    limit: u64,
}

/// The arguments of `get_evidence`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct GetEvidenceArguments {
    /// The Evidence ID, e.g. `ev-000000000042`.
    #[schemars(regex(pattern = EVIDENCE_ID_PATTERN))]
    id: String,
}

/// The ledger tools, in catalog order.
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "list_evidence",
            title: "List Evidence",
            description: "Page through the Evidence ledger of the open session, oldest first: \
            each record's ID, sequence, operation, arguments, provider and document (fetch \
            the result with get_evidence). Pass `next_cursor` back as `cursor` for the next \
            page.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::read(list_evidence),
        },
        ToolSpec {
            name: "get_evidence",
            title: "Get Evidence",
            description: "One retained Evidence record in full: ID, sequence, the operation that \
            observed it, its arguments and result, provider and document.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::read(get_evidence),
        },
    ]
}

fn list_evidence(
    session: &Session,
    arguments: ListEvidenceArguments,
) -> Result<ListEvidenceResult, ToolError> {
    let limit = usize::try_from(arguments.limit).unwrap_or(usize::MAX);
    let page = session.list_evidence(arguments.cursor.as_deref(), limit)?;
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
#[derive(Serialize, JsonSchema)]
pub(super) struct ListEvidenceResult {
    /// This page's records, oldest first (without results).
    evidence: Vec<EvidenceSummary>,
    /// Cursor of the next page; null on the last page.
    #[schemars(with = "Option<String>")]
    next_cursor: Option<EvidenceId>,
    /// Records retained in the ledger.
    total: usize,
}

// An Evidence record without its result. (A comment, not a doc comment: it would become the
// description of each listed record.)
#[derive(Serialize, JsonSchema)]
struct EvidenceSummary {
    /// The Evidence ID.
    #[schemars(with = "String")]
    id: EvidenceId,
    /// Position in the session's ledger, from 1.
    sequence: u64,
    /// The tool that observed it.
    operation: String,
    /// The arguments of that call, as given.
    #[schemars(with = "serde_json::Map<String, Value>")]
    arguments: Value,
    /// The provider that answered, if any.
    provider: Option<String>,
    /// The document observed, if any.
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
    arguments: GetEvidenceArguments,
) -> Result<EvidenceRecord, ToolError> {
    Ok(session.evidence(&arguments.id)?.as_ref().clone())
}
