//! Typed extraction of request params, with `-32602` messages naming the offending field.

use std::collections::BTreeMap;

use jsonrpsee::types::Params;
use serde_json::{Map, Value};

use super::error::WireError;

/// The params of a request as a JSON object (absent params are an empty object).
pub(crate) fn object(params: &Params<'_>, method: &str) -> Result<Map<String, Value>, WireError> {
    match params.parse::<Option<Value>>() {
        Ok(None) => Ok(Map::new()),
        Ok(Some(Value::Object(map))) => Ok(map),
        Ok(Some(_)) | Err(_) => Err(WireError::invalid_params(format!(
            "Invalid params: the params of {method} must be a JSON object"
        ))),
    }
}

/// The string at `field` of `object`, where `path` names the object in messages.
pub(crate) fn required_str<'a>(
    object: &'a Map<String, Value>,
    path: &str,
    field: &str,
) -> Result<&'a str, WireError> {
    match object.get(field) {
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(WireError::invalid_params(format!(
            "Invalid params: {path}.{field} must be a string"
        ))),
        None => Err(WireError::invalid_params(format!(
            "Invalid params: {path}.{field} is required"
        ))),
    }
}

/// The optional string at `field`.
pub(crate) fn optional_str<'a>(
    object: &'a Map<String, Value>,
    path: &str,
    field: &str,
) -> Result<Option<&'a str>, WireError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => required_str(object, path, field).map(Some),
    }
}

/// The object at `field`, which must be present.
pub(crate) fn required_object<'a>(
    object: &'a Map<String, Value>,
    path: &str,
    field: &str,
) -> Result<&'a Map<String, Value>, WireError> {
    match object.get(field) {
        Some(Value::Object(inner)) => Ok(inner),
        Some(_) => Err(WireError::invalid_params(format!(
            "Invalid params: {path}.{field} must be an object"
        ))),
        None => Err(WireError::invalid_params(format!(
            "Invalid params: {path}.{field} is required"
        ))),
    }
}

/// A map of string arguments at `field` (absent or null is empty); a non-string value is an
/// error naming its key.
pub(crate) fn string_map(
    object: &Map<String, Value>,
    path: &str,
    field: &str,
) -> Result<BTreeMap<String, String>, WireError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => Ok((key.clone(), text.clone())),
                _ => Err(WireError::invalid_params(format!(
                    "Invalid params: {path}.{field}[{}] must be a string",
                    Value::String(crate::text::cut(key))
                ))),
            })
            .collect(),
        Some(_) => Err(WireError::invalid_params(format!(
            "Invalid params: {path}.{field} must be an object of strings"
        ))),
    }
}
