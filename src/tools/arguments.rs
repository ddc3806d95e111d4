//! Tool arguments: each tool's arguments are one type deriving `Deserialize` and `JsonSchema`,
//! and its input schema is generated from that type ([`InputSchema::of`]), so the published
//! schema and the type the handler reads cannot disagree. Arguments are checked against the
//! schema with a compiled `jsonschema` validator before they are deserialized; a rejection is
//! an [`ArgumentError`] naming the tool and the argument.
//!
//! Field types: `String` and `Option<String>` (with `length(min = 1, max = MAX_VALUE_CHARS)`,
//! or the [`EVIDENCE_ID_PATTERN`]), [`Address`] and `Option<Address>` through [`address`],
//! `u64` with `range(...)` and a serde default, `Option<u64>`, an enum of unit variants (a
//! choice: its `#[default]` variant is the default), `Map<String, Value>` (an object the tool
//! checks itself), `Vec<Value>` and `Vec<String>` with `length(...)`. The common arguments are
//! structs to flatten: [`TargetArguments`] and [`CursorArgument`].

use std::sync::{LazyLock, OnceLock};

use jsonschema::Validator;
use jsonschema::error::ValidationErrorKind;
use schemars::generate::{Contract, SchemaSettings};
use schemars::{JsonSchema, Schema};
use serde::Deserialize;
use serde_json::{Map, Number, Value};

use crate::core::MAX_VALUE_CHARS;
use crate::session::{Address, EvidenceId};
use crate::text::Quoted;

/// The pattern of an address argument: `0x` and 1 to 16 lowercase hexadecimal digits.
pub(crate) const ADDRESS_PATTERN: &str = "^0x[0-9a-f]{1,16}$";

/// The pattern of an Evidence ID argument: `ev-` and twelve digits.
pub(crate) const EVIDENCE_ID_PATTERN: &str = "^ev-[0-9]{12}$";

/// The optional `provider` and `document` arguments of provider-backed tools, flattened into
/// their argument types. The [`super::ToolBox`] reads them to pick the target before the
/// handler runs.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct TargetArguments {
    /// Name of a document of the provider (see list_documents); default: the current document.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    pub(crate) document: Option<String>,
    /// Identity of a declared provider (see list_providers); default: the current provider.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    pub(crate) provider: Option<String>,
}

/// The optional `cursor` argument of paged tools whose cursor is a `next_cursor` as given.
/// (The page limits differ between tools, so each declares its own `limit`.)
#[derive(Deserialize, JsonSchema)]
pub(crate) struct CursorArgument {
    /// The `next_cursor` of the previous page; omit for the first page.
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    pub(crate) cursor: Option<String>,
}

/// The arguments of a tool that takes none (but the `session` every tool takes).
#[derive(Deserialize, JsonSchema)]
pub(crate) struct NoArguments {}

/// The optional `session` argument every tool takes. The [`super::ToolBox`] takes it out of the
/// arguments (see [`split_session`]) before the tool's own arguments are checked, so no
/// argument type declares it.
#[derive(Deserialize, JsonSchema)]
struct SessionArgument {
    /// The binary session to work in: the `session` that open_binary returned. Default: this
    /// client's session (the one it opened or named last).
    #[schemars(length(min = 1, max = MAX_VALUE_CHARS))]
    #[allow(dead_code)] // read through the schema only
    session: Option<String>,
}

/// The name of [`SessionArgument`]'s one field.
pub(crate) const SESSION: &str = "session";

/// Deserializers of address arguments (`#[serde(with = "address")]`, with
/// `#[schemars(with = "String", regex(pattern = ADDRESS_PATTERN))]`). The schema check has
/// already rejected every text that is not an address.
pub(crate) mod address {
    use serde::{Deserialize, Deserializer};

    use crate::session::Address;

    /// A required address.
    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Address, D::Error> {
        let text = String::deserialize(d)?;
        Address::parse(&text).map_err(serde::de::Error::custom)
    }

    /// An optional address (with `#[serde(default)]`).
    pub(crate) fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Address>, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|text| Address::parse(&text).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// The settings of input schemas: inlined subschemas (clients show them better than `$ref`s).
fn input_settings(contract: Contract) -> SchemaSettings {
    SchemaSettings::draft2020_12().with(|settings| {
        settings.inline_subschemas = true;
        settings.meta_schema = None;
        settings.contract = contract;
    })
}

/// One parameter, as the checks need it: names and options kept for the process's lifetime
/// (the input schemas are built once, see [`InputSchema::of`]).
struct Parameter {
    name: &'static str,
    required: bool,
    schema: Value,
    options: &'static [&'static str],
}

/// A tool's input schema, generated from its argument type, and its compiled validator.
pub(crate) struct InputSchema {
    schema: Value,
    /// The parameters in declaration order.
    parameters: Vec<Parameter>,
    /// Compiled on the tool's first call: a validator holds its own copy of the draft's
    /// metaschemas (about 150 KB resident each, 4.3 MB for the catalog), and most sessions
    /// call a few of its tools.
    validator: OnceLock<Validator>,
}

impl std::fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputSchema")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

fn leak(text: &str) -> &'static str {
    Box::leak(text.to_owned().into_boxed_str())
}

impl InputSchema {
    /// The input schema of `A`: a JSON Schema (2020-12) object schema with inlined properties,
    /// a `required` list and `additionalProperties: false`. Build it once per tool (the
    /// catalog does): it keeps the parameter names for the life of the process, and compiles
    /// its validator on first use (see [`InputSchema::check`]).
    /// the process.
    pub(crate) fn of<A: JsonSchema>() -> InputSchema {
        let schema = generate::<A>(Contract::Deserialize);
        // Under the serialization contract every field is required, so `required` lists all
        // parameters, flattened ones included, in declaration order.
        let declared = generate::<A>(Contract::Serialize);
        let required = string_list(&schema["required"]);
        let parameters = string_list(&declared["required"])
            .into_iter()
            .map(|name| Parameter {
                name: leak(&name),
                required: required.contains(&name),
                schema: schema["properties"][&name].clone(),
                options: schema["properties"][&name]["enum"]
                    .as_array()
                    .map(|options| {
                        let options: Vec<&'static str> =
                            options.iter().filter_map(Value::as_str).map(leak).collect();
                        &*Box::leak(options.into_boxed_slice())
                    })
                    .unwrap_or(&[]),
            })
            .collect();
        InputSchema {
            schema,
            parameters,
            validator: OnceLock::new(),
        }
    }

    /// The schema, as `tools/list` shows it (without `session`, which the definition adds).
    pub(crate) fn schema(&self) -> &Value {
        &self.schema
    }

    /// For a paged tool (one with both a `cursor` and a `limit` parameter): asks `arguments`
    /// for half the entries they asked for (their `limit`, else its default), and says whether
    /// it could (not below one entry, not for a tool without a cursor to go on with).
    pub(crate) fn halve_page(&self, arguments: &mut Map<String, Value>) -> bool {
        let properties = &self.schema["properties"];
        if properties.get("cursor").is_none() {
            return false;
        }
        let asked = arguments
            .get("limit")
            .or_else(|| properties.get("limit")?.get("default"))
            .and_then(Value::as_u64);
        match asked {
            Some(asked) if asked > 1 => {
                arguments.insert("limit".to_owned(), Value::from(asked / 2));
                true
            }
            _ => false,
        }
    }

    /// Checks `values` against the schema and answers them, to deserialize: unknown names
    /// first (in name order), then each parameter in declaration order; the first failure is
    /// the error. The map is taken, not copied: a valid one is handed back as it came.
    pub(crate) fn check(
        &self,
        tool: &'static str,
        values: Map<String, Value>,
    ) -> Result<Map<String, Value>, ArgumentError> {
        let validator = self.validator.get_or_init(|| {
            jsonschema::draft202012::new(&self.schema)
                .unwrap_or_else(|error| panic!("a generated input schema compiles: {error}"))
        });
        let instance = Value::Object(values);
        match instance {
            Value::Object(checked) if validator.is_valid(&instance) => Ok(checked),
            _ => Err(self.rejection(tool, validator, &instance)),
        }
    }

    /// Why `instance` (the arguments, as an object) fails the schema, for [`InputSchema::check`].
    fn rejection(
        &self,
        tool: &'static str,
        validator: &jsonschema::Validator,
        instance: &Value,
    ) -> ArgumentError {
        let errors: Vec<_> = validator.iter_errors(instance).collect();
        let unknown = errors
            .iter()
            .filter_map(|error| match error.kind() {
                ValidationErrorKind::AdditionalProperties { unexpected } => Some(unexpected),
                _ => None,
            })
            .flatten()
            .min();
        if let Some(unknown) = unknown {
            return ArgumentError::Unknown {
                tool,
                argument: unknown.as_str().into(),
                accepted: self
                    .parameters
                    .iter()
                    .map(|p| p.name)
                    .chain([SESSION])
                    .collect(),
            };
        }
        for parameter in &self.parameters {
            let missing = errors.iter().any(|error| {
                matches!(error.kind(), ValidationErrorKind::Required { property }
                    if property.as_str() == Some(parameter.name))
            });
            if missing {
                return ArgumentError::Missing {
                    tool,
                    argument: parameter.name,
                };
            }
            let Some(value) = instance.get(parameter.name) else {
                continue;
            };
            // The errors about this argument: `(index of the item, keyword)`.
            let found: Vec<(Option<usize>, &ValidationErrorKind)> = errors
                .iter()
                .filter_map(|error| {
                    let path = error.instance_path().to_string();
                    let mut segments = path.strip_prefix('/')?.split('/');
                    if segments.next()? != parameter.name {
                        return None;
                    }
                    let item = segments.next().and_then(|index| index.parse().ok());
                    Some((item, error.kind()))
                })
                .collect();
            if !found.is_empty() {
                return describe(tool, parameter, value, &found);
            }
        }
        // Not reached for the schemas we generate: every keyword they use is described above.
        let reason = errors.first().map_or_else(String::new, ToString::to_string);
        ArgumentError::Syntax {
            tool,
            argument: self.parameters.first().map_or(SESSION, |p| p.name),
            reason,
        }
    }
}

/// The schema of `A` under `contract`, cleaned of what the published schemas never carry (a
/// title, the integer formats of Rust types). An optional argument has its value's type, not
/// also `null`: a `null` argument is rejected, with a hint to omit it.
fn generate<A: JsonSchema>(contract: Contract) -> Value {
    let schema: Schema = input_settings(contract)
        .into_generator()
        .into_root_schema_for::<A>();
    let mut schema = schema.to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("title");
        object.remove("description");
        object.insert("additionalProperties".to_owned(), Value::Bool(false));
        object
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        object
            .entry("required")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Some(properties) = object.get_mut("properties").and_then(Value::as_object_mut) {
            for property in properties.values_mut() {
                if let Some(property) = property.as_object_mut() {
                    property.remove("format");
                    // `#[serde(default)]` on an option: absent means none, and `null` is refused.
                    if property.get("default") == Some(&Value::Null) {
                        property.remove("default");
                    }
                    if let Some(Value::Array(types)) = property.get_mut("type") {
                        types.retain(|kind| kind != "null");
                        if let [only] = types.as_slice() {
                            let only = only.clone();
                            property.insert("type".to_owned(), only);
                        }
                    }
                    if property.get("items") == Some(&Value::Bool(true)) {
                        property.remove("items");
                    }
                    if property.get("additionalProperties") == Some(&Value::Bool(true)) {
                        property.remove("additionalProperties");
                    }
                }
            }
        }
    }
    one_line_descriptions(&mut schema);
    super::schema::single_types(&mut schema);
    schema
}

/// Joins the lines of each paragraph of every description (doc comments keep their line
/// breaks; descriptions are read as running text).
fn one_line_descriptions(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                match value {
                    Value::String(text) if key == "description" => {
                        *text = super::schema::running_text(text);
                    }
                    other => one_line_descriptions(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(one_line_descriptions),
        _ => {}
    }
}

fn string_list(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|names| {
            names
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The [`ArgumentError`] for what the validator found wrong with `value`, the argument
/// `parameter` (`found` is not empty).
fn describe(
    tool: &'static str,
    parameter: &Parameter,
    value: &Value,
    found: &[(Option<usize>, &ValidationErrorKind)],
) -> ArgumentError {
    let argument = parameter.name;
    let schema = &parameter.schema;
    let on_value = |wanted: fn(&ValidationErrorKind) -> bool| {
        found
            .iter()
            .any(|(item, kind)| item.is_none() && wanted(kind))
    };
    let syntax = |reason: String| ArgumentError::Syntax {
        tool,
        argument,
        reason,
    };
    let range = |number: &Number| ArgumentError::Range {
        tool,
        argument,
        min: schema["minimum"].as_u64().unwrap_or(0),
        max: schema["maximum"].as_u64().unwrap_or(u64::MAX),
        found: number.to_string(),
    };
    if on_value(|kind| matches!(kind, ValidationErrorKind::Type { .. })) {
        if let (Value::Number(number), Some("integer")) = (value, schema["type"].as_str()) {
            return range(number);
        }
        return ArgumentError::WrongType {
            tool,
            argument,
            expected: match schema["type"].as_str() {
                Some("integer") => "an integer",
                Some("object") => "an object",
                Some("array") => "an array",
                Some("boolean") => "a boolean",
                _ => "a string",
            },
            found: crate::text::json_kind(value),
            omissible: value.is_null() && !parameter.required,
        };
    }
    match value {
        Value::Number(number) => range(number),
        Value::String(text) => {
            if on_value(|kind| matches!(kind, ValidationErrorKind::Enum { .. })) {
                return ArgumentError::Choice {
                    tool,
                    argument,
                    options: parameter.options,
                    found: text.into(),
                };
            }
            if on_value(|kind| matches!(kind, ValidationErrorKind::Pattern { .. })) {
                return syntax(syntax_reason(schema["pattern"].as_str(), text));
            }
            ArgumentError::Length {
                tool,
                argument,
                chars: text.chars().count(),
            }
        }
        Value::Array(items) => {
            let counted = on_value(|kind| {
                matches!(
                    kind,
                    ValidationErrorKind::MinItems { .. } | ValidationErrorKind::MaxItems { .. }
                )
            });
            let item = found.iter().filter_map(|(item, _)| *item).min();
            let objects = schema["items"]["type"].as_str() == Some("object");
            match item.and_then(|index| Some((index, items.get(index)?))) {
                Some((index, Value::Object(_))) if !counted && objects => syntax(format!(
                    "item {index} does not fit the schema of an item: a field is missing, \
                     unknown, of the wrong type or not one of its choices"
                )),
                Some((index, item)) if !counted && objects => syntax(format!(
                    "item {index} must be an object, not {}",
                    crate::text::json_kind(item)
                )),
                Some((index, item)) if !counted => match item {
                    Value::String(text) => syntax(format!(
                        "item {index}: {}",
                        syntax_reason(schema["items"]["pattern"].as_str(), text)
                    )),
                    other => syntax(format!(
                        "item {index} must be a string, not {}",
                        crate::text::json_kind(other)
                    )),
                },
                _ => syntax(format!(
                    "it must hold {} to {} items, not {}",
                    schema["minItems"].as_u64().unwrap_or(0),
                    schema["maxItems"].as_u64().unwrap_or(u64::MAX),
                    items.len()
                )),
            }
        }
        _ => syntax(format!("it does not fit its schema {schema}")),
    }
}

/// Why `text` does not match `pattern`: the reason the address or Evidence ID parser gives.
fn syntax_reason(pattern: Option<&str>, text: &str) -> String {
    let reason = match pattern {
        Some(ADDRESS_PATTERN) => Address::parse(text).err().map(|e| e.to_string()),
        Some(EVIDENCE_ID_PATTERN) => EvidenceId::parse(text).err().map(|e| e.to_string()),
        _ => None,
    };
    reason.unwrap_or_else(|| format!("{:?} does not match {pattern:?}", crate::text::cut(text)))
}

/// The schema of the `session` argument every tool takes.
pub(crate) fn session_schema() -> Value {
    SESSION_SCHEMA.schema()["properties"][SESSION].clone()
}

static SESSION_SCHEMA: LazyLock<InputSchema> = LazyLock::new(InputSchema::of::<SessionArgument>);

/// Takes the checked `session` argument out of `arguments`: the handle it names (if given)
/// and the other arguments.
pub(crate) fn split_session(
    tool: &'static str,
    mut arguments: Map<String, Value>,
) -> Result<(Option<String>, Map<String, Value>), ArgumentError> {
    match arguments.remove(SESSION) {
        None => Ok((None, arguments)),
        Some(value) => {
            let handle = value.as_str().map(str::to_owned);
            let mut only = Map::new();
            only.insert(SESSION.to_owned(), value);
            SESSION_SCHEMA.check(tool, only)?;
            Ok((handle, arguments))
        }
    }
}

/// Why the arguments of a tool call were rejected. Messages name the tool and the argument;
/// what the caller sent is quoted as [`Quoted`] (at most 64 characters).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ArgumentError {
    /// The tool has no parameter of this name.
    #[error("{tool} has no argument {argument:?}; {}", accepted_list(accepted))]
    Unknown {
        /// The tool.
        tool: &'static str,
        /// The rejected name.
        argument: Quoted,
        /// The tool's parameter names.
        accepted: Vec<&'static str>,
    },
    /// A required argument is absent.
    #[error("{tool} needs the argument {argument:?}")]
    Missing {
        /// The tool.
        tool: &'static str,
        /// The missing argument.
        argument: &'static str,
    },
    /// The argument has the wrong JSON type.
    #[error(
        "argument {argument:?} of {tool} must be {expected}, not {found}{}",
        if *omissible { " (omit it to use the default)" } else { "" }
    )]
    WrongType {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// The expected type, e.g. `a string`.
        expected: &'static str,
        /// The type given, e.g. `null`.
        found: &'static str,
        /// Whether the argument is optional and was given as `null`: leaving it out works.
        omissible: bool,
    },
    /// A string argument is empty or longer than [`MAX_VALUE_CHARS`] characters.
    #[error(
        "argument {argument:?} of {tool} must be 1 to {MAX_VALUE_CHARS} characters long, not {chars}"
    )]
    Length {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// Its length in characters.
        chars: usize,
    },
    /// An integer argument is out of range or not an integer.
    #[error("argument {argument:?} of {tool} must be an integer from {min} to {max}, not {found}")]
    Range {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// The smallest accepted value.
        min: u64,
        /// The largest accepted value.
        max: u64,
        /// The number given, as JSON.
        found: String,
    },
    /// A choice argument is not one of its options.
    #[error(
        "argument {argument:?} of {tool} must be one of {}, not {found:?}",
        quoted_list(options)
    )]
    Choice {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// The accepted values.
        options: &'static [&'static str],
        /// The value given.
        found: Quoted,
    },
    /// None, or more than one, of arguments that exclude each other was given.
    #[error("{tool} needs exactly one of the arguments {}", quoted_list(arguments))]
    OneOf {
        /// The tool.
        tool: &'static str,
        /// The arguments of which exactly one must be given.
        arguments: &'static [&'static str],
    },
    /// An argument was given without the argument it qualifies.
    #[error("argument {argument:?} of {tool} is used only with the argument {requires:?}")]
    Requires {
        /// The tool.
        tool: &'static str,
        /// The argument given.
        argument: &'static str,
        /// The argument it needs.
        requires: &'static str,
    },
    /// The argument's text does not have the required syntax.
    #[error("argument {argument:?} of {tool} is invalid: {reason}")]
    Syntax {
        /// The tool.
        tool: &'static str,
        /// The argument.
        argument: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

fn accepted_list(accepted: &[&str]) -> String {
    if accepted.is_empty() {
        "it takes no arguments".to_owned()
    } else {
        format!("it accepts: {}", accepted.join(", "))
    }
}

fn quoted_list(options: &[&str]) -> String {
    let quoted: Vec<String> = options.iter().map(|o| format!("{o:?}")).collect();
    quoted.join(", ")
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::{Map, Value, json};

    use super::{ArgumentError, InputSchema, TargetArguments};

    fn default_limit() -> u64 {
        5
    }

    /// A tool's arguments: a required text, the flattened target, a bounded integer.
    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Sample {
        /// The name.
        #[schemars(length(min = 1, max = 8))]
        name: String,
        #[serde(flatten)]
        target: TargetArguments,
        /// The limit.
        #[serde(default = "default_limit")]
        #[schemars(range(min = 1, max = 9))]
        limit: u64,
    }

    fn arguments(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap()
    }

    #[test]
    fn parameters_are_in_declaration_order_with_flattened_ones_in_place() {
        let input = InputSchema::of::<Sample>();
        let names: Vec<&str> = input.parameters.iter().map(|p| p.name).collect();
        assert_eq!(names, ["name", "document", "provider", "limit"]);
        assert_eq!(input.schema()["required"], json!(["name"]));
        assert_eq!(input.schema()["additionalProperties"], false);
        assert_eq!(input.schema()["properties"]["limit"]["default"], 5);
        assert_eq!(input.schema()["properties"]["document"]["type"], "string");
    }

    #[test]
    fn unknown_names_come_first_in_name_order_then_parameters_in_declaration_order() {
        let input = InputSchema::of::<Sample>();
        let error = input
            .check("t", arguments(json!({"zz": 1, "aa": 1, "limit": 0})))
            .unwrap_err();
        assert!(
            matches!(&error, ArgumentError::Unknown { argument, .. } if *argument == "aa"),
            "{error}"
        );
        // `name` is declared before `limit`: its absence is reported first.
        let error = input
            .check("t", arguments(json!({"limit": 0})))
            .unwrap_err();
        assert_eq!(
            error,
            ArgumentError::Missing {
                tool: "t",
                argument: "name"
            }
        );
        let error = input
            .check("t", arguments(json!({"name": "x", "provider": null})))
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "argument \"provider\" of t must be a string, not null (omit it to use the default)"
        );
    }

    proptest! {
        /// An integer argument is accepted exactly within its range; anything else numeric is
        /// a range error quoting the number.
        #[test]
        fn an_integer_is_accepted_exactly_in_its_range(n in -20i64..20, fraction in prop::bool::ANY) {
            let input = InputSchema::of::<Sample>();
            let given = if fraction { json!(n as f64 + 0.5) } else { json!(n) };
            let result = input.check("t", arguments(json!({"name": "x", "limit": given})));
            if !fraction && (1..=9).contains(&n) {
                prop_assert!(result.is_ok());
            } else {
                prop_assert_eq!(result.unwrap_err(), ArgumentError::Range {
                    tool: "t",
                    argument: "limit",
                    min: 1,
                    max: 9,
                    found: given.to_string(),
                });
            }
        }
    }
}
