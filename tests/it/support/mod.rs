//! What the integration suite shares: the in-process MCP client and schema checks
//! ([`client`]), one cache of compiled JSON Schema validators ([`schema`]), the insta settings
//! ([`snapshots`]), the generated binaries and fake provider ([`fixtures`]), and per-area
//! helpers. The fuzz targets include [`fuzz_checks`] and [`prompt_contract`] by path, and the
//! `procedures` benchmark includes [`fixtures`], so those stay self-contained.

pub mod caller_text;
pub mod capture;
pub mod client;
pub mod code;
pub mod core;
pub mod fixtures;
pub mod fuzz_checks;
pub mod gated;
pub mod http;
pub mod inventory;
pub mod prompt_contract;
pub mod schema;
pub mod server_process;
pub mod snapshots;
pub mod tools;
pub mod wheels;

pub use client::{Client, assert_schema_valid};
