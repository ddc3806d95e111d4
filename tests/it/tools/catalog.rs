//! The tool catalog: names and order, MCP `Tool` validity, input and output schemas,
//! annotations, kinds and provider operations.

use crate::support::assert_schema_valid;
use crate::support::tools::{MCP_VERSIONS, closed};
use rea::session::Operation;
use rea::tools::{ToolAnnotations, ToolKind};
use serde_json::Value;

const CATALOG: [&str; 36] = [
    "open_binary",
    "close_binary",
    "list_sessions",
    "list_providers",
    "list_documents",
    "current_document",
    "set_current_document",
    "list_procedures",
    "procedure_info",
    "search_procedures",
    "list_segments",
    "search_strings",
    "read_bytes",
    "list_imports",
    "disassemble",
    "xrefs_to",
    "callers",
    "callees",
    "decompile",
    "compare_procedures",
    "list_evidence",
    "get_evidence",
    "register_unknown",
    "refine_unknown",
    "resolve_unknown",
    "list_unknowns",
    "annotate",
    "list_annotations",
    "undo_annotation",
    "export_annotations",
    "inventory_artifacts",
    "list_artifact_occurrences",
    "compare_inventories",
    "import_process_capture",
    "verify_reconstruction",
    "run_process_capture",
];

#[test]
fn the_catalog_lists_the_tools_in_spec_order() {
    let (_, tools) = closed();
    let names: Vec<&str> = tools.definitions().iter().map(|d| d.name()).collect();
    assert_eq!(names, CATALOG);
    for name in CATALOG {
        assert_eq!(tools.definition(name).unwrap().name(), name);
    }
    assert!(tools.definition("no_such_tool").is_none());
}

#[test]
fn every_definition_is_a_valid_mcp_tool() {
    let (_, tools) = closed();
    for definition in tools.definitions() {
        let value = definition.to_value();
        assert_eq!(serde_json::to_value(definition).unwrap(), value);
        for version in MCP_VERSIONS {
            assert_schema_valid(version, "Tool", &value);
        }
        let keys: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "annotations",
                "description",
                "inputSchema",
                "name",
                "outputSchema",
                "title"
            ]
        );
        assert!(!definition.title().is_empty());
        assert!(definition.description().len() > 40, "{}", definition.name());
    }
}

#[test]
fn input_schemas_are_closed_documented_2020_12_object_schemas() {
    let (_, tools) = closed();
    for definition in tools.definitions() {
        let schema = definition.input_schema();
        let name = definition.name();
        jsonschema::draft202012::meta::validate(schema).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        let properties = schema["properties"].as_object().unwrap();
        for (property, body) in properties {
            let description = body["description"].as_str().unwrap_or_default();
            assert!(description.len() > 10, "{name}.{property} is undocumented");
            assert!(body["type"].is_string(), "{name}.{property} has a type");
        }
        for required in schema["required"].as_array().unwrap() {
            assert!(
                properties.contains_key(required.as_str().unwrap()),
                "{name} requires an undeclared {required}"
            );
        }
    }
}

#[test]
fn output_schemas_are_closed_object_schemas_and_observations_return_an_evidence_id() {
    let (_, tools) = closed();
    for definition in tools.definitions() {
        let schema = definition.output_schema();
        let name = definition.name();
        jsonschema::draft202012::meta::validate(schema).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(schema["type"], "object", "{name}");
        assert_eq!(schema["additionalProperties"], false, "{name}");
        let properties = schema["properties"].as_object().unwrap();
        let required: Vec<&str> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        let mut declared: Vec<&str> = properties.keys().map(String::as_str).collect();
        let mut sorted_required = required.clone();
        declared.sort_unstable();
        sorted_required.sort_unstable();
        assert_eq!(
            declared, sorted_required,
            "{name}: every field is always present"
        );
        let observing = definition.kind() == ToolKind::Observation;
        assert_eq!(properties.contains_key("evidence_id"), observing, "{name}");
    }
}

#[test]
fn kinds_operations_and_annotations_follow_the_documented_table() {
    let (_, tools) = closed();
    let table: [(&str, ToolKind, Option<Operation>); 21] = [
        ("open_binary", ToolKind::SessionChange, None),
        ("close_binary", ToolKind::SessionChange, None),
        ("list_sessions", ToolKind::Read, None),
        ("list_providers", ToolKind::Read, None),
        (
            "list_documents",
            ToolKind::Observation,
            Some(Operation::ListDocuments),
        ),
        ("current_document", ToolKind::Read, None),
        ("set_current_document", ToolKind::SessionChange, None),
        (
            "list_procedures",
            ToolKind::Observation,
            Some(Operation::ListProcedures),
        ),
        (
            "procedure_info",
            ToolKind::Observation,
            Some(Operation::ProcedureInfo),
        ),
        (
            "search_procedures",
            ToolKind::Observation,
            Some(Operation::SearchProcedures),
        ),
        (
            "list_segments",
            ToolKind::Observation,
            Some(Operation::ListSegments),
        ),
        (
            "search_strings",
            ToolKind::Observation,
            Some(Operation::SearchStrings),
        ),
        (
            "read_bytes",
            ToolKind::Observation,
            Some(Operation::ReadBytes),
        ),
        (
            "disassemble",
            ToolKind::Observation,
            Some(Operation::Disassemble),
        ),
        ("xrefs_to", ToolKind::Observation, Some(Operation::XrefsTo)),
        ("callers", ToolKind::Observation, Some(Operation::Callers)),
        ("callees", ToolKind::Observation, Some(Operation::Callees)),
        (
            "decompile",
            ToolKind::Observation,
            Some(Operation::Decompile),
        ),
        (
            "compare_procedures",
            ToolKind::Observation,
            Some(Operation::CompareProcedures),
        ),
        ("list_evidence", ToolKind::Read, None),
        ("get_evidence", ToolKind::Read, None),
    ];
    for (name, kind, operation) in table {
        let definition = tools.definition(name).unwrap();
        assert_eq!(definition.kind(), kind, "{name}");
        assert_eq!(definition.operation(), operation, "{name}");
        // Provider-backed tools are named after their operation.
        if let Some(operation) = operation {
            assert_eq!(Operation::from_name(name), Some(operation));
        }
        let hints = definition.annotations();
        assert!(
            !hints.open_world_hint,
            "{name}: no tool reaches the open world"
        );
        match kind {
            ToolKind::Observation | ToolKind::Read => {
                assert_eq!(hints, ToolAnnotations::READ_ONLY, "{name}")
            }
            ToolKind::SessionChange => assert!(!hints.read_only_hint, "{name}"),
        }
    }
    let destructive: Vec<&str> = tools
        .definitions()
        .iter()
        .filter(|d| d.annotations().destructive_hint)
        .map(|d| d.name())
        .collect();
    assert_eq!(
        destructive,
        ["close_binary"],
        "only discarding is destructive"
    );
}

/// The annotations table of docs/CONTRACT.md section 11: each tool's four hints, by name.
fn documented_hints() -> Vec<(String, Value)> {
    let contract = std::fs::read_to_string(crate::root().join("docs/CONTRACT.md")).unwrap();
    let mut lines = contract.lines();
    let header = lines
        .by_ref()
        .find(|line| line.starts_with("| tool | readOnlyHint"))
        .expect("CONTRACT.md has the annotations table");
    let names: Vec<&str> = header.split('|').map(str::trim).collect();
    assert_eq!(
        names[2..6],
        [
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint"
        ]
    );
    lines
        .skip(1)
        .take_while(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let tool = cells[1].trim_matches('`').to_owned();
            let mut hints = serde_json::Map::new();
            for (name, cell) in names[2..6].iter().zip(&cells[2..6]) {
                let hint = match *cell {
                    "true" => true,
                    "false" => false,
                    other => panic!("{tool}: {name} is {other:?}, not true or false"),
                };
                hints.insert((*name).to_owned(), Value::Bool(hint));
            }
            (tool, Value::Object(hints))
        })
        .collect()
}

#[test]
fn every_tools_hints_are_the_documented_table() {
    let (_, tools) = closed();
    let listed: Vec<(String, Value)> = tools
        .definitions()
        .iter()
        .map(|d| (d.name().to_owned(), d.to_value()["annotations"].clone()))
        .collect();
    assert_eq!(
        listed,
        documented_hints(),
        "tools/list and CONTRACT.md section 11"
    );
    let open_binary = tools.definition("open_binary").unwrap().annotations();
    assert!(
        !open_binary.destructive_hint,
        "opening never discards anything"
    );
}

#[test]
fn provider_backed_tools_take_provider_and_document_arguments() {
    let (_, tools) = closed();
    for definition in tools.definitions() {
        let properties = definition.input_schema()["properties"].as_object().unwrap();
        // `compare_procedures` names its two documents `baseline_document` and
        // `candidate_document`, and its provider is each session's current one.
        let backed = definition.operation().is_some() && definition.name() != "compare_procedures";
        assert_eq!(
            properties.contains_key("provider"),
            backed || definition.name() == "set_current_document"
        );
        let takes_document = backed && definition.name() != "list_documents";
        if takes_document {
            assert!(properties.contains_key("document"), "{}", definition.name());
        }
    }
}

#[test]
fn limits_in_the_schemas_are_the_spec_bounds() {
    let (_, tools) = closed();
    let schema = |tool: &str, property: &str| -> Value {
        tools.definition(tool).unwrap().input_schema()["properties"][property].clone()
    };
    assert_eq!(schema("list_procedures", "limit")["maximum"], 500);
    assert_eq!(schema("read_bytes", "length")["maximum"], 4096);
    assert_eq!(schema("read_bytes", "length")["minimum"], 1);
    assert_eq!(schema("search_procedures", "limit")["maximum"], 500);
    assert_eq!(schema("search_strings", "limit")["maximum"], 500);
    assert_eq!(schema("procedure_info", "procedure")["maxLength"], 4096);
    let read_bytes = tools.definition("read_bytes").unwrap().input_schema();
    assert_eq!(
        read_bytes["required"],
        serde_json::json!(["address", "length"])
    );
}

#[test]
fn the_catalog_as_tools_list_shows_it() {
    let (_, tools) = closed();
    let listed: Vec<Value> = tools.definitions().iter().map(|d| d.to_value()).collect();
    crate::support::snapshots::settings().bind(|| {
        insta::assert_json_snapshot!("tools_catalog__definitions", listed);
    });
}

/// The JSON pointers of every `type` whose value is an array, in `schema`.
fn type_arrays(schema: &Value, at: &str, found: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            for (key, value) in object {
                let here = format!("{at}/{key}");
                if key == "type" && value.is_array() {
                    found.push(here);
                } else {
                    type_arrays(value, &here, found);
                }
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                type_arrays(item, &format!("{at}/{index}"), found);
            }
        }
        _ => {}
    }
}

#[tokio::test]
async fn tools_list_has_no_type_arrays() {
    let mut client =
        crate::support::Client::start(rea::mcp::Server::new(rea::mcp::ServerConfig::default()));
    client.initialize("2025-11-25").await;
    let listed = client.request("tools/list", serde_json::json!({})).await;
    let listed = listed["result"]["tools"].as_array().unwrap();
    assert_eq!(listed.len(), CATALOG.len());
    let mut found = Vec::new();
    let mut nullable = 0;
    for tool in listed {
        let name = tool["name"].as_str().unwrap();
        for key in ["inputSchema", "outputSchema"] {
            type_arrays(&tool[key], &format!("{name}/{key}"), &mut found);
            nullable += tool[key].to_string().matches(r#"{"type":"null"}"#).count();
        }
    }
    assert!(found.is_empty(), "type arrays in tools/list: {found:#?}");
    assert!(nullable > 0, "nullable fields are anyOf branches");
}
