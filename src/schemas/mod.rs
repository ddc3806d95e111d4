//! The published JSON Schemas (draft 2020-12) of the documents the session retains, and their
//! validators, each compiled once per process.
//!
//! The `.schema.json` files beside this module are the contract: [`ARTIFACT_INVENTORY_V1`] for
//! one page of an artifact inventory and [`PROCESS_CAPTURE_V4`] for a process capture.
//! Validation uses the `jsonschema` crate; the session adds only the checks a schema cannot
//! express (orderings and derived IDs), in the modules that own each document.

use std::fmt;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::{ValidationError, Validator};
use serde_json::Value;

use crate::text::{QUOTED_CHARS, Quoted};

/// JSON Schema of one artifact inventory page, version 1.
pub const ARTIFACT_INVENTORY_V1: &str = include_str!("artifact-inventory-v1.schema.json");

/// JSON Schema of a process capture, version 4.
pub const PROCESS_CAPTURE_V4: &str = include_str!("process-capture-v4.schema.json");

/// Every published schema with its file name, for tools that publish or check them.
pub const PUBLISHED: [(&str, &str); 2] = [
    ("artifact-inventory-v1.schema.json", ARTIFACT_INVENTORY_V1),
    ("process-capture-v4.schema.json", PROCESS_CAPTURE_V4),
];

/// Longest validator message kept in a [`SchemaViolation`], in characters. What a message
/// quotes of the document (a value, a property name) is cut by the one rule for caller text
/// first (`crate::text::cut`, 64 characters); this bounds the whole.
const MESSAGE_CHARS: usize = 300;

/// The first place where a document breaks its schema (or a rule the schema cannot express).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON Pointer to the offending value in the document; empty for the document itself.
    /// Quoted as all caller text is ([`Quoted`]): a long key never comes back whole.
    pub pointer: Quoted,
    /// What is wrong, at most 300 characters; it quotes at most 64 characters of any value or
    /// property name of the document.
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
            pointer: Quoted::from(Into::<String>::into(pointer)),
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
                let mut message = message(&error);
                // Combinator messages do not say what was wanted; the schema's description does.
                if let ValidationErrorKind::AnyOf { .. }
                | ValidationErrorKind::OneOfNotValid { .. }
                | ValidationErrorKind::OneOfMultipleValid { .. }
                | ValidationErrorKind::Not { .. } = error.kind()
                    && let Some(description) =
                        self.description_of_keyword(error.schema_path().as_str())
                {
                    message = format!("{message}: {description}");
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

/// A validator message that quotes at most [`QUOTED_CHARS`] characters of what the document
/// holds: the offending value only when its JSON text is that short (else "the value"), and
/// each property name it lists cut.
pub(crate) fn message(error: &ValidationError<'_>) -> String {
    let listed = |what: &str, names: &[String]| {
        let quoted: Vec<String> = names
            .iter()
            .map(|name| format!("'{}'", Quoted::new(name)))
            .collect();
        let verb = if names.len() == 1 { "was" } else { "were" };
        format!(
            "{what} are not allowed ({} {verb} unexpected)",
            quoted.join(", ")
        )
    };
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            listed("Additional properties", unexpected)
        }
        ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            listed("Unevaluated properties", unexpected)
        }
        ValidationErrorKind::UnevaluatedItems { unexpected } => {
            listed("Unevaluated items", unexpected)
        }
        ValidationErrorKind::PropertyNames { error: name } => {
            let shown = name
                .instance()
                .as_str()
                .map_or_else(|| Quoted::new(&name.instance().to_string()), Quoted::new);
            format!(
                "the property name {shown:?} is invalid: {}",
                name.masked_with("it")
            )
        }
        // Combinators name the whole value; the description added by the caller says more.
        ValidationErrorKind::AnyOf { .. }
        | ValidationErrorKind::OneOfNotValid { .. }
        | ValidationErrorKind::OneOfMultipleValid { .. }
        | ValidationErrorKind::Not { .. } => error.masked_with("the value").to_string(),
        _ => {
            let short = serde_json::to_string(error.instance().as_ref())
                .is_ok_and(|text| text.chars().nth(QUOTED_CHARS).is_none());
            if short {
                error.to_string()
            } else {
                error.masked_with("the value").to_string()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Map, Value, json};

    use super::{SchemaViolation, message};
    use crate::text::QUOTED_CHARS;

    /// The message of the first violation of `schema` by `document`.
    fn message_for(schema: &Value, document: &Value) -> String {
        let validator = jsonschema::validator_for(schema).unwrap();
        message(&validator.validate(document).unwrap_err())
    }

    /// The longest run of `x` in `text`.
    fn longest_run(text: &str) -> usize {
        text.split(|c| c != 'x').map(str::len).max().unwrap_or(0)
    }

    #[test]
    fn messages_quote_at_most_64_characters_of_a_name_or_value() {
        let long = "x".repeat(4096);
        let mut keyed = Map::new();
        keyed.insert(long.clone(), json!(1));
        let keyed = Value::Object(keyed);
        let cases = [
            (json!({"additionalProperties": false}), keyed.clone()),
            (
                json!({"properties": {"a": true}, "additionalProperties": false}),
                keyed.clone(),
            ),
            (json!({"unevaluatedProperties": false}), keyed.clone()),
            (json!({"propertyNames": {"maxLength": 8}}), keyed),
            (
                json!({"prefixItems": [true], "unevaluatedItems": false}),
                json!([1, long]),
            ),
            (json!({"type": "integer"}), json!(long)),
            (json!({"enum": ["a"]}), json!(long)),
            (json!({"maxLength": 8}), json!(long)),
        ];
        for (schema, document) in cases {
            let shown = message_for(&schema, &document);
            assert!(longest_run(&shown) <= QUOTED_CHARS, "{schema}: {shown}");
        }
        let short = message_for(
            &json!({"properties": {"a": true}, "additionalProperties": false}),
            &json!({"extra": 1}),
        );
        assert_eq!(
            short,
            "Additional properties are not allowed ('extra' was unexpected)"
        );
        let named = message_for(
            &json!({"propertyNames": {"maxLength": 2}}),
            &json!({"abc": 1}),
        );
        assert!(
            named.starts_with("the property name \"abc\" is invalid: "),
            "{named}"
        );
    }

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
