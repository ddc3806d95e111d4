//! Output schemas (JSON Schema 2020-12) of tool results: [`output_schema`] generates one from
//! the result type (every type a tool returns derives its schema where it is defined), and
//! small builders add the properties the server puts beside a result.

use schemars::JsonSchema;
use schemars::generate::{Contract, SchemaSettings};
use serde_json::{Map, Value, json};

/// The output schema of the result type `R`: inlined, every field listed and required (what
/// serialization writes; a field skipped when empty is listed but not required), no other
/// properties allowed, integers without the Rust formats.
pub(crate) fn output_schema<R: JsonSchema>() -> Value {
    let settings = SchemaSettings::draft2020_12().with(|settings| {
        settings.inline_subschemas = true;
        settings.meta_schema = None;
        settings.contract = Contract::Serialize;
    });
    let mut schema = settings
        .into_generator()
        .into_root_schema_for::<R>()
        .to_value();
    // The type's name and doc comment are not part of the published result; a published
    // document schema (with its own definitions) keeps its title and description.
    if let Some(object) = schema.as_object_mut()
        && !object.contains_key("$defs")
    {
        object.remove("title");
        object.remove("description");
    }
    close(&mut schema);
    single_types(&mut schema);
    schema
}

/// Closes every object schema of a derived output schema, drops the integer formats and the
/// titles, and joins the lines of each paragraph of every description (doc comments keep
/// their line breaks).
fn close(schema: &mut Value) {
    match schema {
        // A published document schema (with its own definitions) is kept as published.
        Value::Object(object) if object.contains_key("$defs") => {}
        Value::Object(object) => {
            constants_as_enum(object);
            let derived_object = object.contains_key("properties");
            if derived_object {
                object
                    .entry("additionalProperties")
                    .or_insert(Value::Bool(false));
                object
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
            }
            if object.get("type").is_some_and(|kind| {
                kind == "integer"
                    || kind
                        .as_array()
                        .is_some_and(|k| k.contains(&json!("integer")))
            }) {
                object.remove("format");
            }
            for (key, value) in object.iter_mut() {
                match value {
                    Value::String(text) if key == "description" => {
                        *text = running_text(text);
                    }
                    // Property names are not schemas.
                    Value::Object(properties) if key == "properties" => {
                        properties.values_mut().for_each(close);
                    }
                    other => close(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(close),
        _ => {}
    }
}

/// Rewrites the `oneOf` a derive makes of an enum with documented variants (one `const`
/// string per variant) as one `enum` of strings, the form of an enum's schema that clients
/// which map schemas onto a single-type dialect keep (the variants' descriptions are dropped).
fn constants_as_enum(object: &mut Map<String, Value>) {
    let Some(Value::Array(branches)) = object.get("oneOf") else {
        return;
    };
    let constants: Option<Vec<Value>> = branches
        .iter()
        .map(|branch| {
            let branch = branch.as_object()?;
            let plain_string = branch.get("type") == Some(&json!("string"))
                && branch
                    .keys()
                    .all(|key| ["type", "const", "description"].contains(&key.as_str()));
            branch
                .get("const")
                .filter(|constant| plain_string && constant.is_string())
                .cloned()
        })
        .collect();
    if let Some(constants) = constants.filter(|constants| !constants.is_empty()) {
        object.remove("oneOf");
        object.insert("type".to_owned(), json!("string"));
        object.insert("enum".to_owned(), Value::Array(constants));
    }
}

/// The keywords of numbers (integers or not).
const NUMBER_KEYWORDS: &[&str] = &[
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "format",
];

/// The keywords that constrain only instances of one JSON type: where a type array is split
/// into `anyOf` branches, each goes into the branch of its type.
const TYPE_KEYWORDS: [(&str, &[&str]); 5] = [
    (
        "string",
        &[
            "minLength",
            "maxLength",
            "pattern",
            "format",
            "contentEncoding",
            "contentMediaType",
        ],
    ),
    ("integer", NUMBER_KEYWORDS),
    ("number", NUMBER_KEYWORDS),
    (
        "array",
        &[
            "items",
            "prefixItems",
            "minItems",
            "maxItems",
            "uniqueItems",
            "contains",
            "minContains",
            "maxContains",
            "unevaluatedItems",
        ],
    ),
    (
        "object",
        &[
            "properties",
            "required",
            "additionalProperties",
            "patternProperties",
            "minProperties",
            "maxProperties",
            "propertyNames",
            "unevaluatedProperties",
            "dependentRequired",
            "dependentSchemas",
        ],
    ),
];

/// Keywords whose values are data, not schemas (never rewritten).
const DATA_KEYWORDS: [&str; 4] = ["default", "examples", "const", "enum"];

/// Rewrites every `type` array of `schema` (`["string", "null"]`, which clients that map
/// schemas onto a single-type dialect reject or strip) as `anyOf` branches of one `type`
/// each, with the keywords of each type (and the `enum` values of each type) in its branch;
/// annotations (`description`, `default`, ...) stay beside the `anyOf`. The schema accepts
/// exactly what it accepted before.
pub(crate) fn single_types(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                if !DATA_KEYWORDS.contains(&key.as_str()) {
                    single_types(value);
                }
            }
            if let Some(Value::Array(types)) = object.get("type") {
                let types: Vec<String> = types
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect();
                split_types(object, &types);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(single_types),
        _ => {}
    }
}

/// Whether the JSON value `value` is an instance of the JSON Schema type `kind`.
fn is_of_type(value: &Value, kind: &str) -> bool {
    match kind {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => false,
    }
}

/// [`single_types`] for one object schema whose `type` is the array `types`.
fn split_types(object: &mut Map<String, Value>, types: &[String]) {
    object.remove("type");
    if let [only] = types {
        object.insert("type".to_owned(), Value::String(only.clone()));
        return;
    }
    let keywords = |kind: &str| -> &'static [&'static str] {
        TYPE_KEYWORDS
            .iter()
            .find(|(of, _)| *of == kind)
            .map_or(&[], |(_, keywords)| *keywords)
    };
    let mut moved = Map::new();
    for kind in types {
        for keyword in keywords(kind) {
            if let Some(value) = object.remove(*keyword) {
                moved.insert((*keyword).to_owned(), value);
            }
        }
    }
    let allowed = object.remove("enum");
    let mut branches = Vec::new();
    for kind in types {
        let mut branch = Map::new();
        branch.insert("type".to_owned(), Value::String(kind.clone()));
        for keyword in keywords(kind) {
            if let Some(value) = moved.get(*keyword) {
                branch.insert((*keyword).to_owned(), value.clone());
            }
        }
        if let Some(Value::Array(allowed)) = &allowed {
            let values: Vec<Value> = allowed
                .iter()
                .filter(|value| is_of_type(value, kind))
                .cloned()
                .collect();
            if values.is_empty() {
                continue;
            }
            if kind != "null" {
                branch.insert("enum".to_owned(), Value::Array(values));
            }
        }
        branches.push(Value::Object(branch));
    }
    if let Some(earlier) = object.remove("anyOf") {
        let mut all = match object.remove("allOf") {
            Some(Value::Array(all)) => all,
            _ => Vec::new(),
        };
        all.push(json!({ "anyOf": earlier }));
        object.insert("allOf".to_owned(), Value::Array(all));
    }
    object.insert("anyOf".to_owned(), Value::Array(branches));
}

/// Adds a required property to an object schema.
pub(crate) fn with_property(schema: Value, name: &str, property: Value) -> Value {
    let mut schema = with_optional_property(schema, name, property);
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.push(json!(name));
    }
    schema
}

/// Adds a property that may be absent to an object schema.
pub(crate) fn with_optional_property(mut schema: Value, name: &str, property: Value) -> Value {
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(name.to_owned(), property);
    }
    schema
}

/// A string, with a description.
pub(crate) fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// A doc comment's description as running text: the lines of each paragraph joined by spaces,
/// paragraphs kept apart.
pub(crate) fn running_text(text: &str) -> String {
    let paragraphs: Vec<String> = text
        .split("\n\n")
        .map(|paragraph| paragraph.split('\n').collect::<Vec<_>>().join(" "))
        .collect();
    paragraphs.join("\n\n")
}
