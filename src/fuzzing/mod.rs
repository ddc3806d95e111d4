//! Fuzzing and invariant helpers: the checks the cargo-fuzz targets in `fuzz/fuzz_targets/`
//! run, shared with the tests that replay their saved inputs (`fuzz/regressions/<target>/`,
//! replayed by `tests/it/fuzz_replay/`). Test support, not API: hidden from the docs and free
//! to change.
//!
//! One module per area, each named after the layer it checks. This module sits above every
//! other layer, so it may drive the whole server; nothing else in the crate imports it.
//!
//! - [`core`]: the matching key, `complete()` and bounded discovery; pure, returning a
//!   [`core::Violation`].
//! - [`prompts`]: the prompt file parser and the rendering contract.
//! - [`providers`]: the native and catalog providers and the code analysis.
//! - [`session`]: the parsers of captures, inventory pages and zip archives.
//! - [`resources`]: the resource URI parser.
//! - [`mcp`]: the JSON-RPC line classifier and whole-server sessions.
//! - [`http`]: the Streamable HTTP endpoint.
//!
//! The checks outside [`core`] panic when an invariant breaks.

pub mod core;
pub mod http;
pub mod mcp;
pub mod prompts;
pub mod providers;
pub mod resources;
pub mod session;
