//! Typed extraction of request params, with `-32602` errors naming the offending field.

use std::collections::BTreeMap;

use jsonrpsee::types::Params;
use serde_json::{Map, Value};

use super::error::RequestError;

/// The params of a request as a JSON object (absent params are an empty object).
pub(crate) fn object(
    params: &Params<'_>,
    method: &'static str,
) -> Result<Map<String, Value>, RequestError> {
    match params.parse::<Option<Value>>() {
        Ok(None) => Ok(Map::new()),
        Ok(Some(Value::Object(map))) => Ok(map),
        Ok(Some(_)) | Err(_) => Err(RequestError::ParamsNotObject { method }),
    }
}

/// The string at `field` of `object`, where `path` names the object in messages.
pub(crate) fn required_str<'a>(
    object: &'a Map<String, Value>,
    path: &'static str,
    field: &'static str,
) -> Result<&'a str, RequestError> {
    match object.get(field) {
        Some(Value::String(text)) => Ok(text),
        Some(_) => Err(RequestError::NotAString { path, field }),
        None => Err(RequestError::MissingField { path, field }),
    }
}

/// The optional string at `field`.
pub(crate) fn optional_str<'a>(
    object: &'a Map<String, Value>,
    path: &'static str,
    field: &'static str,
) -> Result<Option<&'a str>, RequestError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => required_str(object, path, field).map(Some),
    }
}

/// The object at `field`, which must be present.
pub(crate) fn required_object<'a>(
    object: &'a Map<String, Value>,
    path: &'static str,
    field: &'static str,
) -> Result<&'a Map<String, Value>, RequestError> {
    match object.get(field) {
        Some(Value::Object(inner)) => Ok(inner),
        Some(_) => Err(RequestError::NotAnObjectField { path, field }),
        None => Err(RequestError::MissingField { path, field }),
    }
}

/// The object at `field`, if present (absent or null is `None`).
pub(crate) fn optional_object<'a>(
    object: &'a Map<String, Value>,
    path: &'static str,
    field: &'static str,
) -> Result<Option<&'a Map<String, Value>>, RequestError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => required_object(object, path, field).map(Some),
    }
}

/// A map of string arguments at `field` (absent or null is empty); a non-string value is an
/// error naming its key.
pub(crate) fn string_map(
    object: &Map<String, Value>,
    path: &'static str,
    field: &'static str,
) -> Result<BTreeMap<String, String>, RequestError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(entries)) => entries
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => Ok((key.clone(), text.clone())),
                _ => Err(RequestError::ArgumentNotString {
                    path,
                    field,
                    key: key.into(),
                }),
            })
            .collect(),
        Some(_) => Err(RequestError::NotStringMap { path, field }),
    }
}
