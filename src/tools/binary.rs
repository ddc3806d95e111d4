//! Binary-session tools: open and close a binary, list providers and documents, pick the current
//! document.

use std::path::Path;

use serde::Serialize;
use serde_json::{Value, json};

use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::parameters::{Kind, PROVIDER, Parameter, tool_arguments};
use super::schema::{array, count, flag, nullable_string, object, string};
use super::spec::{ToolResult, ToolSpec, change, observe, read};
use crate::providers::open_path_unless;
use crate::session::{
    Cancel, ClosedBinary, DocumentInfo, Opened, Operation, ProviderSummary, Session, Target,
};

/// Opening replaces the open binary and so discards its ledger.
const REPLACES: ToolAnnotations = ToolAnnotations {
    read_only_hint: false,
    destructive_hint: true,
    idempotent_hint: false,
    open_world_hint: false,
};

/// Selecting a document changes only which document is current.
const SELECTS: ToolAnnotations = ToolAnnotations {
    read_only_hint: false,
    destructive_hint: false,
    idempotent_hint: true,
    open_world_hint: false,
};

tool_arguments! {
    /// The arguments of `open_binary`.
    pub(super) struct OpenBinaryArguments<'a> {
        path: &'a str = Parameter {
            name: "path",
            description: "Path of the binary or catalog file on the server's machine \
                (absolute, or relative to the server's working directory).",
            kind: Kind::Text,
            required: true,
        },
    }
}

tool_arguments! {
    /// `close_binary`, `list_providers` and `current_document` take no arguments.
    pub(super) struct NoArguments<'a> {}
}

tool_arguments! {
    /// The arguments of `list_documents`: the provider, which the ToolBox reads.
    pub(super) struct ListDocumentsArguments<'a> {
        provider = PROVIDER,
    }
}

tool_arguments! {
    /// The arguments of `set_current_document`.
    pub(super) struct SetCurrentDocumentArguments<'a> {
        document: &'a str = Parameter {
            name: "document",
            description: "Name of the document to make current (see list_documents).",
            kind: Kind::Text,
            required: true,
        },
        provider: Option<&'a str> = PROVIDER,
    }
}

pub(super) const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "open_binary",
        title: "Open a binary or catalog",
        description: "Open a file for analysis: an ELF, Mach-O (fat binaries give one document \
            per slice) or PE binary with the built-in `native` provider, or a function catalog \
            (JSON, schema `rea.catalog` version 1, e.g. exported from Ghidra, IDA or Hopper) \
            with the `catalog` provider. Opening replaces the binary that is open, which \
            discards its Evidence ledger. The first document becomes current.",
        annotations: REPLACES,
        handler: change!(open_binary),
    },
    ToolSpec {
        name: "close_binary",
        title: "Close the binary",
        description: "Close the open binary and discard its Evidence ledger. Evidence IDs of \
            the closed session are never reused.",
        annotations: ToolAnnotations {
            idempotent_hint: true,
            ..REPLACES
        },
        handler: change!(close_binary),
    },
    ToolSpec {
        name: "list_providers",
        title: "List providers",
        description: "List the providers declared by the open binary session, the operations \
            each supports, and which is current. Empty when no binary is open.",
        annotations: ToolAnnotations::READ_ONLY,
        handler: read!(list_providers),
    },
    ToolSpec {
        name: "list_documents",
        title: "List documents",
        description: "List the documents of a provider (a binary, one slice of a fat binary, or \
            one program of a catalog) with their format and architecture. Records Evidence.",
        annotations: ToolAnnotations::READ_ONLY,
        handler: observe!(Operation::ListDocuments, list_documents),
    },
    ToolSpec {
        name: "current_document",
        title: "Show the current document",
        description: "Show the open target, the current provider and the current document \
            (what tools use when no `provider` or `document` is given). All null when no \
            binary is open.",
        annotations: ToolAnnotations::READ_ONLY,
        handler: read!(current_document),
    },
    ToolSpec {
        name: "set_current_document",
        title: "Select the current document",
        description: "Make a document of a provider current, and that provider the current \
            provider. Later tool calls and completion suggestions use it by default.",
        annotations: SELECTS,
        handler: change!(set_current_document),
    },
];

fn open_binary(
    session: &Session,
    arguments: OpenBinaryArguments<'_>,
    cancel: &Cancel,
) -> Result<Opened, ToolError> {
    Ok(open_path_unless(
        session,
        Path::new(arguments.path),
        cancel,
    )?)
}

/// The result of `open_binary`: what was opened.
impl ToolResult for Opened {
    fn output_schema() -> Value {
        object(json!({
            "label": string("The opened target: the path as given."),
            "providers": array(json!({"type": "string"}), "Declared provider identities; the first is current."),
            "documents": array(document_schema(), "The current provider's documents."),
            "current_document": nullable_string("The current document: the first document, if any."),
            "replaced": {
                "description": "The binary session this one replaced, or null.",
                "anyOf": [ClosedBinary::output_schema(), {"type": "null"}],
            },
        }))
    }
}

fn close_binary(
    session: &Session,
    _: NoArguments<'_>,
    _: &Cancel,
) -> Result<ClosedBinary, ToolError> {
    Ok(session.close()?)
}

/// The result of `close_binary`: what was closed.
impl ToolResult for ClosedBinary {
    fn output_schema() -> Value {
        object(json!({
            "label": string("The closed target (for a file, its path)."),
            "evidence_discarded": count("How many Evidence records were discarded."),
        }))
    }
}

fn list_providers(session: &Session, _: NoArguments<'_>) -> Result<ListProvidersResult, ToolError> {
    Ok(ListProvidersResult {
        label: session.label(),
        providers: session.providers(),
    })
}

/// The result of `list_providers`.
#[derive(Serialize)]
pub(super) struct ListProvidersResult {
    label: Option<String>,
    providers: Vec<ProviderSummary>,
}

impl ToolResult for ListProvidersResult {
    fn output_schema() -> Value {
        let provider = object(json!({
            "id": string("The provider's identity."),
            "operations": array(json!({"type": "string"}), "Operations (tool names) it supports."),
            "current": flag("Whether it is the current provider."),
        }));
        object(json!({
            "label": nullable_string("The open target, or null when no binary is open."),
            "providers": array(provider, "Declared providers, in declaration order."),
        }))
    }
}

fn list_documents(
    target: &Target,
    _: ListDocumentsArguments<'_>,
) -> Result<ListDocumentsResult, ToolError> {
    Ok(ListDocumentsResult {
        documents: target.query(|provider| provider.list_documents())?,
        provider: target.provider_id().to_owned(),
    })
}

/// The result of `list_documents`.
#[derive(Serialize)]
pub(super) struct ListDocumentsResult {
    documents: Vec<DocumentInfo>,
    provider: String,
}

impl ToolResult for ListDocumentsResult {
    fn output_schema() -> Value {
        object(json!({
            "provider": string("The provider asked."),
            "documents": array(document_schema(), "Its documents, in its order."),
        }))
    }
}

fn current_document(
    session: &Session,
    _: NoArguments<'_>,
) -> Result<CurrentDocumentResult, ToolError> {
    let provider = session.providers().into_iter().find(|p| p.current);
    Ok(CurrentDocumentResult {
        document: session.current_document(),
        label: session.label(),
        provider: provider.map(|p| p.id),
    })
}

/// The result of `current_document`.
#[derive(Serialize)]
pub(super) struct CurrentDocumentResult {
    document: Option<String>,
    label: Option<String>,
    provider: Option<String>,
}

impl ToolResult for CurrentDocumentResult {
    fn output_schema() -> Value {
        object(json!({
            "label": nullable_string("The open target, or null when no binary is open."),
            "provider": nullable_string("The current provider, or null."),
            "document": nullable_string("The current document, or null."),
        }))
    }
}

fn set_current_document(
    session: &Session,
    arguments: SetCurrentDocumentArguments<'_>,
    _: &Cancel,
) -> Result<SetCurrentDocumentResult, ToolError> {
    let target = session.set_current_document(arguments.provider, arguments.document)?;
    Ok(SetCurrentDocumentResult {
        document: arguments.document.to_owned(),
        provider: target.provider_id().to_owned(),
    })
}

/// The result of `set_current_document`.
#[derive(Serialize)]
pub(super) struct SetCurrentDocumentResult {
    document: String,
    provider: String,
}

impl ToolResult for SetCurrentDocumentResult {
    fn output_schema() -> Value {
        object(json!({
            "provider": string("The provider that is now current."),
            "document": string("The document that is now current."),
        }))
    }
}

/// A document as `open_binary` and `list_documents` describe it.
fn document_schema() -> Value {
    object(json!({
        "name": string("Document name, unique within its provider."),
        "format": nullable_string("Container format (`elf`, `macho`, `pe`, ...), when known."),
        "architecture": nullable_string("Architecture (`x86_64`, `arm64`, ...), when known."),
    }))
}
