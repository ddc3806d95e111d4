//! The REA provider protocol (`docs/PROVIDER_PROTOCOL.md`): the requests the server writes and
//! the parser of what an adapter answers. Every answer is untrusted input: [`parse_reply`]
//! checks the JSON-RPC envelope, the id, and each result's shape and bounds, and fails with a
//! typed [`ReplyError`], never a panic.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::core::{MAX_VALUE_CHARS, ProcedureEntry, ProcedurePage};
use crate::session::{
    Address, DocumentInfo, MAX_DECOMPILE_CHARS, MAX_DECOMPILE_WARNINGS, MAX_WARNING_CHARS,
    Operation,
};

/// The protocol version this server speaks.
pub const PROTOCOL_VERSION: u64 = 1;

/// Most procedures one `list_procedures` answer may hold, whatever limit was asked.
pub const MAX_PAGE_ENTRIES: usize = 10_000;

/// Most documents one adapter may list.
pub const MAX_DOCUMENTS: usize = 1_000;

/// Most characters of a name, cursor or message in an answer.
const MAX_TEXT_CHARS: usize = 4_096;

/// Error code: no document has the name asked for.
pub const UNKNOWN_DOCUMENT: i64 = -32001;
/// Error code: no procedure starts at the address asked for.
pub const NO_PROCEDURE: i64 = -32002;
/// Error code: the cursor was not issued by the adapter.
pub const INVALID_CURSOR: i64 = -32003;
/// Error code: the adapter ran out of memory under its address-space limit; it exits after
/// answering.
pub const OUT_OF_MEMORY: i64 = -32006;

/// A method of the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// `describe`: identity, version and operations.
    Describe,
    /// `open`: the file to serve.
    Open,
    /// `list_documents`.
    ListDocuments,
    /// `list_procedures`.
    ListProcedures,
    /// `procedure_info`.
    ProcedureInfo,
    /// `decompile`.
    Decompile,
    /// `close`.
    Close,
}

impl Method {
    /// Every method, in the order of the protocol document.
    pub const ALL: [Method; 7] = [
        Method::Describe,
        Method::Open,
        Method::ListDocuments,
        Method::ListProcedures,
        Method::ProcedureInfo,
        Method::Decompile,
        Method::Close,
    ];

    /// The method's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Method::Describe => "describe",
            Method::Open => "open",
            Method::ListDocuments => "list_documents",
            Method::ListProcedures => "list_procedures",
            Method::ProcedureInfo => "procedure_info",
            Method::Decompile => "decompile",
            Method::Close => "close",
        }
    }
}

/// One request line (without its newline).
pub fn request_line(id: u64, method: Method, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method.name(), "params": params}).to_string()
}

/// What an adapter's answer was, once checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `describe`.
    Described(Description),
    /// `open` and `list_documents`.
    Documents(Vec<DocumentInfo>),
    /// `list_procedures`.
    Procedures(ProcedurePage),
    /// `procedure_info`.
    Procedure(ProcedureRecord),
    /// `decompile`.
    Decompiled(DecompiledCode),
    /// `close`.
    Closed,
    /// A JSON-RPC error the adapter answered with.
    Error {
        /// The error code.
        code: i64,
        /// The message, at most 4,096 characters.
        message: String,
    },
}

/// What `describe` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Description {
    /// The adapter's name, e.g. `angr`.
    pub name: String,
    /// The version of the tool behind it, e.g. `9.2.213`.
    pub version: String,
    /// The operations it supports.
    pub operations: Vec<Operation>,
}

/// What `procedure_info` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcedureRecord {
    /// The start address.
    pub address: Address,
    /// The name, if the tool has one.
    pub name: Option<String>,
    /// The size in bytes, if known.
    pub size: Option<u64>,
    /// The section containing the start, if known.
    pub segment: Option<String>,
}

/// What `decompile` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecompiledCode {
    /// The procedure's address.
    pub address: Address,
    /// Its name, if the tool has one.
    pub name: Option<String>,
    /// The pseudo-C.
    pub code: String,
    /// Warnings and errors, verbatim.
    pub warnings: Vec<String>,
    /// Whether the code is whole.
    pub complete: bool,
    /// Why not, when it is not.
    pub reason: Option<String>,
}

/// Why an answer was refused. Any of these means the adapter is broken: the server stops it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReplyError {
    /// The line is not JSON.
    #[error("the answer is not JSON: {0}")]
    NotJson(String),
    /// The JSON is not a JSON-RPC 2.0 response.
    #[error("the answer is not a JSON-RPC 2.0 response: {0}")]
    Envelope(&'static str),
    /// The response answers another request.
    #[error("the answer is for request {found}, not {expected}")]
    WrongId {
        /// The id sent.
        expected: u64,
        /// The id answered (as JSON, cut to 64 characters).
        found: String,
    },
    /// The result does not have the method's shape.
    #[error("the {method} result is malformed: {reason}")]
    Shape {
        /// The method.
        method: &'static str,
        /// What is wrong, from the JSON reader.
        reason: String,
    },
    /// A field is out of its bounds or not in its canonical form.
    #[error("the {method} result has an invalid {field}: {reason}")]
    Field {
        /// The method.
        method: &'static str,
        /// The field.
        field: &'static str,
        /// What is wrong.
        reason: String,
    },
}

#[derive(Deserialize)]
struct Envelope {
    jsonrpc: Option<String>,
    id: Option<Value>,
    result: Option<Value>,
    error: Option<WireError>,
}

#[derive(Deserialize)]
struct WireError {
    code: i64,
    message: String,
}

#[derive(Deserialize)]
struct WireDescription {
    name: String,
    version: String,
    protocol: u64,
    operations: Vec<String>,
}

#[derive(Deserialize)]
struct WireDocuments {
    documents: Vec<WireDocument>,
}

#[derive(Deserialize)]
struct WireDocument {
    name: String,
    format: Option<String>,
    architecture: Option<String>,
}

#[derive(Deserialize)]
struct WireProcedures {
    procedures: Vec<WireEntry>,
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct WireEntry {
    address: String,
    name: Option<String>,
}

#[derive(Deserialize)]
struct WireProcedure {
    address: String,
    name: Option<String>,
    size: Option<u64>,
    segment: Option<String>,
}

#[derive(Deserialize)]
struct WireDecompiled {
    address: String,
    name: Option<String>,
    code: String,
    warnings: Vec<String>,
    complete: bool,
    reason: Option<String>,
}

/// Checks `line` as the answer to request `id` of `method`.
pub fn parse_reply(line: &[u8], id: u64, method: Method) -> Result<Reply, ReplyError> {
    let envelope: Envelope =
        serde_json::from_slice(line).map_err(|e| ReplyError::NotJson(e.to_string()))?;
    if envelope.jsonrpc.as_deref() != Some("2.0") {
        return Err(ReplyError::Envelope("`jsonrpc` is not \"2.0\""));
    }
    match &envelope.id {
        Some(Value::Number(n)) if n.as_u64() == Some(id) => {}
        Some(other) => {
            return Err(ReplyError::WrongId {
                expected: id,
                found: crate::text::cut(&other.to_string()),
            });
        }
        None => return Err(ReplyError::Envelope("`id` is missing")),
    }
    match (envelope.result, envelope.error) {
        (Some(_), Some(_)) => Err(ReplyError::Envelope("both `result` and `error`")),
        (None, None) => Err(ReplyError::Envelope("neither `result` nor `error`")),
        (None, Some(error)) => Ok(Reply::Error {
            code: error.code,
            message: bounded_text(
                method.name(),
                "error.message",
                error.message,
                MAX_TEXT_CHARS,
            )?,
        }),
        (Some(result), None) => parse_result(result, method),
    }
}

fn parse_result(result: Value, method: Method) -> Result<Reply, ReplyError> {
    let name = method.name();
    match method {
        Method::Describe => {
            let wire: WireDescription = shape(name, result)?;
            if wire.protocol != PROTOCOL_VERSION {
                return Err(field(
                    name,
                    "protocol",
                    format!(
                        "version {} (this server speaks {PROTOCOL_VERSION})",
                        wire.protocol
                    ),
                ));
            }
            let mut operations = Vec::new();
            for operation in wire.operations {
                let op = Operation::from_name(&operation).ok_or_else(|| {
                    field(
                        name,
                        "operations",
                        format!("unknown operation {}", quoted(&operation)),
                    )
                })?;
                if !operations.contains(&op) {
                    operations.push(op);
                }
            }
            operations.sort_unstable();
            Ok(Reply::Described(Description {
                name: bounded_text(name, "name", wire.name, MAX_VALUE_CHARS)?,
                version: bounded_text(name, "version", wire.version, MAX_VALUE_CHARS)?,
                operations,
            }))
        }
        Method::Open | Method::ListDocuments => {
            let wire: WireDocuments = shape(name, result)?;
            if wire.documents.len() > MAX_DOCUMENTS {
                return Err(field(
                    name,
                    "documents",
                    format!("more than {MAX_DOCUMENTS}"),
                ));
            }
            let mut documents = Vec::with_capacity(wire.documents.len());
            for document in wire.documents {
                let text = bounded_text(name, "documents.name", document.name, MAX_VALUE_CHARS)?;
                if text.is_empty() || documents.iter().any(|d: &DocumentInfo| d.name == text) {
                    return Err(field(
                        name,
                        "documents.name",
                        format!("{} is empty or repeated", quoted(&text)),
                    ));
                }
                documents.push(DocumentInfo {
                    name: text,
                    format: optional_text(name, "documents.format", document.format)?,
                    architecture: optional_text(
                        name,
                        "documents.architecture",
                        document.architecture,
                    )?,
                });
            }
            Ok(Reply::Documents(documents))
        }
        Method::ListProcedures => {
            let wire: WireProcedures = shape(name, result)?;
            if wire.procedures.len() > MAX_PAGE_ENTRIES {
                return Err(field(
                    name,
                    "procedures",
                    format!("more than {MAX_PAGE_ENTRIES} entries"),
                ));
            }
            let mut entries = Vec::with_capacity(wire.procedures.len());
            for entry in wire.procedures {
                let address = canonical(name, "procedures.address", &entry.address)?;
                let label = optional_text(name, "procedures.name", entry.name)?;
                entries.push(ProcedureEntry::new(address.to_string(), label.as_deref()));
            }
            let next_cursor = match wire.next_cursor {
                Some(cursor) if cursor.is_empty() => {
                    return Err(field(name, "next_cursor", "empty".to_owned()));
                }
                cursor => optional_text(name, "next_cursor", cursor)?,
            };
            Ok(Reply::Procedures(ProcedurePage {
                entries,
                next_cursor,
            }))
        }
        Method::ProcedureInfo => {
            let wire: WireProcedure = shape(name, result)?;
            Ok(Reply::Procedure(ProcedureRecord {
                address: canonical(name, "address", &wire.address)?,
                name: optional_text(name, "name", wire.name)?,
                size: wire.size,
                segment: optional_text(name, "segment", wire.segment)?,
            }))
        }
        Method::Decompile => {
            let wire: WireDecompiled = shape(name, result)?;
            if wire.warnings.len() > MAX_DECOMPILE_WARNINGS {
                return Err(field(
                    name,
                    "warnings",
                    format!("more than {MAX_DECOMPILE_WARNINGS}"),
                ));
            }
            let warnings = wire
                .warnings
                .into_iter()
                .map(|w| bounded_text(name, "warnings", w, MAX_WARNING_CHARS))
                .collect::<Result<Vec<_>, _>>()?;
            if wire.complete && wire.reason.is_some() {
                return Err(field(name, "reason", "given while complete".to_owned()));
            }
            if !wire.complete && wire.reason.is_none() {
                return Err(field(name, "reason", "missing while incomplete".to_owned()));
            }
            Ok(Reply::Decompiled(DecompiledCode {
                address: canonical(name, "address", &wire.address)?,
                name: optional_text(name, "name", wire.name)?,
                code: bounded_text(name, "code", wire.code, MAX_DECOMPILE_CHARS)?,
                warnings,
                complete: wire.complete,
                reason: wire
                    .reason
                    .map(|r| bounded_text(name, "reason", r, MAX_TEXT_CHARS))
                    .transpose()?,
            }))
        }
        Method::Close => match result {
            Value::Object(_) => Ok(Reply::Closed),
            _ => Err(ReplyError::Shape {
                method: name,
                reason: "not an object".to_owned(),
            }),
        },
    }
}

fn shape<T: serde::de::DeserializeOwned>(
    method: &'static str,
    value: Value,
) -> Result<T, ReplyError> {
    serde_json::from_value(value).map_err(|e| ReplyError::Shape {
        method,
        reason: e.to_string(),
    })
}

fn field(method: &'static str, field: &'static str, reason: String) -> ReplyError {
    ReplyError::Field {
        method,
        field,
        reason,
    }
}

fn quoted(text: &str) -> String {
    Value::String(crate::text::cut(text)).to_string()
}

/// `text` if it has at most `max` characters and no control characters but tab and newline.
fn bounded_text(
    method: &'static str,
    name: &'static str,
    text: String,
    max: usize,
) -> Result<String, ReplyError> {
    if text.chars().nth(max).is_some() {
        return Err(field(method, name, format!("more than {max} characters")));
    }
    if text
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        return Err(field(
            method,
            name,
            format!("{} holds a control character", quoted(&text)),
        ));
    }
    Ok(text)
}

fn optional_text(
    method: &'static str,
    name: &'static str,
    text: Option<String>,
) -> Result<Option<String>, ReplyError> {
    text.map(|t| bounded_text(method, name, t, MAX_VALUE_CHARS))
        .transpose()
}

/// An address in the canonical form (`0x`, lowercase, no leading zeros).
fn canonical(method: &'static str, name: &'static str, text: &str) -> Result<Address, ReplyError> {
    match Address::parse(text) {
        Ok(address) if address.to_string() == text => Ok(address),
        _ => Err(field(
            method,
            name,
            format!("{} is not a canonical address", quoted(text)),
        )),
    }
}
