//! Reading and validating catalog files: JSON syntax, the JSON Schema, then the rules the schema
//! cannot state (unique names and addresses, declared segments, number ranges).
//! The file is read in one pass by [`super::stream`], which uses the schema and the rules
//! defined here.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

use crate::providers::table::TableBuilder;
use crate::session::{Address, Permissions};

/// The catalog JSON Schema (JSON Schema 2020-12), as published in `schemas/`.
pub const CATALOG_SCHEMA: &str = include_str!("catalog-v1.schema.json");

/// Largest catalog file read (64 MiB, [`crate::base::files::MAX_CATALOG_FILE_BYTES`]).
pub const MAX_CATALOG_BYTES: u64 = crate::base::files::MAX_CATALOG_FILE_BYTES;

/// Why a catalog was rejected. Messages name the offending field as a JSON pointer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// The file was refused (not a regular file, too large, outside the allowed roots) or
    /// could not be read.
    #[error(transparent)]
    File(#[from] crate::base::files::FileError),
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

pub(super) fn field(pointer: &str, message: impl Into<String>) -> CatalogError {
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
    /// The procedures, in file order (merged by address when the table is finished).
    pub(crate) procedures: TableBuilder,
}

pub(crate) struct CatalogSegment {
    pub(crate) name: String,
    pub(crate) address: Address,
    pub(crate) size: u64,
    pub(crate) permissions: Permissions,
}

pub(super) struct CatalogProcedure {
    pub(super) address: Address,
    pub(super) name: Option<String>,
    pub(super) raw_name: Option<String>,
    pub(super) size: Option<u64>,
    pub(super) segment: Option<String>,
}

/// The schema for the whole file and for the parts the walk checks one at a time.
pub(super) struct Validators {
    pub(super) whole: Validator,
    pub(super) document: Validator,
    pub(super) segment: Validator,
    pub(super) procedure: Validator,
}

pub(super) fn validators() -> Result<&'static Validators, CatalogError> {
    static VALIDATORS: OnceLock<Result<Validators, String>> = OnceLock::new();
    VALIDATORS
        .get_or_init(|| {
            let schema: Value = serde_json::from_str(CATALOG_SCHEMA).map_err(|e| e.to_string())?;
            let part = |name: &str| {
                let mut part = serde_json::json!({"$ref": format!("#/$defs/{name}")});
                part["$schema"] = schema["$schema"].clone();
                part["$defs"] = schema["$defs"].clone();
                jsonschema::draft202012::new(&part).map_err(|e| e.to_string())
            };
            Ok(Validators {
                whole: jsonschema::draft202012::new(&schema).map_err(|e| e.to_string())?,
                document: part("document")?,
                segment: part("segment")?,
                procedure: part("procedure")?,
            })
        })
        .as_ref()
        .map_err(|message| CatalogError::BrokenSchema {
            message: message.clone(),
        })
}

pub(super) fn permissions_of(text: &str) -> Permissions {
    let flag = |index: usize| text.as_bytes().get(index).is_some_and(|&b| b != b'-');
    Permissions {
        read: flag(0),
        write: flag(1),
        execute: flag(2),
    }
}

/// The first segment name that repeats an earlier one.
pub(super) fn repeated_segment(segments: &[CatalogSegment], pointer: &str) -> Option<CatalogError> {
    let mut names: HashMap<&str, usize> = HashMap::new();
    segments.iter().enumerate().find_map(|(index, segment)| {
        names.insert(&segment.name, index).map(|first| {
            field(
                &format!("{pointer}/segments/{index}/name"),
                format!(
                    "segment name {:?} repeats {pointer}/segments/{first}/name",
                    crate::text::Quoted::new(&segment.name)
                ),
            )
        })
    })
}

/// The first procedure (in file order) that breaks a rule: a size out of range (found while
/// reading, `size_rule`), an address that repeats an earlier one, a segment not declared.
/// At one index the checks come in that order, as each procedure is checked in turn.
pub(super) fn procedure_rule_broken(
    procedures: &TableBuilder,
    segments: &[CatalogSegment],
    size_rule: Option<(usize, CatalogError)>,
    pointer: &str,
) -> Option<CatalogError> {
    let mut broken: Vec<(usize, u8, CatalogError)> = Vec::new();
    if let Some((index, error)) = size_rule {
        broken.push((index, 0, error));
    }
    if let Some((index, first)) = first_repeat(procedures) {
        let address = Address::new(procedures.address_at(index));
        broken.push((
            index,
            1,
            field(
                &format!("{pointer}/procedures/{index}/address"),
                format!("address {address} repeats {pointer}/procedures/{first}/address"),
            ),
        ));
    }
    let declared: HashSet<&str> = segments.iter().map(|s| s.name.as_str()).collect();
    let undeclared = procedures
        .placements()
        .enumerate()
        .find_map(|(index, placed)| {
            placed
                .filter(|name| !declared.contains(name))
                .map(|name| (index, name))
        });
    if let Some((index, segment)) = undeclared {
        broken.push((
            index,
            2,
            field(
                &format!("{pointer}/procedures/{index}/segment"),
                format!(
                    "segment {:?} is not declared in {pointer}/segments",
                    crate::text::Quoted::new(segment)
                ),
            ),
        ));
    }
    broken
        .into_iter()
        .min_by_key(|(index, order, _)| (*index, *order))
        .map(|(_, _, error)| error)
}

/// The first sighting whose address repeats an earlier one, with the index of that one.
fn first_repeat(procedures: &TableBuilder) -> Option<(usize, usize)> {
    let mut previous = None;
    let increasing = procedures.addresses().all(|address| {
        let ok = previous.is_none_or(|previous| previous < address);
        previous = Some(address);
        ok
    });
    if increasing {
        return None;
    }
    let mut order: Vec<usize> = (0..procedures.len()).collect();
    order.sort_unstable_by_key(|&index| (procedures.address_at(index), index));
    order
        .windows(2)
        .filter(|pair| procedures.address_at(pair[0]) == procedures.address_at(pair[1]))
        .map(|pair| (pair[1], pair[0]))
        .min()
}

pub(super) fn text(value: &Value, name: &str) -> Option<String> {
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

pub(super) fn read_segment(value: &Value, pointer: &str) -> Result<CatalogSegment, CatalogError> {
    let permissions = text(value, "permissions").unwrap_or_else(|| "r--".to_owned());
    Ok(CatalogSegment {
        name: text(value, "name").unwrap_or_default(),
        address: address(value, pointer)?,
        size: integer(value, "size", pointer, 0)?.unwrap_or(0),
        permissions: permissions_of(&permissions),
    })
}

pub(super) fn read_procedure(
    value: &Value,
    pointer: &str,
) -> Result<CatalogProcedure, CatalogError> {
    Ok(CatalogProcedure {
        address: address(value, pointer)?,
        name: text(value, "name"),
        raw_name: text(value, "raw_name"),
        size: integer(value, "size", pointer, 1)?,
        segment: text(value, "segment"),
    })
}
