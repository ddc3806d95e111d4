//! Typed extraction of request params, with `-32602` errors naming the offending field.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

use jsonrpsee::Extensions;
use serde_json::{Map, Value};

use super::error::RequestError;

/// The params of one request, parsed once by the shell with the rest of its message and handed
/// to the handler in the request's extensions: never encoded again, never parsed again. Cloning
/// shares them (a handler that moves work to a pool takes a clone along).
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestParams(Arc<Option<Value>>);

impl RequestParams {
    /// The params as the message carried them (`None` when it had none).
    pub(crate) fn new(params: Option<Value>) -> RequestParams {
        RequestParams(Arc::new(params))
    }

    /// The params of the request `extensions` belong to (none when the shell put none there).
    pub(crate) fn of(extensions: &Extensions) -> RequestParams {
        extensions
            .get::<RequestParams>()
            .cloned()
            .unwrap_or_default()
    }

    /// The params as a JSON object: absent or `null` params are an empty object, anything
    /// else but an object is `-32602` naming `method`.
    pub(crate) fn object(&self, method: &'static str) -> Result<&Map<String, Value>, RequestError> {
        static EMPTY: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);
        match self.0.as_ref() {
            None | Some(Value::Null) => Ok(&EMPTY),
            Some(Value::Object(map)) => Ok(map),
            Some(_) => Err(RequestError::ParamsNotObject { method }),
        }
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn params_are_read_from_the_extensions_as_parsed() {
        let mut extensions = Extensions::new();
        extensions.insert(RequestParams::new(Some(json!({"name": "x", "n": 1}))));
        let params = RequestParams::of(&extensions);
        let object = params.object("prompts/get").unwrap();
        assert_eq!(object.get("name"), Some(&json!("x")));
        // A clone shares the same parsed value.
        let shared = params.clone();
        assert!(std::ptr::eq(
            shared.object("prompts/get").unwrap(),
            params.object("prompts/get").unwrap()
        ));
    }

    #[test]
    fn absent_or_null_params_are_an_empty_object_and_others_are_refused() {
        let empty = Extensions::new();
        assert!(RequestParams::of(&empty).object("ping").unwrap().is_empty());
        assert!(
            RequestParams::new(Some(Value::Null))
                .object("ping")
                .unwrap()
                .is_empty()
        );
        for other in [json!([1]), json!("text"), json!(3)] {
            assert_eq!(
                RequestParams::new(Some(other)).object("tools/call"),
                Err(RequestError::ParamsNotObject {
                    method: "tools/call"
                })
            );
        }
    }
}
