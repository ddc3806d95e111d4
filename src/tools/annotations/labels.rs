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
fn label_schema() -> Value {
    json!({
        "type": "string",
        "description": "The investigator's name for it (annotate), beside the provider's; absent when none. An inference backed by the Evidence its annotation cites.",
    })
}

/// The schema of `target_label`.
fn target_label_schema() -> Value {
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

/// Adds to `schema`, the output schema of a [`LABELLED`] tool, the labels [`attach`] may add
/// to its results: `label` to every object schema with `address` and `name`, `target_label` to
/// every one with `target` and `target_name`; neither is required, and a property the object
/// already has is kept.
pub(crate) fn attach_schema(schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object.iter_mut() {
                match value {
                    // Property names are not schemas.
                    Value::Object(properties) if key == "properties" => {
                        properties.values_mut().for_each(attach_schema);
                        add_labels(properties);
                    }
                    other => attach_schema(other),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(attach_schema),
        _ => {}
    }
}

/// [`attach_schema`] for the `properties` of one object schema.
fn add_labels(properties: &mut Map<String, Value>) {
    let has_both =
        |key: &str, beside: &str| properties.contains_key(key) && properties.contains_key(beside);
    let label = has_both("address", "name");
    let target_label = has_both("target", "target_name");
    if label {
        properties.entry("label").or_insert_with(label_schema);
    }
    if target_label {
        properties
            .entry("target_label")
            .or_insert_with(target_label_schema);
    }
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
