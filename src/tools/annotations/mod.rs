//! Annotation tools (docs/CONTRACT.md section 17): `annotate` (a batch of names, comments and
//! prototypes, each citing Evidence), `list_annotations`, `undo_annotation` and
//! `export_annotations`. A batch or an undo appends one change record to the ledger (its
//! `change_record`), committed with the revisions as one transaction.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::arguments::ArgumentError;
use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::spec::{Handler, ToolSpec};
use crate::annotations::{
    Annotation, AnnotationError, AnnotationKind, EditDraft, EditKind, EditProblem, is_annotation_id,
};
use crate::core::MAX_VALUE_CHARS;
use crate::session::{Address, Cancel, Operation, Session, SessionError, Target};

mod export;
pub(crate) mod labels;

/// Default and largest page of `list_annotations`.
const DEFAULT_ANNOTATION_PAGE: u64 = 50;
const MAX_ANNOTATION_PAGE: u64 = 100;

/// Annotating and undoing add revisions and never discard one: not read-only, not
/// destructive, not idempotent (each call adds a revision or fails).
const REVISES: ToolAnnotations = ToolAnnotations {
    read_only_hint: false,
    destructive_hint: false,
    idempotent_hint: false,
    open_world_hint: false,
};

fn default_annotation_page() -> u64 {
    DEFAULT_ANNOTATION_PAGE
}

/// What an edit sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum Kind {
    Name,
    Comment,
    Prototype,
}

/// One edit of `annotate`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct EditArgument {
    /// `name` (with `procedure` or `address`, and `name`), `comment` (with `address` and
    /// `text`) or `prototype` (with `procedure` and `declaration`).
    kind: Kind,
    /// The procedure: its start address or unique name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    procedure: Option<String>,
    /// An address (`0x` and hexadecimal digits) in a mapped segment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    address: Option<String>,
    /// The name: a letter or `_`, then letters, digits and `_:.@$<>~`; at most 256 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    name: Option<String>,
    /// The comment: at most 4,096 characters, no control characters but line feed and tab,
    /// no bidirectional overrides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    text: Option<String>,
    /// One C function declaration, e.g. `int parse_args(int argc, char **argv);`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    declaration: Option<String>,
    /// Evidence IDs of this session that back the edit (at least one).
    evidence: Vec<String>,
}

/// The arguments of `annotate`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct AnnotateArguments {
    /// The edits, 1 to 256, committed all together or not at all.
    edits: Vec<EditArgument>,
    /// Name of a document of the current provider (see list_documents); default: the
    /// current document.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    document: Option<String>,
}

/// The arguments of `undo_annotation`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct UndoArguments {
    /// The ID of an effective annotation revision, e.g. `ann-000000000003` (an undo too: its
    /// undo applies again what it reverted).
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    annotation: String,
}

/// Which kinds `list_annotations` lists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum KindFilter {
    #[default]
    All,
    Name,
    Comment,
    Prototype,
    Undo,
}

/// The arguments of `list_annotations`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ListArguments {
    /// Only revisions of this kind (default `all`).
    #[serde(default)]
    kind: KindFilter,
    /// Only revisions at this address (`0x` and hexadecimal digits).
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    address: Option<String>,
    /// Only revisions of this document.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    document: Option<String>,
    /// `false` (default): the effective edits only; `true`: every revision, undone ones and
    /// undos included.
    #[serde(default)]
    history: bool,
    /// The `next_cursor` of the previous page (an annotation ID); omit for the first page.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    cursor: Option<String>,
    /// Most revisions in the page (1 to 100, default 50).
    #[serde(default = "default_annotation_page")]
    #[schemars(range(min = 1, max = MAX_ANNOTATION_PAGE))]
    limit: u64,
}

/// The formats of `export_annotations`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum Format {
    Idapython,
    Ghidra,
    Radare2,
    Json,
}

/// The arguments of `export_annotations`.
#[derive(Deserialize, JsonSchema)]
pub(super) struct ExportArguments {
    /// `idapython` (a script for IDA's File > Script command), `ghidra` (a Python script for
    /// Ghidra's Script Manager), `radare2` (commands, for `r2 -i`) or `json`.
    format: Format,
    /// The document whose annotations to export; default: the current document.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    document: Option<String>,
}

/// One revision, as the tools answer it.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub(super) struct AnnotationView {
    /// The revision's ID (`ann-` and twelve digits).
    id: String,
    /// `name`, `comment`, `prototype`, or `undo`.
    kind: String,
    /// The document of the address; null for an undo.
    document: Option<String>,
    /// The annotated address, canonical; null for an undo.
    address: Option<String>,
    /// Whether the address is a procedure's start.
    procedure: bool,
    /// The name, comment text or declaration; null for an undo.
    value: Option<String>,
    /// The Evidence IDs the edit cites.
    evidence: Vec<String>,
    /// The revision an undo reverts; null for an edit.
    undoes: Option<String>,
    /// Whether the revision is in effect (no effective undo reverts it).
    effective: bool,
    /// The undo that reverts it, if one is in effect.
    undone_by: Option<String>,
}

fn kind_name(kind: AnnotationKind) -> &'static str {
    match kind {
        AnnotationKind::Name => "name",
        AnnotationKind::Comment => "comment",
        AnnotationKind::Prototype => "prototype",
        AnnotationKind::Undo => "undo",
    }
}

fn view(revision: &Annotation, effective: bool, undone_by: Option<String>) -> AnnotationView {
    AnnotationView {
        id: revision.id.to_string(),
        kind: kind_name(revision.kind).to_owned(),
        document: revision.document.clone(),
        address: revision.address.clone(),
        procedure: revision.procedure,
        value: revision.value.clone(),
        evidence: revision.evidence.clone(),
        undoes: revision.undoes.as_ref().map(ToString::to_string),
        effective,
        undone_by,
    }
}

/// The result of `annotate`.
#[derive(Serialize, JsonSchema)]
pub(super) struct AnnotateResult {
    /// The new revisions, one per edit, in the order of the edits.
    annotations: Vec<AnnotationView>,
    /// The ID of the ledger's change record of this batch.
    change_record: String,
}

/// The result of `undo_annotation`.
#[derive(Serialize, JsonSchema)]
pub(super) struct UndoResult {
    /// The undo revision.
    annotation: AnnotationView,
    /// The revision it reverted.
    reverted: String,
    /// When the reverted revision was an undo: the revision that is in effect again.
    reapplied: Option<String>,
    /// The ID of the ledger's change record of this undo.
    change_record: String,
}

/// The result of `list_annotations`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ListResult {
    /// This page, oldest first.
    annotations: Vec<AnnotationView>,
    /// Cursor of the next page; null on the last page.
    next_cursor: Option<String>,
    /// Revisions that pass the filter, over all pages.
    total: usize,
}

/// The result of `export_annotations`.
#[derive(Serialize, JsonSchema)]
pub(super) struct ExportResult {
    /// The format asked for.
    format: String,
    /// The document exported.
    document: String,
    /// Effective annotations exported.
    count: usize,
    /// The script, commands or JSON, to run or load in the other tool (nothing was written).
    text: String,
}

/// The annotation tools, in catalog order.
pub(super) fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "annotate",
            title: "Annotate",
            description: "Write back what the investigation established: a batch of 1 to 256 \
            edits, each `{kind: \"name\", procedure | address, name}`, `{kind: \"comment\", \
            address, text}` or `{kind: \"prototype\", procedure, declaration}` (a C function \
            declaration, checked by a C parser), each citing at least one Evidence ID of this \
            session in `evidence`. All edits commit or none (an error names the edit's index \
            and field); the batch is one change record in the ledger. A name is then shown as \
            `label` beside the provider's names wherever the procedure appears, and completes \
            as a procedure name. A label is an inference backed by the Evidence it cites.",
            annotations: REVISES,
            handler: Handler::change(annotate),
        },
        ToolSpec {
            name: "list_annotations",
            title: "List Annotations",
            description: "The session's annotations, oldest first, filtered by kind, address \
            and document: the effective edits, or with `history: true` every revision (undone \
            ones and undos too), one page at a time: pass `next_cursor` back as `cursor`.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::read(list),
        },
        ToolSpec {
            name: "undo_annotation",
            title: "Undo Annotation",
            description: "Revert an effective annotation revision by a new revision (the \
            history is kept; an earlier name at the same address shows again). Undoing an \
            undo applies again what it reverted. Appends one change record to the ledger.",
            annotations: REVISES,
            handler: Handler::change(undo),
        },
        ToolSpec {
            name: "export_annotations",
            title: "Export Annotations",
            description: "The effective annotations of a document as an IDAPython script, a \
            Python script for Ghidra's Script Manager, radare2 commands, or JSON, answered as \
            text: nothing is written to disk. Addresses are the file's linked addresses.",
            annotations: ToolAnnotations::READ_ONLY,
            handler: Handler::read(export),
        },
    ]
}

/// An error naming the edit's index and field.
fn edit_error(index: usize, field: &'static str, problem: EditProblem) -> ToolError {
    SessionError::from(AnnotationError::Edit {
        index,
        field,
        problem,
    })
    .into()
}

/// The field that names the edit's target, and its text.
fn target_field(index: usize, edit: &EditArgument) -> Result<(&'static str, &str), ToolError> {
    let wants_procedure = match edit.kind {
        Kind::Name => None,
        Kind::Comment => Some(false),
        Kind::Prototype => Some(true),
    };
    match (wants_procedure, &edit.procedure, &edit.address) {
        (None, Some(_), Some(_)) => Err(edit_error(
            index,
            "procedure",
            EditProblem::Conflict { other: "address" },
        )),
        (None | Some(true), Some(procedure), None) => Ok(("procedure", procedure)),
        (None | Some(false), None, Some(address)) => Ok(("address", address)),
        (Some(true), _, Some(_)) => Err(edit_error(
            index,
            "address",
            EditProblem::NotAllowed { kind: "prototype" },
        )),
        (Some(false), Some(_), _) => Err(edit_error(
            index,
            "procedure",
            EditProblem::NotAllowed { kind: "comment" },
        )),
        (Some(true), None, None) => Err(edit_error(index, "procedure", EditProblem::Missing)),
        (_, None, None) => Err(edit_error(index, "address", EditProblem::Missing)),
    }
}

/// Resolves the edit's target to a canonical address that exists.
fn resolve_target(
    target: &Target,
    segments: &mut Option<Vec<crate::session::Segment>>,
    index: usize,
    field: &'static str,
    text: &str,
) -> Result<Address, ToolError> {
    let problem = |error: SessionError| {
        edit_error(
            index,
            field,
            EditProblem::Target {
                reason: error.to_string(),
            },
        )
    };
    if field == "procedure" {
        let address = target.resolve_procedure(text).map_err(problem)?;
        if target.provider().supports(Operation::ProcedureInfo) {
            target
                .query_document(|provider, document| provider.procedure_info(document, address))
                .map_err(problem)?;
        }
        return Ok(address);
    }
    let address = Address::parse(text).map_err(|error| {
        edit_error(
            index,
            field,
            EditProblem::Target {
                reason: error.to_string(),
            },
        )
    })?;
    if target.provider().supports(Operation::ListSegments) {
        if segments.is_none() {
            *segments = Some(
                target
                    .query_document(|provider, document| provider.list_segments(document))
                    .map_err(problem)?,
            );
        }
        let mapped = segments.iter().flatten().any(|segment| {
            address.value() >= segment.address.value()
                && address.value() - segment.address.value() < segment.size
        });
        if !mapped {
            return Err(edit_error(
                index,
                field,
                EditProblem::Unmapped {
                    address: address.to_string(),
                },
            ));
        }
        return Ok(address);
    }
    // A provider without segments (a catalog) knows only its procedures' addresses.
    target
        .query_document(|provider, document| provider.procedure_info(document, address))
        .map_err(|_| {
            edit_error(
                index,
                field,
                EditProblem::Unmapped {
                    address: address.to_string(),
                },
            )
        })?;
    Ok(address)
}

fn annotate(
    session: &Session,
    arguments: AnnotateArguments,
    cancel: &Cancel,
) -> Result<AnnotateResult, ToolError> {
    if arguments.edits.is_empty() || arguments.edits.len() > crate::annotations::MAX_BATCH_EDITS {
        return Err(SessionError::from(AnnotationError::BatchSize {
            count: arguments.edits.len(),
            limit: crate::annotations::MAX_BATCH_EDITS,
        })
        .into());
    }
    let target = session.target(None, arguments.document.as_deref())?;
    let document = target.document()?.to_owned();
    let mut segments = None;
    let mut drafts = Vec::with_capacity(arguments.edits.len());
    for (index, edit) in arguments.edits.iter().enumerate() {
        let (kind, value) = match edit.kind {
            Kind::Name => (EditKind::Name, &edit.name),
            Kind::Comment => (EditKind::Comment, &edit.text),
            Kind::Prototype => (EditKind::Prototype, &edit.declaration),
        };
        for (field, given) in [
            ("name", &edit.name),
            ("text", &edit.text),
            ("declaration", &edit.declaration),
        ] {
            if given.is_some() && field != kind.value_field() {
                return Err(edit_error(
                    index,
                    field,
                    EditProblem::NotAllowed {
                        kind: kind_name(match kind {
                            EditKind::Name => AnnotationKind::Name,
                            EditKind::Comment => AnnotationKind::Comment,
                            EditKind::Prototype => AnnotationKind::Prototype,
                        }),
                    },
                ));
            }
        }
        let Some(value) = value else {
            return Err(edit_error(index, kind.value_field(), EditProblem::Missing));
        };
        let (field, text) = target_field(index, edit)?;
        let address = resolve_target(&target, &mut segments, index, field, text)?;
        drafts.push(EditDraft {
            kind,
            document: document.clone(),
            address: address.to_string(),
            value: value.clone(),
            evidence: edit.evidence.clone(),
            procedure: field == "procedure",
        });
    }
    let recorded = serde_json::json!({
        "edits": arguments.edits.iter().zip(&drafts).map(|(edit, draft)| serde_json::json!({
            "kind": kind_name(match edit.kind {
                Kind::Name => AnnotationKind::Name,
                Kind::Comment => AnnotationKind::Comment,
                Kind::Prototype => AnnotationKind::Prototype,
            }),
            "target": edit.procedure.as_ref().or(edit.address.as_ref()),
            "address": draft.address,
            "value": draft.value,
            "evidence": draft.evidence,
        })).collect::<Vec<Value>>(),
        "document": document,
        "provider": target.provider_id(),
    });
    let annotated = session.annotate_unless(target.epoch, drafts, recorded, cancel)?;
    Ok(AnnotateResult {
        annotations: annotated
            .revisions
            .iter()
            .map(|revision| view(revision, true, None))
            .collect(),
        change_record: annotated.record.id.to_string(),
    })
}

fn undo(
    session: &Session,
    arguments: UndoArguments,
    cancel: &Cancel,
) -> Result<UndoResult, ToolError> {
    let recorded = serde_json::json!({ "annotation": arguments.annotation });
    let undone = session.undo_annotation_unless(&arguments.annotation, recorded, cancel)?;
    let Some(revision) = undone.revisions.first() else {
        return Err(SessionError::NotOpen.into());
    };
    let reverted = revision
        .undoes
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    let reapplied = session
        .annotation_history()
        .into_iter()
        .find(|(kept, _, _)| kept.id.as_str() == reverted)
        .and_then(|(kept, _, _)| kept.undoes.map(|id| id.to_string()));
    Ok(UndoResult {
        annotation: view(revision, true, None),
        reverted,
        reapplied,
        change_record: undone.record.id.to_string(),
    })
}

fn list(session: &Session, arguments: ListArguments) -> Result<ListResult, ToolError> {
    let address = match arguments.address.as_deref() {
        Some(text) => Some(
            Address::parse(text)
                .map_err(|error| ArgumentError::Syntax {
                    tool: "list_annotations",
                    argument: "address",
                    reason: error.to_string(),
                })?
                .to_string(),
        ),
        None => None,
    };
    if let Some(cursor) = arguments.cursor.as_deref()
        && !is_annotation_id(cursor)
    {
        return Err(ArgumentError::Syntax {
            tool: "list_annotations",
            argument: "cursor",
            reason: format!(
                "{:?} is not an annotation ID: pass the next_cursor of the previous page",
                crate::text::cut(cursor)
            ),
        }
        .into());
    }
    let wanted = match arguments.kind {
        KindFilter::All => None,
        KindFilter::Name => Some(AnnotationKind::Name),
        KindFilter::Comment => Some(AnnotationKind::Comment),
        KindFilter::Prototype => Some(AnnotationKind::Prototype),
        KindFilter::Undo => Some(AnnotationKind::Undo),
    };
    let passing: Vec<AnnotationView> = session
        .annotation_history()
        .into_iter()
        .filter(|(revision, effective, _)| {
            (arguments.history || (*effective && revision.kind != AnnotationKind::Undo))
                && wanted.is_none_or(|kind| revision.kind == kind)
                && address
                    .as_ref()
                    .is_none_or(|a| revision.address.as_ref() == Some(a))
                && arguments
                    .document
                    .as_ref()
                    .is_none_or(|d| revision.document.as_ref() == Some(d))
        })
        .map(|(revision, effective, by)| view(&revision, effective, by.map(|id| id.to_string())))
        .collect();
    let start = arguments.cursor.as_deref().map_or(0, |cursor| {
        passing.partition_point(|v| v.id.as_str() <= cursor)
    });
    let limit = usize::try_from(arguments.limit)
        .unwrap_or(usize::MAX)
        .max(1);
    let end = passing.len().min(start.saturating_add(limit));
    let page = passing[start..end].to_vec();
    let next_cursor = (end < passing.len())
        .then(|| page.last().map(|v| v.id.clone()))
        .flatten();
    Ok(ListResult {
        annotations: page,
        next_cursor,
        total: passing.len(),
    })
}

fn export(session: &Session, arguments: ExportArguments) -> Result<ExportResult, ToolError> {
    let document = match arguments.document {
        Some(document) => document,
        None => session.current_document().ok_or(SessionError::NoDocument)?,
    };
    let effective: Vec<Annotation> = session
        .annotation_history()
        .into_iter()
        .filter(|(revision, effective, _)| {
            *effective
                && revision.kind != AnnotationKind::Undo
                && revision.document.as_deref() == Some(document.as_str())
        })
        .map(|(revision, _, _)| revision)
        .collect();
    let (format, text) = match arguments.format {
        Format::Idapython => ("idapython", export::idapython(&effective)),
        Format::Ghidra => ("ghidra", export::ghidra(&effective)),
        Format::Radare2 => ("radare2", export::radare2(&effective)),
        Format::Json => ("json", export::json(&document, &effective)),
    };
    Ok(ExportResult {
        format: format.to_owned(),
        document,
        count: effective.len(),
        text,
    })
}
