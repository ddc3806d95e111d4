//! One cache of compiled JSON Schema validators for the whole suite: the official MCP
//! definitions, and each tool's input and output schemas, compiled once per run.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use jsonschema::Validator;

/// The validator cached under `key` (callers prefix it with what it validates, e.g.
/// `mcp/2025-11-25#Tool` or `output/list_procedures`), compiled by `compile` on first use.
pub fn validator(key: &str, compile: impl FnOnce() -> Validator) -> Arc<Validator> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Validator>>>> = OnceLock::new();
    let mut cache = CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    cache
        .entry(key.to_owned())
        .or_insert_with(|| Arc::new(compile()))
        .clone()
}
