//! The catalog provider: its schema, loading, validation messages and operations.

use proptest::prelude::*;
use rea::providers::catalog::{CATALOG_SCHEMA, CatalogError, CatalogProvider};
use rea::providers::{LoadError, OpenError, load_path, open_path};
use rea::session::{
    Address, NameMatch, Operation, ProcedureQuery, ProcedureSource, Provider, ProviderError,
    Session,
};
use serde_json::{Value, json};

fn catalog(documents: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"schema": "rea.catalog", "version": 1, "documents": documents}))
        .unwrap()
}

fn load(documents: Value) -> Result<CatalogProvider, CatalogError> {
    CatalogProvider::from_json(&catalog(documents))
}

fn example() -> CatalogProvider {
    load(json!([
        {
            "name": "app",
            "format": "elf",
            "architecture": "x86_64",
            "segments": [
                {"name": ".text", "address": "0x1000", "size": 4096, "permissions": "r-x"},
                {"name": ".plt", "address": "0x800", "size": 256}
            ],
            "procedures": [
                {"address": "0x1040", "name": "helper", "size": 32},
                {"address": "0x00001000", "name": "main"},
                {"address": "0x1100", "name": "foo::bar(int)", "raw_name": "_ZN3foo3barEi"},
                {"address": "0x1200"},
                {"address": "0x1300", "name": "helper", "segment": ".plt"}
            ]
        },
        {"name": "lib", "procedures": []}
    ]))
    .unwrap()
}

fn snapshot(name: &str, text: String) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(name, text);
    });
}

#[test]
fn the_schema_is_a_valid_2020_12_schema() {
    let schema: Value = serde_json::from_str(CATALOG_SCHEMA).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    jsonschema::meta::validate(&schema).unwrap();
    let file =
        std::fs::read_to_string(crate::root().join("src/providers/catalog/catalog-v1.schema.json"))
            .unwrap();
    assert_eq!(file, CATALOG_SCHEMA);
}

#[test]
fn documents_and_procedures_are_listed_in_address_order() {
    let provider = example();
    let documents = provider.list_documents().unwrap();
    assert_eq!(documents[0].name, "app");
    assert_eq!(documents[0].format.as_deref(), Some("elf"));
    assert_eq!(documents[1].name, "lib");
    let page = provider.list_procedures("app", None, 500).unwrap();
    let listed: Vec<(&str, Option<&str>)> = page
        .entries
        .iter()
        .map(|e| (e.address.as_str(), e.name.as_deref()))
        .collect();
    assert_eq!(
        listed,
        [
            ("0x1000", Some("main")),
            ("0x1040", Some("helper")),
            ("0x1100", Some("foo::bar(int)")),
            ("0x1200", None),
            ("0x1300", Some("helper")),
        ]
    );
    assert_eq!(page.next_cursor, None);
    assert!(
        provider
            .list_procedures("lib", None, 10)
            .unwrap()
            .entries
            .is_empty()
    );
}

#[test]
fn pages_follow_the_cursor() {
    let provider = example();
    let first = provider.list_procedures("app", None, 2).unwrap();
    assert_eq!(first.entries.len(), 2);
    let second = provider
        .list_procedures("app", first.next_cursor.as_deref(), 2)
        .unwrap();
    assert_eq!(second.entries[0].address, "0x1100");
    let third = provider
        .list_procedures("app", second.next_cursor.as_deref(), 2)
        .unwrap();
    assert_eq!(third.entries.len(), 1);
    assert_eq!(third.next_cursor, None);
    for bad in ["", "at:0", "at:99", "at:01", "nope"] {
        assert!(matches!(
            provider.list_procedures("app", Some(bad), 2),
            Err(ProviderError::InvalidCursor { .. })
        ));
    }
    assert!(matches!(
        provider.list_procedures("app", None, 0),
        Err(ProviderError::InvalidArgument {
            argument: "limit",
            ..
        })
    ));
}

#[test]
fn procedure_info_search_and_segments() {
    let provider = example();
    let main = provider
        .procedure_info("app", Address::new(0x1000))
        .unwrap();
    assert_eq!(main.name.unwrap().name, "main");
    assert_eq!(main.segment.as_deref(), Some(".text"));
    assert_eq!(main.sources, [ProcedureSource::Catalog]);
    let mangled = provider
        .procedure_info("app", Address::new(0x1100))
        .unwrap();
    assert_eq!(mangled.name.unwrap().raw_name, "_ZN3foo3barEi");
    let placed = provider
        .procedure_info("app", Address::new(0x1300))
        .unwrap();
    assert_eq!(placed.segment.as_deref(), Some(".plt"));
    assert!(matches!(
        provider.procedure_info("app", Address::new(0x1001)),
        Err(ProviderError::NoProcedure { .. })
    ));

    let exact = provider
        .search_procedures(
            "app",
            &ProcedureQuery::new("_ZN3foo3barEi", NameMatch::Exact),
        )
        .unwrap();
    assert_eq!(exact.procedures.len(), 1);
    let helpers = provider
        .search_procedures("app", &ProcedureQuery::new("HELP", NameMatch::Contains))
        .unwrap();
    let addresses: Vec<Address> = helpers.procedures.iter().map(|p| p.address).collect();
    assert_eq!(addresses, [Address::new(0x1040), Address::new(0x1300)]);

    let segments = provider.list_segments("app").unwrap();
    assert_eq!(segments[0].name, ".plt");
    assert_eq!(segments[1].permissions.to_string(), "r-x");
    assert!(!provider.supports(Operation::ReadBytes));
    assert!(!provider.supports(Operation::SearchStrings));
    assert!(matches!(
        provider.read_bytes(
            "app",
            Address::new(0x1000),
            rea::session::ReadLength::new(4).unwrap()
        ),
        Err(ProviderError::Unsupported(Operation::ReadBytes))
    ));
}

#[test]
fn invalid_catalogs_name_the_offending_field() {
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("not json", b"{\"schema\": ".to_vec()),
        ("wrong schema", serde_json::to_vec(&json!({"schema": "other", "version": 1, "documents": [{"name": "a", "procedures": []}]})).unwrap()),
        ("wrong version", serde_json::to_vec(&json!({"schema": "rea.catalog", "version": 2, "documents": [{"name": "a", "procedures": []}]})).unwrap()),
        ("no documents", catalog(json!([]))),
        ("extra field", serde_json::to_vec(&json!({"schema": "rea.catalog", "version": 1, "documents": [{"name": "a", "procedures": []}], "extra": true})).unwrap()),
        ("missing name", catalog(json!([{"procedures": []}]))),
        ("empty name", catalog(json!([{"name": "", "procedures": []}]))),
        ("uppercase address", catalog(json!([{"name": "a", "procedures": [{"address": "0x1A"}]}]))),
        ("address without 0x", catalog(json!([{"name": "a", "procedures": [{"address": "401000"}]}]))),
        ("address too long", catalog(json!([{"name": "a", "procedures": [{"address": "0x00000000000000001"}]}]))),
        ("address not a string", catalog(json!([{"name": "a", "procedures": [{"address": 4096}]}]))),
        ("zero size", catalog(json!([{"name": "a", "procedures": [{"address": "0x1", "size": 0}]}]))),
        ("huge size", br#"{"schema":"rea.catalog","version":1,"documents":[{"name":"a","procedures":[{"address":"0x1","size":18446744073709551616}]}]}"#.to_vec()),
        ("fractional size", catalog(json!([{"name": "a", "procedures": [{"address": "0x1", "size": 1.5}]}]))),
        ("bad permissions", catalog(json!([{"name": "a", "segments": [{"name": "s", "address": "0x0", "size": 1, "permissions": "rwz"}], "procedures": []}]))),
        ("duplicate document", catalog(json!([{"name": "a", "procedures": []}, {"name": "a", "procedures": []}]))),
        ("duplicate address", catalog(json!([{"name": "a", "procedures": [{"address": "0x10"}, {"address": "0x010"}]}]))),
        ("duplicate segment", catalog(json!([{"name": "a", "segments": [{"name": "s", "address": "0x0", "size": 1}, {"name": "s", "address": "0x8", "size": 1}], "procedures": []}]))),
        ("undeclared segment", catalog(json!([{"name": "a", "procedures": [{"address": "0x10", "segment": ".text"}]}]))),
        ("over-long name", catalog(json!([{"name": "a", "procedures": [{"address": "0x10", "name": "n".repeat(4097)}]}]))),
    ];
    let mut messages = String::new();
    for (case, text) in cases {
        let error = CatalogProvider::from_json(&text)
            .err()
            .unwrap_or_else(|| panic!("{case} was accepted"));
        let message = error.to_string();
        assert!(
            !matches!(error, CatalogError::BrokenSchema { .. }),
            "{case}: {message}"
        );
        messages.push_str(&format!("{case}: {message}\n"));
    }
    snapshot("providers_catalog__error_messages", messages);
}

#[test]
fn whole_numbers_written_as_floats_are_sizes() {
    let provider =
        load(json!([{"name": "a", "procedures": [{"address": "0x10", "size": 16.0}]}])).unwrap();
    assert_eq!(
        provider
            .procedure_info("a", Address::new(0x10))
            .unwrap()
            .size,
        Some(16)
    );
}

#[test]
fn files_are_loaded_as_catalogs_by_content() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("export.json");
    let mut text = b"\xef\xbb\xbf  \n".to_vec();
    text.extend(catalog(
        json!([{"name": "app", "procedures": [{"address": "0x10", "name": "f"}]}]),
    ));
    std::fs::write(&path, &text).unwrap();
    assert_eq!(load_path(&path).unwrap().id(), "catalog");

    let session = Session::new();
    let opened = open_path(&session, &path).unwrap();
    assert_eq!(opened.providers, ["catalog"]);
    assert_eq!(opened.current_document.as_deref(), Some("app"));

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, b"{\"schema\": \"rea.catalog\"}").unwrap();
    assert!(matches!(load_path(&broken), Err(LoadError::Catalog { .. })));
    let error = open_path(&session, &broken).unwrap_err();
    assert!(matches!(error, OpenError::Load(_)));
    assert!(error.to_string().contains("broken.json"));
    let missing = dir.path().join("missing.json");
    assert!(matches!(load_path(&missing), Err(LoadError::File(_))));
}

fn catalog_strategy() -> impl Strategy<Value = Vec<(u64, Option<String>)>> {
    proptest::collection::btree_map(any::<u64>(), proptest::option::of("[a-z_]{1,8}"), 0..80)
        .prop_map(|map| map.into_iter().collect())
}

proptest! {
    /// Every procedure of a valid catalog is listed once, in address order, with its canonical
    /// address, however the addresses are padded and the entries ordered.
    #[test]
    fn valid_catalogs_list_exactly_their_procedures(
        procedures in catalog_strategy(),
        padding in 0usize..4,
        reverse in any::<bool>(),
    ) {
        let mut items: Vec<Value> = procedures
            .iter()
            .map(|(address, name)| {
                let digits = format!("{address:x}");
                let padded = format!("0x{}{digits}", "0".repeat(padding.min(16 - digits.len())));
                match name {
                    Some(name) => json!({"address": padded, "name": name}),
                    None => json!({"address": padded}),
                }
            })
            .collect();
        if reverse {
            items.reverse();
        }
        let provider = load(json!([{"name": "doc", "procedures": items}])).unwrap();
        let mut listed = Vec::new();
        let mut cursor = None;
        loop {
            let page = provider.list_procedures("doc", cursor.as_deref(), 7).unwrap();
            prop_assert!(page.entries.len() <= 7);
            listed.extend(page.entries);
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        let expected: Vec<(String, Option<String>)> = procedures
            .iter()
            .map(|(address, name)| (format!("{address:#x}"), name.clone()))
            .collect();
        let got: Vec<(String, Option<String>)> = listed.into_iter().map(|e| (e.address, e.name)).collect();
        prop_assert_eq!(got, expected);
    }
}

/// A field value: valid ones and every kind of invalid one the schema has a message for.
fn field_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!("0x10")),
        Just(json!("0x20")),
        Just(json!("0X1")),
        Just(json!("f")),
        Just(json!("")),
        Just(json!("r-x")),
        Just(json!(0)),
        Just(json!(16)),
        Just(json!(2.0)),
        Just(json!(1.5)),
        Just(json!(-1)),
        Just(json!(1e30)),
        Just(Value::Null),
        Just(json!(true)),
        Just(json!([])),
        Just(json!({"a": 1})),
    ]
}

/// An object with some of `keys` (and sometimes an unknown one), or now and then not an object.
fn item(keys: &'static [&'static str]) -> impl Strategy<Value = Value> {
    let fields = proptest::collection::vec((0..keys.len() + 1, field_value()), 0..5).prop_map(
        move |fields| {
            let mut map = serde_json::Map::new();
            for (key, value) in fields {
                map.insert(keys.get(key).copied().unwrap_or("extra").to_owned(), value);
            }
            Value::Object(map)
        },
    );
    prop_oneof![8 => fields, 1 => field_value()]
}

fn any_catalog() -> impl Strategy<Value = Value> {
    let procedures = proptest::collection::vec(
        item(&["address", "address", "name", "raw_name", "size", "segment"]),
        0..5,
    );
    let segments = proptest::collection::vec(
        item(&["name", "name", "address", "size", "permissions"]),
        0..3,
    );
    let document = (
        item(&["name", "format", "architecture"]),
        proptest::option::of(segments),
        proptest::option::of(procedures),
    )
        .prop_map(|(head, segments, procedures)| {
            let mut document = head;
            if let Some(map) = document.as_object_mut() {
                if let Some(segments) = segments {
                    map.insert("segments".to_owned(), Value::Array(segments));
                }
                if let Some(procedures) = procedures {
                    map.insert("procedures".to_owned(), Value::Array(procedures));
                }
            }
            document
        });
    (
        proptest::collection::vec(document, 0..3),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(documents, right_version, extra)| {
            let mut root = json!({
                "schema": "rea.catalog",
                "version": if right_version { 1 } else { 2 },
                "documents": documents,
            });
            if extra {
                root["extra"] = json!([1, 2]);
            }
            root
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The one-pass reader reports exactly the first error the schema finds in the whole
    /// catalog (the file is never held as a `Value`, but its verdict is the schema's).
    #[test]
    fn streamed_validation_reports_the_schemas_first_error(catalog in any_catalog()) {
        let schema: Value = serde_json::from_str(CATALOG_SCHEMA).unwrap();
        let validator = jsonschema::draft202012::new(&schema).unwrap();
        let text = serde_json::to_vec(&catalog).unwrap();
        let outcome = CatalogProvider::from_json(&text);
        match validator.iter_errors(&catalog).next() {
            Some(error) => {
                let pointer = error.instance_path().as_str().to_owned();
                let pointer = if pointer.is_empty() { "/".to_owned() } else { pointer };
                let mut message = error.to_string();
                if let Some((cut, _)) = message.char_indices().nth(200) {
                    message.truncate(cut);
                    message.push_str("...");
                }
                let expected = format!("catalog field {pointer} is invalid: {message}");
                prop_assert_eq!(outcome.err().map(|e| e.to_string()), Some(expected));
            }
            None => {
                if let Err(error) = outcome {
                    let message = error.to_string();
                    prop_assert!(
                        ["repeats", "is not declared", "is not an integer from"]
                            .iter()
                            .any(|rule| message.contains(rule)),
                        "a valid catalog refused: {}", message
                    );
                }
            }
        }
    }
}
