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

// The generated binaries, the fake provider and the server in a child process live in the test
// kit, shared with the benches.
pub use rea_testkit::{fixtures, server_process};
