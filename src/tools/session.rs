//! Session tools: open and close a binary, list providers and documents, pick the current
//! document.

use std::path::Path;

use serde_json::{Value, json};

use super::definition::ToolAnnotations;
use super::outcome::ToolError;
use super::parameters::{Arguments, Kind, PROVIDER, Parameter};
use super::schema::{array, count, flag, nullable_string, object, string};
use super::spec::{Handler, ToolSpec, encode};
use crate::providers::open_path_unless;
use crate::session::{Operation, Session, Target};

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

pub(super) const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "open_binary",
        title: "Open a binary or catalog",
        description: "Open a file for analysis: an ELF, Mach-O (fat binaries give one document \
            per slice) or PE binary with the built-in `native` provider, or a function catalog \
            (JSON, schema `rea.catalog` version 1, e.g. exported from Ghidra, IDA or Hopper) \
            with the `catalog` provider. Opening replaces the binary that is open, which \
            discards its Evidence ledger. The first document becomes current.",
        parameters: &[Parameter {
            name: "path",
            description: "Path of the binary or catalog file on the server's machine \
                (absolute, or relative to the server's working directory).",
            kind: Kind::Text,
            required: true,
        }],
        annotations: REPLACES,
        output: opened_schema,
        handler: Handler::Change(open_binary),
    },
    ToolSpec {
        name: "close_binary",
        title: "Close the binary",
        description: "Close the open binary and discard its Evidence ledger. Evidence IDs of \
            the closed session are never reused.",
        parameters: &[],
        annotations: ToolAnnotations {
            idempotent_hint: true,
            ..REPLACES
        },
        output: closed_schema,
        handler: Handler::Change(close_binary),
    },
    ToolSpec {
        name: "list_providers",
        title: "List providers",
        description: "List the providers declared by the open binary session, the operations \
            each supports, and which is current. Empty when no binary is open.",
        parameters: &[],
        annotations: ToolAnnotations::READ_ONLY,
        output: providers_schema,
        handler: Handler::Read(list_providers),
    },
    ToolSpec {
        name: "list_documents",
        title: "List documents",
        description: "List the documents of a provider (a binary, one slice of a fat binary, or \
            one program of a catalog) with their format and architecture. Records Evidence.",
        parameters: &[PROVIDER],
        annotations: ToolAnnotations::READ_ONLY,
        output: documents_schema,
        handler: Handler::Observe {
            operation: Operation::ListDocuments,
            run: list_documents,
        },
    },
    ToolSpec {
        name: "current_document",
        title: "Show the current document",
        description: "Show the open target, the current provider and the current document \
            (what tools use when no `provider` or `document` is given). All null when no \
            binary is open.",
        parameters: &[],
        annotations: ToolAnnotations::READ_ONLY,
        output: current_schema,
        handler: Handler::Read(current_document),
    },
    ToolSpec {
        name: "set_current_document",
        title: "Select the current document",
        description: "Make a document of a provider current, and that provider the current \
            provider. Later tool calls and completion suggestions use it by default.",
        parameters: &[
            Parameter {
                name: "document",
                description: "Name of the document to make current (see list_documents).",
                kind: Kind::Text,
                required: true,
            },
            PROVIDER,
        ],
        annotations: SELECTS,
        output: selected_schema,
        handler: Handler::Change(set_current_document),
    },
];

fn open_binary(session: &Session, arguments: &Arguments<'_>) -> Result<Value, ToolError> {
    let path = arguments.required_text("path")?;
    let opened = open_path_unless(session, Path::new(path), arguments.cancel())?;
    encode("open_binary", &opened)
}

fn close_binary(session: &Session, _: &Arguments<'_>) -> Result<Value, ToolError> {
    let closed = session.close()?;
    encode("close_binary", &closed)
}

fn list_providers(session: &Session, _: &Arguments<'_>) -> Result<Value, ToolError> {
    Ok(json!({
        "label": session.label(),
        "providers": encode("list_providers", &session.providers())?,
    }))
}

fn list_documents(target: &Target, _: &Arguments<'_>) -> Result<Value, ToolError> {
    let documents = target.query(|provider| provider.list_documents())?;
    Ok(json!({
        "provider": target.provider_id(),
        "documents": encode("list_documents", &documents)?,
    }))
}

fn current_document(session: &Session, _: &Arguments<'_>) -> Result<Value, ToolError> {
    let provider = session.providers().into_iter().find(|p| p.current);
    Ok(json!({
        "label": session.label(),
        "provider": provider.map(|p| p.id),
        "document": session.current_document(),
    }))
}

fn set_current_document(session: &Session, arguments: &Arguments<'_>) -> Result<Value, ToolError> {
    let document = arguments.required_text("document")?;
    let target = session.set_current_document(arguments.text("provider"), document)?;
    Ok(json!({
        "provider": target.provider_id(),
        "document": document,
    }))
}

fn document_schema() -> Value {
    object(json!({
        "name": string("Document name, unique within its provider."),
        "format": nullable_string("Container format (`elf`, `macho`, `pe`, ...), when known."),
        "architecture": nullable_string("Architecture (`x86_64`, `arm64`, ...), when known."),
    }))
}

fn closed_schema() -> Value {
    object(json!({
        "label": string("The closed target (for a file, its path)."),
        "evidence_discarded": count("How many Evidence records were discarded."),
    }))
}

fn opened_schema() -> Value {
    object(json!({
        "label": string("The opened target: the path as given."),
        "providers": array(json!({"type": "string"}), "Declared provider identities; the first is current."),
        "documents": array(document_schema(), "The current provider's documents."),
        "current_document": nullable_string("The current document: the first document, if any."),
        "replaced": {
            "description": "The binary session this one replaced, or null.",
            "anyOf": [closed_schema(), {"type": "null"}],
        },
    }))
}

fn providers_schema() -> Value {
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

fn documents_schema() -> Value {
    object(json!({
        "provider": string("The provider asked."),
        "documents": array(document_schema(), "Its documents, in its order."),
    }))
}

fn current_schema() -> Value {
    object(json!({
        "label": nullable_string("The open target, or null when no binary is open."),
        "provider": nullable_string("The current provider, or null."),
        "document": nullable_string("The current document, or null."),
    }))
}

fn selected_schema() -> Value {
    object(json!({
        "provider": string("The provider that is now current."),
        "document": string("The document that is now current."),
    }))
}
