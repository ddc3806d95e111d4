//! The investigator's labels beside the provider's names (docs/CONTRACT.md section 17): in the
//! results of the tools that show procedures, every procedure or address object that has a
//! label gets `label`, and every instruction whose target has one gets `target_label`.

use serde_json::{Map, Value, json};

use crate::session::Target;

/// The tools whose results show procedures.
pub(crate) const LABELLED: [&str; 7] = [
    "list_procedures",
    "procedure_info",
    "search_procedures",
    "disassemble",
    "xrefs_to",
    "callers",
    "callees",
];

/// The schema of `label`.
pub(crate) fn label_schema() -> Value {
    json!({
        "type": "string",
        "description": "The investigator's name for it (annotate), beside the provider's; absent when none. An inference backed by the Evidence its annotation cites.",
    })
}

/// The schema of `label` where it may also be null (`procedure_info` always answers it).
pub(crate) fn nullable_label_schema() -> Value {
    json!({
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": "The investigator's name for it (annotate), beside the provider's; null or absent when none. An inference backed by the Evidence its annotation cites.",
    })
}

/// The schema of `target_label`.
pub(crate) fn target_label_schema() -> Value {
    json!({
        "type": "string",
        "description": "The investigator's name for `target` (annotate); absent when none.",
    })
}

/// Adds the labels of `target`'s document to `result` (a result of a [`LABELLED`] tool).
pub(crate) fn attach(target: &Target, result: &mut Map<String, Value>) {
    if target.labels().next().is_none() {
        return;
    }
    attach_object(target, result);
}

fn attach_object(target: &Target, object: &mut Map<String, Value>) {
    let found = |key: &str, beside: &str| {
        object
            .get(key)
            .and_then(Value::as_str)
            .filter(|_| object.contains_key(beside))
            .and_then(|address| target.label(address))
    };
    let label = found("address", "name");
    let target_label = found("target", "target_name");
    for value in object.values_mut() {
        attach_value(target, value);
    }
    if let Some(label) = label {
        object.insert("label".to_owned(), label.into());
    }
    if let Some(label) = target_label {
        object.insert("target_label".to_owned(), label.into());
    }
}

fn attach_value(target: &Target, value: &mut Value) {
    match value {
        Value::Object(object) => attach_object(target, object),
        Value::Array(items) => {
            for item in items {
                attach_value(target, item);
            }
        }
        _ => {}
    }
}
