//! Properties of `ToolBox::call` over arbitrary JSON argument maps, for every tool and with no
//! binary, the fake provider, a catalog or a real binary open:
//! - it never panics and returns `Ok` for every catalog tool (`Err` only for unknown names);
//! - every outcome is a valid `CallToolResult`, and every success fits the tool's output schema;
//! - arguments the published input schema rejects are always an error result, and arguments
//!   the server accepts always fit the input schema;
//! - exactly the successful observations append one Evidence record; reads and failures
//!   append none.

use std::sync::Arc;

use crate::support;
use crate::support::fixtures::fake::app_and_lib;
use crate::support::tools::{catalog_json, check_outcome, stripped_system_binary, this_executable};
use proptest::prelude::*;
use rea::providers::catalog::CatalogProvider;
use rea::providers::native::NativeProvider;
use rea::session::{Provider, Session};
use rea::tools::{ToolBox, ToolKind};
use serde_json::{Map, Value, json};

/// Every parameter name of the catalog, and near misses.
const KEYS: [&str; 20] = [
    "path",
    "provider",
    "document",
    "cursor",
    "limit",
    "procedure",
    "query",
    "match",
    "contains",
    "min_chars",
    "address",
    "length",
    "id",
    "Path",
    "limt",
    "",
    " document",
    "extra",
    "__proto__",
    "évidence",
];

/// Strings that hit the interesting paths: valid and invalid addresses, names (unique,
/// ambiguous, unknown), Evidence IDs, cursors, choices, documents and providers, and the hard
/// Unicode cases (combining marks, Hangul, compatibility characters, default ignorables, case
/// variants, empty, at and over 4,096 characters).
fn interesting_string() -> impl Strategy<Value = String> {
    let fixed = prop::sample::select(vec![
        "0x1000",
        "0x0",
        "0x1",
        "0x00001100",
        "0X1000",
        "0x",
        "0xffffffffffffffff",
        "0x1ffffffffffffffff",
        "main",
        "helper",
        "dup",
        "init",
        "foo::bar(int)",
        "_ZN3foo3barEi",
        "ev-000000000001",
        "ev-1",
        "at:1",
        "at:3",
        "at:99",
        "contains",
        "exact",
        "app",
        "lib",
        "fake",
        "catalog",
        "native",
        "",
        "e\u{301}",
        "\u{d55c}\u{ae00}",
        "\u{1100}\u{1161}\u{11ab}",
        "\u{fb01}",
        "\u{2126}",
        "a\u{200b}b",
        "\u{ad}",
        "MAIN",
        "Stra\u{df}e",
        "\u{130}",
        "/",
        ".",
        "/nonexistent/file",
    ])
    .prop_map(str::to_owned);
    prop_oneof![
        4 => fixed,
        2 => ".{0,12}",
        1 => Just("x".repeat(4096)),
        1 => Just("x".repeat(4097)),
        1 => Just("\u{e9}".repeat(4096)),
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        prop::sample::select(vec![
            -1i64,
            0,
            1,
            2,
            3,
            16,
            100,
            256,
            257,
            500,
            501,
            4096,
            4097,
            i64::MIN,
            i64::MAX,
        ])
        .prop_map(Value::from),
        Just(json!(u64::MAX)),
        prop::sample::select(vec![2.0f64, 2.5, -0.0, 1e300, 4096.0, 4096.5]).prop_map(|f| json!(f)),
        any::<i64>().prop_map(Value::from),
        interesting_string().prop_map(Value::from),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{0,4}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn argument_map() -> impl Strategy<Value = Map<String, Value>> {
    let key = prop_oneof![
        4 => prop::sample::select(KEYS.to_vec()).prop_map(str::to_owned),
        1 => ".{0,8}",
    ];
    prop::collection::btree_map(key, json_value(), 0..5).prop_map(|m| m.into_iter().collect())
}

/// Stands for the newest Evidence ID of the session (substituted in the test).
const LATEST_EVIDENCE: &str = "ev-LATEST";

/// Values for a parameter: mostly of its declared type (in and around its range), sometimes
/// anything.
fn value_for(name: &str, schema: &Value) -> BoxedStrategy<Value> {
    let likely: &[&str] = match name {
        "document" => &["app", "lib", "ls", "missing"],
        "provider" => &["fake", "catalog", "native", "ghidra"],
        "procedure" => &[
            "main", "helper", "dup", "init", "0x1000", "0x1100", "0x2000", "0x1001",
        ],
        "query" | "contains" => &["main", "help", "dup", "a", "GLIBC", "usage"],
        "cursor" => &["at:1", "at:2", "at:99"],
        _ => &[],
    };
    if !likely.is_empty() {
        let likely: Vec<Value> = likely.iter().map(|text| json!(text)).collect();
        let typed = prop_oneof![3 => prop::sample::select(likely), 1 => interesting_string().prop_map(Value::from)];
        return prop_oneof![4 => typed, 1 => json_value()].boxed();
    }
    let typed: BoxedStrategy<Value> = match schema["type"].as_str() {
        Some("integer") => {
            let min = schema["minimum"].as_i64().unwrap();
            let max = schema["maximum"].as_i64().unwrap();
            prop_oneof![4 => min..=max, 1 => Just(min - 1), 1 => Just(max + 1)]
                .prop_map(Value::from)
                .boxed()
        }
        _ if schema["enum"].is_array() => {
            let options: Vec<Value> = schema["enum"].as_array().unwrap().clone();
            prop::sample::select(options).boxed()
        }
        _ if schema["pattern"] == "^ev-[0-9]{12}$" => {
            prop::sample::select(vec![LATEST_EVIDENCE, "ev-000000000001", "ev-1"])
                .prop_map(Value::from)
                .boxed()
        }
        _ if schema["pattern"].is_string() => prop::sample::select(vec![
            "0x1000",
            "0x1100",
            "0x2000",
            "0x4000",
            "0x1a000",
            "0x0",
            "0x0001040",
            "0X10",
            "0x1ffffffffffffffff",
        ])
        .prop_map(Value::from)
        .boxed(),
        _ => prop_oneof![
            3 => interesting_string(),
            1 => Just("/bin/ls".to_owned()),
        ]
        .prop_map(Value::from)
        .boxed(),
    };
    prop_oneof![4 => typed, 1 => json_value()].boxed()
}

/// A tool name and arguments: its required parameters and a subset of its optional ones, with
/// mostly fitting values, sometimes plus other names.
fn tool_and_arguments() -> impl Strategy<Value = (&'static str, Map<String, Value>)> {
    prop::sample::select(tool_names()).prop_flat_map(|tool| {
        let (_, tools) = support::tools::closed();
        let schema = tools.definition(tool).unwrap().input_schema().clone();
        let properties = schema["properties"].as_object().unwrap().clone();
        let required: Vec<String> = schema["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|name| name.as_str().unwrap().to_owned())
            .collect();
        let optional: Vec<String> = properties
            .keys()
            .filter(|name| !required.contains(name))
            .cloned()
            .collect();
        let count = optional.len();
        let own = prop::sample::subsequence(optional, 0..=count).prop_flat_map(move |chosen| {
            let names: Vec<String> = required.iter().chain(&chosen).cloned().collect();
            let values: Vec<BoxedStrategy<Value>> = names
                .iter()
                .map(|name| value_for(name, &properties[name]))
                .collect();
            (Just(names), values)
        });
        let extra = prop_oneof![4 => Just(Map::new()), 1 => argument_map()];
        (Just(tool), own, extra).prop_map(|(tool, (names, values), extra)| {
            let mut arguments = extra;
            arguments.extend(names.into_iter().zip(values));
            (tool, arguments)
        })
    })
}

#[derive(Clone, Copy, Debug)]
enum Opened {
    Nothing,
    Fake,
    Catalog,
    Binary,
}

fn tools_for(opened: Opened) -> ToolBox {
    let session = Arc::new(Session::new());
    let provider: Option<Arc<dyn Provider>> = match opened {
        Opened::Nothing => None,
        Opened::Fake => Some(Arc::new(app_and_lib("fake"))),
        Opened::Catalog => Some(Arc::new(
            CatalogProvider::from_json(catalog_json().to_string().as_bytes()).unwrap(),
        )),
        Opened::Binary => {
            let path = stripped_system_binary().unwrap_or_else(this_executable);
            Some(Arc::new(NativeProvider::open(&path).unwrap()))
        }
    };
    if let Some(provider) = provider {
        session.open_providers("target", vec![provider]).unwrap();
        // One record, so Evidence IDs in the arguments may exist.
        let tools = ToolBox::new(Arc::clone(&session));
        let listed = tools.call("list_documents", &Map::new()).unwrap();
        assert!(!listed.is_error());
    }
    ToolBox::new(session)
}

fn input_validator(tools: &ToolBox, name: &str) -> Arc<jsonschema::Validator> {
    support::schema::validator(&format!("input/{name}"), || {
        jsonschema::draft202012::new(tools.definition(name).unwrap().input_schema()).unwrap()
    })
}

fn tool_names() -> Vec<&'static str> {
    let (_, tools) = support::tools::closed();
    tools.definitions().iter().map(|d| d.name()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn call_is_total_and_consistent_with_the_schemas_and_the_ledger(
        opened in prop::sample::select(vec![Opened::Nothing, Opened::Fake, Opened::Catalog, Opened::Binary]),
        (tool, arguments) in tool_and_arguments(),
    ) {
        let tools = tools_for(opened);
        let session = tools.session().unwrap();
        let before = session.evidence_ids();
        let latest = before.last().cloned().unwrap_or_default();
        let arguments: Map<String, Value> = arguments
            .into_iter()
            .map(|(key, value)| match value {
                Value::String(text) if text == LATEST_EVIDENCE => (key, json!(latest)),
                other => (key, other),
            })
            .collect();
        let outcome = tools.call(tool, &arguments).unwrap();
        check_outcome(&tools, tool, &outcome);

        let fits_schema = input_validator(&tools, tool).is_valid(&Value::Object(arguments.clone()));
        if !fits_schema {
            prop_assert!(outcome.is_error(), "{tool} accepted {arguments:?}");
        }
        if !outcome.is_error() {
            prop_assert!(fits_schema);
        }

        let kind = tools.definition(tool).unwrap().kind();
        let after = session.evidence_ids();
        match kind {
            ToolKind::Observation if !outcome.is_error() => {
                prop_assert_eq!(after.len(), before.len() + 1);
                prop_assert_eq!(after.last().map(String::as_str), outcome.evidence_id());
            }
            ToolKind::SessionChange => {}
            _ => prop_assert_eq!(after, before),
        }
    }

    #[test]
    fn only_unknown_names_are_errs(name in ".{0,24}", arguments in argument_map()) {
        let tools = tools_for(Opened::Fake);
        let known = tools.definition(&name).is_some();
        let result = tools.call(&name, &arguments);
        prop_assert_eq!(result.is_ok(), known);
        if let Err(error) = result {
            prop_assert!(error.name.chars().count() <= 64);
            prop_assert!(error.to_string().starts_with("unknown tool "));
        }
    }
}
