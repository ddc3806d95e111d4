//! The published schemas are valid draft 2020-12 schemas, and invalid inventory pages are
//! rejected with a message naming the field.

use std::io::Cursor;

use crate::support::inventory::{app_v1, zip_of};
use rea::inventory::{Inventory, InventoryLimits, PageSize, parse_page};
use rea::schemas::PUBLISHED;
use serde_json::{Value, json};

fn snapshot(name: &str, text: &str) {
    crate::support::snapshots::settings().bind(|| {
        insta::assert_snapshot!(format!("inventory_schema__{name}"), text);
    });
}

#[test]
fn published_schemas_are_valid_against_the_metaschema() {
    for (name, text) in PUBLISHED {
        let schema: Value = serde_json::from_str(text).unwrap();
        assert_eq!(
            schema["$schema"], "https://json-schema.org/draft/2020-12/schema",
            "{name}"
        );
        jsonschema::draft202012::meta::validate(&schema)
            .unwrap_or_else(|error| panic!("{name} breaks the metaschema: {error}"));
        // The files in the repository are the ones compiled in.
        let on_disk =
            std::fs::read_to_string(crate::root().join(format!("src/schemas/{name}"))).unwrap();
        assert_eq!(on_disk, text, "{name}");
    }
}

fn valid_page() -> Value {
    let inventory = Inventory::of_zip_reader(
        Cursor::new(zip_of(&app_v1())),
        "app.zip",
        &InventoryLimits::default(),
    )
    .unwrap();
    serde_json::to_value(inventory.page(0, PageSize::new(3).unwrap()).unwrap()).unwrap()
}

#[test]
fn invalid_pages_name_the_field() {
    type Mutation = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Mutation)> = vec![
        ("not an object", Box::new(|page| *page = json!([]))),
        (
            "wrong schema",
            Box::new(|page| page["schema"] = json!("rea.inventory")),
        ),
        ("version 2", Box::new(|page| page["version"] = json!(2))),
        (
            "missing manifest",
            Box::new(|page| {
                page.as_object_mut().unwrap().remove("manifest_id");
            }),
        ),
        (
            "bad manifest",
            Box::new(|page| page["manifest_id"] = json!("man-XYZ")),
        ),
        (
            "root kind",
            Box::new(|page| page["root"]["kind"] = json!("tarball")),
        ),
        ("extra field", Box::new(|page| page["extra"] = json!(true))),
        (
            "negative size",
            Box::new(|page| page["occurrences"][0]["size"] = json!(-1)),
        ),
        (
            "absolute path",
            Box::new(|page| page["occurrences"][1]["path"] = json!("/etc/passwd")),
        ),
        (
            "parent path",
            Box::new(|page| page["occurrences"][1]["path"] = json!("a/../b")),
        ),
        (
            "short digest",
            Box::new(|page| page["occurrences"][2]["sha256"] = json!("abc")),
        ),
        (
            "unknown format",
            Box::new(|page| page["occurrences"][0]["format"] = json!("coff")),
        ),
        (
            "reason",
            Box::new(|page| page["rejected"] = json!([{"path": "x", "reason": "because"}])),
        ),
        (
            "index past count",
            Box::new(|page| page["page"]["index"] = json!(7)),
        ),
        (
            "fractional index",
            Box::new(|page| page["page"]["index"] = json!(0.5)),
        ),
        (
            "too many for size",
            Box::new(|page| page["page"]["size"] = json!(2)),
        ),
        (
            "unsorted",
            Box::new(|page| {
                let occurrences = page["occurrences"].as_array_mut().unwrap();
                occurrences.swap(0, 1);
            }),
        ),
        (
            "forged occurrence id",
            Box::new(|page| {
                page["occurrences"][0]["occurrence_id"] = json!(format!("occ-{}", "0".repeat(32)));
            }),
        ),
        (
            "huge value quoted",
            Box::new(|page| page["root"]["path"] = json!(7u64.to_string().repeat(5000))),
        ),
    ];
    let mut lines = Vec::new();
    for (label, mutate) in cases {
        let mut page = valid_page();
        assert!(parse_page(&page).is_ok());
        mutate(&mut page);
        let error = parse_page(&page).expect_err(label);
        // The pointer always leads to a value in the document.
        assert!(page.pointer(&error.violation.pointer).is_some(), "{label}");
        lines.push(format!("{label}: {error}"));
    }
    snapshot("invalid_page_messages", &lines.join("\n"));
}

#[test]
fn integers_written_with_a_zero_fraction() {
    let mut page = valid_page();
    page["version"] = json!(1.0);
    // JSON Schema counts 1.0 as the integer 1; the typed reader does not, and says so.
    let error = parse_page(&page).unwrap_err();
    assert_eq!(error.violation.pointer, "");
    snapshot("fractional_version", &error.to_string());
}
