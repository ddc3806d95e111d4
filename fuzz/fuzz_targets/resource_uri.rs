//! Fuzz target `resource_uri`: the invariants live in `tests/it/support/fuzz_checks/resource_uri.rs`, which the plain test
//! suite also runs on every saved input in `fuzz/regressions/resource_uri/`.

#![no_main]

#[path = "../../tests/it/support/fuzz_checks/resource_uri.rs"]
mod check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| check::check(data));
