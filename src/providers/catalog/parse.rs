//! Reading and validating catalog files: JSON syntax, the JSON Schema, then the rules the schema
//! cannot state (unique names and addresses, declared segments, number ranges).

use std::collections::HashMap;
use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

use crate::session::{Address, Permissions};

/// The catalog JSON Schema (JSON Schema 2020-12), as published in `schemas/`.
pub const CATALOG_SCHEMA: &str = include_str!("catalog-v1.schema.json");

/// Largest catalog file read (64 MiB, [`crate::session::files::MAX_CATALOG_FILE_BYTES`]).
pub const MAX_CATALOG_BYTES: u64 = crate::session::files::MAX_CATALOG_FILE_BYTES;

/// Why a catalog was rejected. Messages name the offending field as a JSON pointer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// The file was refused (not a regular file, too large, outside the allowed roots) or
    /// could not be read.
    #[error(transparent)]
    File(#[from] crate::session::files::FileError),
    /// The text is not JSON.
    #[error("catalog is not valid JSON (line {line}, column {column}): {message}")]
    Json {
        /// Line of the error, from 1.
        line: usize,
        /// Column of the error, from 1.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// A field breaks the schema or a rule of the format.
    #[error("catalog field {field} is invalid: {message}")]
    Field {
        /// JSON pointer to the field (`/` for the whole document).
        field: crate::text::Quoted,
        /// What is wrong.
        message: String,
    },
    /// The built-in schema failed to compile (a defect of this build, never of the input).
    #[error("the built-in catalog schema is unusable: {message}")]
    BrokenSchema {
        /// The compiler's message.
        message: String,
    },
}

/// Longest message kept; what it quotes of the catalog is cut to 64 characters first.
const MAX_MESSAGE_CHARS: usize = 200;

fn field(pointer: &str, message: impl Into<String>) -> CatalogError {
    let mut message: String = message.into();
    if let Some((cut, _)) = message.char_indices().nth(MAX_MESSAGE_CHARS) {
        message.truncate(cut);
        message.push_str("...");
    }
    CatalogError::Field {
        field: if pointer.is_empty() { "/" } else { pointer }.into(),
        message,
    }
}

/// A validated catalog.
pub(crate) struct Catalog {
    pub(crate) documents: Vec<CatalogDocument>,
}

pub(crate) struct CatalogDocument {
    pub(crate) name: String,
    pub(crate) format: Option<String>,
    pub(crate) architecture: Option<String>,
    pub(crate) segments: Vec<CatalogSegment>,
    pub(crate) procedures: Vec<CatalogProcedure>,
}

pub(crate) struct CatalogSegment {
    pub(crate) name: String,
    pub(crate) address: Address,
    pub(crate) size: u64,
    pub(crate) permissions: Permissions,
}

pub(crate) struct CatalogProcedure {
    pub(crate) address: Address,
    pub(crate) name: Option<String>,
    pub(crate) raw_name: Option<String>,
    pub(crate) size: Option<u64>,
    pub(crate) segment: Option<String>,
}

fn validator() -> Result<&'static Validator, CatalogError> {
    static VALIDATOR: OnceLock<Result<Validator, String>> = OnceLock::new();
    VALIDATOR
        .get_or_init(|| {
            let schema: Value = serde_json::from_str(CATALOG_SCHEMA).map_err(|e| e.to_string())?;
            jsonschema::draft202012::new(&schema).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|message| CatalogError::BrokenSchema {
            message: message.clone(),
        })
}

/// Parses and validates catalog text (UTF-8, with or without a byte-order mark).
pub(crate) fn parse_catalog(text: &[u8]) -> Result<Catalog, CatalogError> {
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    let value: Value = serde_json::from_slice(text).map_err(|error| CatalogError::Json {
        line: error.line(),
        column: error.column(),
        message: error.to_string(),
    })?;
    if let Some(error) = validator()?.iter_errors(&value).next() {
        return Err(field(
            error.instance_path().as_str(),
            crate::session::schemas::message(&error),
        ));
    }
    let documents = items(&value, "/documents")
        .map(|(pointer, document)| read_document(document, &pointer))
        .collect::<Result<Vec<_>, _>>()?;
    let mut names: HashMap<&str, usize> = HashMap::new();
    for (index, document) in documents.iter().enumerate() {
        if let Some(first) = names.insert(&document.name, index) {
            return Err(field(
                &format!("/documents/{index}/name"),
                format!(
                    "document name {:?} repeats /documents/{first}/name",
                    crate::text::Quoted::new(&document.name)
                ),
            ));
        }
    }
    Ok(Catalog { documents })
}

/// The elements of the array at `pointer` (a JSON pointer into `value`), with their pointers.
fn items<'a>(value: &'a Value, pointer: &str) -> impl Iterator<Item = (String, &'a Value)> {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(move |(index, item)| (format!("{pointer}/{index}"), item))
}

fn text(value: &Value, name: &str) -> Option<String> {
    value.get(name).and_then(Value::as_str).map(str::to_owned)
}

fn address(value: &Value, pointer: &str) -> Result<Address, CatalogError> {
    let text = value.get("address").and_then(Value::as_str).unwrap_or("");
    Address::parse(text).map_err(|error| field(&format!("{pointer}/address"), error.to_string()))
}

/// An integer field that must fit `u64` and be at least `minimum`.
fn integer(
    value: &Value,
    name: &str,
    pointer: &str,
    minimum: u64,
) -> Result<Option<u64>, CatalogError> {
    let Some(number) = value.get(name) else {
        return Ok(None);
    };
    match number.as_u64().or_else(|| whole_float(number)) {
        Some(n) if n >= minimum => Ok(Some(n)),
        _ => Err(field(
            &format!("{pointer}/{name}"),
            format!("{number} is not an integer from {minimum} to {}", u64::MAX),
        )),
    }
}

/// A float with no fractional part that fits `u64` exactly (JSON Schema counts `2.0` as an
/// integer).
fn whole_float(number: &Value) -> Option<u64> {
    let float = number.as_f64()?;
    // 2^53: above it not every integer is representable, so the value may not be what was
    // written.
    (float.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(&float))
        .then_some(float as u64)
}

fn read_document(value: &Value, pointer: &str) -> Result<CatalogDocument, CatalogError> {
    let segments = items(value, "/segments")
        .map(|(relative, segment)| read_segment(segment, &format!("{pointer}{relative}")))
        .collect::<Result<Vec<_>, _>>()?;
    let mut segment_names: HashMap<&str, usize> = HashMap::new();
    for (index, segment) in segments.iter().enumerate() {
        if let Some(first) = segment_names.insert(&segment.name, index) {
            return Err(field(
                &format!("{pointer}/segments/{index}/name"),
                format!(
                    "segment name {:?} repeats {pointer}/segments/{first}/name",
                    segment.name
                ),
            ));
        }
    }
    let mut addresses: HashMap<Address, usize> = HashMap::new();
    let mut procedures = Vec::new();
    for (relative, item) in items(value, "/procedures") {
        let at = format!("{pointer}{relative}");
        let procedure = read_procedure(item, &at)?;
        if let Some(first) = addresses.insert(procedure.address, procedures.len()) {
            return Err(field(
                &format!("{at}/address"),
                format!(
                    "address {} repeats {pointer}/procedures/{first}/address",
                    procedure.address
                ),
            ));
        }
        if let Some(segment) = &procedure.segment
            && !segment_names.contains_key(segment.as_str())
        {
            return Err(field(
                &format!("{at}/segment"),
                format!("segment {segment:?} is not declared in {pointer}/segments"),
            ));
        }
        procedures.push(procedure);
    }
    Ok(CatalogDocument {
        name: text(value, "name").unwrap_or_default(),
        format: text(value, "format"),
        architecture: text(value, "architecture"),
        segments,
        procedures,
    })
}

fn read_segment(value: &Value, pointer: &str) -> Result<CatalogSegment, CatalogError> {
    let permissions = text(value, "permissions").unwrap_or_else(|| "r--".to_owned());
    let flag = |index: usize| {
        permissions
            .as_bytes()
            .get(index)
            .is_some_and(|&b| b != b'-')
    };
    Ok(CatalogSegment {
        name: text(value, "name").unwrap_or_default(),
        address: address(value, pointer)?,
        size: integer(value, "size", pointer, 0)?.unwrap_or(0),
        permissions: Permissions {
            read: flag(0),
            write: flag(1),
            execute: flag(2),
        },
    })
}

fn read_procedure(value: &Value, pointer: &str) -> Result<CatalogProcedure, CatalogError> {
    Ok(CatalogProcedure {
        address: address(value, pointer)?,
        name: text(value, "name"),
        raw_name: text(value, "raw_name"),
        size: integer(value, "size", pointer, 1)?,
        segment: text(value, "segment"),
    })
}
