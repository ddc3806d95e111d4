//! Static-analysis tools: list_procedures, procedure_info, search_procedures, list_segments,
//! search_strings and read_bytes on a catalog, the fake provider and real binaries (a stripped
//! system executable such as `/bin/ls`, the system libc, and this unstripped test executable;
//! the system ones are expected on the Linux machines the suite runs on).

use std::path::Path;

use crate::support::tools::{
    Files, failure, real_binaries, stripped_system_binary, success, system_libc, this_executable,
    with_binary, with_catalog, with_fake,
};
use rea::tools::ToolBox;
use serde_json::{Map, Value, json};

/// Every page of `list_procedures` from the first, following `next_cursor`.
fn all_pages(tools: &ToolBox, limit: u64) -> Vec<Map<String, Value>> {
    let mut pages = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut arguments = json!({"limit": limit});
        if !cursor.is_null() {
            arguments["cursor"] = cursor.clone();
        }
        let page = success(tools, "list_procedures", arguments);
        cursor = page["next_cursor"].clone();
        pages.push(page);
        if cursor.is_null() {
            return pages;
        }
    }
}

fn listed(pages: &[Map<String, Value>]) -> Vec<Value> {
    pages
        .iter()
        .flat_map(|page| page["procedures"].as_array().unwrap().clone())
        .collect()
}

/// A document of 600 procedures named with 900 characters each (a C++ or Rust binary's
/// names run that long): the default page of 500 would be about 470 KB of JSON, more than one
/// Evidence record holds.
fn long_named_catalog(dir: &Path) -> String {
    let procedures: Vec<Value> = (0..600u64)
        .map(|index| {
            let name = format!("{index:04}{}", "n".repeat(896));
            json!({"address": format!("{:#x}", 0x10_000 + index * 16), "name": name})
        })
        .collect();
    let catalog = json!({"schema": "rea.catalog", "version": 1, "producer": "tools-tests",
        "documents": [{"name": "long", "procedures": procedures}]});
    let path = dir.join("long.json");
    std::fs::write(&path, catalog.to_string()).unwrap();
    path.display().to_string()
}

#[test]
fn a_page_of_long_names_is_cut_to_what_one_record_holds_and_the_cursor_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (session, tools) = crate::support::tools::closed();
    let path = long_named_catalog(dir.path());
    success(&tools, "open_binary", json!({"path": path}));
    for asked in [json!({}), json!({"limit": 500})] {
        let page = success(&tools, "list_procedures", asked.clone());
        let entries = page["procedures"].as_array().unwrap();
        // Halved from 500 until it fits: 250 entries of about 930 bytes.
        assert_eq!(entries.len(), 250, "{asked}");
        assert!(!page["next_cursor"].is_null(), "{asked}");
        // The page was recorded as Evidence, with the limit it was cut to.
        let evidence = page["evidence_id"].as_str().unwrap();
        let record = session.evidence(evidence).unwrap();
        assert_eq!(record.arguments["limit"], 250, "{asked}");
    }
    let names: Vec<String> = listed(&all_pages(&tools, 500))
        .iter()
        .map(|entry| entry["name"].as_str().unwrap()[..4].to_owned())
        .collect();
    let expected: Vec<String> = (0..600).map(|index| format!("{index:04}")).collect();
    assert_eq!(names, expected);
    // A tool without a cursor is not cut (the rest could not be asked for): a search of as
    // many says how to ask for less.
    let refused = failure(
        &tools,
        "search_procedures",
        json!({"query": "nnnn", "limit": 500}),
    );
    assert!(refused.contains("ask for less at a time"), "{refused}");
}

#[test]
fn list_procedures_pages_a_catalog_document() {
    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    let page = success(&tools, "list_procedures", json!({}));
    assert_eq!(page["document"], "app");
    assert_eq!(
        page["procedures"],
        json!([
            {"address": "0x1000", "name": "main"},
            {"address": "0x1040", "name": "helper"},
            {"address": "0x1100", "name": "foo::bar(int)"},
            {"address": "0x1200", "name": null},
            {"address": "0x1300", "name": "helper"}
        ])
    );
    assert_eq!(page["next_cursor"], json!(null));
    let pages = all_pages(&tools, 2);
    assert_eq!(pages.len(), 3);
    assert_eq!(
        listed(&pages),
        page["procedures"].as_array().unwrap().clone()
    );
    let lib = success(&tools, "list_procedures", json!({"document": "lib"}));
    assert_eq!(lib["document"], "lib");
    assert_eq!(
        lib["procedures"],
        json!([{"address": "0x2000", "name": "init"}])
    );
}

#[test]
fn list_procedures_pages_the_fake_provider_with_its_own_cursors() {
    let (_, tools) = with_fake();
    let first = success(&tools, "list_procedures", json!({"limit": 3}));
    assert_eq!(first["next_cursor"], "at:3");
    let second = success(
        &tools,
        "list_procedures",
        json!({"limit": 3, "cursor": "at:3"}),
    );
    assert_eq!(
        second["procedures"],
        json!([{"address": "0x1300", "name": null}])
    );
    assert_eq!(second["next_cursor"], json!(null));
}

#[test]
fn list_procedures_pages_real_binaries_in_address_order() {
    for path in real_binaries() {
        let (_, tools) = with_binary(&path);
        let first = success(&tools, "list_procedures", json!({}));
        let entries = first["procedures"].as_array().unwrap();
        assert!(!entries.is_empty(), "{}", path.display());
        assert!(entries.len() <= 500);
        let addresses: Vec<u64> = entries
            .iter()
            .map(|e| u64::from_str_radix(&e["address"].as_str().unwrap()[2..], 16).unwrap())
            .collect();
        assert!(
            addresses.windows(2).all(|w| w[0] < w[1]),
            "{}",
            path.display()
        );
        // A smaller page is a prefix of the default one.
        let small = success(&tools, "list_procedures", json!({"limit": 7}));
        assert_eq!(small["procedures"].as_array().unwrap()[..], entries[..7]);
    }
}

#[test]
fn a_stripped_binary_lists_unnamed_procedures_from_its_unwind_table() {
    let path = stripped_system_binary().expect("a stripped system binary such as /bin/ls");
    let (_, tools) = with_binary(&path);
    let first = success(&tools, "list_procedures", json!({"limit": 50}));
    let unnamed = first["procedures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"].is_null())
        .expect("a stripped binary has unnamed procedures");
    let info = success(
        &tools,
        "procedure_info",
        json!({"procedure": unnamed["address"]}),
    );
    assert_eq!(info["name"], json!(null));
    assert_eq!(info["aliases"], json!([]));
    assert_eq!(info["address"], unnamed["address"]);
    assert!(
        info["sources"]
            .as_array()
            .unwrap()
            .contains(&json!("unwind_table")),
        "{info:?}"
    );
}

#[test]
fn procedure_info_takes_an_address_or_a_unique_name() {
    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    let main = success(&tools, "procedure_info", json!({"procedure": "main"}));
    assert_eq!(
        main,
        *json!({
            "document": "app",
            "address": "0x1000",
            "name": {"name": "main", "raw_name": "main"},
            "aliases": [],
            "label": null,
            "size": 64,
            "segment": ".text",
            "sources": ["catalog"],
            "evidence_id": main["evidence_id"],
        })
        .as_object()
        .unwrap()
    );
    let by_address = success(&tools, "procedure_info", json!({"procedure": "0x1100"}));
    let by_raw_name = success(
        &tools,
        "procedure_info",
        json!({"procedure": "_ZN3foo3barEi"}),
    );
    let by_display_name = success(
        &tools,
        "procedure_info",
        json!({"procedure": "foo::bar(int)"}),
    );
    for found in [&by_address, &by_raw_name, &by_display_name] {
        assert_eq!(found["address"], "0x1100");
        assert_eq!(
            found["name"],
            json!({"name": "foo::bar(int)", "raw_name": "_ZN3foo3barEi"})
        );
    }
    // Leading zeros are accepted; the result is canonical.
    let padded = success(&tools, "procedure_info", json!({"procedure": "0x00001200"}));
    assert_eq!(padded["address"], "0x1200");
    assert_eq!(padded["name"], json!(null));
    let other = success(
        &tools,
        "procedure_info",
        json!({"procedure": "init", "document": "lib"}),
    );
    assert_eq!(other["document"], "lib");
    assert_eq!(other["address"], "0x2000");
}

#[test]
fn procedure_info_finds_a_dynamic_symbol_of_libc_by_name_with_its_aliases() {
    let libc = system_libc().expect("a system C library");
    let (_, tools) = with_binary(&libc);
    let malloc = success(&tools, "procedure_info", json!({"procedure": "malloc"}));
    let names: Vec<&str> = std::iter::once(&malloc["name"])
        .chain(malloc["aliases"].as_array().unwrap())
        .filter_map(|n| n["name"].as_str())
        .collect();
    assert!(names.contains(&"malloc"), "{malloc:?}");
    let sources = malloc["sources"].as_array().unwrap();
    assert!(sources.contains(&json!("dynamic_symbols")), "{malloc:?}");
    // The same procedure by address.
    let again = success(
        &tools,
        "procedure_info",
        json!({"procedure": malloc["address"]}),
    );
    assert_eq!(again["name"], malloc["name"]);
}

#[test]
fn list_procedures_lists_the_aliases_procedure_info_gives_on_libc() {
    let libc = system_libc().expect("a system C library");
    let (_, tools) = with_binary(&libc);
    let info = success(&tools, "procedure_info", json!({"procedure": "memcmp"}));
    let mut known: Vec<&str> = Vec::new();
    for name in std::iter::once(&info["name"]).chain(info["aliases"].as_array().unwrap()) {
        let name = name["name"].as_str().unwrap();
        if !known.contains(&name) {
            known.push(name);
        }
    }
    assert!(known.len() > 1, "memcmp has aliases (bcmp): {info:?}");
    let pages = all_pages(&tools, 500);
    let procedures = listed(&pages);
    let entry = procedures
        .iter()
        .find(|entry| entry["address"] == info["address"])
        .unwrap();
    let mut names = vec![entry["name"].as_str().unwrap()];
    names.extend(
        entry["aliases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap()),
    );
    assert_eq!(names, known, "{entry:?}");
    // Entries without other names leave the field out.
    assert!(
        procedures
            .iter()
            .filter(|entry| entry.get("aliases").is_none())
            .count()
            > 0
    );
    assert!(
        procedures
            .iter()
            .all(|entry| entry.get("aliases") != Some(&json!([])))
    );
}

#[test]
fn search_procedures_matches_contained_or_exact_names() {
    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    let found = success(&tools, "search_procedures", json!({"query": "HELP"}));
    let addresses: Vec<&Value> = found["procedures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| &p["address"])
        .collect();
    assert_eq!(addresses, [&json!("0x1040"), &json!("0x1300")]);
    assert_eq!(found["truncated"], false);
    assert_eq!(found["document"], "app");
    let exact = success(
        &tools,
        "search_procedures",
        json!({"query": "HELP", "match": "exact"}),
    );
    assert_eq!(exact["procedures"], json!([]));
    let raw = success(
        &tools,
        "search_procedures",
        json!({"query": "_ZN3foo3barEi", "match": "exact"}),
    );
    assert_eq!(raw["procedures"][0]["address"], "0x1100");
    let first = success(
        &tools,
        "search_procedures",
        json!({"query": "helper", "limit": 1}),
    );
    assert_eq!(first["procedures"].as_array().unwrap().len(), 1);
    assert_eq!(first["truncated"], true);
}

#[test]
fn search_procedures_on_the_fake_and_real_binaries() {
    let (_, tools) = with_fake();
    let found = success(&tools, "search_procedures", json!({"query": "dup"}));
    assert_eq!(found["procedures"].as_array().unwrap().len(), 2);
    let executable = this_executable();
    let (_, tools) = with_binary(&executable);
    let found = success(
        &tools,
        "search_procedures",
        json!({"query": "support::tools::with_binary"}),
    );
    let procedures = found["procedures"].as_array().unwrap();
    assert!(
        !procedures.is_empty(),
        "the test helpers are in the symbol table"
    );
    for procedure in procedures {
        assert!(
            procedure["sources"]
                .as_array()
                .unwrap()
                .contains(&json!("symbol_table"))
        );
    }
    let (_, tools) = with_binary(&system_libc().expect("a system C library"));
    let found = success(
        &tools,
        "search_procedures",
        json!({"query": "malloc", "limit": 500}),
    );
    assert!(found["procedures"].as_array().unwrap().len() > 1);
}

#[test]
fn list_segments_on_a_catalog_and_real_binaries() {
    let files = Files::new();
    let (_, tools) = with_catalog(&files);
    let listed = success(&tools, "list_segments", json!({}));
    assert_eq!(
        listed["segments"],
        json!([
            {"name": ".text", "address": "0x1000", "size": 4096, "file_offset": null, "file_size": 0, "permissions": "r-x"},
            {"name": ".data", "address": "0x3000", "size": 256, "file_offset": null, "file_size": 0, "permissions": "rw-"}
        ])
    );
    for path in real_binaries() {
        let (_, tools) = with_binary(&path);
        let listed = success(&tools, "list_segments", json!({}));
        let text = text_segment(&listed);
        assert_eq!(text["permissions"], "r-x", "{}", path.display());
        assert!(text["file_offset"].is_u64());
    }
}

fn text_segment(listed: &Map<String, Value>) -> Value {
    listed["segments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == ".text" || s["name"] == "__TEXT,__text")
        .cloned()
        .expect("a text segment")
}

#[test]
fn search_strings_finds_strings_in_real_binaries() {
    for path in real_binaries() {
        let (_, tools) = with_binary(&path);
        let all = success(&tools, "search_strings", json!({"limit": 20}));
        let strings = all["strings"].as_array().unwrap();
        assert_eq!(strings.len(), 20, "{}", path.display());
        assert_eq!(all["truncated"], true);
        let probe = strings[0]["text"].as_str().unwrap().to_owned();
        let found = success(
            &tools,
            "search_strings",
            json!({"contains": probe.to_uppercase()}),
        );
        assert!(
            found["strings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["text"] == json!(probe)),
            "case-insensitive search finds {probe:?}"
        );
        let long = success(
            &tools,
            "search_strings",
            json!({"min_chars": 40, "limit": 5}),
        );
        for found in long["strings"].as_array().unwrap() {
            assert!(found["text"].as_str().unwrap().chars().count() >= 40);
        }
    }
    let (_, tools) = with_binary(&stripped_system_binary().expect("/bin/ls or similar"));
    let usage = success(&tools, "search_strings", json!({"contains": "Usage:"}));
    assert!(!usage["strings"].as_array().unwrap().is_empty());
}

#[test]
fn read_bytes_reads_what_the_file_holds() {
    for path in real_binaries() {
        let (_, tools) = with_binary(&path);
        let file = std::fs::read(&path).unwrap();
        let listed = success(&tools, "list_segments", json!({}));
        let text = text_segment(&listed);
        let offset = usize::try_from(text["file_offset"].as_u64().unwrap()).unwrap();
        let read = success(
            &tools,
            "read_bytes",
            json!({"address": text["address"], "length": 4096}),
        );
        assert_eq!(read["address"], text["address"]);
        assert_eq!(read["length"], 4096);
        assert_eq!(read["hex"], json!(hex(&file[offset..offset + 4096])));
        check_short_read_at_region_end(&tools, &path, &text, &file);
    }
}

fn check_short_read_at_region_end(tools: &ToolBox, path: &Path, text: &Value, file: &[u8]) {
    let start = u64::from_str_radix(&text["address"].as_str().unwrap()[2..], 16).unwrap();
    let end = start + text["file_size"].as_u64().unwrap();
    let offset = text["file_offset"].as_u64().unwrap() + text["file_size"].as_u64().unwrap() - 3;
    // Leading zeros are accepted; the result's address is canonical.
    let read = success(
        tools,
        "read_bytes",
        json!({"address": format!("0x000{:x}", end - 3), "length": 16}),
    );
    assert_eq!(read["address"], json!(format!("{:#x}", end - 3)));
    let length = read["length"].as_u64().unwrap();
    assert!((3..=16).contains(&length), "{}", path.display());
    let offset = usize::try_from(offset).unwrap();
    assert_eq!(
        read["hex"].as_str().unwrap()[..6],
        hex(&file[offset..offset + 3])
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
