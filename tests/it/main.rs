//! The integration suite of `rea`, as one test binary: one module per area, one file per
//! feature, and one `support` module they all share (the in-process MCP client, one
//! schema-validator cache, the binary generators, the insta settings).
//!
//! It is the `rea-suite` package (`tests/it/Cargo.toml`), so that this code builds at
//! opt-level 0 while the library it tests stays at 1. It starts the server as
//! `rea-under-test`: `src/main.rs` built by this package, so that cargo builds it fresh for
//! the suite. Files of the repository are found from [`root`].
//!
//! Three checks are test binaries of their own in this package, which cargo runs one at a time:
//! `sdk_clients.rs` (the official SDK clients and the MCP Inspector) and `conformance.rs` (the
//! official conformance suite) drive the same `rea-under-test`, and `unicode_exhaustive.rs`
//! walks every Unicode scalar value. Run as modules of this binary, the first two made the run
//! slower (their Node and Python processes then share the two cores with the suite's own
//! servers): 141 s against 131 s for the three apart, back to back with their installs warm.
//!
//! Snapshots live in the top-level `snapshots/` folder under explicit names (see
//! [`support::snapshots`]); proptest keeps its saved failures in `tests/proptest-regressions/`,
//! mirroring this folder. `INSTA_UPDATE=no INSTA_SNAPSHOT_REFERENCES_FILE=refs cargo test` fails
//! on any snapshot that differs and lists in `refs` every snapshot a test read: each file of
//! `snapshots/` must appear there.

mod support;

/// The repository's root, without `..` in it, so that paths the server prints read as they do
/// from the root.
fn root() -> &'static std::path::Path {
    rea_testkit::repository_root()
}

/// Tidy checks of the crate's shape: layers, the pure core, no import cycles.
mod architecture;

/// The pure completion core: the matching key, `complete()` and bounded discovery.
mod core {
    mod complete_examples;
    mod complete_properties;
    mod complete_sorted_input;
    mod discovery;
    mod index_properties;
    mod key_examples;
    mod key_properties;
}

/// Guided prompts: the built-in catalog, prompt files, the registry, rendering and its errors.
mod prompts {
    mod catalog;
    mod errors;
    mod file;
    mod registry;
    mod render_properties;
    mod rendering;
}

/// The binary-analysis session: addresses, the Evidence ledger, lifecycle and stores.
mod session {
    mod address;
    mod evidence;
    mod files_checked_open;
    mod ledger_bounds;
    mod lifecycle;
    mod memory_bounds;
    mod path_confinement;
    mod stores;
}

/// The durable store: resume after a restart, SIGKILL at random instants, faults, and a team
/// server on a real PostgreSQL.
mod durable {
    mod faults;
    mod kills;
    mod memory;
    mod postgres;
    mod resume;
    mod two_processes;
}

/// Providers: the catalog provider and the native one on generated and system binaries.
mod providers {
    mod adapter_lifecycle;
    mod angr;
    mod angr_claims;
    mod angr_isolation;
    mod angr_protocol;
    mod capabilities;
    mod catalog;
    mod code_analysis;
    mod external;
    mod native;
    mod native_calls;
    mod native_data_pointers;
    mod native_fidelity;
    mod native_imports;
    mod native_system;
    mod native_wheels;
}

/// Completion sources over sessions and providers.
mod sources {
    mod completion;
    mod live_projection;
    mod native;
}

/// The tools a client calls: catalog, arguments, results, errors and the Evidence they retain.
mod tools {
    mod analysis;
    mod artifacts_captures;
    mod availability;
    mod binary;
    mod cancelled;
    mod catalog;
    mod compare;
    mod errors;
    mod imports;
    mod ledger;
    mod output_schemas;
    mod properties;
    mod quoting;
    mod schema_table;
    mod sessions;
}

/// The investigator's annotations: the tools, their errors, durability, properties.
mod annotations {
    mod durable;
    mod errors;
    mod labels;
    mod properties;
    mod tools;
}

/// Artifact inventories of directories and zip archives, their schema and comparisons.
mod inventory {
    mod changes;
    mod compare;
    mod directory;
    mod properties;
    mod races;
    mod schema;
    mod zip;
}

/// Process captures: classification and its properties; the person's approval through MCP
/// elicitation; sandboxed runs of crashing and hostile programs.
mod captures {
    mod approval;
    mod classification;
    mod crashes;
    mod hostile;
    mod prompts;
    mod properties;
    mod work_folders;
}

/// Reconstruction claims: the claim language and evaluation against retained Evidence.
mod claims {
    mod calls;
    mod evaluation;
    mod parsing;
}

/// The residual-unknown registry.
mod unknowns {
    mod properties;
    mod registry;
}

/// The MCP server through its real stdio loop, every message checked against the MCP schemas.
mod mcp {
    mod bad_input;
    mod cancellation;
    mod completion;
    mod eight_sessions;
    mod era;
    mod execution;
    mod extension;
    mod fairness;
    mod http;
    mod http_edges;
    mod logging;
    mod prompts;
    mod protocol_edges;
    mod quoting;
    mod readme_workflow;
    mod request_errors;
    mod resource_bounds;
    mod resource_caching;
    mod resources;
    mod roots;
    mod sessions;
    mod shutdown;
    mod stdio_kinds;
    mod tasks;
    mod tools;
    mod transport_bounds;
}

/// Saved fuzz inputs (`fuzz/regressions/<target>/`) replayed through the targets' checks.
mod fuzz_replay {
    mod capture;
    mod core;
    mod http;
    mod inventory;
    mod mcp;
    mod prompt;
    mod prototype;
    mod provider;
    mod resource_uri;
    mod store_rows;
    mod targets;
    mod transcript;
}
