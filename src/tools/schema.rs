//! Small builders for the output schemas (JSON Schema 2020-12) of tool results.

use serde_json::{Value, json};

/// An object schema whose properties are all required and which allows no others.
pub(crate) fn object(properties: Value) -> Value {
    let required: Vec<String> = properties
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

/// Adds a required property to an [`object`] schema.
pub(crate) fn with_property(schema: Value, name: &str, property: Value) -> Value {
    let mut schema = with_optional_property(schema, name, property);
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.push(json!(name));
    }
    schema
}

/// Adds a property that may be absent to an [`object`] schema.
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

/// A string or `null`, with a description.
pub(crate) fn nullable_string(description: &str) -> Value {
    json!({"type": ["string", "null"], "description": description})
}

/// A non-negative integer, with a description.
pub(crate) fn count(description: &str) -> Value {
    json!({"type": "integer", "minimum": 0, "description": description})
}

/// A non-negative integer or `null`, with a description.
pub(crate) fn nullable_count(description: &str) -> Value {
    json!({"type": ["integer", "null"], "minimum": 0, "description": description})
}

/// A boolean, with a description.
pub(crate) fn flag(description: &str) -> Value {
    json!({"type": "boolean", "description": description})
}

/// An array of `items`, with a description.
pub(crate) fn array(items: Value, description: &str) -> Value {
    json!({"type": "array", "items": items, "description": description})
}

/// Any JSON value, with a description.
pub(crate) fn any(description: &str) -> Value {
    json!({"description": description})
}
