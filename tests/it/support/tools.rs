//! Shared by the `tools` tests: sessions over the fake provider, a catalog file and real
//! binaries; a `call` that checks every outcome against the MCP `CallToolResult` schema and
//! every success against the tool's own output schema; snapshot settings.

use std::path::PathBuf;
use std::time::Duration;

use rea::providers::external::{AdapterLimits, AdapterSpec};
use rea::session::Operation;
use std::sync::Arc;

use rea::session::{Provider, Session};
use rea::tools::{ToolBox, ToolOutcome};
use serde_json::{Map, Value, json};

use super::client::assert_schema_valid;
use super::fixtures::fake::app_and_lib;

/// MCP versions to validate against. Versions before 2025-06-18 do not define `title`,
/// `outputSchema` and `structuredContent`, but their schemas allow extra fields, so the same
/// shapes are valid for every negotiated version.
pub const MCP_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The catalog every catalog test opens: two documents, a duplicate name (`helper`), a mangled
/// name, an unnamed procedure and two segments.
pub fn catalog_json() -> Value {
    json!({
        "schema": "rea.catalog",
        "version": 1,
        "producer": "tools-tests",
        "documents": [
            {
                "name": "app",
                "format": "elf",
                "architecture": "x86_64",
                "segments": [
                    {"name": ".text", "address": "0x1000", "size": 4096, "permissions": "r-x"},
                    {"name": ".data", "address": "0x3000", "size": 256, "permissions": "rw-"}
                ],
                "procedures": [
                    {"address": "0x1000", "name": "main", "size": 64},
                    {"address": "0x1040", "name": "helper"},
                    {"address": "0x1100", "name": "foo::bar(int)", "raw_name": "_ZN3foo3barEi"},
                    {"address": "0x1200"},
                    {"address": "0x1300", "name": "helper"}
                ]
            },
            {"name": "lib", "procedures": [{"address": "0x2000", "name": "init"}]}
        ]
    })
}

/// A temporary directory holding `app.json` (the catalog) and `notes.txt` (not a binary).
pub struct Files {
    pub dir: tempfile::TempDir,
}

impl Files {
    pub fn new() -> Files {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.json"), catalog_json().to_string()).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a binary").unwrap();
        std::fs::write(
            dir.path().join("broken.json"),
            r#"{"schema": "rea.catalog"}"#,
        )
        .unwrap();
        Files { dir }
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    pub fn catalog(&self) -> String {
        self.path("app.json")
    }
}

/// A stripped ELF executable of this machine (`/bin/ls` or similar), if one exists.
pub fn stripped_system_binary() -> Option<PathBuf> {
    ["/bin/ls", "/usr/bin/ls", "/bin/cat", "/usr/bin/cat"]
        .into_iter()
        .map(PathBuf::from)
        .find(|path| path.is_file())
}

/// A system C library with dynamic symbols, if one exists.
pub fn system_libc() -> Option<PathBuf> {
    [
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/aarch64-linux-gnu/libc.so.6",
        "/usr/lib/libc.so.6",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|path| path.is_file())
}

/// A real binary that always exists: this test executable (unstripped, with symbols).
pub fn this_executable() -> PathBuf {
    std::env::current_exe().unwrap()
}

/// Real binaries to run the tools on: the system ones present, and this executable.
pub fn real_binaries() -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = [stripped_system_binary(), system_libc()]
        .into_iter()
        .flatten()
        .collect();
    found.push(this_executable());
    found
}

/// A session with no binary open, and its tools.
pub fn closed() -> (Arc<Session>, ToolBox) {
    let session = Arc::new(Session::new());
    let tools = ToolBox::new(Arc::clone(&session));
    (session, tools)
}

/// A session over the two-document fake provider `fake` (current document `app`).
pub fn with_fake() -> (Arc<Session>, ToolBox) {
    let (session, tools) = closed();
    let provider: Arc<dyn Provider> = Arc::new(app_and_lib("fake"));
    session
        .open_providers("fake-target", vec![provider])
        .unwrap();
    (session, tools)
}

/// A session with the catalog of `files` opened through `open_binary`.
pub fn with_catalog(files: &Files) -> (Arc<Session>, ToolBox) {
    let (session, tools) = closed();
    let opened = call(&tools, "open_binary", json!({"path": files.catalog()}));
    assert!(!opened.is_error(), "{}", opened.text());
    (session, tools)
}

/// A session with the binary at `path` opened through `open_binary`.
pub fn with_binary(path: &std::path::Path) -> (Arc<Session>, ToolBox) {
    let (session, tools) = closed();
    let opened = call(
        &tools,
        "open_binary",
        json!({"path": path.display().to_string()}),
    );
    assert!(!opened.is_error(), "{}", opened.text());
    (session, tools)
}

/// `value` as an argument map (it must be an object).
pub fn arguments(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("arguments must be an object, not {other}"),
    }
}

/// Calls a catalog tool and checks the outcome (see [`check_outcome`]).
pub fn call(tools: &ToolBox, name: &str, args: Value) -> ToolOutcome {
    let outcome = tools
        .call(name, &arguments(args))
        .unwrap_or_else(|error| panic!("{name} is in the catalog: {error}"));
    check_outcome(tools, name, &outcome);
    outcome
}

/// Calls a catalog tool that must succeed; returns its structured result.
pub fn success(tools: &ToolBox, name: &str, args: Value) -> Map<String, Value> {
    let outcome = call(tools, name, args);
    assert!(!outcome.is_error(), "{name} failed: {}", outcome.text());
    outcome.structured_content().unwrap().clone()
}

/// Calls a catalog tool that must fail; returns its message.
pub fn failure(tools: &ToolBox, name: &str, args: Value) -> String {
    let outcome = call(tools, name, args);
    assert!(
        outcome.is_error(),
        "{name} succeeded unexpectedly: {}",
        outcome.text()
    );
    outcome.text().to_owned()
}

/// Every outcome is a valid MCP `CallToolResult`; a success's `structuredContent` fits the
/// tool's output schema and its text is that object as JSON; a failure has no structured
/// content.
pub fn check_outcome(tools: &ToolBox, name: &str, outcome: &ToolOutcome) {
    let value = outcome.to_value();
    assert_eq!(serde_json::to_value(outcome).unwrap(), value);
    for version in MCP_VERSIONS {
        assert_schema_valid(version, "CallToolResult", &value);
    }
    assert_eq!(value["isError"], json!(outcome.is_error()));
    assert_eq!(value["content"][0]["text"], json!(outcome.text()));
    if outcome.is_error() {
        assert!(value.get("structuredContent").is_none());
        assert!(!outcome.text().is_empty());
        return;
    }
    let structured = &value["structuredContent"];
    let parsed: Value = serde_json::from_str(outcome.text()).unwrap();
    assert_eq!(&parsed, structured, "the text is the structured result");
    let definition = tools.definition(name).unwrap();
    let errors: Vec<String> = output_validator(name, definition.output_schema())
        .iter_errors(structured)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{name} result does not fit its output schema: {errors:?}\n{structured}"
    );
}

fn output_validator(name: &str, schema: &Value) -> Arc<jsonschema::Validator> {
    super::schema::validator(&format!("output/{name}"), || {
        jsonschema::draft202012::new(schema).unwrap()
    })
}

/// Snapshots `text` under `name` in the top-level `snapshots/` folder, with Evidence IDs
/// (`ev-` and twelve digits) and the temporary directory `scratch` filtered out.
pub fn snapshot(name: &str, text: &str, scratch: Option<&Files>) {
    snapshot_filtered(name, text, scratch, &[]);
}

/// [`snapshot`], also replacing each regex of `filters` with its replacement.
pub fn snapshot_filtered(
    name: &str,
    text: &str,
    scratch: Option<&Files>,
    filters: &[(&str, &str)],
) {
    let mut settings = super::snapshots::settings();
    settings.add_filter(super::snapshots::EVIDENCE_ID, "ev-[id]");
    if let Some(files) = scratch {
        super::snapshots::filter_path(&mut settings, files.dir.path(), "[tmp]");
    }
    for (regex, replacement) in filters {
        settings.add_filter(regex, *replacement);
    }
    settings.bind(|| {
        insta::assert_snapshot!(name, text);
    });
}

/// The deliberately broken adapter of `tests/adapters/fake_adapter.py`.
pub fn fake_script() -> PathBuf {
    crate::root().join("tests/adapters/fake_adapter.py")
}

/// The fake adapter as provider `fake`, in `mode` (see the script).
pub fn fake_spec(mode: &str, limits: AdapterLimits) -> AdapterSpec {
    AdapterSpec {
        id: "fake".to_owned(),
        program: PathBuf::from("python3"),
        args: vec![fake_script().into_os_string(), "--mode".into(), mode.into()],
        operations: vec![
            Operation::ListDocuments,
            Operation::ListProcedures,
            Operation::ProcedureInfo,
            Operation::Decompile,
        ],
        limits,
    }
}

/// Bounds small enough for tests: 1 s per call, 512 MiB, 64 KiB lines.
pub fn quick_limits() -> AdapterLimits {
    AdapterLimits {
        start_up: Duration::from_secs(20),
        call: Duration::from_secs(1),
        memory_bytes: 512 << 20,
        max_line_bytes: 64 << 10,
    }
}
