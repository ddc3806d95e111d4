//! The published JSON Schemas (draft 2020-12) of the documents the session retains, and their
//! validators, each compiled once per process.
//!
//! The `.schema.json` files beside this module are the contract: [`ARTIFACT_INVENTORY_V1`] for
//! one page of an artifact inventory and [`PROCESS_CAPTURE_V4`] for a process capture.
//! Validation uses the `jsonschema` crate; the session adds only the checks a schema cannot
//! express (orderings and derived IDs), in the modules that own each document.

use std::fmt;
use std::sync::OnceLock;

use jsonschema::Validator;
use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

/// JSON Schema of one artifact inventory page, version 1.
pub const ARTIFACT_INVENTORY_V1: &str = include_str!("artifact-inventory-v1.schema.json");

/// JSON Schema of a process capture, version 4.
pub const PROCESS_CAPTURE_V4: &str = include_str!("process-capture-v4.schema.json");

/// Every published schema with its file name, for tools that publish or check them.
pub const PUBLISHED: [(&str, &str); 2] = [
    ("artifact-inventory-v1.schema.json", ARTIFACT_INVENTORY_V1),
    ("process-capture-v4.schema.json", PROCESS_CAPTURE_V4),
];

/// Longest validator message kept in a [`SchemaViolation`], in characters; messages can quote
/// the offending value, which may be large.
const MESSAGE_CHARS: usize = 300;

/// Longest offending value quoted in a validator message, in characters of its JSON text.
const QUOTED_VALUE_CHARS: usize = 80;

/// The first place where a document breaks its schema (or a rule the schema cannot express).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON Pointer to the offending value in the document; empty for the document itself.
    /// Quoted as all caller text is (see `crate::text::cut`): a long key never comes back whole.
    pub pointer: String,
    /// What is wrong, at most 300 characters.
    pub message: String,
}

impl SchemaViolation {
    pub(crate) fn new(pointer: impl Into<String>, message: impl AsRef<str>) -> SchemaViolation {
        let message = message.as_ref();
        let mut kept: String = message.chars().take(MESSAGE_CHARS).collect();
        if kept.len() < message.len() {
            kept.push('…');
        }
        SchemaViolation {
            // A pointer names the caller's keys, which may be of any length.
            pointer: crate::text::cut(&pointer.into()),
            message: kept,
        }
    }
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pointer.is_empty() {
            write!(f, "at the top level: {}", self.message)
        } else {
            write!(f, "at {}: {}", self.pointer, self.message)
        }
    }
}

/// A published schema and its validator, compiled on first use.
pub(crate) struct CompiledSchema {
    source: &'static str,
    compiled: OnceLock<Compiled>,
}

/// A schema document and its validator.
struct Compiled {
    schema: Value,
    validator: Validator,
}

/// The artifact inventory page schema.
pub(crate) static INVENTORY_PAGE: CompiledSchema = CompiledSchema::new(ARTIFACT_INVENTORY_V1);

/// The process capture schema.
pub(crate) static PROCESS_CAPTURE: CompiledSchema = CompiledSchema::new(PROCESS_CAPTURE_V4);

impl CompiledSchema {
    const fn new(source: &'static str) -> CompiledSchema {
        CompiledSchema {
            source,
            compiled: OnceLock::new(),
        }
    }

    /// The first violation of the schema in `document`, if any.
    pub(crate) fn check(&self, document: &Value) -> Result<(), SchemaViolation> {
        self.compiled()
            .validator
            .validate(document)
            .map_err(|error| {
                // Quote the offending value only when it is short; the pointer locates it anyway.
                let short = serde_json::to_string(error.instance().as_ref())
                    .is_ok_and(|text| text.chars().count() <= QUOTED_VALUE_CHARS);
                let mut message = if short {
                    error.to_string()
                } else {
                    error.masked_with("the value").to_string()
                };
                // Combinator messages do not say what was wanted; the schema's description does.
                if let ValidationErrorKind::AnyOf { .. }
                | ValidationErrorKind::OneOfNotValid { .. }
                | ValidationErrorKind::OneOfMultipleValid { .. }
                | ValidationErrorKind::Not { .. } = error.kind()
                {
                    message = error.masked_with("the value").to_string();
                    if let Some(description) =
                        self.description_of_keyword(error.schema_path().as_str())
                    {
                        message = format!("{message}: {description}");
                    }
                }
                SchemaViolation::new(error.instance_path().as_str(), message)
            })
    }

    /// The `description` of the schema object holding the keyword at `keyword_path` (a JSON
    /// Pointer into the schema), if it has one.
    fn description_of_keyword(&self, keyword_path: &str) -> Option<String> {
        let (parent, _keyword) = keyword_path.rsplit_once('/')?;
        self.compiled()
            .schema
            .pointer(parent)?
            .get("description")?
            .as_str()
            .map(str::to_owned)
    }

    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            // The schemas are compiled into the binary and checked against the meta-schema by
            // `tests/inventory_schema.rs`; failing here is a build defect, not bad input.
            let schema: Value =
                serde_json::from_str(self.source).expect("a published schema is JSON");
            let validator =
                jsonschema::validator_for(&schema).expect("a published schema compiles");
            Compiled { schema, validator }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::SchemaViolation;

    #[test]
    fn a_huge_key_in_the_pointer_is_cut() {
        let key = "k".repeat(3_000_000);
        let violation = SchemaViolation::new(format!("/events/{key}/kind"), "x".repeat(10_000));
        assert!(
            violation.pointer.chars().count() <= 67,
            "{}",
            violation.pointer.len()
        );
        assert!(violation.message.chars().count() <= 301);
    }
}
