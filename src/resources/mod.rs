//! Resources and resource templates (docs/CONTRACT.md section 14): what `resources/list`,
//! `resources/templates/list` and `resources/read` answer, and which completion family
//! completes each template variable (`completion/complete` with `ref/resource`).
//!
//! - Static resources, the same for every client: the published JSON Schemas (Artifact
//!   Inventory v1, Process Capture v4, the catalog format) and a guide to the templates.
//! - Five templates over the binary sessions of a [`ToolBox`]'s store, each naming its session
//!   by handle: an Evidence record, a residual unknown with its revisions, a procedure's
//!   dossier, an inventory occurrence and a process capture.
//!
//! Reading never changes a session, except that the dossier records Evidence exactly as the
//! tools it runs do (`procedure_info`, `callers`, `callees`, `disassemble`, each cut short by
//! the bounds below). Variables are percent-encoded in URIs (RFC 6570 simple expansion:
//! everything but unreserved characters), so a value holding `/` round-trips.
//!
//! ```
//! use rea::resources::{SessionItem, evidence_uri, parse_session};
//!
//! let uri = evidence_uri("bs_abc", "ev-000000000001");
//! assert_eq!(uri, "rea://session/bs_abc/evidence/ev-000000000001");
//! let parsed = parse_session(&uri).unwrap();
//! assert_eq!(parsed.session, "bs_abc");
//! assert!(matches!(parsed.item, SessionItem::Evidence { .. }));
//! ```

mod uri;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

pub use uri::{
    SESSION_PREFIX, SessionItem, SessionUri, UriError, decode, encode, evidence_uri, parse_session,
};

use crate::core::Family;
use crate::providers::catalog::CATALOG_SCHEMA;
use crate::schemas::{ARTIFACT_INVENTORY_V1, PROCESS_CAPTURE_V4};
use crate::session::ClientHandles;
use crate::text::Quoted;
use crate::tools::{MAX_RESULT_BYTES, ToolBox};

/// The MIME type of every JSON resource.
pub const JSON_MIME: &str = "application/json";

/// Most callers and most callees a dossier lists (one page of each tool).
pub const DOSSIER_EDGES: u64 = 50;

/// Most instructions of the dossier's disassembly (its first page).
pub const DOSSIER_INSTRUCTIONS: u64 = 200;

/// A resource whose content never changes.
struct StaticResource {
    uri: &'static str,
    name: &'static str,
    title: &'static str,
    description: &'static str,
    mime_type: &'static str,
    text: &'static str,
}

const GUIDE: &str = include_str!("templates-guide.md");

const STATIC_RESOURCES: [StaticResource; 4] = [
    StaticResource {
        uri: "rea://schema/artifact-inventory-v1",
        name: "artifact-inventory-v1.schema.json",
        title: "Artifact Inventory v1 (JSON Schema)",
        description: "The JSON Schema of the pages inventory_artifacts returns and retains.",
        mime_type: "application/schema+json",
        text: ARTIFACT_INVENTORY_V1,
    },
    StaticResource {
        uri: "rea://schema/process-capture-v4",
        name: "process-capture-v4.schema.json",
        title: "Process Capture v4 (JSON Schema)",
        description: "The JSON Schema of the documents import_process_capture accepts.",
        mime_type: "application/schema+json",
        text: PROCESS_CAPTURE_V4,
    },
    StaticResource {
        uri: "rea://schema/catalog-v1",
        name: "catalog-v1.schema.json",
        title: "Function catalog v1 (JSON Schema)",
        description: "The JSON Schema of the catalogs open_binary opens with the catalog \
            provider (exports from Ghidra, IDA or Hopper).",
        mime_type: "application/schema+json",
        text: CATALOG_SCHEMA,
    },
    StaticResource {
        uri: "rea://guide/templates",
        name: "templates.md",
        title: "Guide to the resource templates",
        description: "What each resource template names, how its variables complete, and \
            what reading it records.",
        mime_type: "text/markdown",
        text: GUIDE,
    },
];

/// A resource template: its URI template and the family that completes each variable.
#[derive(Debug)]
pub struct Template {
    /// The RFC 6570 URI template.
    pub uri_template: &'static str,
    /// A short name.
    pub name: &'static str,
    /// A title for people.
    pub title: &'static str,
    /// What a resource of this template holds.
    pub description: &'static str,
    /// The variables in URI order, each with the family that completes it.
    pub variables: &'static [(&'static str, Family)],
}

/// The five templates, in `resources/templates/list` order.
pub const TEMPLATES: [Template; 5] = [
    Template {
        uri_template: "rea://session/{session}/evidence/{evidence_id}",
        name: "evidence",
        title: "Evidence record",
        description: "One retained Evidence record of a binary session: operation, arguments, \
            result, provider, document (as get_evidence answers).",
        variables: &[
            ("session", Family::Session),
            ("evidence_id", Family::Evidence),
        ],
    },
    Template {
        uri_template: "rea://session/{session}/unknown/{unknown_id}",
        name: "unknown",
        title: "Residual unknown",
        description: "A residual unknown with every revision of its chain, oldest first.",
        variables: &[
            ("session", Family::Session),
            ("unknown_id", Family::ResidualUnknown),
        ],
    },
    Template {
        uri_template: "rea://session/{session}/document/{document}/procedure/{procedure}",
        name: "procedure",
        title: "Procedure dossier",
        description: "A procedure's info, its first 50 callers and callees and the first 200 \
            instructions of its disassembly; reading it records each part as Evidence, like \
            the tools that compute them.",
        variables: &[
            ("session", Family::Session),
            ("document", Family::Document),
            ("procedure", Family::Procedure),
        ],
    },
    Template {
        uri_template: "rea://session/{session}/inventory/{manifest_id}/occurrence/{occurrence_id}",
        name: "occurrence",
        title: "Artifact occurrence",
        description: "One file of a retained artifact inventory: path, size, SHA-256 and \
            detected format, with the inventory's root.",
        variables: &[
            ("session", Family::Session),
            ("manifest_id", Family::ArtifactManifest),
            ("occurrence_id", Family::ArtifactOccurrence),
        ],
    },
    Template {
        uri_template: "rea://session/{session}/capture/{capture_id}",
        name: "capture",
        title: "Process capture",
        description: "A retained, schema-valid Process Capture v4 document.",
        variables: &[
            ("session", Family::Session),
            ("capture_id", Family::ProcessCapture),
        ],
    },
];

/// Why a resource could not be read or a template variable completed. Messages name the part
/// of the URI that did not resolve; caller text is cut by the one quoting rule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResourceError {
    /// The URI names no resource and fits no template.
    #[error("no resource has the URI {uri:?}; see resources/list and resources/templates/list")]
    UnknownUri {
        /// The URI sent.
        uri: Quoted,
    },
    /// A variable of the URI is not valid percent-encoded UTF-8, or is empty.
    #[error("the {variable} part of URI {uri:?} is not a percent-encoded, non-empty UTF-8 value")]
    BadVariable {
        /// The URI sent.
        uri: Quoted,
        /// The variable.
        variable: &'static str,
    },
    /// The session the URI names is not open.
    #[error(
        "no binary session {handle:?} is open (the session part of the URI); call open_binary \
         and use the session it returns"
    )]
    UnknownSession {
        /// The handle.
        handle: Quoted,
    },
    /// A variable names nothing in its session.
    #[error("the {variable} part of the URI does not resolve: {reason}")]
    NotFound {
        /// The variable that did not resolve.
        variable: &'static str,
        /// Why, as the session or tool says it.
        reason: String,
    },
    /// The resource would be larger than a tool result may be.
    #[error("resource {uri:?} would be more than {limit} bytes of JSON; use the tools instead")]
    TooLarge {
        /// The URI.
        uri: Quoted,
        /// [`MAX_RESULT_BYTES`].
        limit: usize,
    },
    /// `ref/resource` names no template of this server.
    #[error("no resource template has the URI template {uri:?}")]
    UnknownTemplate {
        /// The URI template sent.
        uri: Quoted,
    },
    /// The template has no variable of this name.
    #[error("resource template {template:?} has no variable {variable:?}")]
    UnknownVariable {
        /// The template.
        template: &'static str,
        /// The variable sent.
        variable: Quoted,
    },
}

/// The `resources/list` result: the static resources, each with its size.
pub fn list() -> Value {
    let resources: Vec<Value> = STATIC_RESOURCES
        .iter()
        .map(|resource| {
            json!({
                "uri": resource.uri,
                "name": resource.name,
                "title": resource.title,
                "description": resource.description,
                "mimeType": resource.mime_type,
                "size": resource.text.len(),
            })
        })
        .collect();
    json!({ "resources": resources })
}

/// The `resources/templates/list` result.
pub fn templates_list() -> Value {
    let templates: Vec<Value> = TEMPLATES
        .iter()
        .map(|template| {
            json!({
                "uriTemplate": template.uri_template,
                "name": template.name,
                "title": template.title,
                "description": template.description,
                "mimeType": JSON_MIME,
            })
        })
        .collect();
    json!({ "resourceTemplates": templates })
}

/// The family that completes `variable` of the template `uri_template`.
pub fn variable_family(uri_template: &str, variable: &str) -> Result<Family, ResourceError> {
    let template = TEMPLATES
        .iter()
        .find(|template| template.uri_template == uri_template)
        .ok_or_else(|| ResourceError::UnknownTemplate {
            uri: uri_template.into(),
        })?;
    template
        .variables
        .iter()
        .find(|(name, _)| *name == variable)
        .map(|(_, family)| *family)
        .ok_or_else(|| ResourceError::UnknownVariable {
            template: template.uri_template,
            variable: variable.into(),
        })
}

/// Whether `uri` is one of the static resources of `resources/list`: the same for every
/// client and unchanged while the process runs (every other readable URI names a binary
/// session).
pub fn is_static(uri: &str) -> bool {
    STATIC_RESOURCES.iter().any(|resource| resource.uri == uri)
}

/// The `resources/read` result for `uri`.
pub fn read(tools: &ToolBox, uri: &str) -> Result<Value, ResourceError> {
    if let Some(resource) = STATIC_RESOURCES.iter().find(|r| r.uri == uri) {
        return Ok(contents(uri, resource.mime_type, resource.text.to_owned()));
    }
    let parsed = parse_session(uri).map_err(|error| match error {
        UriError::Shape => ResourceError::UnknownUri { uri: uri.into() },
        UriError::Variable(variable) => ResourceError::BadVariable {
            uri: uri.into(),
            variable,
        },
    })?;
    let text = read_session_item(tools, &parsed)?.to_string();
    if text.len() > MAX_RESULT_BYTES {
        return Err(ResourceError::TooLarge {
            uri: uri.into(),
            limit: MAX_RESULT_BYTES,
        });
    }
    Ok(contents(uri, JSON_MIME, text))
}

fn contents(uri: &str, mime_type: &str, text: String) -> Value {
    json!({ "contents": [{ "uri": uri, "mimeType": mime_type, "text": text }] })
}

fn read_session_item(tools: &ToolBox, uri: &SessionUri) -> Result<Value, ResourceError> {
    let session = tools
        .store()
        .get(&uri.session)
        .map_err(|_| ResourceError::UnknownSession {
            handle: uri.session.as_str().into(),
        })?;
    let not_found =
        |variable: &'static str, reason: String| ResourceError::NotFound { variable, reason };
    match &uri.item {
        SessionItem::Evidence { id } => {
            let record = session
                .evidence(id)
                .map_err(|error| not_found("evidence_id", error.to_string()))?;
            serde_json::to_value(record.as_ref())
                .map_err(|error| not_found("evidence_id", error.to_string()))
        }
        SessionItem::Unknown { id } => {
            let revisions = session
                .unknown_history(id)
                .map_err(|error| not_found("unknown_id", error.to_string()))?;
            Ok(json!({ "unknown_id": id, "revisions": revisions }))
        }
        SessionItem::Procedure {
            document,
            procedure,
        } => dossier(tools, &uri.session, document, procedure),
        SessionItem::Occurrence {
            manifest_id,
            occurrence_id,
        } => {
            let pages = session.inventory_pages();
            let mut of_manifest = pages
                .iter()
                .filter(|page| page.manifest_id == *manifest_id)
                .peekable();
            let root = match of_manifest.peek() {
                Some(page) => page.root.clone(),
                None => {
                    return Err(not_found(
                        "manifest_id",
                        format!(
                            "no retained inventory has manifest ID {}",
                            quoted(manifest_id)
                        ),
                    ));
                }
            };
            let occurrence = of_manifest
                .flat_map(|page| &page.occurrences)
                .find(|occurrence| occurrence.occurrence_id == *occurrence_id)
                .ok_or_else(|| {
                    not_found(
                        "occurrence_id",
                        format!(
                            "the retained pages of inventory {} have no occurrence {}",
                            quoted(manifest_id),
                            quoted(occurrence_id)
                        ),
                    )
                })?;
            Ok(json!({ "manifest_id": manifest_id, "root": root, "occurrence": occurrence }))
        }
        SessionItem::Capture { id } => {
            if !session.process_capture_ids().contains(id) {
                return Err(not_found(
                    "capture_id",
                    format!(
                        "no retained, valid Process Capture v4 has Evidence ID {}",
                        quoted(id)
                    ),
                ));
            }
            let record = session
                .evidence(id)
                .map_err(|error| not_found("capture_id", error.to_string()))?;
            Ok(record.result.clone())
        }
    }
}

/// Caller text as messages quote it: cut to 64 characters, in JSON quotes.
fn quoted(text: &str) -> String {
    format!("{:?}", Quoted::from(text))
}

/// Why a part of a dossier is missing: the error text of the tool that computes it, shown to
/// the reader as the tool wrote it.
struct PartFailed(String);

/// The dossier of `procedure`: each part is the result of the tool that computes it (and
/// records its Evidence), or the tool's error for a part the provider cannot give.
fn dossier(
    tools: &ToolBox,
    session: &str,
    document: &str,
    procedure: &str,
) -> Result<Value, ResourceError> {
    // A client of its own, so reading never changes which session the reader's calls use.
    let reader = ClientHandles::new();
    let call = |tool: &str, limit: Option<u64>| -> Result<Map<String, Value>, PartFailed> {
        let mut arguments = Map::new();
        arguments.insert("session".into(), session.into());
        arguments.insert("document".into(), document.into());
        arguments.insert("procedure".into(), procedure.into());
        if let Some(limit) = limit {
            arguments.insert("limit".into(), limit.into());
        }
        match tools.call_as(&reader, tool, &arguments, &crate::session::Cancel::never()) {
            Ok(outcome) => match outcome.structured_content() {
                Some(result) => Ok(result.clone()),
                None => Err(PartFailed(outcome.text().to_owned())),
            },
            Err(unknown) => Err(PartFailed(unknown.to_string())),
        }
    };
    let info =
        call("procedure_info", None).map_err(|PartFailed(reason)| ResourceError::NotFound {
            variable: "procedure",
            reason,
        })?;
    let part = |tool: &str, limit: u64| match call(tool, Some(limit)) {
        Ok(result) => Value::Object(result),
        Err(PartFailed(error)) => json!({ "error": error }),
    };
    Ok(json!({
        "procedure_info": info,
        "callers": part("callers", DOSSIER_EDGES),
        "callees": part("callees", DOSSIER_EDGES),
        "disassembly": part("disassemble", DOSSIER_INSTRUCTIONS),
    }))
}

/// Fills a template's variables (percent-encoded); `None` when a variable is missing.
pub fn expand(template: &Template, values: &BTreeMap<&str, &str>) -> Option<String> {
    let mut uri = template.uri_template.to_owned();
    for (variable, _) in template.variables {
        let value = values.get(variable)?;
        uri = uri.replace(&format!("{{{variable}}}"), &encode(value));
    }
    Some(uri)
}
