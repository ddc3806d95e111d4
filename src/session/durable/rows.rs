//! Rows as the store holds them, encoded and decoded. A row read back is untrusted input (the
//! file may have been edited, damaged or written by another program): decoding checks every
//! field against the bounds the ledger and the registry enforce, and refuses the row with a
//! [`RowError`] rather than trusting it.

use std::sync::Arc;

use serde_json::Value;

use super::StoredBinary;
use crate::annotations::{
    Annotation, AnnotationKind, EditKind, MAX_CITED_EVIDENCE, check_comment, check_declaration,
    check_name, is_annotation_id,
};
use crate::session::evidence::{
    EvidenceId, EvidenceRecord, MAX_JSON_DEPTH, MAX_RECORD_BYTES, json_depth_exceeds,
};
use crate::text::Quoted;
use crate::unknowns::{MAX_NOTE_CHARS, MAX_QUESTION_CHARS, Unknown, UnknownStatus};

/// Why a stored row was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RowError {
    /// A key is not an ID of its kind.
    #[error("{key:?} is not a valid {kind} ID")]
    BadId {
        /// `Evidence` or `unknown`.
        kind: &'static str,
        /// The key, cut to 64 characters.
        key: Quoted,
    },
    /// A JSON column does not parse, or does not have the documented shape.
    #[error("the {column} of {key:?} is not valid: {source}")]
    Json {
        /// The column.
        column: &'static str,
        /// The row's key, cut to 64 characters.
        key: Quoted,
        /// The parser's error.
        source: serde_json::Error,
    },
    /// A field is outside the bounds the ledger or the registry enforce.
    #[error("the row {key:?} is outside the bounds rea keeps: {reason}")]
    OutOfBounds {
        /// The row's key, cut to 64 characters.
        key: Quoted,
        /// Which bound.
        reason: &'static str,
    },
}

/// The columns of one stored Evidence record.
#[derive(Clone, Copy, Debug)]
pub struct RecordRow<'a> {
    /// The Evidence ID.
    pub id: &'a str,
    /// Its position in the ledger, from 1.
    pub sequence: i64,
    /// The operation (tool name).
    pub operation: &'a str,
    /// The arguments, as JSON text.
    pub arguments: &'a str,
    /// The result, as JSON text.
    pub result: &'a str,
    /// The provider, if any.
    pub provider: Option<&'a str>,
    /// The document, if any.
    pub document: Option<&'a str>,
}

/// Decodes a stored Evidence record.
pub fn decode_record(row: RecordRow<'_>) -> Result<Arc<EvidenceRecord>, RowError> {
    let id = EvidenceId::parse(row.id).map_err(|_| RowError::BadId {
        kind: "Evidence",
        key: row.id.into(),
    })?;
    let out_of_bounds = |reason| RowError::OutOfBounds {
        key: row.id.into(),
        reason,
    };
    let sequence = u64::try_from(row.sequence)
        .ok()
        .filter(|&s| s > 0)
        .ok_or_else(|| out_of_bounds("the sequence is not a positive number"))?;
    if row.arguments.len() + row.result.len() > MAX_RECORD_BYTES {
        return Err(out_of_bounds(
            "the record is larger than one Evidence record may be",
        ));
    }
    if row.operation.is_empty() || row.operation.len() > 64 {
        return Err(out_of_bounds("the operation is empty or too long"));
    }
    let json = |column, text: &str| -> Result<Value, RowError> {
        let value: Value = serde_json::from_str(text).map_err(|source| RowError::Json {
            column,
            key: row.id.into(),
            source,
        })?;
        if json_depth_exceeds(&value, MAX_JSON_DEPTH) {
            return Err(out_of_bounds("its JSON nests deeper than the ledger keeps"));
        }
        Ok(value)
    };
    Ok(Arc::new(EvidenceRecord {
        id,
        sequence,
        operation: row.operation.to_owned(),
        arguments: json("arguments", row.arguments)?,
        result: json("result", row.result)?,
        provider: row.provider.map(str::to_owned),
        document: row.document.map(str::to_owned),
    }))
}

/// The JSON text of a revision, as the store keeps it.
pub fn encode_unknown(revision: &Unknown) -> String {
    serde_json::to_string(revision).unwrap_or_default()
}

/// Decodes a stored revision of a residual unknown kept under the key `id`.
pub fn decode_unknown(id: &str, text: &str) -> Result<Unknown, RowError> {
    let revision: Unknown = serde_json::from_str(text).map_err(|source| RowError::Json {
        column: "revision",
        key: id.into(),
        source,
    })?;
    let out_of_bounds = |reason| RowError::OutOfBounds {
        key: id.into(),
        reason,
    };
    if revision.id.as_str() != id {
        return Err(out_of_bounds("the revision's ID is not its key"));
    }
    if revision.question.trim().is_empty()
        || revision.question.chars().nth(MAX_QUESTION_CHARS).is_some()
    {
        return Err(out_of_bounds("the question is blank or too long"));
    }
    let consistent = match revision.status {
        UnknownStatus::Open => revision.superseded_by.is_none() && revision.resolution.is_none(),
        UnknownStatus::Superseded => {
            revision.superseded_by.is_some() && revision.resolution.is_none()
        }
        UnknownStatus::Resolved => {
            revision.superseded_by.is_none()
                && revision.resolution.as_ref().is_some_and(|resolution| {
                    !resolution.evidence.is_empty()
                        && resolution
                            .evidence
                            .iter()
                            .all(|cited| EvidenceId::parse(cited).is_ok())
                        && resolution
                            .note
                            .as_ref()
                            .is_none_or(|note| note.chars().nth(MAX_NOTE_CHARS).is_none())
                })
        }
    };
    if !consistent {
        return Err(out_of_bounds("its status disagrees with its other fields"));
    }
    Ok(revision)
}

/// The JSON text of an annotation revision, as the store keeps it.
pub fn encode_annotation(revision: &Annotation) -> String {
    serde_json::to_string(revision).unwrap_or_default()
}

/// Decodes a stored annotation revision kept under the key `id`: its value is checked as an
/// edit's would be, so a row that was edited to hold what `annotate` refuses is refused.
pub fn decode_annotation(id: &str, text: &str) -> Result<Annotation, RowError> {
    if !is_annotation_id(id) {
        return Err(RowError::BadId {
            kind: "annotation",
            key: id.into(),
        });
    }
    let revision: Annotation = serde_json::from_str(text).map_err(|source| RowError::Json {
        column: "revision",
        key: id.into(),
        source,
    })?;
    let out_of_bounds = |reason| RowError::OutOfBounds {
        key: id.into(),
        reason,
    };
    if revision.id.as_str() != id {
        return Err(out_of_bounds("the revision's ID is not its key"));
    }
    let edit = match revision.kind {
        AnnotationKind::Name => Some(EditKind::Name),
        AnnotationKind::Comment => Some(EditKind::Comment),
        AnnotationKind::Prototype => Some(EditKind::Prototype),
        AnnotationKind::Undo => None,
    };
    let consistent = match (edit, &revision.value) {
        (None, None) => {
            revision
                .undoes
                .as_ref()
                .is_some_and(|undone| undone < &revision.id)
                && revision.document.is_none()
                && revision.address.is_none()
                && revision.evidence.is_empty()
        }
        (Some(kind), Some(value)) => {
            let valid = match kind {
                EditKind::Name => check_name(value).is_ok(),
                EditKind::Comment => check_comment(value).is_ok(),
                EditKind::Prototype => check_declaration(value).is_ok(),
            };
            valid
                && revision.undoes.is_none()
                && revision.document.as_ref().is_some_and(|d| {
                    !d.is_empty() && d.chars().nth(crate::core::MAX_VALUE_CHARS).is_none()
                })
                && revision.address.as_ref().is_some_and(|a| {
                    crate::session::Address::parse(a).is_ok_and(|p| p.to_string() == *a)
                })
                && !revision.evidence.is_empty()
                && revision.evidence.len() <= MAX_CITED_EVIDENCE
                && revision
                    .evidence
                    .iter()
                    .all(|e| EvidenceId::parse(e).is_ok())
        }
        _ => false,
    };
    if !consistent {
        return Err(out_of_bounds("its kind disagrees with its other fields"));
    }
    Ok(revision)
}

/// The JSON text of a session's binary, as the store keeps it.
pub fn encode_binary(binary: &StoredBinary) -> String {
    serde_json::to_string(binary).unwrap_or_default()
}

/// Decodes the stored binary of the session `handle`.
pub fn decode_binary(handle: &str, text: &str) -> Result<StoredBinary, RowError> {
    let binary: StoredBinary = serde_json::from_str(text).map_err(|source| RowError::Json {
        column: "binary",
        key: handle.into(),
        source,
    })?;
    let hash_ok = binary.sha256.as_ref().is_none_or(|hash| {
        hash.len() == 64
            && hash
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    });
    if !hash_ok {
        return Err(RowError::OutOfBounds {
            key: handle.into(),
            reason: "the SHA-256 is not 64 lowercase hexadecimal digits",
        });
    }
    if binary.providers.is_empty() || !binary.providers.contains(&binary.current_provider) {
        return Err(RowError::OutOfBounds {
            key: handle.into(),
            reason: "the current provider is not one of the declared providers",
        });
    }
    Ok(binary)
}

/// The number of an Evidence ID (`ev-000000000042` is 42), or of an unknown ID.
pub(crate) fn id_number(id: &str) -> u64 {
    id.rsplit('-')
        .next()
        .and_then(|digits| digits.parse().ok())
        .unwrap_or(0)
}

/// Most bytes of one stored task (its state, result or error included): a tool result is at
/// most a response (`--max-response-bytes` defaults to 8 MiB), so a row past this is refused.
pub const MAX_TASK_BYTES: usize = 16 << 20;

/// Most characters of a task ID.
pub const MAX_TASK_ID_CHARS: usize = 128;

/// One task as the store keeps it (docs/CONTRACT.md section 18): its ID, the process that ran it, when its row
/// may be forgotten, and its state as the MCP shell wrote it (a JSON object with at least a
/// string `status`; see `crate::mcp` tasks). The row format, column by column:
///
/// | column | type | meaning |
/// |---|---|---|
/// | `id` | text, primary key | the task ID: printable ASCII, at most [`MAX_TASK_ID_CHARS`] |
/// | `pid`, `start` | integers | the [`super::lease::Holder`] that ran it |
/// | `expires` | integer | milliseconds since the Unix epoch after which the row is removed |
/// | `task` | text | the state, JSON, at most [`MAX_TASK_BYTES`] |
#[derive(Clone, Debug, PartialEq)]
pub struct TaskRow {
    /// The task ID.
    pub id: String,
    /// The process that ran it.
    pub holder: super::lease::Holder,
    /// Milliseconds since the Unix epoch after which the row is forgotten.
    pub expires_ms: u64,
    /// The state, a JSON object with a string `status`.
    pub state: Value,
}

/// Whether `id` is a task ID the store keeps: printable ASCII, 1 to [`MAX_TASK_ID_CHARS`].
pub fn is_task_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= MAX_TASK_ID_CHARS && id.bytes().all(|b| b.is_ascii_graphic())
}

/// The JSON text of a task's state, as the store keeps it.
pub fn encode_task(row: &TaskRow) -> String {
    row.state.to_string()
}

/// Decodes a stored task (its columns as read).
pub fn decode_task(
    id: &str,
    holder: super::lease::Holder,
    expires: i64,
    text: &str,
) -> Result<TaskRow, RowError> {
    if !is_task_id(id) {
        return Err(RowError::BadId {
            kind: "task",
            key: id.into(),
        });
    }
    let out_of_bounds = |reason| RowError::OutOfBounds {
        key: id.into(),
        reason,
    };
    if text.len() > MAX_TASK_BYTES {
        return Err(out_of_bounds("the task is larger than one task may be"));
    }
    let state: Value = serde_json::from_str(text).map_err(|source| RowError::Json {
        column: "task",
        key: id.into(),
        source,
    })?;
    if json_depth_exceeds(&state, MAX_JSON_DEPTH + 4) {
        return Err(out_of_bounds("its JSON nests deeper than a task keeps"));
    }
    if !state["status"].is_string() {
        return Err(out_of_bounds("the task has no status"));
    }
    Ok(TaskRow {
        id: id.to_owned(),
        holder,
        expires_ms: u64::try_from(expires).unwrap_or(0),
        state,
    })
}
