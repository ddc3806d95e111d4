//! What the integration suite shares: the in-process MCP client and schema checks
//! ([`client`]), one cache of compiled JSON Schema validators ([`schema`]), the insta settings
//! ([`snapshots`]), the generated binaries and fake provider ([`fixtures`]), and per-area
//! helpers. The fuzz targets' invariants are in `rea::fuzzing`, not here.

pub mod caller_text;
pub mod capture;
pub mod client;
pub mod code;
pub mod core;
pub mod gated;
pub mod http;
pub mod inventory;
pub mod schema;
pub mod snapshots;
pub mod tools;
pub mod wheels;

pub use client::{Client, assert_schema_valid};

pub mod fake;
pub mod helpers;

// The generated binaries and the server in a child process live in the test kit, shared with
// the benches; the fake provider and the completion helpers use `rea`, which the test kit does
// not, so they live here and are reached through `fixtures` as before.
pub use rea_testkit::server_process;

/// The test kit's generated binaries, with the suite's fake provider and completion helpers.
pub mod fixtures {
    pub use super::{fake, helpers};
    pub use rea_testkit::fixtures::*;
}
